// Data nested deeper than maxNestingDepth, met by the host-side walks of a value (equality,
// hashing, ordering): each stops with nesting_too_deep at the limit, in process and in the worker
// mode alike, and never at whatever depth the host's stack gives out (a RangeError, or a
// depth_exceeded that only some stacks reach). Data at exactly the limit still works.
import { describe, expect, it } from "vitest";
import { evaluate, type EvaluateOptions, type EvalResult } from "../../src/lisp/evaluate.js";
import { defaultLimits, STACK_SAFE_DEPTH } from "../../src/lisp/limits.js";

const LIMIT = defaultLimits.maxNestingDepth;

/** A vector `levels` vectors deep, its innermost made at run time (no two builds share a part). */
const nested = (levels: number): string => `(loop [i 1 v (vector 0)] (if (< i ${levels}) (recur (inc i) [v]) v))`;

// Each operation meets two separately built values `d` and `e`.
const OPERATIONS: Array<[name: string, expr: string, what: string]> = [
  ["=", "(= d e)", "compared"],
  ["not=", "(not= d e)", "compared"],
  ["= inside maps", "(= {:k (first d)} {:k (first e)})", "compared"],
  ["hash-set", "(count (hash-set d))", "hashed"],
  ["conj onto a set", "(count (conj #{} d e))", "hashed"],
  ["map key", "(count (assoc {} d 1 e 2))", "hashed"],
  ["distinct", "(count (distinct [d e]))", "hashed"],
  ["frequencies", "(count (frequencies [d e]))", "hashed"],
  ["group-by", "(count (group-by identity [d e]))", "hashed"],
  ["compare", "(compare d e)", "compared"],
  ["sort", "(count (sort [d e]))", "compared"],
  ["a set literal", "(count #{d e})", "hashed"],
  ["a map literal", "(count {d 1 e 2})", "hashed"],
];

/** A map `levels` maps deep, each level keyed (and valued) by the one below: the deepest host recursion per level, through immutable's lookups. */
const nestedMaps = (levels: number): string => `(loop [i 1 v {:k (vector 0)}] (if (< i ${levels}) (recur (inc i) {v v}) v))`;

const program = (levels: number, expr: string): string => `(let [d ${nested(levels)}\n      e ${nested(levels)}]\n  ${expr})`;

for (const isolation of ["none", "worker"] as const) {
  describe(`deep data, isolation ${isolation}`, () => {
    const run = (source: string): Promise<EvalResult> => evaluate(source, { isolation, limits: { timeoutMs: 30_000 } });

    it.each(OPERATIONS)(`%s works on data exactly ${LIMIT} levels deep`, async (_name, expr) => {
      const r = await run(program(LIMIT, expr));
      expect(r.ok ? "ok" : r.error).toBe("ok");
    });

    for (const levels of [LIMIT + 1, 10_000]) {
      it.each(OPERATIONS)(`%s on data ${levels} levels deep is nesting_too_deep at the form`, async (_name, expr, what) => {
        const r = await run(program(levels, expr));
        expect(r.ok).toBe(false);
        if (r.ok) return;
        expect(r.error.kind).toBe("nesting_too_deep");
        expect(r.error.message).toContain(`data nested deeper than ${LIMIT} levels cannot be ${what}`);
        expect(r.error.line).toBe(3);
      });
    }
  });
}

// A program that can wait for a tool is compiled another way: its literals are placed the same.
describe("deep data in the literals of a program that calls a tool", () => {
  const LITERALS = OPERATIONS.filter(([name]) => name.endsWith("literal"));
  it.each(LITERALS)(`%s on data ${LIMIT + 1} levels deep is nesting_too_deep at the form`, async (_name, expr, what) => {
    const source = program(LIMIT + 1, expr).replace("(let [", "(let [t (tool/t) ");
    const r = await evaluate(source, { tools: { t: () => 1 }, limits: { timeoutMs: 30_000 } });
    expect(r.ok ? "ok" : [r.error.kind, r.error.message, r.error.line]).toEqual(["nesting_too_deep", `data nested deeper than ${LIMIT} levels cannot be ${what} (used as a key, a set element or by hash)`, 3]);
  });
});

// A definition crosses from the worker to its host (and back, as memory, to the next run's
// worker) by recursion in wire.ts, structured clone and the reader: bounded at a fixed depth,
// whatever the stacks of the two threads, with an error, never a run that does not end.
describe("deep data defined in the worker mode", () => {
  const define = (levels: number): Promise<EvalResult> => evaluate(`(def d ${nested(levels)})\n(count d)`, { isolation: "worker", limits: { timeoutMs: 30_000 } });

  it(`a definition ${STACK_SAFE_DEPTH} levels deep crosses, and the next run reads it`, async () => {
    const r = await define(STACK_SAFE_DEPTH);
    expect(r.ok ? r.value : r.error).toBe(1);
    if (!r.ok) return;
    const again = await evaluate("(count (first (first d)))", { isolation: "worker", memory: r.memory });
    expect(again.ok ? again.value : again.error).toBe(1);
  });

  it.each([STACK_SAFE_DEPTH + 1, 1_000, 10_000])("a definition %d levels deep fails with nesting_too_deep", async (levels) => {
    const r = await define(levels);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe("nesting_too_deep");
    expect(r.error.message).toContain("cannot cross between the worker thread and its host");
  });
});

// A host may raise maxNestingDepth, but never past what the host's stack takes: the walks that
// convert, print and compare data stop at STACK_SAFE_DEPTH levels with the limit's error, instead of a stack
// overflow reported as something else (a context "that cannot be read (reading it threw)").
describe("maxNestingDepth set past the host stack", () => {
  const limits = { maxNestingDepth: 100_000, timeoutMs: 30_000 };
  let deep: unknown = [];
  for (let i = 0; i < 10_000; i++) deep = [deep];
  const ROWS: Array<[name: string, source: string, options: EvaluateOptions]> = [
    ["a context value", "(count data/x)", { ctx: { x: deep } }],
    ["the result", nested(10_000), {}],
    ["a tool's arguments", `(tool/f {:x ${nested(10_000)}})`, { tools: { f: () => 1 } }],
    ["a tool's result", "(count (tool/f))", { tools: { f: () => deep } }],
    ["= of maps keyed by maps", `(= ${nestedMaps(10_000)} ${nestedMaps(10_000)})`, {}],
    ["a set of maps keyed by maps", `(count (hash-set ${nestedMaps(10_000)} ${nestedMaps(10_000)}))`, {}],
  ];

  for (const isolation of ["none", "worker"] as const) {
    it.each(ROWS)(`%s 10,000 levels deep is nesting_too_deep at ${STACK_SAFE_DEPTH} (isolation ${isolation})`, async (_name, source, options) => {
      const r = await evaluate(source, { ...options, isolation, limits });
      const error = r.ok ? null : r.error;
      expect(error?.kind === "tool_error" ? error.message : error?.kind).toMatch(new RegExp(`nesting_too_deep|nested deeper than ${STACK_SAFE_DEPTH} levels`));
      expect(error?.message).toContain(`nested deeper than ${STACK_SAFE_DEPTH} levels`);
    });
  }

  it(`data ${STACK_SAFE_DEPTH} levels deep still crosses in and out`, async () => {
    const r = await evaluate("data/x", { ctx: { x: JSON.parse("[".repeat(STACK_SAFE_DEPTH) + "]".repeat(STACK_SAFE_DEPTH)) }, limits });
    expect(r.ok ? JSON.stringify(r.value).length : r.error).toBe(2 * STACK_SAFE_DEPTH);
  });
});
