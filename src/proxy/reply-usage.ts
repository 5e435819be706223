// The usage a reply reports, read as its bytes pass, holding none of it but the usage itself: a
// reply passed on rather than held whole (forwarded untouched, or one maxInFlightBodyBytes cannot
// hold) is still charged what the upstream reported.
import type { IncomingHttpHeaders } from "node:http";
import type { Transform } from "node:stream";
import { messagesUsage } from "./anthropic.js";
import { inflateStages } from "./context.js";
import { SseTap, type StreamUsage } from "./sse.js";

/**
 * The usage of a parsed reply: OpenAI's shape (chat, completions, embeddings: prompt_tokens), or
 * Anthropic's and the Responses API's (input_tokens); undefined when it has none.
 */
export function usageOf(parsed: object): StreamUsage | undefined {
  const u = (parsed as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null }).usage;
  if (typeof u !== "object" || u === null || typeof u.prompt_tokens !== "number") return messagesUsage(parsed);
  return { promptTokens: u.prompt_tokens, completionTokens: typeof u.completion_tokens === "number" ? u.completion_tokens : 0 };
}

// A usage object longer than this is no usage: not kept.
const MAX_USAGE_BYTES = 64 << 10;
const QUOTE = 34;
const BACKSLASH = 92;

/**
 * Finds the top-level `usage` member of a JSON object read in pieces: strings are skipped by
 * search, and only that member's bytes are kept. Its usage is read only when the object ended
 * well (as JSON.parse of the whole would have it; the last `usage` wins, as there).
 */
export class JsonUsageScan {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The next string at depth 1 is a member name. */
  private nameNext = false;
  /** The member name being read (at most a few bytes), or undefined when no name is. */
  private name: string | undefined;
  private lastName = "";
  /** The bytes of the `usage` value being read, or undefined. */
  private value: Buffer[] | undefined;
  private valueBytes = 0;
  private found: Buffer | undefined;
  private bad = false;
  private closed = false;

  push(chunk: Buffer): void {
    if (this.bad) return;
    let from = this.value === undefined ? -1 : 0;
    let quote = -2;
    let backslash = -2;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false;
          if (this.name !== undefined) this.name = "\\";
          continue;
        }
        // Search to the next quote or backslash, each found once per chunk.
        if (quote !== -1 && quote < i) quote = chunk.indexOf(QUOTE, i);
        if (backslash !== -1 && backslash < i) backslash = chunk.indexOf(BACKSLASH, i);
        const at = backslash !== -1 && (quote === -1 || backslash < quote) ? backslash : quote;
        const end = at === -1 ? n : at;
        // A name is kept only as far as it could still be "usage": a long one is not copied whole.
        if (this.name !== undefined && this.name.length <= 8) this.name += chunk.toString("latin1", i, Math.min(end, i + 9));
        if (at === -1) break;
        i = at;
        if (at === backslash) this.escaped = true;
        else {
          this.inString = false;
          if (this.name !== undefined) {
            this.lastName = this.name;
            this.name = undefined;
          }
        }
        continue;
      }
      const c = chunk[i];
      if (c === 32 || c === 10 || c === 13 || c === 9) continue;
      if (this.closed || (this.depth === 0 && c !== 123)) {
        this.bad = true;
        return;
      }
      if (c === QUOTE) {
        this.inString = true;
        if (this.depth === 1 && this.nameNext) {
          this.name = "";
          this.nameNext = false;
        }
      } else if (c === 123 || c === 91) {
        if (++this.depth === 1) this.nameNext = true;
      } else if (c === 125 || c === 93) {
        if (this.depth === 1) {
          from = this.endValue(chunk, from, i);
          this.closed = true;
        }
        this.depth--;
      } else if (this.depth === 1 && c === 44) {
        from = this.endValue(chunk, from, i);
        this.nameNext = true;
      } else if (this.depth === 1 && c === 58 && this.lastName === "usage" && this.value === undefined) {
        this.value = [];
        this.valueBytes = 0;
        from = i + 1;
      }
    }
    if (this.value !== undefined && from !== -1) this.keep(chunk.subarray(from));
  }

  /** The usage, once the object has ended. */
  usage(): StreamUsage | undefined {
    if (this.bad || !this.closed || this.found === undefined) return undefined;
    try {
      const parsed: unknown = JSON.parse(`{"usage":${this.found.toString("utf8")}}`);
      return usageOf(parsed as object);
    } catch {
      return undefined;
    }
  }

  private keep(part: Buffer): void {
    if (this.value === undefined) return;
    this.valueBytes += part.length;
    // Copied: a slice would hold the whole read chunk.
    if (this.valueBytes <= MAX_USAGE_BYTES) this.value.push(Buffer.from(part));
  }

  /** Ends the `usage` value being read at `at` (if one is); the next chunk position to keep from. */
  private endValue(chunk: Buffer, from: number, at: number): number {
    this.lastName = "";
    if (this.value === undefined) return from;
    this.keep(chunk.subarray(from, at));
    this.found = this.valueBytes <= MAX_USAGE_BYTES ? Buffer.concat(this.value) : undefined;
    this.value = undefined;
    return -1;
  }
}

/**
 * The usage of a reply fed to it piece by piece as it came from the upstream (its content-encoding
 * undone here, the pieces themselves passed on as they came): from its usage event when it is a
 * stream, else from the top-level `usage` of its JSON body. Holds nothing of the reply but that.
 */
export class ReplyUsage {
  private readonly sse: SseTap | undefined;
  private readonly json: JsonUsageScan | undefined;
  private readonly stages: Transform[] | undefined;
  private readonly inflated: Promise<void> | undefined;
  /** A coding this Node cannot undo: the usage is not read. */
  private readonly unreadable: boolean;

  constructor(headers: IncomingHttpHeaders) {
    const stream = String(headers["content-type"] ?? "").includes("text/event-stream");
    this.sse = stream ? new SseTap(false) : undefined;
    this.json = stream ? undefined : new JsonUsageScan();
    const encoding = headers["content-encoding"];
    this.stages = inflateStages(encoding);
    this.unreadable = this.stages === undefined && String(encoding ?? "").split(",").some((c) => !["", "identity"].includes(c.trim().toLowerCase()));
    const stages = this.stages;
    if (stages !== undefined) {
      for (let i = 1; i < stages.length; i++) stages[i - 1].pipe(stages[i]);
      const last = stages[stages.length - 1];
      last.on("data", (c: Buffer) => this.read(c));
      // A reply that does not inflate counts what it reported before the bad bytes.
      this.inflated = new Promise((done) => {
        last.on("end", done);
        for (const s of stages) s.on("error", () => done());
      });
    }
  }

  push(chunk: Buffer): void {
    if (this.stages !== undefined) this.stages[0].write(chunk);
    else if (!this.unreadable) this.read(chunk);
  }

  /** The reply ended whole: its usage, undefined when it reports none, "unread" when its coding cannot be undone. */
  async end(): Promise<StreamUsage | undefined | "unread"> {
    if (this.unreadable) return "unread";
    this.stages?.[0].end();
    await this.inflated;
    this.sse?.end();
    return this.sse?.usage ?? this.json?.usage();
  }

  /** The reply was cut: what a stream reported before it broke (a JSON body cut reports nothing). */
  cut(): StreamUsage | undefined {
    for (const s of this.stages ?? []) s.destroy();
    return this.sse?.usage;
  }

  private read(chunk: Buffer): void {
    if (this.sse !== undefined) this.sse.push(chunk);
    else this.json?.push(chunk);
  }
}
