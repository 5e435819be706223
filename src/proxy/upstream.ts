// Sending a request to the upstream with node:http, keeping the bytes as they are. One keep-alive
// agent per proxy; a socket idle for `timeoutMs` (no byte either way) fails the request.
import http, { IncomingMessage, type IncomingHttpHeaders } from "node:http";
import https from "node:https";
import { Socket } from "node:net";
import type { ProxyConfig } from "./config.js";
import { maskKeys } from "./tenancy.js";

// Per-hop headers (RFC 9110 §7.6.1) and those the proxy sets itself. Expect too: the proxy has read
// the whole body before it sends (RFC 9110 §10.1.1), so nothing on its hop waits for a 100.
const HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade", "host", "content-length", "expect"]);

/** The headers a Connection header names as of its own hop (RFC 9110 §7.6.1), which stay on that hop as Connection does; undefined without one. */
function hopNamed(connection: string | undefined): Set<string> | undefined {
  return connection === undefined ? undefined : new Set(connection.split(",").map((h) => h.trim().toLowerCase()));
}

export type UpstreamResult =
  | { ok: true; response: IncomingMessage; startedAt: number }
  /** `delivered`: the whole request had gone out before the failure (the upstream may have worked on it, and billed it). */
  | { ok: false; kind: "unreachable" | "timeout"; message: string; delivered: boolean };

export class Upstream {
  private readonly httpAgent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  private readonly httpsAgent = new https.Agent({ keepAlive: true, maxSockets: Infinity });

  /**
   * Sends `body` to `base` + `path`. `path` is the client's path; when the base already ends in
   * /v1 and the path starts with it, it is not repeated.
   */
  send(base: URL, method: string, path: string, clientHeaders: IncomingHttpHeaders, body: Buffer, timeoutMs: number, extra: Record<string, string> = {}, signal?: AbortSignal): Promise<UpstreamResult> {
    const url = upstreamUrl(base, path);
    const headers: Record<string, string | string[]> = {};
    const named = hopNamed(clientHeaders.connection);
    for (const [k, v] of Object.entries(clientHeaders)) if (v !== undefined && !HOP.has(k) && named?.has(k) !== true) headers[k] = v;
    // An empty value removes the header (a virtual key without an upstream key sends none).
    for (const [k, v] of Object.entries(extra)) {
      if (v === "") delete headers[k];
      else headers[k] = v;
    }
    if (body.length > 0 || method === "POST" || method === "PUT" || method === "PATCH") headers["content-length"] = String(body.length);
    const secure = url.protocol === "https:";
    const startedAt = performance.now();
    return new Promise((resolve) => {
      // The signal fires when the client goes away: the upstream stops generating for nobody.
      const req = (secure ? https : http).request(url, { method, headers, agent: secure ? this.httpsAgent : this.httpAgent, ...(signal === undefined ? {} : { signal }) });
      let settled = false;
      const settle = (r: UpstreamResult) => {
        if (!settled) {
          settled = true;
          resolve(r);
        }
      };
      req.setTimeout(timeoutMs, () => {
        settle({ ok: false, kind: "timeout", message: `the upstream sent nothing for ${timeoutMs} ms`, delivered: req.writableFinished });
        req.destroy();
      });
      // A kept-alive connection reset before any reply is, far more often than not, one the upstream
      // closed as idle just as this request went out: it never read it, so it counts as not
      // delivered and is retried (Node's advice for `reusedSocket`). A new connection's reset is not.
      req.on("error", (e) => settle({ ok: false, kind: "unreachable", message: `cannot reach the upstream at ${url.origin}: ${e.message}`, delivered: req.writableFinished && !(req.reusedSocket && (e as NodeJS.ErrnoException).code === "ECONNRESET") }));
      req.on("response", (response) => settle({ ok: true, response, startedAt }));
      req.end(body);
    });
  }

  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

const bases = new WeakMap<ProxyConfig, URL>();

/** The configured upstream as a URL, parsed once per configuration (each update swaps the whole object). */
export function upstreamBase(config: ProxyConfig): URL | undefined {
  if (config.upstream === undefined) return undefined;
  let base = bases.get(config);
  if (base === undefined) bases.set(config, (base = new URL(config.upstream)));
  return base;
}

export function upstreamUrl(base: URL, path: string): URL {
  const basePath = base.pathname.replace(/\/+$/, "");
  const rest = basePath.endsWith("/v1") && (path === "/v1" || path.startsWith("/v1/") || path.startsWith("/v1?")) ? path.slice(3) : path;
  return new URL(base.origin + basePath + rest);
}

/**
 * Response headers to pass back: all but the per-hop ones, those the upstream's Connection names
 * included (and the length, when the body changes), with the keys the client never gave the proxy
 * (tenancy's hiddenKeys) masked.
 */
export function responseHeaders(headers: IncomingHttpHeaders, keepLength: boolean, hidden: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  const named = hopNamed(headers.connection);
  for (const [k, v] of Object.entries(headers)) {
    if (v === undefined || (HOP.has(k) && !(keepLength && k === "content-length")) || named?.has(k) === true) continue;
    out[k] = hidden.length === 0 ? v : typeof v === "string" ? maskKeys(v, hidden) : v.map((x) => maskKeys(x, hidden));
  }
  return out;
}

/**
 * The most of a reply the proxy holds whole (a chat completion, a message, a response without
 * streaming, generated images included): past it, an upstream's reply of gigabytes was read into
 * memory (700 MB: 1.6 GB resident, then a 500 for a string too long), and one without an end was
 * read for ever.
 */
export const MAX_REPLY_BYTES = 128 << 20;
/** The most of an upstream's error body read: the client sees at most its first 500 characters unless it is a JSON error. */
export const MAX_ERROR_BYTES = 1 << 20;

/**
 * The whole body, or undefined when the upstream connection broke first. Past `limit` bytes the
 * rest is not read (the upstream connection is dropped): the first `limit` bytes come back, `cut`.
 * Each piece is offered to `take` (a BodyBudget's) as it comes; at the first it refuses, reading
 * stops with the response paused, and what was read comes back `refused`, for the caller to pass
 * on with the rest.
 */
export function readBuffer(response: IncomingMessage, limit: number, take: (n: number) => boolean = () => true): Promise<{ body: Buffer; cut: boolean; refused?: true } | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      response.off("data", onData);
      response.off("end", onEnd);
      response.off("error", onBroken);
      response.off("aborted", onBroken);
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        chunks.push(c.subarray(0, c.length - (size - limit)));
        stop();
        resolve({ body: Buffer.concat(chunks), cut: true });
        response.destroy();
        return;
      }
      chunks.push(c);
      if (take(c.length)) return;
      response.pause();
      stop();
      resolve({ body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), cut: false, refused: true });
    };
    const onEnd = () => resolve({ body: Buffer.concat(chunks), cut: false });
    const onBroken = () => resolve(undefined);
    response.on("data", onData);
    response.on("end", onEnd);
    response.on("error", onBroken);
    response.on("aborted", onBroken);
  });
}

/**
 * Reads and discards a reply the proxy does not pass on (one a retry replaces), so its connection
 * can be reused; past MAX_ERROR_BYTES (an error page without end) the connection is dropped instead.
 */
export function discard(response: IncomingMessage): void {
  let size = 0;
  response.on("data", (c: Buffer) => {
    if ((size += c.length) > MAX_ERROR_BYTES) response.destroy();
  });
  response.resume();
}

/**
 * A reply whose body was read already (`body`, undefined when its connection broke first), as an
 * IncomingMessage that gives that body again: for a reply looked into before it is passed on.
 */
export function replayed(response: IncomingMessage, body: Buffer | undefined, whole = body !== undefined): IncomingMessage {
  // A socket never connected: the copy reads nothing from the network, and destroying it closes nothing shared.
  const copy = new IncomingMessage(new Socket());
  copy.statusCode = response.statusCode;
  copy.statusMessage = response.statusMessage;
  copy.headers = response.headers;
  copy.rawHeaders = response.rawHeaders;
  if (body !== undefined && body.length > 0) copy.push(body);
  copy.push(null);
  copy.complete = whole;
  return copy;
}
