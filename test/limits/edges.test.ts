// Each budget holds exactly its limit: a program that needs all of it runs, one that needs one
// more step, iteration, element, character, call or tool call fails with that limit's kind.
// Tests far past a limit (an endless loop) pass whatever side of the edge the check falls on.
import { describe, expect, it } from "vitest";
import type { Limits } from "../../src/lisp/limits.js";
import { CHECK_INTERVAL } from "../../src/lisp/runtime.js";
import { edn, errorOf, failure, stillClock } from "../support/run.js";
import { evaluate } from "../../src/lisp/evaluate.js";

const depth = (n: number) => `(defn f [n] (if (= n 0) 0 (inc (f (dec n))))) (f ${n})`;
const tools = { t: () => 1 };

// [limit, its value, a program needing all of it, one needing one more, the error's kind]
const EDGES: ReadonlyArray<readonly [keyof Limits, number, string, string, string]> = [
  ["maxLoopIterations", 10, "(loop [i 0] (if (< i 10) (recur (inc i)) i))", "(loop [i 0] (if (< i 11) (recur (inc i)) i))", "loop_limit_exceeded"],
  ["maxLoopIterations", 10, "(do (dotimes [i 10] i) 1)", "(do (dotimes [i 11] i) 1)", "loop_limit_exceeded"],
  ["maxLoopIterations", 10, "(do (doseq [i (range 10)] i) 1)", "(do (doseq [i (range 11)] i) 1)", "loop_limit_exceeded"],
  ["maxLoopIterations", 10, "(count (for [x (range 10)] x))", "(count (for [x (range 11)] x))", "loop_limit_exceeded"],
  ["maxCollectionSize", 10, "(count (vec (range 10)))", "(count (vec (range 11)))", "collection_too_large"],
  ["maxCollectionSize", 10, "(count (into #{} (range 10)))", "(count (into #{} (range 11)))", "collection_too_large"],
  ["maxStringLength", 10, '(count (str "abcde" "fghij"))', '(count (str "abcde" "fghijk"))', "string_too_large"],
  ["maxStringLength", 10, '(count (apply str (repeat 10 "a")))', '(count (apply str (repeat 11 "a")))', "string_too_large"],
  ["maxStringLength", 10, '(count (clojure.string/join "--" ["a" "a" "a" "a"]))', '(count (clojure.string/join "--" ["a" "a" "a" "ab"]))', "string_too_large"],
  ["maxStringLength", 10, '(count (name (keyword "abcd" "efghi")))', '(count (name (keyword "abcd" "efghij")))', "string_too_large"],
  ["maxStringLength", 10, '(count (clojure.string/replace "abcdefghi" "a" "ab"))', '(count (clojure.string/replace "abcdefghij" "a" "ab"))', "string_too_large"],
  // A capital ß is two letters: the result outgrows its 10-character input.
  ["maxStringLength", 10, '(count (clojure.string/capitalize "ßbcdefghi"))', '(count (clojure.string/capitalize "ßbcdefghij"))', "string_too_large"],
  // (f 9) nests ten calls of f.
  ["maxCallDepth", 10, depth(9), depth(10), "depth_exceeded"],
  ["maxToolCalls", 10, "(count (mapv (fn [i] (tool/t {:i i})) (range 10)))", "(count (mapv (fn [i] (tool/t {:i i})) (range 11)))", "tool_limit_exceeded"],
];

describe("limits: at the edge", () => {
  it.each(EDGES)("%s %i: all of it runs, one more fails", async (limit, value, all, more, kind) => {
    const limits = { [limit]: value };
    expect(await edn(all, { limits, tools })).toMatch(/^\d+$/);
    expect((await errorOf(more, { limits, tools })).kind).toBe(kind);
  });

  it("maxFuel: a program that uses all of its fuel runs, with one unit less it fails", async () => {
    // Past a few checkpoints (one per CHECK_INTERVAL units), where the count is read.
    const program = "(loop [i 0 acc 0] (if (< i 40000) (recur (inc i) (+ acc i)) acc))";
    const measured = await evaluate(program, { clock: stillClock });
    expect(measured.ok).toBe(true);
    const used = measured.stats.fuelUsed;
    expect(used).toBeGreaterThan(3 * CHECK_INTERVAL);
    const exact = await evaluate(program, { clock: stillClock, limits: { maxFuel: used } });
    expect(exact.ok ? exact.stats.fuelUsed : exact.error.kind).toBe(used);
    const short = await failure(program, { limits: { maxFuel: used - 1 } });
    expect(short.error.kind).toBe("fuel_exhausted");
    // What it used is reported as the budget, never past it.
    expect(short.stats.fuelUsed).toBe(used - 1);
  });
});
