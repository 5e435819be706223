// What the hidden-context adversaries look for: every 4-character fragment of a hidden value and
// of its case and reversal transforms.

/** A value, upper- and lower-cased, and reversed the same three ways. */
export function transforms(v: string): string[] {
  const r = [...v].reverse().join("");
  return [v, v.toUpperCase(), v.toLowerCase(), r, r.toUpperCase(), r.toLowerCase()];
}

/** Every 4-character fragment of the values and their transforms. */
export function fragments(values: string[]): Set<string> {
  const out = new Set<string>();
  for (const v of values) for (const t of transforms(v)) for (let i = 0; i + 4 <= t.length; i++) out.add(t.slice(i, i + 4));
  return out;
}

/** The fragments that occur in `text`. */
export function leaks(text: string, frags: Set<string>): string[] {
  const found: string[] = [];
  for (const f of frags) if (text.includes(f)) found.push(f);
  return found;
}
