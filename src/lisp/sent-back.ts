// What a tool's answer sends back of hidden context that nothing the program gave it held: a
// memory tool given a token, or a piece of one, in one evaluation and asked for it in a later one;
// a host's client that holds the key itself and quotes it; the hidden context of the run that
// called this one (an agent called as a tool shares its caller's host tools). The evaluator
// searches each answer, and the worker mode's host a failed call's message too, so the record it
// tells listeners while the program runs shows what the program's own record shows; the agent
// searches its output check's message. Each hidden key quoted is read then and marked.
import { Budget, contextValue, toLisp } from "./interop.js";
import type { Limits } from "./limits.js";
import { HiddenSearch, hiddenTexts, hostLeaves, sameTexts, isHiddenKey, Marks, meetsHidden, type Origin, type SentBack } from "./marks.js";
import { hiddenRecords, type HiddenRecords } from "./shared-hidden.js";
import type { Value } from "./values.js";

type Context = Readonly<Record<string, unknown>>;

/**
 * The hidden texts an answer (a result, or a message) sends back, with their origins; with
 * `whole`, only those a result holds as whole parts (public context, read from the host as it is).
 */
export type SentBackSearch = (result: Value | undefined, message?: string, whole?: boolean) => readonly SentBack[];

const NOTHING: readonly SentBack[] = [];

/**
 * Notes a value read from public context, where there is hidden context: a record of hidden context
 * it holds (HiddenRecords: the same card object as `_card`, or a copy) is marked as that record; a
 * hidden text of 8+ characters it holds whole (a host's public data sharing its hidden
 * credentials) is found by the whole-part search, which reads and marks its key, and marked where
 * it is (Marks.shared); a value holding neither is public (Marks.public). Whether it held any.
 */
export function notePublic(v: Value, marks: Marks, search: SentBackSearch, records: HiddenRecords): boolean {
  const shared = records.find(v);
  for (const [record, key] of shared) marks.hidden(key, record);
  const found = search(v, undefined, true);
  if (found.length > 0) marks.shared(v, found);
  else if (shared.length === 0) {
    marks.public(v);
    return false;
  }
  return true;
}

/**
 * Public context as a prompt shows it (ContextReader's `shown`), when the run may meet hidden
 * context: as the program prints it (notePublic, as its reads do), so the task message's sample
 * and a filled {{placeholder}} hide what the program's own print of the key hides.
 */
export function publicShown(ctx: Context, limits: Limits, callers: readonly Context[] = []): ((v: Value) => Value) | undefined {
  if (!meetsHidden(ctx, new Map(), callers)) return undefined;
  const marks = new Marks();
  const search = sentBackSearch(ctx, limits, () => marks, new Map(), callers);
  const records = hiddenRecords(ctx, (k, from) => toLisp(from, limits.maxNestingDepth, 0, `data/${k}`, new Budget(limits)), callers);
  return (v) => (notePublic(v, marks, search, records) ? marks.hide(v) : v);
}

/**
 * A search of answers for the texts of the hidden keys of `ctx` and of `callers` (the hidden
 * context of the runs above, never readable here), read by the program or not (`hiddenTexts`),
 * and for the texts the run handed its tools (`Marks.handed`), as `HiddenSearch` finds them. A
 * hidden key an answer quotes is read and marked, within the run's limits and not charged (the
 * host's bookkeeping, between the program's steps; `cache` holds the keys of `ctx` read already,
 * by the program or by an earlier search); a handed text is marked as it was when handed. The
 * texts found are returned with their origins, for the echo search of a result and the rewriting
 * of a message.
 */
export function sentBackSearch(ctx: Context, limits: Limits, marks: () => Marks, cache: Map<string, Value>, callers: readonly Context[] = []): SentBackSearch {
  const sources = [ctx, ...callers];
  const caches = [cache, ...callers.map(() => new Map<string, Value>())];
  // Each hidden key's search as the first answer found the context, and as it is now when a tool
  // renewed the key's texts in place since (`renew`): both are searched.
  let context: KeySearch[] | undefined;
  // Per source, the keys a tool renewed in place or added since the last answer (renewedKeys), where its hidden context is small.
  let changes: ReadonlyArray<(() => readonly string[]) | undefined> = [];
  // The place of each text in `Marks.handed`, searched apart: they are the run's, the context's texts the host's.
  const handedSearch = new HiddenSearch<number>();
  let handedIndexed = 0;
  // What the run kept of hidden context from earlier evaluations that the context no longer holds
  // (a token the host renewed in place, or a key it removed, since): its client may still quote
  // the one the program holds.
  const goneSearch = new HiddenSearch<Origin>();
  let keptIndexed = 0;
  const read = (at: number, k: string): void => {
    if (caches[at].has(k)) return;
    try {
      const v = toLisp(contextValue(sources[at], k), limits.maxNestingDepth, 0, `data/${k}`, new Budget(limits));
      marks().hidden(k, v, new Budget(limits));
      caches[at].set(k, v);
    } catch {
      // Past the limits the program's own read would stop at: what was marked stays marked.
    }
  };
  return (result, message, whole = false) => {
    const find = <T>(search: HiddenSearch<T>): Set<readonly [string, T]> => (whole && result !== undefined ? search.findWhole(result) : search.find(result, message));
    if (context === undefined) {
      const built = (context = sources.flatMap((from, at) => Object.keys(from).filter(isHiddenKey).map((k) => keySearch(from, at, k))));
      changes = sources.map((from, at) => renewedKeys(from, new Map(built.filter((e) => e.at === at).map((e) => [e.k, e.texts]))));
    } else {
      for (let at = 0; at < changes.length; at++) for (const k of changes[at]?.() ?? NO_KEYS) renew(context, sources[at], at, k);
    }
    let back: SentBack[] | undefined;
    const handed = marks().handed;
    if (handedIndexed < handed.length) {
      handedSearch.add(handed.slice(handedIndexed).map(([text], i) => [text, handedIndexed + i] as const));
      handedIndexed = handed.length;
    }
    if (handed.length > 0) {
      for (const [, i] of find(handedSearch)) {
        marks().carry(handed[i][0], handed[i][1]);
        (back ??= []).push(handed[i]);
      }
    }
    // A text two keys hold (an email in `_creds` and as a key of `_users`) reads the first only, as one search of both would.
    const seen = new Set<string>();
    for (const { at, first, search } of context) {
      const found = find(search);
      if (first !== search) for (const f of find(first)) found.add(f);
      for (const [text, k] of found) {
        if (seen.has(text)) continue;
        seen.add(text);
        read(at, k);
        // A number's text stands for the number the context holds, marked as that.
        const m = marks();
        const n = Number(text);
        const value = m.originOf(text) === undefined && String(n) === text && m.originOf(n) !== undefined ? n : text;
        (back ??= []).push([value, m.originOf(value) ?? { path: `data/${k}`, root: `data/${k}`, derived: true }]);
      }
    }
    const kept = marks().keptRead;
    if (keptIndexed < kept.length) {
      const all = context;
      // What the context still holds is searched for above, each text once per evaluation.
      goneSearch.add(kept.slice(keptIndexed).filter(([text]) => !all.some(({ search }) => search.find(text).size > 0)));
      keptIndexed = kept.length;
    }
    if (!goneSearch.isEmpty) {
      for (const [text, o] of find(goneSearch)) {
        if (seen.has(text)) continue;
        seen.add(text);
        (back ??= []).push([text, o]);
      }
    }
    return back ?? NOTHING;
  };
}

/**
 * Hidden context of up to this many texts is read again at each answer after the first: a tool
 * the program called may have renewed a token in place (`(tool/refresh)`, then a call whose
 * client quotes the new one), where a larger one is read once per evaluation (1-2 ms within
 * 20,000 parts, too much for every answer).
 */
const RENEWED_TEXTS = 256;

/**
 * The parts of a hidden key compared after each tool call for an edit in place of its short texts
 * (`card.cvv = "999"`, no text of ECHO_MIN+ changed), by the worker's host and the search here at
 * each answer and by the records in process (evaluate's dataHost) at the next public read: a key
 * of many numbers may hold few texts, and all its parts are too many to walk after every call.
 */
const RENEWED_PARTS = 2_048;

/** A hidden value's first leaves, which an edit in place of its short texts changes (RENEWED_PARTS). */
export const firstLeaves = (v: unknown): readonly string[] => hostLeaves(v, RENEWED_PARTS);

const NO_KEYS: readonly string[] = [];

/**
 * The hidden keys of `ctx` a tool renews in place while a program runs, for the worker mode's
 * host to send with each answer (its worker searches, and reads, a copy of the context): a
 * function telling the keys whose texts changed since it was last called. None when the hidden
 * context holds over RENEWED_TEXTS texts, read once per evaluation as in process, unless
 * `records`: then the keys replaced or edited within their first leaves, whose records the
 * worker finds by its copy (a card renewed beside a hidden log of 300 events printed a public
 * copy of the new card), their texts not read again. `held`: each hidden key's texts as the
 * caller read them already.
 */
export function renewedKeys(ctx: Context, held: Map<string, readonly string[]> = hiddenTextsByKey(ctx), records = false): (() => readonly string[]) | undefined {
  let n = 0;
  for (const texts of held.values()) n += texts.length;
  const reread = n <= RENEWED_TEXTS;
  if (held.size === 0 || (!reread && !records)) return undefined;
  // Each key's value as last read, and its first leaves: one replaced by a value of other short
  // texts only (a card of cvv "999" for one of "737", no text of ECHO_MIN+ in either), or changed
  // so in place, is renewed too, for the worker's copy that the program reads and finds the records
  // of hidden context by.
  const values = new Map<string, unknown>();
  const leaves = new Map<string, readonly string[]>();
  for (const k of held.keys()) {
    const v = valueOf(ctx, k);
    values.set(k, v);
    leaves.set(k, firstLeaves(v));
  }
  return () => {
    let changed: string[] | undefined;
    for (const k of Object.keys(ctx)) {
      if (!isHiddenKey(k)) continue;
      const v = valueOf(ctx, k);
      const before = held.get(k);
      const texts = reread || before === undefined ? textsOf(v) : before;
      const first = firstLeaves(v);
      const was = values.get(k);
      if (before !== undefined && sameTexts(before, texts) && sameTexts(first, leaves.get(k) ?? NO_KEYS) && (v === was || sameTexts(hostLeaves(v), hostLeaves(was)))) continue;
      held.set(k, texts);
      values.set(k, v);
      leaves.set(k, first);
      (changed ??= []).push(k);
    }
    return changed ?? NO_KEYS;
  };
}

/** A hidden key's search as the first answer found it (with its texts then), and as the context holds it now. */
interface KeySearch {
  at: number;
  k: string;
  readonly texts: readonly string[];
  first: HiddenSearch<string>;
  search: HiddenSearch<string>;
}

/** Each hidden key's texts as the context holds them now. */
function hiddenTextsByKey(ctx: Context): Map<string, readonly string[]> {
  const held = new Map<string, readonly string[]>();
  for (const k of Object.keys(ctx)) if (isHiddenKey(k)) held.set(k, textsOf(valueOf(ctx, k)));
  return held;
}

/** A key a tool renewed in place, or added, since the last answer: searched for as the context holds it now, and a renewed one as it was first found too. */
function renew(context: KeySearch[], from: Context, at: number, k: string): void {
  const now = keySearch(from, at, k);
  const entry = context.find((e) => e.at === at && e.k === k);
  if (entry === undefined) context.push(now);
  else entry.search = now.search;
}

/**
 * The search for one hidden key's texts, kept per value object under its key while its texts are
 * the same: an agent's turns read the same context, and indexing 100,000 texts again for each
 * evaluation took 50-70 ms. The texts are read again each time (`hiddenTexts`, 1-2 ms), so a token
 * renewed in place between turns is searched for.
 */
const searches = new WeakMap<object, Map<string, { texts: readonly string[]; search: HiddenSearch<string> }>>();

function searchOf(v: unknown, k: string, texts: readonly string[]): HiddenSearch<string> {
  const made = (): HiddenSearch<string> => new HiddenSearch<string>(texts.map((t) => [t, k] as const));
  if (typeof v !== "object" || v === null) return made();
  let kept = searches.get(v);
  const hit = kept?.get(k);
  if (hit !== undefined && sameTexts(hit.texts, texts)) return hit.search;
  const search = made();
  if (kept === undefined) searches.set(v, (kept = new Map()));
  kept.set(k, { texts, search });
  return search;
}

/** A hidden key's value and texts as the host holds them now, and its search. */
function keySearch(from: Context, at: number, k: string): KeySearch {
  const v = valueOf(from, k);
  const texts = textsOf(v);
  const search = searchOf(v, k, texts);
  return { at, k, texts, first: search, search };
}

/** A context key's value as the host holds it; undefined where its getter throws (a read by the program reports why). */
export function valueOf(ctx: Context, k: string): unknown {
  try {
    return contextValue(ctx, k);
  } catch {
    return undefined;
  }
}

function textsOf(v: unknown): string[] {
  try {
    return hiddenTexts(v);
  } catch {
    // What cannot be read is not searched for; a read by the program reports it.
    return [];
  }
}
