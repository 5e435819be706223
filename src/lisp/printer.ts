// EDN printing with Clojure's `pr-str` and `str` rules, plus a bounded sample printer
// (at most N items per collection and M characters overall, saying what was cut).
import { Map as IMap, Set as ISet } from "ptc-immutable";
import { nestedTooDeep } from "./errors.js";
import { CHUNK, STACK_SAFE_DEPTH } from "./limits.js";
import { cutPoint } from "./cuts.js";
import { isStandIn } from "./stand-in.js";
import { Fn, Keyword, LFloat, Reduced, Regex, Var, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

export interface PrintOptions {
  /** Strings quoted and escaped (pr-str) or raw at the top level (str). Default true. */
  readably?: boolean;
  /** Items shown per collection before `...`. */
  maxItems?: number;
  /** Characters before the output is cut with `...`. */
  maxChars?: number;
  /** Collection nesting shown before `...`. */
  maxDepth?: number;
  /** Append "(N items, showing first K)" when a top-level collection is cut. Default true. */
  note?: boolean;
}

/** Thrown by `printChecked` when output would exceed its hard limit. */
export class PrintOverflow {
  constructor(readonly length: number) {}
}

function formatNumber(x: number | LFloat): string {
  if (typeof x !== "number") return formatFloat(x.v);
  if (Number.isInteger(x)) return String(x);
  return formatFloat(x);
}

export function formatFloat(x: number): string {
  if (Number.isNaN(x)) return "##NaN";
  if (x === Infinity) return "##Inf";
  if (x === -Infinity) return "##-Inf";
  if (Object.is(x, -0)) return "-0.0";
  if (x === 0) return "0.0";
  // As Clojure prints (Java's Double.toString), with JS's shortest digits: plain from 10^-3 up
  // to 10^7 (where JS writes no exponent either), else d.dddE±n (12345678.9 is 1.23456789E7).
  const a = Math.abs(x);
  if (a >= 1e-3 && a < 1e7) {
    const s = String(x);
    return s.includes(".") ? s : s + ".0";
  }
  const s = x.toExponential();
  const e = s.indexOf("e");
  const mantissa = s.slice(0, e);
  return (mantissa.includes(".") ? mantissa : mantissa + ".0") + "E" + (s[e + 1] === "+" ? s.slice(e + 2) : s.slice(e + 1));
}

const ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f" };

/** A regex's source as `#"..."` shows it: only its quotes escaped. */
export function regexText(source: string): string {
  return source.replace(/"/g, '\\"');
}

// Quotes, backslashes, control characters and half of a surrogate pair (host text cut inside an
// emoji): raw, that half is text no UTF-8 output holds and a provider's JSON parser refuses; as
// an escape (`\ud83d`, as JSON writes it) it reads back as the same string.
// eslint-disable-next-line no-control-regex
const TO_ESCAPE = /["\\\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const escaped = (s: string): string => s.replace(TO_ESCAPE, (c) => ESCAPES[c] ?? "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

/**
 * s in quotes, escaped. A long text is escaped a chunk at a time: V8's replace over the whole of it
 * kept every match in one array, and 2^27 quotes aborted the process. Past `most` characters it
 * stops with PrintOverflow (at least that many): joined, the text could pass the engine's longest.
 */
export function quoteString(s: string, most = Infinity): string {
  if (s.length <= CHUNK) return '"' + escaped(s) + '"';
  const parts = ['"'];
  let length = 1;
  for (let i = 0; i < s.length; ) {
    let end = Math.min(i + CHUNK, s.length);
    // Never between the halves of a pair: each half would be escaped as a lone one.
    const c = s.charCodeAt(end - 1);
    if (end < s.length && c >= 0xd800 && c <= 0xdbff) end++;
    const part = escaped(s.slice(i, end));
    parts.push(part);
    length += part.length;
    if (length > most) throw new PrintOverflow(length);
    i = end;
  }
  parts.push('"');
  return parts.join("");
}

class Writer {
  private parts: string[] = [];
  /** Closers of the collections being printed, so a cut preview still balances. */
  private readonly closers: string[] = [];
  len = 0;
  cut = false;
  constructor(
    private readonly maxChars: number,
    private readonly hard: boolean,
  ) {}

  /** Characters left before the cut (Infinity for hard writers, which throw instead). */
  get room(): number {
    return this.hard ? Infinity : this.maxChars - this.len;
  }

  /** Characters left before the limit, for hard writers too. */
  get left(): number {
    return this.maxChars - this.len;
  }

  /** Cuts the output here, before a part that must be written whole or not at all (a stand-in). */
  stop(): void {
    if (this.cut) return;
    const last = this.parts[this.parts.length - 1] ?? "";
    this.parts.push(last.endsWith("...") ? "" : "...", ...this.closers.slice().reverse());
    this.len = this.maxChars;
    this.cut = true;
  }

  write(s: string): boolean {
    if (this.cut) return false;
    if (this.len + s.length > this.maxChars) {
      if (this.hard) throw new PrintOverflow(this.len + s.length);
      const room = this.maxChars - this.len;
      // An ellipsis being written already says "cut": do not write a second one.
      if (room > 0 && s !== "...") this.parts.push(s.slice(0, cutPoint(s, room)));
      this.stop();
      return false;
    }
    this.parts.push(s);
    this.len += s.length;
    return true;
  }

  open(opener: string, closer: string): void {
    this.write(opener);
    this.closers.push(closer);
  }

  close(): void {
    const closer = this.closers.pop() as string;
    this.write(closer);
  }

  toString(): string {
    return this.parts.join("");
  }
}

interface Ctx {
  w: Writer;
  readably: boolean;
  maxItems: number;
  maxDepth: number;
  /** Past maxDepth: an error (printing that must be whole) or `...` (a sample). */
  deepIsError: boolean;
  itemsCut: boolean;
  /** Called with a running count of the items printed: a run's printing checks its clock through it. */
  tick: (i: number) => void;
  items: number;
  /** A keyword the reader cannot read back (`:Order ID`) written as the call that makes it (a sample). */
  keywordCalls?: boolean;
  /** The call that makes a sorted map or set again (`sorted-map`), so it reads back sorted; undefined for any other. */
  sortedCall?: SortedCall;
}

/** The constructor call (`sorted-set-by >`) a collection is written as, or undefined to write it as a literal. */
export type SortedCall = (v: IMap<Value, Value> | ISet<Value>) => string | undefined;

// The grammar's keyword rule (grammar/ptc-lisp.peggy: ":" SymbolChar+, not "::").
const KEYWORD_NAME = /^[a-zA-Z0-9*+!\-_?<>=/.&%$|'#\u00A0-\uFFFF][a-zA-Z0-9*+!\-_?<>=/.&%$|':#\u00A0-\uFFFF]*$/;

/**
 * A keyword as a preview shows it: `:name`, or `(keyword "Order ID")` when `:Order ID` would read
 * as another keyword and a symbol (JSON keys become keywords whatever they hold). A hidden key,
 * recorded as its stand-in (a tool call's arguments), is the stand-in: it names its type already.
 */
export function keywordText(name: string): string {
  if (isStandIn(name)) return name;
  return KEYWORD_NAME.test(name) ? ":" + name : `(keyword ${quoteString(name)})`;
}

const noTick = (): void => {};

function printValue(v: Value, c: Ctx, depth: number, top: boolean): void {
  const w = c.w;
  if (w.cut) return;
  if (v === null) {
    w.write("nil");
    return;
  }
  switch (typeof v) {
    case "boolean":
      w.write(v ? "true" : "false");
      return;
    case "number":
      w.write(formatNumber(v));
      return;
    case "string": {
      const quoted = c.readably || !top;
      // Quoting reads every character: a sample never quotes a string it has no room to show whole.
      const text = !quoted ? v : v.length + 2 > w.room ? null : quoteString(v, w.room === Infinity ? w.left : Infinity);
      if (text === null || text.length > w.room) {
        // A stand-in cut short would read as an ordinary string (`"<hidden string from da..."`).
        if (isStandIn(v)) {
          w.stop();
          return;
        }
        // A long string in a sample is cut inside its quotes, so the preview stays well formed.
        if (w.room >= 8 && (text === null || text.startsWith('"'))) {
          const kept = quoteString(v.slice(0, cutPoint(v, w.room - 5)));
          w.write(kept.slice(0, cutPoint(kept, Math.min(kept.length - 1, w.room - 4))) + '..."');
          c.itemsCut = true;
          return;
        }
      }
      w.write(text ?? quoteString(v.slice(0, cutPoint(v, w.room))));
      return;
    }
  }
  if (v instanceof LFloat) {
    w.write(formatFloat(v.v));
    return;
  }
  if (v instanceof Keyword) {
    // A sample shows no more of a long name than it has room for, and reads no more of it either.
    const name = v.name.length > w.room ? v.name.slice(0, cutPoint(v.name, w.room)) : v.name;
    w.write(c.keywordCalls === true ? keywordText(name) : ":" + name);
    return;
  }
  if (v instanceof Vec || isMap(v) || isSet(v)) {
    if (depth >= c.maxDepth) {
      if (c.deepIsError) throw nestedTooDeep(c.maxDepth, "be printed", "print a part of it (get-in), or keep data shallower");
      w.write("...");
      c.itemsCut = true;
      return;
    }
    printColl(v, c, depth);
    return;
  }
  if (v instanceof Fn) {
    w.write(`#fn[${v.label()}]`);
    return;
  }
  if (v instanceof Regex) {
    w.write('#"' + regexText(v.source) + '"');
    return;
  }
  if (v instanceof Reduced) {
    w.write("#reduced[");
    printValue(v.value, c, depth + 1, false);
    w.write("]");
    return;
  }
  if (v instanceof Var) {
    w.write("#'" + v.name);
    return;
  }
  w.write("#unknown");
}

function printColl(v: Vec<Value> | IMap<Value, Value> | ISet<Value>, c: Ctx, depth: number): void {
  const w = c.w;
  const mapLike = isMap(v);
  const call = v instanceof Vec ? undefined : c.sortedCall?.(v);
  if (call !== undefined) w.open(v.size > 0 ? `(${call} ` : `(${call}`, ")");
  else w.open(v instanceof Vec ? "[" : mapLike ? "{" : "#{", v instanceof Vec ? "]" : "}");
  let i = 0;
  for (const item of v as Iterable<Value | [Value, Value]>) {
    if (w.cut) return;
    if (i > 0) w.write(" ");
    if (i >= c.maxItems) {
      w.write("...");
      c.itemsCut = true;
      break;
    }
    c.tick(c.items++);
    if (mapLike) {
      const [k, val] = item as [Value, Value];
      printValue(k, c, depth + 1, false);
      w.write(" ");
      printValue(val, c, depth + 1, false);
    } else {
      printValue(item as Value, c, depth + 1, false);
    }
    i++;
  }
  w.close();
}

/** pr-str: readable EDN, whole (an error past STACK_SAFE_DEPTH); use `printChecked` for values a program built. */
export function prStr(v: Value): string {
  const c: Ctx = { w: new Writer(Infinity, false), readably: true, maxItems: Infinity, maxDepth: STACK_SAFE_DEPTH, deepIsError: true, itemsCut: false, tick: noTick, items: 0 };
  printValue(v, c, 0, true);
  return c.w.toString();
}

/**
 * Prints whole or not at all: throws PrintOverflow past `maxChars` and `nesting_too_deep` past
 * `maxDepth` (the nesting limit the evaluator enforces on printing); `tick` is called per item.
 * Given `readable` (text a program reads back as the same value), a keyword the reader cannot
 * read is written as the call that makes it (keywordText), and a sorted map or set as the call
 * `readable` names for it.
 */
export function printChecked(v: Value, readably: boolean, maxChars: number, maxDepth: number, tick: (i: number) => void = noTick, readable?: SortedCall): string {
  if (!readably && typeof v === "string") return v;
  if (v === null && !readably) return "";
  const c: Ctx = { w: new Writer(maxChars, true), readably, maxItems: Infinity, maxDepth: Math.min(maxDepth, STACK_SAFE_DEPTH), deepIsError: true, itemsCut: false, tick, items: 0, keywordCalls: readable !== undefined, sortedCall: readable };
  printValue(v, c, 0, true);
  return c.w.toString();
}

export interface Sample {
  text: string;
  /** True when items, depth or characters were cut. */
  truncated: boolean;
}

function sizeOf(v: Value): number | null {
  return v instanceof Vec || isMap(v) || isSet(v) ? v.size : null;
}

/** A bounded, always-valid-looking preview of a value for prompts and summaries. */
export function printSample(v: Value, opts: PrintOptions = {}): Sample {
  const c: Ctx = {
    w: new Writer(opts.maxChars ?? 120, false),
    readably: opts.readably ?? true,
    maxItems: opts.maxItems ?? 3,
    maxDepth: Math.min(opts.maxDepth ?? 4, STACK_SAFE_DEPTH),
    deepIsError: false,
    itemsCut: false,
    tick: noTick,
    items: 0,
    keywordCalls: true,
  };
  printValue(v, c, 0, true);
  let text = c.w.toString();
  const n = sizeOf(v);
  // Say what was cut, so a reader never mistakes a preview for the whole value.
  if (n !== null && n > c.maxItems && opts.note !== false) text += ` (${n} items, showing first ${c.maxItems})`;
  return { text, truncated: c.w.cut || c.itemsCut };
}
