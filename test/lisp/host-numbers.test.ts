// Numbers coming in from the host (context, tool results). An integer past ±2^53 was already
// rounded when the host made it (JSON.parse turns 12345678901234567890 into ...7000): it must
// come in as the float it is, as a bigint that large does, never as an exact-looking integer
// (the README: integers exact up to ±2^53, never silently rounded).
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";

async function shown(source: string, ctx: Record<string, unknown>): Promise<string> {
  const r = await evaluate(source, { ctx, isolation: "none" });
  return r.ok ? r.prints.join("\n") : r.error.message;
}

describe("integers from the host", () => {
  it("past ±2^53 they are floats, in both modes and however they came", async () => {
    const ctx = { json: JSON.parse('{"a": 12345678901234567890}').a, neg: -(2 ** 60), big: 10n ** 20n, huge: 1e300, safe: Number.MAX_SAFE_INTEGER };
    expect(await shown("(println (float? data/json) (float? data/neg) (float? data/big) (float? data/huge) (int? data/safe))", ctx)).toBe("true true true true true");
    expect(await shown("(println (integer? data/json) data/safe)", ctx)).toBe("false 9007199254740991");
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("[(float? data/json) (int? data/safe)]", { ctx, isolation });
      expect(r.ok && r.value, isolation).toEqual([true, true]);
    }
  });
});
