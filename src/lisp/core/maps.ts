// Map builtins: lookup (get, get-in, select-keys), building (assoc, hash-map, zipmap, ...),
// nested updates and key/value views. Reads fall back between keyword and string keys
// (exact type first) because host data arrives with string keys while programs use keywords;
// updates that read through that fallback write back to the key they found, so
// `(update m :n inc)` on `{"n" 1}` changes the existing entry instead of adding a second one.
import { storedKey } from "../equality.js";
import { LispError, typeErr } from "../errors.js";
import { call1, call2, callValue } from "../fn.js";
import { hasKey, lookup } from "../lookup.js";
import { printSample, prStr } from "../printer.js";
import { charge, checkCollectionSize, limitError, run, tick } from "../runtime.js";
import { entries as mapEntries, seqArray } from "../seq.js";
import { asIndex, EMPTY_MAP, isMap, isSet, Keyword, keyword, LMap, LSet, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, isCallable } from "./args.js";
import type { BuiltinDef } from "./registry.js";
import { comparator } from "./sequences.js";
import { heldKey, keepSorted, ORDERED_UP_TO, sortedMapBy } from "./sorted.js";

// immutable's Map and Set keep insertion order only up to this many entries (then hash order).

const THREAD_FIRST = "use -> (thread-first) instead of ->> (thread-last)";

/** A hint for a call whose collection argument came last, as `->>` threading produces. */
function threadedLast(who: string, first: Value, last: Value): string | undefined {
  if (isMap(last) && !isMap(first) && first !== null) return `the map seems to come last; ${THREAD_FIRST} with ${who}`;
  return undefined;
}

function notAMap(who: string, x: Value, hint?: string): LispError {
  return typeErr(`${who} expects a map, got ${describe(x)}`, hint);
}

/** The key a map actually holds for `k` under the keyword/string fallback, or `k` itself. */
export function actualKey(m: LMap, k: Value): Value {
  if (m.has(k)) return storedKey(m, k) as Value;
  if (k instanceof Keyword) {
    if (m.has(k.name)) return k.name;
  } else if (typeof k === "string") {
    const kw = keyword(k);
    if (m.has(kw)) return kw;
  }
  return heldKey(m, k) ?? k;
}

function get(coll: Value, k: Value, dflt: Value): Value {
  // (get :a m) is always a swapped call (usually from ->>), never a real lookup.
  if (coll instanceof Keyword && isMap(k)) {
    throw typeErr(`get expects (map, key) but got (keyword, map)`, `put the map first: (get m ${prStr(coll)}); ${THREAD_FIRST} with get`);
  }
  return lookup(coll, k, dflt);
}

function pathOf(who: string, path: Value, coll: Value): Value[] {
  if (path instanceof Vec) return path.toArray();
  if (path === null) return [];
  const swapped = isMap(path) && coll instanceof Vec;
  throw typeErr(
    `${who} expects a vector of keys as the path, got ${describe(path)}`,
    swapped ? `the map seems to come last; ${THREAD_FIRST} with ${who}` : `write the path as a vector: (${who} m [:a :b]${who === "get-in" ? "" : " ..."})`,
  );
}

function getIn(coll: Value, path: Value, dflt: Value): Value {
  const ks = pathOf("get-in", path, coll);
  charge(ks.length);
  let cur = coll;
  for (let i = 0; i < ks.length; i++) {
    const k = ks[i];
    if (!hasKey(cur, k)) return dflt;
    cur = lookup(cur, k, null);
  }
  return cur;
}

function vectorIndex(who: string, v: Vec<Value>, key: Value): number {
  const k = asIndex(key);
  if (k === null) {
    throw typeErr(`${who} on a vector expects an integer index, got ${describe(key)}`, "vectors are indexed by position; use a map for named keys");
  }
  if (k < 0 || k > v.size) {
    throw new LispError("index_out_of_bounds", `${who}: index ${k} is out of bounds for a vector of ${v.size} (valid: 0 to ${v.size}, where ${v.size} appends)`);
  }
  return k;
}

function notAssociative(who: string, x: Value, hint?: string): LispError {
  return typeErr(
    `${who} expects a map or a vector, got ${describe(x)}`,
    hint ?? (isSet(x) ? "use conj to add to a set" : typeof x === "string" ? "strings are immutable text; build a new one with str" : undefined),
  );
}

/** (assoc coll k v) for one pair: maps, vectors (index ≤ count) and nil (a new map). */
function assoc1(who: string, coll: Value, k: Value, v: Value): Value {
  if (isMap(coll)) {
    const out = coll.set(k, v);
    if (out.size > coll.size) checkCollectionSize(out.size);
    return out;
  }
  if (coll === null) return EMPTY_MAP.set(k, v);
  if (coll instanceof Vec) {
    const i = vectorIndex(who, coll, k);
    if (i === coll.size) {
      checkCollectionSize(i + 1);
      return coll.conj(v);
    }
    return coll.assoc(i, v);
  }
  throw notAssociative(who, coll);
}

function assoc(args: Value[]): Value {
  const coll = args[0];
  const n = args.length;
  if (n % 2 === 0) {
    throw new LispError("arity_error", `assoc expects a collection and key/value pairs, got ${n - 1} argument${n === 2 ? "" : "s"} after the collection`, undefined, "every key needs a value: (assoc m :a 1 :b 2)");
  }
  if (!isMap(coll) && coll !== null && !(coll instanceof Vec)) throw notAssociative("assoc", coll, threadedLast("assoc", coll, args[n - 1]));
  if (n === 3) return assoc1("assoc", coll, args[1], args[2]);
  charge((n - 1) / 2);
  if (isMap(coll) || coll === null) {
    const out = (coll ?? EMPTY_MAP).withMutations((m) => {
      for (let i = 1; i < n; i += 2) m.set(args[i], args[i + 1]);
    });
    checkCollectionSize(out.size);
    return out;
  }
  let out: Value = coll;
  for (let i = 1; i < n; i += 2) out = assoc1("assoc", out, args[i], args[i + 1]);
  return out;
}

/** Calls f with `first` followed by args[from..]: (update m k f x y) calls (f old x y). */
function callWith(f: Value, first: Value, args: Value[], from: number): Value {
  const extra = args.length - from;
  if (extra === 0) return call1(f, first);
  if (extra === 1) return call2(f, first, args[from]);
  return callValue(f, [first, ...args.slice(from)]);
}

function expectUpdater(who: string, f: Value): void {
  if (!isCallable(f)) {
    throw typeErr(`${who} expects a function as its third argument, got ${describe(f)}`, `(${who} m ${who === "update" ? "k" : "[k ...]"} f & args) calls f on the old value; to store a value use ${who === "update" ? "assoc" : "assoc-in"}`);
  }
}

function update(args: Value[]): Value {
  const [coll, k, f] = args;
  if (!isMap(coll) && coll !== null && !(coll instanceof Vec)) throw notAssociative("update", coll, threadedLast("update", coll, args[args.length - 1]));
  expectUpdater("update", f);
  if (coll instanceof Vec) vectorIndex("update", coll, k);
  const old = lookup(coll, k, null);
  const nv = callWith(f, old, args, 3);
  return assoc1("update", coll, isMap(coll) ? actualKey(coll, k) : k, nv);
}

/**
 * assoc-in and update-in: walks the path (creating maps for missing keys), then rebuilds the
 * containers bottom-up. Iterative, so a long path cannot exhaust the host stack.
 */
function changeIn(who: string, root: Value, path: Value, leaf: (container: Value, k: Value) => Value, flexLast: boolean): Value {
  let ks = pathOf(who, path, root);
  // Clojure treats an empty path as the single key nil.
  if (ks.length === 0) ks = [null];
  const n = ks.length;
  if (n > run.limits.maxNestingDepth) {
    throw limitError("nesting_too_deep", `${who}: a path of ${n} keys is deeper than the nesting limit of ${run.limits.maxNestingDepth}`, "use a flatter structure, e.g. a map keyed by a vector of the path");
  }
  charge(n);
  const containers = new Array<Value>(n);
  const writeKeys = new Array<Value>(n);
  let cur = root;
  for (let i = 0; i < n - 1; i++) {
    const k = ks[i];
    containers[i] = cur;
    if (isMap(cur)) {
      const wk = actualKey(cur, k);
      writeKeys[i] = wk;
      cur = (cur.get(wk) ?? null) as Value;
    } else if (cur === null) {
      writeKeys[i] = k;
    } else if (cur instanceof Vec) {
      const idx = vectorIndex(who, cur, k);
      writeKeys[i] = idx;
      cur = idx < cur.size ? (cur.get(idx) as Value) : null;
    } else {
      throw stepError(who, cur, ks, i);
    }
  }
  const k = ks[n - 1];
  if (!isMap(cur) && cur !== null && !(cur instanceof Vec)) throw stepError(who, cur, ks, n - 1);
  if (cur instanceof Vec) vectorIndex(who, cur, k);
  let out = assoc1(who, cur, flexLast && isMap(cur) ? actualKey(cur, k) : k, leaf(cur, k));
  for (let i = n - 2; i >= 0; i--) out = assoc1(who, containers[i], writeKeys[i], out);
  return out;
}

// Keys in a path may be any value, however big or shared: the message shows a bounded preview.
const shown = (v: Value): string => printSample(v, { maxItems: 10, maxChars: 200, maxDepth: 8, note: false }).text;

function stepError(who: string, at: Value, ks: Value[], i: number): LispError {
  const where = ks.slice(0, i);
  return typeErr(
    `${who} cannot set key ${shown(ks[i])} inside ${describe(at)}${where.length > 0 ? ` (found at path ${shown(Vec.fromArray(where))})` : ""}`,
    "every step of the path must be a map, a vector or nil",
  );
}

function updateIn(args: Value[]): Value {
  const [coll, path, f] = args;
  expectUpdater("update-in", f);
  return changeIn("update-in", coll, path, (container, k) => callWith(f, lookup(container, k, null), args, 3), true);
}

/**
 * m without the given keys. immutable's remove moves the last entry of a small map into the
 * gap, so small maps (which print in insertion order) are filtered instead to keep their order.
 */
function withoutKeys(m: LMap, ks: Iterable<Value>): LMap {
  if (m.size <= ORDERED_UP_TO) {
    const drop = LSet<Value>(ks);
    return drop.size === 0 ? m : m.filter((_v, k) => !drop.has(k));
  }
  return m.withMutations((mm) => {
    for (const k of ks) mm.remove(k);
  });
}

function dissoc(args: Value[]): Value {
  const m = args[0];
  if (m === null) return null;
  if (!isMap(m)) {
    throw notAMap("dissoc", m, m instanceof Vec ? "to drop elements of a vector use remove or filter" : isSet(m) ? "use disj to remove elements from a set" : threadedLast("dissoc", m, args[args.length - 1]));
  }
  const n = args.length;
  if (n === 1) return m;
  charge(n - 1);
  const ks: Value[] = [];
  for (let i = 1; i < n; i++) {
    const k = actualKey(m, args[i]);
    if (m.has(k)) ks.push(k);
  }
  return ks.length === 0 ? m : withoutKeys(m, ks);
}

function mapArg(who: string, x: Value, pos: number): LMap | null {
  if (x === null || x === false) return null;
  if (isMap(x)) return x;
  throw typeErr(
    `${who} expects maps (or nil), argument ${pos} is ${describe(x)}`,
    x instanceof Vec ? "to build a map from [k v] pairs use (into {} pairs)" : undefined,
  );
}

/** Clojure's merge conjoins its later arguments, so a [k v] pair there is one entry. */
function mergeArg(x: Value, pos: number): LMap | null {
  if (pos > 1 && x instanceof Vec && x.size === 2) return LMap<Value, Value>().set(x.get(0) as Value, x.get(1) as Value);
  return mapArg("merge", x, pos);
}

function merge(args: Value[]): Value {
  let acc: LMap | null = null;
  for (let i = 0; i < args.length; i++) {
    const m = mergeArg(args[i], i + 1);
    if (m === null || m.size === 0) {
      if (acc === null && m !== null) acc = m;
      continue;
    }
    if (acc === null || acc.size === 0) {
      acc = m;
      continue;
    }
    charge(m.size);
    const target: LMap = acc;
    acc = target.withMutations((mm) => {
      for (const [k, v] of m) mm.set(k, v);
    });
    checkCollectionSize(acc.size);
  }
  return acc;
}

function mergeWith(args: Value[]): Value {
  const f = args[0];
  if (!isCallable(f)) {
    throw typeErr(`merge-with expects a function as its first argument, got ${describe(f)}`, "(merge-with f m1 m2 ...) calls (f old new) for keys found in several maps");
  }
  let acc: LMap | null = null;
  for (let i = 1; i < args.length; i++) {
    const m = mapArg("merge-with", args[i], i + 1);
    if (m === null) continue;
    if (acc === null) {
      acc = m;
      continue;
    }
    charge(m.size);
    const target: LMap = acc;
    // Kept sorted after each map, so a map sorted by its own comparator finds the next map's
    // keys as contains? and get do: as the key that comparator places there.
    acc = keepSorted("merge-with", target, target.withMutations((mm) => {
      for (const [k, v] of m) {
        const at = mm.has(k) ? k : (heldKey(target, k) ?? k);
        mm.set(at, mm.has(at) ? call2(f, mm.get(at) as Value, v) : v);
      }
    })) as LMap;
    checkCollectionSize(acc.size);
  }
  return acc;
}

function keyList(who: string, ks: Value, m: Value): Value[] {
  if (ks instanceof Vec) return ks.toArray();
  if (ks === null) return [];
  if (isSet(ks)) return ks.toArray();
  throw typeErr(
    `${who} expects a vector of keys, got ${describe(ks)}`,
    isMap(ks) && !isMap(m) ? `the map seems to come last; ${THREAD_FIRST} with ${who}` : `write the keys as a vector: (${who} m [:a :b])`,
  );
}

export function selectKeys(m: Value, ks: Value): Value {
  if (!isMap(m) && m !== null && !(m instanceof Vec)) throw notAMap("select-keys", m, threadedLast("select-keys", m, ks));
  const wanted = keyList("select-keys", ks, m);
  charge(wanted.length);
  return EMPTY_MAP.withMutations((out) => {
    // Under the key the map holds when its own comparator found it (Clojure's find gives that).
    for (const k of wanted) if (hasKey(m, k)) out.set(isMap(m) ? (m.has(k) ? (storedKey(m, k) as Value) : (heldKey(m, k) ?? k)) : k, lookup(m, k, null));
  });
}

function keysOrVals(who: "keys" | "vals", m: Value): Value {
  if (m === null) return null;
  // Map entries that went through a sequence function, as in (keys (sort-by val > m)) or
  // (vals (filter pred m)), are [k v] vectors: Clojure takes keys and vals of those too.
  if (m instanceof Vec && isEntries(m)) return entryParts(who, m);
  if (!isMap(m)) {
    throw notAMap(who, m, m instanceof Vec ? (who === "keys" ? "a vector has positions, not keys: use (range (count v))" : "a vector's elements are already its values") : undefined);
  }
  if (m.size === 0) return null;
  charge(m.size);
  const out = new Array<Value>(m.size);
  let i = 0;
  if (who === "keys") for (const k of m.keys()) out[i++] = k;
  else for (const v of m.values()) out[i++] = v;
  return Vec.fromArray(out);
}

function isEntries(v: Vec<Value>): boolean {
  charge(v.size);
  for (const e of v) if (!(e instanceof Vec && e.size === 2)) return false;
  return true;
}

function entryParts(who: "keys" | "vals", v: Vec<Value>): Value {
  if (v.size === 0) return null;
  const i = who === "keys" ? 0 : 1;
  return Vec.fromArray(v.toArray().map((e) => (e as Vec<Value>).get(i) as Value));
}

function entryPart(who: "key" | "val", e: Value): Value {
  if (e instanceof Vec && e.size === 2) return e.get(who === "key" ? 0 : 1) as Value;
  throw typeErr(
    `${who} expects a map entry (a [k v] vector), got ${describe(e)}`,
    isMap(e) ? `(${who} e) works on one entry of a map, e.g. (map ${who} m); for all of them use ${who === "key" ? "keys" : "vals"}` : undefined,
  );
}

function swappedUpdate(who: string, m: Value, f: Value): void {
  if (isMap(f) && m !== null && !isMap(m) && isCallable(m)) {
    throw typeErr(`${who} expects (map, function) but got (function, map)`, `${THREAD_FIRST} with ${who}`);
  }
  if (!isMap(m) && m !== null) throw notAMap(who, m);
  if (!isCallable(f)) throw typeErr(`${who} expects a function as its second argument, got ${describe(f)}`, `(${who} m f)`);
}

function updateVals(m: Value, f: Value): Value {
  swappedUpdate("update-vals", m, f);
  if (m === null) return EMPTY_MAP;
  const src = m as LMap;
  charge(src.size);
  // Setting existing keys keeps the map's shape and order.
  const out = src.asMutable();
  for (const [k, v] of src) out.set(k, call1(f, v));
  return out.asImmutable();
}

function updateKeys(m: Value, f: Value): Value {
  swappedUpdate("update-keys", m, f);
  if (m === null) return EMPTY_MAP;
  const src = m as LMap;
  charge(src.size);
  return EMPTY_MAP.withMutations((out) => {
    let i = 0;
    for (const [k, v] of src) {
      tick(i++);
      out.set(call1(f, k), v);
    }
  });
}

function zipmap(ks: Value, vs: Value): Value {
  const a = seqArray(ks, "zipmap");
  const b = seqArray(vs, "zipmap");
  const n = Math.min(a.length, b.length);
  charge(n);
  checkCollectionSize(n);
  return EMPTY_MAP.withMutations((out) => {
    for (let i = 0; i < n; i++) {
      tick(i);
      out.set(a[i], b[i]);
    }
  });
}

function pairsOf(who: string, args: Value[]): void {
  if (args.length % 2 !== 0) {
    throw new LispError("arity_error", `${who} expects an even number of arguments (key value pairs), got ${args.length}`, undefined, `every key needs a value: (${who} :a 1 :b 2)`);
  }
  charge(args.length / 2);
  checkCollectionSize(args.length / 2);
}

function hashMap(args: Value[]): Value {
  pairsOf("hash-map", args);
  return EMPTY_MAP.withMutations((out) => {
    for (let i = 0; i < args.length; i += 2) {
      tick(i >>> 1);
      out.set(args[i], args[i + 1]);
    }
  });
}

/** Alternating keys and values as [key value] pairs. */
function pairsFrom(who: string, kvs: Value[]): [Value, Value][] {
  pairsOf(who, kvs);
  const pairs: [Value, Value][] = [];
  for (let i = 0; i < kvs.length; i += 2) pairs.push([kvs[i], kvs[i + 1]]);
  return pairs;
}

function sortedMap(args: Value[]): Value {
  return sortedMapOf("sorted-map", pairsFrom("sorted-map", args));
}

/** A sorted map of distinct-key pairs (sorted here, in place), built as sorted-map builds it. */
export function sortedMapOf(who: string, pairs: [Value, Value][]): LMap {
  return sortedMapBy(who, pairs);
}

export function renameKeys(m: Value, kmap: Value): Value {
  if (m === null) return null;
  if (!isMap(m)) throw notAMap("rename-keys", m);
  if (!isMap(kmap)) throw typeErr(`rename-keys expects a map of old key to new key as its second argument, got ${describe(kmap)}`, "(rename-keys m {:old :new})");
  charge(kmap.size);
  const olds: Value[] = [];
  for (const old of kmap.keys()) if (hasKey(m, old)) olds.push(actualKey(m, old));
  // A dissoc then an assoc, as in Clojure, each kept sorted on its own: keepSorted tells a
  // result still in order from one only adding or only removing keys.
  const rest = keepSorted("rename-keys", m, withoutKeys(m, olds)) as LMap;
  return keepSorted("rename-keys", rest, rest.withMutations((out) => {
    for (const [old, nk] of kmap) if (hasKey(m, old)) out.set(nk, lookup(m, old, null));
  }));
}

export function mapInvert(m: Value): Value {
  if (m === null) return EMPTY_MAP;
  if (!isMap(m)) throw notAMap("map-invert", m);
  charge(m.size);
  return EMPTY_MAP.withMutations((out) => {
    let i = 0;
    for (const [k, v] of m) {
      tick(i++);
      out.set(v, k);
    }
  });
}

function entriesOf(m: Value): Value {
  if (m === null) return Vec.empty<Value>();
  if (!isMap(m)) throw notAMap("entries", m);
  charge(m.size);
  return Vec.fromArray(mapEntries(m));
}

export const MAPS: BuiltinDef[] = [
  {
    name: "get",
    area: "maps",
    arity: [2, 3],
    params: "[m k] [m k default]",
    doc: "The value at key k (a vector or string index also works), or default (nil) when the key is absent. A keyword key also finds the same-named string key, and vice versa.",
    examples: [
      ["(get {:a 1} :a)", "1"],
      ['(get {"name" "Ann"} :name)', '"Ann"'],
      ["(get {:a nil} :a 0)", "nil"],
      ["(get [10 20] 5 :none)", ":none"],
    ],
    fn: (a) => get(a[0], a[1], a.length === 3 ? a[2] : null),
    f2: (m, k) => get(m, k, null),
  },
  {
    name: "get-in",
    area: "maps",
    arity: [2, 3],
    params: "[m ks] [m ks default]",
    doc: "Follows a vector of keys (and vector indices) into nested data; default (nil) when any step is missing.",
    examples: [
      ["(get-in {:user {:tags [:a :b]}} [:user :tags 1])", ":b"],
      ["(get-in {:a {}} [:a :b] 0)", "0"],
    ],
    fn: (a) => getIn(a[0], a[1], a.length === 3 ? a[2] : null),
    f2: (m, ks) => getIn(m, ks, null),
  },
  {
    name: "assoc",
    area: "maps",
    arity: [3, Infinity],
    params: "[m k v & kvs]",
    doc: "m with each key set to its value. On a vector the key is an index from 0 to its count (count appends); on nil it makes a map.",
    examples: [
      ["(assoc {:a 1} :b 2 :c 3)", "{:a 1 :b 2 :c 3}"],
      ["(assoc [1 2] 2 3)", "[1 2 3]"],
      ["(assoc nil :a 1)", "{:a 1}"],
    ],
    fn: assoc,
  },
  {
    name: "assoc-in",
    area: "maps",
    arity: [3, 3],
    params: "[m ks v]",
    doc: "m with v stored at the path ks, creating maps for missing keys.",
    examples: [
      ["(assoc-in {:a {:b 1}} [:a :c] 2)", "{:a {:b 1 :c 2}}"],
      ["(assoc-in {} [:x :y] 1)", "{:x {:y 1}}"],
    ],
    fn: (a) => changeIn("assoc-in", a[0], a[1], () => a[2], false),
  },
  {
    name: "update",
    area: "maps",
    arity: [3, Infinity],
    params: "[m k f & args]",
    doc: "m with the value at k replaced by (f old & args); old is nil when the key is absent.",
    examples: [
      ["(update {:n 1} :n inc)", "{:n 2}"],
      ["(update {:n 1} :n + 10)", "{:n 11}"],
      ["(update {} :xs (fnil conj []) 1)", "{:xs [1]}"],
    ],
    fn: update,
  },
  {
    name: "update-in",
    area: "maps",
    arity: [3, Infinity],
    params: "[m ks f & args]",
    doc: "m with the value at the path ks replaced by (f old & args), creating maps for missing keys.",
    examples: [
      ["(update-in {:a {:b 1}} [:a :b] inc)", "{:a {:b 2}}"],
      ["(update-in {} [:hits :home] (fnil inc 0))", "{:hits {:home 1}}"],
    ],
    fn: updateIn,
  },
  {
    name: "dissoc",
    area: "maps",
    arity: [1, Infinity],
    params: "[m & ks]",
    doc: "m without the given keys (a keyword also removes the same-named string key).",
    examples: [["(dissoc {:a 1 :b 2 :c 3} :a :c)", "{:b 2}"]],
    fn: dissoc,
  },
  {
    name: "merge",
    area: "maps",
    arity: [0, Infinity],
    params: "[& maps]",
    doc: "One map with the entries of all maps; later maps win. nil arguments are skipped; (merge) is nil.",
    examples: [
      ["(merge {:a 1 :b 2} {:b 3} nil {:c 4})", "{:a 1 :b 3 :c 4}"],
      ["(merge nil nil)", "nil"],
    ],
    fn: merge,
  },
  {
    name: "merge-with",
    area: "maps",
    arity: [1, Infinity],
    params: "[f & maps]",
    doc: "Like merge, but a key found in several maps gets (f earlier later).",
    examples: [["(merge-with + {:a 1 :b 2} {:a 10})", "{:a 11 :b 2}"]],
    fn: mergeWith,
  },
  {
    name: "select-keys",
    area: "maps",
    arity: [2, 2],
    params: "[m ks]",
    doc: "A map of only those keys in ks that m has.",
    examples: [["(select-keys {:a 1 :b 2 :c 3} [:a :c :z])", "{:a 1 :c 3}"]],
    fn: (a) => selectKeys(a[0], a[1]),
    f2: selectKeys,
  },
  {
    name: "keys",
    area: "maps",
    arity: [1, 1],
    params: "[m]",
    doc: "A vector of the map's keys (in the map's order), nil for an empty map or nil. Also takes the [k v] entries a sequence function made of a map.",
    examples: [
      ["(keys {:a 1 :b 2})", "[:a :b]"],
      ["(keys {})", "nil"],
      ["(keys (sort-by val > {:a 1 :b 2}))", "[:b :a]"],
    ],
    fn: (a) => keysOrVals("keys", a[0]),
    f1: (m) => keysOrVals("keys", m),
  },
  {
    name: "vals",
    area: "maps",
    arity: [1, 1],
    params: "[m]",
    doc: "A vector of the map's values, in the same order as keys; nil for an empty map or nil. Also takes [k v] entries, as keys does.",
    examples: [
      ["(vals {:a 1 :b 2})", "[1 2]"],
      ["(vals (filter (fn [[k v]] (odd? v)) {:a 1 :b 2}))", "[1]"],
    ],
    fn: (a) => keysOrVals("vals", a[0]),
    f1: (m) => keysOrVals("vals", m),
  },
  {
    name: "key",
    area: "maps",
    arity: [1, 1],
    params: "[e]",
    doc: "The key of a map entry [k v].",
    examples: [["(map key {:a 1 :b 2})", "[:a :b]"]],
    fn: (a) => entryPart("key", a[0]),
    f1: (e) => entryPart("key", e),
  },
  {
    name: "val",
    area: "maps",
    arity: [1, 1],
    params: "[e]",
    doc: "The value of a map entry [k v].",
    examples: [["(val [:a 1])", "1"]],
    fn: (a) => entryPart("val", a[0]),
    f1: (e) => entryPart("val", e),
  },
  {
    name: "entries",
    area: "maps",
    arity: [1, 1],
    params: "[m]",
    doc: "The map's [k v] entries, as a vector.",
    examples: [["(entries {:a 1 :b 2})", "[[:a 1] [:b 2]]"]],
    fn: (a) => entriesOf(a[0]),
    f1: entriesOf,
  },
  {
    name: "update-vals",
    area: "maps",
    arity: [2, 2],
    params: "[m f]",
    doc: "m with every value replaced by (f value). The map comes first: thread it with ->.",
    examples: [["(update-vals {:a [1 2] :b [3]} count)", "{:a 2 :b 1}"]],
    fn: (a) => updateVals(a[0], a[1]),
    f2: updateVals,
  },
  {
    name: "update-keys",
    area: "maps",
    arity: [2, 2],
    params: "[m f]",
    doc: "m with every key replaced by (f key); if two keys collide, one value is kept. The map comes first.",
    examples: [["(update-keys {:a 1 :b 2} name)", '{"a" 1 "b" 2}']],
    fn: (a) => updateKeys(a[0], a[1]),
    f2: updateKeys,
  },
  {
    name: "zipmap",
    area: "maps",
    arity: [2, 2],
    params: "[ks vs]",
    doc: "A map pairing each key with the value at the same position; stops at the shorter input.",
    examples: [["(zipmap [:a :b :c] [1 2])", "{:a 1 :b 2}"]],
    fn: (a) => zipmap(a[0], a[1]),
    f2: zipmap,
  },
  {
    name: "hash-map",
    area: "maps",
    arity: [0, Infinity],
    params: "[& kvs]",
    doc: "A map from alternating keys and values.",
    examples: [["(hash-map :a 1 :b 2)", "{:a 1 :b 2}"]],
    fn: hashMap,
  },
  {
    name: "sorted-map",
    area: "maps",
    arity: [0, Infinity],
    params: "[& kvs]",
    doc: "A map from alternating keys and values, with its entries in key order; it stays sorted through assoc, merge, conj, into, update and dissoc.",
    examples: [
      ["(sorted-map :c 3 :a 1 :b 2)", "{:a 1 :b 2 :c 3}"],
      ["(assoc (sorted-map :b 2 :c 3) :a 1)", "{:a 1 :b 2 :c 3}"],
    ],
    fn: sortedMap,
  },
  {
    name: "sorted-map-by",
    area: "maps",
    arity: [1, Infinity],
    params: "[comp & kvs]",
    doc: "Like sorted-map, ordered by the comparator comp (<, >, compare or a function returning a number or a boolean). Keys comp calls equal are one key: the first stays, with the last value, and get, contains?, find and dissoc find it by comp.",
    examples: [
      ["(sorted-map-by > 1 :a 3 :c 2 :b)", "{3 :c 2 :b 1 :a}"],
      ["(assoc (sorted-map-by > 1 :a) 5 :e)", "{5 :e 1 :a}"],
      ["(into (sorted-map-by >) {1 :a 2 :b})", "{2 :b 1 :a}"],
    ],
    fn: (a) => sortedMapBy("sorted-map-by", pairsFrom("sorted-map-by", a.slice(1)), comparator("sorted-map-by", a[0])),
  },
  {
    name: "array-map",
    area: "maps",
    arity: [0, Infinity],
    params: "[& kvs]",
    doc: "Same as hash-map (small maps keep their insertion order).",
    examples: [["(array-map :b 1 :a 2)", "{:b 1 :a 2}"]],
    fn: hashMap,
  },
  {
    name: "rename-keys",
    area: "maps",
    arity: [2, 2],
    params: "[m kmap]",
    doc: "m with each key old of kmap renamed to (kmap old); keys m lacks are ignored.",
    examples: [["(rename-keys {:a 1 :b 2} {:a :x})", "{:b 2 :x 1}"]],
    ns: ["clojure.set"],
    fn: (a) => renameKeys(a[0], a[1]),
    f2: renameKeys,
  },
  {
    name: "map-invert",
    area: "maps",
    arity: [1, 1],
    params: "[m]",
    doc: "A map from each value of m to its key (for duplicate values, one key is kept).",
    examples: [["(map-invert {:a 1 :b 2})", "{1 :a 2 :b}"]],
    ns: ["clojure.set"],
    fn: (a) => mapInvert(a[0]),
    f1: mapInvert,
  },
];
