// pmap and pcalls. Evaluation itself is single-threaded; what runs in parallel is the tool
// calls. In a suspendable program each branch runs until it waits on a tool, then the next one
// starts, so the calls of all branches are in flight together; the branches go on in the order
// their results come in (so what they print may interleave), and the results keep their order.
import { call1, callAsync, callValue } from "../fn.js";
import { charge, checkCollectionSize, run } from "../runtime.js";
import { seqArray } from "../seq.js";
import { after, isPending, type Maybe } from "../suspend.js";
import { Fn, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, expectFn } from "./args.js";
import type { BuiltinDef } from "./registry.js";
import { typeErr } from "../errors.js";

interface Branches {
  n: number;
  sync: (i: number) => Value;
  start: (i: number) => Maybe;
}

function pmapBranches(args: Value[]): Branches {
  const f = expectFn("pmap", args[0]);
  const colls = args.slice(1).map((c) => seqArray(c, "pmap"));
  const n = Math.min(...colls.map((c) => c.length));
  charge(n);
  checkCollectionSize(n);
  const argsOf = (i: number): Value[] => colls.map((c) => c[i]);
  if (colls.length === 1) {
    const xs = colls[0];
    return { n, sync: (i) => call1(f, xs[i]), start: (i) => callAsync(f, [xs[i]], undefined) };
  }
  return { n, sync: (i) => callValue(f, argsOf(i)), start: (i) => callAsync(f, argsOf(i), undefined) };
}

function pcallsBranches(args: Value[]): Branches {
  args.forEach((f, i) => {
    if (!(f instanceof Fn)) throw typeErr(`pcalls expects functions of no arguments, argument ${i + 1} is ${describe(f)}`);
  });
  charge(args.length);
  return { n: args.length, sync: (i) => (args[i] as Fn).call([]), start: (i) => callAsync(args[i], [], undefined) };
}

function inOrder(b: Branches): Value {
  const out = new Array<Value>(b.n);
  for (let i = 0; i < b.n; i++) out[i] = b.sync(i);
  return Vec.fromArray(out);
}

/**
 * Starts every branch before waiting for any: a branch that waits lets the next one start. All
 * branches settle before pmap goes on; the first failing branch (in order) is its error.
 */
function together(b: Branches): Maybe {
  const r = run;
  const depth = r.depth;
  const out = new Array<Value>(b.n);
  const waiting: Array<Promise<Value>> = [];
  let failed: { e: unknown } | null = null;
  for (let i = 0; i < b.n && failed === null; i++) {
    let v: Maybe;
    try {
      v = b.start(i);
    } catch (e) {
      failed = { e };
      break;
    }
    if (isPending(v)) {
      r.depth = depth;
      waiting.push(
        after(v, (x) => {
          out[i] = x;
          return null;
        }),
      );
    } else {
      out[i] = v;
    }
  }
  if (waiting.length === 0) {
    if (failed !== null) throw failed.e;
    return Vec.fromArray(out);
  }
  const sync = failed;
  return after(Promise.allSettled(waiting), (settled) => {
    const bad = settled.find((s) => s.status === "rejected");
    if (bad !== undefined) throw bad.reason;
    if (sync !== null) throw sync.e;
    return Vec.fromArray(out);
  });
}

export const PARALLEL: BuiltinDef[] = [
  {
    name: "pmap",
    area: "parallel",
    arity: [2, Infinity],
    params: "[f coll & colls]",
    doc: "map whose elements' tool calls run concurrently; results keep their order.",
    examples: [["(pmap inc [1 2 3])", "[2 3 4]"]],
    fn: (args) => inOrder(pmapBranches(args)),
    suspendable: (args) => together(pmapBranches(args)),
  },
  {
    name: "pcalls",
    area: "parallel",
    arity: [0, Infinity],
    params: "[& thunks]",
    doc: "Calls the thunks, their tool calls concurrently; a vector of their results.",
    examples: [["(pcalls (fn [] 1) (fn [] 2))", "[1 2]"]],
    fn: (args) => inOrder(pcallsBranches(args)),
    suspendable: (args) => together(pcallsBranches(args)),
  },
];
