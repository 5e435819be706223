// `ptc proxy`: an OpenAI-compatible server in front of an upstream one. Chat completions are
// compacted per conversation before forwarding; every other path, header and body goes through
// untouched. Health, readiness and metrics are open; the admin plane needs a token.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ADMIN_PREFIX, handleAdmin } from "./admin.js";
import { handleChat } from "./chat.js";
import { ConfigFile } from "./config-file.js";
import { redactUrl } from "./config.js";
import { Compactor } from "./compactor.js";
import { readBody, sendJson, type ProxyContext } from "./context.js";
import { sendError, upstreamErrorBody } from "./errors.js";
import { jsonLogger, type Logger } from "./log.js";
import { Metrics } from "./metrics.js";
import { MissingSqliteError, SqliteStore, type ConversationStore } from "./store.js";
import { responseHeaders, Upstream, upstreamBase } from "./upstream.js";

export interface ProxyOptions {
  /** Upstream base URL; overrides the config file's. */
  readonly upstream?: string;
  /** Default 127.0.0.1: the proxy forwards credentials, so it listens on loopback unless told otherwise. */
  readonly host?: string;
  /** Default 8787; 0 picks a free port. */
  readonly port?: number;
  /** JSON config file: read at start, rewritten by API updates, reloaded when edited. */
  readonly configFile?: string;
  /** SQLite file for conversation state; default ":memory:" (nothing survives a restart). */
  readonly db?: string;
  /** Token for the admin routes; without it they are disabled. */
  readonly adminToken?: string;
  /** Default: JSON lines on stderr. */
  readonly logger?: Logger;
  /** Poll interval of the config file watcher, ms. Default 1000. */
  readonly watchIntervalMs?: number;
}

export interface RunningProxy {
  /** http://host:port */
  readonly url: string;
  readonly port: number;
  readonly context: ProxyContext;
  close(): Promise<void>;
}

/** Why the proxy could not start, e.g. an invalid config file. */
export class ProxyStartError extends Error {
  override readonly name = "ProxyStartError";
}

async function passthrough(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse, body: Buffer, started: number): Promise<void> {
  const config = ctx.config.current;
  const base = upstreamBase(config);
  if (base === undefined) return sendError(res, 502, "the proxy has no upstream configured", "upstream_error", "no_upstream");
  const result = await ctx.upstream.send(base, req.method ?? "GET", req.url ?? "/", req.headers, body, config.upstreamTimeoutMs);
  if (!result.ok) {
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", `kind="${result.kind}"`);
    return sendError(res, result.kind === "timeout" ? 504 : 502, result.message, "upstream_error", result.kind === "timeout" ? "upstream_timeout" : "upstream_unreachable");
  }
  const status = result.response.statusCode ?? 502;
  ctx.metrics.inc("ptc_proxy_requests_total", `route="other",status="${Math.floor(status / 100)}xx"`);
  if (status >= 400 && !String(result.response.headers["content-type"] ?? "").includes("json")) {
    // Error pages (HTML from a load balancer, plain text) become OpenAI-style errors.
    const chunks: Buffer[] = [];
    for await (const c of result.response) chunks.push(c as Buffer);
    const text = upstreamErrorBody(status, Buffer.concat(chunks).toString("utf8"));
    res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
    return;
  }
  res.writeHead(status, responseHeaders(result.response.headers, true));
  result.response.pipe(res);
  await new Promise<void>((resolve) => res.on("close", resolve));
  ctx.metrics.observe("ptc_proxy_upstream_seconds", performance.now() - started);
}

function route(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> | void {
  const started = performance.now();
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  const path = q === -1 ? url : url.slice(0, q);
  const method = req.method ?? "GET";
  if (method === "GET" && path === "/healthz") return sendJson(res, 200, { status: "ok" });
  if (method === "GET" && path === "/readyz") {
    const ready = ctx.store.open;
    const store = ready ? "open" : ctx.store.writeError === undefined ? "closed" : `write failing: ${ctx.store.writeError}`;
    return sendJson(res, ready ? 200 : 503, { status: ready ? "ready" : "not ready", store, config: "valid" });
  }
  if (method === "GET" && path === "/metrics") {
    const body = ctx.metrics.render({ ptc_proxy_conversations: ctx.store.list().length });
    res.writeHead(200, { "content-type": "text/plain; version=0.0.4", "content-length": Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  if (path.startsWith(ADMIN_PREFIX)) return handleAdmin(ctx, req, res, path.slice(ADMIN_PREFIX.length));
  return readBody(req, ctx.config.current.maxBodyBytes).then((body) => {
    if (body === undefined) {
      ctx.metrics.inc("ptc_proxy_requests_total", 'route="rejected",status="4xx"');
      // The rest of the body is not read: close the connection rather than drain it.
      res.setHeader("connection", "close");
      sendError(res, 413, `the request body is larger than the limit of ${ctx.config.current.maxBodyBytes} bytes`, "invalid_request_error", "body_too_large");
      res.on("finish", () => req.destroy());
      return;
    }
    if (method === "POST" && /^\/(?:v1\/)?chat\/completions$/.test(path)) return handleChat(ctx, req, res, body, started);
    return passthrough(ctx, req, res, body, started);
  });
}

/** Starts the proxy; resolves once it listens. */
export async function startProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  const logger = options.logger ?? jsonLogger((line) => process.stderr.write(line));
  const opened = ConfigFile.open(options.configFile, options.upstream === undefined ? {} : { upstream: options.upstream }, (r) => {
    logger(r.ok ? { event: "config_reloaded" } : { event: "config_reload_rejected", error: r.error });
  });
  if (!opened.ok) throw new ProxyStartError(opened.error);
  const config = opened.value;
  let store: ConversationStore;
  try {
    store = new SqliteStore(options.db ?? ":memory:");
  } catch (e) {
    if (e instanceof MissingSqliteError) throw new ProxyStartError(e.message);
    throw new ProxyStartError(`cannot open the state database ${options.db}: ${(e as Error).message}`);
  }
  const metrics = new Metrics();
  const upstream = new Upstream();
  const ctx: ProxyContext = { config, store, metrics, compactor: new Compactor(metrics, logger), upstream, log: logger, adminToken: options.adminToken || undefined, now: Date.now };

  const server: Server = createServer((req, res) => {
    const done = route(ctx, req, res);
    if (done !== undefined) {
      done.catch((e: unknown) => {
        // A bug, not an expected failure: answer 500 without the stack, and log it.
        logger({ event: "internal_error", error: e instanceof Error ? e.message : String(e) });
        sendError(res, 500, "internal proxy error", "server_error", "internal_error");
      });
    }
  });
  server.keepAliveTimeout = 65_000;
  const expire = () => {
    const n = store.expire(ctx.now() - config.current.idleTtlSeconds * 1000);
    if (n > 0) logger({ event: "conversations_expired", count: n });
  };
  expire();
  const timer = setInterval(expire, Math.min(60_000, config.current.idleTtlSeconds * 100));
  timer.unref();
  config.watch(options.watchIntervalMs);

  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8787, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger({ event: "listening", host, port, upstream: redactUrl(config.current.upstream), admin: ctx.adminToken !== undefined });
  return {
    url: `http://${host.includes(":") ? `[${host}]` : host}:${port}`,
    port,
    context: ctx,
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(timer);
        config.close();
        server.close(() => {
          store.close();
          resolve();
        });
        server.closeAllConnections();
        upstream.close();
      }),
  };
}
