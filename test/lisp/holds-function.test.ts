// holdsFunction: whether a value holds code anywhere (saveMemory saves such a definition as its
// source; a run with hidden context defines again the functions compiled without marking).
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { holdsFunction } from "../../src/lisp/holds-function.js";
import type { Value } from "../../src/lisp/values.js";
import { RemoteFn } from "../../src/lisp/wire.js";

async function value(source: string): Promise<Value> {
  const r = await evaluate(`(def v ${source})`);
  if (!r.ok) throw new Error(r.error.message);
  return r.memory.get("v")?.value ?? null;
}

describe("holdsFunction", () => {
  it("finds a function however it is held, and only then", async () => {
    for (const src of ["inc", "(fn [x] x)", "[1 [2 {:a #{inc}}]]", "{(fn [] 1) 2}", "[1 (partial + 1)]", "(sorted-map :a [1 {:b str}])"]) expect(holdsFunction(await value(src)), src).toBe(true);
    for (const src of ["1", '"s"', "[1 [2 {:a #{:k}}]]", "(sorted-set 3 1)", "nil", "(range 5)"]) expect(holdsFunction(await value(src)), src).toBe(false);
  });

  it("looks into shared structure once: 2^40 leaves are 40 steps", async () => {
    const v = await value("(conj (reduce (fn [m _] [m m]) [] (range 40)) inc)");
    const budget = { left: 1_000 };
    expect(holdsFunction(v, undefined, budget)).toBe(true);
    expect(holdsFunction(await value("(reduce (fn [m _] [m m]) [] (range 40))"), undefined, { left: 1_000 })).toBe(false);
  });

  it("a bounded walk that cannot finish answers true at once, without visiting the rest", async () => {
    const big = await value("(vec (range 100000))");
    const budget = { left: 1_000 };
    expect(holdsFunction(big, undefined, budget)).toBe(true);
    expect(budget.left).toBeGreaterThan(990);
    expect(holdsFunction(big)).toBe(false);
  });

  it("counts only the functions `counts` accepts", () => {
    const remote = new RemoteFn("f", "f", undefined, "it lives elsewhere");
    expect(holdsFunction(remote)).toBe(true);
    expect(holdsFunction(remote, (f) => !(f instanceof RemoteFn))).toBe(false);
  });
});
