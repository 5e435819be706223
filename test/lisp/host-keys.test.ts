// Map keys crossing out to a tool, where every key is a string: a keyword, a string, a number
// or another value that reads the same (:total and "total", 1 and "1") would be one key there,
// and the tool would get one of the two values without a word. (A program's result keeps
// both in its \`lisp\` value; its host \`value\` keeps the last.)
import { describe, expect, it } from "vitest";
import { hash } from "ptc-immutable";
import { evaluate } from "../../src/lisp/evaluate.js";
import { keyword } from "../../src/lisp/values.js";

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

  // The error names both keys: made from hidden context, they show as stand-ins, not the secret or a piece of it.
  it("names keys made from hidden context by their stand-ins, in both modes", async () => {
    const secret = "zyqxvwkjplomb";
    for (const isolation of ["none", "worker"] as const) {
      for (const src of ["(tool/put {(keyword data/_tenant) 1 data/_tenant 2})", "(tool/put {:rows {(keyword (subs data/_tenant 2)) 1 (subs data/_tenant 2) 2}})"]) {
        const r = await evaluate(src, { ctx: { _tenant: secret }, tools: { put: () => 1 }, isolation });
        expect(r.ok, src).toBe(false);
        const message = r.ok ? "" : r.error.message;
        expect(message, src).toMatch(/hidden string (from|derived from) data\/_tenant/);
        for (let i = 0; i + 4 <= secret.length; i++) expect(message, `${isolation} ${src}`).not.toContain(secret.slice(i, i + 4));
      }
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

// Immutable's string hash (h*31 + c) gives "Aa" and "BB" one hash, and so every name made of such
// pairs: a host map of 16,384 of them as keys took 4.5 s to read, every key searched one by one
// among the others of its hash (282 ms for as many ordinary keys). Keywords hash their own way.
describe("keyword keys a host crafts to collide", () => {
  const crafted = (bits: number): string[] =>
    Array.from({ length: 1 << bits }, (_, i) => Array.from({ length: bits }, (_, b) => ((i >> b) & 1 ? "Aa" : "BB")).join(""));

  it("names that collide under Java's string hash do not collide as keywords", () => {
    const names = crafted(12);
    expect(new Set(names.map((n) => hash(n))).size).toBe(1);
    expect(new Set(names.map((n) => keyword(n).hashCode())).size).toBe(names.length);
    // Still one hash for equal keywords, interned or not.
    const long = "k".repeat(100);
    expect(keyword(long) === keyword(long)).toBe(false);
    expect(keyword(long).hashCode()).toBe(keyword(long).hashCode());
  });

  it("a context map of such keys reads as a map of as many keys", async () => {
    const names = crafted(12);
    const r = await evaluate("[(count data/m) (get data/m (keyword (first (keys data/m))))]", { ctx: { m: Object.fromEntries(names.map((n, i) => [n, i])) } });
    expect(r.ok ? r.value : r.error).toEqual([names.length, expect.any(Number)]);
  });
});
