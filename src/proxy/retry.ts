// Retries before the first byte: a 429 or 5xx answer, or an upstream that cannot be reached (the
// request never went out whole), is retried with exponential back-off (a `retry-after` /
// `retry-after-ms` the upstream sends takes precedence, up to maxDelayMs; longer than that, the
// answer goes to the client as it is), then the optional fallback upstream is tried the same way.
// Nothing has reached the client until a reply is taken, so a retry can never duplicate bytes; a
// timeout is not retried (it already waited upstreamTimeoutMs), nor is a 429 that says the
// account's quota is used up (OpenAI's insufficient_quota), nor a reply that says
// `x-should-retry: false`: no wait helps, only the fallback can.
import type { IncomingHttpHeaders, ServerResponse } from "node:http";
import type { ProxyConfig } from "./config.js";
import type { ProxyContext } from "./context.js";
import { decodeBody } from "./context.js";
import { discard, MAX_ERROR_BYTES, readBuffer, replayed, upstreamBase, type UpstreamResult } from "./upstream.js";
import { quotaUsedUp, retryAfterMs } from "../llm/retry.js";

// 429 and every 5xx, as the OpenAI and Anthropic SDKs retry them: Anthropic answers 529 when overloaded, CDNs 520-524.
const retryable = (status: number): boolean => status === 429 || status >= 500;

export interface Sent {
  readonly result: UpstreamResult;
  /** Requests made, the taken one included. */
  readonly attempts: number;
  /** The reply came from the fallback upstream. */
  readonly fallback: boolean;
}

const fallbacks = new WeakMap<ProxyConfig, URL>();

function fallbackBase(config: ProxyConfig): URL | undefined {
  const url = config.retries.fallbackUpstream;
  if (url === undefined) return undefined;
  let base = fallbacks.get(config);
  if (base === undefined) fallbacks.set(config, (base = new URL(url)));
  return base;
}

/** `res`: the client's response, whose share of maxInFlightBodyBytes counts a 429's body read to classify it. */
export async function sendWithRetries(ctx: ProxyContext, config: ProxyConfig, method: string, path: string, headers: IncomingHttpHeaders, body: Buffer, extra: Record<string, string>, signal?: AbortSignal, res?: ServerResponse): Promise<Sent> {
  const policy = config.retries;
  const primary = upstreamBase(config) as URL;
  const fallback = fallbackBase(config);
  const targets = fallback === undefined ? [primary] : [primary, fallback];
  let attempts = 0;
  for (let t = 0; ; t++) {
    // A reply that may quote the fallback's key is read to mask it (hiddenKeys): asked for as it is.
    const auth: Record<string, string> = t > 0 && policy.fallbackApiKey !== undefined ? { authorization: `Bearer ${policy.fallbackApiKey}`, "x-api-key": policy.fallbackApiKey, "accept-encoding": "identity" } : {};
    for (let i = 0; ; i++) {
      attempts++;
      let result = await ctx.upstream.send(targets[t], method, path, headers, body, config.upstreamTimeoutMs, { ...extra, ...auth }, signal);
      // Not to be sent again to this upstream: it says so (x-should-retry, as the SDKs read it), or a 429 says the quota is used up.
      let quota = result.ok && result.response.headers["x-should-retry"] === "false";
      let held = 0;
      if (result.ok && !quota && result.response.statusCode === 429) ({ result, quota, held } = await quotaReply(ctx, result, res));
      // A request the upstream had whole before its connection broke is not sent again, here or to
      // the fallback: it may have worked on it, and billed it (the caller charges it so).
      const failed = result.ok ? retryable(result.response.statusCode ?? 502) : result.kind === "unreachable" && !result.delivered;
      const last = t === targets.length - 1;
      if (!failed || signal?.aborted === true) return { result, attempts, fallback: t > 0 };
      const asked = result.ok ? upstreamRetryAfter(result.response.headers, ctx.now()) : undefined;
      const delay = asked ?? Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** i);
      const again = !quota && i < policy.attempts && delay <= policy.maxDelayMs;
      if (!again && last) return { result, attempts, fallback: t > 0 };
      // This reply is dropped: its body is read and discarded so the connection can be reused.
      if (result.ok) discard(result.response);
      if (res !== undefined && held > 0) ctx.bodies.giveReply(res, held);
      if (!again) break;
      ctx.metrics.inc("ptc_proxy_upstream_retries_total");
      await ctx.sleep(delay, signal);
    }
    ctx.metrics.inc("ptc_proxy_upstream_fallbacks_total");
  }
}

/**
 * A 429 with its body read (up to MAX_ERROR_BYTES, as a caller reads an error) to tell a used-up
 * quota from a rate limit; the reply comes back as a copy that gives the same bytes again. What
 * it holds counts against maxInFlightBodyBytes as `res`'s (`held` bytes, kept while the copy is):
 * past what the total can hold, only the start read so far is kept, the copy then cut there.
 */
async function quotaReply(ctx: ProxyContext, result: Extract<UpstreamResult, { ok: true }>, res: ServerResponse | undefined): Promise<{ result: UpstreamResult; quota: boolean; held: number }> {
  const { response } = result;
  let held = 0;
  const take = (n: number): boolean => {
    if (res !== undefined && !ctx.bodies.takeReply(res, n)) return false;
    held += n;
    return true;
  };
  const read = await readBuffer(response, MAX_ERROR_BYTES, take);
  if (read?.refused === true) response.destroy();
  const kept = held;
  let quota = false;
  if (read !== undefined) {
    const decoded = await decodeBody(read.body, response.headers["content-encoding"], MAX_ERROR_BYTES, take);
    const text = decoded.ok ? decoded.body.toString("utf8") : "";
    // Parsed only when it may say so: an ordinary rate limit's body is not.
    if (text.includes("insufficient_quota")) {
      try {
        quota = quotaUsedUp(JSON.parse(text));
      } catch {
        // Not JSON: not OpenAI's error body.
      }
    }
  }
  // The decoded copy is dropped here.
  if (res !== undefined && held > kept) ctx.bodies.giveReply(res, held - kept);
  return { result: { ...result, response: replayed(response, read?.body, read !== undefined && read.refused !== true) }, quota, held: kept };
}

/** What the upstream asked to wait, in ms (Node keeps the first of repeated `retry-after` headers, so a value is a string). */
export function upstreamRetryAfter(headers: IncomingHttpHeaders, now: number): number | undefined {
  return retryAfterMs((name) => {
    const v = headers[name];
    return typeof v === "string" ? v : undefined;
  }, now);
}
