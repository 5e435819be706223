// "Did you mean" suggestions: the closest known names by edit distance.

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return 99;
  const prev = new Array<number>(b.length + 1);
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0];
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j];
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length];
}

/** Up to `max` candidates within a small edit distance of `name`, closest first. */
export function suggest(name: string, candidates: Iterable<string>, max = 2): string[] {
  const limit = name.length <= 3 ? 1 : name.length <= 6 ? 2 : 3;
  const scored: Array<[string, number]> = [];
  const seen = new Set<string>();
  for (const c of candidates) {
    if (seen.has(c) || c === name) continue;
    seen.add(c);
    const d = distance(name, c);
    if (d <= limit) scored.push([c, d]);
  }
  scored.sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1));
  return scored.slice(0, max).map(([c]) => c);
}
