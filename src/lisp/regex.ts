// Regular expressions run on RE2 (re2js): matching time is linear in the input, so no
// pattern can backtrack catastrophically. Backreferences and lookaround are not supported.
import { RE2JS } from "re2js";
import { LispError } from "./errors.js";
import { chargeIfRunning, took } from "./runtime.js";
import { Regex } from "./values.js";

export function compileRegex(source: string): Regex {
  const re2 = re2Source(source);
  try {
    return new Regex(source, RE2JS.compile(re2));
  } catch (e) {
    // Quoted as written: the . this file spells as a class reads as a . again.
    const detail = (e instanceof Error ? e.message : String(e)).replaceAll(JAVA_DOT, ".");
    // RE2 quotes the part it could not read (`[mQ8sLd2`): a part of a hidden pattern is hidden too.
    const quote = detail.indexOf("`");
    if (quote >= 0 && detail.endsWith("`")) took(source, detail.slice(quote + 1, -1));
    // RE2 says "invalid character class range" for a \p{...} it does not know: name what it knows.
    const hint = /`\\[pP]/.test(detail)
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
 * class of every character but Java's line terminators, where RE2's . stops only at \n). Refused
 * (regex_error), because RE2 would match other text without a word: a class holding an
 * unescaped [ (not a POSIX [:name:]) or &&, Java's nested classes and intersections, which RE2
 * reads as literal characters (so [a-z&&[^b]] would match nothing a Java reader expects); and
 * the flag U, Java's Unicode classes, which RE2 reads as making every repetition lazy.
 */
function re2Source(source: string): string {
  if (source.indexOf("[") < 0 && source.indexOf("\\") < 0 && source.indexOf("(?") < 0 && source.indexOf(".") < 0) return source;
  let out = "";
  let copied = 0;
  let inClass = false;
  // Whether . matches every character ((?s)) here, and what it was outside each open group.
  let dotAll = false;
  const outer: boolean[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      const next = source[i + 1];
      // \Q...\E quotes its text.
      if (next === "Q") {
        const end = source.indexOf("\\E", i + 2);
        if (end < 0) break;
        i = end + 1;
        continue;
      }
      let written: string | null = null;
      let length = 0;
      if (next === "u" && HEX4.test(source.slice(i + 2, i + 6))) {
        let code = parseInt(source.slice(i + 2, i + 6), 16);
        length = 6;
        if (code >= 0xd800 && code <= 0xdbff && source[i + 6] === "\\" && source[i + 7] === "u" && HEX4.test(source.slice(i + 8, i + 12))) {
          const low = parseInt(source.slice(i + 8, i + 12), 16);
          if (low >= 0xdc00 && low <= 0xdfff) {
            code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
            length = 12;
          }
        }
        written = `\\x{${code.toString(16)}}`;
      } else if ((next === "p" || next === "P") && source[i + 2] === "{") {
        const close = source.indexOf("}", i + 3);
        const name = close < 0 ? "" : source.slice(i + 3, close);
        if (Object.hasOwn(POSIX, name)) {
          const not = next === "P" ? "^" : "";
          written = inClass ? `[:${not}${POSIX[name]}:]` : `[${not}[:${POSIX[name]}:]]`;
          length = close + 1 - i;
        }
      }
      if (written === null) {
        i++;
        continue;
      }
      out += source.slice(copied, i) + written;
      copied = i + length;
      i = copied - 1;
    } else if (!inClass) {
      if (c === "(" && source[i + 1] === "?" && unicodeClassFlag(source, i + 2)) {
        throw new LispError("regex_error", `invalid regex #"${source}": the flag (?U) is Java's Unicode classes, which RE2 reads as making every repetition lazy`, undefined, "drop the U and name Unicode classes directly: \\p{L} for letters, \\p{N} for digits, [\\p{L}\\p{N}_] for word characters");
      }
      if (c === "(") {
        const flags = source[i + 1] === "?" ? /^[a-zA-Z]*(?:-[a-zA-Z]*)?([):])/.exec(source.slice(i + 2, i + 20)) : null;
        if (flags?.[1] !== ")") outer.push(dotAll);
        if (flags !== null) dotAll = setsDotAll(flags[0], dotAll);
        continue;
      }
      if (c === ")") {
        dotAll = outer.pop() ?? dotAll;
        continue;
      }
      if (c === "." && !dotAll) {
        // RE2's . stops only at \n; Java's at every line terminator, so CRLF text's \r is never matched.
        out += source.slice(copied, i) + JAVA_DOT;
        copied = i + 1;
        continue;
      }
      if (c !== "[") continue;
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
  return copied === 0 ? source : out + source.slice(copied);
}

/** Java's . outside (?s): any character but its line terminators. */
const JAVA_DOT = "[^\\n\\r\\x{85}\\x{2028}\\x{2029}]";

/** Whether . matches every character after the flags of a group (?flags) or (?flags:...), read as written ("is-m:"). */
function setsDotAll(flags: string, before: boolean): boolean {
  const off = flags.indexOf("-");
  if (off >= 0 && flags.indexOf("s", off) >= 0) return false;
  const on = off >= 0 ? flags.slice(0, off) : flags;
  return on.includes("s") ? true : before;
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

export function compiled(r: Regex): RE2JS {
  return r.compiled as RE2JS;
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
export const sizeOf = (re: Regex): number => compiled(re).programSize();

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
  const re = compileRegex(source);
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
