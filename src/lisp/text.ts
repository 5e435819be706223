// Characters of a string as PTC-Lisp sees them: grapheme clusters (so "é" or an emoji
// counts as one character), with a fast path for text without combining marks or surrogates.
import { CHUNK, MAX_ARRAY_LENGTH } from "./limits.js";
import { chargeIfRunning, chargeRead, checkArrayLength, checkClockIfRunning } from "./runtime.js";

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

// Below U+0300 every code unit is a whole character, except CR, which joins a following LF
// into one grapheme: strings with CR take the segmenter path so counts stay consistent.
// eslint-disable-next-line no-control-regex
const SIMPLE = /^[\u0000-\u000c\u000e-\u02ff]*$/;

// Each of these reads all of `s`: a run pays for it (chargeRead), so (nth s i) or (count s) in a
// loop over a long text runs out of fuel and reaches the clock's checks instead of running for
// minutes at one step per call.
const scan = (s: string): void => chargeRead(s.length);

export function isSimpleText(s: string): boolean {
  scan(s);
  return SIMPLE.test(s);
}

export function chars(s: string): string[] {
  scan(s);
  const simple = SIMPLE.test(s);
  // Split past the longest array the engine makes, the text would abort the process: counted first.
  if (s.length > MAX_ARRAY_LENGTH) checkArrayLength(simple ? s.length : graphemeCount(s));
  if (simple) return s.split("");
  return Array.from(graphemes(s), (x) => x.segment);
}

/**
 * The characters of `s` a chunk of at most CHUNK at a time, for builtins that walk a text of any
 * length (escape, reverse) without one array of all its characters.
 */
export function* charChunks(s: string): Generator<string[]> {
  scan(s);
  if (SIMPLE.test(s)) {
    for (let i = 0; i < s.length; i += CHUNK) yield s.slice(i, i + CHUNK).split("");
    return;
  }
  let chunk: string[] = [];
  for (const g of graphemes(s)) {
    chunk.push(g.segment);
    if (chunk.length === CHUNK) {
      yield chunk;
      chunk = [];
    }
  }
  if (chunk.length > 0) yield chunk;
}

/** Character (grapheme) `index` of `s`, or undefined past its end: reads only up to that character. */
export function charAt(s: string, index: number): string | undefined {
  scan(s);
  if (SIMPLE.test(s)) return index < s.length ? s[index] : undefined;
  let n = 0;
  for (const g of graphemes(s)) if (n++ === index) return g.segment;
  return undefined;
}

export function charCount(s: string): number {
  scan(s);
  return SIMPLE.test(s) ? s.length : graphemeCount(s);
}

function graphemeCount(s: string): number {
  let n = 0;
  for (const _ of graphemes(s)) n++;
  return n;
}

const isHigh = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** Code units the segmenter is given at a time (doubled while one character is longer). */
const WINDOW = 256;

/**
 * The characters (grapheme clusters) of `s` with their code-unit offsets, as
 * `Intl.Segmenter` gives them, but read a window at a time: V8's segmenter spends time
 * proportional to the whole string on each character it yields (500,000 accented letters
 * took hours), so it only ever sees WINDOW code units. Each window's last character may be
 * cut by the window's end and is read again at the start of the next; a cluster's boundaries
 * depend on nothing before the previous boundary and one code point after, so starting again
 * at a boundary gives the same characters as the whole string. Each window is charged a unit of
 * fuel per code unit, and the run's clock is checked after it (a text of a million characters is
 * read in thousands of them).
 */
export function* graphemes(s: string): Generator<{ segment: string; index: number }> {
  let start = 0;
  let size = WINDOW;
  while (start < s.length) {
    let end = start + size;
    // Never between the halves of a pair: the code point after a boundary decides it (a flag's
    // second half cut off would leave its first one a character of its own).
    if (end < s.length && isHigh(s.charCodeAt(end - 1)) && isLow(s.charCodeAt(end))) end++;
    let last: Intl.SegmentData | undefined;
    let yielded = false;
    const piece = end >= s.length ? s.slice(start) : s.slice(start, end);
    // The segmenter spends hundreds of evaluation steps' time on each unit: a unit of fuel each,
    // where a scan of plain text is charged one per 64.
    chargeIfRunning(piece.length);
    for (const seg of segmenter.segment(piece)) {
      if (last !== undefined) {
        yield { segment: last.segment, index: start + last.index };
        yielded = true;
      }
      last = seg;
    }
    checkClockIfRunning();
    if (last === undefined) return;
    if (end >= s.length) {
      yield { segment: last.segment, index: start + last.index };
      return;
    }
    // One character filled the window: look further before giving it.
    if (!yielded) size *= 2;
    else {
      start += last.index;
      size = WINDOW;
    }
  }
}

/**
 * Java's Character.isWhitespace for a UTF-16 code unit, as clojure.string's trim and blank? use
 * it: unlike JS's trim it keeps the no-break spaces U+00A0, U+2007, U+202F and U+FEFF, and
 * counts U+001C-U+001F.
 */
function isWhitespace(c: number): boolean {
  if (c <= 0x20) return (c >= 0x09 && c <= 0x0d) || c >= 0x1c;
  return c >= 0x1680 && (c === 0x1680 || (c >= 0x2000 && c <= 0x200a && c !== 0x2007) || c === 0x2028 || c === 0x2029 || c === 0x205f || c === 0x3000);
}

/** Java's String.trim removes every code unit up to U+0020. */
const upToSpace = (c: number): boolean => c <= 0x20;

function trimmed(s: string, start: boolean, end: boolean, drop: (c: number) => boolean): string {
  let i = 0;
  let j = s.length;
  if (start) while (i < j && drop(s.charCodeAt(i))) i++;
  if (end) while (j > i && drop(s.charCodeAt(j - 1))) j--;
  return i === 0 && j === s.length ? s : s.slice(i, j);
}

/** s without leading (`start`) and trailing (`end`) whitespace, as clojure.string/trim, triml and trimr. */
export const trimWhitespace = (s: string, start = true, end = true): string => trimmed(s, start, end, isWhitespace);

/** s as Java's String.trim gives it (the `.trim` method). */
export const javaTrim = (s: string): string => trimmed(s, true, true, upToSpace);

/** True if s is empty or only whitespace, as clojure.string/blank?. */
export function isBlank(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (!isWhitespace(s.charCodeAt(i))) return false;
  return true;
}
