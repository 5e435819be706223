// Sequence transformations. Everything is eager and returns vectors (there are no lazy or
// infinite sequences). The hot paths (map, filter, reduce over a vector with a user fn)
// materialise the input once with toArray(), reuse that array for the result where they
// can, and call functions through call1/call2 so no argument arrays are allocated.
import { chargeHash, compare, compareDescending, equals } from "../equality.js";
import { LispError, typeErr } from "../errors.js";
import { call2, callValue } from "../fn.js";
import { lookup } from "../lookup.js";
import { isSeqable } from "../seq.js";
import { charge, checkCollectionSize, limitError, orderedBy, run, tick, took } from "../runtime.js";
import { EMPTY_MAP, EMPTY_VEC, Fn, isFloat, Keyword, LFloat, LMap, mkFloat, num, Reduced, truthy, type Value, isMap, isSet } from "../values.js";
import { prStr } from "../printer.js";
import { Vec } from "../vector.js";
import { overflow } from "./arithmetic.js";
import { countArg, describe, expectFn, items, ordered } from "./args.js";
import { Builtin, type BuiltinDef } from "./registry.js";
import { noteOrderFn } from "../holds-function.js";

type Unary = (x: Value) => Value;

/** A callable as a JS function of one argument; keywords and maps look up without allocating. */
function unary(who: string, f: Value): Unary {
  if (f instanceof Fn) return (x) => f.call1(x);
  if (f instanceof Keyword) return (x) => lookup(x, f, null);
  // A set gives the element it holds, found by its own comparator when sorted by one.
  if (isMap(f) || isSet(f)) return (x) => lookup(f, x, null);
  // A vector (the only other callable) indexes. Anything else is a type error when it is first
  // called, as in Clojure: (every? 1 []) is true, since nothing ever calls 1.
  return (x) => callValue(expectFn(who, f), [x]);
}

/** Key functions (sort-by, group-by, pluck, ...) also accept a string key, as the reference does. */
function keyFn(who: string, f: Value): Unary {
  if (typeof f === "string") return (x) => lookup(x, f, null);
  return unary(who, f);
}

/** The length of the shortest array: several collections are walked in step and stop there. */
function shortest(colls: Value[][]): number {
  let n = Infinity;
  for (const c of colls) n = Math.min(n, c.length);
  return n;
}

function singleMapError(who: string, k: Keyword, m: LMap): LispError {
  return typeErr(
    `${who} with keyword :${k.name} expects a collection of maps, got a single ${describe(m)}`,
    `to read one field use (:${k.name} m) or (get m :${k.name}); to go over a map's entries use (${who} (fn [[k v]] ...) m)`,
  );
}

// ---- map and friends ----

function map1(who: string, f: Value, coll: Value): Value {
  if (f instanceof Keyword && isMap(coll)) throw singleMapError(who, f, coll);
  const xs = items(who, coll);
  const n = xs.length;
  charge(n);
  if (f instanceof Fn) {
    for (let i = 0; i < n; i++) {
      tick(i);
      xs[i] = f.call1(xs[i]);
    }
  } else {
    const g = unary(who, f);
    for (let i = 0; i < n; i++) {
      tick(i);
      xs[i] = g(xs[i]);
    }
  }
  return Vec.fromArray(xs);
}

function mapN(who: string, args: Value[]): Value {
  const f = args[0];
  if (args.length === 2) return map1(who, f, args[1]);
  const colls = args.slice(1).map((c) => items(who, c));
  const n = shortest(colls);
  if (n > 0 && !(f instanceof Fn)) expectFn(who, f);
  charge(n * colls.length);
  const out = new Array<Value>(n);
  if (colls.length === 2) {
    const [xs, ys] = colls;
    for (let i = 0; i < n; i++) {
      tick(i);
      out[i] = call2(f, xs[i], ys[i]);
    }
  } else {
    for (let i = 0; i < n; i++) {
      tick(i);
      out[i] = callValue(f, colls.map((c) => c[i]));
    }
  }
  return Vec.fromArray(out);
}

function mapIndexed(f: Value, coll: Value): Value {
  expectFn("map-indexed", f);
  const xs = items("map-indexed", coll);
  charge(xs.length);
  for (let i = 0; i < xs.length; i++) {
    tick(i);
    xs[i] = call2(f, i, xs[i]);
  }
  return Vec.fromArray(xs);
}

/** Appends the elements of a function's result to out, checking the size as it grows. */
function appendAll(who: string, out: Value[], part: Value): void {
  if (part instanceof Vec) {
    const n = part.size;
    if (n === 0) return;
    checkCollectionSize(out.length + n);
    charge(n);
    if (n === 1) out.push(part.get(0) as Value);
    else for (const x of part.toArray()) out.push(x);
    return;
  }
  if (part === null) return;
  if (!isSeqable(part)) throw typeErr(`${who}: the function must return a collection, got ${describe(part)}`, "wrap a single value in a vector, e.g. (fn [x] [x]), or use map");
  const xs = items(who, part);
  checkCollectionSize(out.length + xs.length);
  charge(xs.length);
  // The characters of a string the function returned are pieces of it (of a hidden one, hidden).
  if (typeof part === "string") for (const x of xs) took(part, x);
  for (const x of xs) out.push(x);
}

// Appends each result as soon as it is made, so an exploding mapcat stops at the size limit
// instead of first building every intermediate collection.
function mapcat(args: Value[]): Value {
  const f = args[0];
  const out: Value[] = [];
  if (args.length === 2) {
    if (f instanceof Keyword && isMap(args[1])) throw singleMapError("mapcat", f, args[1]);
    const g = unary("mapcat", f);
    const xs = items("mapcat", args[1]);
    charge(xs.length);
    for (let i = 0; i < xs.length; i++) {
      tick(i);
      appendAll("mapcat", out, g(xs[i]));
    }
    return Vec.fromArray(out);
  }
  expectFn("mapcat", f);
  const colls = args.slice(1).map((c) => items("mapcat", c));
  const n = shortest(colls);
  charge(n * colls.length);
  for (let i = 0; i < n; i++) {
    tick(i);
    appendAll("mapcat", out, callValue(f, colls.map((c) => c[i])));
  }
  return Vec.fromArray(out);
}

function filterWith(who: string, pred: Value, coll: Value, keep: boolean): Value {
  const xs = items(who, coll);
  const n = xs.length;
  charge(n);
  let j = 0;
  if (pred instanceof Fn) {
    for (let i = 0; i < n; i++) {
      tick(i);
      const x = xs[i];
      const r = pred.call1(x);
      if ((r !== null && r !== false) === keep) xs[j++] = x;
    }
  } else {
    const g = unary(who, pred);
    for (let i = 0; i < n; i++) {
      tick(i);
      const x = xs[i];
      if (truthy(g(x)) === keep) xs[j++] = x;
    }
  }
  xs.length = j;
  return Vec.fromArray(xs);
}

function keepWith(who: string, f: Value, coll: Value, indexed: boolean): Value {
  const xs = items(who, coll);
  const n = xs.length;
  charge(n);
  const g = indexed ? null : unary(who, f);
  if (indexed && n > 0) expectFn(who, f);
  let j = 0;
  for (let i = 0; i < n; i++) {
    tick(i);
    const r = g ? g(xs[i]) : call2(f, i, xs[i]);
    if (r !== null) xs[j++] = r;
  }
  xs.length = j;
  return Vec.fromArray(xs);
}

// ---- reduce ----

/** (f acc x) over xs[from..], starting from acc. */
function fold(f: Value, acc: Value, xs: Value[], from: number): Value {
  const n = xs.length;
  charge(n);
  // A step that returns (reduced v) ends the reduction with v. A builtin step reads no clock
  // of its own (a closure's calls do), so the fold reads it every 4,096 elements.
  if (f instanceof Fn) {
    for (let i = from; i < n; i++) {
      tick(i);
      acc = f.call2(acc, xs[i]);
      // Numbers (the usual accumulator) skip the class check.
      if (typeof acc === "object" && acc instanceof Reduced) return acc.value;
    }
    return acc;
  }
  expectFn("reduce", f);
  for (let i = from; i < n; i++) {
    tick(i);
    acc = call2(f, acc, xs[i]);
    if (typeof acc === "object" && acc instanceof Reduced) return acc.value;
  }
  return acc;
}

function reduce2(f: Value, coll: Value): Value {
  const xs = items("reduce", coll);
  if (xs.length === 0) return callValue(expectFn("reduce", f), []);
  return fold(f, xs[0], xs, 1);
}

function reduce3(f: Value, init: Value, coll: Value): Value {
  return fold(f, init, items("reduce", coll), 0);
}

function reduceKv(f: Value, init: Value, coll: Value): Value {
  expectFn("reduce-kv", f);
  let acc = init;
  if (isMap(coll)) {
    charge(coll.size);
    let i = 0;
    for (const [k, v] of coll) {
      tick(i++);
      acc = callValue(f, [acc, k, v]);
      if (acc instanceof Reduced) return acc.value;
    }
    return acc;
  }
  if (coll instanceof Vec) {
    const xs = coll.toArray();
    charge(xs.length);
    for (let i = 0; i < xs.length; i++) {
      tick(i);
      acc = callValue(f, [acc, i, xs[i]]);
      if (acc instanceof Reduced) return acc.value;
    }
    return acc;
  }
  if (coll === null) return acc;
  throw typeErr(`reduce-kv expects a map or vector, got ${describe(coll)}`, "use reduce for other collections: (reduce (fn [acc x] ...) init coll)");
}

function reductions(args: Value[]): Value {
  const f = expectFn("reductions", args[0]);
  const withInit = args.length === 3;
  const xs = items("reductions", args[withInit ? 2 : 1]);
  charge(xs.length);
  if (!withInit && xs.length === 0) return Vec.of(callValue(f, []));
  const out = new Array<Value>(withInit ? xs.length + 1 : xs.length);
  let acc = withInit ? args[1] : xs[0];
  out[0] = acc;
  let k = 1;
  for (let i = withInit ? 0 : 1; i < xs.length; i++) {
    tick(i);
    acc = call2(f, acc, xs[i]);
    if (acc instanceof Reduced) {
      out[k++] = acc.value;
      break;
    }
    out[k++] = acc;
  }
  out.length = k;
  return Vec.fromArray(out);
}

// ---- building sequences ----

function numArg(who: string, x: Value): number {
  if (typeof x === "number") return x;
  if (x instanceof LFloat) return x.v;
  throw typeErr(`${who} expects numbers, got ${describe(x)}`);
}

function range(args: Value[]): Value {
  const nums = args.map((a) => numArg("range", a));
  const [start, end, step] = nums.length === 1 ? [0, nums[0], 1] : [nums[0], nums[1], nums.length > 2 ? nums[2] : 1];
  if (step === 0) {
    if (start === end) return EMPTY_VEC;
    throw new LispError("value_error", "range with step 0 would never end", undefined, "use (repeat n x) for n copies of a value");
  }
  const span = Math.ceil((end - start) / step);
  if (Number.isNaN(span)) return nanRange(args, start, end, step);
  const n = span > 0 ? span : 0;
  checkCollectionSize(n);
  charge(n);
  // As in Clojure, the elements take the type of start and step, not of end: (range (/ n 2))
  // counts in integers. A float start or step adds up step by step, as Clojure does.
  if (!(nums.length > 1 && isFloat(args[0])) && !(nums.length > 2 && isFloat(args[2]))) {
    // Integers past ±2^53 would repeat or skip: an overflow, as in (+ 9007199254740991 1).
    if (n > 0 && !Number.isSafeInteger(start + (n - 1) * step)) throw overflow("range");
    const out = new Array<Value>(n);
    for (let i = 0; i < n; i++) out[i] = start + i * step;
    return Vec.fromArray(out);
  }
  if (n === 0) return EMPTY_VEC;
  const out: Value[] = [args[0]];
  // Each element is the previous plus the step, rounded: past 2^53 that may move by less than
  // the step (more elements than n) or not at all (a range that never ends, as in Clojure).
  for (let prev = start, x = start + step; step > 0 ? x < end : x > end; prev = x, x += step) {
    if (x === prev) throw limitError("collection_too_large", `(range ${args.map((a) => prStr(a)).join(" ")}) never ends: its elements stop changing at ${prStr(mkFloat(x))}, short of the end`, "past 2^53 floats are more than 1 apart: use a larger step");
    if (out.length >= n) {
      checkCollectionSize(out.length + 1);
      charge(1);
    }
    out.push(mkFloat(x));
  }
  return Vec.fromArray(out);
}

/**
 * A range whose count cannot be worked out: a NaN among its numbers, or infinite bounds and
 * step. As Clojure's Range: empty when its start is already past the end by the step's sign (a
 * NaN step counting as negative; (range end) unless end is positive); else its elements go on
 * while short of the end, and from the second on they are NaN or infinite and stop changing, so
 * it is [start] when the second is past the end and otherwise never ends: refused, as
 * (range 0 ##Inf) is, not an empty vector.
 */
function nanRange(args: Value[], start: number, end: number, step: number): Value {
  // Only a NaN end gets here with one argument: not positive.
  if (args.length === 1) return EMPTY_VEC;
  const past = (x: number): boolean => (step > 0 ? x >= end : x <= end);
  if (past(start)) return EMPTY_VEC;
  if (start === start && end === end && past(start + step)) return Vec.fromArray([args[0]]);
  throw limitError("collection_too_large", `(range ${args.map((a) => prStr(a)).join(" ")}) never ends: its elements stop changing short of the end`, "check the bounds and the step with NaN? first");
}

function repeat(args: Value[]): Value {
  if (args.length === 1) throw new LispError("arity_error", "repeat needs a count: (repeat n x); there are no infinite sequences", undefined, "e.g. (repeat 3 :x) gives [:x :x :x]");
  const n = Math.max(0, countArg("repeat", args[0]));
  checkCollectionSize(n);
  charge(n);
  return Vec.fromArray(new Array<Value>(n).fill(args[1]));
}

// ---- taking and dropping ----

function take(n: Value, coll: Value): Value {
  const k = countArg("take", n, Math.ceil);
  if (coll instanceof Vec) {
    if (k >= coll.size) return coll;
    if (k <= 0) return EMPTY_VEC;
    // Slices share the trie, so take and drop on vectors cost O(1).
    charge(1);
    return coll.slice(0, k);
  }
  const xs = ordered("take", coll);
  return Vec.fromArray(k >= xs.length ? xs : xs.slice(0, Math.max(k, 0)));
}

function drop(n: Value, coll: Value): Value {
  const k = Math.max(0, countArg("drop", n, Math.ceil));
  if (coll instanceof Vec) {
    charge(1);
    return coll.slice(k);
  }
  const xs = ordered("drop", coll);
  return Vec.fromArray(k === 0 ? xs : xs.slice(k));
}

function takeLast(n: Value, coll: Value): Value {
  const k = Math.max(0, countArg("take-last", n, Math.ceil));
  // A vector's tail is a slice: no copy of the elements before it, whose count is not charged.
  if (coll instanceof Vec) {
    charge(Math.min(k, coll.size));
    return k === 0 || coll.size === 0 ? null : coll.slice(Math.max(0, coll.size - k));
  }
  const xs = ordered("take-last", coll);
  // Clojure's take-last gives nil, not an empty sequence, when nothing is taken.
  if (k === 0 || xs.length === 0) return null;
  return Vec.fromArray(k >= xs.length ? xs : xs.slice(xs.length - k));
}

function dropLast(args: Value[]): Value {
  const k = args.length === 1 ? 1 : Math.max(0, countArg("drop-last", args[0], Math.ceil));
  const xs = ordered("drop-last", args[args.length - 1]);
  xs.length = Math.max(0, xs.length - k);
  return Vec.fromArray(xs);
}

/** How many leading elements satisfy pred. */
function prefixLength(who: string, pred: Value, xs: Value[]): number {
  const g = unary(who, pred);
  charge(xs.length);
  let i = 0;
  while (i < xs.length && truthy(g(xs[i]))) tick(i++);
  return i;
}

function takeWhile(pred: Value, coll: Value): Value {
  const xs = ordered("take-while", coll);
  xs.length = prefixLength("take-while", pred, xs);
  return Vec.fromArray(xs);
}

function dropWhile(pred: Value, coll: Value): Value {
  const xs = ordered("drop-while", coll);
  return Vec.fromArray(xs.slice(prefixLength("drop-while", pred, xs)));
}

function splitAt(n: Value, coll: Value): Value {
  const xs = ordered("split-at", coll);
  const k = Math.min(xs.length, Math.max(0, countArg("split-at", n, Math.ceil)));
  return Vec.of<Value>(Vec.fromArray(xs.slice(0, k)), Vec.fromArray(xs.slice(k)));
}

function splitWith(pred: Value, coll: Value): Value {
  const xs = ordered("split-with", coll);
  const k = prefixLength("split-with", pred, xs);
  return Vec.of<Value>(Vec.fromArray(xs.slice(0, k)), Vec.fromArray(xs.slice(k)));
}

// A fractional size or step rounds up, as take and drop round it (Clojure's take-nth and
// partition-all are made of them); (/ 5 2) is 2.5 here where Clojure has 5/2.
function positive(who: string, x: Value, what: string): number {
  const n = countArg(who, x, Math.ceil);
  if (n > 0) return n;
  throw new LispError("value_error", `${who} expects a positive ${what}, got ${describe(x)}`, undefined, "a size or step of 0 or less would never make progress");
}

function takeNth(n: Value, coll: Value): Value {
  const k = positive("take-nth", n, "step");
  const xs = ordered("take-nth", coll);
  const out: Value[] = [];
  for (let i = 0; i < xs.length; i += k) out.push(xs[i]);
  return Vec.fromArray(out);
}

// ---- removing duplicates, grouping, counting ----

/**
 * Numbers the distinct values it is given, with `=` semantics (1 and 1.0 are one value).
 * Primitives and keywords go through JS Maps: hashing them through immutable-js is several
 * times slower, and distinct/group-by/frequencies over large data are common.
 */
class ValueIndex {
  private readonly prims = new Map<string | number | boolean | null, number>();
  private readonly keywords = new Map<string, number>();
  private readonly others = LMap<Value, Value>().asMutable();
  size = 0;

  /** The slot of x, adding it as a new slot if it is not there yet. */
  slot(x: Value): number {
    if (x === null || typeof x !== "object" || x instanceof LFloat) {
      chargeHash(x);
      const k = x instanceof LFloat ? x.v : x;
      const i = this.prims.get(k);
      if (i !== undefined) return i;
      this.prims.set(k, this.size);
    } else if (x instanceof Keyword) {
      const i = this.keywords.get(x.name);
      if (i !== undefined) return i;
      this.keywords.set(x.name, this.size);
    } else {
      const i = this.others.get(x);
      if (i !== undefined) return i as number;
      this.others.set(x, this.size);
    }
    return this.size++;
  }
}

function distinct(coll: Value): Value {
  const xs = items("distinct", coll);
  charge(xs.length);
  const seen = new ValueIndex();
  let j = 0;
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i];
    if (seen.slot(x) === j) xs[j++] = x;
    tick(i);
  }
  xs.length = j;
  return Vec.fromArray(xs);
}

function dedupe(coll: Value): Value {
  const xs = items("dedupe", coll);
  charge(xs.length);
  let j = 0;
  for (let i = 0; i < xs.length; i++) {
    tick(i);
    if (j === 0 || !equals(xs[j - 1], xs[i])) xs[j++] = xs[i];
  }
  xs.length = j;
  return Vec.fromArray(xs);
}

// ---- combining ----

function concat(args: Value[]): Value {
  const out: Value[] = [];
  for (const c of args) appendAll("concat", out, c instanceof Vec || c === null ? c : Vec.fromArray(items("concat", c)));
  return Vec.fromArray(out);
}

function flatten(x: Value): Value {
  if (x === null) return EMPTY_VEC;
  if (!(x instanceof Vec)) {
    throw typeErr(`flatten expects a vector, got ${describe(x)}`, isMap(x) ? "use (vals m) or (mapcat val m) for a map's values" : isSet(x) ? "use (vec s) first" : undefined);
  }
  // Iterative (an explicit stack) so deeply nested data never reaches the host stack.
  const out: Value[] = [];
  const stack: Value[][] = [x.toArray()];
  const at: number[] = [0];
  const max = run.limits.maxCollectionSize;
  while (stack.length > 0) {
    const top = stack.length - 1;
    const xs = stack[top];
    const i = at[top];
    if (i >= xs.length) {
      stack.pop();
      at.pop();
      continue;
    }
    at[top] = i + 1;
    const v = xs[i];
    charge(1);
    if (v instanceof Vec) {
      stack.push(v.toArray());
      at.push(0);
    } else {
      if (out.length >= max) checkCollectionSize(out.length + 1);
      out.push(v);
    }
  }
  return Vec.fromArray(out);
}

function interleave(args: Value[]): Value {
  if (args.length === 0) return EMPTY_VEC;
  const colls = args.map((c) => items("interleave", c));
  const n = shortest(colls);
  const total = n * colls.length;
  checkCollectionSize(total);
  charge(total);
  const out = new Array<Value>(total);
  let k = 0;
  for (let i = 0; i < n; i++) for (const c of colls) out[k++] = c[i];
  return Vec.fromArray(out);
}

function interpose(sep: Value, coll: Value): Value {
  const xs = items("interpose", coll);
  if (xs.length === 0) return EMPTY_VEC;
  const total = 2 * xs.length - 1;
  checkCollectionSize(total);
  charge(total);
  const out = new Array<Value>(total);
  out[0] = xs[0];
  for (let i = 1; i < xs.length; i++) {
    out[2 * i - 1] = sep;
    out[2 * i] = xs[i];
  }
  return Vec.fromArray(out);
}

function zip(args: Value[]): Value {
  const colls = args.map((c) => items("zip", c));
  const n = shortest(colls);
  charge(n * colls.length);
  const out = new Array<Value>(n);
  // Charged up front; a vector per element is work enough that the clock is checked as it goes.
  for (let i = 0; i < n; i++) {
    tick(i);
    out[i] = Vec.fromArray(colls.map((c) => c[i]));
  }
  return Vec.fromArray(out);
}

// ---- partitioning ----

/** (partition n coll), (partition n step coll), (partition n step pad coll); `all` keeps a short tail. */
function partitionWith(who: string, args: Value[], all: boolean): Value {
  const n = positive(who, args[0], "size");
  // Clojure's partition keeps only chunks whose count = n, which a fractional n never has: it
  // gives nothing, silently.
  if (!all && !Number.isInteger(num(args[0] as number | LFloat))) throw new LispError("value_error", `partition expects a whole size, got ${describe(args[0])}`, undefined, "round it, (int n) or (quot a b), or use partition-all");
  const step = args.length > 2 ? positive(who, args[1], "step") : n;
  const pad = !all && args.length > 3 ? items(who, args[2]) : null;
  const xs = items(who, args[args.length - 1]);
  const len = xs.length;
  // Windows that start inside coll; partition without padding keeps only full ones.
  const starts = all || pad ? Math.ceil(len / step) : len >= n ? Math.floor((len - n) / step) + 1 : 0;
  checkCollectionSize(starts);
  charge(starts * Math.min(n, len) + len);
  const out: Value[] = [];
  for (let s = 0; s < starts; s++) {
    tick(s);
    const from = s * step;
    const chunk = xs.slice(from, from + n);
    if (chunk.length < n && pad) {
      // Clojure pads the first incomplete chunk and stops there.
      for (let i = 0; chunk.length < n && i < pad.length; i++) chunk.push(pad[i]);
      out.push(Vec.fromArray(chunk));
      break;
    }
    out.push(Vec.fromArray(chunk));
  }
  return Vec.fromArray(out);
}

function partitionBy(f: Value, coll: Value): Value {
  const g = unary("partition-by", f);
  const xs = items("partition-by", coll);
  charge(xs.length);
  const out: Value[] = [];
  let chunk: Value[] = [];
  let key: Value = null;
  for (let i = 0; i < xs.length; i++) {
    tick(i);
    const k = g(xs[i]);
    if (i > 0 && !equals(k, key)) {
      out.push(Vec.fromArray(chunk));
      chunk = [];
    }
    key = k;
    chunk.push(xs[i]);
  }
  if (chunk.length > 0) out.push(Vec.fromArray(chunk));
  return Vec.fromArray(out);
}

function reverse(coll: Value): Value {
  const xs = ordered("reverse", coll);
  return Vec.fromArray(xs.reverse());
}

// ---- sorting ----

export type Cmp = (a: Value, b: Value) => number;

const ascending: Cmp = compare;
const descending: Cmp = compareDescending;

function comparatorResult(who: string, r: Value): number | null {
  if (typeof r === "number") return r;
  if (r instanceof LFloat) return r.v;
  if (typeof r === "boolean") return null;
  // nil is refused, as Clojure's AFunction.compare refuses it: read as false it made every
  // element equal, so a sorted set kept only its first element.
  throw typeErr(
    `${who}: the comparator must return a number or a boolean, got ${describe(r)}`,
    r === null ? "wrap a predicate that may return nil in boolean: (fn [a b] (boolean ...))" : "use compare, or a function like (fn [a b] (< a b))",
  );
}

/**
 * A comparator value as a JS compare function. The ordering builtins (< > <= >=) order by
 * `compare`, so (sort-by :name > rows) works on strings as well as numbers, as in the reference.
 * A boolean comparator means "a comes before b", as in Clojure.
 */
export function comparator(who: string, c: Value): Cmp {
  if (c instanceof Builtin) {
    switch (c.name) {
      case "<":
      case "<=":
      case "compare":
        return ascending;
      case ">":
      case ">=":
        return descending;
    }
  }
  if (!(c instanceof Fn)) {
    throw typeErr(`${who} expects a comparator function, got ${describe(c)}`, c instanceof Keyword ? `the key function comes first: (sort-by :${c.name} > coll)` : "use compare, < or >, or (fn [a b] ...)");
  }
  const order: Cmp = (a, b) => {
    const r = c.call2(a, b);
    const n = comparatorResult(who, r);
    if (n !== null) return n;
    return truthy(r) ? -1 : truthy(c.call2(b, a)) ? 1 : 0;
  };
  noteOrderFn(order, c);
  return order;
}

function sortCharge(n: number): void {
  charge(n > 1 ? n * Math.ceil(Math.log2(n)) : n);
}

function sort(args: Value[]): Value {
  const cmp = args.length === 2 ? comparator("sort", args[0]) : ascending;
  const xs = items("sort", args[args.length - 1]);
  if (args.length === 1 && xs.length > 1 && isMap(xs[0])) {
    throw typeErr(`sort cannot order maps, got ${describe(xs[0])}`, "sort by a field with (sort-by :key coll), or (sort-by :key > coll) for descending");
  }
  sortCharge(xs.length);
  let i = 0;
  return Vec.fromArray(
    xs.sort((a, b) => {
      tick(i++);
      return cmp(a, b);
    }),
  );
}

function sortBy(args: Value[]): Value {
  const g = keyFn("sort-by", args[0]);
  const cmp = args.length === 3 ? comparator("sort-by", args[1]) : ascending;
  const xs = items("sort-by", args[args.length - 1]);
  const n = xs.length;
  charge(n);
  const keys = new Array<Value>(n);
  const idx = new Array<number>(n);
  for (let i = 0; i < n; i++) {
    tick(i);
    keys[i] = g(xs[i]);
    idx[i] = i;
  }
  sortCharge(n);
  // Array.prototype.sort is stable, so equal keys keep their original order.
  let c = 0;
  idx.sort((i, j) => {
    tick(c++);
    return cmp(keys[i], keys[j]);
  });
  const out = new Array<Value>(n);
  for (let i = 0; i < n; i++) out[i] = xs[idx[i]];
  const r = Vec.fromArray(out);
  // The order is computed from the keys: a function may read them from hidden context without
  // closing over it ((sort-by #(nth tok %) (range 18)) spells the token's order).
  return args[0] instanceof Fn ? orderedBy(keys, r) : r;
}

function groupBy(f: Value, coll: Value): Value {
  const g = keyFn("group-by", f);
  const xs = items("group-by", coll);
  charge(xs.length);
  const index = new ValueIndex();
  const keys: Value[] = [];
  const groups: Value[][] = [];
  for (let n = 0; n < xs.length; n++) {
    const x = xs[n];
    const k = g(x);
    const i = index.slot(k);
    if (i === groups.length) {
      keys.push(k);
      groups.push([x]);
    } else {
      groups[i].push(x);
    }
    tick(n);
  }
  if (keys.length === 0) return EMPTY_MAP;
  return LMap<Value, Value>().withMutations((m) => {
    for (let i = 0; i < keys.length; i++) {
      m.set(keys[i], Vec.fromArray(groups[i]));
      tick(i);
    }
  });
}

function frequencies(coll: Value): Value {
  const xs = items("frequencies", coll);
  charge(xs.length);
  if (xs.length === 0) return EMPTY_MAP;
  const index = new ValueIndex();
  const keys: Value[] = [];
  const counts: number[] = [];
  for (let n = 0; n < xs.length; n++) {
    const x = xs[n];
    const i = index.slot(x);
    if (i === counts.length) {
      keys.push(x);
      counts.push(1);
    } else {
      counts[i]++;
    }
    tick(n);
  }
  return LMap<Value, Value>().withMutations((m) => {
    for (let i = 0; i < keys.length; i++) {
      m.set(keys[i], counts[i]);
      tick(i);
    }
  });
}

// ---- predicates over elements ----

function some(pred: Value, coll: Value): Value {
  const g = unary("some", pred);
  const xs = items("some", coll);
  charge(xs.length);
  for (let i = 0; i < xs.length; i++) {
    tick(i);
    const r = g(xs[i]);
    if (r !== null && r !== false) return r;
  }
  return null;
}

/** run!: f for its side effects (println, say) on each element; nil. */
function runBang(f: Value, coll: Value): Value {
  const g = unary("run!", f);
  const xs = items("run!", coll);
  charge(xs.length);
  for (let i = 0; i < xs.length; i++) {
    tick(i);
    g(xs[i]);
  }
  return null;
}

function every(who: string, pred: Value, coll: Value): boolean {
  const g = unary(who, pred);
  const xs = items(who, coll);
  charge(xs.length);
  for (let i = 0; i < xs.length; i++) {
    tick(i);
    if (!truthy(g(xs[i]))) return false;
  }
  return true;
}

// ---- reference extras ----

function pluck(key: Value, coll: Value): Value {
  if (isMap(coll) && (key instanceof Keyword || typeof key === "string")) {
    throw typeErr(`pluck expects a collection of maps, got a single ${describe(coll)}`, "to read one field use (get m k)");
  }
  const g = keyFn("pluck", key);
  const xs = items("pluck", coll);
  charge(xs.length);
  for (let i = 0; i < xs.length; i++) {
    tick(i);
    xs[i] = g(xs[i]);
  }
  return Vec.fromArray(xs);
}

/** n choose k; a limit error as soon as it passes the collection limit, before any work. */
function choose(n: number, k: number): number {
  const cap = run.limits.maxCollectionSize;
  let c = 1;
  for (let i = 1; i <= k; i++) {
    c = (c * (n - k + i)) / i;
    if (c > cap) {
      throw limitError("collection_too_large", `combinations of ${k} out of ${n} elements would be more than ${cap} vectors`, "choose fewer elements, or filter the collection first");
    }
  }
  return Math.round(c);
}

function combinations(coll: Value, size: Value): Value {
  const xs = items("combinations", coll);
  const k = countArg("combinations", size);
  const n = xs.length;
  if (k < 0 || k > n) return EMPTY_VEC;
  const total = choose(n, k);
  charge(total * Math.max(k, 1));
  const out = new Array<Value>(total);
  const idx = Array.from({ length: k }, (_, i) => i);
  for (let c = 0; c < total; c++) {
    out[c] = Vec.fromArray(idx.map((i) => xs[i]));
    // Advance to the next combination in lexicographic order of indices.
    let p = k - 1;
    while (p >= 0 && idx[p] === n - k + p) p--;
    if (p < 0) break;
    idx[p]++;
    for (let q = p + 1; q < k; q++) idx[q] = idx[q - 1] + 1;
  }
  return Vec.fromArray(out);
}

const d = (
  name: string,
  arity: readonly [number, number],
  params: string,
  doc: string,
  examples: ReadonlyArray<readonly [string, string]>,
  fns: Pick<BuiltinDef, "fn" | "f1" | "f2">,
): BuiltinDef => ({ name, area: "sequences", arity, params, doc, examples, ...fns });

export const SEQUENCES: BuiltinDef[] = [
  d(
    "map",
    [2, Infinity],
    "[f coll & colls]",
    "Applies f to each element (or to the elements at the same position of several collections, stopping at the shortest); a vector.",
    [
      ["(map inc [1 2 3])", "[2 3 4]"],
      ["(map :name [{:name \"a\"} {:name \"b\"}])", '["a" "b"]'],
      ["(map + [1 2 3] [10 20])", "[11 22]"],
    ],
    { fn: (a) => mapN("map", a), f2: (f, c) => map1("map", f, c) },
  ),
  d("mapv", [2, Infinity], "[f coll & colls]", "Same as map (every sequence is a vector).", [["(mapv inc [1 2])", "[2 3]"]], { fn: (a) => mapN("mapv", a), f2: (f, c) => map1("mapv", f, c) }),
  d("map-indexed", [2, 2], "[f coll]", "Calls (f index x) for each element; a vector.", [['(map-indexed vector ["a" "b"])', '[[0 "a"] [1 "b"]]']], { fn: (a) => mapIndexed(a[0], a[1]), f2: mapIndexed }),
  d("mapcat", [2, Infinity], "[f coll & colls]", "Applies f to each element and concatenates the resulting collections.", [["(mapcat (fn [x] [x x]) [1 2])", "[1 1 2 2]"]], { fn: mapcat, f2: (f, c) => mapcat([f, c]) }),
  d(
    "filter",
    [2, 2],
    "[pred coll]",
    "The elements for which pred (a function, keyword or set) is truthy; a vector (a map gives [k v] entries).",
    [
      ["(filter even? [1 2 3 4])", "[2 4]"],
      ["(filter :ok [{:ok true} {:ok false}])", "[{:ok true}]"],
    ],
    { fn: (a) => filterWith("filter", a[0], a[1], true), f2: (p, c) => filterWith("filter", p, c, true) },
  ),
  d("filterv", [2, 2], "[pred coll]", "Same as filter.", [["(filterv odd? [1 2 3])", "[1 3]"]], { fn: (a) => filterWith("filterv", a[0], a[1], true), f2: (p, c) => filterWith("filterv", p, c, true) }),
  d("remove", [2, 2], "[pred coll]", "The elements for which pred is falsy: the opposite of filter.", [["(remove even? [1 2 3 4])", "[1 3]"]], {
    fn: (a) => filterWith("remove", a[0], a[1], false),
    f2: (p, c) => filterWith("remove", p, c, false),
  }),
  d("keep", [2, 2], "[f coll]", "The non-nil results of (f x) (false is kept).", [["(keep :a [{:a 1} {:b 2} {:a 3}])", "[1 3]"]], { fn: (a) => keepWith("keep", a[0], a[1], false), f2: (f, c) => keepWith("keep", f, c, false) }),
  d("keep-indexed", [2, 2], "[f coll]", "The non-nil results of (f index x).", [["(keep-indexed (fn [i x] (when (even? i) x)) [:a :b :c])", "[:a :c]"]], {
    fn: (a) => keepWith("keep-indexed", a[0], a[1], true),
    f2: (f, c) => keepWith("keep-indexed", f, c, true),
  }),
  d(
    "reduce",
    [2, 3],
    "[f coll] [f init coll]",
    "Combines the elements with (f acc x), starting from init (or the first element). (reduce f []) is (f).",
    [
      ["(reduce + [1 2 3])", "6"],
      ["(reduce + 10 [1 2 3])", "16"],
      ["(reduce (fn [acc [k v]] (+ acc v)) 0 {:a 1 :b 2})", "3"],
      ["(reduce + [])", "0"],
    ],
    { fn: (a) => (a.length === 2 ? reduce2(a[0], a[1]) : reduce3(a[0], a[1], a[2])), f2: reduce2 },
  ),
  d("reduce-kv", [3, 3], "[f init coll]", "Reduces a map with (f acc k v) (a vector with (f acc index x)).", [["(reduce-kv (fn [acc k v] (+ acc v)) 0 {:a 1 :b 2})", "3"]], { fn: (a) => reduceKv(a[0], a[1], a[2]) }),
  d("reductions", [2, 3], "[f coll] [f init coll]", "The intermediate values of reduce, as a vector.", [["(reductions + [1 2 3])", "[1 3 6]"]], { fn: reductions }),
  d(
    "range",
    [1, 3],
    "[end] [start end] [start end step]",
    "Numbers from start (0) up to but not including end, by step (1); floats if start or step is. end is required.",
    [
      ["(range 4)", "[0 1 2 3]"],
      ["(range 10 0 -3)", "[10 7 4 1]"],
      ["(range 0 1 0.25)", "[0 0.25 0.5 0.75]"],
      ["(range (/ 6 2))", "[0 1 2]"],
    ],
    { fn: range, f1: (e) => range([e]), f2: (s, e) => range([s, e]) },
  ),
  d("repeat", [1, 2], "[n x]", "A vector of n copies of x (n is required).", [["(repeat 3 :x)", "[:x :x :x]"]], { fn: repeat, f2: (n, x) => repeat([n, x]) }),
  d(
    "take",
    [2, 2],
    "[n coll]",
    "The first n elements, as a vector (characters for a string). Not for sets.",
    [
      ["(take 2 [1 2 3])", "[1 2]"],
      ['(take 2 "hello")', '["h" "e"]'],
    ],
    { fn: (a) => take(a[0], a[1]), f2: take },
  ),
  d("drop", [2, 2], "[n coll]", "All but the first n elements, as a vector.", [["(drop 2 [1 2 3])", "[3]"]], { fn: (a) => drop(a[0], a[1]), f2: drop }),
  d("take-while", [2, 2], "[pred coll]", "The leading elements for which pred is truthy.", [["(take-while pos? [2 1 0 3])", "[2 1]"]], { fn: (a) => takeWhile(a[0], a[1]), f2: takeWhile }),
  d("drop-while", [2, 2], "[pred coll]", "The elements from the first one for which pred is falsy.", [["(drop-while pos? [2 1 0 3])", "[0 3]"]], { fn: (a) => dropWhile(a[0], a[1]), f2: dropWhile }),
  d("take-last", [2, 2], "[n coll]", "The last n elements.", [["(take-last 2 [1 2 3])", "[2 3]"]], { fn: (a) => takeLast(a[0], a[1]), f2: takeLast }),
  d("drop-last", [1, 2], "[coll] [n coll]", "All but the last n (default 1) elements.", [["(drop-last [1 2 3])", "[1 2]"], ["(drop-last 2 [1 2 3])", "[1]"]], { fn: dropLast, f1: (c) => dropLast([c]), f2: (n, c) => dropLast([n, c]) }),
  { ...d("split-at", [2, 2], "[n coll]", "[(take n coll) (drop n coll)].", [["(split-at 2 [1 2 3])", "[[1 2] [3]]"]], { fn: (a) => splitAt(a[0], a[1]), f2: splitAt }), aliases: ["splitv-at"] },
  d("split-with", [2, 2], "[pred coll]", "[(take-while pred coll) (drop-while pred coll)].", [["(split-with odd? [1 3 4 5])", "[[1 3] [4 5]]"]], { fn: (a) => splitWith(a[0], a[1]), f2: splitWith }),
  d("take-nth", [2, 2], "[n coll]", "Every n-th element, starting with the first.", [["(take-nth 2 [1 2 3 4 5])", "[1 3 5]"]], { fn: (a) => takeNth(a[0], a[1]), f2: takeNth }),
  d("distinct", [1, 1], "[coll]", "The elements without duplicates, in first-seen order.", [["(distinct [1 2 1 3])", "[1 2 3]"]], { fn: (a) => distinct(a[0]), f1: distinct }),
  d("dedupe", [1, 1], "[coll]", "Removes consecutive duplicates.", [["(dedupe [1 1 2 1])", "[1 2 1]"]], { fn: (a) => dedupe(a[0]), f1: dedupe }),
  d("concat", [0, Infinity], "[& colls]", "The elements of all the collections, in order, as one vector.", [["(concat [1 2] [3] nil)", "[1 2 3]"]], { fn: concat }),
  d("flatten", [1, 1], "[coll]", "All the non-vector elements of nested vectors, as one flat vector (maps and sets inside stay whole).", [["(flatten [1 [2 [3]] 4])", "[1 2 3 4]"]], {
    fn: (a) => flatten(a[0]),
    f1: flatten,
  }),
  d("interleave", [0, Infinity], "[& colls]", "The first element of each collection, then the second of each, ...; stops at the shortest.", [["(interleave [1 2] [:a :b])", "[1 :a 2 :b]"]], { fn: interleave }),
  d("interpose", [2, 2], "[sep coll]", "The elements with sep between each two.", [['(interpose ", " ["a" "b"])', '["a" ", " "b"]']], { fn: (a) => interpose(a[0], a[1]), f2: interpose }),
  {
    ...d(
      "partition",
      [2, 4],
    "[n coll] [n step coll] [n step pad coll]",
    "Chunks of n elements, each starting step (default n) after the previous; an incomplete last chunk is dropped unless pad fills it.",
    [
      ["(partition 2 [1 2 3 4 5])", "[[1 2] [3 4]]"],
      ["(partition 2 1 [1 2 3])", "[[1 2] [2 3]]"],
    ],
    { fn: (a) => partitionWith("partition", a, false) },
    ),
    aliases: ["partitionv"],
  },
  { ...d("partition-all", [2, 3], "[n coll] [n step coll]", "Like partition, but keeps the incomplete chunks at the end.", [["(partition-all 2 [1 2 3])", "[[1 2] [3]]"]], { fn: (a) => partitionWith("partition-all", a, true) }), aliases: ["partitionv-all"] },
  d("partition-by", [2, 2], "[f coll]", "Splits coll into runs of consecutive elements for which (f x) is the same.", [["(partition-by odd? [1 3 2 4 5])", "[[1 3] [2 4] [5]]"]], { fn: (a) => partitionBy(a[0], a[1]), f2: partitionBy }),
  d("reverse", [1, 1], "[coll]", "The elements in reverse order, as a vector (characters for a string).", [["(reverse [1 2 3])", "[3 2 1]"]], { fn: (a) => reverse(a[0]), f1: reverse }),
  d(
    "sort",
    [1, 2],
    "[coll] [comp coll]",
    "The elements in ascending order (stable). comp may be <, >, compare or a function returning a number or a boolean.",
    [
      ["(sort [3 1 2])", "[1 2 3]"],
      ["(sort > [3 1 2])", "[3 2 1]"],
      ['(sort ["b" "a"])', '["a" "b"]'],
    ],
    { fn: sort, f1: (c) => sort([c]), f2: (f, c) => sort([f, c]) },
  ),
  d(
    "sort-by",
    [2, 3],
    "[keyfn coll] [keyfn comp coll]",
    "The elements ordered by (keyfn x) (stable); keyfn may be a keyword. (sort-by :price > rows) sorts descending; < and > also order strings.",
    [
      ["(sort-by :age [{:age 3} {:age 1}])", "[{:age 1} {:age 3}]"],
      ["(sort-by count > [[1] [1 2]])", "[[1 2] [1]]"],
    ],
    { fn: sortBy, f2: (k, c) => sortBy([k, c]) },
  ),
  d("group-by", [2, 2], "[f coll]", "A map from (f x) to the vector of elements with that key, in order; f may be a keyword.", [["(group-by odd? [1 2 3])", "{true [1 3] false [2]}"]], { fn: (a) => groupBy(a[0], a[1]), f2: groupBy }),
  d("frequencies", [1, 1], "[coll]", "A map from each distinct element to the number of times it occurs.", [["(frequencies [:a :b :a])", "{:a 2 :b 1}"]], { fn: (a) => frequencies(a[0]), f1: frequencies }),
  d(
    "some",
    [2, 2],
    "[pred coll]",
    "The first truthy (pred x), or nil. A set as pred finds the first member: (some #{:a} xs).",
    [
      ["(some even? [1 2 3])", "true"],
      ['(some #{"b"} ["a" "b"])', '"b"'],
    ],
    { fn: (a) => some(a[0], a[1]), f2: some },
  ),
  d("every?", [2, 2], "[pred coll]", "True if pred is truthy for every element (true for an empty collection).", [["(every? pos? [1 2])", "true"]], { fn: (a) => every("every?", a[0], a[1]), f2: (p, c) => every("every?", p, c) }),
  d("not-any?", [2, 2], "[pred coll]", "True if pred is falsy for every element.", [["(not-any? neg? [1 2])", "true"]], { fn: (a) => some(a[0], a[1]) === null, f2: (p, c) => some(p, c) === null }),
  d("not-every?", [2, 2], "[pred coll]", "True if pred is falsy for at least one element.", [["(not-every? pos? [1 -2])", "true"]], {
    fn: (a) => !every("not-every?", a[0], a[1]),
    f2: (p, c) => !every("not-every?", p, c),
  }),
  d("pluck", [2, 2], "[key coll]", "(map key coll) over maps; keyword and string keys fall back to each other.", [['(pluck :id [{:id 1} {"id" 2}])', "[1 2]"]], {
    fn: (a) => pluck(a[0], a[1]),
    f2: pluck,
  }),
  d("pairs", [1, 1], "[coll]", "Every pair [a b], a before b: (combinations coll 2).", [["(pairs [1 2 3])", "[[1 2] [1 3] [2 3]]"]], { fn: (a) => combinations(a[0], 2), f1: (c) => combinations(c, 2) }),
  d("combinations", [2, 2], "[coll k]", "Every choice of k elements, in order, as vectors.", [["(combinations [1 2 3] 2)", "[[1 2] [1 3] [2 3]]"], ["(combinations [1 2] 0)", "[[]]"]], {
    fn: (a) => combinations(a[0], a[1]),
    f2: combinations,
  }),
  d("zip", [1, Infinity], "[coll & colls]", "Vectors of the elements at each position, up to the shortest coll.", [["(zip [1 2 3] [:a :b])", "[[1 :a] [2 :b]]"]], { fn: zip }),
  d("doall", [1, 2], "[coll] [n coll]", "Returns coll (sequences are already eager; kept for Clojure habits).", [["(doall (map inc [1]))", "[2]"]], { fn: (a) => a[a.length - 1], f1: (c) => c }),
  d("dorun", [1, 2], "[coll] [n coll]", "Returns nil (sequences are already eager; kept for Clojure habits).", [["(dorun (map inc [1]))", "nil"]], { fn: () => null, f1: () => null }),
  d("run!", [2, 2], "[f coll]", "Calls f on each element for its side effects (e.g. println); returns nil.", [["(run! println [1 2])", "nil"]], { fn: (a) => runBang(a[0], a[1]), f2: runBang }),
];
