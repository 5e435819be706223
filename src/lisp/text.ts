// Characters of a string as PTC-Lisp sees them: grapheme clusters (so "é" or an emoji
// counts as one character), with a fast path for text without combining marks or surrogates.
import { chargeRead } from "./runtime.js";

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
  if (SIMPLE.test(s)) return s.split("");
  return Array.from(segmenter.segment(s), (x) => x.segment);
}

export function charCount(s: string): number {
  scan(s);
  if (SIMPLE.test(s)) return s.length;
  let n = 0;
  for (const _ of segmenter.segment(s)) n++;
  return n;
}

