// The one walk for "where does this value hold what its JSON cannot": a history strategy's state
// (kept as plain JSON: compaction's jsonProblem) and a run's answer (kept with Maps, Sets and
// numbers tagged: the trace's unsavable) differ only in what they take of one value. Both meet
// values a host built, which may share structure heavily (one map referred to from every row):
// a value checked whole is not walked again, so the walk costs the distinct containers, not the
// paths to them (the per-turn state check walked 1,000 references to one 10,000-key map 1,000 times).

/** What a rule says of one value: a problem (its text), null when nothing under it needs a look, or the entries under it, each with its path. */
export type ValueStep = string | null | ReadonlyArray<readonly [string, unknown]>;

/** A longer key is cut in a path, so a problem's text stays short. */
const MAX_KEY = 40;

/** `path.key`, the key cut past MAX_KEY characters. */
export const keyPath = (path: string, key: string): string => `${path}.${key.length > MAX_KEY ? `${key.slice(0, MAX_KEY)}…` : key}`;

/**
 * The entries of a plain object or an array, each with its path, or the problem of a getter that
 * throws reading one (a host's value may have any).
 */
export function ownEntries(v: object, path: string): ValueStep {
  const keys = Object.keys(v);
  const out: Array<readonly [string, unknown]> = [];
  for (const key of keys) {
    try {
      out.push([keyPath(path, key), (v as Record<string, unknown>)[key]]);
    } catch {
      return `${keyPath(path, key)} is a getter that throws`;
    }
  }
  return out;
}

/**
 * The first place in `value` that `rule` refuses (its text), or null; a container met inside
 * itself is a cycle. `rule` sees each value once: shared structure is walked once.
 */
export function firstProblem(value: unknown, path: string, rule: (v: unknown, path: string) => ValueStep): string | null {
  return walk(value, path, rule, new Set(), new WeakSet());
}

/**
 * Deeper than any value a program makes (its STACK_SAFE_DEPTH is 500) and than JSON.stringify
 * writes safely: past it the walk says so rather than overflowing the host's stack.
 */
const MAX_DEPTH = 1_000;

function walk(v: unknown, path: string, rule: (v: unknown, path: string) => ValueStep, ancestors: Set<object>, fine: WeakSet<object>): string | null {
  const container = typeof v === "object" && v !== null;
  if (container) {
    if (fine.has(v)) return null;
    if (ancestors.has(v)) return `${path} is a cycle (it contains itself)`;
    if (ancestors.size >= MAX_DEPTH) return `${path.length > 80 ? `${path.slice(0, 40)}…${path.slice(-30)}` : path} is nested more than ${MAX_DEPTH} deep`;
  }
  let step: ValueStep;
  try {
    step = rule(v, path);
  } catch (e) {
    // A host's value may be a revoked Proxy, or one whose traps throw, wherever the rule looks.
    return `${path} cannot be read (${e instanceof Error ? e.message : `it threw ${typeof e}`})`;
  }
  if (step === null || typeof step === "string" || !container) return typeof step === "string" ? step : null;
  ancestors.add(v);
  try {
    for (const [at, item] of step) {
      const problem = walk(item, at, rule, ancestors, fine);
      if (problem !== null) return problem;
    }
  } finally {
    ancestors.delete(v);
  }
  fine.add(v);
  return null;
}
