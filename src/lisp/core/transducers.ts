// Transducers, eagerly. `(map f)`, `(filter p)`, ... with no collection make a Transducer: a
// transformation of reducing steps, applied by into, transduce, sequence and eduction. A step
// may return a Reduced to stop early (take, take-while, or the reducing function itself), as
// `reduce` honours `reduced`. Every element that enters a pipeline is charged as fuel once;
// elements a step creates (mapcat, cat, interpose) are charged as they are made.
import { LispError, typeErr } from "../errors.js";
import { equals, hashValue } from "../equality.js";
import { Closure, call1, call2, callValue } from "../fn.js";
import { charge, checkCollectionSize, tick, took } from "../runtime.js";
import { isSeqable } from "../seq.js";
import { Fn, Reduced, truthy, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, expectFn, items, ordered } from "./args.js";
import { Builtin, type BuiltinDef } from "./registry.js";

/** A reducing function as the pipeline sees it: a step, and a completion run once at the end. */
export interface Rf {
  step(acc: Value, x: Value): Value;
  done(acc: Value): Value;
  /** A step of one element from each of several collections: only map's and mapcat's take one. */
  stepMany?(acc: Value, xs: Value[]): Value;
}

type Xf = (rf: Rf) => Rf;

/** A transducer value: `(map inc)`, `(comp (filter odd?) (take 3))`. */
export class Transducer extends Fn {
  constructor(
    readonly name: string,
    readonly xf: Xf,
  ) {
    super();
  }
  call(): Value {
    throw typeErr(`(${this.name} ...) without a collection is a transducer: it is not called, it is given to into, transduce, sequence or eduction`, `e.g. (into [] (${this.name} ...) coll), or pass the collection: (${this.name} ... coll)`);
  }
}

const unwrap = (x: Value): Value => (x instanceof Reduced ? x.value : x);

/** The transformation of a transducer value (or of `cat`), or a type error naming `who`. */
export function xformOf(who: string, x: Value): Xf {
  if (x instanceof Transducer) return x.xf;
  if (isCat(x)) return catXf;
  throw typeErr(`${who} expects a transducer such as (map f) or (filter p), got ${describe(x)}`, "make one by calling map, filter, take, ... without the collection, and combine several with comp");
}

export function isTransducer(x: Value): boolean {
  return x instanceof Transducer || isCat(x);
}

/** Composes transducers left to right in data flow, as comp does: (comp (filter p) (map f)) filters first. */
export function composeTransducers(parts: Value[]): Transducer {
  const xfs = parts.map((p, i) => xformOf(`comp (argument ${i + 1})`, p));
  return new Transducer("comp", (rf) => {
    let r = rf;
    for (let i = xfs.length - 1; i >= 0; i--) r = xfs[i](r);
    return r;
  });
}

/** Runs xs through the pipeline into rf, starting from init; stops at a Reduced. */
function run(xf: Xf, rf: Rf, init: Value, xs: Value[]): Value {
  const r = xf(rf);
  charge(xs.length);
  let acc = init;
  for (let i = 0; i < xs.length; i++) {
    // Steps that call builtins charge nothing more: the clock is checked here.
    tick(i);
    acc = r.step(acc, xs[i]);
    if (acc instanceof Reduced) {
      acc = acc.value;
      break;
    }
  }
  return r.done(acc);
}

/** A reducing function that pushes every element onto out. */
function collecting(out: Value[]): Rf {
  return {
    step(acc, x) {
      out.push(x);
      checkCollectionSize(out.length);
      return acc;
    },
    done: (acc) => acc,
  };
}

/** The elements the pipeline produces from xs, in order. */
export function transformAll(who: string, xform: Value, xs: Value[]): Value[] {
  const out: Value[] = [];
  run(xformOf(who, xform), collecting(out), null, xs);
  return out;
}

/**
 * Clojure's (sequence xform coll & colls): the pipeline's first step takes the elements at each
 * position of the collections, up to the shortest, as map's and mapcat's transducers do.
 */
function transformMany(xform: Value, colls: Value[][]): Value[] {
  const out: Value[] = [];
  const r = xformOf("sequence", xform)(collecting(out));
  const many = r.stepMany;
  if (many === undefined) {
    throw new LispError("arity_error", `sequence over ${colls.length} collections gives its transducer one element from each at a time, and ${xform instanceof Transducer ? `(${xform.name} ...)` : "cat"} takes one element at a time`, undefined, "start the transducer with (map f) or (mapcat f), whose f takes one argument per collection");
  }
  let n = Infinity;
  for (const c of colls) n = Math.min(n, c.length);
  charge(n * colls.length);
  let acc: Value = null;
  for (let i = 0; i < n; i++) {
    tick(i);
    acc = many(
      acc,
      colls.map((c) => c[i]),
    );
    if (acc instanceof Reduced) break;
  }
  r.done(unwrap(acc));
  return out;
}

// ---- the transformations ----

const mapXf =
  (f: Value): Xf =>
  (rf) => ({ step: (a, x) => rf.step(a, call1(f, x)), stepMany: (a, xs) => rf.step(a, callValue(f, xs)), done: rf.done });

const filterXf =
  (p: Value, keep: boolean): Xf =>
  (rf) => ({ step: (a, x) => (truthy(call1(p, x)) === keep ? rf.step(a, x) : a), done: rf.done });

const keepXf =
  (f: Value, indexed: boolean): Xf =>
  (rf) => {
    let i = 0;
    return {
      step(a, x) {
        const r = indexed ? call2(f, i++, x) : call1(f, x);
        return r === null ? a : rf.step(a, r);
      },
      done: rf.done,
    };
  };

const mapIndexedXf =
  (f: Value): Xf =>
  (rf) => {
    let i = 0;
    return { step: (a, x) => rf.step(a, call2(f, i++, x)), done: rf.done };
  };

/** Steps every element of a collection into rf (mapcat and cat), stopping at a Reduced. */
function stepAll(who: string, rf: Rf, a: Value, coll: Value): Value {
  if (coll !== null && !isSeqable(coll)) throw typeErr(`${who}: expected a collection to concatenate, got ${describe(coll)}`, "wrap a single value in a vector, e.g. (fn [x] [x])");
  const xs = items(who, coll);
  charge(xs.length);
  // The characters of a string (a function's result) are pieces of it (of a hidden one, hidden).
  if (typeof coll === "string") for (const x of xs) took(coll, x);
  for (let i = 0; i < xs.length; i++) {
    a = rf.step(a, xs[i]);
    if (a instanceof Reduced) return a;
  }
  return a;
}

const mapcatXf =
  (f: Value): Xf =>
  (rf) => ({ step: (a, x) => stepAll("mapcat", rf, a, call1(f, x)), stepMany: (a, xs) => stepAll("mapcat", rf, a, callValue(f, xs)), done: rf.done });

const catXf: Xf = (rf) => ({ step: (a, x) => stepAll("cat", rf, a, x), done: rf.done });

const takeXf =
  (n: number): Xf =>
  (rf) => {
    let left = n;
    return {
      step(a, x) {
        const r = left > 0 ? rf.step(a, x) : a;
        left--;
        return left <= 0 && !(r instanceof Reduced) ? new Reduced(r) : r;
      },
      done: rf.done,
    };
  };

const dropXf =
  (n: number): Xf =>
  (rf) => {
    let left = n;
    return {
      step(a, x) {
        if (left > 0) {
          left--;
          return a;
        }
        return rf.step(a, x);
      },
      done: rf.done,
    };
  };

const takeNthXf =
  (n: number): Xf =>
  (rf) => {
    let i = 0;
    return { step: (a, x) => (i++ % n === 0 ? rf.step(a, x) : a), done: rf.done };
  };

const takeWhileXf =
  (p: Value): Xf =>
  (rf) => ({ step: (a, x) => (truthy(call1(p, x)) ? rf.step(a, x) : new Reduced(a)), done: rf.done });

const dropWhileXf =
  (p: Value): Xf =>
  (rf) => {
    let dropping = true;
    return {
      step(a, x) {
        if (dropping && truthy(call1(p, x))) return a;
        dropping = false;
        return rf.step(a, x);
      },
      done: rf.done,
    };
  };

const distinctXf: Xf = (rf) => {
  // Buckets by value hash, compared with value equality (1 and 1.0 differ, as in Clojure).
  const seen = new Map<number, Value[]>();
  return {
    step(a, x) {
      const h = hashValue(x);
      const bucket = seen.get(h);
      if (bucket === undefined) seen.set(h, [x]);
      else if (bucket.some((y) => equals(x, y))) return a;
      else bucket.push(x);
      return rf.step(a, x);
    },
    done: rf.done,
  };
};

const NOTHING: unique symbol = Symbol("nothing");

const dedupeXf: Xf = (rf) => {
  let prev: Value | typeof NOTHING = NOTHING;
  return {
    step(a, x) {
      if (prev !== NOTHING && equals(prev, x)) return a;
      prev = x;
      return rf.step(a, x);
    },
    done: rf.done,
  };
};

const interposeXf =
  (sep: Value): Xf =>
  (rf) => {
    let started = false;
    return {
      step(a, x) {
        if (started) {
          charge(1);
          a = rf.step(a, sep);
          if (a instanceof Reduced) return a;
        }
        started = true;
        return rf.step(a, x);
      },
      done: rf.done,
    };
  };

/** A completion that steps the unfinished last chunk first (partition-all, partition-by). */
function flushing(rf: Rf, take: () => Value[]): (a: Value) => Value {
  return (a) => {
    const rest = take();
    return rf.done(rest.length > 0 ? unwrap(rf.step(a, Vec.fromArray(rest))) : a);
  };
}

const partitionAllXf =
  (n: number): Xf =>
  (rf) => {
    let buf: Value[] = [];
    return {
      step(a, x) {
        buf.push(x);
        if (buf.length < n) return a;
        const chunk = Vec.fromArray(buf);
        buf = [];
        return rf.step(a, chunk);
      },
      done: flushing(rf, () => {
        const rest = buf;
        buf = [];
        return rest;
      }),
    };
  };

const partitionByXf =
  (f: Value): Xf =>
  (rf) => {
    let buf: Value[] = [];
    let key: Value | typeof NOTHING = NOTHING;
    return {
      step(a, x) {
        const k = call1(f, x);
        if (key === NOTHING || equals(key, k)) {
          key = k;
          buf.push(x);
          return a;
        }
        const chunk = Vec.fromArray(buf);
        buf = [x];
        key = k;
        return rf.step(a, chunk);
      },
      done: flushing(rf, () => {
        const rest = buf;
        buf = [];
        return rest;
      }),
    };
  };

function count(who: string, n: Value, min: number): number {
  if (typeof n !== "number" || !Number.isInteger(n)) throw typeErr(`${who} expects an integer count, got ${describe(n)}`);
  if (n < min) throw new LispError("value_error", `${who} expects a count of at least ${min}, got ${n}`);
  return n;
}

/**
 * The transducer arities of sequence functions: the argument count that makes a transducer
 * (without the collection), and how. The registry entries of these names accept that count too.
 */
export const TRANSDUCER_ARITIES: Readonly<Record<string, { args: number; make: (a: Value[]) => Xf }>> = {
  map: { args: 1, make: (a) => mapXf(expectFn("map", a[0])) },
  mapv: { args: 1, make: (a) => mapXf(expectFn("mapv", a[0])) },
  filter: { args: 1, make: (a) => filterXf(expectFn("filter", a[0]), true) },
  remove: { args: 1, make: (a) => filterXf(expectFn("remove", a[0]), false) },
  keep: { args: 1, make: (a) => keepXf(expectFn("keep", a[0]), false) },
  "keep-indexed": { args: 1, make: (a) => keepXf(expectFn("keep-indexed", a[0]), true) },
  "map-indexed": { args: 1, make: (a) => mapIndexedXf(expectFn("map-indexed", a[0])) },
  mapcat: { args: 1, make: (a) => mapcatXf(expectFn("mapcat", a[0])) },
  take: { args: 1, make: (a) => takeXf(count("take", a[0], 0)) },
  drop: { args: 1, make: (a) => dropXf(count("drop", a[0], 0)) },
  "take-nth": { args: 1, make: (a) => takeNthXf(count("take-nth", a[0], 1)) },
  "take-while": { args: 1, make: (a) => takeWhileXf(expectFn("take-while", a[0])) },
  "drop-while": { args: 1, make: (a) => dropWhileXf(expectFn("drop-while", a[0])) },
  distinct: { args: 0, make: () => distinctXf },
  dedupe: { args: 0, make: () => dedupeXf },
  interpose: { args: 1, make: (a) => interposeXf(a[0]) },
  "partition-all": { args: 1, make: (a) => partitionAllXf(count("partition-all", a[0], 1)) },
  "partition-by": { args: 1, make: (a) => partitionByXf(expectFn("partition-by", a[0])) },
};

/** Widens a sequence function's registry entry to its transducer arity. */
export function withTransducerArity(def: BuiltinDef): BuiltinDef {
  const t = Object.hasOwn(TRANSDUCER_ARITIES, def.name) ? TRANSDUCER_ARITIES[def.name] : undefined;
  if (t === undefined) return def;
  const { fn, f1 } = def;
  const make = (a: Value[]): Value => new Transducer(def.name, t.make(a));
  return {
    ...def,
    arity: [Math.min(def.arity[0], t.args), def.arity[1]],
    params: `${t.args === 0 ? "[]" : `[${def.params.replace(/^\[/, "").split(" ")[0]}]`} ${def.params}`,
    fn: (a) => (a.length === t.args ? make(a) : fn(a)),
    ...(t.args === 1 ? { f1: (x: Value) => make([x]) } : f1 ? { f1 } : {}),
  };
}

// ---- applying transducers ----

/** Whether a function can be called with one argument (a reducing function's completion). */
function takesOne(f: Value): boolean {
  if (f instanceof Builtin) return f.def.arity[0] <= 1 && f.def.arity[1] >= 1;
  if (f instanceof Closure) return f.t.fixed[1] !== undefined || (f.t.variadic !== null && f.t.variadic.required <= 1);
  return f instanceof CompletingFn;
}

function transduce(args: Value[]): Value {
  const xf = xformOf("transduce", args[0]);
  const f = expectFn("transduce", args[1]);
  const init = args.length === 4 ? args[2] : callValue(f, []);
  const xs = items("transduce", args[args.length - 1]);
  // Clojure completes with (f acc); a reducing function written with only [acc x] (which
  // Clojure would reject there) is completed as identity instead.
  const complete = takesOne(f);
  return run(xf, { step: (a, x) => call2(f, a, x), done: (a) => (complete ? call1(f, a) : a) }, init, xs);
}

function sequence(args: Value[]): Value {
  if (args.length === 1) return Vec.fromArray(ordered("sequence", args[0]));
  if (args.length > 2) return Vec.fromArray(transformMany(args[0], args.slice(1).map((c) => items("sequence", c))));
  return Vec.fromArray(transformAll("sequence", args[0], items("sequence", args[1])));
}

function eduction(args: Value[]): Value {
  const xform = args.length === 2 ? args[0] : composeTransducers(args.slice(0, -1));
  return Vec.fromArray(transformAll("eduction", xform, items("eduction", args[args.length - 1])));
}

/** (completing f) / (completing f cf): f with a completion step (identity by default). */
function completing(args: Value[]): Value {
  const f = expectFn("completing", args[0]);
  const cf = args.length === 2 ? expectFn("completing", args[1]) : null;
  return new CompletingFn(f, cf);
}

class CompletingFn extends Fn {
  readonly name = "completing";
  constructor(
    readonly f: Value,
    readonly cf: Value,
  ) {
    super();
  }
  call(args: Value[]): Value {
    if (args.length === 0) return callValue(this.f, []);
    if (args.length === 1) return this.cf === null ? args[0] : call1(this.cf, args[0]);
    return callValue(this.f, args);
  }
}

const d = (name: string, arity: readonly [number, number], params: string, doc: string, examples: ReadonlyArray<readonly [string, string]>, fn: (a: Value[]) => Value): BuiltinDef => ({
  name,
  area: "sequences",
  arity,
  params,
  doc,
  examples,
  fn,
});

const CAT_DEF: BuiltinDef = d("cat", [1, 1], "[rf]", "The transducer that concatenates collections: (into [] cat [[1] [2 3]]).", [["(into [] cat [[1 2] [3]])", "[1 2 3]"]], () => {
  throw typeErr("cat is a transducer: give it to into, transduce, sequence or eduction", "e.g. (into [] cat [[1] [2 3]]), or use (apply concat colls)");
});
// By name: a run with hidden context gives programs a marking wrapper of it (marks.ts), another def.
const isCat = (x: Value): boolean => x instanceof Builtin && x.name === CAT_DEF.name;

export const TRANSDUCERS: BuiltinDef[] = [
  d(
    "transduce",
    [3, 4],
    "[xform f coll] [xform f init coll]",
    "Reduces coll with f after the transducer xform; init defaults to (f). Eager.",
    [
      ["(transduce (map :x) + 0 [{:x 1} {:x 2}])", "3"],
      ["(transduce (comp (filter odd?) (map inc)) + [1 2 3])", "6"],
      ["(transduce (take 2) conj [] [5 6 7])", "[5 6]"],
    ],
    transduce,
  ),
  d("sequence", [1, Infinity], "[coll] [xform coll & colls]", "The elements of coll (after the transducer xform; several colls feed it in step), as a vector.", [["(sequence (comp (filter odd?) (map inc)) [1 2 3])", "[2 4]"], ["(sequence #{})", "[]"], ["(sequence (map +) [1 2] [3 4])", "[4 6]"]], sequence),
  d("eduction", [1, Infinity], "[xform* coll]", "The elements of coll after the transducers, as a vector (eager).", [["(eduction (filter even?) (map inc) [1 2 3 4])", "[3 5]"]], eduction),
  d("completing", [1, 2], "[f] [f cf]", "f with a completion step: identity, or cf.", [["(transduce (map inc) (completing conj) [] [1 2])", "[2 3]"]], completing),
  d("reduced", [1, 1], "[x]", "Wraps x so that reduce (and transduce) stop and return x.", [["(reduce (fn [acc x] (if (> acc 5) (reduced acc) (+ acc x))) [1 2 3 4 5])", "6"]], (a) => new Reduced(a[0])),
  d("reduced?", [1, 1], "[x]", "True if x was wrapped by reduced.", [["(reduced? (reduced 1))", "true"]], (a) => a[0] instanceof Reduced),
  d("unreduced", [1, 1], "[x]", "The value inside a reduced, or x itself.", [["(unreduced (reduced 1))", "1"], ["(unreduced 2)", "2"]], (a) => unwrap(a[0])),
  d("ensure-reduced", [1, 1], "[x]", "x wrapped by reduced unless it already is.", [["(unreduced (ensure-reduced 3))", "3"]], (a) => (a[0] instanceof Reduced ? a[0] : new Reduced(a[0]))),
  CAT_DEF,
];
