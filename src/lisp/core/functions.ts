// Higher-order functions: building functions out of functions (comp, partial, juxt, ...),
// calling with spread arguments (apply), caching (memoize), and the predicate combinators
// all-of / any-of / none-of. Functions made here are NativeFns; they call whatever they
// wrap through callValue, so keywords, maps, sets and vectors work wherever a fn does.
import { equals, hashValue } from "../equality.js";
import { LispError, typeErr } from "../errors.js";
import type { Origin } from "../marks.js";
import { call1, call2, callValue, NativeFn } from "../fn.js";
import { printSample } from "../printer.js";
import { charge, recalled, stored } from "../runtime.js";
import { isSeqable, seqArray } from "../seq.js";
import { truthy, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, isCallable } from "./args.js";
import type { BuiltinDef } from "./registry.js";
import { composeTransducers, isTransducer } from "./transducers.js";


/** Checks that argument `pos` (1-based) of `who` can be called, before it is wrapped. */
export function expectCallable(who: string, x: Value, pos?: number): Value {
  if (isCallable(x)) return x;
  const where = pos === undefined ? "" : ` (argument ${pos})`;
  throw typeErr(
    `${who} expects a function${where}, got ${describe(x)}`,
    typeof x === "string" ? "to look up a string key, use (fn [m] (get m \"key\")) or a keyword" : isSeqable(x) ? "check the argument order: the functions come first" : undefined,
  );
}

/** Calls f with an argument array, using the one- and two-argument fast paths. */
function callN(f: Value, args: Value[]): Value {
  switch (args.length) {
    case 1:
      return call1(f, args[0]);
    case 2:
      return call2(f, args[0], args[1]);
    default:
      return callValue(f, args);
  }
}

const identityFn = (x: Value): Value => x;

function comp(fs: Value[]): Value {
  // Transducers compose into a transducer (applied left to right in data flow).
  if (fs.length > 0 && fs.some(isTransducer)) return composeTransducers(fs);
  fs.forEach((f, i) => expectCallable("comp", f, i + 1));
  if (fs.length === 0) return new NativeFn("identity", (args) => (args.length === 1 ? args[0] : identityArity(args.length)));
  if (fs.length === 1) return fs[0];
  const last = fs.length - 1;
  return new NativeFn("comp", (args) => {
    let v = callN(fs[last], args);
    for (let i = last - 1; i >= 0; i--) v = call1(fs[i], v);
    return v;
  });
}

function identityArity(n: number): never {
  throw new LispError("arity_error", `identity expects 1 argument, got ${n}`);
}

function partial(args: Value[]): Value {
  const f = expectCallable("partial", args[0], 1);
  if (args.length === 1) return f;
  const bound = args.slice(1);
  return new NativeFn("partial", (more) => callN(f, more.length === 0 ? bound : bound.concat(more)));
}

function juxt(fs: Value[]): Value {
  fs.forEach((f, i) => expectCallable("juxt", f, i + 1));
  return new NativeFn("juxt", (args) => {
    charge(fs.length);
    const out = new Array<Value>(fs.length);
    for (let i = 0; i < fs.length; i++) out[i] = callN(fs[i], args);
    return Vec.fromArray(out);
  });
}

function complement(f: Value): Value {
  expectCallable("complement", f);
  return new NativeFn("complement", (args) => !truthy(callN(f, args)));
}

function constantly(x: Value): Value {
  return new NativeFn("constantly", () => x);
}

function fnil(args: Value[]): Value {
  const f = expectCallable("fnil", args[0], 1);
  const defaults = args.slice(1);
  return new NativeFn("fnil", (callArgs) => {
    let patched = callArgs;
    for (let i = 0; i < defaults.length && i < callArgs.length; i++) {
      if (callArgs[i] === null) {
        if (patched === callArgs) patched = callArgs.slice();
        patched[i] = defaults[i];
      }
    }
    return callN(f, patched);
  });
}

// Like Clojure's some-fn: the first truthy (p x) over every argument and predicate, else the
// last falsy result (nil when called with no arguments).
function someFn(preds: Value[]): Value {
  preds.forEach((p, i) => expectCallable("some-fn", p, i + 1));
  return new NativeFn("some-fn", (args) => {
    let last: Value = null;
    for (const x of args) {
      for (const p of preds) {
        last = call1(p, x);
        if (truthy(last)) return last;
      }
    }
    return last;
  });
}

function everyPred(preds: Value[]): Value {
  preds.forEach((p, i) => expectCallable("every-pred", p, i + 1));
  return new NativeFn("every-pred", (args) => {
    for (const x of args) for (const p of preds) if (!truthy(call1(p, x))) return false;
    return true;
  });
}

// The reference's predicate combinators: each returns a predicate that is true/false.
// With no predicates all-of and none-of accept everything and any-of accepts nothing.
type Combine = "all-of" | "any-of" | "none-of";

function combinator(name: Combine, preds: Value[]): Value {
  preds.forEach((p, i) => expectCallable(name, p, i + 1));
  // all-of stops at the first false; any-of and none-of at the first true.
  const stopOn = name !== "all-of";
  const whenStopped = name === "any-of";
  return new NativeFn(name, (args) => {
    for (let i = 0; i < preds.length; i++) {
      if (truthy(callN(preds[i], args)) === stopOn) return whenStopped;
    }
    return !whenStopped;
  });
}

function apply(args: Value[]): Value {
  const f = args[0];
  if (!isCallable(f)) {
    throw new LispError(
      "not_callable",
      `apply expects a function first, got ${describe(f)}`,
      undefined,
      isSeqable(f) ? "the function comes first: (apply f coll), e.g. (apply + [1 2 3])" : undefined,
    );
  }
  const last = args[args.length - 1];
  if (!isSeqable(last)) {
    throw typeErr(`apply expects a collection as its last argument, got ${describe(last)}`, "the last argument is spread into the call: (apply f x [y z]) calls (f x y z)");
  }
  const spread = seqArray(last, "apply");
  charge(spread.length);
  const callArgs = args.length === 2 ? spread : args.slice(1, -1).concat(spread);
  return callN(f, callArgs);
}

// A memoized function keeps at most this many results; past it the cache starts over, so a
// long-running memoized function cannot grow memory without bound.
const MEMO_CAP = 10_000;

interface MemoEntry {
  args: Value[];
  value: Value;
  /** The mark of hidden context the value held when it was kept. */
  hidden: Origin | undefined;
}

function argsHash(args: Value[]): number {
  let h = args.length;
  for (let i = 0; i < args.length; i++) h = (Math.imul(31, h) + hashValue(args[i])) | 0;
  return h;
}

function sameArgs(a: Value[], b: Value[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!equals(a[i], b[i])) return false;
  return true;
}

function memoize(f: Value): Value {
  expectCallable("memoize", f);
  const buckets = new Map<number, MemoEntry[]>();
  let size = 0;
  const memo: NativeFn = new NativeFn("memoize", (args) => {
    const h = argsHash(args);
    const bucket = buckets.get(h);
    if (bucket !== undefined) {
      // Read back in a later evaluation too, whose marks never saw it kept.
      for (const e of bucket) if (sameArgs(e.args, args)) return e.hidden === undefined ? e.value : recalled(memo, e.value, e.hidden);
    }
    // Errors propagate uncached: the next call with the same arguments tries again.
    const value = callN(f, args);
    if (size >= MEMO_CAP) {
      buckets.clear();
      size = 0;
    }
    // A later call (in a later turn too) answers from the cache: a hidden value kept there is the function's.
    const entry: MemoEntry = { args: args.slice(), value, hidden: stored(memo, value) };
    const b = buckets.get(h);
    if (b === undefined) buckets.set(h, [entry]);
    else b.push(entry);
    size++;
    return value;
    // Each answer keeps its own mark (stored, recalled): a hidden one cached marks none of the others.
  }, undefined, true);
  return memo;
}

function noMatch(form: Value, value: Value): never {
  const name = typeof form === "string" ? form : "condp";
  const shown = printSample(value, { maxChars: 60, maxItems: 10, note: false }).text;
  throw new LispError(
    "value_error",
    `${name}: no clause matches ${shown}`,
    undefined,
    `add a default result as the last argument of ${name}, e.g. (${name} = x 1 :one :other)`,
  );
}

/** One doc for the three predicate combinators: the reference lists them on one line. */
const COMBINED_DOC = "A predicate: all, some or none of preds hold for the item; with no preds, all-of and none-of accept all, any-of none.";

export const FUNCTIONS: BuiltinDef[] = [
  {
    name: "identity",
    area: "functions",
    arity: [1, 1],
    params: "[x]",
    doc: "Returns x unchanged; handy as a default function, e.g. (filter identity xs) drops nil and false.",
    examples: [
      ["(identity 42)", "42"],
      ["(filter identity [1 nil 2 false])", "[1 2]"],
    ],
    fn: (a) => a[0],
    f1: identityFn,
  },
  {
    name: "constantly",
    area: "functions",
    arity: [1, 1],
    params: "[x]",
    doc: "A function that takes any arguments and always returns x.",
    examples: [["((constantly 7) 1 2 3)", "7"]],
    fn: (a) => constantly(a[0]),
    f1: constantly,
  },
  {
    name: "comp",
    area: "functions",
    arity: [0, Infinity],
    params: "[& fs]",
    doc: "Composes functions right to left: ((comp f g) x) is (f (g x)); (comp) is identity. Of transducers, a transducer: (comp (filter odd?) (map inc)).",
    examples: [
      ["((comp inc inc) 1)", "3"],
      ["((comp str :name) {:name \"Ann\"})", '"Ann"'],
      ["((comp) 5)", "5"],
    ],
    fn: comp,
  },
  {
    name: "partial",
    area: "functions",
    arity: [1, Infinity],
    params: "[f & args]",
    doc: "f with its first arguments fixed: ((partial + 10) 1 2) is (+ 10 1 2).",
    examples: [
      ["((partial + 10) 1 2)", "13"],
      ["(map (partial * 2) [1 2 3])", "[2 4 6]"],
    ],
    fn: partial,
  },
  {
    name: "juxt",
    area: "functions",
    arity: [0, Infinity],
    params: "[& fs]",
    doc: "A function returning the vector of every f applied to the arguments: ((juxt :a :b) m) is [(:a m) (:b m)].",
    examples: [
      ["((juxt :x :y) {:x 1 :y 2})", "[1 2]"],
      ["((juxt inc dec) 5)", "[6 4]"],
    ],
    fn: juxt,
  },
  {
    name: "complement",
    area: "functions",
    arity: [1, 1],
    params: "[f]",
    doc: "A predicate returning the boolean opposite of f.",
    examples: [["(filter (complement nil?) [1 nil 2])", "[1 2]"]],
    fn: (a) => complement(a[0]),
    f1: complement,
  },
  {
    name: "fnil",
    area: "functions",
    arity: [2, 4],
    params: "[f x] [f x y] [f x y z]",
    doc: "f with nil arguments replaced by defaults (first argument by x, second by y, ...); (update m :n (fnil inc 0)) counts from 0.",
    examples: [
      ["((fnil inc 0) nil)", "1"],
      ["(update {} :n (fnil + 0) 5)", "{:n 5}"],
    ],
    fn: fnil,
  },
  {
    name: "some-fn",
    area: "functions",
    arity: [1, Infinity],
    params: "[p & ps]",
    doc: "A function returning the first truthy result of any predicate on any argument.",
    examples: [["((some-fn :a :b) {:b 2})", "2"]],
    fn: someFn,
  },
  {
    name: "every-pred",
    area: "functions",
    arity: [1, Infinity],
    params: "[p & ps]",
    doc: "A predicate that is true when every predicate holds for every argument.",
    examples: [["(filter (every-pred pos? even?) [-2 1 2 4])", "[2 4]"]],
    fn: everyPred,
  },
  {
    name: "apply",
    area: "functions",
    arity: [2, Infinity],
    params: "[f coll] [f x & args+coll]",
    doc: "Calls f with the elements of the last argument spread as arguments: (apply + 1 [2 3]) is (+ 1 2 3).",
    examples: [
      ["(apply + [1 2 3])", "6"],
      ["(apply max 1 [5 3])", "5"],
      ["(apply str [\"a\" \"b\"])", '"ab"'],
    ],
    fn: apply,
  },
  {
    name: "memoize",
    area: "functions",
    arity: [1, 1],
    params: "[f]",
    doc: "f with its results cached by argument values (the cache is bounded); only for functions without side effects.",
    examples: [["(let [sq (memoize (fn [x] (* x x)))] [(sq 4) (sq 4)])", "[16 16]"]],
    fn: (a) => memoize(a[0]),
    f1: memoize,
  },
  {
    name: "all-of",
    area: "functions",
    arity: [0, Infinity],
    params: "[& preds]",
    doc: COMBINED_DOC,
    examples: [["(filter (all-of pos? even?) [1 2 3 4])", "[2 4]"]],
    fn: (preds) => combinator("all-of", preds),
  },
  {
    name: "any-of",
    area: "functions",
    arity: [0, Infinity],
    params: "[& preds]",
    doc: COMBINED_DOC,
    examples: [["(filter (any-of neg? even?) [-1 1 2])", "[-1 2]"]],
    fn: (preds) => combinator("any-of", preds),
  },
  {
    name: "none-of",
    area: "functions",
    arity: [0, Infinity],
    params: "[& preds]",
    doc: COMBINED_DOC,
    examples: [["(filter (none-of neg? even?) [-1 1 2 3])", "[1 3]"]],
    fn: (preds) => combinator("none-of", preds),
  },
  {
    name: "%no-match",
    area: "functions",
    arity: [2, 2],
    params: "[form value]",
    doc: "Internal: raised by condp when no clause matches and there is no default.",
    examples: [["(condp = 3 1 :one 2 :two)", "value_error: condp: no clause matches 3"]],
    fn: (a) => noMatch(a[0], a[1]),
    f2: noMatch,
  },
];
