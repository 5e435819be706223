// pmap and pcalls. Evaluation itself is single-threaded and deterministic; what runs in
// parallel is the tool calls. Each branch runs under its own branch id, so when several
// branches wait on tools, all their calls are handed to the host together and run
// concurrently, and the next pass finds every branch's results under stable keys.
import { call1, callValue } from "../fn.js";
import { charge, checkCollectionSize, run, ToolSuspend, type PendingToolCall } from "../runtime.js";
import { seqArray } from "../seq.js";
import { Fn, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, expectFn } from "./args.js";
import type { BuiltinDef } from "./registry.js";
import { typeErr } from "../errors.js";

function branches(n: number, body: (i: number) => Value): Value {
  const r = run;
  const parent = r.branch;
  const site = r.nextCallKey();
  const depth = r.depth;
  const out = new Array<Value>(n);
  const pending: PendingToolCall[] = [];
  try {
    for (let i = 0; i < n; i++) {
      r.branch = `${site}/${i}`;
      try {
        out[i] = body(i);
      } catch (e) {
        if (!(e instanceof ToolSuspend)) throw e;
        pending.push(...e.pending);
        r.depth = depth;
      }
    }
  } finally {
    r.branch = parent;
  }
  if (pending.length > 0) throw new ToolSuspend(pending);
  return Vec.fromArray(out);
}

function pmap(args: Value[]): Value {
  const f = expectFn("pmap", args[0]);
  const colls = args.slice(1).map((c) => seqArray(c, "pmap"));
  const n = Math.min(...colls.map((c) => c.length));
  charge(n);
  checkCollectionSize(n);
  if (colls.length === 1) {
    const xs = colls[0];
    return branches(n, (i) => call1(f, xs[i]));
  }
  return branches(n, (i) => callValue(f, colls.map((c) => c[i])));
}

function pcalls(args: Value[]): Value {
  args.forEach((f, i) => {
    if (!(f instanceof Fn)) throw typeErr(`pcalls expects functions of no arguments, argument ${i + 1} is ${describe(f)}`);
  });
  charge(args.length);
  return branches(args.length, (i) => (args[i] as Fn).call([]));
}

export const PARALLEL: BuiltinDef[] = [
  {
    name: "pmap",
    area: "parallel",
    arity: [2, Infinity],
    params: "[f coll & colls]",
    doc: "Like map, but tool calls made by different elements run concurrently; results keep their order.",
    examples: [["(pmap inc [1 2 3])", "[2 3 4]"]],
    fn: pmap,
  },
  {
    name: "pcalls",
    area: "parallel",
    arity: [0, Infinity],
    params: "[& thunks]",
    doc: "Calls the no-argument functions, running their tool calls concurrently; a vector of their results.",
    examples: [["(pcalls (fn [] 1) (fn [] 2))", "[1 2]"]],
    fn: pcalls,
  },
];
