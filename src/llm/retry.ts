// Retries shared by the HTTP clients (OpenAI-compatible, Anthropic). The SDKs' own retries are
// off: retrying here honours `retry-after`, caps the wait, reports each retry, and bounds every
// attempt (body included) with one timeout that also follows the caller's AbortSignal: for a
// streamed reply, the wait for the server (before its first event and between two), so a healthy
// long stream is not cut and paid for again.
import { abortError, errorText, LlmError, MAX_TIMER_MS, sleep } from "./errors.js";
import type { LlmRequest, LlmResponse } from "./types.js";

export interface RetryInfo {
  /** The attempt that failed, 1-based. */
  attempt: number;
  delayMs: number;
  error: LlmError;
}

/** The retry options every HTTP client takes, as its users write them (defaults in `retrySettings`). */
export interface RetryOptions {
  /** Retries after the first attempt for 429 (not one for a used-up quota), 5xx, timeouts and connection failures (none for a reply saying `x-should-retry: false`). Default 3. */
  maxRetries?: number;
  /**
   * Bound on one attempt, reading the reply included; for a streamed reply (`onText`), on the wait
   * for its first event and between two events, however long the stream runs. Default 120 000 ms.
   */
  timeoutMs?: number;
  /** First backoff delay; doubles with each retry (with jitter). Default 500 ms. */
  retryBaseMs?: number;
  /** Longest single wait. A `retry-after` beyond it fails at once rather than stall. Default 30 000 ms. */
  retryMaxMs?: number;
  /** Called before each retry wait (logging, tests); what it throws is ignored. */
  onRetry?: (info: RetryInfo) => void;
  /**
   * Most bytes of one reply's body, streamed or whole: past it the attempt fails as `malformed`,
   * not retried, and the connection is closed. Default 64 MiB, far past what a model's output
   * limit lets it write, event framing included.
   */
  maxReplyBytes?: number;
}

export interface RetrySettings {
  maxRetries: number;
  timeoutMs: number;
  retryBaseMs: number;
  retryMaxMs: number;
  onRetry?: (info: RetryInfo) => void;
  maxReplyBytes: number;
}

/** maxReplyBytes' default: 64 MiB. */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** The retry options with their defaults, checked; a bad one is a `config` LlmError naming `who`. */
export function retrySettings(who: string, o: Partial<RetrySettings>): RetrySettings {
  const s: RetrySettings = { maxRetries: o.maxRetries ?? 3, timeoutMs: o.timeoutMs ?? 120_000, retryBaseMs: o.retryBaseMs ?? 500, retryMaxMs: o.retryMaxMs ?? 30_000, ...(o.onRetry ? { onRetry: o.onRetry } : {}), maxReplyBytes: o.maxReplyBytes ?? MAX_REPLY_BYTES };
  for (const [k, v] of [["maxRetries", s.maxRetries], ["retryBaseMs", s.retryBaseMs], ["retryMaxMs", s.retryMaxMs]] as const) {
    if (!Number.isFinite(v) || v < 0) throw new LlmError("config", `${who}: ${k} must be a non-negative number, got ${v}`);
  }
  if (!Number.isFinite(s.timeoutMs) || s.timeoutMs <= 0) throw new LlmError("config", `${who}: timeoutMs must be a positive number, got ${s.timeoutMs}`);
  if (!Number.isSafeInteger(s.maxReplyBytes) || s.maxReplyBytes <= 0) throw new LlmError("config", `${who}: maxReplyBytes must be a positive whole number, got ${s.maxReplyBytes}`);
  return s;
}

/**
 * `send` (a fetch) with each response's body cut at `max` bytes: a server that keeps sending
 * (a runaway stream, an endless body) would otherwise have the whole of it held in memory.
 * Past the cap the body fails with a `malformed` LlmError, which the reader throws, and the
 * connection is closed. Called per request, so a fetch swapped in later still applies.
 */
export function cappedFetch(name: string, max: number, send: () => typeof fetch = () => globalThis.fetch): typeof fetch {
  return async (...args) => {
    const response = await send()(...args);
    if (response.body === null) return response;
    let bytes = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(piece, out) {
        bytes += piece.byteLength;
        if (bytes > max) out.error(oversizedReply(name, max));
        else out.enqueue(piece);
      },
    });
    return new Response(response.body.pipeThrough(counter), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** A reply past `maxReplyBytes`: the one error for it, whether its body's bytes or its stream's text were counted. */
export function oversizedReply(name: string, max: number): LlmError {
  return new LlmError("malformed", `${name}: the reply is larger than maxReplyBytes (${max} bytes); the rest was not read`);
}

type ErrorClass = abstract new (...args: never[]) => Error;

/** The error classes of a Stainless-generated SDK (openai, @anthropic-ai/sdk): the same shapes under each package's own names. */
export interface SdkErrors {
  ConnectionTimeout: ErrorClass;
  UserAbort: ErrorClass;
  Connection: ErrorClass;
  Api: abstract new (...args: never[]) => Error & { status?: number; headers?: Headers; error?: unknown };
}

/**
 * Maps whatever an SDK (or the body parser) threw to an LlmError with a kind, with the client's
 * `apiKey` masked: a server or gateway may quote the key it refused in its error body, and the
 * message goes on to the run's ending, trace and events.
 */
export function sdkError(e: unknown, signal: AbortSignal, name: string, sdk: SdkErrors, apiKey?: string): LlmError {
  const error = toSdkError(e, signal, name, sdk);
  const message = maskClientSecrets(error.message, apiKey === undefined ? [] : [apiKey]);
  return message === error.message ? error : new LlmError(error.kind, message, error.details);
}

/**
 * The shapes of the providers' API keys (OpenAI's, Anthropic's and OpenRouter's sk-, Groq's gsk_,
 * xAI's, Perplexity's, the AI Gateway's vck_, Hugging Face's hf_, Fireworks' fw_, NVIDIA's nvapi-,
 * Google's AIza), with a digit after the prefix: words of a message ("sk-learn") have none.
 */
const KEY_SHAPES = /\b(?:(?:sk|rk|gsk|xai|pplx|vck|hf|fw|nvapi)[-_](?=[\w-]*\d)[\w-]{16,}|AIza[\w-]{30,})/g;

/**
 * An error's message with each of a client's `keys` shown as [api key] (maskKey), and the user
 * name and password of any URL in it as [redacted]: fetch refuses a base URL with credentials
 * (a server behind basic auth) with a TypeError that quotes it whole. A bearer token quoted as
 * a header is masked whoever sent it: an AI SDK model wrapped in middleware keeps its key out of
 * reach. A token has a digit, which the words after "Bearer" in an ordinary message do not.
 */
export function maskSecrets(message: string, keys: readonly string[]): string {
  let out = message.includes("@") ? message.replace(/(\b[a-z][a-z\d+.-]*:\/\/)[^\s/@]+@/gi, "$1[redacted]@") : message;
  for (const key of keys) out = maskKey(out, key);
  return out.replace(/\b(Bearer\s+)(?=[^\s"',;]*\d)[\w.~+/=-]{8,}/gi, "$1[api key]");
}

/**
 * An LLM client's error message with its secrets masked (maskSecrets), and any key of a
 * provider's shape (KEY_SHAPES) quoted bare: an AI SDK model wrapped in middleware keeps its key
 * out of reach. (A tool's error keeps them for the run's hidden values to show as stand-ins.)
 */
export function maskClientSecrets(message: string, keys: readonly string[]): string {
  return maskSecrets(message, keys).replace(KEY_SHAPES, "[api key]");
}

/** What a masked key is shown as. */
export const KEY_MASK = "[api key]";

/** The form of `key` a server quotes, or undefined when it is too short to mask. */
export function quotedKey(key: string | undefined): string | undefined {
  // As sent: fetch trims a header value, so a key read with a trailing newline (a secret file)
  // works, and a server quotes it without the newline.
  const sent = key?.trim();
  // A key of a few characters (a local server's placeholder) would mask ordinary words.
  return sent === undefined || sent.length < 8 ? undefined : sent;
}

/** `text` with every occurrence of `key` shown as [api key]. */
export function maskKey(text: string, key: string | undefined): string {
  const sent = quotedKey(key);
  if (sent === undefined || !text.includes(sent)) return text;
  return text.replaceAll(sent, KEY_MASK);
}

function toSdkError(e: unknown, signal: AbortSignal, name: string, sdk: SdkErrors): LlmError {
  // Our controller fired: its reason says whether it was the timeout or the caller. It comes
  // first: the Anthropic SDK ends a stream quietly when it fires, which reads as a stream cut short.
  if (signal.aborted && signal.reason instanceof LlmError) return signal.reason;
  if (e instanceof LlmError) return e;
  const oversized = oversizedHeaders(name, e);
  if (oversized !== undefined) return oversized;
  if (e instanceof sdk.ConnectionTimeout) return new LlmError("timeout", `${name}: the server did not answer in time`);
  if (e instanceof sdk.UserAbort) return new LlmError("aborted", `${name}: request aborted`);
  if (e instanceof sdk.Connection) return new LlmError("connection", `${name}: cannot reach the server (${e.message})`);
  if (e instanceof sdk.Api) return e.status === undefined ? streamError(name, e.error) : statusError(name, e.status, e.message, e.headers, e.error);
  const header = refusedHeader(name, e);
  if (header !== undefined) return header;
  if (e instanceof SyntaxError) return new LlmError("malformed", `${name}: the reply is not valid JSON (${e.message})`);
  const dropped = droppedConnection(e);
  if (dropped !== undefined) return lostReply(name, dropped);
  return new LlmError("malformed", `${name}: unexpected failure reading the reply (${errorText(e)})`);
}

/**
 * A request whose headers fetch refused, or undefined: a key holding a line break or another
 * control character (a secrets file of two lines read whole). Fetch's message quotes the whole
 * header value, the key and whatever followed it, where no key mask finds it: nothing is quoted.
 */
export function refusedHeader(name: string, e: unknown): LlmError | undefined {
  let c: unknown = e;
  for (let depth = 0; c instanceof Error && depth < 4; depth++, c = c.cause) {
    if (c instanceof TypeError && /is an invalid header (value|name)/.test(c.message)) {
      return new LlmError("config", `${name}: the API key (or another header of the request) cannot be sent as a header: it holds a line break or another control character`);
    }
  }
  return undefined;
}

/**
 * A reply whose headers are larger than Node.js reads (16 KB by default), or undefined: fetch
 * (undici) fails with "fetch failed", which the SDKs call a connection error, though the server
 * answered, and would answer the same again.
 */
export function oversizedHeaders(name: string, e: unknown): LlmError | undefined {
  let c: unknown = e;
  for (let depth = 0; c instanceof Error && depth < 4; depth++, c = c.cause) {
    if ((c as { code?: unknown }).code === "UND_ERR_HEADERS_OVERFLOW") return new LlmError("malformed", `${name}: the reply's headers are larger than Node.js reads (--max-http-header-size)`);
  }
  return undefined;
}

/** Socket failures: the connection was closed or reset under the request. */
const SOCKET_CODES: ReadonlySet<string> = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE", "ECONNABORTED"]);

/**
 * The socket's failure under an error thrown while a reply was read, or undefined: fetch (undici)
 * throws `terminated`, caused by "other side closed", when a proxy or load balancer drops the
 * connection in the middle of a body, and the SDKs hand it on as it is.
 */
export function droppedConnection(e: unknown): string | undefined {
  let c: unknown = e;
  for (let depth = 0; c instanceof Error && depth < 4; depth++, c = c.cause) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === "string" && SOCKET_CODES.has(code)) return c.message;
  }
  return undefined;
}

/** A reply lost with its connection: retryable, as the server may well answer the next attempt in full. */
export function lostReply(name: string, why: string): LlmError {
  return new LlmError("connection", `${name}: the connection was lost before the reply was complete (${why})`, { delivered: true });
}

/** Error types of a stream's error event that the same request would meet again. */
const REQUEST_FAULTS: ReadonlySet<string> = new Set(["invalid_request_error", "authentication_error", "permission_error", "not_found_error", "request_too_large", "billing_error"]);

/**
 * An error the server sent after its 200 (Anthropic's `error` event, where an overload strikes
 * mid-reply; an OpenAI-compatible `{"error": ...}` chunk; a gateway's error body, `where` "the
 * reply"), as the SDKs and the AI SDK's providers hand over its body. Its status is 200, so the
 * status a gateway puts in its numeric `code` (OpenRouter), else its type, tells whether a retry
 * can help: only a fault of the request itself cannot.
 */
export function streamError(name: string, body: unknown, where = "the stream"): LlmError {
  const b = (typeof body === "object" && body !== null ? body : {}) as { type?: unknown; code?: unknown; message?: unknown; error?: unknown };
  const inner = (typeof b.error === "object" && b.error !== null ? b.error : b) as typeof b;
  const type = typeof inner.type === "string" ? inner.type : "";
  const message = typeof inner.message === "string" ? inner.message : typeof body === "string" ? body : bodyText(body);
  const code = inner.code;
  const kind =
    quotaUsedUp(inner) ? "http" : typeof code === "number" && code >= 400 && code < 600 ? statusKind(code) : /rate_limit/.test(`${type} ${String(code)}`) ? "rate_limit" : REQUEST_FAULTS.has(type) ? "http" : "server";
  return new LlmError(kind, `${name}: error in ${where}: ${type === "" ? "" : `${type}: `}${quoted(message)}`);
}

/** A body with no message, as JSON; one JSON cannot spell (undefined, a symbol, a cycle, a BigInt: a model's own throw) as errorText reads it. */
function bodyText(body: unknown): string {
  try {
    const json = JSON.stringify(body);
    if (json !== undefined) return json;
  } catch {
    // A cycle or a BigInt: read below.
  }
  return errorText(body, "an error that says nothing");
}

/** The most of a server's text an error quotes: its message goes on to the run's ending, trace, events and every retry line. */
const MAX_QUOTED = 1_000;

/**
 * A server's text as an error quotes it: whole when short (up to `max`), else its start and its length. Cut
 * before the word the cut would halve (a space, a comma, a quote ends one): a key quoted across
 * the cut would be left in part, which no mask finds, as would a token (a JWT) that fills the
 * whole start, so none of such a start is quoted. Nor is half an escape (`\u00e9`) or half an emoji.
 */
export function quoted(text: string, max = MAX_QUOTED): string {
  if (text.length <= max) return text;
  const word = /[^\w.~+/=-][\w.~+/=-]*$/.exec(text.slice(0, max + 1));
  let end = word === null ? 0 : word.index;
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1])) end--;
  // A backslash left last would escape the ellipsis: it is the start of an escape the cut halved.
  const slashes = /\\*$/.exec(text.slice(0, end))?.[0].length ?? 0;
  if (slashes % 2 === 1) end--;
  return `${text.slice(0, end)}… (${text.length.toLocaleString("en-US")} characters in all)`;
}

/** An SDK's own timeout, set past the attempt's so that the attempt's controller always fires first. */
export function sdkBackstopMs(timeoutMs: number): number {
  return Math.min(MAX_TIMER_MS, timeoutMs * 2 + 5_000);
}

/**
 * Runs `send` with a signal that fires on the timeout or the caller's abort, retrying the
 * retryable failures (`attempt` counts from 1, for a stream's `onText`). A stream calls `alive`
 * on each event it reads, which starts the timeout over. `toError` maps whatever `send` threw; it
 * gets the attempt's signal, whose reason tells the timeout from the caller.
 */
export async function withRetries(
  name: string,
  s: RetrySettings,
  request: LlmRequest,
  send: (signal: AbortSignal, attempt: number, alive: () => void) => Promise<LlmResponse>,
  toError: (e: unknown, signal: AbortSignal) => LlmError,
): Promise<LlmResponse> {
  if (request.signal?.aborted) throw abortError(request.signal, name);
  for (let n = 1; ; n++) {
    let error: LlmError;
    const ctl = new AbortController();
    let heard = false;
    const expire = () => ctl.abort(new LlmError("timeout", heard ? `${name}: the reply stalled: nothing received for ${s.timeoutMs} ms` : `${name}: no reply within ${s.timeoutMs} ms`));
    // A timeout past what a timer holds (weeks) is no timeout, not one that fires at once.
    const timer = s.timeoutMs > MAX_TIMER_MS ? undefined : setTimeout(expire, s.timeoutMs);
    // Called per event: refresh re-arms the one timer without allocating.
    const alive = () => {
      heard = true;
      timer?.refresh();
    };
    const outer = request.signal;
    const onAbort = () => ctl.abort(abortError(outer as AbortSignal, name));
    outer?.addEventListener("abort", onAbort, { once: true });
    try {
      return await send(ctl.signal, n, alive);
    } catch (e) {
      error = toError(e, ctl.signal);
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    }
    const retryable = error.kind === "rate_limit" || error.kind === "server" || error.kind === "timeout" || error.kind === "connection";
    if (!retryable || n > s.maxRetries) throw withAttempts(error, n);
    const hinted = error.details.retryAfterMs;
    if (hinted !== undefined && hinted > s.retryMaxMs) {
      throw new LlmError(error.kind, `${error.message} (the server asks to retry after ${Math.ceil(hinted / 1000)} s, beyond the ${Math.ceil(s.retryMaxMs / 1000)} s cap)`, { ...error.details, attempts: n });
    }
    const backoff = Math.min(s.retryMaxMs, s.retryBaseMs * 2 ** (n - 1)) * (0.75 + Math.random() * 0.25);
    const delayMs = Math.round(hinted ?? backoff);
    try {
      s.onRetry?.({ attempt: n, delayMs, error });
    } catch {
      // A logging hook, as the agent's onEvent: what it throws is ignored, the retry goes ahead.
    }
    await sleep(delayMs, request.signal, name);
  }
}

function withAttempts(e: LlmError, attempts: number): LlmError {
  if (attempts === 1 || e.kind === "aborted") return e;
  return new LlmError(e.kind, `${e.message} (after ${attempts} attempts)`, { ...e.details, attempts });
}

/**
 * An HTTP error status as an LlmError: 429 is `rate_limit`, 5xx and 408 `server`, the rest `http`;
 * but a 429 whose `errorBody` (the error body, or its `error` object) says the account's quota is used
 * up (OpenAI's `insufficient_quota`: no credits, the spending limit reached), and any answer whose
 * server says `x-should-retry: false` (as the SDKs honour it; ptc's proxy for a used-up token
 * budget), is `http`, not retried: no wait helps.
 */
export function statusError(name: string, status: number, message: string, headers: Headers | undefined, errorBody?: unknown): LlmError {
  const kind = (status === 429 && quotaUsedUp(errorBody)) || headers?.get("x-should-retry") === "false" ? "http" : statusKind(status);
  const retryAfter = headers ? retryAfterMs((name) => headers.get(name)) : undefined;
  // The SDKs' messages start with the status already ("500 Internal error"): say it once.
  const body = message.startsWith(`${status} `) ? message.slice(String(status).length + 1) : message;
  const text = htmlSummary(body) ?? quoted(body);
  return new LlmError(kind, `${name}: HTTP ${status}: ${text}`, { status, ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }) });
}

/** Whether an error body, or its `error` object, is OpenAI's used-up quota (by its code or type): the one reading, for the LLM clients and the proxy. */
export function quotaUsedUp(body: unknown): boolean {
  const said = (v: unknown): boolean => {
    const e = (typeof v === "object" && v !== null ? v : {}) as { code?: unknown; type?: unknown };
    return e.code === "insufficient_quota" || e.type === "insufficient_quota";
  };
  return said(body) || said((body as { error?: unknown } | null | undefined)?.error);
}

function statusKind(status: number): "rate_limit" | "server" | "http" {
  return status === 429 ? "rate_limit" : status >= 500 || status === 408 ? "server" : "http";
}

/** A web page where the API's reply was due (answeredPage), told by its title when it is at hand. */
export function webPageError(name: string, page: string | undefined): LlmError {
  return new LlmError("malformed", `${name}: the server answered with a web page, not the API (is the base URL right?): ${(page === undefined ? undefined : htmlSummary(page)) ?? "an HTML page"}`);
}

/**
 * A gateway's HTML error page (a proxy's or CDN's 502) told by its title, else its visible text,
 * briefly: the SDKs quote a body that is not JSON whole, and the message goes on to the run's
 * ending, trace and events. Undefined for a body that is not an HTML page.
 */
function htmlSummary(page: string): string | undefined {
  if (!/^\s*<(!doctype\s+html|html)[\s>]/i.test(page)) return undefined;
  // Its head is enough, and a page of megabytes would cost the tag-stripping below dearly.
  const body = page.slice(0, 8_192);
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1] ?? "";
  const visible = (title.trim() === "" ? body.replace(/<(head|script|style)[\s>][\s\S]*?<\/\1\s*>/gi, " ").replace(/<[^>]*>/g, " ") : title).replace(/\s+/g, " ").trim();
  // By code points: an error message is text like any other, and half an emoji is not.
  const cut = visible.length > 200 ? `${[...visible].slice(0, 200).join("")}…` : visible;
  return `${cut === "" ? "an error" : cut} (an HTML page)`;
}

/**
 * The server's requested delay in ms, from `retry-after-ms` or `retry-after` (whole or decimal
 * seconds, or an HTTP date); undefined when it asked nothing readable. The one reading, for the
 * LLM clients and the proxy: `header` gives a header's value by its lower-case name.
 */
export function retryAfterMs(header: (name: string) => string | null | undefined, now: number = Date.now()): number | undefined {
  const ms = delay(header("retry-after-ms"));
  if (ms !== undefined) return ms;
  const raw = header("retry-after");
  if (raw === null || raw === undefined) return undefined;
  const seconds = delay(raw);
  if (seconds !== undefined) return Math.min(seconds * 1000, Number.MAX_SAFE_INTEGER);
  // Each form of HTTP date has a time of day; Date.parse reads much else as a day of 2001 ("May 5",
  // "x 5"), a wait of 0 that would send every retry at once.
  const date = /[a-z]/i.test(raw) && /\b\d{2}:\d{2}:\d{2}\b/.test(raw) ? httpDate(raw) : Number.NaN;
  return Number.isFinite(date) ? Math.max(0, date - now) : undefined;
}

/**
 * A date's time, read as GMT where it names no zone: every HTTP date is in GMT, the asctime form's
 * too ("Wed Nov 25 12:00:30 2026"), which Date.parse would read in the host's time zone, hours off.
 */
function httpDate(raw: string): number {
  const zoned = /\b(?:GMT|UTC?)\b|[+-]\d{2}:?\d{2}\s*$/i.test(raw);
  const gmt = zoned ? Number.NaN : Date.parse(`${raw} GMT`);
  return Number.isFinite(gmt) ? gmt : Date.parse(raw);
}

/**
 * A non-negative number written alone ("12abc", "", "-3" and "Infinity" are not); one of more
 * digits than a double holds is the longest wait a message can still state, not Infinity.
 */
function delay(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || !/^\s*\d+(\.\d+)?\s*$/.test(raw)) return undefined;
  return Math.min(Number(raw), Number.MAX_SAFE_INTEGER);
}
