// A tool's result or message may quote hidden context the program never read in this evaluation:
// a tool holding the key itself, or keeping what an earlier evaluation gave it. Each hidden key
// quoted is read then and marked, so whatever shows the result or message hides it.
import { Budget, contextValue, toLisp } from "./interop.js";
import type { Limits } from "./limits.js";
import { hiddenTextIndex, hiddenTexts, isHiddenKey, quotedHidden, type Marks, type QuoteIndex } from "./marks.js";
import type { Value } from "./values.js";

/**
 * What marks the hidden context keys a tool's result or message quotes (`hiddenTexts` of each,
 * searched for as `quotedHidden` does), and tells whether any did. A key is read within the run's
 * limits and not charged (the host's bookkeeping, between the program's steps); `cache` holds the
 * keys read already, by the program or by an earlier search, which are marked then.
 */
export function contextQuotes(ctx: Readonly<Record<string, unknown>>, limits: Limits, marks: () => Marks, cache: Map<string, Value>): (result: Value | undefined, message?: string) => boolean {
  let index: QuoteIndex<string> | undefined;
  const textsOf = (k: string): Array<[string, string]> => {
    try {
      return hiddenTexts(contextValue(ctx, k)).map((t) => [t, k]);
    } catch {
      // What cannot be read is not searched for; a read by the program reports it.
      return [];
    }
  };
  return (result, message) => {
    index ??= hiddenTextIndex(Object.keys(ctx).filter(isHiddenKey).flatMap(textsOf));
    const keys = quotedHidden(index, result, message);
    for (const k of keys) {
      if (cache.has(k)) continue;
      try {
        const v = toLisp(contextValue(ctx, k), limits.maxNestingDepth, 0, `data/${k}`, new Budget(limits));
        marks().hidden(k, v, new Budget(limits));
        cache.set(k, v);
      } catch {
        // Past the limits the program's own read would stop at: what was marked stays marked.
      }
    }
    return keys.size > 0;
  };
}
