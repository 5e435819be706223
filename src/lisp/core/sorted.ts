// Sorted maps and sets stay sorted, as in Clojure: assoc, conj, merge, into, update, dissoc,
// disj and empty on one give a sorted result. A sorted collection is an immutable map or set whose
// iteration order is its sort order; which ones are sorted, and by what, is recorded here,
// by identity. Large ones are sorted tree maps (sorted-map.ts; a set wraps one), which place each
// key they are given, or an OrderedMap/OrderedSet already in order (one that crossed between
// threads, or a filter's result), made a tree when a key would fall out of order; small ones are
// plain maps and sets that hash like any other (see sortedMapOf), marked in a weak table.
import { isOrdered, OrderedMap, OrderedSet } from "ptc-immutable";
import { compare, compareDescending } from "../equality.js";
import { LispError, typeErr } from "../errors.js";
import { charge, tick } from "../runtime.js";
import { type Bound, treeHeldKey, treeMapOf, treeOrder, treeRange, treeSetOf } from "../sorted-map.js";
import { EMPTY_MAP, isMap, isSet, LMap, LSet, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe } from "./args.js";
import { Builtin, type BuiltinDef } from "./registry.js";
import type { Cmp } from "./sequences.js";

/** Sorted collections up to this size are plain maps and sets (insertion-ordered while small). */
export const ORDERED_UP_TO = 8;

const orders = new WeakMap<object, Cmp>();

/** Whether an order is compare's, either way round: one that = agrees with. */
const byCompare = (cmp: Cmp): boolean => cmp === compare || cmp === compareDescending;

/** How compare's refusal of two types begins (equality.ts), told from the builtin's own type errors. */
const COMPARE_REFUSAL = "cannot compare ";

const KEY_TYPES_HINT = "sorted collections need keys of one comparable type (numbers, strings or keywords)";

/**
 * A failure of `cmp` while `who` placed keys: compare's refusal of keys of two types names
 * `who`; a comparator of the program's own reports its errors itself, at its own position.
 */
function orderFailure(who: string, cmp: Cmp, e: unknown): unknown {
  return e instanceof LispError && e.kind === "type_error" && byCompare(cmp) ? typeErr(`${who}: ${e.message}`, KEY_TYPES_HINT) : e;
}

/** The order of a sorted map or set, or undefined for any other value. Cheap for large plain maps. */
export function sortOrder(x: Value): Cmp | undefined {
  if (x === null || typeof x !== "object") return undefined;
  if (isOrdered(x)) return treeOrder(x as LMap | LSet) ?? orders.get(x) ?? compare;
  if ((!isMap(x) && !isSet(x)) || x.size > ORDERED_UP_TO) return undefined;
  return orders.get(x);
}

// The keys of a sorted collection in its order, made (and charged) on its first need: a lookup
// miss in one with its own order, a subseq. Later ones are binary searches.
const heldKeys = new WeakMap<object, Value[]>();

function keysInOrder(coll: LMap | LSet): Value[] {
  let ks = heldKeys.get(coll);
  if (ks === undefined) {
    charge(coll.size);
    ks = isMap(coll) ? [...coll.keys()] : coll.toArray();
    heldKeys.set(coll, ks);
  }
  return ks;
}

/**
 * The key a map or set sorted by its own comparator holds where the comparator places `key`,
 * or undefined: Clojure looks keys of such a collection up by the comparator, not by =, so
 * (get (sorted-set-by by-length "aa") "bb") is "aa". Undefined for any other collection.
 */
export function heldKey(coll: LMap | LSet, key: Value): Value | undefined {
  const cmp = sortOrder(coll);
  if (cmp === undefined || byCompare(cmp) || coll.size === 0) return undefined;
  if (treeOrder(coll) !== undefined) return treeHeldKey(coll, key);
  const ks = keysInOrder(coll);
  let lo = 0;
  let hi = ks.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = cmp(ks[mid], key);
    if (c === 0) return ks[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return undefined;
}

/**
 * Marks a map or set built in its sort order (`cmp`, the default order unless given) as sorted:
 * how a sorted value rebuilt on another thread stays sorted. Large or empty ones must be Ordered
 * already (an Ordered one is in the default order unless marked otherwise).
 */
export function markSorted<T extends LMap | LSet>(x: T, cmp: Cmp = compare): T {
  if (cmp !== compare || !isOrdered(x)) orders.set(x, cmp);
  return x;
}

/**
 * xs in `cmp` order, one per place in it: of a run the order calls equal, the first stays
 * (`join` gives what it becomes with each later one), as a Clojure sorted collection adds an
 * element its comparator finds there as the one already held. The sort is stable, so the first
 * is the earliest in xs.
 */
function sorting<T>(who: string, xs: T[], key: (x: T) => Value, cmp: Cmp, join: (kept: T, later: T) => T = (kept) => kept): T[] {
  charge(xs.length > 1 ? xs.length * Math.ceil(Math.log2(xs.length)) : xs.length);
  try {
    // The comparisons were charged up front; the clock is checked every 4,096 of them.
    let i = 0;
    xs.sort((x, y) => {
      tick(i++);
      return cmp(key(x), key(y));
    });
    let n = 0;
    for (let j = 0; j < xs.length; j++) {
      tick(i++);
      if (n > 0 && cmp(key(xs[n - 1]), key(xs[j])) === 0) xs[n - 1] = join(xs[n - 1], xs[j]);
      else xs[n++] = xs[j];
    }
    xs.length = n;
    return xs;
  } catch (e) {
    throw orderFailure(who, cmp, e);
  }
}

// An empty OrderedMap is one shared value; one made by removing an entry is its own, so an
// empty map sorted by a custom order can be told apart from (sorted-map).
const freshEmptyMap = (): LMap => OrderedMap<Value, Value>([[null, null]]).remove(null);

/** A sorted map of distinct-key pairs in `cmp` order (the default order unless given). */
export function sortedMapBy(who: string, pairs: [Value, Value][], cmp: Cmp = compare): LMap {
  // A key the order finds held keeps its place and takes the later value, as assoc does.
  sorting(who, pairs, (p) => p[0], cmp, (kept, later): [Value, Value] => [kept[0], later[1]]);
  if (pairs.length > ORDERED_UP_TO) {
    charge(pairs.length);
    return treeMapOf(pairs, cmp);
  }
  const small = pairs.length > 0;
  const base: LMap = small ? EMPTY_MAP : cmp === compare ? OrderedMap<Value, Value>() : freshEmptyMap();
  const out = base.withMutations((m) => {
    for (let i = 0; i < pairs.length; i++) {
      tick(i);
      m.set(pairs[i][0], pairs[i][1]);
    }
  });
  if (small || cmp !== compare) orders.set(out, cmp);
  return out;
}

// Emptying an OrderedSet gives the shared empty one, so a fresh one is made around a fresh
// empty map with the constructor hook immutable's own sets use.
const freshEmptySet = (): LSet => (OrderedSet<Value>() as unknown as { __make(map: LMap): LSet }).__make(freshEmptyMap());

/** A sorted set of distinct elements in `cmp` order. */
export function sortedSetBy(who: string, xs: Value[], cmp: Cmp = compare): LSet {
  sorting(who, xs, (x) => x, cmp);
  if (xs.length > ORDERED_UP_TO) {
    charge(xs.length);
    return treeSetOf(xs, cmp);
  }
  const small = xs.length > 0;
  const out = small
    ? LSet<Value>(xs)
    : (xs.length === 0 && cmp !== compare ? freshEmptySet() : OrderedSet<Value>()).withMutations((s) => {
        for (let i = 0; i < xs.length; i++) {
          tick(i);
          s.add(xs[i]);
        }
      });
  if (small || cmp !== compare) orders.set(out, cmp);
  return out;
}

/** `after`, derived from `before` by a builtin, sorted again when `before` was sorted. */
export function keepSorted(who: string, before: Value, after: Value): Value {
  if (after === before) return after;
  const cmp = sortOrder(before);
  if (cmp === undefined) return after;
  // A large tree map or set stays in order through every change.
  if ((isMap(after) || isSet(after)) && after.size > ORDERED_UP_TO && treeOrder(after) !== undefined) return after;
  if (stillSorted(who, before as LMap | LSet, after, cmp)) {
    const held = after as LMap | LSet;
    const out = held.size < (before as LMap | LSet).size ? withoutEdgeGaps(held, cmp) : held;
    if (cmp !== compare) orders.set(out, cmp);
    return out;
  }
  // What `before` held comes first, so of two the order calls equal the held one stays.
  if (isMap(after)) return sortedMapBy(who, heldFirst([...after.entries()], (p) => (before as LMap).has(p[0])), cmp);
  if (isSet(after)) return sortedSetBy(who, heldFirst(after.toArray(), (x) => (before as LSet).has(x)), cmp);
  return after;
}

/**
 * Whether `after`, made from a large sorted `before` by an immutable operation, is in order as it
 * is, so a loop of assoc or conj is not a sort of everything at each step: OrderedMap and
 * OrderedSet keep their keys' places and add new ones at the end, so `after` is in order when it
 * has no new keys, or when its new keys, the last ones, ascend past every held one.
 */
function stillSorted(who: string, before: LMap | LSet, after: Value, cmp: Cmp): boolean {
  if (before.size <= ORDERED_UP_TO || !isOrdered(after) || (!isMap(after) && !isSet(after)) || after.size <= ORDERED_UP_TO) return false;
  // The builtins of KEEPS_ORDER either only add and change keys or only remove them: no more
  // keys than before means held keys only.
  if (after.size <= before.size) return true;
  const added = after.size - before.size;
  if (added > ORDERED_UP_TO) return false;
  const fresh: Value[] = [];
  for (const k of after.keySeq().reverse()) {
    if (fresh.length === added) break;
    if (before.has(k)) return false;
    fresh.push(k);
  }
  // The last held key, by a reverse iterator: keySeq().last() walks every key.
  let prev: Value = null;
  for (const k of before.keySeq().reverse()) {
    prev = k;
    break;
  }
  try {
    for (let i = fresh.length - 1; i >= 0; i--) {
      if (cmp(prev, fresh[i]) >= 0) return false;
      prev = fresh[i];
    }
  } catch (e) {
    throw orderFailure(who, cmp, e);
  }
  return true;
}

/** The longest run of gaps left at either end of a large sorted collection's entries. */
const EDGE_GAPS = 256;

type Entries = { readonly size: number; get(i: number): unknown };

/**
 * x, rebuilt without gaps when one end of its entries is a run of EDGE_GAPS of them. OrderedMap
 * leaves a gap where an entry was removed and walks every one before its first entry (after its
 * last): taking the least key out over and over, as a priority queue does, made each first a
 * walk of all the keys taken before, n²/4 steps that no fuel paid for. The rebuild is charged.
 */
function withoutEdgeGaps(x: LMap | LSet, cmp: Cmp): LMap | LSet {
  if (!isOrdered(x) || x.size <= ORDERED_UP_TO || treeOrder(x) !== undefined) return x;
  const list = (isMap(x) ? (x as unknown as { _list: Entries })._list : (x as unknown as { _map: { _list: Entries } })._map._list);
  if (list.size - x.size < EDGE_GAPS || (gapRun(list, 0, 1) < EDGE_GAPS && gapRun(list, list.size - 1, -1) < EDGE_GAPS)) return x;
  charge(x.size);
  let i = 0;
  if (isMap(x)) {
    return (cmp === compare ? OrderedMap<Value, Value>() : freshEmptyMap()).withMutations((m) => {
      for (const [k, v] of x) {
        tick(i++);
        m.set(k, v);
      }
    });
  }
  return (cmp === compare ? OrderedSet<Value>() : freshEmptySet()).withMutations((s) => {
    for (const v of x) {
      tick(i++);
      s.add(v);
    }
  });
}

/** How many gaps in a row the entries hold from `from` on, up to EDGE_GAPS. */
function gapRun(list: Entries, from: number, step: 1 | -1): number {
  let n = 0;
  for (let i = from; n < EDGE_GAPS && i >= 0 && i < list.size && list.get(i) === undefined; i += step) n++;
  return n;
}

function heldFirst<T>(xs: T[], held: (x: T) => boolean): T[] {
  const added: T[] = [];
  let n = 0;
  for (const x of xs) {
    if (held(x)) xs[n++] = x;
    else added.push(x);
  }
  xs.length = n;
  for (const x of added) xs.push(x);
  return xs;
}

/** How many elements a clojure.set operation's argument holds, as Clojure's count reads it. */
const setCount = (x: Value): number => (x !== null && typeof x === "object" && "size" in x && typeof x.size === "number" ? x.size : 0);

/**
 * The argument a clojure.set operation builds on: the one Clojure builds on when that is sorted,
 * so its order is kept wherever it stands, else the first, whose order reads naturally. Clojure's
 * union builds on the largest set and intersection on the smallest; of two the same size the
 * first, of three or more the last (its bubble-max-key).
 */
function setBase(args: readonly Value[], sign: 1 | -1): number {
  let at = 0;
  if (args.length === 2) at = sign * setCount(args[1]) > sign * setCount(args[0]) ? 1 : 0;
  else for (let i = 1; i < args.length; i++) if (sign * setCount(args[i]) >= sign * setCount(args[at])) at = i;
  return at > 0 && sortOrder(args[at]) !== undefined ? at : 0;
}

/** The argument clojure.set/union adds the others into. */
export const unionBase = (args: readonly Value[]): number => setBase(args, 1);

/** The argument clojure.set/intersection keeps the shared elements of. */
export const intersectionBase = (args: readonly Value[]): number => setBase(args, -1);

/**
 * Builtins whose result is their collection argument changed: sorted in, sorted out, given as
 * the argument's position or how to find it. The clojure.set operations build on the set
 * Clojure's conj and disj build on.
 */
const KEEPS_ORDER: Readonly<Record<string, number | ((args: readonly Value[]) => number)>> = {
  assoc: 0, "assoc-in": 0, update: 0, "update-in": 0, dissoc: 0, merge: 0, "merge-with": 1, conj: 0, into: 0, disj: 0, empty: 0,
  union: unionBase, intersection: intersectionBase, difference: 0, select: 1,
};

/** Wraps a builtin so a sorted collection argument gives a sorted result. */
export function keepingSortedOrder(def: BuiltinDef): BuiltinDef {
  const where = Object.hasOwn(KEEPS_ORDER, def.name) ? KEEPS_ORDER[def.name] : undefined;
  if (where === undefined) return def;
  const { fn, f1, f2 } = def;
  // A tree map or set places keys as the builtin adds them: compare's refusal of two types
  // names the builtin, as a sort's does.
  const placing = (base: Value, make: () => Value): Value => {
    try {
      return keepSorted(def.name, base, make());
    } catch (e) {
      const cmp = base !== null && typeof base === "object" && (isMap(base) || isSet(base)) ? treeOrder(base) : undefined;
      throw cmp === undefined || !(e instanceof LispError && e.message.startsWith(COMPARE_REFUSAL)) ? e : orderFailure(def.name, cmp, e);
    }
  };
  return {
    ...def,
    fn: (a) => {
      const base = a[typeof where === "number" ? where : where(a)];
      return placing(base, () => fn(a));
    },
    ...(f1 ? { f1: (x: Value) => placing(x, () => f1(x)) } : {}),
    ...(f2 ? { f2: (x: Value, y: Value) => placing((typeof where === "number" ? where : where([x, y])) === 0 ? x : y, () => f2(x, y)) } : {}),
  };
}

type Test = "<" | "<=" | ">" | ">=";

/** A subseq test: one of the builtins `allowed`, by which Clojure's subseq also tells them apart. */
function boundTest(who: string, t: Value, allowed: readonly Test[], role: string): Test {
  if (t instanceof Builtin && (allowed as readonly string[]).includes(t.name)) return t.name as Test;
  const names = allowed.length === 4 ? "<, <=, > or >=" : allowed.join(" or ");
  throw typeErr(`${who} expects ${names} as its ${role}, got ${describe(t)}`, `(${who} sc > start-key < end-key), or (${who} sc >= key)`);
}

/** The first index of ks, in `cmp` order, whose key comes after `key` (`after`) or not before it. */
function bound(ks: readonly Value[], key: Value, cmp: Cmp, after: boolean): number {
  charge(Math.ceil(Math.log2(ks.length + 1)));
  let lo = 0;
  let hi = ks.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = cmp(ks[mid], key);
    if (after ? c <= 0 : c < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Clojure's (subseq sc test key) and (subseq sc start-test start-key end-test end-key), and
 * rsubseq their reverse: the elements (entries of a map) whose keys sc's own order places as
 * the tests say, or nil when there are none. A binary search over sc's keys, so a loop of
 * them over one collection pays its size once.
 */
export function subseq(who: "subseq" | "rsubseq", args: readonly Value[]): Value {
  const sc = args[0];
  const cmp = sortOrder(sc);
  if (cmp === undefined) throw typeErr(`${who} expects a sorted collection, got ${describe(sc)}`, "make one with sorted-set or sorted-map; filter any other collection");
  if (args.length === 4) throw typeErr(`${who} expects a test and a key, or a start test and key and an end test and key`, `(${who} sc > start-key < end-key), or (${who} sc >= key)`);
  const coll = sc as LMap | LSet;
  let from: Bound | null = null;
  let to: Bound | null = null;
  if (args.length === 3) {
    const t = boundTest(who, args[1], ["<", "<=", ">", ">="], "test");
    if (t === ">" || t === ">=") from = { key: args[2], strict: t === ">" };
    else to = { key: args[2], strict: t === "<" };
  } else {
    const start = boundTest(who, args[1], [">", ">="], "start test");
    const end = boundTest(who, args[3], ["<", "<="], "end test");
    from = { key: args[2], strict: start === ">" };
    to = { key: args[4], strict: end === "<" };
  }
  if (coll.size === 0) return null;
  // In output order: a tree is walked between the bounds (it may be new each call, in a loop
  // that adds to it); any other sorted collection is searched in its keys, copied out once.
  let keys: Value[];
  try {
    if (treeOrder(coll) !== undefined) keys = treeRange(coll, from, to, who === "rsubseq");
    else {
      const ks = keysInOrder(coll);
      const lo = from === null ? 0 : bound(ks, from.key, cmp, from.strict);
      const hi = to === null ? ks.length : bound(ks, to.key, cmp, !to.strict);
      keys = hi <= lo ? [] : ks.slice(lo, hi);
      if (who === "rsubseq") keys.reverse();
    }
  } catch (e) {
    throw orderFailure(who, cmp, e);
  }
  if (keys.length === 0) return null;
  charge(keys.length);
  const m = isMap(coll) ? coll : null;
  const out: Value[] = m === null ? keys : new Array<Value>(keys.length);
  if (m !== null) {
    for (let i = 0; i < keys.length; i++) {
      tick(i);
      out[i] = Vec.of<Value>(keys[i], m.get(keys[i]) as Value);
    }
  }
  return Vec.fromArray(out);
}
