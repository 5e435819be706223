// Regular expressions: re-find, re-matches, re-seq and friends, plus the scanning helpers
// the string functions share (split and replace with a regex). Patterns run on RE2, so
// matching is linear in the input; the pattern and input sizes are limited here.
import { LispError, typeErr } from "../errors.js";
import { call1 } from "../fn.js";
import { compiled, finder, type Finder, regexFromString, sizeOf } from "../regex.js";
import { charge, checkCollectionSize, checkStringLength, limitError, run, tick, took } from "../runtime.js";
import { Fn, LFloat, Regex, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, strValue } from "./args.js";
import type { BuiltinDef } from "./registry.js";

const NIL_HINT = "a nil usually means a missing key or an empty result; check it first, e.g. (when s (re-find re s))";

/** A regex value, or a pattern string compiled (and cached) under the run's pattern limit. */
function toRegex(who: string, x: Value): Regex {
  if (x instanceof Regex) return x;
  if (typeof x === "string") return regexFromString(x, run.limits.maxRegexPatternLength, who);
  throw typeErr(`${who} expects a regex (re-pattern or #"...") or a pattern string, got ${describe(x)}`);
}

/**
 * The text `re` will scan: a string within the input limit, charged up front for the most the
 * scan may cost. RE2 is linear in the text but may step every instruction of the compiled
 * program at each character, and a short pattern can compile to thousands ((?:a?){999}): the
 * charge is the characters times the program's size, so no single match, inside which the
 * clock is not read, runs past the fuel limit.
 */
export function regexInput(who: string, re: Regex, x: Value): string {
  if (typeof x !== "string") {
    throw typeErr(`${who} expects a string to search, got ${describe(x)}`, x === null ? NIL_HINT : x instanceof Regex ? `the regex comes first: (${who} #"..." s)` : undefined);
  }
  const max = run.limits.maxRegexInputLength;
  if (x.length > max) {
    throw limitError("regex_limit_exceeded", `${who}: a regex may scan at most ${max} characters, got a string of ${x.length}`, "split the text first (split-lines, subs) and match the pieces");
  }
  const size = sizeOf(re);
  const cost = (x.length + 1) * size;
  if (cost > run.fuel) {
    const left = Math.max(0, run.fuel);
    // Spent, as when a charge runs out: the run used its whole budget.
    run.fuel = -1;
    throw limitError(
      "fuel_exhausted",
      `${who}: a regex of ${size} instructions over ${x.length + 1} characters may take ${cost} evaluation steps, more than the ${left} left of ${run.limits.maxFuel}`,
      "use a simpler pattern (fewer counted repetitions like {999}), or match smaller pieces of the text",
    );
  }
  charge(cost);
  return x;
}

/** The current match as Clojure shows it: the matched text, or [whole g1 g2 ...] with groups. */
function matchValue(m: Finder, groups: number): Value {
  if (groups === 0) return m.group(0);
  const out = new Array<Value>(groups + 1);
  for (let i = 0; i <= groups; i++) out[i] = m.group(i);
  return Vec.fromArray(out);
}

/** Before a match is added: the size limit, and the clock every 4,096 matches (the input was charged up front). */
function grow(out: unknown[]): void {
  if (out.length >= run.limits.maxCollectionSize) checkCollectionSize(out.length + 1);
  tick(out.length);
}

function findFirst(re: Regex, s: string): Value {
  const m = finder(re, s);
  return m.find() ? matchValue(m, m.groupCount()) : null;
}

function allMatches(re: Regex, s: string): Value[] {
  const m = finder(re, s);
  const groups = m.groupCount();
  const out: Value[] = [];
  while (m.find()) {
    grow(out);
    out.push(matchValue(m, groups));
  }
  return out;
}

/**
 * Splits around the matches. With `java`, as Java's Pattern.split (clojure.string/split,
 * .split): an empty match at the start makes no piece, one at the end leaves an empty last
 * piece, and a `limit` of 0 drops the trailing empty pieces. Without (re-split), every empty
 * piece is kept except that an empty match at either end makes none, so #"" splits into
 * characters. A positive `limit` caps the number of pieces; the last one holds the rest of the text.
 */
export function regexSplit(re: Regex, s: string, limit: number, java: boolean): string[] {
  const m = finder(re, s);
  const out: string[] = [];
  let last = 0;
  while ((limit <= 0 || out.length < limit - 1) && m.find()) {
    const start = m.start();
    const end = m.end();
    if (start === end && (end === 0 || (!java && start === s.length))) continue;
    grow(out);
    out.push(s.slice(last, start));
    last = end;
  }
  out.push(s.slice(last));
  // Java returns a text without any match whole, even when it is empty.
  if (java && limit === 0 && out.length > 1) while (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out;
}

// A replacement string is parsed once into literal text and group numbers, with Java's
// rules: $n (as many digits as still name a group), ${name}, and \x for a literal x.
type Template = Array<string | number>;

function replacementError(rep: string, detail: string): LispError {
  return new LispError("regex_error", `invalid replacement ${JSON.stringify(rep)}: ${detail}`, undefined, "refer to groups as $1 or ${name}; write \\\\$ for a literal dollar sign");
}

/** A part of a replacement string as an error quotes it: taken from it (a part of a hidden one is hidden too) and in quotes, where one too short to be looked for bare is found. */
function quotedPart(rep: string, part: string): string {
  return JSON.stringify(took(rep, part));
}

function parseTemplate(rep: string, groups: number, named: Record<string, number>): Template {
  const parts: Template = [];
  let text = "";
  for (let i = 0; i < rep.length; i++) {
    const c = rep[i];
    if (c === "\\") {
      if (i + 1 >= rep.length) throw replacementError(rep, "it ends with a lone backslash");
      text += rep[++i];
      continue;
    }
    if (c !== "$") {
      text += c;
      continue;
    }
    let group: number;
    if (rep[i + 1] === "{") {
      const close = rep.indexOf("}", i + 2);
      if (close < 0) throw replacementError(rep, "${ is not closed");
      const name = rep.slice(i + 2, close);
      if (!Object.hasOwn(named, name)) throw replacementError(rep, `the regex has no group named ${quotedPart(rep, name)}`);
      group = named[name];
      i = close;
    } else {
      let j = i + 1;
      if (j >= rep.length || rep[j] < "0" || rep[j] > "9") throw replacementError(rep, "$ must be followed by a group number or {name}");
      group = rep.charCodeAt(j++) - 48;
      while (j < rep.length && rep[j] >= "0" && rep[j] <= "9" && group * 10 + rep.charCodeAt(j) - 48 <= groups) group = group * 10 + rep.charCodeAt(j++) - 48;
      if (group > groups) throw replacementError(rep, `the regex has no group ${quotedPart(rep, rep.slice(i, j))} (it has ${groups})`);
      i = j - 1;
    }
    if (text !== "") parts.push(text);
    text = "";
    parts.push(group);
  }
  if (text !== "") parts.push(text);
  return parts;
}

/** Replaces the first or every match with a template string or the result of (f match). */
export function regexReplace(who: string, re: Regex, s: string, rep: Value, all: boolean): string {
  const pattern = compiled(re);
  const m = finder(re, s);
  const groups = m.groupCount();
  let template: Template | null = null;
  if (typeof rep === "string") template = parseTemplate(rep, groups, pattern.namedGroups());
  else if (!(rep instanceof Fn)) throw typeErr(`${who} with a regex expects a replacement string or a function of the match, got ${describe(rep)}`);
  const max = run.limits.maxStringLength;
  let out = "";
  let last = 0;
  for (let i = 0; m.find(); i++) {
    tick(i);
    out += s.slice(last, m.start());
    if (template !== null) {
      for (const p of template) out += typeof p === "number" ? (m.group(p) ?? "") : p;
    } else {
      charge(1);
      out += strValue(call1(rep, matchValue(m, groups)));
    }
    if (out.length > max) checkStringLength(out.length);
    last = m.end();
    if (!all) break;
  }
  if (last === 0 && out === "") return s;
  out += s.slice(last);
  checkStringLength(out.length);
  return out;
}

function groupIndex(who: string, x: Value): number {
  if (typeof x === "number" && Number.isInteger(x)) return x;
  if (x instanceof LFloat) return x.v;
  throw typeErr(`${who} expects a group number (0 for the whole match), got ${describe(x)}`);
}

function extract(who: string, pattern: Value, s: Value, group: Value): Value {
  const re = toRegex(who, pattern);
  const text = regexInput(who, re, s);
  const g = groupIndex(who, group);
  const m = finder(re, text);
  if (!m.find() || g < 0 || g > m.groupCount()) return null;
  return m.group(g);
}

const INTEGER = /^[+-]?\d+$/;

function extractInt(args: Value[]): Value {
  const dflt = args.length > 3 ? args[3] : null;
  const text = extract("extract-int", args[0], args[1], args.length > 2 ? args[2] : 1);
  if (typeof text !== "string" || !INTEGER.test(text)) return dflt;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n || 0 : dflt;
}

export const REGEX: BuiltinDef[] = [
  {
    name: "re-pattern",
    area: "regex",
    arity: [1, 1],
    params: "[s]",
    doc: "Compiles a pattern string into a regex (RE2 syntax: no backreferences or lookaround). #\"...\" literals work too.",
    examples: [['(re-find (re-pattern "\\\\d+") "abc123")', '"123"']],
    fn: (a) => toRegex("re-pattern", a[0]),
  },
  {
    name: "re-find",
    area: "regex",
    arity: [2, 2],
    params: "[re s]",
    doc: "The first match of re in s: the matched string, or [whole group1 ...] when re has groups; nil if none.",
    examples: [
      ['(re-find #"\\d+" "v1.25")', '"1"'],
      ['(re-find #"(\\d+)-(\\d+)" "10-20")', '["10-20" "10" "20"]'],
    ],
    fn: (a) => {
      const re = toRegex("re-find", a[0]);
      return findFirst(re, regexInput("re-find", re, a[1]));
    },
  },
  {
    name: "re-matches",
    area: "regex",
    arity: [2, 2],
    params: "[re s]",
    doc: "Like re-find, but re must match the whole of s; nil otherwise.",
    examples: [
      ['(re-matches #"\\d+" "123")', '"123"'],
      ['(re-matches #"\\d+" "123abc")', "nil"],
    ],
    fn: (a) => {
      const re = toRegex("re-matches", a[0]);
      const m = compiled(re).matcher(regexInput("re-matches", re, a[1]));
      return m.matches() ? matchValue(m, m.groupCount()) : null;
    },
  },
  {
    name: "re-seq",
    area: "regex",
    arity: [2, 2],
    params: "[re s]",
    doc: "Every match of re in s, as a vector (each match a string, or a [whole group1 ...] vector with groups).",
    examples: [
      ['(re-seq #"\\d+" "a1b22c333")', '["1" "22" "333"]'],
      ['(re-seq #"(\\w)=(\\d)" "a=1 b=2")', '[["a=1" "a" "1"] ["b=2" "b" "2"]]'],
    ],
    // nil when nothing matches, as in Clojure, so (if-let [ms (re-seq ...)] ...) works.
    fn: (a) => {
      const re = toRegex("re-seq", a[0]);
      const matches = allMatches(re, regexInput("re-seq", re, a[1]));
      return matches.length === 0 ? null : Vec.fromArray(matches);
    },
  },
  {
    name: "re-split",
    area: "regex",
    arity: [2, 3],
    params: "[re s] [re s limit]",
    doc: "Splits s around matches of re, keeping empty pieces; at most limit pieces.",
    examples: [
      ['(re-split #"\\s+" "a  b   c")', '["a" "b" "c"]'],
      ['(re-split #"," "a,,b")', '["a" "" "b"]'],
    ],
    fn: (a) => {
      const re = toRegex("re-split", a[0]);
      const s = regexInput("re-split", re, a[1]);
      const limit = a.length > 2 ? groupLimit("re-split", a[2]) : 0;
      return Vec.fromArray<Value>(regexSplit(re, s, limit, false));
    },
  },
  {
    name: "regex?",
    area: "regex",
    arity: [1, 1],
    params: "[x]",
    doc: "True for a regex.",
    examples: [
      ['(regex? #"a+")', "true"],
      ['(regex? "a+")', "false"],
    ],
    fn: (a) => a[0] instanceof Regex,
    f1: (x) => x instanceof Regex,
  },
  {
    name: "extract",
    area: "regex",
    arity: [2, 3],
    params: "[re s] [re s group]",
    doc: "Group `group` (default 1; 0: whole match) of re's first match in s, or nil; re may be a string.",
    examples: [
      ['(extract "ID:(\\\\d+)" "ID:42")', '"42"'],
      ['(extract #"x=(\\d+) y=(\\d+)" "x=10 y=20" 2)', '"20"'],
      ['(extract #"ID:(\\d+)" "none")', "nil"],
    ],
    fn: (a) => extract("extract", a[0], a[1], a.length > 2 ? a[2] : 1),
  },
  {
    name: "extract-int",
    area: "regex",
    arity: [2, 4],
    params: "[re s] [re s group] [re s group default]",
    doc: "extract, parsed as an integer; else default (nil).",
    examples: [
      ['(extract-int #"age=(\\d+)" "age=25")', "25"],
      ['(extract-int #"age=(\\d+)" "unknown" 1 0)', "0"],
    ],
    fn: extractInt,
  },
];

function groupLimit(who: string, x: Value): number {
  if (typeof x === "number" && Number.isInteger(x)) return x;
  throw typeErr(`${who} expects an integer limit, got ${describe(x)}`);
}
