// Aggregates over collections: sums and averages, picking the item with the largest or
// smallest key, and de-duplicating by key. Following the reference, the *-by forms take a
// key (keyword, string, vector path or function), skip items whose key is nil, and reject
// non-numeric values; averages of nothing are nil and sums of nothing are 0.
// max-by/min-by take a collection, while Clojure's max-key/min-key take the items as
// arguments; each one's errors point to the other, since they are easily confused.
import { compare, equals, hashValue } from "../equality.js";
import { clipped } from "../cuts.js";
import { LispError, typeErr } from "../errors.js";
import { call1 } from "../fn.js";
import { lookup } from "../lookup.js";
import { builtFrom, charge, runMarks } from "../runtime.js";
import { isSeqable, seqArray } from "../seq.js";
import { Fn, isMap, isSet, Keyword, LFloat, mkFloat, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe } from "./args.js";
import type { BuiltinDef } from "./registry.js";

const MAX_INT = Number.MAX_SAFE_INTEGER;

/** How a key argument reads an item: a keyword or string key, a vector path, or a function. */
function keyAccessor(who: string, k: Value): (item: Value) => Value {
  if (k instanceof Keyword || typeof k === "string") return (item) => lookup(item, k, null);
  if (k instanceof Vec) {
    const path = k.toArray();
    return (item) => {
      let v = item;
      for (let i = 0; i < path.length && v !== null; i++) v = lookup(v, path[i], null);
      return v;
    };
  }
  if (k instanceof Fn || isMap(k) || isSet(k)) return (item) => call1(k, item);
  throw typeErr(`${who} expects a key (keyword, string, vector path) or a function first, got ${describe(k)}`, `e.g. (${who} :price items) or (${who} (fn [x] (:price x)) items)`);
}

/** The items of a collection argument, with a hint when the key and the collection were swapped. */
function items(who: string, coll: Value, key: Value): Value[] {
  if (isSeqable(coll)) return seqArray(coll, who);
  const swapped = (key instanceof Vec || isMap(key) || isSet(key)) && (coll instanceof Keyword || coll instanceof Fn || typeof coll === "string");
  throw typeErr(`${who} expects a collection as its last argument, got ${describe(coll)}`, swapped ? `check the argument order: the key comes first, e.g. (${who} :amount items)` : undefined);
}

/** Integer or float accumulation with the language's rules: any float makes a float, ints must stay exact. */
class NumSum {
  total = 0;
  count = 0;
  isFloat = false;
  /** A sum must stay an exact integer; a mean is a float whatever the running total. */
  constructor(private readonly exact: boolean) {}

  add(who: string, v: Value, context: () => string): void {
    let n: number;
    if (typeof v === "number") {
      n = v;
      if (!Number.isInteger(v)) this.isFloat = true;
    } else if (v instanceof LFloat) {
      n = v.v;
      this.isFloat = true;
    } else {
      throw typeErr(`${who} expects numbers, got ${describe(v)}${context()}`, typeof v === "string" ? "convert text first, e.g. (parse-double s) or (parse-long s)" : undefined);
    }
    this.total += n;
    this.count++;
    if (this.exact && !this.isFloat && (this.total > MAX_INT || this.total < -MAX_INT)) {
      throw new LispError("arithmetic_error", `integer overflow in ${who} (integers are limited to ±${MAX_INT})`, undefined, "convert to floats first, e.g. (double x)");
    }
  }

  sum(): Value {
    return this.isFloat ? mkFloat(this.total) : this.total;
  }

  avg(): Value {
    return this.count === 0 ? null : mkFloat(this.total / this.count);
  }
}

const noContext = (): string => "";
const mapContext = (): string => " (a map is a sequence of [key value] entries; use (vals m))";

function numbers(who: string, coll: Value, exact: boolean): NumSum {
  if (!isSeqable(coll)) throw typeErr(`${who} expects a collection of numbers, got ${describe(coll)}`, typeof coll === "number" || coll instanceof LFloat ? "to add numbers given as arguments use (+ a b ...)" : undefined);
  const xs = seqArray(coll, who);
  charge(xs.length);
  const acc = new NumSum(exact);
  const context = isMap(coll) ? mapContext : noContext;
  for (const x of xs) {
    if (x === null) continue;
    acc.add(who, x, context);
  }
  return acc;
}

function numbersBy(who: string, key: Value, coll: Value, exact: boolean): Value {
  const get = keyAccessor(who, key);
  const xs = items(who, coll, key);
  charge(xs.length);
  const acc = new NumSum(exact);
  // What a function key returned, kept when the run follows hidden values: the result is computed from it.
  const got: Value[] | null = key instanceof Fn && runMarks() !== null ? [] : null;
  for (const x of xs) {
    const v = get(x);
    if (v === null) continue;
    got?.push(v);
    acc.add(who, v, () => ` as the key of ${describe(x)}`);
  }
  const r = exact ? acc.sum() : acc.avg();
  return got === null ? r : builtFrom(Vec.fromArray(got), r);
}

function median(coll: Value): Value {
  const acc: number[] = [];
  let isFloat = false;
  const xs = seqArray(coll, "median");
  charge(xs.length);
  for (const x of xs) {
    if (x === null) continue;
    if (typeof x === "number") {
      if (!Number.isInteger(x)) isFloat = true;
      acc.push(x);
    } else if (x instanceof LFloat) {
      isFloat = true;
      acc.push(x.v);
    } else {
      throw typeErr(`median expects numbers, got ${describe(x)}`);
    }
  }
  if (acc.length === 0) return null;
  acc.sort((a, b) => a - b);
  const mid = acc.length >> 1;
  if (acc.length % 2 === 1) return isFloat ? mkFloat(acc[mid]) : acc[mid];
  return mkFloat((acc[mid - 1] + acc[mid]) / 2);
}

/** compare, with its type error naming the builtin that compared. */
function compareKeys(who: string, a: Value, b: Value): number {
  try {
    return compare(a, b);
  } catch (e) {
    // compare only ever raises a type error for unorderable values; no limit error can pass here.
    if (e instanceof LispError && e.kind === "type_error") throw typeErr(`${who}: ${e.message}`, "the keys must all be numbers or all strings; convert them in a key function");
    throw e;
  }
}

/** The item whose key is largest (sign 1) or smallest (sign -1); nil keys are skipped, ties keep the first. */
function extremeBy(who: "max-by" | "min-by", sign: 1 | -1, args: Value[]): Value {
  if (args.length > 2) {
    const other = who === "max-by" ? "max-key" : "min-key";
    throw new LispError("arity_error", `${who} expects 2 arguments (a key and a collection), got ${args.length}`, undefined, `to compare values given as separate arguments use (${other} f x y ...); ${who} is (${who} f coll)`);
  }
  const [key, coll] = args;
  const get = keyAccessor(who, key);
  const xs = items(who, coll, key);
  charge(xs.length);
  let best: Value = null;
  let bestKey: Value = null;
  let found = false;
  for (const x of xs) {
    const k = get(x);
    if (k === null) continue;
    if (!found || sign * compareKeys(who, k, bestKey) > 0) {
      best = x;
      bestKey = k;
      found = true;
    }
  }
  return best;
}

/** Clojure's max-key/min-key: the argument with the largest/smallest (f x); ties keep the last. */
function extremeKey(who: "max-key" | "min-key", sign: 1 | -1, args: Value[]): Value {
  const other = who === "max-key" ? "max-by" : "min-by";
  const f = args[0];
  if (args.length === 1) {
    throw new LispError("arity_error", `${who} expects a function and at least one value, got only the function`, undefined, `(apply ${who} f coll) fails on an empty collection; (${other} f coll) returns nil for it`);
  }
  const get = keyAccessor(who, f);
  if (args.length === 2 && (args[1] instanceof Vec || isSet(args[1])) && (f instanceof Keyword || typeof f === "string")) {
    throw typeErr(
      `${who} compares its arguments, but got a single collection ${describe(args[1])}`,
      `to pick from a collection use (${other} ${f instanceof Keyword ? ":" + clipped(f.name, 40) : JSON.stringify(clipped(f, 40))} coll) or (apply ${who} f coll)`,
    );
  }
  charge(args.length - 1);
  let best: Value = null;
  let bestKey: Value = null;
  for (let i = 1; i < args.length; i++) {
    const x = args[i];
    const k = get(x);
    if (k === null) {
      throw typeErr(`${who}: the key of ${describe(x)} is nil`, `(${other} f coll) skips items whose key is nil`);
    }
    if (i === 1 || sign * compareKeys(who, k, bestKey) >= 0) {
      best = x;
      bestKey = k;
    }
  }
  return best;
}

function distinctBy(key: Value, coll: Value): Value {
  const get = keyAccessor("distinct-by", key);
  const xs = items("distinct-by", coll, key);
  charge(xs.length);
  const seen = new Map<number, Value[]>();
  const out: Value[] = [];
  for (const x of xs) {
    const k = get(x);
    const h = hashValue(k);
    const bucket = seen.get(h);
    if (bucket === undefined) seen.set(h, [k]);
    else if (bucket.some((y) => equals(k, y))) continue;
    else bucket.push(k);
    out.push(x);
  }
  return Vec.fromArray(out);
}

// Shared docs name each builtin they describe: the reference lists builtins with one doc on one line.
const TOTALS_DOC = "sum, avg (a float) or median of the numbers in coll, nils skipped; when empty, sum is 0 and the others nil.";
const EXTREME_BY_DOC = "The item with the largest (max-by) or smallest (min-by) key, first on ties, nil keys skipped; nil when empty.";

export const AGGREGATES: BuiltinDef[] = [
  {
    name: "sum",
    area: "aggregates",
    arity: [1, 1],
    params: "[coll]",
    doc: TOTALS_DOC,
    examples: [
      ["(sum [1 2 3])", "6"],
      ["(sum [1 2.5])", "3.5"],
      ["(sum [])", "0"],
    ],
    fn: (a) => numbers("sum", a[0], true).sum(),
    f1: (c) => numbers("sum", c, true).sum(),
  },
  {
    name: "avg",
    area: "aggregates",
    arity: [1, 1],
    params: "[coll]",
    doc: TOTALS_DOC,
    examples: [
      ["(avg [1 2 3 4])", "2.5"],
      ["(avg [])", "nil"],
    ],
    fn: (a) => numbers("avg", a[0], false).avg(),
    f1: (c) => numbers("avg", c, false).avg(),
  },
  {
    name: "median",
    area: "aggregates",
    arity: [1, 1],
    params: "[coll]",
    doc: TOTALS_DOC,
    examples: [
      ["(median [3 1 2])", "2"],
      ["(median [4 1 3 2])", "2.5"],
    ],
    fn: (a) => median(a[0]),
    f1: median,
  },
  {
    name: "sum-by",
    area: "aggregates",
    arity: [2, 2],
    params: "[key coll]",
    doc: "Sum of (key item) over coll, nils skipped; key is a keyword, string, path vector or function.",
    examples: [
      ["(sum-by :amount [{:amount 10} {:amount nil} {:amount 5}])", "15"],
      ['(sum-by [:price :net] [{:price {:net 2}} {:price {:net 3}}])', "5"],
    ],
    fn: (a) => numbersBy("sum-by", a[0], a[1], true),
    f2: (k, c) => numbersBy("sum-by", k, c, true),
  },
  {
    name: "avg-by",
    area: "aggregates",
    arity: [2, 2],
    params: "[key coll]",
    doc: "Mean of (key item) over coll as a float, nils skipped; nil when none.",
    examples: [
      ["(avg-by :score [{:score 10} {:score nil} {:score 20}])", "15.0"],
      ["(avg-by :score [])", "nil"],
    ],
    fn: (a) => numbersBy("avg-by", a[0], a[1], false),
    f2: (k, c) => numbersBy("avg-by", k, c, false),
  },
  {
    name: "max-by",
    area: "aggregates",
    arity: [2, Infinity],
    params: "[key coll]",
    doc: EXTREME_BY_DOC,
    examples: [
      ["(max-by :age [{:age 30} {:age 45} {:age nil}])", "{:age 45}"],
      ["(max-by :age [])", "nil"],
    ],
    fn: (a) => extremeBy("max-by", 1, a),
    f2: (k, c) => extremeBy("max-by", 1, [k, c]),
  },
  {
    name: "min-by",
    area: "aggregates",
    arity: [2, Infinity],
    params: "[key coll]",
    doc: EXTREME_BY_DOC,
    examples: [["(min-by :price [{:price nil} {:price 10} {:price 5}])", "{:price 5}"]],
    fn: (a) => extremeBy("min-by", -1, a),
    f2: (k, c) => extremeBy("min-by", -1, [k, c]),
  },
  {
    name: "max-key",
    area: "aggregates",
    arity: [1, Infinity],
    params: "[f x & more]",
    doc: "The argument x with the largest (f x) (last one on ties). For a collection use (apply max-key f coll) or (max-by f coll).",
    examples: [
      ['(max-key count "a" "abc" "ab")', '"abc"'],
      ["(apply max-key :n [{:n 1} {:n 3}])", "{:n 3}"],
    ],
    fn: (a) => extremeKey("max-key", 1, a),
  },
  {
    name: "min-key",
    area: "aggregates",
    arity: [1, Infinity],
    params: "[f x & more]",
    doc: "The argument x with the smallest (f x) (last one on ties). For a collection use (apply min-key f coll) or (min-by f coll).",
    examples: [['(min-key count "abc" "a" "ab")', '"a"']],
    fn: (a) => extremeKey("min-key", -1, a),
  },
  {
    name: "distinct-by",
    area: "aggregates",
    arity: [2, 2],
    params: "[key coll]",
    doc: "The first item of coll per key, in order.",
    examples: [["(distinct-by :type [{:type 1 :v :a} {:type 2 :v :b} {:type 1 :v :c}])", "[{:type 1 :v :a} {:type 2 :v :b}]"]],
    fn: (a) => distinctBy(a[0], a[1]),
    f2: distinctBy,
  },
];
