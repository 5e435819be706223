// Structure and access: counting, positional access, building and growing collections.
// Sequence results are vectors; strings read as their characters and maps as [k v] entries.
// Sets are unordered, so positional access on them is a type error (as in the reference)
// rather than an arbitrary element; sorting or converting first makes the order explicit.
import { LispError, typeErr } from "../errors.js";
import { hasKey } from "../lookup.js";
import { charge, checkCollectionSize, tick, took } from "../runtime.js";
import { charAt, charCount, chars } from "../text.js";
import { asIndex, EMPTY_MAP, EMPTY_SET, EMPTY_VEC, Fn, Keyword, truthy, type LMap, type Value, isMap, isSet } from "../values.js";
import { call1 } from "../fn.js";
import { Vec } from "../vector.js";
import { ARG_ORDER_HINT, countArg, describe, expectFn, items, notColl, ordered } from "./args.js";
import { actualKey } from "./maps.js";
import type { BuiltinDef } from "./registry.js";
import { transformAll } from "./transducers.js";

function setError(who: string): LispError {
  return typeErr(`${who} does not support sets (sets are unordered)`, "sort the set first, e.g. (sort s), or use (vec s) when any order will do; (contains? s x) tests membership");
}


/** The first character of a string, without splitting all of a long string into graphemes. */
function firstChar(s: string): string {
  // A grapheme longer than 64 code units is rare but possible (stacked combining marks).
  const head = chars(s.length > 64 ? s.slice(0, 64) : s);
  return head.length > 1 || s.length <= 64 ? head[0] : chars(s)[0];
}

function first(x: Value): Value {
  if (x instanceof Vec) return x.size > 0 ? (x.get(0) as Value) : null;
  if (x === null) return null;
  if (typeof x === "string") return x.length > 0 ? firstChar(x) : null;
  if (isMap(x)) {
    for (const [k, v] of x) return Vec.of<Value>(k, v);
    return null;
  }
  if (isSet(x)) {
    for (const v of x) return v;
    return null;
  }
  throw notColl("first", x);
}

function nthOf(who: string, coll: Value, index: Value, dflt: Value | undefined): Value {
  const i = countArg(who, index);
  let size: number;
  if (coll instanceof Vec) {
    if (i >= 0 && i < coll.size) return coll.get(i) as Value;
    size = coll.size;
  } else if (typeof coll === "string") {
    const c = i >= 0 ? charAt(coll, i) : undefined;
    if (c !== undefined) return c;
    size = charCount(coll);
  } else if (coll === null) {
    return dflt ?? null;
  } else if (isSet(coll)) {
    throw setError(who);
  } else if (isMap(coll)) {
    throw typeErr(`${who} does not support maps (use get to look up a key)`, "(get m k) reads a key; (nth (vec m) i) gives the i-th [k v] entry");
  } else {
    throw notColl(who, coll);
  }
  if (dflt !== undefined) return dflt;
  throw new LispError("index_out_of_bounds", `${who}: index ${i} is out of bounds for a ${coll instanceof Vec ? "vector" : "string"} of ${size} element${size === 1 ? "" : "s"}`, undefined, "pass a default, (nth coll i nil), or use (get coll i), which returns nil when the index is missing");
}

/** The second element; of a map or set (which nth refuses, as in Clojure) the second in its order. */
function second(x: Value): Value {
  if (isMap(x) || isSet(x)) return first(next(x));
  return nthOf("second", x, 1, null);
}

function last(x: Value): Value {
  if (x instanceof Vec) return x.size > 0 ? (x.get(x.size - 1) as Value) : null;
  const xs = ordered("last", x);
  return xs.length > 0 ? xs[xs.length - 1] : null;
}

/** Elements from `start` on, as a vector (rest, nthrest). */
function dropFront(who: string, x: Value, start: number): Vec<Value> {
  if (x instanceof Vec) {
    if (start <= 0) return x;
    if (start >= x.size) return EMPTY_VEC;
    // Slices share the vector's trie: O(1), so rest in a loop stays linear.
    charge(1);
    return x.slice(start);
  }
  const xs = ordered(who, x);
  return start <= 0 ? Vec.fromArray(xs) : Vec.fromArray(xs.slice(start));
}

const rest = (x: Value): Value => dropFront("rest", x, 1);

/** (nthrest nil n) is nil, as in Clojure; any other collection gives a vector, empty or not. */
function nthrest(coll: Value, n: Value): Value {
  const k = countArg("nthrest", n, Math.ceil);
  return coll === null ? null : dropFront("nthrest", coll, k);
}

function next(x: Value): Value {
  const r = dropFront("next", x, 1);
  return r.size === 0 ? null : r;
}

/** All but the last element; nil (falsy, as in Clojure) when nothing is left. */
function butlast(x: Value): Value {
  if (x instanceof Vec) {
    charge(1);
    return x.size <= 1 ? null : x.pop();
  }
  const xs = ordered("butlast", x);
  xs.pop();
  return xs.length === 0 ? null : Vec.fromArray(xs);
}

function peek(x: Value): Value {
  if (x instanceof Vec) return x.size > 0 ? (x.get(x.size - 1) as Value) : null;
  if (x === null) return null;
  if (isSet(x)) throw setError("peek");
  throw typeErr(`peek expects a vector, got ${describe(x)}`, typeof x === "string" ? "use (last s) for the last character" : "use last for the last element of any collection");
}

function pop(x: Value): Value {
  if (x instanceof Vec) {
    if (x.size === 0) throw typeErr("pop cannot pop an empty vector", "check (empty? v) first");
    return x.pop();
  }
  if (x === null) return null;
  if (isSet(x)) throw setError("pop");
  throw typeErr(`pop expects a vector, got ${describe(x)}`, "use butlast for any collection, or disj/dissoc to remove from sets and maps");
}

function count(x: Value): number {
  if (x instanceof Vec || isMap(x) || isSet(x)) return x.size;
  if (x === null) return 0;
  if (typeof x === "string") return charCount(x);
  throw typeErr(`count expects a collection or string, got ${describe(x)}`, x instanceof Keyword ? "to count a field, look it up first: (count (:k m))" : undefined);
}

function isEmpty(who: string, x: Value): boolean {
  if (x instanceof Vec || isMap(x) || isSet(x)) return x.size === 0;
  if (x === null) return true;
  if (typeof x === "string") return x.length === 0;
  throw typeErr(`${who} expects a collection or string, got ${describe(x)}`, who === "empty?" ? "use nil? to test for nil, zero? for numbers" : undefined);
}

function seq(x: Value): Value {
  if (x instanceof Vec) return x.size === 0 ? null : x;
  if (isEmpty("seq", x)) return null;
  const xs = items("seq", x);
  charge(xs.length);
  return Vec.fromArray(xs);
}

/** Adds one element to a map the way conj and into do: a [k v] vector, a map (merged) or nil. */
function addToMap(who: string, m: LMap, x: Value): LMap {
  if (x instanceof Vec && x.size === 2) return m.set(x.get(0) as Value, x.get(1) as Value);
  if (isMap(x)) return m.merge(x);
  if (x === null) return m;
  throw typeErr(`${who} onto a map expects [key value] vectors or maps, got ${describe(x)}`, "use (assoc m k v), or (into {} (map (fn [x] [k v]) coll)) to build a map");
}

function notTarget(who: string, coll: Value): LispError {
  if (typeof coll === "string") return typeErr(`${who} expects a vector, map or set to add to, got ${describe(coll)}`, "use (str s x) to add to a string");
  return typeErr(`${who} expects a vector, map or set to add to, got ${describe(coll)}`, coll instanceof Fn ? ARG_ORDER_HINT : `the collection comes first: (${who} coll x)`);
}

/** Adds xs[from..] to coll (nil starts a vector). */
function conjAll(who: string, coll: Value, xs: Value[], from: number): Value {
  const n = xs.length - from;
  if (coll === null || coll instanceof Vec) {
    if (n <= 0) return coll;
    charge(n);
    const base = coll === null ? [] : coll.toArray();
    checkCollectionSize(base.length + n);
    for (let i = from; i < xs.length; i++) base.push(xs[i]);
    return Vec.fromArray(base);
  }
  if (isSet(coll)) {
    if (n <= 0) return coll;
    charge(n);
    checkCollectionSize(coll.size + n);
    return coll.withMutations((s) => {
      for (let i = from; i < xs.length; i++) {
        s.add(xs[i]);
        tick(i);
      }
    });
  }
  if (isMap(coll)) {
    if (n <= 0) return coll;
    charge(n);
    const out = coll.withMutations((m) => {
      for (let i = from; i < xs.length; i++) {
        addToMap(who, m, xs[i]);
        tick(i);
      }
    });
    checkCollectionSize(out.size);
    return out;
  }
  throw notTarget(who, coll);
}

function conj2(coll: Value, x: Value): Value {
  if (coll instanceof Vec) {
    checkCollectionSize(coll.size + 1);
    return coll.conj(x);
  }
  return conjAll("conj", coll, [coll, x], 1);
}

function into(args: Value[]): Value {
  if (args.length === 0) return EMPTY_VEC;
  const to = args[0];
  if (args.length === 1) return to;
  const from = args.length === 3 ? Vec.fromArray(transformAll("into", args[1], items("into", args[2]))) : args[1];
  let out: Value;
  if (isMap(to) && isMap(from)) {
    charge(from.size);
    out = to.merge(from);
    checkCollectionSize(out.size);
  } else {
    if (to !== null && !(to instanceof Vec) && !isMap(to) && !isSet(to)) throw notTarget("into", to);
    out = conjAll("into", to, items("into", from), 0);
  }
  // A sorted target gives a sorted result: the registry wraps into with keepingSortedOrder.
  return out;
}

function cons(x: Value, coll: Value): Value {
  const xs = items("cons", coll);
  charge(xs.length + 1);
  checkCollectionSize(xs.length + 1);
  xs.unshift(x);
  return Vec.fromArray(xs);
}

/** (list* x ... coll): the xs followed by coll's elements; nil when there are none, as (seq ...) is. */
function listStar(a: Value[]): Value {
  const xs = items("list*", a[a.length - 1]);
  charge(xs.length + a.length - 1);
  checkCollectionSize(xs.length + a.length - 1);
  if (xs.length + a.length === 1) return null;
  return Vec.fromArray(a.length === 1 ? xs : [...a.slice(0, -1), ...xs]);
}

function vec(x: Value): Value {
  if (x instanceof Vec) return x;
  const xs = items("vec", x);
  charge(xs.length);
  return Vec.fromArray(xs);
}

function empty(x: Value): Value {
  if (x instanceof Vec) return EMPTY_VEC;
  if (isMap(x)) return EMPTY_MAP;
  if (isSet(x)) return EMPTY_SET;
  return null;
}

function subvec(args: Value[]): Value {
  const v = args[0];
  if (!(v instanceof Vec)) throw typeErr(`subvec expects a vector, got ${describe(v)}`, typeof v === "string" ? "use (subs s start end) for strings" : "use (vec coll) first, or take/drop for any collection");
  const start = countArg("subvec", args[1]);
  const end = args.length > 2 ? countArg("subvec", args[2]) : v.size;
  if (!(start >= 0 && start <= end && end <= v.size)) {
    throw new LispError("index_out_of_bounds", `subvec: the range from ${start} to ${end} is out of bounds for a vector of ${v.size}`, undefined, "start and end must satisfy 0 <= start <= end <= (count v)");
  }
  charge(1);
  return v.slice(start, end);
}

function contains(coll: Value, key: Value): boolean {
  if (coll === null) return false;
  if (coll instanceof Vec || isMap(coll) || isSet(coll) || typeof coll === "string") return hasKey(coll, key);
  throw typeErr(`contains? expects a map, set, vector or string, got ${describe(coll)}`, "the collection comes first: (contains? coll key)");
}

/** The [k v] entry of a map, with the same keyword/string key fallback as get. */
// The value an entry holds is looked up by the key, told to the marks as a lookup's is (took).
function mapEntry(m: LMap, k: Value): Value {
  const found = actualKey(m, k);
  return m.has(found) ? Vec.of<Value>(found, took(m, m.get(found) as Value, k)) : null;
}

function find(a: Value, b: Value): Value {
  // Clojure's (find m k) and (find v i) when the first argument is a map or a vector, whatever
  // the key (a composite key [x y] too): neither is a predicate. Otherwise the reference's
  // (find pred coll): the first element pred accepts.
  if (isMap(a)) return mapEntry(a, b);
  if (a instanceof Vec) {
    const i = asIndex(b);
    return i !== null && i >= 0 && i < a.size ? Vec.of<Value>(i, took(a, a.get(i) as Value, b)) : null;
  }
  const pred = expectFn("find", a);
  const xs = items("find", b);
  charge(xs.length);
  for (let i = 0; i < xs.length; i++) if (truthy(call1(pred, xs[i]))) return xs[i];
  return null;
}

export const COLLECTIONS: BuiltinDef[] = [
  {
    name: "count",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "Number of elements (characters for a string, entries for a map); 0 for nil.",
    examples: [["(count [1 2 3])", "3"], ['(count "café")', "4"], ["(count nil)", "0"]],
    fn: (a) => count(a[0]),
    f1: count,
  },
  {
    name: "empty?",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "True if the collection or string has no elements (or is nil).",
    examples: [["(empty? [])", "true"], ['(empty? "a")', "false"]],
    fn: (a) => isEmpty("empty?", a[0]),
    f1: (x) => isEmpty("empty?", x),
  },
  {
    name: "not-empty",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "coll itself, or nil when it is empty.",
    examples: [["(not-empty [1])", "[1]"], ['(not-empty "")', "nil"]],
    fn: (a) => (isEmpty("not-empty", a[0]) ? null : a[0]),
    f1: (x) => (isEmpty("not-empty", x) ? null : x),
  },
  {
    name: "seq",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "The elements as a vector (characters of a string, [k v] entries of a map), or nil when empty.",
    examples: [['(seq "ab")', '["a" "b"]'], ["(seq [])", "nil"], ["(seq {:a 1})", "[[:a 1]]"]],
    fn: (a) => seq(a[0]),
    f1: seq,
  },
  { name: "first", area: "collections", arity: [1, 1], params: "[coll]", doc: "The first element, or nil. Not for sets (unordered).", examples: [["(first [1 2])", "1"], ["(first [])", "nil"]], fn: (a) => first(a[0]), f1: first },
  {
    name: "second",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "The second element, or nil.",
    examples: [["(second [1 2 3])", "2"]],
    fn: (a) => second(a[0]),
    f1: second,
  },
  { name: "last", area: "collections", arity: [1, 1], params: "[coll]", doc: "The last element, or nil.", examples: [["(last [1 2 3])", "3"], ['(last "abc")', '"c"']], fn: (a) => last(a[0]), f1: last },
  {
    name: "nth",
    area: "collections",
    arity: [2, 3],
    params: "[coll i] [coll i default]",
    doc: "The element at index i (0-based). Out of range is an error unless a default is given.",
    examples: [["(nth [10 20 30] 1)", "20"], ["(nth [10] 5 :none)", ":none"], ['(nth "abc" 0)', '"a"']],
    fn: (a) => nthOf("nth", a[0], a[1], a.length > 2 ? a[2] : undefined),
    f2: (c, i) => nthOf("nth", c, i, undefined),
  },
  { name: "rest", area: "collections", arity: [1, 1], params: "[coll]", doc: "All but the first element, as a vector (empty, never nil).", examples: [["(rest [1 2 3])", "[2 3]"], ["(rest [])", "[]"]], fn: (a) => rest(a[0]), f1: rest },
  { name: "next", area: "collections", arity: [1, 1], params: "[coll]", doc: "All but the first element, or nil when nothing is left.", examples: [["(next [1 2])", "[2]"], ["(next [1])", "nil"]], fn: (a) => next(a[0]), f1: next },
  { name: "butlast", area: "collections", arity: [1, 1], params: "[coll]", doc: "All but the last element, as a vector; nil when nothing is left.", examples: [["(butlast [1 2 3])", "[1 2]"], ["(butlast [1])", "nil"]], fn: (a) => butlast(a[0]), f1: butlast },
  {
    name: "ffirst",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "(first (first coll)).",
    examples: [["(ffirst [[1 2] [3]])", "1"]],
    fn: (a) => first(first(a[0])),
    f1: (x) => first(first(x)),
  },
  { name: "fnext", area: "collections", arity: [1, 1], params: "[coll]", doc: "(first (next coll)): the second element.", examples: [["(fnext [1 2 3])", "2"]], fn: (a) => first(next(a[0])), f1: (x) => first(next(x)) },
  { name: "nfirst", area: "collections", arity: [1, 1], params: "[coll]", doc: "(next (first coll)).", examples: [["(nfirst [[1 2] [3]])", "[2]"]], fn: (a) => next(first(a[0])), f1: (x) => next(first(x)) },
  { name: "nnext", area: "collections", arity: [1, 1], params: "[coll]", doc: "(next (next coll)).", examples: [["(nnext [1 2 3 4])", "[3 4]"], ["(nnext [1 2])", "nil"]], fn: (a) => next(next(a[0])), f1: (x) => next(next(x)) },
  {
    name: "nthrest",
    area: "collections",
    arity: [2, 2],
    params: "[coll n]",
    doc: "The elements after the first n, as a vector.",
    examples: [["(nthrest [1 2 3 4] 2)", "[3 4]"]],
    fn: (a) => nthrest(a[0], a[1]),
    f2: nthrest,
  },
  {
    name: "nthnext",
    area: "collections",
    arity: [2, 2],
    params: "[coll n]",
    doc: "The elements after the first n, or nil when none are left.",
    examples: [["(nthnext [1 2 3] 1)", "[2 3]"], ["(nthnext [1 2] 2)", "nil"]],
    fn: (a) => {
      const r = dropFront("nthnext", a[0], countArg("nthnext", a[1], Math.ceil));
      return r.size === 0 ? null : r;
    },
  },
  { name: "peek", area: "collections", arity: [1, 1], params: "[v]", doc: "The last element of a vector (the end conj adds to), or nil.", examples: [["(peek [1 2 3])", "3"]], fn: (a) => peek(a[0]), f1: peek },
  { name: "pop", area: "collections", arity: [1, 1], params: "[v]", doc: "The vector without its last element; popping an empty vector is an error.", examples: [["(pop [1 2 3])", "[1 2]"]], fn: (a) => pop(a[0]), f1: pop },
  {
    name: "conj",
    area: "collections",
    arity: [0, Infinity],
    params: "[] [coll] [coll x & xs]",
    doc: "Adds elements: at the end of a vector, into a set, [k v] entries (or maps) into a map; nil becomes a vector. (conj) is [] (a reducing function's start).",
    examples: [["(conj [1 2] 3 4)", "[1 2 3 4]"], ["(conj {:a 1} [:b 2])", "{:a 1 :b 2}"], ["(conj nil 1)", "[1]"], ["(conj)", "[]"]],
    fn: (a) => (a.length === 2 ? conj2(a[0], a[1]) : a.length === 0 ? EMPTY_VEC : conjAll("conj", a[0], a, 1)),
    f1: (c) => conjAll("conj", c, [], 0),
    f2: conj2,
  },
  {
    name: "cons",
    area: "collections",
    arity: [2, 2],
    params: "[x coll]",
    doc: "A vector with x followed by the elements of coll.",
    examples: [["(cons 0 [1 2])", "[0 1 2]"]],
    fn: (a) => cons(a[0], a[1]),
    f2: cons,
  },
  {
    name: "list*",
    area: "collections",
    arity: [1, Infinity],
    params: "[& xs coll]",
    doc: "A vector of the xs followed by the elements of coll (nil when empty).",
    examples: [["(list* 1 2 [3 4])", "[1 2 3 4]"], ["(list* nil)", "nil"]],
    fn: listStar,
  },
  {
    name: "into",
    area: "collections",
    arity: [0, 3],
    params: "[to from] [to xform from]",
    doc: "Adds every element of from (after the transducer xform) to the collection to: a vector, a map (from [k v] pairs or maps) or a set.",
    examples: [["(into [1] [2 3])", "[1 2 3]"], ["(into [] (map inc) [1 2])", "[2 3]"], ["(into {} [[:a 1] [:b 2]])", "{:a 1 :b 2}"], ["(into #{} [1 1 2])", "#{1 2}"], ["(into (sorted-map) {:b 1 :a 2})", "{:a 2 :b 1}"]],
    fn: into,
    f2: (to, from) => into([to, from]),
  },
  {
    name: "vec",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "The elements as a vector (characters of a string, [k v] entries of a map); [] for nil.",
    examples: [["(vec #{1})", "[1]"], ['(vec "ab")', '["a" "b"]'], ["(vec nil)", "[]"]],
    fn: (a) => vec(a[0]),
    f1: vec,
  },
  { name: "vector", area: "collections", arity: [0, Infinity], params: "[& xs]", doc: "A vector of the arguments.", examples: [["(vector 1 2)", "[1 2]"]], fn: (a) => Vec.fromArray(a.slice()) },
  {
    name: "empty",
    area: "collections",
    arity: [1, 1],
    params: "[coll]",
    doc: "An empty collection of the same kind (vector, map or set); nil otherwise.",
    examples: [["(empty {:a 1})", "{}"]],
    fn: (a) => empty(a[0]),
    f1: empty,
  },
  {
    name: "subvec",
    area: "collections",
    arity: [2, 3],
    params: "[v start] [v start end]",
    doc: "The elements of vector v from index start (inclusive) to end (exclusive).",
    examples: [["(subvec [1 2 3 4] 1 3)", "[2 3]"]],
    fn: subvec,
  },
  {
    name: "contains?",
    area: "collections",
    arity: [2, 2],
    params: "[coll key]",
    doc: "True if a map has the key, a set has the element, or a vector/string has the index. Not a value search on vectors: use (some #{x} v).",
    examples: [["(contains? {:a 1} :a)", "true"], ["(contains? #{1 2} 3)", "false"], ["(contains? [:x :y] 1)", "true"]],
    fn: (a) => contains(a[0], a[1]),
    f2: contains,
  },
  {
    name: "find",
    area: "collections",
    arity: [2, 2],
    params: "[pred coll] [m key]",
    doc: "First element for which pred (a function, keyword or set) is truthy, or nil; (find m key) gives the entry [key value].",
    examples: [["(find even? [1 2 4])", "2"], ["(find :ok [{:ok false} {:ok true}])", "{:ok true}"], ["(find {:a 1} :a)", "[:a 1]"]],
    fn: (a) => find(a[0], a[1]),
    f2: find,
  },
];

