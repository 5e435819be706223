// Runaway loops and recursion end with their own limit errors, quickly, and the host survives.
import { describe, expect, it } from "vitest";
import { failure, virtualClock } from "../support/run.js";

describe("limits: loops and recursion", () => {
  it("an infinite loop/recur hits the loop limit", async () => {
    const e = await failure("(loop [] (recur))");
    expect(e.error.kind).toBe("loop_limit_exceeded");
    expect(e.error.hint).toMatch(/exit condition/);
  });

  it("an infinite loop with a huge iteration budget is stopped by the fuel budget", async () => {
    const e = await failure("(loop [i 0] (recur (inc i)))", { limits: { maxLoopIterations: 1e12, maxFuel: 200_000 } });
    expect(e.error.kind).toBe("fuel_exhausted");
  });

  it("an infinite loop with unlimited counters is stopped by the clock", async () => {
    // Virtual time, a millisecond per check of the clock: the loop looks at it as it goes.
    const clock = virtualClock(1);
    const e = await failure("(loop [i 0] (recur (inc i)))", { limits: { maxLoopIterations: 1e15, maxFuel: 1e15, timeoutMs: 50 }, clock: clock.now });
    expect(e.error.kind).toBe("timeout");
    // Read 0 starts the run (deadline 50), reading and compiling the program read 1 and 2, the
    // loop's checks 3 to 51 (past the deadline), its stats one more.
    expect(clock.reads()).toBe(53);
  });

  it("infinite non-tail recursion hits the call-depth limit with the function named", async () => {
    const e = await failure("(defn f [n] (+ 1 (f n)))\n(f 1)");
    expect(e.error.kind).toBe("depth_exceeded");
    expect(e.error.trace?.[0]).toMatch(/^f/);
    expect(e.error.line).toBe(1);
  });

  it("mutual recursion through a higher-order function hits the depth limit", async () => {
    const e = await failure("(defn g [x] (g x)) (g 1)");
    expect(e.error.kind).toBe("depth_exceeded");
  });

  it("the host stack never overflows first, even with an absurd depth limit", async () => {
    const e = await failure("(defn f [n] (inc (f n))) (f 0)", { limits: { maxCallDepth: 10_000_000, timeoutMs: 5_000 } });
    expect(e.error.kind).toBe("depth_exceeded");
  });

  it("data too deep for the host stack to hash fails at the nesting limit, at the call that hashed it", async () => {
    const e = await failure("(let [v (reduce (fn [a _] [a]) [] (range 500000))]\n  (hash-set v 1 2 3 4 5 6 7 8 9))", { limits: { timeoutMs: 60_000 } });
    expect(e.error.kind).toBe("nesting_too_deep");
    expect([e.error.line, e.error.column]).toEqual([2, 3]);
  });

  it("self-recursion through recur in a fn is a loop, not stack growth", async () => {
    const e = await failure("((fn [n] (recur (inc n))) 0)", { limits: { maxLoopIterations: 10_000 } });
    expect(e.error.kind).toBe("loop_limit_exceeded");
  });

  it("dotimes and doseq count as loop iterations", async () => {
    const e = await failure("(dotimes [i 100000] i)", { limits: { maxLoopIterations: 1_000 } });
    expect(e.error.kind).toBe("loop_limit_exceeded");
  });

  it("a limit error cannot be caught by try", async () => {
    const e = await failure("(try (loop [] (recur)) (catch e :caught))");
    expect(e.error.kind).toBe("loop_limit_exceeded");
  });

  it("finally does not run while a limit error propagates", async () => {
    const e = await failure('(try (loop [] (recur)) (finally (println "cleanup")))');
    expect(e.error.kind).toBe("loop_limit_exceeded");
    expect(e.prints).toEqual([]);
  });

  it("an aborted signal stops a running program", async () => {
    const ac = new AbortController();
    ac.abort();
    const e = await failure("(loop [i 0] (recur (inc i)))", { limits: { maxLoopIterations: 1e15, maxFuel: 1e15 }, signal: ac.signal });
    expect(e.error.kind).toBe("aborted");
  });
});
