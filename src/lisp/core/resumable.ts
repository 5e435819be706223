// The hot builtins that call a function back (map, filter, reduce, ...), as a suspendable
// program calls them: the loop calls the function's suspendable body and, when one call waits
// on a tool, goes on from that element once the result is in. Any other builtin that calls
// back is run again from a log of its callbacks' results (suspend.ts), which costs a log entry
// per call and keeps every result until the builtin returns: for reduce's accumulators that is
// a lot. The charges are the synchronous versions' own, made once.
import { callAsync, callAsync1, callAsync2, Closure, NativeFn } from "../fn.js";
import { charge } from "../runtime.js";
import { after, isPending, syncCall, type Maybe } from "../suspend.js";
import { Reduced, truthy, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { items } from "./args.js";
import type { BuiltinDef } from "./registry.js";

/**
 * For each i from `from` below n: `call(i)`, then `step(i, result)`, which returns false to
 * stop; `done()` at the end. Waits for a pending result and goes on from the next index.
 */
function each(n: number, from: number, call: (i: number) => Maybe, step: (i: number, v: Value) => boolean, done: () => Value): Maybe {
  for (let i = from; i < n; i++) {
    const v = call(i);
    if (isPending(v)) {
      const at = i;
      return after(v, (x) => (step(at, x) ? each(n, at + 1, call, step, done) : done()));
    }
    if (!step(i, v)) break;
  }
  return done();
}

// Functions whose call can wait on a tool: closures and tools passed as values. Builtins,
// keywords, maps and sets cannot; composed functions (comp, partial) take the log's path.
const waits = (f: Value): boolean => f instanceof Closure || (f instanceof NativeFn && f.start !== undefined);

type Resumable = (args: Value[]) => Maybe;

function mapping(who: string): Resumable {
  return ([f, coll]) => {
    const xs = items(who, coll);
    charge(xs.length);
    return each(
      xs.length,
      0,
      (i) => callAsync1(f, xs[i]),
      (i, v) => {
        xs[i] = v;
        return true;
      },
      () => Vec.fromArray(xs),
    );
  };
}

/** Calls f on each element and keeps what `pick` makes of the element and f's result (undefined drops it). */
function selecting(who: string, pick: (x: Value, r: Value) => Value | undefined): Resumable {
  return ([f, coll]) => {
    const xs = items(who, coll);
    charge(xs.length);
    let j = 0;
    return each(
      xs.length,
      0,
      (i) => callAsync1(f, xs[i]),
      (i, r) => {
        const kept = pick(xs[i], r);
        if (kept !== undefined) xs[j++] = kept;
        return true;
      },
      () => {
        xs.length = j;
        return Vec.fromArray(xs);
      },
    );
  };
}

const filtering = (who: string, keep: boolean): Resumable => selecting(who, (x, r) => (truthy(r) === keep ? x : undefined));

const keeping = selecting("keep", (_, r) => (r === null ? undefined : r));

function reducing(args: Value[]): Maybe {
  const f = args[0];
  const xs = items("reduce", args[args.length - 1]);
  if (args.length === 2 && xs.length === 0) return callAsync(f, [], undefined);
  let acc = args.length === 3 ? args[1] : xs[0];
  charge(xs.length);
  return each(
    xs.length,
    args.length === 3 ? 0 : 1,
    (i) => callAsync2(f, acc, xs[i]),
    (_, v) => {
      acc = v;
      return !(typeof v === "object" && v instanceof Reduced);
    },
    () => (typeof acc === "object" && acc instanceof Reduced ? acc.value : acc),
  );
}

function searching(who: string, want: boolean): Resumable {
  return ([pred, coll]) => {
    const xs = items(who, coll);
    charge(xs.length);
    let found: Value = want ? null : true;
    return each(
      xs.length,
      0,
      (i) => callAsync1(pred, xs[i]),
      (_, r) => {
        if (truthy(r) !== want) return true;
        found = want ? r : false;
        return false;
      },
      () => found,
    );
  };
}

const runBang: Resumable = ([f, coll]) => {
  const xs = items("run!", coll);
  charge(xs.length);
  return each(
    xs.length,
    0,
    (i) => callAsync1(f, xs[i]),
    () => true,
    () => null,
  );
};

// How many arguments each covers (reduce: with or without init).
const RESUMABLE: Readonly<Record<string, { args: number; run: Resumable }>> = {
  map: { args: 2, run: mapping("map") },
  mapv: { args: 2, run: mapping("mapv") },
  filter: { args: 2, run: filtering("filter", true) },
  filterv: { args: 2, run: filtering("filterv", true) },
  remove: { args: 2, run: filtering("remove", false) },
  keep: { args: 2, run: keeping },
  reduce: { args: 3, run: reducing },
  some: { args: 2, run: searching("some", true) },
  "every?": { args: 2, run: searching("every?", false) },
  "run!": { args: 2, run: runBang },
};

/** Adds the resumable form to the builtins that have one, for the calls it covers. */
export function withResumable(def: BuiltinDef): BuiltinDef {
  const r = Object.hasOwn(RESUMABLE, def.name) ? RESUMABLE[def.name] : undefined;
  if (r === undefined) return def;
  const fn = def.fn;
  return {
    ...def,
    suspendable: (args) => {
      const covered = def.name === "reduce" ? args.length >= 2 : args.length === r.args;
      return covered && waits(args[0]) ? r.run(args) : syncCall(fn, args, undefined);
    },
  };
}
