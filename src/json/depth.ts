// How deep a JSON text nests. JSON.parse takes any depth, but what is done with the value after
// (serializing, hashing, counting tokens, summarizing) recurses: a few thousand levels overflow
// the stack. Real requests and conversations, tool schemas included, stay far below the limit.

/** The nesting of arrays and objects a JSON input may have (the proxy's bodies, the harness's transcripts). */
export const MAX_JSON_DEPTH = 512;

/**
 * Whether a parsed value nests arrays and objects more than `max` levels deep; the walk stops
 * there. Its cost is the value's containers, not its text: 1.7 µs on a 37 KB chat body whose
 * text the scan below reads in 75 µs, so a request path asks this.
 */
export function nestedDeeperThan(v: unknown, max = MAX_JSON_DEPTH): boolean {
  if (typeof v !== "object" || v === null) return false;
  if (max === 0) return true;
  if (Array.isArray(v)) {
    for (const x of v) if (nestedDeeperThan(x, max - 1)) return true;
    return false;
  }
  for (const k in v) if (nestedDeeperThan((v as Record<string, unknown>)[k], max - 1)) return true;
  return false;
}

/** Where in a (valid) JSON text its nesting passes `max` levels (an index), or -1: for an error that names the column. One pass over the text; strings are skipped. */
export function tooDeepAt(text: string, max = MAX_JSON_DEPTH): number {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return -1;
}
