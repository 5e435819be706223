// Hidden context must not make a program's work grow faster than its size: every builtin call
// asks whether its arguments hold a marked value, and a result built step by step (a reduce over
// conj) was walked whole at every step, so 20,000 steps took 16 s instead of 17 ms, uncharged.
// The walks are counted (not timed): doubling the input must about double them.
import { afterEach, describe, expect, it, vi } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { Marks } from "../../src/lisp/marks.js";

const ctx = { _creds: { token: "sk-live-7Hq2ZpX9wLm4" }, region: "eu" };

async function walks(program: (n: number) => string, n: number): Promise<number> {
  const find = vi.spyOn(Marks.prototype, "find");
  const r = await evaluate(`(def t (:token data/_creds)) ${program(n)}`, { ctx, isolation: "none", limits: { timeoutMs: 600_000 } });
  expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
  const calls = find.mock.calls.length;
  find.mockRestore();
  return calls;
}

afterEach(() => vi.restoreAllMocks());

describe("marks cost in proportion to the work (adversary)", () => {
  it.each([
    ["a builtin folded over a growing vector", (n: number) => `(count (reduce conj [] (range ${n})))`],
    ["a closure folded over a growing vector", (n: number) => `(count (reduce (fn [acc x] (conj acc x)) [] (range ${n})))`],
    ["a map built key by key", (n: number) => `(count (reduce (fn [m x] (assoc m x (str x))) {} (range ${n})))`],
  ])("%s", async (_name, program) => {
    const small = await walks(program, 1_000);
    const large = await walks(program, 2_000);
    expect(small).toBeGreaterThan(0);
    expect(large / small).toBeLessThan(2.5);
  });

  it("still marks what is built from a hidden value, step by step", async () => {
    const r = await evaluate("(def t (:token data/_creds)) (def v (reduce conj [] (range 50))) (println (conj v t))", { ctx, isolation: "none" });
    expect(r.ok).toBe(true);
    expect(r.prints.join("\n")).not.toContain("sk-live");
    expect(r.prints.join("\n")).toContain("hidden string");
  });
});
