// A tap on an upstream SSE stream. It reads the usage chunk (for the token budget) and, when the
// proxy asked for usage on the client's behalf, drops that usage-only chunk: many clients index
// choices[0] and fail on a chunk without choices. Everything else passes byte for byte, as soon
// as it arrives; only an incomplete event at the end of a read is held back, so a stream the
// upstream breaks off inside an event never hands the client half an event.

import { SseEventUsageScan } from "./json-usage.js";

export interface StreamUsage {
  promptTokens: number;
  completionTokens: number;
}

const USAGE = Buffer.from('"usage"');
// An event longer than this is not a usage chunk worth holding back: it passes as it is.
const MAX_PENDING = 1 << 20;
// Such an event is still read for its usage, as it passes (a Responses reply's last event carries
// its whole output, generated images included, and its usage after them): keeping it whole for
// that held up to 32 MiB per stream outside any budget. Where its usage may be besides the top level:
const USAGE_PARENTS = ["response", "message"];

/**
 * A finder of event ends in `buf`: each call gives the end of the next event at or after `from`
 * (just past the blank line that ends it), or -1. Lines end in LF, CRLF or a lone CR, as the SSE
 * spec allows (an upstream that ends lines in CR only had every event held back until the stream
 * ended). A blank line's CR at the end of `buf` ends the event when its lines end in lone CRs;
 * after a CRLF it waits for the LF that likely follows. Positions are cached across calls, so
 * each byte is searched once however many events the buffer holds.
 */
function boundaries(buf: Buffer): (from: number) => number {
  let lf = -2;
  let cr = -2;
  return (from) => {
    let lineStart = from;
    let loneCr = false;
    for (;;) {
      if (lf !== -1 && lf < lineStart) lf = buf.indexOf(10, lineStart);
      if (cr !== -1 && cr < lineStart) cr = buf.indexOf(13, lineStart);
      if (lf === -1 && cr === -1) return -1;
      const at = cr !== -1 && (lf === -1 || cr < lf) ? cr : lf;
      let end = at + 1;
      if (at === cr) {
        if (end === buf.length) return at === lineStart && loneCr ? end : -1;
        if (buf[end] === 10) end++;
      }
      if (at === lineStart) return end;
      loneCr = end === at + 1 && at === cr;
      lineStart = end;
    }
  };
}

/** The JSON payload of an event's data lines, or undefined (comments, [DONE], non-JSON). */
function eventJson(text: string): unknown {
  // An event's data lines are joined with LF (the SSE spec), so this reads what a client's parser reads.
  let data: string | undefined;
  for (const line of text.split(/\r\n|\r|\n/)) {
    if (!line.startsWith("data:")) continue;
    const value = line.slice(line[5] === " " ? 6 : 5);
    data = data === undefined ? value : `${data}\n${value}`;
  }
  // JSON may start after whitespace (a second space, an empty first data line): clients parse it.
  if (data === undefined || !data.trimStart().startsWith("{")) return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

export class SseTap {
  usage: StreamUsage | undefined;
  private pending: Buffer = Buffer.alloc(0);
  // An over-long event already on its way to the client, scanned for its usage as it passes.
  private scan: SseEventUsageScan | undefined;

  /** Bytes of the stream the tap holds now: an unfinished event held back (an over-long one is scanned as it passes, not kept). */
  get heldBytes(): number {
    return this.pending.length;
  }

  /** Bytes of held-back events `hold` has taken: the most held at once so far. */
  private counted = 0;

  /**
   * @param strip drop usage-only chunks (the client did not ask for them)
   * @param hold takes `n` more bytes for an unfinished event held back (a BodyBudget's takeReply);
   *   when it refuses, the event passes on unfinished, read for its usage as an over-long one is
   */
  constructor(
    private readonly strip: boolean,
    private readonly hold: (n: number) => boolean = () => true,
  ) {}

  /** Takes a chunk from upstream; returns the bytes to send the client now. */
  push(chunk: Buffer): Buffer {
    const buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let start = 0;
    let out: Buffer[] | undefined;
    let keptFrom = 0;
    // Only events that mention "usage" are decoded; the search runs once per occurrence, not per event.
    let usageAt = buf.indexOf(USAGE);
    const nextBoundary = boundaries(buf);
    for (let end = nextBoundary(0); end !== -1; end = nextBoundary(start)) {
      if (start === 0 && this.scan !== undefined) {
        // The end of an over-long event: already on its way to the client, read here for its usage only.
        this.scan.push(buf.subarray(0, end));
        this.overlongUsage();
        start = end;
        continue;
      }
      if (usageAt !== -1 && usageAt < start) usageAt = buf.indexOf(USAGE, start);
      if (usageAt !== -1 && usageAt < end && this.usageOnly(buf.toString("utf8", start, end)) && this.strip) {
        out ??= [];
        if (start > keptFrom) out.push(buf.subarray(keptFrom, start));
        keptFrom = end;
      }
      start = end;
    }
    // An over-long unterminated event is not held back any further, nor one the budget cannot hold.
    const held = buf.length - start > MAX_PENDING || !this.holds(buf.length - start) ? buf.length : start;
    if (held === buf.length && held > start) {
      if (start > 0 || this.scan === undefined) this.scan = new SseEventUsageScan(USAGE_PARENTS);
      this.scan.push(buf.subarray(start));
    }
    this.pending = held < buf.length ? Buffer.from(buf.subarray(held)) : Buffer.alloc(0);
    if (out === undefined) return buf.subarray(0, held);
    if (held > keptFrom) out.push(buf.subarray(keptFrom, held));
    return Buffer.concat(out);
  }

  /** The rest of the stream when upstream ends (an unterminated last event passes as it is). */
  end(): Buffer {
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    // An over-long last event the stream ended without its blank line.
    if (this.scan !== undefined) this.overlongUsage();
    if (rest.length > 0 && rest.includes(USAGE)) this.usageOnly(rest.toString("utf8"));
    return rest;
  }

  /** Whether `n` bytes may be held back: counted against `hold` past the most held so far. */
  private holds(n: number): boolean {
    if (n <= this.counted) return true;
    if (!this.hold(n - this.counted)) return false;
    this.counted = n;
    return true;
  }

  /** Records the usage of the over-long event scanned, which has ended. */
  private overlongUsage(): void {
    const json = this.scan?.json.usageJson();
    this.scan = undefined;
    if (json !== undefined) this.usageOnly(`data: ${json}`);
  }

  /** Records the usage an event carries; true when the event is nothing but usage. */
  private usageOnly(text: string): boolean {
    type Usage = Record<string, unknown> | null | undefined;
    // Chat chunks carry `usage`, Anthropic's message_start `message.usage`, Responses' response.completed `response.usage`.
    const json = eventJson(text) as { usage?: Usage; message?: { usage?: Usage }; response?: { usage?: Usage }; choices?: unknown } | undefined;
    const u = json?.usage ?? json?.message?.usage ?? json?.response?.usage;
    if (u === undefined || u === null || typeof u !== "object") return false;
    const n = (v: unknown) => (typeof v === "number" ? v : 0);
    if (typeof u.input_tokens === "number" || typeof u.output_tokens === "number") {
      // Anthropic: message_start carries the input, message_delta the output so far. Never usage-only.
      const input = n(u.input_tokens) + n(u.cache_read_input_tokens) + n(u.cache_creation_input_tokens);
      this.usage = { promptTokens: Math.max(this.usage?.promptTokens ?? 0, input), completionTokens: typeof u.output_tokens === "number" ? u.output_tokens : (this.usage?.completionTokens ?? 0) };
      return false;
    }
    this.usage = { promptTokens: n(u.prompt_tokens), completionTokens: n(u.completion_tokens) };
    return !Array.isArray(json?.choices) || json.choices.length === 0;
  }
}
