// Print → read round trip, and deterministic printing, for generated values.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { prStr } from "../../src/lisp/printer.js";
import { strictEqual } from "../support/strict.js";
import { value } from "./arbitraries.js";

describe("property: printer", () => {
  it("reading what the printer prints gives back the same value", async () => {
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        const text = prStr(v);
        const r = await evaluate(text);
        if (!r.ok) throw new Error(`${text} did not read back: ${r.error.kind} ${r.error.message}`);
        expect(strictEqual(r.lisp, v), `${text} read back as ${prStr(r.lisp)}`).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("printing is deterministic and idempotent through a read", async () => {
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        const once = prStr(v);
        expect(prStr(v)).toBe(once);
        const r = await evaluate(once);
        if (!r.ok) throw new Error(`${once} did not read back: ${r.error.kind} ${r.error.message}`);
        expect(prStr(r.lisp)).toBe(once);
      }),
      { numRuns: 200 },
    );
  });

  it("functions print in a form the reader rejects", async () => {
    const r = await evaluate("(fn [x] x)");
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const back = await evaluate(prStr(r.lisp));
    expect(back.ok).toBe(false);
  });
});
