// Cutting text by UTF-16 code units without splitting a surrogate pair: half an emoji is a lone
// surrogate, which a provider's JSON parser refuses and a terminal shows as a replacement
// character. Apart from text.ts, so the output buffer (which runtime.ts holds) can use it.

/** Where to cut `s` at most `at` code units in without splitting a surrogate pair (a cut emoji is a lone surrogate, invalid text on the wire). */
export function cutPoint(s: string, at: number): number {
  if (at <= 0 || at >= s.length) return Math.max(0, Math.min(at, s.length));
  const c = s.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}

/** `s` whole, or past `at` code units its start (never half a surrogate pair) and `…`: a value quoted in a message. */
export function clipped(s: string, at: number): string {
  return s.length <= at ? s : s.slice(0, cutPoint(s, at)) + "…";
}

// A name longer than this is shown by its start and its length: the rest tells the model nothing.
const NAME_SHOWN = 40;

/** A name (a context key, a tool's) as a message shows it, written by `write`: whole, or past NAME_SHOWN characters by its start and its length. */
export function shownName(name: string, write: (s: string) => string = (s) => s): string {
  return name.length <= NAME_SHOWN ? write(name) : `${write(clipped(name, NAME_SHOWN))} (${name.length} characters)`;
}

/** Where to start the last part of `s` at `from` or just after, without splitting a surrogate pair (`cutPoint` for a tail). */
export function tailPoint(s: string, from: number): number {
  if (from <= 0 || from >= s.length) return Math.max(0, Math.min(from, s.length));
  const c = s.charCodeAt(from);
  return c >= 0xdc00 && c <= 0xdfff ? from + 1 : from;
}

// Half of a surrogate pair standing alone.
const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `s` with each half of a surrogate pair standing alone (host text cut inside an emoji) replaced by U+FFFD, as a UTF-8 encoder writes it: text a provider's JSON parser accepts. */
export function wellFormed(s: string): string {
  return s.replace(LONE, "\ufffd");
}
