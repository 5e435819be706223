// What every route handler shares: the live configuration, the store, the metrics, the
// compactor, the upstream connection pool and the logger. Also the small helpers every route
// uses to read a body under the size limit and to answer with JSON.
import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline, type Readable, type Transform } from "node:stream";
import zlib from "node:zlib";
import type { ConfigFile } from "./config-file.js";
import { sendError } from "./errors.js";
import type { Compactor } from "./compactor.js";
import type { HostPolicy } from "./hosts.js";
import type { Llm } from "../llm/types.js";
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
  /**
   * Summarizer clients by model, URL, key and timeout, kept across requests: what a server refused
   * once (a reasoning model's temperature) is not asked again on every summary.
   */
  readonly summarizers: Map<string, Llm>;
  /** The Host names and browser origins answered (hosts.ts). */
  readonly hosts: HostPolicy;
  /** Bytes of request bodies (and whole replies read before answering) held by requests in flight, against maxInFlightBodyBytes. */
  readonly bodies: BodyBudget;
  /** When each request on a conversation arrived, in this process's order (a record's `turnAt`). */
  readonly turns: TurnClock;
}

/**
 * Arrival stamps for a conversation's requests (its record's `turnAt`): past the turn stored, and
 * past the last stamp this process gave it, so two requests arriving in one millisecond are told
 * apart by their order here rather than by which reply finishes last. Only stamps not yet behind
 * the clock are kept (an older one decides nothing): a few per millisecond's conversations.
 */
export class TurnClock {
  private readonly last = new Map<string, number>();
  // Pruned when the map reaches this size, then set to twice what is left: on a replica whose clock
  // is behind, stamps stay ahead of it and are kept, and a scan on every arrival would cost O(n).
  static readonly MIN_PRUNE = 1024;
  private pruneAt = TurnClock.MIN_PRUNE;

  constructor(private readonly now: () => number) {}

  /** The stamp of a request on `id` arriving now, whose stored turn is `turnAt`. */
  arrive(id: string, turnAt: number | undefined): number {
    const now = this.now();
    const stamp = Math.max(now, (turnAt ?? -Infinity) + 1, (this.last.get(id) ?? -Infinity) + 1);
    if (this.last.size >= this.pruneAt) {
      for (const [k, v] of this.last) if (v < now) this.last.delete(k);
      this.pruneAt = Math.max(TurnClock.MIN_PRUNE, 2 * this.last.size);
    }
    this.last.set(id, stamp);
    return stamp;
  }

  /** How many conversations' stamps are kept (tests). */
  get size(): number {
    return this.last.size;
  }
}

/** A request's bytes in a BodyBudget, and how many things still hold them (its response, work that outlives it). */
interface Holding {
  bytes: number;
  holders: number;
  /** Its response is one of the holders (from its first bytes until it closes). */
  response: boolean;
}

/**
 * The bytes of request bodies the proxy holds, as read and again decoded, against a total
 * (maxInFlightBodyBytes): maxBodyBytes bounds each body only, and 16 concurrent bodies of 30 MB
 * took well over 1 GB of heap once parsed. A request's bytes are given back once its response has
 * closed (answered, refused, or the client gone) and nothing `keep` named still holds them: its
 * handler, a compaction that goes on past the deadline. A request is always let in while no other
 * holds any, so a body within maxBodyBytes is never refused for the total alone.
 */
export class BodyBudget {
  used = 0;
  private readonly held = new WeakMap<ServerResponse, Holding>();
  /** Bytes of replies read whole, by the response they are for. */
  private readonly replies = new WeakMap<ServerResponse, number>();
  constructor(private readonly max: () => number) {}

  get limit(): number {
    return this.max();
  }

  /** Whether a request holding nothing yet would be let in with `n` bytes. */
  fits(n: number): boolean {
    return this.used === 0 || this.used + n <= this.limit;
  }

  /** Takes `n` bytes for the request of `res`; false (nothing taken) when that would pass the total while other requests hold bytes. */
  take(res: ServerResponse, n: number): boolean {
    let h = this.held.get(res);
    if (this.used > (h?.bytes ?? 0) && this.used + n > this.limit) return false;
    if (h === undefined) this.held.set(res, (h = { bytes: 0, holders: 0, response: false }));
    if (!h.response && !res.closed) {
      const holding = h;
      holding.response = true;
      holding.holders++;
      res.once("close", () => this.release(holding));
    }
    // Nothing to give back to: the response has closed and nothing else holds the request.
    if (h.holders === 0) return true;
    this.used += n;
    h.bytes += n;
    return true;
  }

  /**
   * Takes `n` bytes of the reply read whole for `res` (a chat completion read before it is
   * answered), as `take` does, but apart from its request's body: given back when `res` closes,
   * whatever outlives the reply (a compaction past the deadline holds the body, not the reply).
   */
  takeReply(res: ServerResponse, n: number): boolean {
    const own = (this.held.get(res)?.bytes ?? 0) + (this.replies.get(res) ?? 0);
    if (this.used > own && this.used + n > this.limit) return false;
    if (res.closed) return true;
    const had = this.replies.get(res);
    if (had === undefined) {
      res.once("close", () => {
        this.used -= this.replies.get(res) ?? 0;
        this.replies.delete(res);
      });
    }
    this.replies.set(res, (had ?? 0) + n);
    this.used += n;
    return true;
  }

  /** Gives back `n` bytes takeReply took for `res` (a reply read and dropped, such as a 429 a retry replaces). */
  giveReply(res: ServerResponse, n: number): void {
    const had = this.replies.get(res);
    if (had === undefined) return;
    const back = Math.min(had, n);
    this.replies.set(res, had - back);
    this.used -= back;
  }

  /**
   * Keeps the bytes of `res`'s request counted until `until` settles, whether or not its response
   * has closed by then: work that outlives the reply (a compaction past the deadline, a handler
   * still writing its record) holds the body in memory all the same. Counted again when they were
   * given back already.
   */
  keep(res: ServerResponse, until: Promise<unknown>): void {
    let h = this.held.get(res);
    if (h === undefined) this.held.set(res, (h = { bytes: 0, holders: 0, response: false }));
    if (h.holders++ === 0) this.used += h.bytes;
    const holding = h;
    const release = () => this.release(holding);
    void until.then(release, release);
  }

  private release(h: Holding): void {
    if (--h.holders === 0) this.used -= h.bytes;
  }
}

/**
 * Answers 503 with retry-after for a request whose body would pass the total held
 * (BodyBudget), and closes the connection: the rest of its body is not read.
 */
export function sendBodiesBusy(req: IncomingMessage, res: ServerResponse, budget: BodyBudget): void {
  res.setHeader("connection", "close");
  sendError(res, 503, `the proxy holds as many request bodies as it may at once (maxInFlightBodyBytes, ${budget.limit} bytes): retry shortly`, "server_error", "body_budget_exceeded", { "retry-after": "1" });
  res.on("finish", () => req.destroy());
}

/**
 * The request body, undefined as soon as it is larger than `limit` bytes (the caller answers 413), or
 * null when there is nobody left to answer: the client went away before sending all of it, or it
 * did not send all of it within `timeoutMs` (answered here: 408, and the connection closed, since
 * the rest of the body is never read), or `budget` could not hold it (answered here: 503). Without
 * the time bound, a client that sent headers and part of a body held its connection and an
 * in-flight slot until Node's 300 s request timeout.
 */
export function readBody(req: IncomingMessage, res: ServerResponse, limit: number, timeoutMs: number, budget: BodyBudget): Promise<Buffer | undefined | null> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve(undefined);
  // Refused before any of it is read when its declared length does not fit now; then taken as it
  // arrives, so a slow sender holds only what it sent: taking a declared 32 MB at once let four
  // connections that sent a byte each hold the whole total (and every other body out) for
  // requestBodyTimeoutMs.
  if (declared > 0 && !budget.fits(declared)) {
    sendBodiesBusy(req, res, budget);
    return Promise.resolve(null);
  }
  return new Promise((resolve) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const timer = setTimeout(() => {
      chunks = [];
      over = true;
      sendErrorAndClose(req, res, 408, `the request body did not arrive within ${timeoutMs} ms`, "request_body_timeout");
      resolve(null);
    }, timeoutMs);
    req.on("data", (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size <= limit) {
        if (!budget.take(res, chunk.length)) {
          over = true;
          chunks = [];
          clearTimeout(timer);
          sendBodiesBusy(req, res, budget);
          return resolve(null);
        }
        return void chunks.push(chunk);
      }
      // Refused now, not when the body ends: a chunked one has no length to refuse it by, and may never end.
      over = true;
      chunks = [];
      clearTimeout(timer);
      resolve(undefined);
    });
    req.on("end", () => {
      clearTimeout(timer);
      if (!over) resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    req.on("close", () => clearTimeout(timer));
    req.on("error", () => {
      clearTimeout(timer);
      resolve(null);
    });
  });
}

/**
 * Answers an error for a request whose body is not (all) read, and closes the connection: the
 * rest of the body (a gigabyte announced) is never read, where a kept-alive connection would drain it.
 */
export function sendErrorAndClose(req: IncomingMessage, res: ServerResponse, status: number, message: string, code: string): void {
  res.setHeader("connection", "close");
  sendError(res, status, message, "invalid_request_error", code);
  res.on("finish", () => req.destroy());
}

/** Answers 413 for a body `readBody` found over `limit`. */
export const sendTooLarge = (req: IncomingMessage, res: ServerResponse, limit: number): void => sendErrorAndClose(req, res, 413, `the request body is larger than the limit of ${limit} bytes`, "body_too_large");

/**
 * The first transfer coding of a request that is neither chunked nor identity, or undefined.
 * Node undoes only chunked: the body of "gzip, chunked" would be read, and forwarded without its
 * coding, as gzip bytes (RFC 9112 6.1: such a request is answered 501).
 */
export function unsupportedTransferCoding(te: string | undefined): string | undefined {
  if (te === undefined) return undefined;
  for (const part of te.split(",")) {
    const coding = part.trim().toLowerCase();
    if (coding !== "chunked" && coding !== "identity") return coding;
  }
  return undefined;
}

// zstd (what Codex sends) where this Node's zlib has it (22.15 and later).
const zstd = (zlib as unknown as { createZstdDecompress?: () => Transform }).createZstdDecompress;
const INFLATE: Record<string, () => Transform> = { gzip: zlib.createGunzip, "x-gzip": zlib.createGunzip, deflate: zlib.createInflate, br: zlib.createBrotliDecompress, ...(zstd === undefined ? {} : { zstd }) };

/** The codings of a `content-encoding` header, lowercase, in the order they are undone (last first). */
function contentCodings(encoding: string | string[] | undefined): string[] {
  return String(encoding ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity")
    .reverse();
}

/** `head`, past the limit (413): what was decoded within it (an error page is shown by its start). */
export type DecodedBody = { ok: true; body: Buffer } | { ok: false; status: 400 | 413 | 415 | 503; message: string; code: string; head?: Buffer };

/**
 * A request body as the client wrote it before its `content-encoding` (codings undone last to
 * first), inflated to at most `limit` bytes: a small compressed body cannot grow past the limit.
 * Each decoded piece is offered to `take` as it comes out, and decoding stops (503) at the first it
 * refuses: a body of 32 KB that inflates to 32 MB is held back by a BodyBudget before it is
 * allocated, not after, so many such bodies at once cannot pass the budget.
 */
export function decodeBody(body: Buffer, encoding: string | string[] | undefined, limit: number, take: (n: number) => boolean = () => true): Promise<DecodedBody> {
  const codings = contentCodings(encoding);
  const stages: Transform[] = [];
  for (const coding of codings) {
    const inflate = INFLATE[coding] as (() => Transform) | undefined;
    if (inflate === undefined) return Promise.resolve({ ok: false, status: 415, message: `the request body's content-encoding ${JSON.stringify(coding)} is not supported (use ${Object.keys(INFLATE).join(", ")} or none)`, code: "unsupported_content_encoding" });
    stages.push(inflate());
  }
  const last = stages.at(-1);
  if (last === undefined) return Promise.resolve({ ok: true, body });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (result: DecodedBody) => {
      if (done) return;
      done = true;
      for (const stage of stages) stage.destroy();
      resolve(result);
    };
    stages.forEach((stage, i) => {
      stage.on("error", (e) => finish({ ok: false, status: 400, message: `the request body is not valid ${codings[i]} (${e.message})`, code: "invalid_content_encoding" }));
      if (i + 1 < stages.length) stage.pipe(stages[i + 1]);
    });
    last.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return finish({ ok: false, status: 413, message: `the request body is larger than the limit of ${limit} bytes once decoded`, code: "body_too_large", head: Buffer.concat([...chunks, chunk.subarray(0, chunk.length - (size - limit))]) });
      if (!take(chunk.length)) return finish({ ok: false, status: 503, message: "the request body does not fit in what the proxy may hold at once once decoded", code: "body_budget_exceeded" });
      chunks.push(chunk);
    });
    last.on("end", () => finish({ ok: true, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
    stages[0].end(body);
  });
}

/** The inflaters that undo a `content-encoding`, last coding first, or undefined when it has none or one this Node cannot undo. */
export function inflateStages(encoding: string | string[] | undefined): Transform[] | undefined {
  const codings = contentCodings(encoding);
  if (codings.length === 0 || undecodableCoding(encoding) !== undefined) return undefined;
  return codings.map((c) => INFLATE[c]());
}

/** The first coding of a reply's `content-encoding` that this Node cannot undo as the reply passes, if any. */
export function undecodableCoding(encoding: string | string[] | undefined): string | undefined {
  return encoding === undefined ? undefined : contentCodings(encoding).find((c) => !(c in INFLATE));
}

/**
 * A stream's bytes with its `content-encoding` undone (codings last to first), or undefined when
 * it has none or one this Node cannot undo (then it passes as it came). An error or an early end
 * of `source` reaches the returned stream as an error.
 */
export function decodedStream(source: Readable, encoding: string | string[] | undefined): Readable | undefined {
  const stages = inflateStages(encoding);
  if (stages === undefined) return undefined;
  // The last stage carries the error; nothing else needs the callback.
  pipeline([source, ...stages], () => {});
  return stages[stages.length - 1];
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}
