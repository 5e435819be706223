// A failed evaluation leaves the caller's memory exactly as it was, whatever failed.
import { describe, expect, it } from "vitest";
import { evaluate, type Memory } from "../../src/lisp/evaluate.js";

async function memoryAfter(source: string): Promise<Memory> {
  const r = await evaluate(source);
  if (!r.ok) throw new Error(r.error.message);
  return r.memory;
}

describe("security: memory is transactional", () => {
  const failing = [
    ["a runtime error", '(def x 99) (def y 1) (+ 1 "a")'],
    ["a limit error", "(def x 99) (loop [] (recur))"],
    ["an analysis error after defs", "(def x 99) (undefined-fn)"],
    ["a parse error", "(def x 99) (("],
  ] as const;

  for (const [what, source] of failing) {
    it(`is unchanged after ${what}`, async () => {
      const memory = await memoryAfter('(def x 1) (defn f "doc" [a] (* a 2))');
      const snapshot = new Map(memory);
      const r = await evaluate(source, { memory });
      expect(r.ok).toBe(false);
      expect(r.memory).toBe(memory);
      expect(new Map(memory)).toEqual(snapshot);
      const again = await evaluate("[x (f 2)]", { memory });
      expect(again.ok && again.value).toEqual([1, 4]);
    });
  }

  it("a successful evaluation returns new memory and leaves the old map untouched", async () => {
    const memory = await memoryAfter("(def x 1)");
    const r = await evaluate("(def x 2) (def y 3)", { memory });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(memory.get("x")?.value).toBe(1);
    expect(memory.has("y")).toBe(false);
    expect(r.memory.get("x")?.value).toBe(2);
  });

  it("docstrings are kept with definitions", async () => {
    const memory = await memoryAfter('(def users "Active users" [1 2]) (defn total "Sum" [xs] (reduce + xs))');
    expect(memory.get("users")?.doc).toBe("Active users");
    expect(memory.get("total")?.doc).toBe("Sum");
    expect(memory.get("total")?.source).toContain("(defn total");
  });

  it("functions from earlier evaluations see later redefinitions of globals", async () => {
    const m1 = await memoryAfter("(def rate 2) (defn scale [x] (* x rate))");
    expect(m1.size).toBe(2);
    const r = await evaluate("(def rate 10) (scale 3)", { memory: m1 });
    expect(r.ok && r.value).toBe(30);
  });
});
