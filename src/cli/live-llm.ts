// The model `--live` runs ask: Anthropic's API when ANTHROPIC_API_KEY is set, else the
// OpenAI-compatible server of OPENAI_BASE_URL / OPENAI_API_KEY, as before.
import { anthropicLlm } from "../llm/anthropic.js";
import { openaiLlm } from "../llm/openai.js";
import type { RetryInfo } from "../llm/retry.js";
import type { Llm } from "../llm/types.js";

export interface LiveLlmOptions {
  model?: string;
  timeoutMs?: number;
  onRetry?: (info: RetryInfo) => void;
  env?: Readonly<Record<string, string | undefined>>;
}

/** The live client the environment names; throws a `config` LlmError when it names too little. */
export function liveLlm(options: LiveLlmOptions = {}): Llm {
  const env = options.env ?? process.env;
  const common = {
    env,
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.onRetry === undefined ? {} : { onRetry: options.onRetry }),
  };
  return env.ANTHROPIC_API_KEY ? anthropicLlm(common) : openaiLlm(common);
}

/** What to set, for the error message when the environment names too little. */
export function liveHint(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.ANTHROPIC_API_KEY
    ? "Set ANTHROPIC_MODEL (e.g. claude-sonnet-4-5), or pass --model."
    : "Set OPENAI_BASE_URL (e.g. http://localhost:11434/v1), OPENAI_API_KEY and OPENAI_MODEL for an OpenAI-compatible server, or ANTHROPIC_API_KEY and ANTHROPIC_MODEL for Anthropic; or pass --model.";
}
