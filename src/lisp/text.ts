// Characters of a string as PTC-Lisp sees them: grapheme clusters (so "é" or an emoji
// counts as one character), with a fast path for text without combining marks or surrogates.

const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });

// Below U+0300 every code unit is a whole character, except CR, which joins a following LF
// into one grapheme: strings with CR take the segmenter path so counts stay consistent.
// eslint-disable-next-line no-control-regex
const SIMPLE = /^[\u0000-\u000c\u000e-\u02ff]*$/;

export function isSimpleText(s: string): boolean {
  return SIMPLE.test(s);
}

export function chars(s: string): string[] {
  if (SIMPLE.test(s)) return s.split("");
  return Array.from(segmenter.segment(s), (x) => x.segment);
}

export function charCount(s: string): number {
  if (SIMPLE.test(s)) return s.length;
  let n = 0;
  for (const _ of segmenter.segment(s)) n++;
  return n;
}

/** Where to cut `s` at most `at` code units in without splitting a surrogate pair (a cut emoji is a lone surrogate, invalid text on the wire). */
export function cutPoint(s: string, at: number): number {
  if (at <= 0 || at >= s.length) return Math.max(0, Math.min(at, s.length));
  const c = s.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}
