// Finding the `usage` of a JSON object read in pieces, holding none of it but that member: a
// reply passed on as it comes (forwarded untouched, or one maxInFlightBodyBytes cannot hold, or
// an SSE event too long to hold back) is still charged what the upstream reported.

// A usage object longer than this is no usage: not kept.
const MAX_USAGE_BYTES = 64 << 10;
const QUOTE = 34;
const BACKSLASH = 92;

/**
 * Finds the `usage` member of a JSON object read in pieces, at its top level or in the object of
 * one of its members named in `parents` (a Responses event's `response`, an Anthropic event's
 * `message`). Strings are skipped by search, and only that member's bytes are kept. The last one
 * found wins, as in JSON.parse; a top-level one over a nested one.
 */
export class JsonUsageScan {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The object at depth 2 is the value of a member named in `parents`. */
  private inParent = false;
  private parent = "";
  /** The next string is a member name (at depth 1, or 2 in a parent). */
  private nameNext = false;
  /** The member name being read (at most a few bytes), or undefined when no name is. */
  private name: string | undefined;
  private lastName = "";
  /** The bytes of the `usage` value being read, and the depth of its member; undefined when none is. */
  private value: Buffer[] | undefined;
  private valueDepth = 0;
  private valueBytes = 0;
  private top: string | undefined;
  private nested: string | undefined;
  private bad = false;
  private closed = false;

  constructor(private readonly parents: readonly string[] = []) {}

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
        // A name is kept only as far as it could still be "usage" or a parent: a long one is not copied whole.
        if (this.name !== undefined && this.name.length <= 16) this.name += chunk.toString("latin1", i, Math.min(end, i + 17));
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
      const named = this.depth === 1 || (this.depth === 2 && this.inParent);
      if (c === QUOTE) {
        this.inString = true;
        if (named && this.nameNext) {
          this.name = "";
          this.nameNext = false;
        }
      } else if (c === 123 || c === 91) {
        this.depth++;
        if (this.depth === 1) this.nameNext = true;
        else if (this.depth === 2) {
          this.inParent = c === 123 && this.parents.includes(this.lastName);
          this.parent = this.lastName;
          this.nameNext = this.inParent;
          this.lastName = "";
        }
      } else if (c === 125 || c === 93) {
        if (named) from = this.endValue(chunk, from, i);
        if (this.depth === 1) this.closed = true;
        if (this.depth === 2) this.inParent = false;
        this.depth--;
      } else if (named && c === 44) {
        from = this.endValue(chunk, from, i);
        this.nameNext = true;
      } else if (named && c === 58 && this.lastName === "usage" && this.value === undefined) {
        this.value = [];
        this.valueDepth = this.depth;
        this.valueBytes = 0;
        from = i + 1;
      }
    }
    if (this.value !== undefined && from !== -1) this.keep(chunk.subarray(from));
  }

  /**
   * Once the object has ended well: the usage found, as a JSON object holding it where it was
   * found (`{"usage":…}`, `{"response":{"usage":…}}`), not yet checked for being JSON; else undefined.
   */
  usageJson(): string | undefined {
    if (this.bad || !this.closed) return undefined;
    return this.top ?? this.nested;
  }

  private keep(part: Buffer): void {
    if (this.value === undefined) return;
    this.valueBytes += part.length;
    // Copied: a slice would hold the whole read chunk.
    if (this.valueBytes <= MAX_USAGE_BYTES) this.value.push(Buffer.from(part));
  }

  /** Ends the `usage` value being read at `at`, when one at this depth is; the chunk position to keep from. */
  private endValue(chunk: Buffer, from: number, at: number): number {
    this.lastName = "";
    if (this.value === undefined || this.valueDepth !== this.depth) return from;
    this.keep(chunk.subarray(from, at));
    // `"usage": null` (every chunk of an OpenAI stream but the last) is no usage, as `??` reads it.
    const raw = this.valueBytes <= MAX_USAGE_BYTES ? Buffer.concat(this.value).toString("utf8").trim() : undefined;
    const text = raw === "null" ? undefined : raw;
    if (text !== undefined && this.depth === 1) this.top = `{"usage":${text}}`;
    else if (text !== undefined) this.nested = `{${JSON.stringify(this.parent)}:{"usage":${text}}}`;
    this.value = undefined;
    return -1;
  }
}

/**
 * The JSON of an SSE event's data lines fed in pieces from the event's start (lines end in LF,
 * CRLF or a lone CR; a data line's value starts after one optional space, and lines are joined
 * with LF as the spec has it), scanned by a JsonUsageScan.
 */
export class SseEventUsageScan {
  readonly json: JsonUsageScan;
  /** The field name of the line being read, until its colon; undefined past it. */
  private field: string | undefined = "";
  private inData = false;
  private skipSpace = false;
  private afterCr = false;
  private dataLines = 0;

  constructor(parents: readonly string[]) {
    this.json = new JsonUsageScan(parents);
  }

  push(chunk: Buffer): void {
    const n = chunk.length;
    for (let i = 0; i < n; ) {
      const c = chunk[i];
      if (this.afterCr) {
        this.afterCr = false;
        if (c === 10) {
          i++;
          continue;
        }
      }
      if (c === 10 || c === 13) {
        this.afterCr = c === 13;
        this.field = "";
        this.inData = false;
        i++;
        continue;
      }
      if (this.inData) {
        if (this.skipSpace) {
          this.skipSpace = false;
          if (c === 32) {
            i++;
            continue;
          }
        }
        let end = chunk.indexOf(10, i);
        const cr = chunk.indexOf(13, i);
        if (cr !== -1 && (end === -1 || cr < end)) end = cr;
        if (end === -1) end = n;
        this.json.push(chunk.subarray(i, end));
        i = end;
        continue;
      }
      if (this.field !== undefined) {
        if (c === 58) {
          if (this.field === "data") {
            if (this.dataLines++ > 0) this.json.push(LF);
            this.inData = true;
            this.skipSpace = true;
          }
          this.field = undefined;
        } else if (this.field.length <= 5) this.field += String.fromCharCode(c);
      }
      i++;
    }
  }
}

const LF = Buffer.from("\n");
