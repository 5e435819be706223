// The few Java interop forms LLMs reach for, as builtins named like the method:
// (.indexOf s "x"), (.getTime (java.util.Date.)), (System/currentTimeMillis).
// They follow Java's conventions (-1 when not found, errors for bad indices), but count
// in characters (graphemes) like every other string function. There are no host
// objects: a date is its ISO-8601 string ("2024-01-15T10:30:00.000Z").
import { clipped } from "../cuts.js";
import { LispError, typeErr } from "../errors.js";
import { regexFromString } from "../regex.js";
import { equals } from "../equality.js";
import { charge, run } from "../runtime.js";
import { chars, charCount, isSimpleText, javaTrim } from "../text.js";
import { LFloat, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe } from "./args.js";
import { regexInput, regexSplit } from "./regex.js";
import { cased, charOffset, chargeScan, expectText, findText } from "./strings.js";
import type { BuiltinDef } from "./registry.js";

function methodTarget(who: string, x: Value): string {
  if (typeof x === "string") return x;
  throw typeErr(
    `${who} expects a string, got ${describe(x)}`,
    x instanceof Vec ? "for a collection use (count coll), (nth coll i) or (subvec coll a b)" : x === null ? "a nil usually means a missing key or an empty result; check it first" : undefined,
  );
}

function intArg(who: string, x: Value, what: string): number {
  if (typeof x === "number" && Number.isInteger(x)) return x;
  if (x instanceof LFloat && Number.isFinite(x.v)) return x.v;
  throw typeErr(`${who} expects an integer ${what}, got ${describe(x)}`);
}

function outOfRange(who: string, detail: string, length: number): LispError {
  return new LispError("index_out_of_bounds", `${who}: ${detail} is out of range for a string of ${length} characters`, undefined, "subs clamps out-of-range indices instead of failing");
}

function stringMethod(who: string, f: (s: string) => Value): BuiltinDef["fn"] {
  return (args) => {
    const s = methodTarget(who, args[0]);
    chargeScan(s.length);
    return f(s);
  };
}

function stringTest(who: string, test: (s: string, x: string) => boolean): BuiltinDef["fn"] {
  return (args) => {
    const s = methodTarget(who, args[0]);
    const x = expectText(who, args[1], "a string argument");
    chargeScan(s.length);
    return test(s, x);
  };
}

/** Java's List.indexOf / lastIndexOf on a vector: the position of an equal element, or -1. */
function vectorIndexOf(v: Vec<Value>, x: Value, last: boolean): number {
  charge(v.size);
  const xs = v.toArray();
  if (last) {
    for (let i = xs.length - 1; i >= 0; i--) if (equals(xs[i], x)) return i;
  } else {
    for (let i = 0; i < xs.length; i++) if (equals(xs[i], x)) return i;
  }
  return -1;
}

function indexOf(args: Value[]): Value {
  const who = ".indexOf";
  if (args[0] instanceof Vec && args.length === 2) return vectorIndexOf(args[0], args[1], false);
  const s = methodTarget(who, args[0]);
  const sub = expectText(who, args[1], "a string (or character) to look for");
  const from = args.length > 2 ? intArg(who, args[2], "start index") : undefined;
  chargeScan(s.length);
  return findText(s, sub, from, false);
}

function lastIndexOf(args: Value[]): Value {
  const who = ".lastIndexOf";
  if (args[0] instanceof Vec && args.length === 2) return vectorIndexOf(args[0], args[1], true);
  const s = methodTarget(who, args[0]);
  const sub = expectText(who, args[1], "a string (or character) to look for");
  chargeScan(s.length);
  return findText(s, sub, args.length > 2 ? intArg(who, args[2], "start index") : undefined, true);
}

function substring(args: Value[]): Value {
  const who = ".substring";
  const s = methodTarget(who, args[0]);
  const start = intArg(who, args[1], "start index");
  chargeScan(s.length);
  const len = charCount(s);
  const end = args.length > 2 ? intArg(who, args[2], "end index") : len;
  if (start < 0 || start > len) throw outOfRange(who, `start index ${start}`, len);
  if (end > len) throw outOfRange(who, `end index ${end}`, len);
  if (start > end) throw new LispError("index_out_of_bounds", `${who}: start index ${start} is greater than end index ${end}`);
  return s.slice(charOffset(s, start), charOffset(s, end));
}

function charAt(args: Value[]): Value {
  const who = ".charAt";
  const s = methodTarget(who, args[0]);
  const i = intArg(who, args[1], "index");
  chargeScan(s.length);
  if (isSimpleText(s)) {
    if (i < 0 || i >= s.length) throw outOfRange(who, `index ${i}`, s.length);
    return s[i];
  }
  const cs = chars(s);
  if (i < 0 || i >= cs.length) throw outOfRange(who, `index ${i}`, cs.length);
  return cs[i];
}

/** Java's String.split: the separator is a regex, and trailing empty strings are removed. */
function split(args: Value[]): Value {
  const who = ".split";
  const s = methodTarget(who, args[0]);
  const pattern = expectText(who, args[1], "a regex pattern string");
  const limit = args.length > 2 ? intArg(who, args[2], "limit") : 0;
  const re = regexFromString(pattern, run.limits.maxRegexPatternLength, who);
  return Vec.fromArray<Value>(regexSplit(re, regexInput(who, re, s), limit, true));
}

// ---------------------------------------------------------------------------------------
// Dates

const DAY_MS = 86_400_000;
const MAX_DATE_MS = 8.64e15;
const ISO_DATE = /^([+-]?\d{4,6})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;
const RFC_2822 = /^(?:[A-Z][a-z]{2},\s+)?(\d{1,2})\s+([A-Z][a-z]{2})\s+(\d{4})\s+(\d{2}):(\d{2})(?::(\d{2}))?(?:\s+([+-]\d{4}|UT|GMT|Z))?$/;
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** Epoch ms for a UTC calendar time, or NaN when a field is out of range (Feb 30). */
function utc(year: number, month: number, day: number, h: number, min: number, sec: number, ms: number): number {
  if (month < 1 || month > 12 || day < 1 || h > 23 || min > 59 || sec > 59) return NaN;
  // setUTCFullYear, unlike Date.UTC, keeps years 0-99 as written.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(h, min, sec, ms);
  return d.getUTCDate() === day ? d.getTime() : NaN;
}

function offsetMs(zone: string | undefined): number {
  if (zone === undefined || /^(Z|UT|GMT)$/i.test(zone)) return 0;
  const digits = zone.replace(":", "");
  const sign = digits[0] === "-" ? -1 : 1;
  const h = Number(digits.slice(1, 3));
  const m = digits.length > 3 ? Number(digits.slice(3, 5)) : 0;
  return sign * (h * 60 + m) * 60_000;
}

/** Epoch ms of an ISO-8601 or RFC 2822 date; a time without an offset is UTC. NaN if unreadable. */
export function parseDate(s: string): number {
  const text = s.trim();
  let m = ISO_DATE.exec(text);
  if (m !== null) {
    const frac = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, "0"));
    const t = utc(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), frac);
    return t - offsetMs(m[8]);
  }
  m = RFC_2822.exec(text);
  if (m !== null) {
    const month = MONTHS.indexOf(m[2]) + 1;
    if (month === 0) return NaN;
    return utc(Number(m[3]), month, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0), 0) - offsetMs(m[7]);
  }
  return NaN;
}

const DATE_HINT = 'dates are ISO-8601 strings such as "2024-01-15" or "2024-01-15T10:30:00Z"';

function dateText(who: string, ms: number): string {
  if (!(Math.abs(ms) <= MAX_DATE_MS)) throw new LispError("value_error", `${who}: ${ms} ms is outside the representable date range`);
  return new Date(ms).toISOString();
}

function dateMs(who: string, x: Value): number {
  if (typeof x !== "string") {
    throw typeErr(`${who} expects a date (an ISO-8601 string), got ${describe(x)}`, typeof x === "number" ? "that is already a time in ms; (java.util.Date. ms) turns it into a date" : DATE_HINT);
  }
  const t = parseDate(x);
  if (Number.isNaN(t)) throw new LispError("value_error", `${who} cannot read ${JSON.stringify(clipped(x, 40))} as a date`, undefined, DATE_HINT);
  return t;
}

// The clock is read once per evaluation, so a program (and every pass of it) sees one "now".
function now(): number {
  return run.clock;
}

function newDate(args: Value[]): Value {
  const who = "java.util.Date.";
  if (args.length === 0) return dateText(who, now());
  const x = args[0];
  if (typeof x === "number") return dateText(who, Math.trunc(x));
  if (x instanceof LFloat) return dateText(who, x.v);
  if (typeof x === "string") return dateText(who, dateMs(who, x));
  throw typeErr(`${who} expects an ISO-8601 date string or epoch milliseconds, got ${describe(x)}`, DATE_HINT);
}

// ---------------------------------------------------------------------------------------

export const METHODS: BuiltinDef[] = [
  {
    name: ".indexOf",
    area: "interop",
    arity: [2, 3],
    params: "[s sub] [s sub from] [v x]",
    doc: "Java's String.indexOf: the character index of sub in s (at or after from), or -1. On a vector, the index of the first element equal to x, or -1.",
    examples: [
      ['(.indexOf "hello" "ll")', "2"],
      ['(.indexOf "hello" "x")', "-1"],
      ['(.indexOf [:a :b :c] :b)', "1"],
    ],
    fn: indexOf,
  },
  {
    name: ".lastIndexOf",
    area: "interop",
    arity: [2, 3],
    params: "[s sub] [s sub from] [v x]",
    doc: "Java's String.lastIndexOf: the character index of the last sub in s (at or before from), or -1. On a vector, the index of the last element equal to x.",
    examples: [
      ['(.lastIndexOf "hello" "l")', "3"],
      ['(.lastIndexOf [1 2 1] 1)', "2"],
    ],
    fn: lastIndexOf,
  },
  { name: ".toUpperCase", area: "interop", arity: [1, 1], params: "[s]", doc: "s in upper case.", examples: [['(.toUpperCase "abc")', '"ABC"']], fn: stringMethod(".toUpperCase", (s) => cased(s, true)) },
  { name: ".toLowerCase", area: "interop", arity: [1, 1], params: "[s]", doc: "s in lower case.", examples: [['(.toLowerCase "ABC")', '"abc"']], fn: stringMethod(".toLowerCase", (s) => cased(s, false)) },
  { name: ".trim", area: "interop", arity: [1, 1], params: "[s]", doc: "s without leading and trailing whitespace.", examples: [['(.trim "  a ")', '"a"']], fn: stringMethod(".trim", javaTrim) },
  { name: ".startsWith", area: "interop", arity: [2, 2], params: "[s prefix]", doc: "True if s begins with prefix.", examples: [['(.startsWith "hello" "he")', "true"]], fn: stringTest(".startsWith", (s, x) => s.startsWith(x)) },
  { name: ".endsWith", area: "interop", arity: [2, 2], params: "[s suffix]", doc: "True if s ends with suffix.", examples: [['(.endsWith "hello" "lo")', "true"]], fn: stringTest(".endsWith", (s, x) => s.endsWith(x)) },
  { name: ".contains", area: "interop", arity: [2, 2], params: "[s sub]", doc: "True if s contains sub.", examples: [['(.contains "hello" "ell")', "true"]], fn: stringTest(".contains", (s, x) => s.includes(x)) },
  { name: ".length", area: "interop", arity: [1, 1], params: "[s]", doc: "The number of characters in s (like count).", examples: [['(.length "héllo")', "5"]], fn: stringMethod(".length", charCount) },
  {
    name: ".substring",
    area: "interop",
    arity: [2, 3],
    params: "[s start] [s start end]",
    doc: "Java's String.substring: characters from start to end (exclusive); fails when an index is out of range.",
    examples: [
      ['(.substring "hello" 1 3)', '"el"'],
      ['(.substring "hello" 2)', '"llo"'],
    ],
    fn: substring,
  },
  { name: ".charAt", area: "interop", arity: [2, 2], params: "[s i]", doc: "The character at index i, as a one-character string.", examples: [['(.charAt "hello" 1)', '"e"']], fn: charAt },
  {
    name: ".split",
    area: "interop",
    arity: [2, 3],
    params: "[s regex-string] [s regex-string limit]",
    doc: "Java's String.split: splits s around matches of the regex pattern string, dropping trailing empty strings.",
    examples: [
      ['(.split "a,b,,c,," ",")', '["a" "b" "" "c"]'],
      ['(.split "a1b22c" "\\\\d+")', '["a" "b" "c"]'],
    ],
    fn: split,
  },
  {
    name: ".getTime",
    area: "interop",
    arity: [1, 1],
    params: "[date]",
    doc: "The date's time in milliseconds since 1970-01-01T00:00:00Z. Dates are ISO-8601 strings.",
    examples: [
      ['(.getTime (java.util.Date. "2024-01-15T00:00:00Z"))', "1705276800000"],
      ['(.getTime "1970-01-02")', String(DAY_MS)],
    ],
    fn: (a) => dateMs(".getTime", a[0]),
  },
  {
    name: "java.util.Date.",
    area: "interop",
    arity: [0, 1],
    params: "[] [ms-or-string]",
    doc: "A date as an ISO-8601 UTC string: now (fixed for the whole run), from epoch milliseconds, or from an ISO-8601 / RFC 2822 date string.",
    examples: [
      ["(java.util.Date. 0)", '"1970-01-01T00:00:00.000Z"'],
      ['(java.util.Date. "2024-01-15T10:30:00+02:00")', '"2024-01-15T08:30:00.000Z"'],
    ],
    fn: newDate,
  },
  {
    name: "currentTimeMillis",
    area: "interop",
    arity: [0, 0],
    params: "[]",
    doc: "The current time in ms since the epoch, fixed for the whole run.",
    examples: [["(= (System/currentTimeMillis) (.getTime (java.util.Date.)))", "true"]],
    ns: ["System"],
    unqualified: false,
    fn: () => now(),
  },
];
