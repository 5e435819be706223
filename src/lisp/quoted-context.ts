// A tool's result or message may quote hidden context the program never read in this evaluation:
// a tool holding the key itself, or keeping what an earlier evaluation gave it, or the hidden
// context of the run that called this one (an agent called as a tool shares its caller's host
// tools). Each hidden key quoted is read then and marked, so whatever shows the result or
// message hides it.
import { Budget, contextValue, toLisp } from "./interop.js";
import type { Limits } from "./limits.js";
import { hiddenTextIndex, hiddenTexts, isHiddenKey, quotedHidden, type Marks, type QuoteIndex } from "./marks.js";
import type { Value } from "./values.js";

type Context = Readonly<Record<string, unknown>>;

/**
 * What marks the hidden keys of `ctx` and of `callers` (the hidden context of the runs above,
 * never readable here) that a tool's result or message quotes (`hiddenTexts` of each, searched
 * for as `quotedHidden` does), and tells whether any did. A key is read within the run's limits
 * and not charged (the host's bookkeeping, between the program's steps); `cache` holds the keys
 * of `ctx` read already, by the program or by an earlier search, which are marked then.
 */
export function contextQuotes(ctx: Context, limits: Limits, marks: () => Marks, cache: Map<string, Value>, callers: readonly Context[] = []): (result: Value | undefined, message?: string) => boolean {
  const sources = [ctx, ...callers];
  const caches = [cache, ...callers.map(() => new Map<string, Value>())];
  let index: QuoteIndex<readonly [number, string]> | undefined;
  const textsOf = (at: number, k: string): Array<[string, readonly [number, string]]> => {
    const tag = [at, k] as const;
    try {
      return hiddenTexts(contextValue(sources[at], k)).map((t) => [t, tag]);
    } catch {
      // What cannot be read is not searched for; a read by the program reports it.
      return [];
    }
  };
  return (result, message) => {
    index ??= hiddenTextIndex(sources.flatMap((from, at) => Object.keys(from).filter(isHiddenKey).flatMap((k) => textsOf(at, k))));
    const tags = quotedHidden(index, result, message);
    for (const [at, k] of tags) {
      if (caches[at].has(k)) continue;
      try {
        const v = toLisp(contextValue(sources[at], k), limits.maxNestingDepth, 0, `data/${k}`, new Budget(limits));
        marks().hidden(k, v, new Budget(limits));
        caches[at].set(k, v);
      } catch {
        // Past the limits the program's own read would stop at: what was marked stays marked.
      }
    }
    return tags.size > 0;
  };
}
