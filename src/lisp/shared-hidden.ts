// Public context that holds a record of hidden context: a careless host's `profile` holding the
// same card object as `_card`, or a copy of it (a JSON round trip, a second query). A card's texts
// are short ("737", "4242"), so no search of 8+ character texts finds them; a collection of 2+
// entries equal to a hidden one is that record, wherever the host put it, and is shown as a
// stand-in for it (in what the program prints and in the task's `data/` section). A record that
// merely shares some values with a hidden one (a public plan's "pro") is not.
import { equals, hashValue } from "./equality.js";
import { isHiddenKey } from "./hidden-names.js";
import { ECHO_MIN, Marks } from "./marks.js";
import { Keyword, LFloat, isMap, isSet, type LMap, type LSet, type Value } from "./values.js";
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

function isCollection(x: Value): x is Coll {
  return x instanceof Vec || isMap(x) || isSet(x);
}

/**
 * The fewest characters of a record's longest text, number or keyword of its own: `{:page 1 :size
 * 20}` is in too much ordinary data to be taken for a copy of a hidden one, a card's "737" is not.
 */
const TELLING = 3;

/**
 * The hidden records (collections of 2+ entries holding a text, number or keyword of TELLING+
 * characters of their own, or of one entry holding one of ECHO_MIN+), by hash.
 */
export class HiddenRecords {
  private readonly byHash = new Map<number, Array<[record: Coll, key: string]>>();
  /** Every text, number and keyword of the indexed records: a public collection holding another is no copy of one. */
  private readonly leaves = new Set<unknown>();

  constructor(hidden: Iterable<readonly [key: string, value: Value]>) {
    let left = 0;
    const walk = (x: Value, key: string, depth: number): void => {
      if (--left < 0 || !isCollection(x) || depth > 64) return;
      let telling = 0;
      for (const y of childrenOf(x)) {
        const leaf = leafOf(y);
        if (leaf === undefined) walk(y, key, depth + 1);
        else telling = Math.max(telling, String(leaf).length);
      }
      if (telling < TELLING || (x.size < 2 && telling < ECHO_MIN)) return;
      for (const y of childrenOf(x)) {
        const leaf = leafOf(y);
        if (leaf !== undefined) this.leaves.add(leaf);
      }
      const h = hashValue(x);
      const at = this.byHash.get(h);
      if (at === undefined) this.byHash.set(h, [[x, key]]);
      else at.push([x, key]);
    };
    // Each key its own budget: a 20,000-entry `_log` listed first left `_card` unindexed.
    for (const [key, v] of hidden) {
      left = INDEXED_PARTS;
      walk(v, key, 0);
    }
  }

  /** These records and those of `now` (the hidden context a tool renewed since), each found. */
  and(now: HiddenRecords): HiddenRecords {
    const both = new HiddenRecords([]);
    for (const [h, at] of [...this.byHash, ...now.byHash]) both.byHash.set(h, [...(both.byHash.get(h) ?? []), ...at]);
    for (const leaf of [...this.leaves, ...now.leaves]) both.leaves.add(leaf);
    return both;
  }

  get isEmpty(): boolean {
    return this.byHash.size === 0;
  }

  /** The hidden key whose record `c` equals, if any. */
  private keyOf(c: Coll): string | undefined {
    // Every text, number and keyword of its own must be a hidden record's: most public records fail at their first.
    let own = false;
    for (const y of childrenOf(c)) {
      const leaf = leafOf(y);
      if (leaf === undefined) continue;
      if (!this.leaves.has(leaf)) return undefined;
      own = true;
    }
    if (!own) return undefined;
    for (const [record, key] of this.byHash.get(hashValue(c)) ?? []) if (equals(c, record)) return key;
    return undefined;
  }

  /** The collections `v` holds (or is) equal to a hidden record, each with the record's key; not those inside one found. */
  find(v: Value): Array<[record: Coll, key: string]> {
    const found: Array<[Coll, string]> = [];
    if (this.isEmpty) return found;
    const walk = (x: Value, depth: number): void => {
      if (!isCollection(x) || depth > 64) return;
      const key = this.keyOf(x);
      if (key !== undefined) found.push([x, key]);
      else for (const y of childrenOf(x)) walk(y, depth + 1);
    };
    walk(v, 0);
    return found;
  }

  /** `v` with each collection equal to a hidden record shown as that record is (its parts stand-ins): a prompt's sample of public context. */
  hideIn(v: Value): Value {
    const found = this.find(v);
    if (found.length === 0) return v;
    const marks = new Marks();
    for (const [record, key] of found) marks.hidden(key, record);
    return marks.hide(v);
  }
}

/**
 * The records of `ctx`'s hidden keys, each read by `read` (converted as the program would read
 * it); a key that cannot be read (too big, too deep, too slow) is left out, as it holds no record
 * the program could print either.
 */
export function hiddenRecords(ctx: Readonly<Record<string, unknown>>, read: (key: string) => Value): HiddenRecords {
  const hidden: Array<[string, Value]> = [];
  for (const k of Object.keys(ctx)) {
    if (!isHiddenKey(k)) continue;
    try {
      hidden.push([k, read(k)]);
    } catch {
      // Left out, as above.
    }
  }
  return new HiddenRecords(hidden);
}
