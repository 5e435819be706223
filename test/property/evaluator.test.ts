// The evaluator never lets a host exception out and always ends, whatever program it is
// given: generated token soup (mostly malformed) and generated well-formed nesting.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LIMIT_KINDS } from "../../src/lisp/errors.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { form, program } from "./arbitraries.js";
import { stillClock } from "../support/run.js";

const limits = { timeoutMs: 200, maxFuel: 200_000, maxCollectionSize: 10_000, maxStringLength: 20_000 };
const tools = { t: () => ({ ok: true }) };
const ctx = { x: [1, 2, 3] };

async function assertContained(source: string): Promise<void> {
  const r = await evaluate(source, { limits, tools, ctx, clock: stillClock });
  if (r.ok) return;
  expect(r.error.kind, `${source}\n→ ${r.error.message}`).not.toBe("internal_error");
  expect(typeof r.error.message).toBe("string");
  if (r.error.line !== undefined) {
    expect(r.error.line).toBeGreaterThanOrEqual(1);
    expect(r.error.line).toBeLessThanOrEqual(source.split("\n").length);
  }
}

describe("property: the evaluator contains every program", () => {
  it("token soup never throws or reports an internal error", async () => {
    await fc.assert(fc.asyncProperty(program, assertContained), { numRuns: 400 });
  });

  it("generated nested expressions never throw or report an internal error", async () => {
    await fc.assert(fc.asyncProperty(form, assertContained), { numRuns: 400 });
  });

  // With a clock that stands still, the limits on work (not time) must stop every runaway.
  it("every limit fires before the host suffers", async () => {
    const runaway = fc.oneof(
      fc.integer({ min: 300, max: 50_000 }).map((n) => "[".repeat(n) + "]".repeat(n)),
      fc.integer({ min: 100_001, max: 1e12 }).map((n) => `(count (range ${n}))`),
      fc.integer({ min: 1, max: 5 }).map((k) => `(defn f${k} [n] (+ ${k} (f${k} n))) (f${k} 0)`),
      fc.integer({ min: 1, max: 3 }).map((k) => `(loop [i ${k}] (recur (+ i ${k})))`),
    );
    await fc.assert(
      fc.asyncProperty(runaway, async (src) => {
        const r = await evaluate(src, { limits: { ...limits, maxCollectionSize: 100_000 }, clock: stillClock });
        expect(r.ok).toBe(false);
        if (!r.ok) expect([...LIMIT_KINDS.filter((k) => k !== "timeout")] as string[]).toContain(r.error.kind);
      }),
      { numRuns: 60 },
    );
  });
});
