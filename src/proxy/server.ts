// `ptc proxy`: an OpenAI-compatible server in front of an upstream one. Chat completions are
// compacted per conversation before forwarding; every other path, header and body goes through
// untouched. Health, readiness and metrics are open; the admin plane needs a token.
import { existsSync, mkdirSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { pipeline, Transform } from "node:stream";
import { ADMIN_PREFIX, handleAdmin } from "./admin.js";
import { ATTEMPTS_HEADER, handleChat, readErrorText, replyUsage } from "./chat.js";
import { ConfigFile } from "./config-file.js";
import { redactUrl } from "./config.js";
import { Compactor } from "./compactor.js";
import { countTokensYielding } from "../compaction/tokens.js";
import { BodyBudget, decodeBody, decodedStream, readBody, sendBodiesBusy, sendErrorAndClose, sendJson, sendTooLarge, TurnClock, undecodableCoding, unsupportedTransferCoding, type ProxyContext } from "./context.js";
import { refuseUndecodable, sendError, sendStoreUnavailable, upstreamErrorBody } from "./errors.js";
import { hostAllowed, hostPolicy, originAllowed, repeatedHost } from "./hosts.js";
import { jsonLogger, type Logger } from "./log.js";
import { Metrics } from "./metrics.js";
import { sendWithRetries } from "./retry.js";
import { normalizePath, underV1 } from "./paths.js";
import { MissingDriverError } from "./driver.js";
import { isPostgresUrl, openStore, type ConversationStore } from "./store.js";
import { isObjectArg, mustBe } from "../llm/args.js";
import { hiddenKeys, KeyMasker, refusalHeaders, repeatedCredential, Tenants, upstreamAuth, type Tenant, type TenantResult } from "./tenancy.js";
import { responseHeaders, Upstream, upstreamBase } from "./upstream.js";
import { errorText } from "../llm/errors.js";

export interface ProxyOptions {
  /** Upstream base URL; overrides the config file's. */
  readonly upstream?: string;
  /** Default 127.0.0.1: the proxy forwards credentials, so it listens on loopback unless told otherwise. */
  readonly host?: string;
  /**
   * Host names answered besides IP addresses, localhost, *.localhost and `host` (".example.com": it
   * and its subdomains; "*": any), for the Host header and for the Origin of a browser request
   * that changes state or reads admin data. Others get 403: a page could reach the proxy by DNS rebinding.
   */
  readonly allowedHosts?: readonly string[];
  /** Default 8787; 0 picks a free port. */
  readonly port?: number;
  /** JSON config file: read at start, rewritten by API updates, reloaded when edited. */
  readonly configFile?: string;
  /**
   * Where conversation state is kept: a SQLite file (default `proxy.db` in `stateDir`, else
   * ":memory:", where nothing survives a restart), or a postgres:// URL that replicas share.
   */
  readonly db?: string;
  /** Directory for state files, created 0700; the files in it are 0600. */
  readonly stateDir?: string;
  /** Token for the admin routes; without it they are disabled. */
  readonly adminToken?: string;
  /** Default: JSON lines on stderr. */
  readonly logger?: Logger;
  /** Poll interval of the config file watcher, ms. Default 1000. */
  readonly watchIntervalMs?: number;
  /** The clock (ms since epoch) for rates, expiry and records; tests pass their own. */
  readonly now?: () => number;
  /** Waits `ms` for the compaction deadline; tests pass their own, so no test depends on the wall clock. */
  readonly wait?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Waits between upstream retries; tests pass their own. */
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface RunningProxy {
  /** http://host:port */
  readonly url: string;
  readonly port: number;
  readonly context: ProxyContext;
  /** Closes at once: in-flight requests are cut. */
  close(): Promise<void>;
  /**
   * Takes no new work (503 with retry-after; /healthz answers "draining", /readyz 503), waits for
   * in-flight requests, streams and background compactions up to `timeoutMs` (default the
   * configured drainTimeoutMs), then closes and flushes the store. Resolves true when all finished.
   */
  drain(timeoutMs?: number): Promise<boolean>;
}

/** Why the proxy could not start, e.g. an invalid config file. */
export class ProxyStartError extends Error {
  override readonly name = "ProxyStartError";
}

async function passthrough(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse, body: Buffer, started: number, tenant: Tenant, target: string): Promise<void> {
  const config = ctx.config.current;
  const base = upstreamBase(config);
  if (base === undefined) return sendError(res, 502, "the proxy has no upstream configured", "upstream_error", "no_upstream");
  // A client that goes away cancels its upstream request, waiting or streaming: the upstream stops
  // working for nobody, and its connection is not held until the upstream timeout.
  const clientGone = new AbortController();
  // One listener for both (pipeline adds seven of its own: past ten, Node writes a warning, plain
  // text on the JSON log, for every forwarded request).
  const closed = new Promise<void>((resolve) =>
    res.on("close", () => {
      if (!res.writableFinished) clientGone.abort();
      resolve();
    }),
  );
  // A JSON request (embeddings, legacy completions) is counted as text, once: reserved against a
  // budget, and charged when its stream reports no usage.
  const json = String(req.headers["content-type"] ?? "").includes("json");
  // A virtual key's spend counts the body as the client wrote it: one compressed in a coding this
  // Node cannot undo (zstd before Node 22.15), corrupt, or inflating past maxBodyBytes would count
  // nothing, and the upstream may read it all the same. Refused as a chat body is.
  let text = body;
  if (tenant.virtualKey !== undefined && body.length > 0 && req.headers["content-encoding"] !== undefined) {
    const decoded = await decodeBody(body, req.headers["content-encoding"], config.maxBodyBytes, (n) => ctx.bodies.take(res, n));
    if (!decoded.ok) return decoded.status === 503 ? sendBodiesBusy(req, res, ctx.bodies) : sendError(res, decoded.status, decoded.message, "invalid_request_error", decoded.code);
    text = decoded.body;
  }
  let counted: Promise<number> | undefined;
  const bodyTokens = () => (counted ??= requestTokens(text, json));
  // Reserved before it goes upstream, as a chat request's prompt is: the check on arrival charges
  // nothing, so requests sent together would all pass it. A request without a body costs nothing to reserve.
  let reservation = 0;
  if (body.length > 0) {
    let budget: Awaited<ReturnType<typeof ctx.tenants.reserve>>;
    try {
      budget = await ctx.tenants.reserve(config, tenant, bodyTokens);
    } catch (e) {
      return sendStoreUnavailable(res, ctx.log, e, tenant.id);
    }
    if (typeof budget !== "number") return sendError(res, budget.status, budget.message, "rate_limit_error", budget.code, refusalHeaders(budget));
    reservation = budget;
  }
  const settle = (tokens: number) =>
    ctx.tenants.charge(tenant.virtualKey, tokens, reservation)?.catch((e: unknown) => {
      ctx.log({ event: "store_error", tenant: tenant.id, error: errorText(e) });
    });
  // A reply that may quote a key the client never gave is read to mask it: asked for as it is
  // (by sendWithRetries on the fallback, which alone is sent the fallback's key).
  const extra = hiddenKeys(tenant, config, false).length === 0 ? upstreamAuth(tenant) : { ...upstreamAuth(tenant), "accept-encoding": "identity" };
  const { result, attempts, fallback } = await sendWithRetries(ctx, config, req.method ?? "GET", target, req.headers, body, extra, clientGone.signal, res);
  const hidden = hiddenKeys(tenant, config, fallback);
  // A request the client left while the upstream had it whole keeps its reservation: leaving before the reply is no way around a budget.
  if (clientGone.signal.aborted) return settle(result.ok || result.delivered ? reservation : 0);
  if (!result.ok) {
    // One the upstream had whole (then timed out on, or dropped) keeps its reservation: it may have been billed.
    void settle(result.delivered ? reservation : 0);
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", `kind="${result.kind}"`);
    return sendError(res, result.kind === "timeout" ? 504 : 502, result.message, "upstream_error", result.kind === "timeout" ? "upstream_timeout" : "upstream_unreachable");
  }
  const status = result.response.statusCode ?? 502;
  const jsonReply = String(result.response.headers["content-type"] ?? "").includes("json");
  // Error pages (HTML from a load balancer, plain text) become OpenAI-style errors; an error that
  // may quote a key the client never gave is read to mask it.
  if (status >= 400 && (!jsonReply || hidden.length > 0)) {
    void settle(0);
    // The client's accept-encoding went upstream: the body is read decoded, and sent so (as empty when the upstream broke it off).
    // Inflated to the MiB of it that is read, as the chat routes do: 20 KB of gzip became 20 MiB (up to maxBodyBytes) of which 500 characters are shown.
    // Counted as a whole reply is: N requests at once each held an error of up to 1 MiB, twice, outside the total.
    const read = await readErrorText(result.response, hidden, (n) => ctx.bodies.takeReply(res, n));
    // A JSON error cut short is not shown. Masked before it is cut to what is shown: else a key across the cut showed its start.
    const text = jsonReply ? (read.whole ? read.text : "") : upstreamErrorBody(status, read.text);
    const headers = jsonReply ? responseHeaders(result.response.headers, false, hidden) : { "content-type": "application/json" };
    delete headers["content-encoding"];
    res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  const masks = new KeyMasker(hidden).active && req.method !== "HEAD" && status !== 204 && status !== 304;
  const coding = masks ? undecodableCoding(result.response.headers["content-encoding"]) : undefined;
  const tried: Record<string, string> = attempts > 1 ? { [ATTEMPTS_HEADER]: String(attempts) } : {};
  if (coding !== undefined) {
    refuseUndecodable(res, result.response, coding, ctx.metrics, tried);
    // It answered, so it had the request (and may have billed it): charged as a reply whose usage is unread.
    return settle(status < 300 ? await bodyTokens() : 0);
  }
  const masked = masks ? (decodedStream(result.response, result.response.headers["content-encoding"]) ?? result.response) : undefined;
  const headers = responseHeaders(result.response.headers, masked === undefined, hidden);
  if (masked !== undefined && masked !== result.response) delete headers["content-encoding"];
  res.writeHead(status, { ...headers, ...tried });
  // A virtual key's budget counts what the upstream reports on every path (embeddings, legacy completions), not only on chat.
  const usage = tenant.virtualKey === undefined ? undefined : replyUsage(result.response);
  // pipeline, not pipe: an upstream that breaks off in the middle of its reply cuts the client's
  // too (pipe left it open, the client waiting for an end that never came).
  const cut = (e: Error | null | undefined) => {
    if (e && !clientGone.signal.aborted) ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="stream_cut"');
  };
  if (masked === undefined) pipeline(result.response, res, cut);
  else pipeline(masked, maskingStream(hidden), res, cut);
  await closed;
  ctx.metrics.observe("ptc_proxy_upstream_seconds", performance.now() - started);
  const used = await usage;
  if (tenant.virtualKey === undefined) return;
  // A stream that reports no usage (legacy completions without include_usage, a client leaving
  // before the usage), a reply cut before its end, or one too long to read whole for its usage (a
  // big embeddings batch), is charged its JSON request, counted, as the chat routes charge their
  // prompt: else such a path spends past any budget. A whole JSON reply without usage (a token
  // count) costs nothing.
  const unreported = status < 300 && (used === "unread" || (used === undefined && (!result.response.complete || String(result.response.headers["content-type"] ?? "").includes("text/event-stream"))));
  await settle(typeof used === "object" ? used.promptTokens + used.completionTokens : unreported ? await bodyTokens() : 0);
}

/** The bytes passing through with `hidden` masked (KeyMasker): a 200 stream may quote the key it was sent with. */
function maskingStream(hidden: readonly string[]): Transform {
  const masker = new KeyMasker(hidden);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      done(null, masker.push(chunk));
    },
    flush(done) {
      done(null, masker.end());
    },
  });
}

/**
 * The tokens of a JSON request body (decoded) as text (none when it is not JSON), counted in
 * pieces: a body of megabytes does not hold up every other request. A body is JSON by its content
 * type, or by its first character when the type says otherwise or nothing: servers such as vLLM's
 * parse a body sent without a type as JSON, so the header is no way past a budget.
 */
async function requestTokens(body: Buffer, json: boolean): Promise<number> {
  if (!(json || startsJson(body))) return 0;
  // Not cached: no other request has this body, and 128 bodies of 64 K would push every message out.
  return countTokensYielding(body.toString("utf8"), false);
}

/** Whether a body's first character after any whitespace opens a JSON object or array. */
function startsJson(body: Buffer): boolean {
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return c === 123 || c === 91;
  }
  return false;
}

// The store error /readyz last logged, per proxy.
const reportedStoreErrors = new WeakMap<ProxyContext, string>();

// The route each response is counted under, set as the request is routed (default "rejected": a bad path).
const routes = new WeakMap<ServerResponse, string>();
/** How long a close waits, once no connection is left, for handlers still writing their requests' records and charges. */
const HANDLERS_GRACE_MS = 10_000;

function route(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> | void {
  const started = performance.now();
  if (repeatedHost(req.rawHeaders)) return sendError(res, 400, "the request sends the Host header more than once: send one", "invalid_request_error", "repeated_host");
  if (!hostAllowed(ctx.hosts, req.headers.host)) {
    return sendError(res, 403, `the Host ${JSON.stringify(req.headers.host)} is not one this proxy answers (an IP address, localhost, or a name given with --allowed-host): a page could reach the proxy by rebinding its own name`, "invalid_request_error", "host_not_allowed");
  }
  const normalized = normalizePath(req.url ?? "/");
  if (!normalized.ok) {
    return sendError(res, 400, `request paths must stay under /v1: ${normalized.reason}`, "invalid_request_error", "invalid_path");
  }
  const path = normalized.path;
  const method = req.method ?? "GET";
  // Answered here, never forwarded: load balancers and monitors probe these, some with HEAD
  // (answered as GET, without the body).
  routes.set(res, "local");
  const probe = method === "GET" || method === "HEAD";
  if (probe && (path === "/healthz" || path === "/health")) return sendJson(res, 200, { status: ctx.life.draining ? "draining" : "ok" });
  if (probe && path === "/readyz") {
    // A draining proxy is alive but not ready: balancers stop sending it work and nothing is cut.
    if (ctx.life.draining) return sendJson(res, 503, { status: "draining" });
    const ready = ctx.store.open;
    const error = ctx.store.writeError;
    // Open to anyone: the store's own message (a database's names its host, port and user) goes to the log, once per message.
    // Forgotten once writes succeed again, so the same failure coming back is logged again.
    if (error === undefined) reportedStoreErrors.delete(ctx);
    else if (reportedStoreErrors.get(ctx) !== error) {
      reportedStoreErrors.set(ctx, error);
      ctx.log({ event: "store_not_ready", error });
    }
    const store = ready ? "open" : error === undefined ? "closed" : "write failing";
    return sendJson(res, ready ? 200 : 503, { status: ready ? "ready" : "not ready", store, config: "valid" });
  }
  if (method === "GET" && path === "/metrics") {
    return ctx.store.count().then(
      (n) => {
        const body = ctx.metrics.render({ ptc_proxy_conversations: n, ptc_proxy_body_bytes_in_flight: ctx.bodies.used, ptc_proxy_body_bytes_limit: ctx.bodies.limit });
        res.writeHead(200, { "content-type": "text/plain; version=0.0.4", "content-length": Buffer.byteLength(body) });
        res.end(body);
      },
      (e: unknown) => sendStoreUnavailable(res, ctx.log, e),
    );
  }
  routes.set(res, "rejected");
  // A browser sends Origin; a page elsewhere may read, as any page may, but not change state or reach the admin routes.
  const origin = req.headers.origin;
  if (origin !== undefined && (path.startsWith(ADMIN_PREFIX) || (!probe && method !== "OPTIONS")) && !originAllowed(ctx.hosts, origin)) {
    return sendError(res, 403, `requests from pages on ${JSON.stringify(origin)} are refused (pages on localhost or a name given with --allowed-host are answered)`, "invalid_request_error", "origin_not_allowed");
  }
  if (ctx.life.draining) {
    res.setHeader("connection", "close");
    return sendError(res, 503, "the proxy is shutting down: retry on another instance", "server_error", "draining", { "retry-after": "1" });
  }
  const coding = unsupportedTransferCoding(req.headers["transfer-encoding"]);
  if (coding !== undefined) {
    return sendErrorAndClose(req, res, 501, `the request's transfer-encoding ${JSON.stringify(coding)} is not supported: send the body chunked or with a content-length (a content-encoding such as gzip is supported)`, "unsupported_transfer_encoding");
  }
  if (path.startsWith(ADMIN_PREFIX)) {
    routes.set(res, "admin");
    return handleAdmin(ctx, req, res, path.slice(ADMIN_PREFIX.length));
  }
  if (!underV1(path)) {
    return sendError(res, 400, `request paths must stay under /v1; ${JSON.stringify(path)} does not`, "invalid_request_error", "invalid_path");
  }
  const target = path + normalized.query;
  return readBody(req, res, ctx.config.current.maxBodyBytes, ctx.config.current.requestBodyTimeoutMs, ctx.bodies).then(async (body) => {
    if (body === null) return;
    if (body === undefined) return sendTooLarge(req, res, ctx.config.current.maxBodyBytes);
    const repeated = repeatedCredential(req.rawHeaders);
    if (repeated !== undefined) return sendError(res, 400, `the request sends the ${repeated} header more than once: send one credential`, "invalid_request_error", "repeated_credential");
    let who: TenantResult;
    try {
      who = await ctx.tenants.resolve(ctx.config.current, req.headers);
      // A key another proxy sharing the config file issued since this one last read it works at once.
      if (!who.ok && who.code === "invalid_virtual_key" && ctx.config.syncIfChanged()) who = await ctx.tenants.resolve(ctx.config.current, req.headers);
    } catch (e) {
      // A budgeted virtual key's spend is read from the store.
      return sendStoreUnavailable(res, ctx.log, e);
    }
    if (!who.ok) {
      return sendError(res, who.status, who.message, who.status === 401 ? "authentication_error" : who.status === 400 ? "invalid_request_error" : "rate_limit_error", who.code, refusalHeaders(who));
    }
    const api = method !== "POST" ? undefined : path === "/v1/chat/completions" ? "chat" : path === "/v1/messages" ? "messages" : path === "/v1/responses" ? "responses" : undefined;
    routes.set(res, api ?? "other");
    if (api !== undefined) {
      // The proxy reads and rewrites these bodies, so it takes them decoded (and sends them on so).
      // Taken from the budget as it is decoded: the decoded body is held beside the raw one.
      const decoded = await decodeBody(body, req.headers["content-encoding"], ctx.config.current.maxBodyBytes, (n) => ctx.bodies.take(res, n));
      if (!decoded.ok) return decoded.status === 503 ? sendBodiesBusy(req, res, ctx.bodies) : sendError(res, decoded.status, decoded.message, "invalid_request_error", decoded.code);
      return handleChat(ctx, req, res, decoded.body, started, who.tenant, target, api);
    }
    return passthrough(ctx, req, res, body, started, who.tenant, target);
  });
}

/** options.allowedHosts, copied (a host's array may change after), or why it is none. */
function hostNames(v: unknown): readonly string[] {
  if (v === undefined) return [];
  let bad: unknown = v;
  try {
    if (Array.isArray(v)) {
      const at = v.findIndex((h) => typeof h !== "string");
      if (at === -1) return [...(v as string[])];
      bad = v[at];
    }
  } catch {
    // A revoked Proxy: said below as what it is.
  }
  throw new ProxyStartError(mustBe("startProxy: options.allowedHosts", "an array of host names", bad));
}

/** The real clock's wait: resolves after `ms`, or at once when the work it races is done. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Starts the proxy; resolves once it listens. */
export async function startProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  // A number or null from an untyped host would start a proxy on every default, or fail inside.
  if (!isObjectArg(options)) throw new ProxyStartError(mustBe("startProxy: options", "an options object", options));
  const allowedHosts = hostNames(options.allowedHosts);
  const logger = options.logger ?? jsonLogger((line) => process.stderr.write(line));
  const opened = ConfigFile.open(options.configFile, options.upstream === undefined ? {} : { upstream: options.upstream }, (r) => {
    logger(r.ok ? { event: "config_reloaded" } : { event: "config_reload_rejected", error: r.error });
  });
  if (!opened.ok) throw new ProxyStartError(opened.error);
  const config = opened.value;
  // Runs on the defaults until an admin update writes the file: said, since a mistyped path looks the same.
  if (options.configFile !== undefined && !existsSync(options.configFile)) logger({ event: "config_file_missing", file: options.configFile, note: "running on the defaults; the first admin update creates the file" });
  let store: ConversationStore;
  const db = options.db ?? (options.stateDir === undefined ? ":memory:" : join(options.stateDir, "proxy.db"));
  try {
    if (options.stateDir !== undefined && options.db === undefined) mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
    store = await openStore(db);
  } catch (e) {
    config.close();
    if (e instanceof MissingDriverError) throw new ProxyStartError(e.message);
    throw new ProxyStartError(`cannot open the state database ${isPostgresUrl(db) ? redactUrl(db) : db}: ${(e as Error).message}`);
  }
  const host = options.host ?? "127.0.0.1";
  const metrics = new Metrics();
  // A virtual key's spend is off by these tokens from now on: said, not dropped in silence.
  store.onLost = (change) => {
    metrics.inc("ptc_proxy_spend_changes_lost_total");
    logger({ event: "spend_change_lost", tenant: `vk-${change.virtualKey}`, tokens: change.tokens, addIf: change.addIf });
  };
  const upstream = new Upstream();
  const now = options.now ?? Date.now;
  const ctx: ProxyContext = {
    config,
    store,
    metrics,
    compactor: new Compactor(metrics, logger, store, options.wait ?? wait),
    upstream,
    log: logger,
    adminToken: options.adminToken || undefined,
    now,
    tenants: new Tenants(now, store),
    life: { draining: false, inFlight: 0 },
    summarizers: new Map(),
    bodies: new BodyBudget(() => config.current.maxInFlightBodyBytes),
    sleep: options.sleep ?? ((ms, signal) => wait(ms, signal ?? new AbortController().signal)),
    hosts: hostPolicy(allowedHosts, host),
    turns: new TurnClock(now),
  };
  let onIdle: (() => void) | undefined;
  // Handlers still running: a reply cut or sent ends its response before its request's record
  // and charge are written, and the store must outlive those writes.
  const handlers = new Set<Promise<void>>();

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    boundRequests();
    ctx.life.inFlight++;
    // Every request is counted once, when it ends, with the status it got ("none": cut before any).
    // On finish when there is one: that is before the client can read the end and scrape /metrics.
    let counted = false;
    const count = () => {
      if (counted) return;
      counted = true;
      const status = res.headersSent ? `${Math.floor(res.statusCode / 100)}xx` : "none";
      metrics.inc("ptc_proxy_requests_total", `route="${routes.get(res) ?? "rejected"}",status="${status}"`);
    };
    res.on("finish", count);
    res.on("close", () => {
      count();
      if (--ctx.life.inFlight === 0) onIdle?.();
    });
    const done = route(ctx, req, res);
    if (done !== undefined) {
      const settled = done.catch((e: unknown) => {
        // A bug, not an expected failure: answer 500 without the stack, and log it.
        logger({ event: "internal_error", error: errorText(e) });
        sendError(res, 500, "internal proxy error", "server_error", "internal_error");
      });
      handlers.add(settled);
      void settled.finally(() => handlers.delete(settled));
      // The handler holds the request's body until it ends, its response closed or not (a client
      // that left while its request compacts): counted until then.
      ctx.bodies.keep(res, settled);
    }
  };
  const server: Server = createServer(handle);
  // Node's own bound on a whole request (requestTimeout, 300 s, checked every 30 s) cut a body that
  // requestBodyTimeoutMs allows longer, and bounds the bodies of paths that never read theirs: it
  // follows the option (the headers' time, then the body's), set again as each request comes, since
  // the option can change while the proxy runs.
  const boundRequests = () => {
    server.requestTimeout = server.headersTimeout + config.current.requestBodyTimeoutMs;
  };
  boundRequests();
  // A client that waits for 100-continue is told 413 (or 503, past maxInFlightBodyBytes) before it
  // sends a body announced over the limit (Node's default answer, 100, had it send all of it, to be refused after).
  server.on("checkContinue", (req: IncomingMessage, res: ServerResponse) => {
    const declared = Number(req.headers["content-length"]);
    if (!(declared > config.current.maxBodyBytes) && !(declared > 0 && !ctx.bodies.fits(declared))) res.writeContinue();
    handle(req, res);
  });
  server.keepAliveTimeout = 65_000;
  const expire = () =>
    store.expire(ctx.now() - config.current.idleTtlSeconds * 1000).then(
      (n) => {
        if (n > 0) logger({ event: "conversations_expired", count: n });
      },
      (e: unknown) => logger({ event: "store_error", error: errorText(e) }),
    );
  await expire();
  // The next run is timed from the end of the last: a slow one (each batch may wait out another
  // process's lock on the file) overlapped the next ones, 11 at once after a second at 100 ms apart.
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void expire().finally(schedule), Math.min(60_000, config.current.idleTtlSeconds * 100));
    timer.unref();
  };
  const stopExpiry = () => {
    stopped = true;
    clearTimeout(timer);
  };
  schedule();
  config.watch(options.watchIntervalMs);

  await new Promise<void>((resolve, reject) => {
    const failed = (e: Error) => {
      // Nothing listens: let go of the store (its connections would keep the process alive) and the config watcher.
      stopExpiry();
      config.close();
      ctx.compactor.close();
      void store.close().finally(() => reject(e));
    };
    server.once("error", failed);
    server.listen(options.port ?? 8787, host, () => {
      server.off("error", failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger({ event: "listening", host, port, upstream: redactUrl(config.current.upstream), admin: ctx.adminToken !== undefined });
  const close = () =>
    new Promise<void>((resolve) => {
      stopExpiry();
      config.close();
      ctx.compactor.close();
      server.close(() => {
        // Bounded: a handler stuck on the store itself (another process's lease) must not hold the close.
        let grace: NodeJS.Timeout | undefined;
        const finished = new Promise<void>((done) => (grace = setTimeout(done, HANDLERS_GRACE_MS)));
        void Promise.race([Promise.allSettled(handlers), finished])
          .then(() => {
            clearTimeout(grace);
            return store.close();
          })
          .then(resolve, resolve);
      });
      server.closeAllConnections();
      upstream.close();
    });
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    context: ctx,
    close,
    async drain(timeoutMs = config.current.drainTimeoutMs) {
      ctx.life.draining = true;
      logger({ event: "draining", inFlight: ctx.life.inFlight });
      // Idle keep-alive connections go now, so their clients reconnect elsewhere; busy ones close after their reply.
      server.closeIdleConnections();
      const requestsDone = new Promise<void>((resolve) => {
        onIdle = resolve;
        if (ctx.life.inFlight === 0) resolve();
      });
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([
        requestsDone.then(() => ctx.compactor.idle()).then(() => true),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      logger(drained ? { event: "drained" } : { event: "drain_timeout", inFlight: ctx.life.inFlight });
      await close();
      return drained;
    },
  };
}
