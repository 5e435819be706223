// Set builtins: constructors, disj, and the clojure.set operations (also reachable as
// set/union and unqualified). The operations accept vectors as well as sets, since an LLM
// often has a vector of ids at hand; the result is always a set.
import { typeErr } from "../errors.js";
import { call1 } from "../fn.js";
import { charge, checkCollectionSize, tick } from "../runtime.js";
import { seqArray } from "../seq.js";
import { EMPTY_MAP, EMPTY_SET, isMap, isSet, LMap, LSet, truthy, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, isCallable } from "./args.js";
import { comparator } from "./sequences.js";
import { storedKey } from "../equality.js";
import { hasKey, lookup } from "../lookup.js";
import { mapInvert, renameKeys, selectKeys } from "./maps.js";
import { heldKey, intersectionBase, keepSorted, ORDERED_UP_TO, sortedSetBy, sortOrder, unionBase } from "./sorted.js";
import type { BuiltinDef } from "./registry.js";

function setOf(x: Value): Value {
  if (isSet(x)) return x;
  return hashSet(seqArray(x, "set"));
}

/** A set of xs, built element by element so the clock is checked on a large one. */
function hashSet(xs: Value[]): Value {
  charge(xs.length);
  checkCollectionSize(xs.length);
  return EMPTY_SET.withMutations((s) => {
    for (let i = 0; i < xs.length; i++) {
      s.add(xs[i]);
      tick(i);
    }
  });
}

function sortedSet(xs: Value[]): Value {
  charge(xs.length);
  checkCollectionSize(xs.length);
  return sortedSetOf("sorted-set", xs.slice());
}

/** A sorted set of the elements (sorted here, in place), built as sorted-set builds it. */
export function sortedSetOf(who: string, xs: Value[]): Value {
  return sortedSetBy(who, xs);
}

function disj(args: Value[]): Value {
  const s = args[0];
  if (s === null) return null;
  if (!isSet(s)) {
    throw typeErr(`disj expects a set, got ${describe(s)}`, isMap(s) ? "use dissoc to remove keys from a map" : s instanceof Vec ? "to drop elements of a vector use remove or filter" : undefined);
  }
  if (args.length === 1) return s;
  charge(args.length - 1);
  // A set sorted by its own comparator drops the element the comparator places there.
  return withoutElements(s, args.slice(1).map((x) => (s.has(x) ? x : (heldKey(s, x) ?? x))));
}

/**
 * s without the given elements. immutable's remove moves the last element of a small set into
 * the gap, so small sets (which print in insertion order) are filtered instead to keep their order.
 */
function withoutElements(s: LSet, xs: Iterable<Value>): LSet {
  if (s.size <= ORDERED_UP_TO) {
    const drop = LSet<Value>(xs);
    return drop.size === 0 ? s : s.filter((x) => !drop.has(x));
  }
  return s.withMutations((out) => {
    for (const x of xs) out.remove(x);
  });
}

/** A set argument of a set operation: sets as they are, nil as empty, vectors converted. */
function setArg(who: string, x: Value, pos: number): LSet {
  if (isSet(x)) return x;
  if (x === null) return EMPTY_SET;
  if (x instanceof Vec) {
    charge(x.size);
    checkCollectionSize(x.size);
    return LSet<Value>(x.toArray());
  }
  throw typeErr(`${who} expects sets, argument ${pos} is ${describe(x)}`, isMap(x) ? "use merge to combine maps, or (set (keys m)) for a map's keys" : "make a set with (set coll) or #{...}");
}

function setArgs(who: string, args: Value[]): LSet[] {
  const out = new Array<LSet>(args.length);
  for (let i = 0; i < args.length; i++) out[i] = setArg(who, args[i], i + 1);
  return out;
}

function union(args: Value[]): Value {
  if (args.length === 0) return EMPTY_SET;
  // Adding into the first set keeps its order, which reads naturally; into the largest when
  // Clojure builds on that one and it is sorted, so the result is sorted as Clojure's is (the
  // registry wraps union with keepingSortedOrder, which asks unionBase the same).
  let at = unionBase(args);
  // A set past the small-set size iterates in hash order whatever it was built from, so a larger
  // one than the base is built on instead, as Clojure does: a small first set is not rebuilt
  // from a large one at each call.
  if (sortOrder(args[at]) === undefined) {
    let size = args[at] instanceof Vec || isSet(args[at]) ? (args[at] as Vec<Value> | LSet).size : 0;
    for (let i = 0; i < args.length; i++) {
      const x = args[i];
      if (isSet(x) && x.size > ORDERED_UP_TO && x.size > size && sortOrder(x) === undefined) [at, size] = [i, x.size];
    }
  }
  const base = setArg("union", args[at], at + 1);
  // Vectors are added as they are (not turned into sets first) so their order survives.
  const parts: Array<LSet | Vec<Value>> = [];
  let total = 0;
  for (let i = 0; i < args.length; i++) {
    if (i === at) continue;
    const x = args[i];
    const part = x instanceof Vec ? x : setArg("union", x, i + 1);
    parts.push(part);
    total += part.size;
  }
  if (total === 0) return base;
  charge(total);
  return base.withMutations((out) => {
    // An element = to one held keeps the earliest argument's: those before the base replace
    // what they meet, the last first, so the first argument's stays.
    for (let j = at - 1; j >= 0; j--) {
      const xs = parts[j] instanceof Vec ? parts[j].toArray() : [...parts[j]];
      for (let k = xs.length - 1; k >= 0; k--) {
        if (out.has(xs[k])) out.remove(xs[k]);
        out.add(xs[k]);
      }
      checkCollectionSize(out.size);
    }
    for (let j = at; j < parts.length; j++) {
      for (const x of parts[j]) out.add(x);
      checkCollectionSize(out.size);
    }
  });
}

function intersection(args: Value[]): Value {
  const sets = setArgs("intersection", args);
  if (sets.length === 1) return sets[0];
  // Filtering the first set keeps its order, which reads naturally; the smallest when Clojure
  // keeps that one and it is sorted (see union).
  const at = intersectionBase(args);
  const base = sets[at];
  let least = at;
  for (let i = 0; i < sets.length; i++) if (sets[i].size < sets[least].size) least = i;
  // hasKey finds an element of a set sorted by its own comparator by that comparator, as contains? does.
  if (least === at || base.size <= ORDERED_UP_TO) {
    charge(base.size * (sets.length - 1));
    return base.filter((x) => {
      for (let i = 0; i < sets.length; i++) if (i !== at && !hasKey(sets[i], x)) return false;
      return true;
    });
  }
  // A large base is not walked for what a small set holds (Clojure walks the smallest too): the
  // shared elements are looked up in it, and kept as it holds them.
  const from = sets[least];
  charge(from.size * (sets.length - 1));
  return EMPTY_SET.withMutations((out) => {
    for (const x of from) {
      let shared = true;
      for (let i = 0; i < sets.length && shared; i++) if (i !== least && !hasKey(sets[i], x)) shared = false;
      if (shared) out.add(base.has(x) ? (storedKey(base, x) as Value) : (heldKey(base, x) ?? x));
    }
  });
}

function difference(args: Value[]): Value {
  const sets = setArgs("difference", args);
  let out = sets[0];
  for (let i = 1; i < sets.length && out.size > 0; i++) {
    const other = sets[i];
    const from = out;
    // As Clojure's disj and contains?: a set sorted by its own comparator finds elements by it,
    // and stays sorted from one argument to the next so it still does.
    if (other.size <= out.size) {
      charge(other.size);
      out = withoutElements(out, sortOrder(from) === undefined ? other : other.map((x) => (from.has(x) ? x : (heldKey(from, x) ?? x))));
    } else {
      charge(out.size);
      out = out.filter((x) => !hasKey(other, x));
    }
    out = keepSorted("difference", from, out) as LSet;
  }
  return out;
}

/** Whether every element of args[inner] is in args[outer]. */
function contained(who: string, args: readonly [Value, Value], inner: 0 | 1): boolean {
  const x = setArg(who, args[inner], inner + 1);
  const y = setArg(who, args[1 - inner], 2 - inner);
  if (x.size > y.size) return false;
  charge(x.size);
  for (const v of x) if (!y.has(v)) return false;
  return true;
}

function select(pred: Value, s: Value): Value {
  if (!isCallable(pred)) {
    throw typeErr(`select expects a predicate as its first argument, got ${describe(pred)}`, isSet(pred) ? "the predicate comes first: (select pred s)" : undefined);
  }
  const xs = setArg("select", s, 2);
  charge(xs.size);
  return xs.filter((x) => truthy(call1(pred, x)));
}

// ---- clojure.set's relational functions: a relation is a set (or vector) of maps ----

/** The maps of a relation argument, as a set. */
function relation(who: string, x: Value, pos: number): LSet {
  const rel = setArg(who, x, pos);
  for (const m of rel) if (!isMap(m)) throw typeErr(`${who} expects maps in its relation (argument ${pos}), got ${describe(m)}`, "a relation is a set or vector of maps, e.g. #{{:id 1 :name \"a\"}}");
  return rel;
}

/** (index xrel ks): each (select-keys x ks) to the set of the maps x that give it. */
function index(rel: LSet, ks: Value): LMap {
  charge(rel.size);
  return EMPTY_MAP.withMutations((out) => {
    let i = 0;
    for (const x of rel) {
      tick(i++);
      const k = selectKeys(x, ks);
      out.set(k, ((out.get(k) as LSet | undefined) ?? EMPTY_SET).add(x));
    }
  });
}

/**
 * Clojure's join: the merged pairs of maps that agree on the keys both relations' first maps
 * have (the natural join), or on km's keys of xrel and their values' keys of yrel. The smaller
 * relation is indexed; the larger one's map wins where both have a key, as in Clojure.
 */
function join(args: Value[]): Value {
  const who = "clojure.set/join";
  const xrel = relation(who, args[0], 1);
  const yrel = relation(who, args[1], 2);
  let km: LMap | null = null;
  if (args.length === 3) {
    if (!isMap(args[2])) throw typeErr(`${who} expects a map of xrel key to yrel key as its third argument, got ${describe(args[2])}`, "(clojure.set/join xrel yrel {:id :user-id})");
    km = args[2];
  }
  if (km === null && (xrel.size === 0 || yrel.size === 0)) return EMPTY_SET;
  const smallFirst = xrel.size <= yrel.size;
  const [r, s] = smallFirst ? [xrel, yrel] : [yrel, xrel];
  let k: LMap;
  if (km !== null) k = smallFirst ? (mapInvert(km) as LMap) : km;
  else {
    const shared = (xrel.first() as LMap).keySeq().filter((key) => hasKey(yrel.first() as LMap, key));
    k = EMPTY_MAP.withMutations((m) => shared.forEach((key) => void m.set(key, key)));
  }
  const idx = index(r, Vec.fromArray([...k.values()]));
  const wanted = Vec.fromArray([...k.keys()]);
  charge(s.size);
  let n = 0;
  return EMPTY_SET.withMutations((out) => {
    let i = 0;
    for (const x of s) {
      tick(i++);
      const found = lookup(idx, renameKeys(selectKeys(x, wanted), k), null);
      if (found === null) continue;
      charge((found as LSet).size);
      for (const y of found as LSet) {
        out.add((y as LMap).merge(x as LMap));
        checkCollectionSize(++n);
      }
    }
  });
}

export const SETS: BuiltinDef[] = [
  {
    name: "set",
    area: "sets",
    arity: [1, 1],
    params: "[coll]",
    doc: "A set of the elements of coll (a map gives its [k v] entries, a string its characters).",
    examples: [
      ["(set [1 2 1])", "#{1 2}"],
      ["(set nil)", "#{}"],
    ],
    fn: (a) => setOf(a[0]),
    f1: setOf,
  },
  {
    name: "hash-set",
    area: "sets",
    arity: [0, Infinity],
    params: "[& xs]",
    doc: "A set of the arguments.",
    examples: [["(hash-set 1 2 2)", "#{1 2}"]],
    fn: hashSet,
  },
  {
    name: "sorted-set",
    area: "sets",
    arity: [0, Infinity],
    params: "[& xs]",
    doc: "A set of the arguments in sorted order; it stays sorted through conj, into and disj.",
    examples: [["(sorted-set 3 1 2)", "#{1 2 3}"], ["(conj (sorted-set 3 1) 2)", "#{1 2 3}"]],
    fn: sortedSet,
  },
  {
    name: "sorted-set-by",
    area: "sets",
    arity: [1, Infinity],
    params: "[comp & xs]",
    doc: "Like sorted-set, ordered by the comparator comp (<, >, compare or a function returning a number or a boolean). Elements comp calls equal are one element: the first stays, and get, contains? and disj find it by comp.",
    examples: [["(sorted-set-by > 1 3 2)", "#{3 2 1}"], ["(conj (sorted-set-by > 1 3) 2)", "#{3 2 1}"]],
    fn: (a) => {
      const xs = a.slice(1);
      charge(xs.length);
      checkCollectionSize(xs.length);
      // Distinct in the order given, so of two the comparator calls equal the first stays.
      const seen = LSet<Value>().asMutable();
      return sortedSetBy("sorted-set-by", xs.filter((x) => !seen.has(x) && (seen.add(x), true)), comparator("sorted-set-by", a[0]));
    },
  },
  {
    name: "disj",
    area: "sets",
    arity: [1, Infinity],
    params: "[s & xs]",
    doc: "s without the given elements.",
    examples: [["(disj #{1 2 3} 1 3)", "#{2}"]],
    fn: disj,
  },
  {
    name: "union",
    area: "sets",
    arity: [0, Infinity],
    params: "[& sets]",
    doc: "The elements found in any of the sets (vectors are taken as sets); (union) is #{}.",
    examples: [["(clojure.set/union #{1 2} #{2 3})", "#{1 2 3}"]],
    ns: ["clojure.set"],
    fn: union,
  },
  {
    name: "intersection",
    area: "sets",
    arity: [1, Infinity],
    params: "[s & sets]",
    doc: "The elements found in every one of the sets.",
    examples: [["(set/intersection #{1 2 3} #{2 3 4} [3 2])", "#{2 3}"]],
    ns: ["clojure.set"],
    fn: intersection,
  },
  {
    name: "difference",
    area: "sets",
    arity: [1, Infinity],
    params: "[s & sets]",
    doc: "The elements of s found in none of the other sets.",
    examples: [["(difference #{1 2 3} #{2} #{3})", "#{1}"]],
    ns: ["clojure.set"],
    fn: difference,
  },
  {
    name: "subset?",
    area: "sets",
    arity: [2, 2],
    params: "[a b]",
    doc: "True if every element of a is in b.",
    examples: [["(subset? #{1} #{1 2})", "true"]],
    ns: ["clojure.set"],
    fn: (a) => contained("subset?", [a[0], a[1]], 0),
    f2: (a, b) => contained("subset?", [a, b], 0),
  },
  {
    name: "superset?",
    area: "sets",
    arity: [2, 2],
    params: "[a b]",
    doc: "True if every element of b is in a.",
    examples: [["(superset? #{1 2} #{2})", "true"]],
    ns: ["clojure.set"],
    fn: (a) => contained("superset?", [a[0], a[1]], 1),
    f2: (a, b) => contained("superset?", [a, b], 1),
  },
  {
    name: "select",
    area: "sets",
    arity: [2, 2],
    params: "[pred s]",
    doc: "The set of elements of s for which (pred x) is truthy.",
    examples: [["(clojure.set/select odd? #{1 2 3})", "#{1 3}"]],
    ns: ["clojure.set"],
    fn: (a) => select(a[0], a[1]),
    f2: select,
  },
  {
    name: "index",
    area: "sets",
    arity: [2, 2],
    params: "[xrel ks]",
    doc: "A map from each (select-keys x ks) to the set of the maps x in xrel that give it.",
    examples: [["(clojure.set/index [{:a 1 :b 2} {:a 1 :b 3}] [:a])", "{{:a 1} #{{:a 1 :b 2} {:a 1 :b 3}}}"]],
    ns: ["clojure.set"],
    unqualified: false,
    fn: (a) => index(relation("clojure.set/index", a[0], 1), a[1]),
  },
  {
    name: "project",
    area: "sets",
    arity: [2, 2],
    params: "[xrel ks]",
    doc: "The set of (select-keys x ks) for each map x in xrel.",
    examples: [["(clojure.set/project [{:a 1 :b 2}] [:a])", "#{{:a 1}}"]],
    ns: ["clojure.set"],
    unqualified: false,
    fn: (a) => relation("clojure.set/project", a[0], 1).map((x) => selectKeys(x, a[1])),
  },
  {
    name: "rename",
    area: "sets",
    arity: [2, 2],
    params: "[xrel kmap]",
    doc: "The set of (rename-keys x kmap) for each map x in xrel.",
    examples: [["(clojure.set/rename #{{:a 1}} {:a :b})", "#{{:b 1}}"]],
    ns: ["clojure.set"],
    unqualified: false,
    fn: (a) => relation("clojure.set/rename", a[0], 1).map((x) => renameKeys(x, a[1])),
  },
  {
    name: "join",
    area: "sets",
    arity: [2, 3],
    params: "[xrel yrel] [xrel yrel km]",
    doc: "The maps of xrel merged with those of yrel that agree on their shared keys (or on km: xrel key to yrel key).",
    examples: [["(clojure.set/join [{:id 1 :a 2}] [{:id 1 :b 3}])", "#{{:id 1 :a 2 :b 3}}"]],
    ns: ["clojure.set"],
    unqualified: false,
    fn: join,
  },
];
