// The one error every LLM client throws. The agent loop turns it into an `llm_error` (or
// `aborted`) ending; `kind` says what went wrong without parsing the message.
import type { LlmUsage } from "./types.js";

export type LlmErrorKind =
  /** Missing model, key or base URL, a bad option or argument, or a key no header can carry. */
  | "config"
  /** HTTP 429 after the retries ran out (or a retry-after beyond the cap). */
  | "rate_limit"
  /** HTTP 5xx (or a server's error inside a stream or a 200's body) after the retries ran out. */
  | "server"
  /** Any other HTTP error status (400, 401, 404 ...; a 429 for a used-up quota, OpenAI's insufficient_quota; any status the server says `x-should-retry: false` of), or a stream's error for a bad request: not retried. */
  | "http"
  /** The server could not be reached, or the connection was lost before the reply was complete. */
  | "connection"
  /** No reply within `timeoutMs`, after the retries ran out. */
  | "timeout"
  /** The caller's AbortSignal fired. */
  | "aborted"
  /** The server answered, but not with a usable chat completion. */
  | "malformed"
  /** A scripted or replayed client has no reply left for this request. */
  | "exhausted"
  /** A replayed run sent a request different from the recorded one. */
  | "diverged";

export interface LlmErrorDetails {
  /** HTTP status, when the server answered with an error. */
  status?: number;
  /** Attempts made, when there were retries. */
  attempts?: number;
  /** The delay the server asked for (`retry-after`, `retry-after-ms`). */
  retryAfterMs?: number;
  /**
   * The usage the provider reported with a reply it answered but that cannot be used (no text:
   * a reasoning model that spent its output limit thinking): the call was billed all the same.
   */
  usage?: LlmUsage;
  /**
   * The server had begun its reply when the connection was lost, so it had the whole request
   * (and may have billed it). Unset when that is unknown: a connection that failed before any
   * reply may have failed before, during or after the request went out.
   */
  delivered?: boolean;
}

export class LlmError extends Error {
  override readonly name = "LlmError";

  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly details: LlmErrorDetails = {},
  ) {
    super(message);
  }
}

/** The error to throw when `signal` has fired: the caller's reason when it is an LlmError. */
export function abortError(signal: AbortSignal, who: string): LlmError {
  const reason: unknown = signal.reason;
  if (reason instanceof LlmError) return reason;
  const why = reason instanceof Error && reason.name !== "AbortError" ? `: ${reason.message}` : "";
  return new LlmError("aborted", `${who}: request aborted${why}`);
}

/** The longest delay a timer holds: Node fires a longer one after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Waits `ms`, or rejects with an `aborted` LlmError as soon as `signal` fires. A wait longer
 * than a timer holds (a server's retry-after of weeks under a cap as long) is waited in pieces.
 */
export function sleep(ms: number, signal: AbortSignal | undefined, who: string): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortError(signal, who));
  return new Promise((resolve, reject) => {
    let left = ms;
    let timer: ReturnType<typeof setTimeout>;
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal as AbortSignal, who));
    };
    const arm = () => {
      const piece = Math.min(left, MAX_TIMER_MS);
      left -= piece;
      timer = setTimeout(() => {
        if (left > 0) return arm();
        signal?.removeEventListener("abort", onAbort);
        resolve();
      }, piece);
    };
    arm();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * What a thrown value says. A host may throw anything: an Error whose message getter throws, an
 * object String() cannot convert, an object with a message (as some API clients throw), an Error
 * with no message (its name says what it was; an AggregateError's inner errors say more).
 * `unread` stands for a value that says nothing (null, a symbol, an object without a message);
 * without it such a value is String()'d.
 */
export function errorText(e: unknown, unread?: string): string {
  try {
    if (e instanceof Error) return e.message !== "" ? String(e.message) : emptyError(e);
    const message = typeof e === "object" && e !== null ? (e as { message?: unknown }).message : undefined;
    if (typeof message === "string" && message !== "") return message;
    if (unread !== undefined && !["string", "number", "bigint", "boolean"].includes(typeof e)) return unread;
    return String(e);
  } catch {
    return unread ?? "a thrown value that cannot be read";
  }
}

/** An Error without a message: its name, and what a few of an AggregateError's errors say. */
function emptyError(e: Error): string {
  const inner = e instanceof AggregateError && Array.isArray(e.errors) ? e.errors.slice(0, 3).map((x: unknown) => errorText(x, "")).filter((m) => m !== "") : [];
  return inner.length > 0 ? `${String(e.name)}: ${inner.join("; ")}` : String(e.name);
}
