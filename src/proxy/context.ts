// What every route handler shares: the live configuration, the store, the metrics, the
// compactor, the upstream connection pool and the logger. Also the small helpers every route
// uses to read a body under the size limit and to answer with JSON.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ConfigFile } from "./config-file.js";
import type { Compactor } from "./compactor.js";
import type { Logger } from "./log.js";
import type { Metrics } from "./metrics.js";
import type { ConversationStore } from "./store.js";
import type { Tenants } from "./tenancy.js";
import type { Upstream } from "./upstream.js";

export interface ProxyContext {
  readonly config: ConfigFile;
  readonly store: ConversationStore;
  readonly metrics: Metrics;
  readonly compactor: Compactor;
  readonly upstream: Upstream;
  readonly log: Logger;
  /** Without one, the admin routes are disabled. */
  readonly adminToken: string | undefined;
  readonly now: () => number;
  readonly tenants: Tenants;
  /** Waits between retries; tests pass their own. */
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Requests being answered, and whether the proxy is draining (it takes no new work then). */
  readonly life: { draining: boolean; inFlight: number };
}

/** The request body, or undefined when it is larger than `limit` bytes (the caller answers 413). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) over = true;
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(over ? undefined : chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
