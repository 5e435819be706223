// Regular expressions run on RE2 (re2js): matching time is linear in the input, so no
// pattern can backtrack catastrophically. Backreferences and lookaround are not supported.
import { type Matcher, RE2JS } from "re2js";
import { LispError } from "./errors.js";
import { chargeIfRunning, checkClockIfRunning, took } from "./runtime.js";
import { Regex } from "./values.js";

/**
 * Compiles a Java pattern for RE2. `spend` is told first what compiling costs beyond the program's
 * instructions (see `Rewritten.work`): a caller charges it, so a limit stops a compile that would
 * run long before it starts, since nothing reads the clock inside RE2.
 */
export function compileRegex(source: string, spend?: (work: number) => void): Regex {
  const re2 = re2Source(source);
  if (re2.work > 0) spend?.(re2.work);
  try {
    const whole = RE2JS.compile(re2.whole);
    if (re2.ends.length === 0 && re2.starts.length === 0) return new Regex(source, { whole, search: null, ends: [], starts: [], breaks: [], groups: [] });
    const search = RE2JS.compile(re2.search);
    // The pattern's group i is group groups[i] of the search program, which has the added groups too.
    const groups = [0];
    for (let g = 1; g <= search.groupCount(); g++) if (!re2.ends.includes(g) && !re2.starts.includes(g) && !re2.breaks.includes(g)) groups.push(g);
    return new Regex(source, { whole, search, ends: re2.ends, starts: re2.starts, breaks: re2.breaks, groups });
  } catch (e) {
    // Quoted as written: the . this file spells as a class reads as a . again.
    let detail = (e instanceof Error ? e.message : String(e)).replaceAll(JAVA_DOT, ".");
    // RE2 quotes the part it could not read (`[mQ8sLd2`): a part of a hidden pattern is hidden
    // too, and quoted as the pattern is, in double quotes, where one too short to be looked for
    // bare ("[Z") is found.
    const quote = detail.indexOf("`");
    if (quote >= 0 && detail.endsWith("`")) {
      const part = took(source, detail.slice(quote + 1, -1)) as string;
      detail = `${detail.slice(0, quote)}"${part}"`;
    }
    // RE2 says "invalid character class range" for a \p{...} it does not know: name what it knows.
    const hint = /"\\[pP]/.test(detail)
      ? "RE2 knows Unicode categories and scripts (\\p{L}, \\p{Lu}, \\p{N}, \\p{P}, \\p{Greek}) and the POSIX classes (\\p{Alpha}, \\p{Punct}), not Java's \\p{Is...}, \\p{In...} or \\p{java...}"
      : "regexes use RE2 syntax: no backreferences (\\1) or lookaround ((?=...), (?!...))";
    throw new LispError("regex_error", `invalid regex #"${source}": ${detail}`, undefined, hint);
  }
}

/** Java's POSIX classes (\p{Alpha}), ASCII-only as in Java, by RE2's names for them. */
const POSIX: Readonly<Record<string, string>> = {
  Lower: "lower",
  Upper: "upper",
  ASCII: "ascii",
  Alpha: "alpha",
  Digit: "digit",
  Alnum: "alnum",
  Punct: "punct",
  Graph: "graph",
  Print: "print",
  Blank: "blank",
  Cntrl: "cntrl",
  XDigit: "xdigit",
  Space: "space",
};

const HEX4 = /^[0-9a-fA-F]{4}$/;

/**
 * A Java pattern as RE2 reads it: the escapes Java spells its own way rewritten to RE2's
 * (\uXXXX, a surrogate pair of them being one character, to \x{...}; \p{Alpha} and \P{Alpha}
 * to [[:alpha:]] and [^[:alpha:]], [:alpha:] and [:^alpha:] inside a class; . outside (?s) to a
 * class of every character but Java's line terminators, where RE2's . stops only at \n; for
 * searches, a $ that ends an alternative to one that also takes a last line terminator, or in
 * (?m) any, which the search gives back: see JavaMatcher; under (?i) without Java's u, which RE2
 * does not know, characters and classes RE2 would fold beyond ASCII to case-sensitive groups). Refused
 * (regex_error), because RE2 would match other text without a word: a class holding an
 * unescaped [ (not a POSIX [:name:]) or &&, Java's nested classes and intersections, which RE2
 * reads as literal characters (so [a-z&&[^b]] would match nothing a Java reader expects); and
 * the flag U, Java's Unicode classes, which RE2 reads as making every repetition lazy.
 */
function re2Source(source: string): Rewritten {
  if (source.indexOf("[") < 0 && source.indexOf("\\") < 0 && source.indexOf("(?") < 0 && source.indexOf(".") < 0 && source.indexOf("$") < 0) {
    return { whole: source, search: source, ends: [], starts: [], breaks: [], work: 0 };
  }
  // Each rewrite: [at, length, text, whether only the search program has it].
  const edits: Array<[number, number, string, boolean]> = [];
  const ends: number[] = [];
  const starts: number[] = [];
  const breaks: number[] = [];
  let captures = 0;
  let work = 0;
  let inClass = false;
  // The flags s (. matches every character), m (^ and $ at lines), i and u (case) here, as bits, and what they were outside each open group.
  let mode = 0;
  const outer: number[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      const next = source[i + 1];
      // \Q...\E quotes its text. RE2 reads it outside a class only, and folds its letters with
      // Unicode case: written out as escaped characters where that differs from Java.
      if (next === "Q") {
        const end = source.indexOf("\\E", i + 2);
        if (end < 0) break;
        const quoted = source.slice(i + 2, end);
        const ascii = !inClass && (mode & ASCII_CASE) === CASE_INSENSITIVE;
        if (inClass || (ascii && Array.from(quoted).some((c) => foldsBeyondAscii(c.codePointAt(0) as number)))) {
          edits.push([i, end + 2 - i, quotedText(quoted, ascii), false]);
        }
        i = end + 1;
        continue;
      }
      let written: string | null = null;
      let length = 0;
      const ascii = !inClass && (mode & ASCII_CASE) === CASE_INSENSITIVE;
      const literal = escapedCharacter(source, i);
      if (literal !== null) {
        length = literal.length;
        if (ascii && foldsBeyondAscii(literal.code)) written = `(?-i:${caseVariants(String.fromCodePoint(literal.code))})`;
        else if (next === "u") written = hexEscape(literal.code);
      } else if (!inClass && (mode & CASE_INSENSITIVE) !== 0 && (next === "w" || next === "W")) {
        // Java's \w is [a-zA-Z_0-9] under (?i) and (?iu) too; RE2's (?i)\w also takes the long s and the Kelvin sign.
        written = `(?-i:\\${next})`;
        length = 2;
      } else if ((next === "p" || next === "P") && source[i + 2] === "{") {
        const close = source.indexOf("}", i + 3);
        const name = close < 0 ? "" : source.slice(i + 3, close);
        if (Object.hasOwn(POSIX, name)) {
          const not = next === "P" ? "^" : "";
          written = inClass ? `[:${not}${POSIX[name]}:]` : `[${not}[:${POSIX[name]}:]]`;
          length = close + 1 - i;
        } else {
          work += UNICODE_TABLE_WORK;
          // The name is RE2's to read, not letters for (?i) to fold.
          if (close >= 0) {
            i = close;
            continue;
          }
        }
      } else if (next === "p" || next === "P") {
        work += UNICODE_TABLE_WORK;
        i += 2;
        continue;
      }
      if (written === null) {
        i += Math.max(1, length - 1);
        continue;
      }
      edits.push([i, length, written, false]);
      i += length - 1;
    } else if (!inClass) {
      if (c === "(" && source[i + 1] === "?" && unicodeClassFlag(source, i + 2)) {
        throw new LispError("regex_error", `invalid regex #"${source}": the flag (?U) is Java's Unicode classes, which RE2 reads as making every repetition lazy`, undefined, "drop the U and name Unicode classes directly: \\p{L} for letters, \\p{N} for digits, [\\p{L}\\p{N}_] for word characters");
      }
      if (c === "(") {
        const flags = source[i + 1] === "?" ? /^[a-zA-Z]*(?:-[a-zA-Z]*)?([):])/.exec(source.slice(i + 2, i + 20)) : null;
        if (flags === null) {
          outer.push(mode);
          if (source[i + 1] !== "?" || source[i + 2] === "P" || (source[i + 2] === "<" && source[i + 3] !== "=" && source[i + 3] !== "!")) {
            captures++;
            // A group's name (?<name> or (?P<name> is not letters for (?i) to fold.
            const name = /^\?P?<[A-Za-z_][A-Za-z0-9_]*>/.exec(source.slice(i + 1, i + 200));
            if (name !== null) i += name[0].length;
          }
          continue;
        }
        // (?flags) holds for the rest of the enclosing group, (?flags:...) for its own group.
        if (flags[1] === ":") outer.push(mode);
        mode = setsFlags(flags[0], mode);
        // RE2 has no u (Java's UNICODE_CASE): this file does it (foldsBeyondAscii), and RE2 gets the rest.
        if (flags[0].includes("u")) edits.push([i, 2 + flags[0].length, withoutU(flags[0]), false]);
        i += 1 + flags[0].length;
        continue;
      }
      if (c === ")") {
        mode = outer.pop() ?? mode;
        continue;
      }
      if (c === "." && (mode & DOT_ALL) === 0) {
        // RE2's . stops only at \n; Java's at every line terminator, so CRLF text's \r is never matched.
        edits.push([i, 1, JAVA_DOT, false]);
        continue;
      }
      if (c === "$" && endsAlternative(source, i + 1)) {
        // Java's $ is also true before a last line terminator ((?m): before any), where RE2's is
        // only at the end ((?m): only before \n). A search takes the terminator in a group of its
        // own and gives it back (JavaMatcher); a whole match (re-matches) must end at the end anyway.
        captures++;
        ends.push(captures);
        edits.push([i, 1, (mode & MULTI_LINE) === 0 ? `(${JAVA_EOL})?\\z` : `(?:(${JAVA_EOL})|\\z)`, true]);
        continue;
      }
      if (c === "^" && (mode & MULTI_LINE) !== 0) {
        // Java's (?m)^ is never true at the very end, where RE2's is after a last \n: a search
        // marks where it was true with an empty group, and a match that had it at the end is none.
        // Java's is also true after a \r (not inside \r\n), \u0085, \u2028 or \u2029, where
        // RE2's is not: a search may take that terminator in a group and give it back (JavaMatcher).
        starts.push(++captures);
        breaks.push(++captures);
        edits.push([i, 1, `(?:^()|(${JAVA_BREAK}))`, true]);
        continue;
      }
      if (c !== "[") {
        if ((mode & ASCII_CASE) === CASE_INSENSITIVE) {
          const code = source.codePointAt(i) as number;
          if (foldsBeyondAscii(code)) {
            const length = code > 0xffff ? 2 : 1;
            edits.push([i, length, `(?-i:${caseVariants(source.slice(i, i + length))})`, false]);
            i += length - 1;
          }
        }
        continue;
      }
      const folded = (mode & ASCII_CASE) === CASE_INSENSITIVE ? asciiCaseClass(source, i) : null;
      if (folded !== null) {
        edits.push([i, folded.end + 1 - i, folded.text, false]);
        i = folded.end;
        continue;
      }
      if ((mode & CASE_INSENSITIVE) !== 0) work += foldWork(source, i);
      inClass = true;
      // A ] first in the class (after an optional ^) is a literal.
      if (source[i + 1] === "^") i++;
      if (source[i + 1] === "]") i++;
    } else if (c === "]") {
      inClass = false;
    } else if (c === "[") {
      const end = source[i + 1] === ":" ? source.indexOf(":]", i + 2) : -1;
      if (end < 0) throw nestedClass(source);
      i = end + 1;
    } else if (c === "&" && source[i + 1] === "&") {
      throw nestedClass(source);
    }
  }
  const whole = applyEdits(source, edits, false);
  const same = ends.length === 0 && starts.length === 0;
  // A search program of its own is compiled too, with the same classes.
  return { whole, search: same ? whole : applyEdits(source, edits, true), ends, starts, breaks, work: same ? work : 2 * work };
}

/** A Java pattern rewritten for RE2: for whole matches, for searches, the groups of `search` that hold a line terminator a $ took, the empty groups that mark where a (?m)^ was true, and those holding the terminator a (?m)^ follows where RE2's is not true. */
interface Rewritten {
  whole: string;
  search: string;
  ends: number[];
  starts: number[];
  breaks: number[];
  /**
   * What compiling the programs costs beyond their instructions, in units of about 0.1 µs: the
   * characters of the classes RE2 folds one at a time (`foldWork`), and a table for each Unicode class.
   */
  work: number;
}

function applyEdits(source: string, edits: ReadonlyArray<[number, number, string, boolean]>, search: boolean): string {
  let out = "";
  let copied = 0;
  for (const [at, length, text, searchOnly] of edits) {
    if (searchOnly && !search) continue;
    out += source.slice(copied, at) + text;
    copied = at + length;
  }
  return copied === 0 ? source : out + source.slice(copied);
}

/** Whether what follows a $ at `from` is only the ends of groups, then another alternative or the end of the pattern: no match goes on past it. */
function endsAlternative(source: string, from: number): boolean {
  let j = from;
  while (source[j] === ")") j++;
  return j === source.length || source[j] === "|";
}

/** Java's line terminators, \r\n first as one. */
const JAVA_EOL = "\\r\\n|[\\n\\r\\x{85}\\x{2028}\\x{2029}]";

/** Java's line terminators after which its (?m)^ is true and RE2's is not. */
const JAVA_BREAK = "[\\r\\x{85}\\x{2028}\\x{2029}]";

/** Java's . outside (?s): any character but its line terminators. */
const JAVA_DOT = "[^\\n\\r\\x{85}\\x{2028}\\x{2029}]";

const DOT_ALL = 1;
const MULTI_LINE = 2;
const CASE_INSENSITIVE = 4;
const UNICODE_CASE = 8;
const ASCII_CASE = CASE_INSENSITIVE | UNICODE_CASE;

/**
 * Whether RE2's (?i), which folds Unicode case, would match more for this character than Java's
 * (?i) without u, which folds only ASCII letters: any cased character beyond ASCII, and k and s,
 * which RE2 also matches with the Kelvin sign and the long s.
 */
function foldsBeyondAscii(code: number): boolean {
  if (code < 0x80) return KS.includes(code);
  const c = String.fromCodePoint(code);
  return c.toLowerCase() !== c || c.toUpperCase() !== c;
}

/** The character as Java's ASCII-only (?i) matches it, for a case-sensitive group: k and s with their other case. */
function caseVariants(c: string): string {
  return c.length === 1 && c.charCodeAt(0) < 0x80 ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c;
}

/** A character written as an escape at `at` (\uhhhh, a surrogate pair of them, \xhh or \x{h...}), with the escape's length; null for any other. */
function escapedCharacter(source: string, at: number): { code: number; length: number } | null {
  const next = source[at + 1];
  if (next === "u" && HEX4.test(source.slice(at + 2, at + 6))) {
    const code = parseInt(source.slice(at + 2, at + 6), 16);
    if (code >= 0xd800 && code <= 0xdbff && source[at + 6] === "\\" && source[at + 7] === "u" && HEX4.test(source.slice(at + 8, at + 12))) {
      const low = parseInt(source.slice(at + 8, at + 12), 16);
      if (low >= 0xdc00 && low <= 0xdfff) return { code: 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00), length: 12 };
    }
    return { code, length: 6 };
  }
  if (next !== "x") return null;
  const hex = source[at + 2] === "{" ? /^\{([0-9a-fA-F]{1,6})\}/.exec(source.slice(at + 2, at + 11)) : /^([0-9a-fA-F]{2})/.exec(source.slice(at + 2, at + 4));
  if (hex === null) return null;
  const code = parseInt(hex[1], 16);
  return code > 0x10ffff ? null : { code, length: 2 + hex[0].length };
}

const hexEscape = (code: number): string => `\\x{${code.toString(16)}}`;

const ASCII_PUNCTUATION = /^[!-/:-@[-`{-~]$/;

/** The characters \t, \n, \r, \f and \a stand for, as written escaped in a class. */
const CONTROL_ESCAPES: Readonly<Record<string, number>> = { t: 9, n: 10, r: 13, f: 12, a: 7 };

/**
 * An item of a class at `at` that asciiCaseClass can rewrite: a character (as written, or an
 * escape for one, then written as RE2 reads it) with its code, or a class escape (\d, \w...),
 * whose code is -1; null for anything else (a POSIX name, \p{...}, a nested class).
 */
function classItem(source: string, at: number): { code: number; end: number; text: string } | null {
  const c = source[at];
  if (c === "[" || c === "&") return null;
  if (c !== "\\") {
    const code = source.codePointAt(at) as number;
    const end = at + (code > 0xffff ? 2 : 1);
    return { code, end, text: source.slice(at, end) };
  }
  const next = source[at + 1] ?? "";
  const literal = escapedCharacter(source, at);
  if (literal !== null) return { code: literal.code, end: at + literal.length, text: hexEscape(literal.code) };
  if ("dDsSwW".includes(next)) return { code: -1, end: at + 2, text: source.slice(at, at + 2) };
  if (Object.hasOwn(CONTROL_ESCAPES, next)) return { code: CONTROL_ESCAPES[next], end: at + 2, text: source.slice(at, at + 2) };
  // An escaped punctuation character is itself.
  if (ASCII_PUNCTUATION.test(next)) return { code: next.charCodeAt(0), end: at + 2, text: source.slice(at, at + 2) };
  return null;
}

/** Text quoted with \Q...\E as characters RE2 reads literally, in a class or not: ASCII punctuation escaped, and under Java's ASCII-only (?i) (`ascii`) a character RE2 would fold further in a case-sensitive group. */
function quotedText(text: string, ascii: boolean): string {
  let out = "";
  for (const c of text) {
    if (ascii && foldsBeyondAscii(c.codePointAt(0) as number)) out += `(?-i:${caseVariants(c)})`;
    else out += ASCII_PUNCTUATION.test(c) ? `\\${c}` : c;
  }
  return out;
}

/** K, S, k and s: RE2's (?i) also matches them with the Kelvin sign and the long s. */
const KS = [0x4b, 0x53, 0x6b, 0x73];

/**
 * A class at `at` (its [) as Java's ASCII-only (?i) reads it, for RE2, which would fold it with
 * Unicode case: case-sensitive, with the other case of its ASCII letters added (\w and the other
 * class escapes are the same either way in Java). Null when RE2's folding gives the same (only
 * ASCII, no k or s), and for classes with POSIX names, \p{...} or a leading ] or -, which keep
 * RE2's folding.
 */
function asciiCaseClass(source: string, at: number): { end: number; text: string } | null {
  let j = at + 1;
  const not = source[j] === "^" ? "^" : "";
  j += not.length;
  if (source[j] === "]" || source[j] === "-") return null;
  let extra = "";
  let body = "";
  let differs = false;
  while (j < source.length && source[j] !== "]") {
    const item = classItem(source, j);
    if (item === null) return null;
    j = item.end;
    body += item.text;
    if (item.code < 0) {
      differs ||= item.text === "\\w" || item.text === "\\W";
      continue;
    }
    const lo = item.code;
    let hi = lo;
    if (source[j] === "-" && j + 1 < source.length && source[j + 1] !== "]") {
      const upper = classItem(source, j + 1);
      if (upper === null || upper.code < 0) return null;
      hi = upper.code;
      j = upper.end;
      body += `-${upper.text}`;
    }
    differs ||= hi >= 0x80 || KS.some((c) => lo <= c && c <= hi);
    for (const [from, to, shift] of [[0x61, 0x7a, -0x20], [0x41, 0x5a, 0x20]]) {
      const a = Math.max(lo, from);
      const b = Math.min(hi, to);
      if (a <= b) extra += `${String.fromCharCode(a + shift)}-${String.fromCharCode(b + shift)}`;
    }
  }
  if (j >= source.length || !differs) return null;
  return { end: j, text: `(?-i:[${not}${extra}${body}])` };
}

// A Unicode class (\p{L}, \PL, \p{Greek}) is a table RE2 copies, sorts and, under (?i), merges with
// its case variants: up to about 100 µs each.
const UNICODE_TABLE_WORK = 1_000;

// The characters re2js folds case for (its Unicode.MIN_FOLD and MAX_FOLD): a class range under
// (?i) is folded one character at a time over the part of it in this span, unless it covers all of it.
const MIN_FOLD = 0x41;
const MAX_FOLD = 0x1e943;

/**
 * The characters RE2 folds one at a time for the class at `at` (its [) under (?i): the part of
 * each range (a-z, \x{100}-\x{FFFF}) inside the fold span. Class escapes (\w, \p{L}) and POSIX
 * names are tables, not ranges; a single character is one.
 */
function foldWork(source: string, at: number): number {
  let j = at + 1;
  if (source[j] === "^") j++;
  let work = 0;
  let first = true;
  while (j < source.length && (source[j] !== "]" || first)) {
    first = false;
    const lo = classRune(source, j);
    j = lo.next;
    if (lo.code < 0 || source[j] !== "-" || j + 1 >= source.length || source[j + 1] === "]") {
      work++;
      continue;
    }
    const hi = classRune(source, j + 1);
    j = hi.next;
    if (hi.code < 0 || (lo.code <= MIN_FOLD && hi.code >= MAX_FOLD)) continue;
    work += Math.max(0, Math.min(hi.code, MAX_FOLD) - Math.max(lo.code, MIN_FOLD) + 1);
  }
  return work;
}

const ESCAPED: Readonly<Record<string, number>> = { t: 9, n: 10, r: 13, f: 12, a: 7, e: 27 };

/** The character a class item at `at` stands for (-1 for a class escape or a POSIX name), and where the next item starts. */
function classRune(source: string, at: number): { code: number; next: number } {
  if (source.startsWith("[:", at)) {
    const end = source.indexOf(":]", at + 2);
    return { code: -1, next: end < 0 ? source.length : end + 2 };
  }
  if (source[at] !== "\\") {
    const code = source.codePointAt(at) as number;
    return { code, next: at + (code > 0xffff ? 2 : 1) };
  }
  const e = source[at + 1] ?? "";
  const hex = (from: number, to: number): { code: number; next: number } => ({ code: parseInt(source.slice(from, to), 16) || 0, next: to });
  if (e === "x" && source[at + 2] === "{") {
    const close = source.indexOf("}", at + 3);
    return close < 0 ? { code: -1, next: source.length } : { ...hex(at + 3, close), next: close + 1 };
  }
  if (e === "x") return hex(at + 2, at + 4);
  if (e === "u" && HEX4.test(source.slice(at + 2, at + 6))) {
    const high = parseInt(source.slice(at + 2, at + 6), 16);
    const low = source.startsWith("\\u", at + 6) && HEX4.test(source.slice(at + 8, at + 12)) ? parseInt(source.slice(at + 8, at + 12), 16) : -1;
    if (high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff) return { code: 0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00), next: at + 12 };
    return { code: high, next: at + 6 };
  }
  if (e === "p" || e === "P") {
    const close = source[at + 2] === "{" ? source.indexOf("}", at + 3) : at + 2;
    return { code: -1, next: close < 0 ? source.length : close + 1 };
  }
  if (/^[dDwWsShHvV]$/.test(e)) return { code: -1, next: at + 2 };
  if (e === "0") {
    const digits = /^[0-7]{1,3}/.exec(source.slice(at + 2, at + 5))?.[0] ?? "";
    return { code: parseInt(digits || "0", 8), next: at + 2 + digits.length };
  }
  if (e === "c") return { code: (source.charCodeAt(at + 2) || 0) ^ 64, next: at + 3 };
  if (Object.hasOwn(ESCAPED, e)) return { code: ESCAPED[e], next: at + 2 };
  const code = source.codePointAt(at + 1) ?? 0;
  return { code, next: at + 1 + (code > 0xffff ? 2 : 1) };
}

/** A flag group ("(?iu)", "(?u:") without Java's u, which RE2 does not know; nothing for (?u) alone. */
function withoutU(flags: string): string {
  const end = flags[flags.length - 1];
  const [on, off = ""] = flags.slice(0, -1).replaceAll("u", "").split("-");
  const text = on + (off === "" ? "" : `-${off}`);
  return text === "" && end === ")" ? "" : `(?${text}${end}`;
}

/** The flags s, m, i and u (as bits) after the flags of a group (?flags) or (?flags:...), read as written ("is-m:"). */
function setsFlags(flags: string, before: number): number {
  const off = flags.indexOf("-");
  const on = off >= 0 ? flags.slice(0, off) : flags;
  const cleared = off >= 0 ? flags.slice(off) : "";
  let mode = before;
  if (on.includes("s")) mode |= DOT_ALL;
  if (on.includes("m")) mode |= MULTI_LINE;
  if (cleared.includes("s")) mode &= ~DOT_ALL;
  if (cleared.includes("m")) mode &= ~MULTI_LINE;
  if (on.includes("i")) mode |= CASE_INSENSITIVE;
  if (on.includes("u")) mode |= UNICODE_CASE;
  if (cleared.includes("i")) mode &= ~CASE_INSENSITIVE;
  if (cleared.includes("u")) mode &= ~UNICODE_CASE;
  return mode;
}

function nestedClass(source: string): LispError {
  return new LispError("regex_error", `invalid regex #"${source}": nested character classes and && intersections are not supported`, undefined, "write the class flat, e.g. [a-zA-Z] for [a-z[A-Z]] or [ac-z] for [a-z&&[^b]]");
}

/** Whether the flags of a group (?flags) or (?flags:...), read from `from`, set or clear U. */
function unicodeClassFlag(source: string, from: number): boolean {
  let u = false;
  let i = from;
  for (; i < source.length && /[a-zA-Z-]/.test(source[i]); i++) if (source[i] === "U") u = true;
  return u && (source[i] === ")" || source[i] === ":");
}

/** A regex's programs: `whole` for whole matches; `search`, when a $ ends an alternative or (?m) has a ^, for searches, its groups `ends` holding the terminator a $ took, `starts` marking a ^ and `breaks` holding the terminator before a ^. */
interface Programs {
  whole: RE2JS;
  search: RE2JS | null;
  ends: number[];
  starts: number[];
  breaks: number[];
  groups: number[];
}

/** The program for whole matches (re-matches), and for a regex's groups and size. */
export function compiled(r: Regex): RE2JS {
  return (r.compiled as Programs).whole;
}

/** What the regex functions search with: RE2's matcher, or a JavaMatcher when a $ needs Java's meaning. */
export interface Finder {
  find(): boolean;
  start(): number;
  end(): number;
  group(i: number): string | null;
  groupCount(): number;
}

/** A matcher searching `s` for `r`, its $ true before a last line terminator as in Java. */
export function finder(r: Regex, s: string): Finder {
  const p = r.compiled as Programs;
  return p.search === null ? new ClockedMatcher(p.whole.matcher(s), s, p.whole.programSize()) : new JavaMatcher(p.search.matcher(s), s, p, p.search.programSize());
}

/**
 * Text times instructions that searches may step through before the run's clock is read. A
 * search may scan past the match it gives, to the end of the text, for a longer or an earlier
 * one (#"\r(?:[^!]*X)?|b" over "b\rb\r...", where each "\r" found tries the rest for an X), so
 * a scan charged once for the whole text can take time in proportion to its square; counting
 * each search as scanning to the end reads the clock often enough to stop it.
 */
const SCAN_CLOCK = 1 << 24;

/** The scanning a search from `from` may do, counted; the clock read when it adds up to SCAN_CLOCK. */
function scanned(counter: { pending: number }, length: number, from: number, size: number): void {
  counter.pending += (length - from) * size;
  if (counter.pending >= SCAN_CLOCK) {
    counter.pending = 0;
    checkClockIfRunning();
  }
}

/** RE2's matcher, with the run's clock read as its searches add up (scanned). */
class ClockedMatcher implements Finder {
  pending = 0;
  private last = 0;
  constructor(
    private readonly m: Matcher,
    private readonly s: string,
    private readonly size: number,
  ) {}

  find(): boolean {
    scanned(this, this.s.length, this.last, this.size);
    if (!this.m.find()) return false;
    this.last = this.m.end(0);
    return true;
  }

  start(): number {
    return this.m.start(0);
  }

  end(): number {
    return this.m.end(0);
  }

  group(i: number): string | null {
    return this.m.group(i);
  }

  groupCount(): number {
    return this.m.groupCount();
  }
}

/**
 * A search whose final $ took a line terminator (in one of `ends`, groups the pattern does not
 * have): each match gives it back, ending before it, with the pattern's own groups renumbered
 * past the added ones and cut at the new end. The next search starts at that end, or past the
 * terminator after an empty match. A match whose (?m)^ was true only at the very end (one of
 * `starts`, empty groups the pattern does not have, set there) is none, as in Java: the search
 * goes on from its next character. A match that begins with a terminator taken for a (?m)^ (one
 * of `breaks`) begins after it, unless that is the end or inside a \r\n; taken anywhere else it
 * is no match either; a search right after such a terminator starts at it (search). (Another
 * way through the pattern from the same place is not tried: RE2 gives one, so (?m)\r|^b over
 * "\rb" misses the "b" Java finds after the "\r", and (?m)^ over "\r\rb" the line start at 1,
 * where RE2's own ^ at 0 is taken first.)
 */
class JavaMatcher implements Finder {
  pending = 0;
  private next = 0;
  private begin = 0;
  private cut = 0;
  private readonly ends: readonly number[];
  private readonly starts: readonly number[];
  private readonly breaks: readonly number[];
  /** The pattern's group i is group groups[i] of the search program. */
  private readonly groups: readonly number[];
  constructor(
    private readonly m: Matcher,
    private readonly s: string,
    programs: Programs,
    /** Instructions of the search program: what each character of a search again costs. */
    private readonly size: number,
  ) {
    this.ends = programs.ends;
    this.starts = programs.starts;
    this.breaks = programs.breaks;
    this.groups = programs.groups;
  }

  find(): boolean {
    const m = this.m;
    const length = this.s.length;
    for (;;) {
      if (this.next > length || !this.search()) return false;
      this.begin = this.lineStart();
      if (this.begin >= 0) break;
      // The search again scans the refused match's text once more: charged, so no pattern can
      // make them quadratic unseen ((?m)a*\n^ over a line of a's refuses a match at each a).
      chargeIfRunning((m.end(0) - m.start(0)) * this.size);
      const at = Math.max(m.start(0), this.next);
      this.next = at + ((this.s.codePointAt(at) ?? 0) > 0xffff ? 2 : 1);
    }
    const start = this.begin;
    const end = m.end(0);
    this.cut = end;
    for (const g of this.ends) {
      if (m.start(g) >= 0 && m.end(g) === end) {
        this.cut = m.start(g);
        break;
      }
    }
    if (this.cut > start) this.next = this.cut;
    // Empty once the terminator is given back: on past it, as a $ inside a \r\n is never true.
    else if (end > start) this.next = end;
    // Past an empty match by one character, a surrogate pair being one.
    else this.next = end + ((this.s.codePointAt(end) ?? 0) > 0xffff ? 2 : 1);
    return true;
  }

  /**
   * Finds the next match from `next`. Right after a terminator RE2's ^ does not know (after an
   * empty match, or one that took it), Java's (?m)^ is true at `next`: the search starts at the
   * terminator, so that a ^ can take it, and a match from there that does not is searched again
   * from `next`.
   */
  private search(): boolean {
    const m = this.m;
    const s = this.s;
    const from = this.next;
    if (this.breaks.length > 0 && from > 0 && from < s.length) {
      const c = s.charCodeAt(from - 1);
      if ((c === 0x0d && s.charCodeAt(from) !== 0x0a) || c === 0x85 || c === 0x2028 || c === 0x2029) {
        scanned(this, s.length, from - 1, this.size);
        if (!m.find(from - 1)) return false;
        if (m.start(0) >= from || this.breaks.some((g) => m.start(g) === from - 1)) return true;
      }
    }
    scanned(this, s.length, from, this.size);
    return m.find(from);
  }

  /** Where the match found begins as Java's would, past a terminator taken for a ^; -1 when Java's ^ is not true where it was taken. */
  private lineStart(): number {
    const m = this.m;
    const s = this.s;
    if (this.starts.some((g) => m.start(g) === s.length)) return -1;
    const at = m.start(0);
    for (const g of this.breaks) {
      const taken = m.start(g);
      if (taken < 0) continue;
      const after = m.end(g);
      return taken !== at || after === s.length || (s[taken] === "\r" && s[after] === "\n") ? -1 : after;
    }
    return at;
  }

  start(): number {
    return this.begin;
  }

  end(): number {
    return this.cut;
  }

  groupCount(): number {
    return this.groups.length - 1;
  }

  group(i: number): string | null {
    const g = this.groups[i];
    const start = this.m.start(g);
    if (start < 0) return null;
    // A group that held the terminator taken for a ^ begins after it, as the match does.
    return this.s.slice(Math.max(start, this.begin), Math.min(this.m.end(g), this.cut));
  }
}

// Programs often pass the same pattern string on every iteration (extract in a map over
// lines), so compiled patterns are kept. Bounded, oldest entry evicted first; a Map keeps
// insertion order, and a hit is re-inserted so frequently used patterns stay. The bound is on
// instructions too: a compiled program keeps about 170 bytes an instruction, and a pattern of
// 1,000 characters can compile to 180,000 (30 MB), so 256 of them would fill the host's heap.
const CACHE_SIZE = 256;
const CACHE_INSTRUCTIONS = 65_536;
const cache = new Map<string, Regex>();
let cachedInstructions = 0;

/** Instructions of a regex's compiled program: what compiling it and each character of a scan may cost. */
export const sizeOf = (re: Regex): number => ((re.compiled as Programs).search ?? compiled(re)).programSize();

/**
 * The compiled regex for a pattern built at run time, rejecting patterns longer than
 * `maxLength` before compiling them (regex_limit_exceeded) and invalid ones (regex_error).
 */
export function regexFromString(source: string, maxLength: number, who: string): Regex {
  if (source.length > maxLength) {
    throw new LispError(
      "regex_limit_exceeded",
      `${who}: a regex pattern of ${source.length} characters exceeds the limit of ${maxLength}`,
      undefined,
      "use a shorter pattern, or plain string functions (includes?, index-of, split) for literal text",
    );
  }
  const hit = cache.get(source);
  if (hit !== undefined) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const re = compileRegex(source, chargeIfRunning);
  const size = sizeOf(re);
  // Compiling takes time in proportion to the program, in one call: charged so that a loop of
  // compiles reaches the run's clock.
  chargeIfRunning(size);
  if (size > CACHE_INSTRUCTIONS) return re;
  for (const [oldest, old] of cache) {
    if (cache.size < CACHE_SIZE && cachedInstructions + size <= CACHE_INSTRUCTIONS) break;
    cache.delete(oldest);
    cachedInstructions -= sizeOf(old);
  }
  cache.set(source, re);
  cachedInstructions += size;
  return re;
}
