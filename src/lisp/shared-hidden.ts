// Public context that holds a record of hidden context: a careless host's `profile` holding the
// same card object as `_card`, or a copy of it (a JSON round trip, a second query). A card's texts
// are short ("737", "4242"), so no search of 8+ character texts finds them; a collection of 2+
// entries equal to a hidden one is that record, wherever the host put it, and is shown as a
// stand-in for it (in what the program prints, a tool's result and the task's `data/` section). A
// record that merely shares some values with a hidden one (a public plan's "pro") is not.
import { equals, hashValue } from "./equality.js";
import { isHiddenKey } from "./hidden-names.js";
import { contextValue } from "./interop.js";
import { ECHO_MIN, hostLeaves, sameTexts } from "./marks.js";
import { isColl, Keyword, LFloat, isMap, type LMap, type LSet, type Value } from "./values.js";
import { Vec } from "./vector.js";

/** Parts of one hidden context value walked for its records, as its texts are (marks.ts HIDDEN_TEXT_PARTS). */
const INDEXED_PARTS = 20_000;

type Coll = Vec<Value> | LMap | LSet;

/** A text, number or keyword: what a record's equal copy must hold the same of. */
function leafOf(x: Value): unknown {
  if (typeof x === "string" || typeof x === "number") return x;
  if (x instanceof LFloat) return x.v;
  if (x instanceof Keyword) return `:${x.name}`;
  return undefined;
}

function childrenOf(c: Coll): Iterable<Value> {
  return isMap(c) ? c.values() : (c as Iterable<Value>);
}

/**
 * The fewest characters of a record's longest text, number or keyword of its own: `{:page 1 :size
 * 20}` is in too much ordinary data to be taken for a copy of a hidden one, a card's "737" is not.
 */
const TELLING = 3;

/**
 * The distinct records of one hash a public collection of that hash is compared with; a public
 * collection of a hash held by more (and of their texts and numbers) is taken for a copy. Two
 * thousand hidden records of one hash (texts of "Aa" and "BB" share theirs) made each of 5,000
 * public rows cost 2,000 comparisons: reading `data/pub` ran out of fuel or time. Equal records
 * (a log's repeated rows) are kept once.
 */
const ONE_HASH = 8;

/** One hidden key's records by hash, and every text, number and keyword they hold: a public collection holding another is no copy of one. */
interface KeyRecords {
  readonly byHash: ReadonlyMap<number, readonly Coll[]>;
  readonly leaves: ReadonlySet<unknown>;
}

/**
 * The records of one hidden key's value (collections of 2+ entries holding a text, number or
 * keyword of TELLING+ characters of their own, or of one entry holding one of ECHO_MIN+), within
 * INDEXED_PARTS of its collections.
 */
function keyRecords(roots: readonly Value[]): KeyRecords {
  const byHash = new Map<number, Coll[]>();
  const leaves = new Set<unknown>();
  let left = INDEXED_PARTS;
  const walk = (x: Value, depth: number): void => {
    if (--left < 0 || !isColl(x) || depth > 64) return;
    let telling = 0;
    for (const y of childrenOf(x)) {
      const leaf = leafOf(y);
      if (leaf === undefined) walk(y, depth + 1);
      else telling = Math.max(telling, String(leaf).length);
    }
    if (telling < TELLING || (x.size < 2 && telling < ECHO_MIN)) return;
    for (const y of childrenOf(x)) {
      const leaf = leafOf(y);
      if (leaf !== undefined) leaves.add(leaf);
    }
    const h = hashValue(x);
    const at = byHash.get(h);
    if (at === undefined) byHash.set(h, [x]);
    else if (at.length <= ONE_HASH && !at.some((r) => equals(r, x))) at.push(x);
  };
  for (const v of roots) walk(v, 0);
  return { byHash, leaves };
}

/** The hidden records of each hidden key. */
export class HiddenRecords {
  private readonly keys: ReadonlyArray<readonly [key: string, records: KeyRecords]>;

  constructor(hidden: ReadonlyArray<readonly [key: string, records: KeyRecords]>) {
    this.keys = hidden.filter(([, r]) => r.byHash.size > 0);
  }

  /** These records and those of `now` (the hidden context a tool renewed since), each found. */
  and(now: HiddenRecords): HiddenRecords {
    return new HiddenRecords([...this.keys, ...now.keys.filter(([, r]) => !this.keys.some(([, was]) => was === r))]);
  }

  get isEmpty(): boolean {
    return this.keys.length === 0;
  }

  /** The hidden key whose record `c` equals, if any. */
  private keyOf(c: Coll): string | undefined {
    let hash: number | undefined;
    for (const [key, { byHash, leaves }] of this.keys) {
      // Every text, number and keyword of its own must be the key's records': most public records fail at their first.
      let own = false;
      let other = false;
      for (const y of childrenOf(c)) {
        const leaf = leafOf(y);
        if (leaf === undefined) continue;
        if (!leaves.has(leaf)) {
          other = true;
          break;
        }
        own = true;
      }
      if (other || !own) continue;
      hash ??= hashValue(c);
      const at = byHash.get(hash);
      if (at === undefined) continue;
      // Past ONE_HASH, taken for a copy: that errs towards hiding.
      if (at.length > ONE_HASH) return key;
      for (const record of at) if (equals(c, record)) return key;
    }
    return undefined;
  }

  /** The collections `v` holds (or is) equal to a hidden record, each with the record's key; not those inside one found. */
  find(v: Value): Array<[record: Coll, key: string]> {
    const found: Array<[Coll, string]> = [];
    if (this.isEmpty) return found;
    const walk = (x: Value, depth: number): void => {
      if (!isColl(x) || depth > 64) return;
      const key = this.keyOf(x);
      if (key !== undefined) found.push([x, key]);
      else for (const y of childrenOf(x)) walk(y, depth + 1);
    };
    walk(v, 0);
    return found;
  }
}

/**
 * A hidden value as the program would read it (`read`), or, where it cannot be read whole (a part
 * nested past the limit, a collection over maxCollectionSize), each of its parts that can be, to
 * INDEXED_PARTS of them: a card beside an unreadable blob under one key was left out with the key,
 * and shown wherever public context held it.
 */
export function readableParts(from: unknown, read: (x: unknown) => Value): Value[] {
  const out: Value[] = [];
  let left = INDEXED_PARTS;
  const visit = (x: unknown, depth: number): void => {
    if (--left < 0 || typeof x !== "object" || x === null || depth > 64) return;
    try {
      out.push(read(x));
      return;
    } catch {
      // Its parts, below.
    }
    let parts: unknown[];
    try {
      parts = Array.isArray(x) || x instanceof Set ? [...(x as Iterable<unknown>)] : x instanceof Map ? [...(x as Map<unknown, unknown>).values()] : Object.values(x);
    } catch {
      return;
    }
    for (const y of parts) visit(y, depth + 1);
  };
  visit(from, 0);
  return out;
}

/**
 * The readable parts of the hidden keys a worker's copy of the context holds as errors (the host
 * could not convert them whole), which the host sends beside the error for their records.
 */
const sentParts = new WeakMap<object, Map<string, readonly Value[]>>();

/** Notes the readable parts of a key of `ctx` (a worker's copy) that reading throws for. */
export function noteReadableParts(ctx: object, key: string, parts: readonly Value[]): void {
  let kept = sentParts.get(ctx);
  if (kept === undefined) sentParts.set(ctx, (kept = new Map()));
  kept.set(key, parts);
}

/**
 * Each hidden key's records, kept per host value while its leaves are the same (`hostLeaves`, 1-2
 * ms): an agent's turns read the same context, and converting a 100,000-row hidden key again for
 * each evaluation that read public context took 170-400 ms. A value changed in place is indexed again.
 */
const indexed = new WeakMap<object, Map<string, { leaves: readonly string[]; records: KeyRecords }>>();

/**
 * The records of the hidden keys of `ctx` and of `callers`, each read by `read` from the host's
 * value (converted as the program would read it; where it cannot be whole, its readable parts)
 * unless indexed already.
 */
export function hiddenRecords(ctx: Readonly<Record<string, unknown>>, read: (key: string, from: unknown) => Value, callers: ReadonlyArray<Readonly<Record<string, unknown>>> = []): HiddenRecords {
  const hidden: Array<[string, KeyRecords]> = [];
  // The callers' hidden context too (the runs above, whose host tools this one shares), read here as the sent-back search reads it.
  for (const [k, source] of [ctx, ...callers].flatMap((c) => Object.keys(c).map((k) => [k, c] as const))) {
    if (!isHiddenKey(k)) continue;
    let from: unknown;
    try {
      from = contextValue(source, k);
    } catch {
      const parts = sentParts.get(source)?.get(k);
      if (parts !== undefined) hidden.push([k, keyRecords(parts)]);
      continue;
    }
    try {
      // A text or number is no record.
      if (typeof from !== "object" || from === null) continue;
      const leaves = hostLeaves(from);
      let kept = indexed.get(from);
      const hit = kept?.get(k);
      if (hit !== undefined && sameTexts(hit.leaves, leaves)) {
        hidden.push([k, hit.records]);
        continue;
      }
      const records = keyRecords(readableParts(from, (x) => read(k, x)));
      if (kept === undefined) indexed.set(from, (kept = new Map()));
      kept.set(k, { leaves, records });
      hidden.push([k, records]);
    } catch {
      // Left out, as above.
    }
  }
  return new HiddenRecords(hidden);
}
