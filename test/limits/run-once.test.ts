// One program, one run: a tool call suspends the program where it is and it goes on from there
// once the result is in. Nothing before the call runs again, every tool is called exactly once
// per evaluation of its call site (also through builtins that call functions back, tools passed
// as values and functions kept in memory), and fuel, loops and time are counted once.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluate, type ToolFn } from "../../src/lisp/evaluate.js";
import { virtualClock } from "../support/run.js";

/** A tool that records every call it gets, answering {:id id :v (* 10 id)}. */
function recorder(): { calls: unknown[]; tool: ToolFn } {
  const calls: unknown[] = [];
  return {
    calls,
    tool: async (args) => {
      calls.push(args.id);
      return { id: args.id, v: Number(args.id) * 10 };
    },
  };
}

describe("a program runs once", () => {
  it("does not run the work before a tool call again", async () => {
    const r = await evaluate('(println "start") (def a (tool/get {:id 1})) (println "middle") (def b (tool/get {:id 2})) (println "end") (+ (:v a) (:v b))', {
      tools: { get: recorder().tool },
    });
    expect(r.ok && r.value).toBe(30);
    expect(r.prints).toEqual(["start", "middle", "end"]);
    expect(r.toolCalls.map((c) => c.args)).toEqual([{ id: 1 }, { id: 2 }]);
  });

  const viaBuiltins: Array<[string, unknown, number[]]> = [
    ["(map tool/get [{:id 1} {:id 2}])", [{ id: 1, v: 10 }, { id: 2, v: 20 }], [1, 2]],
    ["(mapv (fn [i] (:v (tool/get {:id i}))) (range 4))", [0, 10, 20, 30], [0, 1, 2, 3]],
    ["(reduce (fn [acc i] (+ acc (:v (tool/get {:id i})))) 0 (range 4))", 60, [0, 1, 2, 3]],
    ["(filter (fn [i] (> (:v (tool/get {:id i})) 10)) [1 2 3])", [2, 3], [1, 2, 3]],
    ["(sort-by (fn [i] (- (:v (tool/get {:id i})))) [2 3 1])", [3, 2, 1], [2, 3, 1]],
    ["(some (fn [i] (when (= 20 (:v (tool/get {:id i}))) i)) [1 2 3])", 2, [1, 2]],
    ["(into [] (comp (map (fn [i] (tool/get {:id i}))) (map :v)) [5 6])", [50, 60], [5, 6]],
    ["(update {:a 4} :a (fn [i] (:v (tool/get {:id i}))))", { a: 40 }, [4]],
    ["(group-by :v (map (fn [i] (tool/get {:id (mod i 2)})) (range 3)))", { "0": [{ id: 0, v: 0 }, { id: 0, v: 0 }], "10": [{ id: 1, v: 10 }] }, [0, 1, 0]],
    ["((comp :v tool/get) {:id 7})", 70, [7]],
    ["(apply tool/get [{:id 8}])", { id: 8, v: 80 }, [8]],
    ["(for [i (range 3) :when (odd? (:v (tool/get {:id i})))] i)", [], [0, 1, 2]],
    ["(loop [i 0 acc []] (if (< i 3) (recur (inc i) (conj acc (:v (tool/get {:id i})))) acc))", [0, 10, 20], [0, 1, 2]],
    ["(let [[a b] (mapv #(tool/get {:id %}) [1 2])] (+ (:v a) (:v b)))", 30, [1, 2]],
    ["(try (map (fn [i] (if (= i 2) (throw (ex-info \"no\" {})) (tool/get {:id i}))) [1 2 3]) (catch e (ex-message e)))", "no", [1]],
  ];
  for (const [source, value, ids] of viaBuiltins) {
    it(`calls each tool once: ${source}`, async () => {
      const rec = recorder();
      const r = await evaluate(source, { tools: { get: rec.tool } });
      expect(r.ok && r.value).toEqual(value);
      expect(rec.calls).toEqual(ids);
    });
  }

  it("a function kept in memory from an earlier program can call a tool", async () => {
    const rec = recorder();
    const first = await evaluate("(defn fetch [i] (println \"fetch\" i) (:v (tool/get {:id i})))", { tools: { get: rec.tool } });
    expect(first.ok).toBe(true);
    const r = await evaluate("(map fetch [1 2 3])", { tools: { get: rec.tool }, memory: first.memory });
    expect(r.ok && r.value).toEqual([10, 20, 30]);
    expect(r.prints).toEqual(["fetch 1", "fetch 2", "fetch 3"]);
    expect(rec.calls).toEqual([1, 2, 3]);
  });

  it("fuel and loop iterations are what the same program spends without tools", async () => {
    const loop = (call: string) => `(loop [i 0 acc 0] (if (< i 30) (recur (inc i) (+ acc (reduce + (range 500)) ${call})) acc))`;
    const withTools = await evaluate(loop("(:i (tool/tick {:i i}))"), { tools: { tick: (a) => a } });
    const without = await evaluate(`(defn tick [m] m) ${loop("(:i (tick {:i i}))")}`);
    expect(withTools.ok && without.ok && withTools.value === without.value).toBe(true);
    // The same work, counted once: within a few steps per iteration of each other.
    expect(Math.abs(withTools.stats.fuelUsed - without.stats.fuelUsed)).toBeLessThan(30 * 5);
    const loops = await evaluate(`(dotimes [i 10] (tool/tick {:i i}))`, { tools: { tick: (a) => a }, limits: { maxLoopIterations: 9 } });
    expect(!loops.ok && loops.error.kind).toBe("loop_limit_exceeded");
  });

  it("a builtin that calls back charges its own work once, whether it goes on from an element or runs again from its log", async () => {
    // g costs the same steps either way, the tool call in place of a map literal's lookup, plus
    // what crossing the boundary costs per call: one value out ({:x x}), two in ({:v n}).
    for (const call of ["(sort-by g xs)", "(group-by g xs)", "(update {:a 1} :a g)", "(mapcat (fn [x] [(g x)]) xs)", "(into [] (map g) xs)", "(map g xs)", "(reduce (fn [a x] (+ a (g x))) 0 xs)"]) {
      const body = `(let [xs (vec (range 30))] ${call})`;
      const viaTool = await evaluate(`(defn g [x] (:v (tool/f {:x x}))) ${body}`, { tools: { f: (a) => ({ v: (Number(a.x) * 7) % 11 }) } });
      const viaFn = await evaluate(`(defn g [x] (:v {:v (mod (* x 7) 11)})) ${body}`);
      expect(viaTool.ok && viaFn.ok && viaTool.value).toEqual(viaFn.ok && viaFn.value);
      expect(viaTool.stats.fuelUsed, call).toBe(viaFn.stats.fuelUsed + 3 * viaTool.toolCalls.length);
    }
  });

  it("time spent between tool calls is counted once: sequential calls after real work finish under the limit", async () => {
    // 20 rounds of work in virtual time (a millisecond per clock check): about 23 checks a round
    // (the evaluator's, reduce's own every 4,096 elements, the tool boundary's), 465 in all,
    // under a 1,000 ms limit (a replaying evaluator spent 20 times the work before the last
    // call: thousands of checks).
    const work = "(reduce + (map (fn [x] (* x x)) (range 25000)))";
    const clock = virtualClock(1);
    const r = await evaluate(`(loop [i 0 acc 0] (if (< i 20) (recur (inc i) (+ acc ${work} (tool/tick {}))) acc))`, { tools: { tick: () => 1 }, limits: { timeoutMs: 1000, maxFuel: 1e9 }, clock: clock.now });
    expect(r.ok).toBe(true);
    expect(r.toolCalls).toHaveLength(20);
    expect(clock.reads()).toBeGreaterThan(40);
  });

  it("waiting for tools does not count against the time limit", async () => {
    // Virtual time that moves only while a tool waits: 4 waits of 60 ms against a 100 ms limit.
    const clock = virtualClock(0);
    const slow = () => new Promise((resolve) => setTimeout(() => resolve(1), 1)).then((v) => (clock.advance(60), v));
    const r = await evaluate("(doseq [i (range 4)] (tool/slow {}))", { tools: { slow }, limits: { timeoutMs: 100 }, clock: clock.now });
    expect(r.ok).toBe(true);
    // The run took 240 ms of that clock, all of it waiting.
    expect(r.stats.durationMs).toBeGreaterThanOrEqual(240);
  });

  it("pmap has the calls of every branch in flight together", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = async (args: Record<string, unknown>) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 20));
      inFlight--;
      return args.i;
    };
    const r = await evaluate("(pmap (fn [i] (+ (tool/slow {:i i}) (tool/slow {:i i}))) (range 6))", { tools: { slow } });
    expect(r.ok && r.value).toEqual([0, 2, 4, 6, 8, 10]);
    expect(most).toBe(6);
    expect(r.toolCalls).toHaveLength(12);
  });

  it("a failing pmap branch ends the program and no branch goes on after it", async () => {
    let after = 0;
    const tools = {
      t: async (args: Record<string, unknown>) => {
        await new Promise((resolve) => setTimeout(resolve, Number(args.i) * 10));
        if (args.i === 0) throw new Error("boom");
        return 1;
      },
      late: () => ++after,
    };
    const r = await evaluate("(pmap (fn [i] (tool/t {:i i}) (tool/late {})) (range 3))", { tools });
    expect(!r.ok && r.error.kind).toBe("tool_error");
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Every branch settled before pmap failed, and nothing ran once the evaluation had ended.
    const settledAfter = after;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(after).toBe(settledAfter);
  });

  it("two evaluations waiting on tools at once keep their own state", async () => {
    const slow = (args: Record<string, unknown>) => new Promise((resolve) => setTimeout(() => resolve(args.x), 5));
    const prog = (tag: string) => `(doseq [i (range 5)] (println "${tag}" (tool/slow {:x i})))`;
    const [a, b] = await Promise.all([evaluate(prog("a"), { tools: { slow } }), evaluate(prog("b"), { tools: { slow } })]);
    expect(a.prints).toEqual([0, 1, 2, 3, 4].map((i) => `a ${i}`));
    expect(b.prints).toEqual([0, 1, 2, 3, 4].map((i) => `b ${i}`));
  });

  it("with-out-str captures what is printed after a tool call, and only that", async () => {
    const r = await evaluate('(println "out") [(with-out-str (println "in" (tool/t {})) (println "still in")) "after"]', { tools: { t: () => 1 } });
    expect(r.ok && r.value).toEqual(["in 1\nstill in\n", "after"]);
    expect(r.prints).toEqual(["out"]);
  });

  it("try/finally around a tool call runs the finally once", async () => {
    const r = await evaluate('(try (tool/t {}) (finally (println "finally")))', { tools: { t: () => 1 } });
    expect(r.ok && r.value).toBe(1);
    expect(r.prints).toEqual(["finally"]);
    const failed = await evaluate('(try (tool/t {}) (catch e (println "caught" (:kind e)) :c) (finally (println "finally")))', {
      tools: {
        t: () => {
          throw new Error("no");
        },
      },
    });
    expect(failed.ok && failed.value).toBe("c");
    expect(failed.prints).toEqual(["caught :tool_error", "finally"]);
  });

  it("deep recursion through tool calls still meets the call depth limit", async () => {
    const r = await evaluate("(defn down [n] (if (= n 0) 0 (+ (tool/t {}) (down (dec n))))) (down 50)", { tools: { t: () => 1 }, limits: { maxCallDepth: 20 } });
    expect(!r.ok && r.error.kind).toBe("depth_exceeded");
    const ok = await evaluate("(defn down [n] (if (= n 0) 0 (+ (tool/t {}) (down (dec n))))) (down 15)", { tools: { t: () => 1 }, limits: { maxCallDepth: 20 } });
    expect(ok.ok && ok.value).toBe(15);
  });
});

// The same programs with a tool and with a plain function in its place give the same value, and
// the tool is called exactly as often as the function: builtins that call back, nested.
describe("run once (property)", () => {
  const wrappers = [
    (f: string) => `(map ${f} xs)`,
    (f: string) => `(mapv ${f} xs)`,
    (f: string) => `(filter (fn [x] (odd? (${f} x))) xs)`,
    (f: string) => `(reduce (fn [a x] (+ a (${f} x))) 0 xs)`,
    (f: string) => `(sort-by ${f} xs)`,
    (f: string) => `(group-by (fn [x] (mod (${f} x) 3)) xs)`,
    (f: string) => `(keep (fn [x] (when (even? (${f} x)) x)) xs)`,
    (f: string) => `(some (fn [x] (when (> (${f} x) 30) x)) xs)`,
    (f: string) => `(for [x xs :let [y (${f} x)] :when (odd? y)] y)`,
    (f: string) => `(into [] (map ${f}) xs)`,
    (f: string) => `(mapcat (fn [x] [x (${f} x)]) xs)`,
    (f: string) => `(pmap ${f} xs)`,
    (f: string) => `(count (frequencies (map ${f} xs)))`,
  ];
  // A number from whatever a wrapper returns, so wrappers nest.
  const summary = (expr: string): string => `(let [v ${expr}] (if (number? v) v (count v)))`;
  const program = (path: number[], xs: number[]): string => {
    let f = "g";
    for (const w of path.slice(1).reverse()) f = `(fn [y] ${summary(wrappers[w % wrappers.length](f).replace(/\bxs\b/g, "[y (inc y)]"))})`;
    return `(let [xs [${xs.join(" ")}]] ${wrappers[path[0] % wrappers.length](f)})`;
  };
  it("a tool in place of a function changes neither the value nor the number of calls", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { minLength: 1, maxLength: 3 }), fc.array(fc.integer({ min: -5, max: 50 }), { maxLength: 6 }), async (path, xs) => {
        const body = program(path, xs);
        const viaTool = await evaluate(`(defn g [x] (:v (tool/f {:x x}))) ${body}`, { tools: { f: (a) => ({ v: Number(a.x) * 3 + 1 }) } });
        const viaFn = await evaluate(`(defn g [x] (println "g") (+ 1 (* 3 x))) ${body}`);
        expect(viaTool.ok, body).toBe(viaFn.ok);
        if (viaTool.ok && viaFn.ok) expect(viaTool.value, body).toEqual(viaFn.value);
        expect(viaTool.toolCalls.length, body).toBe(viaFn.prints.length);
      }),
      { numRuns: 80 },
    );
  });
});
