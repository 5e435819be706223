// Map keys crossing out to a tool, where every key is a string: a keyword, a string, a number
// or another value that reads the same (:total and "total", 1 and "1") would be one key there,
// and the tool would get one of the two values without a word. (A program's result keeps
// both in its \`lisp\` value; its host \`value\` keeps the last.)
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";

describe("map keys that are one key for the host", () => {
  it("a tool is not called with arguments that would lose one of two such keys, in both modes", async () => {
    for (const isolation of ["none", "worker"] as const) {
      let called = 0;
      const tools = { put: () => ++called };
      const r = await evaluate('(tool/put {:rows (merge {:total 5} (frequencies ["total" "open"]))})', { tools, isolation });
      expect(called, isolation).toBe(0);
      expect(r.ok ? r.value : r.error, isolation).toMatchObject({ kind: "value_error", message: expect.stringMatching(/:total and "total"/) });
      const n = await evaluate('(tool/put {1 :a "1" :b})', { tools, isolation });
      expect(n.ok ? n.value : n.error.message, isolation).toMatch(/1 and "1"/);
    }
  });

  it("keys that differ for the host cross as before", async () => {
    const r = await evaluate('(tool/echo {:a 1 "b" 2 3 4 [5] 6})', { tools: { echo: (args) => args } });
    expect(r.ok && r.value).toEqual({ a: 1, b: 2, "3": 4, "[5]": 6 });
  });

  it("a tool's own Map with such keys reaches the program whole, in both modes (its record keeps one)", async () => {
    const tools = { t: () => new Map<unknown, unknown>([[1, "int"], ["1", "str"]]) };
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("(count (tool/t))", { tools, isolation });
      expect(r.ok && r.value, isolation).toBe(2);
      expect(r.toolCalls[0].result, isolation).toEqual({ "1": "str" });
    }
  });
});
