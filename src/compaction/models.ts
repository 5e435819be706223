// Context limits of current models and the prompt-budget estimate, for usage-ratio triggers and
// the proxy. Limits are total context windows in tokens, matched by longest name prefix;
// callers override them, and an unknown model gets a conservative fallback.
import { countTokens, countTokensYielding, promptTokens } from "./tokens.js";
import type { Conversation } from "./types.js";

/** Context windows by model-name prefix (provider-published figures, late 2025). */
export const CONTEXT_LIMITS: Readonly<Record<string, number>> = {
  "gpt-5": 400_000,
  "gpt-4.1": 1_047_576,
  "gpt-4o": 128_000,
  "gpt-4-turbo": 128_000,
  "gpt-4": 8_192,
  "gpt-3.5-turbo": 16_385,
  o1: 200_000,
  o3: 200_000,
  "o4-mini": 200_000,
  claude: 200_000,
  "gemini-2": 1_048_576,
  "gemini-1.5-pro": 2_097_152,
  "gemini-1.5-flash": 1_048_576,
  "deepseek-chat": 65_536,
  "deepseek-reasoner": 65_536,
  "llama-3.1": 131_072,
  "llama-3.3": 131_072,
  "mistral-large": 131_072,
  qwen3: 131_072,
  "qwen2.5": 32_768,
};

/** The window assumed for a model nobody knows: small, so compaction errs on the early side. */
export const FALLBACK_CONTEXT_LIMIT = 8_192;

/** The context limit of a model: an override (exact name or prefix) first, then the table, then the fallback. */
export function contextLimit(model: string | undefined, overrides: Readonly<Record<string, number>> = {}): number {
  return knownContextLimit(model, overrides) ?? FALLBACK_CONTEXT_LIMIT;
}

/** The context limit of a model an override or the table names; undefined for a model nobody knows. */
export function knownContextLimit(model: string | undefined, overrides: Readonly<Record<string, number>> = {}): number | undefined {
  if (model === undefined) return undefined;
  // Provider-qualified names ("openai/gpt-4o") are looked up by their last part.
  const name = model.toLowerCase().split("/").pop() ?? "";
  for (const table of [overrides, CONTEXT_LIMITS]) {
    let best: string | undefined;
    for (const prefix of Object.keys(table)) if (name.startsWith(prefix.toLowerCase()) && (best === undefined || prefix.length > best.length)) best = prefix;
    if (best !== undefined) return table[best];
  }
  return undefined;
}

// Tool schemas are sent as JSON with every request; their text is counted once per schema list.
const toolTokenCache = new WeakMap<readonly unknown[], number>();

/** Tokens of the tool schemas a request carries. */
export function toolTokens(tools: readonly unknown[] | undefined): number {
  if (tools === undefined || tools.length === 0) return 0;
  let n = toolTokenCache.get(tools);
  if (n === undefined) {
    n = countTokens(JSON.stringify(tools));
    toolTokenCache.set(tools, n);
  }
  return n;
}

/** toolTokens counted by countTokensYielding (schemas of megabytes), kept as toolTokens keeps its count. */
export async function toolTokensYielding(tools: readonly unknown[] | undefined): Promise<number> {
  if (tools === undefined || tools.length === 0) return 0;
  let n = toolTokenCache.get(tools);
  if (n === undefined) {
    n = await countTokensYielding(JSON.stringify(tools));
    toolTokenCache.set(tools, n);
  }
  return n;
}

/** Input tokens a request with this conversation would carry: its messages plus its tool schemas. */
export function estimatePromptTokens(conversation: Pick<Conversation, "messages" | "tools">): number {
  return promptTokens(conversation.messages) + toolTokens(conversation.tools);
}

export interface BudgetUsage {
  /** Messages and tool schemas. */
  readonly promptTokens: number;
  readonly reservedOutputTokens: number;
  readonly contextLimit: number;
  /** (prompt + reserved output) / context limit. */
  readonly ratio: number;
}

/** How full the model's context would be, counting tool schemas and the tokens reserved for the reply. */
export function budgetUsage(conversation: Conversation, overrides?: Readonly<Record<string, number>>, limit?: number): BudgetUsage {
  const prompt = estimatePromptTokens(conversation);
  const reserved = conversation.reservedOutputTokens ?? 0;
  const window = limit ?? contextLimit(conversation.model, overrides);
  return { promptTokens: prompt, reservedOutputTokens: reserved, contextLimit: window, ratio: (prompt + reserved) / window };
}
