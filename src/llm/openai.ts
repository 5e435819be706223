// An `Llm` over any OpenAI-compatible chat-completions server, on the official `openai`
// package. The SDK's own retries are off: this client retries itself so that it can honour
// `retry-after`, cap the wait, report each retry, and bound every attempt (body included)
// with one timeout that also follows the caller's AbortSignal.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { abortError, LlmError, sleep } from "./errors.js";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { Llm, LlmRequest, LlmResponse, LlmUsage } from "./types.js";

export interface OpenAiLlmOptions {
  /** Model name; default `OPENAI_MODEL`. */
  model?: string;
  /** Server base URL (…/v1); default `OPENAI_BASE_URL`, else the OpenAI API. */
  baseURL?: string;
  /** Default `OPENAI_API_KEY`; optional when `baseURL` points at a server that ignores it. */
  apiKey?: string;
  temperature?: number;
  /** Upper bound on reply tokens (`max_tokens`). */
  maxTokens?: number;
  /** Retries after the first attempt for 429, 5xx, timeouts and connection failures. Default 3. */
  maxRetries?: number;
  /** Bound on one attempt, reading the reply included. Default 120 000 ms. */
  timeoutMs?: number;
  /** First backoff delay; doubles with each retry (with jitter). Default 500 ms. */
  retryBaseMs?: number;
  /** Longest single wait. A `retry-after` beyond it fails at once rather than stall. Default 30 000 ms. */
  retryMaxMs?: number;
  /** Called before each retry wait (logging, tests). */
  onRetry?: (info: RetryInfo) => void;
  /** Where the defaults come from; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface RetryInfo {
  /** The attempt that failed, 1-based. */
  attempt: number;
  delayMs: number;
  error: LlmError;
}

/** The subset of the reply this client reads: every field is checked, none trusted. */
interface CompletionShape {
  model?: unknown;
  choices?: unknown;
  usage?: {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
    /** DeepSeek's name for cached prompt tokens. */
    prompt_cache_hit_tokens?: unknown;
  } | null;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Creates a client for an OpenAI-compatible server. Throws a `config` LlmError when no model is given. */
export function openaiLlm(options: OpenAiLlmOptions = {}): Llm {
  const env = options.env ?? process.env;
  const model = options.model ?? env.OPENAI_MODEL;
  const baseURL = options.baseURL ?? env.OPENAI_BASE_URL;
  const apiKey = options.apiKey ?? env.OPENAI_API_KEY;
  if (!model) throw new LlmError("config", "openaiLlm: no model given (pass { model } or set OPENAI_MODEL)");
  if (!apiKey && !baseURL) throw new LlmError("config", "openaiLlm: no API key (pass { apiKey } or set OPENAI_API_KEY), and no baseURL of a server that needs none");
  const maxRetries = options.maxRetries ?? 3;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const retryBaseMs = options.retryBaseMs ?? 500;
  const retryMaxMs = options.retryMaxMs ?? 30_000;
  for (const [k, v] of [["maxRetries", maxRetries], ["retryBaseMs", retryBaseMs], ["retryMaxMs", retryMaxMs]] as const) {
    if (!Number.isFinite(v) || v < 0) throw new LlmError("config", `openaiLlm: ${k} must be a non-negative number, got ${v}`);
  }
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new LlmError("config", `openaiLlm: timeoutMs must be a positive number, got ${timeoutMs}`);
  const name = `openai:${model}`;
  // Local servers ignore the key, but the SDK insists on one.
  const client = new OpenAI({ apiKey: apiKey || "unused", baseURL, maxRetries: 0, timeout: timeoutMs });

  async function attempt(request: LlmRequest): Promise<LlmResponse> {
    const maxTokens = request.maxOutputTokens ?? options.maxTokens;
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(new LlmError("timeout", `${name}: no reply within ${timeoutMs} ms`)), timeoutMs);
    const outer = request.signal;
    const onAbort = () => ctl.abort(abortError(outer as AbortSignal, name));
    outer?.addEventListener("abort", onAbort, { once: true });
    try {
      const completion: unknown = await client.chat.completions.create(
        {
          model: request.model ?? (model as string),
          // The wire shape is OpenAI's own; tool calls, ids and names pass through.
          messages: request.messages as unknown as ChatCompletionMessageParam[],
          ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
          ...(maxTokens === undefined ? {} : { max_tokens: maxTokens }),
        },
        { signal: ctl.signal },
      );
      return parseCompletion(completion, name);
    } catch (e) {
      throw toLlmError(e, ctl.signal, name);
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    }
  }

  return {
    name,
    async complete(request) {
      if (request.signal?.aborted) throw abortError(request.signal, name);
      for (let n = 1; ; n++) {
        try {
          return await attempt(request);
        } catch (e) {
          const error = e as LlmError;
          const retryable = error.kind === "rate_limit" || error.kind === "server" || error.kind === "timeout" || error.kind === "connection";
          if (!retryable || n > maxRetries) throw withAttempts(error, n);
          const hinted = error.details.retryAfterMs;
          if (hinted !== undefined && hinted > retryMaxMs) {
            throw new LlmError(error.kind, `${error.message} (the server asks to retry after ${Math.ceil(hinted / 1000)} s, beyond the ${Math.ceil(retryMaxMs / 1000)} s cap)`, { ...error.details, attempts: n });
          }
          const backoff = Math.min(retryMaxMs, retryBaseMs * 2 ** (n - 1)) * (0.75 + Math.random() * 0.25);
          const delayMs = Math.round(hinted ?? backoff);
          options.onRetry?.({ attempt: n, delayMs, error });
          await sleep(delayMs, request.signal, name);
        }
      }
    },
  };
}

function withAttempts(e: LlmError, attempts: number): LlmError {
  if (attempts === 1 || e.kind === "aborted") return e;
  return new LlmError(e.kind, `${e.message} (after ${attempts} attempts)`, { ...e.details, attempts });
}

/** Checks the reply is a chat completion with text, and maps its usage. */
function parseCompletion(raw: unknown, name: string): LlmResponse {
  if (typeof raw !== "object" || raw === null) {
    throw new LlmError("malformed", `${name}: the reply is not a chat completion (got ${typeof raw === "string" ? `text: ${JSON.stringify(raw.slice(0, 80))}` : String(raw)})`);
  }
  const c = raw as CompletionShape;
  if (!Array.isArray(c.choices) || c.choices.length === 0) throw new LlmError("malformed", `${name}: the reply has no choices`);
  const choice = c.choices[0] as { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown } | null;
  const content = choice?.message?.content;
  if (typeof content !== "string" || content.trim() === "") {
    const refusal = choice?.message?.refusal;
    const why = typeof refusal === "string" && refusal ? `the model refused: ${refusal}` : `finish_reason: ${String(choice?.finish_reason ?? "none")}`;
    throw new LlmError("malformed", `${name}: the reply has no text content (${why})`);
  }
  const u = c.usage;
  const usage: LlmUsage | undefined = u
    ? {
        inputTokens: num(u.prompt_tokens),
        outputTokens: num(u.completion_tokens),
        cachedTokens: num(u.prompt_tokens_details?.cached_tokens) || num(u.prompt_cache_hit_tokens),
      }
    : undefined;
  return { content, ...(usage ? { usage } : {}), ...(typeof c.model === "string" ? { model: c.model } : {}) };
}

/** Maps whatever the SDK (or the body parser) threw to an LlmError with a kind. */
function toLlmError(e: unknown, signal: AbortSignal, name: string): LlmError {
  if (e instanceof LlmError) return e;
  // Our controller fired: its reason says whether it was the timeout or the caller.
  if (signal.aborted && signal.reason instanceof LlmError) return signal.reason;
  if (e instanceof APIConnectionTimeoutError) return new LlmError("timeout", `${name}: the server did not answer in time`);
  if (e instanceof APIUserAbortError) return new LlmError("aborted", `${name}: request aborted`);
  if (e instanceof APIConnectionError) return new LlmError("connection", `${name}: cannot reach the server (${e.message})`);
  if (e instanceof APIError) {
    const status = e.status ?? 0;
    const kind = status === 429 ? "rate_limit" : status >= 500 || status === 408 ? "server" : "http";
    const retryAfter = e.headers ? retryAfterMs(e.headers) : undefined;
    // The SDK's message starts with the status already ("500 Internal error"): say it once.
    const text = e.message.startsWith(`${status} `) ? e.message.slice(String(status).length + 1) : e.message;
    return new LlmError(kind, `${name}: HTTP ${status}: ${text}`, { status, ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }) });
  }
  if (e instanceof SyntaxError) return new LlmError("malformed", `${name}: the reply is not valid JSON (${e.message})`);
  return new LlmError("malformed", `${name}: unexpected failure reading the reply (${e instanceof Error ? e.message : String(e)})`);
}

/** The server's requested delay, from `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
function retryAfterMs(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get("retry-after-ms") ?? "");
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (raw === null) return undefined;
  const seconds = Number.parseFloat(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}
