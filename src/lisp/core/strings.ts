// Strings: str, subs, join, split, the clojure.string functions, format, and parsing.
// Strings are indexed by grapheme (what a reader calls a character), so positions from
// index-of agree with subs and count for accented text and emoji; text made only of
// code points below U+0300 takes the plain code-unit fast path.
import { clipped } from "../cuts.js";
import { LispError, typeErr } from "../errors.js";
import { call1, callValue, NativeFn } from "../fn.js";
import { CHUNK, MAX_ARRAY_LENGTH } from "../limits.js";
import { builtFrom, charge, chargeRead, checkArrayLength, checkCollectionSize, checkStringLength, joinChecked, run, runMarks, took } from "../runtime.js";
import { seqArray } from "../seq.js";
import { charChunks, charCount, chars, graphemes, isBlank, isSimpleText, javaTrim, trimWhitespace } from "../text.js";
import { Fn, Keyword, keyword, LFloat, mkFloat, Regex, type Value, isMap, isSet } from "../values.js";
import { Vec } from "../vector.js";
import { describe, strPart, strValue } from "./args.js";
import { javaInteger } from "./integer-text.js";
import { regexInput, regexReplace, regexSplit } from "./regex.js";
import type { BuiltinDef } from "./registry.js";

/**
 * Fuel for native string scans: one unit per 64 characters. A builtin's native loop is
 * far cheaper per character than an interpreter step, but a program that scans a long
 * text over and over must still run out of budget.
 */
export function chargeScan(length: number): void {
  charge(1 + (length >>> 6));
}

/** Code-unit offset where character (grapheme) `index` starts, clamped to [0, s.length]. */
export function charOffset(s: string, index: number): number {
  if (index <= 0) return 0;
  if (isSimpleText(s)) return Math.min(index, s.length);
  let i = 0;
  for (const seg of graphemes(s)) {
    if (i === index) return seg.index;
    i++;
  }
  return s.length;
}

/** The character (grapheme) index of code-unit offset `offset`: the characters starting before it. */
function charIndex(s: string, offset: number): number {
  if (isSimpleText(s)) return offset;
  let n = 0;
  for (const seg of graphemes(s)) {
    if (seg.index >= offset) break;
    n++;
  }
  return n;
}

const NIL_HINT = "a nil usually means a missing key or an empty result; check it first, e.g. (if s ... ) or (or s \"\")";

function argHint(x: Value, who?: string): string | undefined {
  if (x === null) return NIL_HINT;
  if (x instanceof Keyword) return "use (name k) to turn a keyword into a string";
  if (typeof x === "number" || x instanceof LFloat) return "use (str x) to turn a number into a string";
  if (x instanceof Vec) return "to apply it to every string of a collection, use map, e.g. (map clojure.string/trim xs)";
  // (->> s (str/split #",")) puts the regex first.
  if (x instanceof Regex && who !== undefined) return `the string comes first: (${who} s #"..." ...); in a ->> pipeline, string functions need ->`;
  return undefined;
}

/** A string argument, or a type_error naming the builtin, with a hint for nil and keywords. */
export function expectText(who: string, x: Value, what = "a string", hint = argHint(x, who)): string {
  if (typeof x === "string") return x;
  throw typeErr(`${who} expects ${what}, got ${describe(x)}`, hint);
}

function expectIndex(who: string, x: Value, what: string): number {
  if (typeof x === "number" && Number.isInteger(x)) return x;
  if (x instanceof LFloat && Number.isFinite(x.v)) return x.v;
  throw typeErr(`${who} expects an integer ${what}, got ${describe(x)}`, x === null ? NIL_HINT : undefined);
}

// ---------------------------------------------------------------------------------------
// str

// Joining is free in V8 (a rope of the parts) until something reads a character of the result,
// which copies all of it, however little it reads ((first (str s i)), a message quoting it): str
// and join pay for the length they make, as a read.

function str(args: Value[]): string {
  charge(args.length);
  const max = run.limits.maxStringLength;
  let out = "";
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    out = joinChecked(out, typeof a === "string" ? a : strPart(a, max - out.length));
  }
  chargeRead(out.length);
  return out;
}

function str2(a: Value, b: Value): string {
  const max = run.limits.maxStringLength;
  const left = strPart(a, max);
  const out = joinChecked(left, strPart(b, max - left.length));
  chargeRead(out.length);
  return out;
}

// ---------------------------------------------------------------------------------------
// subs, join, split

function subs(args: Value[]): string {
  const s = expectText("subs", args[0]);
  const start = expectIndex("subs", args[1], "start index");
  const hasEnd = args.length > 2;
  const end = hasEnd ? expectIndex("subs", args[2], "end index") : 0;
  // Out-of-range indices are clamped (as the reference does) rather than thrown.
  if (isSimpleText(s)) {
    charge(1);
    const a = Math.min(Math.max(start, 0), s.length);
    return s.slice(a, hasEnd ? Math.min(Math.max(end, a), s.length) : s.length);
  }
  chargeScan(s.length);
  const a = charOffset(s, start);
  return s.slice(a, hasEnd ? (end <= start ? a : charOffset(s, end)) : s.length);
}

function joinSeparator(sep: Value, coll: Value): string {
  if (sep instanceof Vec || isMap(sep) || isSet(sep)) {
    throw typeErr(
      `join expects (join separator coll), got ${describe(sep)} as the separator`,
      typeof coll === "string" ? `the separator comes first: (join ${JSON.stringify(clipped(coll, 24))} coll)` : "the separator comes first, e.g. (join \", \" coll)",
    );
  }
  return strValue(sep);
}

function join(args: Value[]): string {
  const sep = args.length > 1 ? joinSeparator(args[0], args[1]) : "";
  const items = seqArray(args[args.length - 1], "join");
  charge(items.length);
  const max = run.limits.maxStringLength;
  let out = "";
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out = joinChecked(out, sep);
    const x = items[i];
    out = joinChecked(out, typeof x === "string" ? x : strPart(x, max - out.length));
  }
  // A rope, as str's: paid for as a read.
  chargeRead(out.length);
  return out;
}

function splitLiteral(s: string, sep: string, limit: number): string[] {
  const max = run.limits.maxCollectionSize;
  if (sep === "") {
    if (limit > 0) {
      const at = charOffset(s, limit - 1);
      if (at < s.length) {
        checkCollectionSize(limit);
        const head = chars(s.slice(0, at));
        head.push(s.slice(at));
        return head;
      }
    }
    // One piece a character: counted before any is made (for plain text, its length).
    if (s.length > max) checkCollectionSize(charCount(s));
    return chars(s);
  }
  // Pieces the text may hold past the limit are counted first, the engine's split then making only
  // those kept: split whole, 2^28 separators made an array past the engine's longest, aborting the process.
  if (limit !== 0 || Math.floor(s.length / sep.length) >= max) return splitCounted(s, sep, limit);
  const parts = s.split(sep);
  // As Java's split (which Clojure's uses): without a limit, trailing empty pieces are dropped,
  // but a text with no separator at all comes back whole, even when empty.
  if (parts.length > 1) while (parts.length > 0 && parts[parts.length - 1] === "") parts.pop();
  return parts;
}

/**
 * The pieces of `s` cut at `sep` (at most `limit` when it is above 0), walked without making
 * them: how many, how many up to the last non-empty one (those a split without a limit keeps),
 * and where the last begins. With `crlf`, a "\r" before each "\n" belongs to the separator.
 */
function countPieces(s: string, sep: string, limit: number, crlf: boolean): { n: number; kept: number; start: number } {
  let n = 1;
  let kept = 0;
  let start = 0;
  for (let i = s.indexOf(sep); i >= 0 && (limit <= 0 || n < limit); i = s.indexOf(sep, start)) {
    if (i > start + (crlf && s.charCodeAt(i - 1) === 13 ? 1 : 0)) kept = n;
    n++;
    start = i + sep.length;
  }
  if (start < s.length) kept = n;
  return { n, kept, start };
}

/** splitLiteral's pieces, counted (and checked against the limit) before they are made. */
function splitCounted(s: string, sep: string, limit: number): string[] {
  const { n, kept, start } = countPieces(s, sep, limit, false);
  if (limit === 0 && n > 1) {
    checkCollectionSize(kept);
    return kept === 0 ? [] : s.split(sep, kept);
  }
  checkCollectionSize(n);
  const head = s.split(sep, n - 1);
  head.push(s.slice(start));
  return head;
}

function split(args: Value[]): Value {
  const s = expectText("split", args[0]);
  const sep = args[1];
  const limit = args.length > 2 ? expectIndex("split", args[2], "limit") : 0;
  let parts: string[];
  if (sep instanceof Regex) {
    regexInput("split", sep, s);
    parts = regexSplit(sep, s, limit, true);
  } else if (typeof sep === "string") {
    chargeScan(s.length);
    parts = splitLiteral(s, sep, limit);
  } else {
    throw typeErr(`split expects a separator string or regex, got ${describe(sep)}`, "e.g. (split s \",\") or (split s #\"\\s+\")");
  }
  checkCollectionSize(parts.length);
  return Vec.fromArray<Value>(parts);
}

function splitLines(s: string): Value {
  chargeScan(s.length);
  // Trailing empty lines go as Java's split drops them, but "" is one empty line: Java gives
  // back an input it found no separator in, as split does here.
  if (s === "") return Vec.fromArray<Value>([s]);
  // A text shorter than the limit has fewer lines than it. A longer one's lines kept are counted
  // before any is made (a text of 2^28 newlines split whole made an array past the engine's
  // longest, aborting the process), and only those are made: none for a text of newlines alone.
  if (s.length >= run.limits.maxCollectionSize) {
    const { kept } = countPieces(s, "\n", 0, true);
    checkCollectionSize(kept);
    return Vec.fromArray<Value>(kept === 0 ? [] : s.split(/\r?\n/, kept));
  }
  const lines = s.split(/\r?\n/);
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  return Vec.fromArray<Value>(lines);
}

// ---------------------------------------------------------------------------------------
// replace

/** clojure.core/replace: (replace smap coll) swaps elements found as keys of smap. */
function replaceInColl(smap: Value, coll: Value): Value {
  if (!isMap(smap)) throw typeErr(`replace expects (replace s match replacement) or (replace smap coll), got ${describe(smap)} as the first of two arguments`);
  const items = seqArray(coll, "replace");
  charge(items.length);
  return Vec.fromArray(items.map((x) => (smap.has(x) ? (smap.get(x) as Value) : x)));
}

function replaceLiteral(who: string, s: string, match: string, rep: Value, all: boolean): string {
  chargeScan(s.length);
  // A function replacement is called with the matched text; for the empty match its
  // result is the same everywhere, so it is computed once.
  if (rep instanceof Fn && match !== "") return replaceWithFn(s, match, () => strValue(call1(rep, match)), all);
  const r = rep instanceof Fn ? strValue(call1(rep, match)) : expectText(who, rep, "a replacement string (or a function) for a string match");
  if (match === "") {
    const cs = chars(s);
    if (!all) return r + s;
    checkStringLength(s.length + r.length * (cs.length + 1));
    return r + cs.join(r) + r;
  }
  if (!all) {
    const i = s.indexOf(match);
    return i < 0 ? s : joinChecked(joinChecked(s.slice(0, i), r), s.slice(i + match.length));
  }
  // The engine's split and join when the pieces and the result are sure to fit; otherwise the text
  // is walked (split whole, 2^28 matches made an array past the engine's longest, aborting the process).
  const most = Math.floor(s.length / match.length);
  const grow = r.length - match.length;
  if (most < run.limits.maxCollectionSize && (grow <= 0 || s.length + most * grow <= run.limits.maxStringLength)) return s.split(match).join(r);
  return replaceWithFn(s, match, () => r, true);
}

/** s with match replaced by f()'s text, checked as it grows and joined CHUNK pieces at a time. */
function replaceWithFn(s: string, match: string, f: () => string, all: boolean): string {
  const max = run.limits.maxStringLength;
  let out = "";
  let parts: string[] = [];
  let length = s.length;
  let last = 0;
  for (let i = s.indexOf(match); i >= 0; i = s.indexOf(match, last)) {
    charge(1);
    const piece = f();
    length += piece.length - match.length;
    if (length > max) checkStringLength(length);
    parts.push(s.slice(last, i), piece);
    if (parts.length >= CHUNK) {
      out += parts.join("");
      parts = [];
    }
    last = i + match.length;
    if (!all) break;
  }
  parts.push(s.slice(last));
  return out + parts.join("");
}

function replace(who: string, all: boolean) {
  return (args: Value[]): Value => {
    if (args.length === 2) return replaceInColl(args[0], args[1]);
    const s = expectText(who, args[0]);
    const match = args[1];
    // A map is a function of its keys in Clojure: {"cat" "dog"} replaces each match it holds.
    const given = args[2];
    // What a function returns, kept when the run follows hidden values: the result is built from it.
    const got: Value[] | null = given instanceof Fn && runMarks() !== null ? [] : null;
    const rep = isMap(given)
      ? new NativeFn("replacement map", (a) => callValue(given, a))
      : got !== null
        ? new NativeFn("replacement", (a) => {
            const r = callValue(given, a);
            if (got.length === MAX_ARRAY_LENGTH) checkArrayLength(got.length + 1);
            got.push(r);
            return r;
          })
        : given;
    let out: string | null = null;
    if (match instanceof Regex) out = regexReplace(who, match, regexInput(who, match, s), rep, all);
    else if (typeof match === "string") out = replaceLiteral(who, s, match, rep, all);
    if (out !== null) return got === null ? out : builtFrom(Vec.fromArray(got), out);
    throw typeErr(`${who} expects a string or regex to match, got ${describe(match)}`, "e.g. (replace s \"old\" \"new\") or (replace s #\"\\d+\" \"#\")");
  };
}

// ---------------------------------------------------------------------------------------
// searching

/**
 * The character index of the first (or, with `last`, the last) occurrence of sub in s, searching
 * from character `from` (forward, or backward with `last`), or -1. index-of and .indexOf share it.
 */
export function findText(s: string, sub: string, from: number | undefined, last: boolean): number {
  const simple = isSimpleText(s);
  let r: number;
  if (!last) r = from === undefined ? s.indexOf(sub) : s.indexOf(sub, simple ? Math.max(from, 0) : charOffset(s, from));
  else if (from === undefined) r = s.lastIndexOf(sub);
  // Java's lastIndexOf finds nothing before a negative start; JS would clamp it to 0.
  else r = from < 0 ? -1 : s.lastIndexOf(sub, simple ? from : charOffset(s, from));
  return r < 0 || simple ? r : charIndex(s, r);
}

function indexOf(who: string, last: boolean) {
  return (args: Value[]): Value => {
    const s = expectText(who, args[0]);
    const sub = expectText(who, args[1], "a string (or character) to look for");
    chargeScan(s.length);
    const r = findText(s, sub, args.length > 2 ? expectIndex(who, args[2], "start index") : undefined, last);
    return r < 0 ? null : r;
  };
}

const MEMBER_HINT = "to test whether a collection holds a value use (some #{x} coll), or (contains? set x) for a set";

function predicate2(who: string, test: (s: string, x: string) => boolean) {
  return (args: Value[]): Value => {
    const s = expectText(who, args[0], "a string", who === "includes?" && (args[0] instanceof Vec || isSet(args[0])) ? MEMBER_HINT : argHint(args[0], who));
    const x = expectText(who, args[1], "a string (or character) as its second argument");
    chargeScan(s.length);
    return test(s, x);
  };
}

function textFn(who: string, f: (s: string) => Value): BuiltinDef["fn"] {
  return (args) => {
    const s = expectText(who, args[0]);
    chargeScan(s.length);
    return f(s);
  };
}

/** s's characters in reverse order, a chunk at a time: no array of them all, whatever its length. */
function reverseText(s: string): string {
  const out: string[] = [];
  for (const chunk of charChunks(s)) out.push(chunk.reverse().join(""));
  return out.reverse().join("");
}

/** s without trailing newlines and carriage returns, as clojure.string/trim-newline. */
function trimNewline(s: string): string {
  let j = s.length;
  while (j > 0 && (s.charCodeAt(j - 1) === 10 || s.charCodeAt(j - 1) === 13)) j--;
  return j === s.length ? s : s.slice(0, j);
}

/** The one-character string of a code point, as (char n): characters are strings here. */
function charOf(x: Value): string {
  if (typeof x !== "number" || !Number.isInteger(x)) throw typeErr(`char expects an integer code point, got ${describe(x)}`, x === null ? NIL_HINT : undefined);
  // A lone surrogate is half a character: text made of it could not be shown or sent as it is.
  if (x < 0 || x > 0x10ffff || (x >= 0xd800 && x <= 0xdfff)) throw new LispError("value_error", `char: ${x} is not a character's code point`);
  return String.fromCodePoint(x);
}

function capitalize(s: string): string {
  if (s === "") return s;
  const first = isSimpleText(s) ? 1 : charOffset(s, 1);
  const out = s.slice(0, first).toUpperCase() + s.slice(first).toLowerCase();
  checkStringLength(out.length);
  return out;
}

/** s in upper or lower case, within the string limit (ß upper-cases to SS, İ lower-cases to two characters). */
export function cased(s: string, upper: boolean): string {
  const out = upper ? s.toUpperCase() : s.toLowerCase();
  if (out.length > s.length) checkStringLength(out.length);
  return out;
}

// ---------------------------------------------------------------------------------------
// format: a safe subset of Java's Formatter

const DIRECTIVE = /([-#+ 0,(]*)(\d+)?(?:\.(\d+))?([a-zA-Z%])/y;
const FORMAT_HINT = "supported: %s %d %f %.2f %e %x %X %n %% with optional flags (- 0 + space ,) and width, e.g. %-10s %05d %,.2f";

function formatErr(message: string, hint = FORMAT_HINT): LispError {
  return new LispError("value_error", `format: ${message}`, undefined, hint);
}

interface Spec {
  flags: string;
  width: number;
  precision: number;
  conv: string;
}

function groupThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** x rounded half-up to p decimals from its shortest decimal form, as Java prints %.pf. */
export function fixedHalfUp(x: number, p: number): string {
  const neg = x < 0 || Object.is(x, -0);
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  const digits = BigInt(mant.replace(".", ""));
  const scale = Number(expText) - (mant.length - (mant.includes(".") ? 2 : 1)) + p;
  let s: string;
  if (scale >= 0) s = digits.toString() + "0".repeat(scale);
  else {
    // -scale is at most about 340: the shortest form has 17 digits and exponents reach -324.
    const unit = 10n ** BigInt(-scale);
    s = (digits / unit + ((digits % unit) * 2n >= unit ? 1n : 0n)).toString();
  }
  s = s.padStart(p + 1, "0");
  if (p > 0) s = s.slice(0, s.length - p) + "." + s.slice(s.length - p);
  return (neg ? "-" : "") + s;
}

/** |x| as %.pe writes it before the sign: p+1 digits rounded half-up from its shortest decimal form, as Java prints them. */
function scientificHalfUp(x: number, p: number): string {
  const [mant, expText] = Math.abs(x).toExponential().split("e");
  let digits = mant.replace(".", "");
  let exp = Number(expText);
  if (digits.length > p + 1) {
    const rounded = (BigInt(digits.slice(0, p + 1)) + (digits.charCodeAt(p + 1) >= 0x35 ? 1n : 0n)).toString();
    // 9.95 to one decimal is 10.0: one more power of ten.
    if (rounded.length > p + 1) exp++;
    digits = rounded.slice(0, p + 1);
  } else digits = digits.padEnd(p + 1, "0");
  const e = String(Math.abs(exp)).padStart(2, "0");
  return digits[0] + (p > 0 ? "." + digits.slice(1) : "") + (exp < 0 ? "e-" : "e+") + e;
}

function numberArg(conv: string, v: Value, integral: boolean): number {
  const hint = typeof v === "string" ? "turn text into a number first with parse-long or parse-double" : v === null ? NIL_HINT : undefined;
  if (typeof v === "number") {
    if (integral && !Number.isInteger(v)) throw formatErr(`%${conv} expects an integer, got ${describe(v)}`, "use %.0f or %.2f for floats, or round the value first with (round x)");
    return v;
  }
  if (v instanceof LFloat) {
    // A float with an integer's value passes ((/ 10 2) is 5.0); past ±2^53 it is no exact integer.
    if (integral && !Number.isSafeInteger(v.v)) throw formatErr(`%${conv} expects an integer, got ${describe(v)}`, "use %.0f for large floats");
    return v.v;
  }
  throw formatErr(`%${conv} expects a number, got ${describe(v)}`, hint);
}

function signed(spec: Spec, neg: boolean, body: string): string {
  const sign = neg ? "-" : spec.flags.includes("+") ? "+" : spec.flags.includes(" ") ? " " : "";
  if (spec.flags.includes("0") && !spec.flags.includes("-") && sign.length + body.length < spec.width) {
    return sign + body.padStart(spec.width - sign.length, "0");
  }
  return sign + body;
}

// The flags each conversion takes, as Java's Formatter (for a long or a double) allows them.
const FLAGS_FOR: Record<string, string> = { s: "-", S: "-", d: "-+ 0,", x: "-0", X: "-0", f: "-+ 0,", e: "-+ 0", E: "-+ 0", n: "", "%": "-" };

/** Refuses what Java's Formatter refuses in a directive's flags, width and precision, rather than ignore it. */
function checkSpec(spec: Spec, fmt: string, text: string): void {
  const { flags, conv } = spec;
  const directive = (): string => quotedDirective(fmt, "%" + text);
  for (let i = 0; i < flags.length; i++) {
    const f = flags[i];
    const named = f === " " ? "space" : f;
    if (flags.indexOf(f, i + 1) >= 0) throw formatErr(`the flag ${named} appears twice in ${directive()}`);
    if (!FLAGS_FOR[conv].includes(f)) throw formatErr(`the flag ${named} does not apply to %${conv} (in ${directive()})`);
    if ((f === "-" || f === "0") && spec.width === 0) throw formatErr(`the flag ${f} in ${directive()} needs a width, e.g. %${f}5${conv}`);
  }
  if (flags.includes("-") && flags.includes("0")) throw formatErr(`the flags - and 0 in ${directive()} cannot go together: - pads with spaces on the right`);
  if (flags.includes("+") && flags.includes(" ")) throw formatErr(`the flags + and space in ${directive()} cannot go together`);
  if (spec.precision >= 0 && "dxXn%".includes(conv)) throw formatErr(`a precision does not apply to %${conv} (in ${directive()})`);
  if (conv === "n" && spec.width > 0) throw formatErr(`%n takes no width (in ${directive()})`);
}

/**
 * A directive of `fmt` as a refusal quotes it, in quotes: taken from the format string, so a part
 * of a hidden one is hidden too, and quoted, so that one too short to be looked for bare ("%Z")
 * is found. Nothing else read from the format string (a precision) is quoted on its own.
 */
function quotedDirective(fmt: string, directive: string): string {
  return JSON.stringify(took(fmt, directive));
}

function formatOne(spec: Spec, v: Value): string {
  switch (spec.conv) {
    case "s":
    case "S": {
      let s = v === null ? "nil" : strValue(v);
      if (spec.precision >= 0) s = isSimpleText(s) ? s.slice(0, spec.precision) : chars(s).slice(0, spec.precision).join("");
      return spec.conv === "S" ? s.toUpperCase() : s;
    }
    case "d": {
      const n = numberArg("d", v, true);
      const digits = String(Math.abs(n));
      return signed(spec, n < 0, spec.flags.includes(",") ? groupThousands(digits) : digits);
    }
    case "f":
    case "e":
    case "E": {
      const x = numberArg(spec.conv, v, false);
      if (!Number.isFinite(x)) return signed({ ...spec, flags: spec.flags.replace("0", "") }, x < 0, Number.isNaN(x) ? "NaN" : "Infinity");
      const p = spec.precision >= 0 ? spec.precision : 6;
      if (p > run.limits.maxStringLength) checkStringLength(p);
      if (spec.conv === "f") {
        const s = fixedHalfUp(x, p);
        const neg = s.startsWith("-");
        const body = neg ? s.slice(1) : s;
        if (!spec.flags.includes(",")) return signed(spec, neg, body);
        const dot = body.indexOf(".");
        return signed(spec, neg, dot < 0 ? groupThousands(body) : groupThousands(body.slice(0, dot)) + body.slice(dot));
      }
      const out = signed(spec, x < 0 || Object.is(x, -0), scientificHalfUp(x, p));
      return spec.conv === "E" ? out.toUpperCase() : out;
    }
    case "x":
    case "X": {
      const n = numberArg(spec.conv, v, true);
      if (!Number.isInteger(n)) throw formatErr(`%${spec.conv} expects an integer, got ${describe(v)}`);
      const hex = n < 0 ? BigInt.asUintN(64, BigInt(n)).toString(16) : n.toString(16);
      const out = spec.flags.includes("0") && !spec.flags.includes("-") ? hex.padStart(spec.width, "0") : hex;
      return spec.conv === "X" ? out.toUpperCase() : out;
    }
  }
  throw formatErr(`unsupported conversion %${spec.conv}`);
}

function format(args: Value[]): string {
  const fmt = expectText("format", args[0], "a format string as its first argument");
  charge(args.length + (fmt.length >>> 4));
  const max = run.limits.maxStringLength;
  let out = "";
  let next = 1;
  let i = 0;
  while (i < fmt.length) {
    const pct = fmt.indexOf("%", i);
    if (pct < 0) {
      out = joinChecked(out, fmt.slice(i));
      break;
    }
    out = joinChecked(out, fmt.slice(i, pct));
    DIRECTIVE.lastIndex = pct + 1;
    const m = DIRECTIVE.exec(fmt);
    if (m === null || !"sSdfeExXn%".includes(m[4])) {
      const shown = quotedDirective(fmt, fmt.slice(pct, pct + 6));
      if (/^%\d+\$/.test(fmt.slice(pct))) throw formatErr(`argument positions such as ${shown} are not supported`, "pass the values in the order the directives use them");
      throw formatErr(m === null ? `cannot read the directive at ${shown}` : `unsupported directive ${quotedDirective(fmt, "%" + m[0])}`);
    }
    // Java's ( and # flags change the text ("(5)", "0xff"): refused rather than ignored.
    const flag = /[#(]/.exec(m[1]);
    if (flag !== null) throw formatErr(`the flag ${flag[0]} in ${quotedDirective(fmt, "%" + m[0])} is not supported`);
    const spec: Spec = { flags: m[1], width: m[2] === undefined ? 0 : Number(m[2]), precision: m[3] === undefined ? -1 : Number(m[3]), conv: m[4] };
    checkSpec(spec, fmt, m[0]);
    i = DIRECTIVE.lastIndex;
    if (spec.width > max) checkStringLength(spec.width);
    let piece: string;
    if (spec.conv === "%") piece = "%";
    else if (spec.conv === "n") piece = "\n";
    else {
      if (next >= args.length) {
        throw formatErr(`the format string has more directives than the ${args.length - 1} value${args.length === 2 ? "" : "s"} given`, "pass one value per directive (write %% for a literal percent sign)");
      }
      piece = formatOne(spec, args[next++]);
    }
    const shortBy = spec.width - (isSimpleText(piece) ? piece.length : charCount(piece));
    if (shortBy > 0) piece = spec.flags.includes("-") ? piece + " ".repeat(shortBy) : " ".repeat(shortBy) + piece;
    out = joinChecked(out, piece);
  }
  // Values spliced in (a long %s) are text written, charged as str charges printed text.
  charge(out.length >>> 4);
  return out;
}

// ---------------------------------------------------------------------------------------
// names, keywords and parsing

function name(x: Value): Value {
  if (typeof x === "string") return x;
  if (x instanceof Keyword) {
    const i = x.nsEnd();
    return i < 0 ? x.name : x.name.slice(i + 1);
  }
  throw typeErr(`name expects a keyword or string, got ${describe(x)}`, x === null ? NIL_HINT : typeof x === "number" ? "use (str x) to turn a number into a string" : undefined);
}

function namespace(x: Value): Value {
  if (x instanceof Keyword) {
    const i = x.nsEnd();
    return i < 0 ? null : x.name.slice(0, i);
  }
  throw typeErr(`namespace expects a keyword, got ${describe(x)}`, x === null ? NIL_HINT : undefined);
}

/** (keyword "ns" "name") is :ns/name; a nil namespace gives a plain keyword. */
function toKeyword2(ns: Value, n: Value): Value {
  if (ns === null) return toKeyword(n);
  const text = `${expectText("keyword", ns, "a namespace string")}/${expectText("keyword", n, "a name string")}`;
  // A name the program builds from two strings: its text (str, a key's name) must fit the limit too.
  checkStringLength(text.length);
  chargeScan(text.length);
  return keyword(text);
}

function toKeyword(x: Value): Value {
  if (x instanceof Keyword) return x;
  if (typeof x === "string") {
    // Interning hashes the whole name.
    chargeScan(x.length);
    return keyword(x);
  }
  // Clojure's keyword returns nil for anything it cannot name.
  return null;
}

// Clojure's parse-double grammar (Java's Double.valueOf without hex floats), which allows
// surrounding control characters and spaces. Each digit run has one way to match (`\d+(?:\.\d*)?`,
// not `\d+\.?\d*`): the ambiguous form backtracked over every split of a long run of digits
// that did not end a number, 2.6 s for one call on 40,000 characters, past any time limit.
// eslint-disable-next-line no-control-regex
const DOUBLE = /^[\x00-\x20]*[+-]?(?:NaN|Infinity|(?:\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)[fFdD]?)[\x00-\x20]*$/;

/** Clojure's parse-* read text: anything else (nil included) is an error, not a silent nil. */
function parseInput(who: string, x: Value): string {
  const number = typeof x === "number" || x instanceof LFloat;
  const text = expectText(who, x, "a string", number ? "it is already a number" : x === null ? `check for nil first, e.g. (some-> s ${who})` : undefined);
  // The number grammar is matched against the whole text.
  chargeScan(text.length);
  return text;
}

/** A long a double cannot hold exactly: read, it would be another number. */
function inexact(who: string, text: string, base: string): LispError {
  return new LispError("arithmetic_error", `${who}: ${clipped(text, 40)}${base} is outside the integer range ±${Number.MAX_SAFE_INTEGER}`, undefined, "use parse-double for very large numbers, or keep ids as strings");
}

/** Clojure's parse-long (Long/valueOf): nil for text that is not a long, a number past the long range too. */
function parseLongAs(who: string) {
  return (x: Value): Value => {
    const text = parseInput(who, x);
    const n = javaInteger(text, 10, 64);
    if (n === "inexact") throw inexact(who, text, "");
    return typeof n === "number" ? n : null;
  };
}

const parseLongValue = parseLongAs("parse-long");
const parseIntValue = parseLongAs("parse-int");

function parseDouble(x: Value): Value {
  const text = parseInput("parse-double", x);
  if (!DOUBLE.test(text)) return null;
  // Trimmed as the grammar allows, as Double/valueOf does: every character up to U+0020.
  return mkFloat(Number(javaTrim(text).replace(/[fFdD]$/, "")));
}

const RANGES = { 32: "an int (-2147483648 to 2147483647)", 64: "a long (-9223372036854775808 to 9223372036854775807)" } as const;

/**
 * Java's Integer/parseInt (32 bits) and Long/parseLong (64): like parse-long, but text that is
 * not an integer of the type is an error (NumberFormatException: value_error); Java's radix
 * (2 to 36) too.
 */
function javaParseLong(who: string, bits: 32 | 64) {
  return (x: Value, radix: Value = 10): Value => {
    if (radix !== 10 && (typeof radix !== "number" || !Number.isInteger(radix))) throw typeErr(`${who} expects an integer radix, got ${describe(radix)}`);
    if (radix < 2 || radix > 36) throw new LispError("value_error", `${who}: radix ${radix} is out of range (2 to 36)`);
    const text = parseInput(who, x);
    const n = javaInteger(text, radix, bits);
    if (typeof n === "number") return n;
    const base = radix === 10 ? "" : ` in base ${radix}`;
    if (n === "inexact") throw inexact(who, text, base);
    if (n === "outside") {
      throw new LispError("value_error", `${who}: ${clipped(text, 40)}${base} is out of range for ${RANGES[bits]}`, undefined, bits === 32 ? "Long/parseLong reads integers past an int's range" : "keep ids this long as strings");
    }
    throw radix === 10
      ? new LispError("value_error", `${who} cannot read an integer from ${describe(x)}`, undefined, "parse-long returns nil instead of failing: (or (parse-long s) 0)")
      : new LispError("value_error", `${who} cannot read an integer in base ${radix} from ${describe(x)}`, undefined, `digits below ${radix}, e.g. (${who} "ff" 16)`);
  };
}

const integerParseInt = javaParseLong("Integer/parseInt", 32);
const longParseLong = javaParseLong("Long/parseLong", 64);

/** Java's Double/parseDouble: like parse-double, but bad text is an error a catch can handle. */
function javaParseDouble(x: Value): Value {
  const r = parseDouble(x);
  if (r !== null) return r;
  throw new LispError("value_error", `Double/parseDouble cannot read a number from ${describe(x)}`, undefined, "parse-double returns nil instead of failing: (or (parse-double s) 0.0)");
}

// ---------------------------------------------------------------------------------------

const STR_NS = ["clojure.string"] as const;

export const STRINGS: BuiltinDef[] = [
  {
    name: "str",
    area: "strings",
    arity: [0, Infinity],
    params: "[& xs]",
    doc: "Concatenates the values as text: nil is \"\", keywords keep their colon, collections print as EDN.",
    examples: [
      ['(str "a" 1 nil :k 2.0)', '"a1:k2.0"'],
      ["(str [1 \"x\"])", '"[1 \\"x\\"]"'],
      ["(str)", '""'],
    ],
    fn: str,
    f1: (a) => (typeof a === "string" ? a : strValue(a)),
    f2: str2,
  },
  {
    name: "subs",
    area: "strings",
    arity: [2, 3],
    params: "[s start] [s start end]",
    doc: "The characters of s from start (inclusive) to end (exclusive, default the end); indices out of range are clamped.",
    examples: [
      ['(subs "hello" 1 4)', '"ell"'],
      ['(subs "hello" 2)', '"llo"'],
      ['(subs "héllo" 1 2)', '"é"'],
    ],
    fn: subs,
  },
  {
    name: "join",
    area: "strings",
    arity: [1, 2],
    params: "[coll] [separator coll]",
    doc: "The elements of coll as text (as str shows them), with separator between them.",
    examples: [
      ['(join ", " ["a" "b" "c"])', '"a, b, c"'],
      ["(join [1 2 3])", '"123"'],
    ],
    ns: STR_NS,
    fn: join,
  },
  {
    name: "split",
    area: "strings",
    arity: [2, 3],
    params: "[s separator] [s separator limit]",
    doc: "Splits s at each occurrence of separator (a literal string or a regex); empty pieces are kept except trailing ones, as in Clojure; \"\" splits into characters.",
    examples: [
      ['(split "a,b,,c" ",")', '["a" "b" "" "c"]'],
      ['(split "a,b,," #",")', '["a" "b"]'],
      ['(split "a  b c" #"\\s+")', '["a" "b" "c"]'],
      ['(split "a=b=c" "=" 2)', '["a" "b=c"]'],
    ],
    ns: STR_NS,
    fn: split,
  },
  {
    name: "split-lines",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "Splits s into lines at \\n or \\r\\n, dropping trailing empty lines.",
    examples: [['(split-lines "a\\nb\\r\\nc\\n\\n")', '["a" "b" "c"]']],
    ns: STR_NS,
    fn: textFn("split-lines", splitLines),
  },
  { name: "trim", area: "strings", arity: [1, 1], params: "[s]", doc: "s without leading and trailing whitespace.", examples: [['(trim "  hi \\n")', '"hi"']], ns: STR_NS, fn: textFn("trim", (s) => trimWhitespace(s)) },
  { name: "triml", area: "strings", arity: [1, 1], params: "[s]", doc: "s without leading whitespace.", examples: [['(clojure.string/triml "  hi ")', '"hi "']], ns: STR_NS, unqualified: false, fn: textFn("triml", (s) => trimWhitespace(s, true, false)) },
  { name: "trimr", area: "strings", arity: [1, 1], params: "[s]", doc: "s without trailing whitespace.", examples: [['(str/trimr "  hi ")', '"  hi"']], ns: STR_NS, unqualified: false, fn: textFn("trimr", (s) => trimWhitespace(s, false, true)) },
  { name: "char", area: "strings", arity: [1, 1], params: "[n]", doc: "The character (a one-character string) with code point n.", examples: [["(char 97)", '"a"']], fn: (a) => charOf(a[0]) },
  {
    name: "trim-newline",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "s without its trailing \\n and \\r characters.",
    examples: [['(str/trim-newline "hi\\r\\n")', '"hi"']],
    ns: STR_NS,
    unqualified: false,
    fn: textFn("trim-newline", trimNewline),
  },
  {
    name: "replace",
    area: "strings",
    arity: [2, 3],
    params: "[s match replacement] [smap coll]",
    doc: "Replaces every match in s (a string literally; a regex with $1 groups or a function of the match); (replace smap coll) swaps elements found in smap.",
    examples: [
      ['(replace "a-b-c" "-" "+")', '"a+b+c"'],
      ['(replace "2024-01-15" #"(\\d+)-(\\d+)-(\\d+)" "$3/$2/$1")', '"15/01/2024"'],
      ['(replace "a1b22" #"\\d+" (fn [m] (str (count m))))', '"a1b2"'],
      ["(replace {1 :one} [1 2 1])", "[:one 2 :one]"],
    ],
    ns: STR_NS,
    fn: replace("replace", true),
  },
  {
    name: "replace-first",
    area: "strings",
    arity: [3, 3],
    params: "[s match replacement]",
    doc: "Like replace, for the first match only.",
    examples: [['(str/replace-first "a-b-c" "-" "+")', '"a+b-c"']],
    ns: STR_NS,
    unqualified: false,
    fn: replace("replace-first", false),
  },
  // Named as in Clojure, so errors name what the program wrote (str/upper-case); upcase and
  // downcase are the reference's names.
  { name: "upper-case", area: "strings", arity: [1, 1], params: "[s]", doc: "s in upper case.", examples: [['(upcase "Hello")', '"HELLO"']], ns: STR_NS, aliases: ["upcase"], fn: textFn("upper-case", (s) => cased(s, true)) },
  { name: "lower-case", area: "strings", arity: [1, 1], params: "[s]", doc: "s in lower case.", examples: [['(lower-case "Hello")', '"hello"']], ns: STR_NS, aliases: ["downcase"], fn: textFn("lower-case", (s) => cased(s, false)) },
  {
    name: "capitalize",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "s with its first character in upper case and the rest in lower case.",
    examples: [['(clojure.string/capitalize "hELLO")', '"Hello"']],
    ns: STR_NS,
    unqualified: false,
    fn: textFn("capitalize", capitalize),
  },
  {
    name: "starts-with?",
    area: "strings",
    arity: [2, 2],
    params: "[s prefix]",
    doc: "True if s begins with prefix.",
    examples: [['(starts-with? "hello" "he")', "true"]],
    ns: STR_NS,
    fn: predicate2("starts-with?", (s, x) => s.startsWith(x)),
  },
  {
    name: "ends-with?",
    area: "strings",
    arity: [2, 2],
    params: "[s suffix]",
    doc: "True if s ends with suffix.",
    examples: [['(ends-with? "hello" "lo")', "true"]],
    ns: STR_NS,
    fn: predicate2("ends-with?", (s, x) => s.endsWith(x)),
  },
  {
    name: "includes?",
    area: "strings",
    arity: [2, 2],
    params: "[s substr]",
    doc: "True if s contains substr.",
    examples: [['(includes? "hello" "ell")', "true"]],
    ns: STR_NS,
    fn: predicate2("includes?", (s, x) => s.includes(x)),
  },
  {
    name: "index-of",
    area: "strings",
    arity: [2, 3],
    params: "[s value] [s value from]",
    doc: "The character index of the first occurrence of value in s (at or after from), or nil.",
    examples: [
      ['(index-of "hello" "l")', "2"],
      ['(index-of "hello" "l" 3)', "3"],
      ['(index-of "hello" "x")', "nil"],
    ],
    ns: STR_NS,
    fn: indexOf("index-of", false),
  },
  {
    name: "last-index-of",
    area: "strings",
    arity: [2, 3],
    params: "[s value] [s value from]",
    doc: "The character index of the last occurrence of value in s (starting at or before from), or nil.",
    examples: [
      ['(last-index-of "hello" "l")', "3"],
      ['(last-index-of "hello" "l" 2)', "2"],
    ],
    ns: STR_NS,
    fn: indexOf("last-index-of", true),
  },
  {
    name: "blank?",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "True if s is nil, empty or only whitespace.",
    examples: [
      ['(str/blank? "  ")', "true"],
      ["(str/blank? nil)", "true"],
      ['(str/blank? " a ")', "false"],
    ],
    ns: STR_NS,
    unqualified: false,
    fn: (a) => {
      if (a[0] === null) return true;
      const s = expectText("blank?", a[0], "a string or nil");
      chargeScan(s.length);
      return isBlank(s);
    },
  },
  {
    name: "reverse",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "s with its characters in reverse order (the unqualified reverse reverses a collection).",
    examples: [['(clojure.string/reverse "abc")', '"cba"']],
    ns: STR_NS,
    unqualified: false,
    fn: textFn("reverse", reverseText),
  },
  {
    name: "format",
    area: "strings",
    arity: [1, Infinity],
    params: "[fmt & args]",
    doc: "Java-style format, a safe subset: %s %d %f %.2f %e %x %n %% with flags - 0 + , and width.",
    examples: [
      ['(format "%s has %d items" "cart" 3)', '"cart has 3 items"'],
      ['(format "%.2f" 2.345)', '"2.35"'],
      ['(format "%-5s|%05d|%,d" "ab" 42 1234567)', '"ab   |00042|1,234,567"'],
    ],
    fn: format,
  },
  {
    name: "name",
    area: "strings",
    arity: [1, 1],
    params: "[x]",
    doc: "The name of a keyword without its colon (and namespace); a string is returned as is.",
    examples: [
      ["(name :status)", '"status"'],
      ["(name :user/id)", '"id"'],
      ['(name "x")', '"x"'],
    ],
    fn: (a) => name(a[0]),
    f1: name,
  },
  {
    name: "keyword",
    area: "strings",
    arity: [1, 2],
    params: "[name] [ns name]",
    doc: "The keyword with the given name (a string), or :ns/name; a keyword is returned as is; nil for anything else.",
    examples: [
      ['(keyword "status")', ":status"],
      ['(keyword "user" "id")', ":user/id"],
      ["(keyword nil)", "nil"],
    ],
    fn: (a) => (a.length === 2 ? toKeyword2(a[0], a[1]) : toKeyword(a[0])),
    f1: toKeyword,
    f2: toKeyword2,
  },
  {
    name: "namespace",
    area: "strings",
    arity: [1, 1],
    params: "[k]",
    doc: "The namespace of a qualified keyword (:ns/name gives \"ns\"), or nil.",
    examples: [
      ["(namespace :user/id)", '"user"'],
      ["(namespace :id)", "nil"],
    ],
    fn: (a) => namespace(a[0]),
    f1: namespace,
  },
  {
    name: "parse-long",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "The integer written in the string s (optional sign, digits only: any Unicode decimal digit, as Java reads them), or nil if it is not one, as Clojure's (a number past the long range too); anything but a string is an error, and so is a long past ±2^53-1, which cannot be held exactly.",
    examples: [
      ['(parse-long "-17")', "-17"],
      ['(parse-long "4.2")', "nil"],
    ],
    fn: (a) => parseLongValue(a[0]),
    f1: parseLongValue,
  },
  {
    name: "parse-int",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "Same as parse-long.",
    examples: [['(parse-int "42")', "42"]],
    fn: (a) => parseIntValue(a[0]),
    f1: parseIntValue,
  },
  {
    name: "parse-double",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "The float written in the string s (e.g. \"3.14\", \"1e3\", \"-Infinity\"), or nil if it is not one; anything but a string is an error.",
    examples: [
      ['(parse-double "3.14")', "3.14"],
      ['(parse-double "2")', "2.0"],
      ['(parse-double "abc")', "nil"],
    ],
    fn: (a) => parseDouble(a[0]),
    f1: parseDouble,
  },
  {
    name: "parseInt",
    area: "strings",
    arity: [1, 2],
    params: "[s] [s radix]",
    doc: "Java's Integer/parseInt: the integer written in s; unlike parse-long, text that is not an integer, or one past an int's range (-2147483648 to 2147483647), is an error (NumberFormatException).",
    examples: [['(Integer/parseInt "42")', "42"], ['(Integer/parseInt "ff" 16)', "255"]],
    ns: ["Integer"],
    unqualified: false,
    fn: (a) => integerParseInt(a[0], a[1]),
  },
  {
    name: "parseLong",
    area: "strings",
    arity: [1, 2],
    params: "[s] [s radix]",
    doc: "Java's Long/parseLong: the integer written in s; unlike parse-long, text that is not an integer, or one past a long's range, is an error (NumberFormatException), and so is a long past ±2^53-1, which cannot be held exactly.",
    examples: [['(Long/parseLong "-7")', "-7"], ['(Long/parseLong "-101" 2)', "-5"]],
    ns: ["Long"],
    unqualified: false,
    fn: (a) => longParseLong(a[0], a[1]),
  },
  {
    name: "parseDouble",
    area: "strings",
    arity: [1, 1],
    params: "[s]",
    doc: "Java's Double/parseDouble: the float written in s; unlike parse-double, text that is not a number is an error.",
    examples: [['(Double/parseDouble "2.5")', "2.5"]],
    ns: ["Double"],
    unqualified: false,
    fn: (a) => javaParseDouble(a[0]),
    f1: javaParseDouble,
  },
];
