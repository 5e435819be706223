// What a tool's answer sends back of hidden context that nothing the program gave it held: a
// memory tool given a token, or a piece of one, in one evaluation and asked for it in a later one,
// or a host's client that holds the key itself and quotes it. The evaluator searches each answer
// (evaluate.ts); the worker mode's host searches a failed call's message too, so the record it
// tells listeners while the program runs shows what the program's own record shows.
import { contextValue } from "./interop.js";
import { HiddenSearch, hiddenTexts, isHiddenKey, type Marks, type SentBack } from "./marks.js";
import type { Value } from "./values.js";

/** The hidden texts an answer (a result, or a failed call's message) sends back, with their origins. */
export type SentBackSearch = (result: Value | undefined, message?: string) => readonly SentBack[];

const NOTHING: readonly SentBack[] = [];

/**
 * A search of answers for the texts of hidden context (`hiddenTexts`), read by the program or not,
 * and for the texts the run handed its tools (`Marks.handed`), as `HiddenSearch` finds them. A
 * hidden key an answer quotes is read and marked (`read`), a handed text marked as it was when
 * handed, so what quotes them is hidden as an echo is; the texts found are returned with their
 * origins, for the echo search of the result and the rewriting of the message.
 */
export function sentBackSearch(ctx: Readonly<Record<string, unknown>>, marks: Marks, read: (key: string) => void): SentBackSearch {
  let context: Array<HiddenSearch<string>> | undefined;
  // The place of each text in `Marks.handed`, searched apart: they are the run's, the context's texts the host's.
  const handedSearch = new HiddenSearch<number>();
  let handedIndexed = 0;
  return (result, message) => {
    context ??= Object.keys(ctx).filter(isHiddenKey).map((k) => searchOf(ctx, k));
    const handed = marks.handed;
    if (handedIndexed < handed.length) {
      handedSearch.add(handed.slice(handedIndexed).map(([text], i) => [text, handedIndexed + i] as const));
      handedIndexed = handed.length;
    }
    let back: SentBack[] | undefined;
    if (handed.length > 0) {
      for (const [, i] of handedSearch.find(result, message)) {
        marks.carry(handed[i][0], handed[i][1]);
        (back ??= []).push(handed[i]);
      }
    }
    // A text two keys hold (an email in `_creds` and as a key of `_users`) reads the first only, as one search of both would.
    const seen = new Set<string>();
    for (const search of context) {
      for (const [text, k] of search.find(result, message)) {
        if (seen.has(text)) continue;
        seen.add(text);
        read(k);
        // A number's text stands for the number the context holds, marked as that.
        const n = Number(text);
        const value = marks.originOf(text) === undefined && String(n) === text && marks.originOf(n) !== undefined ? n : text;
        (back ??= []).push([value, marks.originOf(value) ?? { path: `data/${k}`, root: `data/${k}`, derived: true }]);
      }
    }
    return back ?? NOTHING;
  };
}

/**
 * The search for one hidden key's texts, kept per value object (as `hiddenTexts` is) under its
 * key: an agent's turns read the same context, and indexing 100,000 texts again for each
 * evaluation took 50-70 ms.
 */
const searches = new WeakMap<object, Map<string, HiddenSearch<string>>>();

function searchOf(ctx: Readonly<Record<string, unknown>>, k: string): HiddenSearch<string> {
  let v: unknown;
  try {
    v = contextValue(ctx, k);
  } catch {
    // What cannot be read is not searched for; a read by the program reports it.
    return new HiddenSearch<string>();
  }
  const kept = typeof v === "object" && v !== null ? searches.get(v) : undefined;
  const hit = kept?.get(k);
  if (hit !== undefined) return hit;
  const search = new HiddenSearch<string>(textsOf(k, v));
  if (typeof v === "object" && v !== null) {
    if (kept === undefined) searches.set(v, new Map([[k, search]]));
    else kept.set(k, search);
  }
  return search;
}

function textsOf(k: string, v: unknown): Array<[string, string]> {
  try {
    return hiddenTexts(v).map((t) => [t, k]);
  } catch {
    // What cannot be read is not searched for; a read by the program reports it.
    return [];
  }
}
