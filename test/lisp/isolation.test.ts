// The isolated mode: a program runs in a worker thread, so abort ends it at once, the host's
// event loop keeps turning while it computes, a program that exhausts its heap fails alone,
// and everything else (values, errors, prints, tools, memory) is what the in-process mode gives.
// No assertion here depends on how fast the machine is: waits are on events, and the only
// time bounds are generous fractions of limits set far away.
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { evaluate, print, type EvaluateOptions, type EvalResult, type ToolFn } from "../../src/lisp/evaluate.js";
import { Fn, keyword } from "../../src/lisp/values.js";
import { Vec } from "../../src/lisp/vector.js";
import { WireReader, WireWriter } from "../../src/lisp/wire.js";
import { PoolWorker } from "../../src/lisp/isolate/pool.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { form, program } from "../property/arbitraries.js";
import { caseFiles } from "../support/cases.js";
import { fragments, leaks } from "../support/hidden.js";

const worker = (o: EvaluateOptions = {}): EvaluateOptions => ({ ...o, isolation: "worker" });
// Limits that leave a spinning loop to the clock alone, with the clock far away.
const SPIN_LIMITS = { timeoutMs: 60_000, maxFuel: 1e15, maxLoopIterations: 1e15 };
const SPIN = "(do (tool/started) (loop [i 0] (recur (inc i))))";
// Limits no spinning program reaches while a test runs: only an abort ends it.
const ENDLESS = { timeoutMs: 1e9, maxFuel: 1e15, maxLoopIterations: 1e15 };

/** A tool that resolves `started` when the program calls it. */
function starter(): { started: Promise<void>; tool: ToolFn } {
  let go: () => void = () => undefined;
  const started = new Promise<void>((r) => (go = r));
  return { started, tool: () => (go(), null) };
}

/** What a result shows a reader: everything but timings. */
function shown(r: EvalResult): unknown {
  if (!r.ok) return { ok: false, error: r.error, prints: r.prints };
  return { ok: true, edn: print(r.lisp), value: r.value, outcome: r.outcome, prints: r.prints, defs: r.defs.map((d) => [d.name, print(d.value)]) };
}

describe("isolated mode: preemption", () => {
  it("abort ends a CPU-bound program with aborted, long before its time limit", async () => {
    const { started, tool } = starter();
    const ac = new AbortController();
    const t0 = performance.now();
    const pending = evaluate(SPIN, worker({ tools: { started: tool }, limits: SPIN_LIMITS, signal: ac.signal }));
    await started;
    ac.abort();
    const r = await pending;
    expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
    expect(r.ok ? "" : r.error.message).toBe("the evaluation was aborted by the host");
    expect(performance.now() - t0).toBeLessThan(SPIN_LIMITS.timeoutMs / 2);
  });

  it("the host's event loop keeps ticking while an isolated program spins", async () => {
    const { started, tool } = starter();
    const ac = new AbortController();
    let ticks = 0;
    let target = Infinity;
    let reached: () => void = () => undefined;
    const ticked = new Promise<void>((r) => (reached = r));
    const timer = setInterval(() => {
      if (++ticks >= target) reached();
    }, 5);
    try {
      const pending = evaluate(SPIN, worker({ tools: { started: tool }, limits: SPIN_LIMITS, signal: ac.signal }));
      await started;
      const before = ticks;
      target = before + 5;
      // Only a free event loop gets here: a blocked one would leave the program to its 60 s clock.
      await ticked;
      ac.abort();
      const r = await pending;
      expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
      expect(ticks - before).toBeGreaterThanOrEqual(5);
    } finally {
      clearInterval(timer);
    }
  });

  it("a program past its heap cap fails with memory_exceeded, and the next run in the pool works", async () => {
    const isolation = { mode: "worker", maxHeapMb: 64 } as const;
    const limits = { ...SPIN_LIMITS, maxCollectionSize: 1e9 };
    const r = await evaluate('(loop [v [] i 0] (recur (conj v (str "item-" i)) (inc i)))', { isolation, limits });
    expect(r.ok ? "ok" : r.error.kind).toBe("memory_exceeded");
    expect(r.ok ? "" : r.error.message).toContain("64 MB");
    // Hundreds of thousands of steps were spent before the heap ran out: the result counts them.
    expect(r.stats.fuelUsed).toBeGreaterThan(100_000);
    const next = await evaluate("(reduce + (range 10))", { isolation });
    expect(next.ok && print(next.lisp)).toBe("45");
  });

  it("a time-limit overrun ends the program with timeout, as in process", async () => {
    const limits = { timeoutMs: 200, maxFuel: 1e15, maxLoopIterations: 1e15 };
    const [a, b] = [await evaluate("(loop [i 0] (recur (inc i)))", { limits }), await evaluate("(loop [i 0] (recur (inc i)))", worker({ limits }))];
    // The same kind and message; a worker the host had to stop (a loaded machine can delay the
    // interpreter's own check past the hard stop) cannot say where the program was.
    expect(!a.ok && [a.error.kind, a.error.message]).toEqual(["timeout", "the program ran longer than 200 ms"]);
    expect(!b.ok && [b.error.kind, b.error.message]).toEqual(["timeout", "the program ran longer than 200 ms"]);
  });
});

describe("isolated mode: what a killed worker leaves", () => {
  it("the fuel spent before an abort is in the result's stats, as in process", async () => {
    const work = "(dotimes [i 30000] (str i))";
    const before = await evaluate(work, { limits: SPIN_LIMITS });
    expect(before.ok).toBe(true);
    for (const isolation of ["none", "worker"] as const) {
      const { started, tool } = starter();
      const ac = new AbortController();
      const pending = evaluate(`${work} (tool/started) (loop [i 0] (recur (inc i)))`, { isolation, tools: { started: tool }, limits: SPIN_LIMITS, signal: ac.signal });
      await started;
      ac.abort();
      const r = await pending;
      expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
      expect(r.stats.fuelUsed, isolation).toBeGreaterThanOrEqual(before.stats.fuelUsed);
    }
  });

  it("lines printed before an abort are in the result", async () => {
    const { started, tool } = starter();
    const ac = new AbortController();
    const src = '(println "first") (println "second") (tool/started) (println "after the call") (loop [i 0] (recur (inc i)))';
    const pending = evaluate(src, worker({ tools: { started: tool }, limits: SPIN_LIMITS, signal: ac.signal }));
    // Lines printed before a tool call are sent before the call.
    await started;
    ac.abort();
    const r = await pending;
    expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
    expect(r.prints.slice(0, 2)).toEqual(["first", "second"]);
  });

  it("a line printed before a long computation reaches the host while it computes, and survives an abort", async () => {
    const ac = new AbortController();
    let heard: () => void = () => undefined;
    const printed = new Promise<void>((r) => (heard = r));
    const pending = evaluate('(println "working") (loop [i 0] (recur (inc i)))', worker({ limits: ENDLESS, signal: ac.signal, onPrint: (l) => l === "working" && heard() }));
    await printed;
    ac.abort();
    const r = await pending;
    expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
    expect(r.prints).toEqual(["working"]);
  });

  it("lines printed together before a long computation all reach the host while it computes, not only the first", async () => {
    const ac = new AbortController();
    let heard: () => void = () => undefined;
    const printed = new Promise<void>((r) => (heard = r));
    // The program never ends by itself: a held line would never be heard, and the test would hang.
    const src = '(println "one") (println "two") (println "three") (loop [i 0] (recur (inc i)))';
    const pending = evaluate(src, worker({ limits: ENDLESS, signal: ac.signal, onPrint: (l) => l === "three" && heard() }));
    await printed;
    ac.abort();
    const r = await pending;
    expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
    expect(r.prints).toEqual(["one", "two", "three"]);
  });
});

describe("isolated mode: hidden context", () => {
  const ctx = { _creds: { token: "sk-live-4f9a2b7c1d" }, user: "ann" };
  const seen: unknown[] = [];
  const tools = { lookup: (args: Record<string, unknown>) => (seen.push(args), { ok: true }) };

  it("a run with hidden context is isolated: abort ends it at once", async () => {
    const { started, tool } = starter();
    const ac = new AbortController();
    const pending = evaluate("(def t (:token data/_creds)) (tool/started) (loop [i 0] (recur (inc i)))", worker({ ctx, tools: { started: tool }, limits: SPIN_LIMITS, signal: ac.signal }));
    await started;
    ac.abort();
    const r = await pending;
    // In process, the spinning loop would hold the event loop until its 60 s clock.
    expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
  });

  it("marks cross the boundary: prints, tool-call records, errors, results and memory hide what they hid in process", async () => {
    const first = '(def tok (:token data/_creds)) (def auth (str "Bearer " tok)) (println auth) (tool/lookup {:token auth :user data/user}) [tok data/user]';
    const [a, b] = [await evaluate(first, { ctx, tools }), await evaluate(first, worker({ ctx, tools }))];
    expect(shown(b)).toEqual(shown(a));
    expect(b.toolCalls.map((c) => c.args)).toEqual(a.toolCalls.map((c) => c.args));
    expect(JSON.stringify(b.toolCalls)).not.toContain("4f9a2b7c1d");
    // The tool itself got the value in both modes.
    expect(seen).toEqual([{ token: "Bearer sk-live-4f9a2b7c1d", user: "ann" }, { token: "Bearer sk-live-4f9a2b7c1d", user: "ann" }]);
    if (!a.ok || !b.ok) throw new Error("expected success");
    expect(b.marks).toBeDefined();
    expect(print(b.marks?.hide(b.lisp) ?? null)).toBe(print(a.marks?.hide(a.lisp) ?? null));
    expect(showStandIns(print(b.marks?.hide(b.lisp) ?? null))).not.toContain("4f9a");
    expect(b.memory.get("auth")?.hidden).toEqual(a.memory.get("auth")?.hidden);
    // The next turn, in the same worker or re-created in another, still knows what is hidden.
    const next = '(println (subs tok 3)) (throw (ex-info (str "bad " tok) {}))';
    const a2 = await evaluate(next, { ctx, tools, memory: a.memory });
    const b2 = await evaluate(next, worker({ ctx, tools, memory: b.memory }));
    const c2 = await evaluate(next, worker({ ctx, tools, memory: new Map(b.memory) }));
    expect(shown(b2)).toEqual(shown(a2));
    expect(shown(c2)).toEqual(shown(a2));
    expect(JSON.stringify(shown(b2))).not.toContain("4f9a");
  });
});

describe("isolated mode: a tool quoting a hidden argument", () => {
  it("the host's live record hides it as the run's own record does, whole or cut short with …", async () => {
    const ctx = { _creds: { token: "sk-live-4f9a2b7c1d" } };
    const tools = {
      whole: (a: Record<string, unknown>) => {
        throw new Error(`token ${String(a.token)} rejected`);
      },
      cut: (a: Record<string, unknown>) => {
        throw new Error(`token ${String(a.token).slice(0, 12)}… rejected`);
      },
    };
    const src = "(def t (:token data/_creds)) (try (tool/whole {:token t}) (catch e nil)) (try (tool/cut {:token t}) (catch e nil))";
    for (const o of [{}, worker()]) {
      const heard: string[] = [];
      const r = await evaluate(src, { ...o, ctx, tools, onToolCall: (c, done) => void (done && heard.push(c.error ?? "")) });
      expect(heard).toEqual(r.toolCalls.map((c) => c.error));
      for (const e of heard) expect(showStandIns(e)).toMatch(/^token <hidden string from data\/_creds :token> rejected$/);
    }
  });

  it("the host's live record hides it JSON-escaped too, and in a refused result's path", async () => {
    // A value with a quote and a newline: JSON.stringify quotes it as ab\"Qz7v...\nHx8r...
    const ctx = { _tok: 'ab"Qz7vLmXw9pK3\nHx8rTy2Wq', _id: "Qz7vLmXw9pK3-id" };
    const tools = {
      login: (a: Record<string, unknown>) => {
        throw new Error(`login refused for ${JSON.stringify(a.creds)}`);
      },
      // The result echoes the argument as a key, over a value that cannot cross: refused, and the refusal names the path.
      lookup: (a: Record<string, unknown>) => ({ [String(a.id)]: { seen: () => 1 } }),
    };
    const src = "(try (tool/login {:creds data/_tok}) (catch e nil)) (try (tool/lookup {:id data/_id}) (catch e nil))";
    const frags = fragments(["Qz7vLmXw9pK3", "Hx8rTy2Wq"]);
    const records: string[][] = [];
    for (const o of [{}, worker()]) {
      const heard: string[] = [];
      const r = await evaluate(src, { ...o, ctx, tools, onToolCall: (c, done) => void (done && heard.push(c.error ?? "")) });
      expect(heard).toEqual(r.toolCalls.map((c) => c.error));
      expect(leaks(heard.join("\n"), frags)).toEqual([]);
      records.push(heard.map(showStandIns));
    }
    expect(records[1]).toEqual(records[0]);
    expect(records[0][1]).toBe("the result of tool/lookup.<hidden string from data/_id>.seen is a function, which cannot cross into the program");
  });
});

describe("isolated mode: tools across the boundary", () => {
  it("a tool result over the limits fails as in process: its kind, counted against the run", async () => {
    const big = Array.from({ length: 3000 }, (_, i) => i);
    const tools = { big: () => big, keys: () => Object.fromEntries(big.map((i) => ["k" + i, i])) };
    for (const [src, limits] of [
      ["(count (tool/big))", { maxCollectionSize: 1000 }],
      ["(count (tool/keys))", { maxCollectionSize: 1000 }],
      ["(count (tool/big))", { maxFuel: 2000 }],
      ["(count (tool/keys))", { maxBoundaryValues: 2000 }],
    ] as const) {
      const a = await evaluate(src, { tools, limits });
      const b = await evaluate(src, worker({ tools, limits }));
      expect(!a.ok && a.error.kind, src).toMatch(/collection_too_large|fuel_exhausted/);
      expect(shown(b), src).toEqual(shown(a));
    }
    // What converting a result spent is the run's: the same fuel in both modes.
    const a = await evaluate("(count (tool/big))", { tools });
    const b = await evaluate("(count (tool/big))", worker({ tools }));
    expect(b.stats.fuelUsed).toBe(a.stats.fuelUsed);
  });


  it("passes arguments and results as data, records calls, and keeps the result's identity in definitions", async () => {
    const tools = { lookup: ({ id }: Record<string, unknown>) => ({ id, tags: new Set(["a"]), at: new Date(0), n: -0 }) };
    const src = "(def r (tool/lookup {:id 7})) [r (:id r)]";
    const a = await evaluate(src, { tools });
    const b = await evaluate(src, worker({ tools }));
    expect(shown(b)).toEqual(shown(a));
    expect(b.toolCalls.map((c) => [c.name, c.args, c.result])).toEqual(a.toolCalls.map((c) => [c.name, c.args, c.result]));
    expect(b.ok && b.toolCalls[0].value).toBe(b.ok && b.defs[0].value);
  });

  it("a tool named like an Object.prototype property (__proto__, constructor) is called in both modes", async () => {
    // As a host gets tool names from JSON (a proxy client's request, an MCP server's list).
    const tools = JSON.parse('{"__proto__": null, "constructor": null}') as Record<string, ToolFn>;
    for (const name of Object.keys(tools)) tools[name] = () => name;
    const src = "[(tool/__proto__) (tool/constructor)]";
    const a = await evaluate(src, { tools });
    expect(a.ok && a.value).toEqual(["__proto__", "constructor"]);
    expect(shown(await evaluate(src, worker({ tools })))).toEqual(shown(a));
  });

  it("tool failures, refused results and timeouts give the same errors in both modes", async () => {
    let cancelled = 0;
    const tools: Record<string, ToolFn | { run: ToolFn; timeoutMs: number }> = {
      boom: () => {
        throw new Error("backend down");
      },
      odd: () => ({ when: new (class Clock {})() }),
      slow: {
        run: (_args, signal) =>
          new Promise((resolve) => {
            signal.addEventListener("abort", () => (cancelled++, resolve(null)));
          }),
        timeoutMs: 50,
      },
    };
    for (const src of ["(tool/boom {:q 1})", "(tool/odd)", "(tool/slow)", '(try (tool/boom) (catch e (str "caught: " (ex-message e))))']) {
      const a = await evaluate(src, { tools });
      const b = await evaluate(src, worker({ tools }));
      expect(shown(b), src).toEqual(shown(a));
      expect(b.toolCalls.map((c) => c.error)).toEqual(a.toolCalls.map((c) => c.error));
    }
    // The host's tool saw its signal fire in both modes.
    expect(cancelled).toBe(2);
  });

  it("pmap's tool calls are in flight at the same time", async () => {
    const n = 5;
    let inFlight = 0;
    let peak = 0;
    let release: () => void = () => undefined;
    const all = new Promise<void>((r) => (release = r));
    const tools = {
      fetch: async ({ i }: Record<string, unknown>) => {
        peak = Math.max(peak, ++inFlight);
        if (inFlight === n) release();
        // Each call answers only once all n are waiting: sequential calls would never finish.
        await all;
        inFlight--;
        return (i as number) * 10;
      },
    };
    const r = await evaluate(`(pmap (fn [i] (tool/fetch {:i i})) (range ${n}))`, worker({ tools, toolTimeoutMs: 30_000 }));
    expect(r.ok && print(r.lisp)).toBe("[0 10 20 30 40]");
    expect(peak).toBe(n);
  });

  it("abort while a tool is pending ends the run and fires the tool's signal", async () => {
    const ac = new AbortController();
    let toolSignal: AbortSignal | null = null;
    const tools = { wait: (_a: Record<string, unknown>, signal: AbortSignal) => ((toolSignal = signal), ac.abort(), new Promise(() => undefined)) };
    const r = await evaluate("(tool/wait)", worker({ tools, signal: ac.signal }));
    expect(r.ok ? "ok" : r.error.kind).toBe("aborted");
    expect((toolSignal as AbortSignal | null)?.aborted).toBe(true);
  });
});

describe("isolated mode: context and memory", () => {
  it("context values, hidden _ keys and refused values read the same in both modes", async () => {
    const ctx = { orders: [{ id: 1, total: 10 }], _token: "sk-secret", bad: { f: new (class Conn {})() }, m: new Map([["a", 1]]) };
    for (const src of ["[data/orders data/_token (:a data/m)]", "(str data/_token)", "data/bad", "(count data/orders)", "data/nope"]) {
      expect(shown(await evaluate(src, worker({ ctx }))), src).toEqual(shown(await evaluate(src, { ctx })));
    }
  });

  it("a refused context value fails where the program reads it, with that line and column, in both modes", async () => {
    const ctx = { bad: { f: new (class Conn {})() }, ok: 1 };
    for (const o of [{ ctx }, worker({ ctx })]) {
      const r = await evaluate("(let [x data/ok]\n  (count data/bad))", o);
      expect(!r.ok && [r.error.kind, r.error.line, r.error.column]).toEqual(["type_error", 2, 10]);
    }
  });

  it("definitions, functions and closures stay from one run to the next", async () => {
    const first = await evaluate("(def n 5) (defn add-n [x] (+ x n)) (def counter (let [base 100] (fn [] base))) (def s (sorted-map :b 2 :a 1))", worker());
    expect(first.ok).toBe(true);
    if (!first.ok) return;
    // On the host a function shows as it prints; its code stays in the worker.
    expect(first.memory.get("add-n")?.value).toBeInstanceOf(Fn);
    const second = await evaluate("[(add-n 1) (counter) (assoc s :c 3)]", worker({ memory: first.memory }));
    expect(second.ok && print(second.lisp)).toBe("[6 100 {:a 1 :b 2 :c 3}]");
    // A failed run changes nothing, and the one after still has the definitions.
    const failed = await evaluate("(def n 6) (/ 1 0)", worker({ memory: first.memory }));
    expect(failed.memory).toBe(first.memory);
    const third = await evaluate("(add-n 2)", worker({ memory: failed.memory }));
    expect(third.ok && print(third.lisp)).toBe("7");
  });

  it("memory survives the loss of its worker: data as data, functions from their source", async () => {
    const first = await evaluate("(def n 5) (defn add-n [x] (+ x n)) (def s (sorted-set 3 1 2))", worker());
    if (!first.ok) throw new Error(first.error.message);
    const { started, tool } = starter();
    const ac = new AbortController();
    const pending = evaluate(SPIN, worker({ tools: { started: tool }, limits: SPIN_LIMITS, signal: ac.signal, memory: first.memory }));
    await started;
    ac.abort();
    expect((await pending).ok).toBe(false);
    const after = await evaluate("[(add-n 1) (conj s 0)]", worker({ memory: first.memory }));
    expect(after.ok ? print(after.lisp) : after.error.message).toBe("[6 #{0 1 2 3}]");
  });

  it("a function rebuilt after its worker is lost reads data/, calls tools and hides what it computes from hidden keys, as in process", async () => {
    const ctx = { xs: [1, 2, 3], _token: "sk-secret-abcdef123" };
    const fetched: number[] = [];
    const { started, tool } = starter();
    const tools: Record<string, ToolFn> = { started: tool, fetch: (args) => (fetched.push(Number(args.n)), Number(args.n) * 10) };
    const defs = "(defn up [s] (clojure.string/upper-case s)) (defn total [] (reduce + data/xs)) (defn fetch10 [n] (tool/fetch {:n n})) (def once (let [v (tool/fetch {:n 1})] (fn [] v)))";
    const program = "(println (up data/_token) (subs (up data/_token) 3)) [(total) (fetch10 4)]";
    const here = await evaluate(defs, { ctx, tools });
    const first = await evaluate(defs, worker({ ctx, tools }));
    if (!here.ok || !first.ok) throw new Error("the definitions did not run");
    // The worker that kept the memory is ended: the next run gets the memory sent whole.
    const ac = new AbortController();
    const pending = evaluate(SPIN, worker({ ctx, tools, limits: SPIN_LIMITS, signal: ac.signal, memory: first.memory }));
    await started;
    ac.abort();
    expect((await pending).ok).toBe(false);
    const after = await evaluate(program, worker({ ctx, tools, memory: first.memory }));
    expect(shown(after)).toEqual(shown(await evaluate(program, { ctx, tools, memory: here.memory })));
    expect(after.ok ? showStandIns(after.prints.join("\n")) : after.error.message).toBe("<hidden string derived from data/_token> <hidden string derived from data/_token>");
    // A definition that called a tool when it was made is not made again: the call would happen twice.
    fetched.length = 0;
    const again = await evaluate("(once)", worker({ ctx, tools, memory: first.memory }));
    expect(again.ok ? "ok" : again.error.message).toMatch(/once cannot be called here: its definition could not be run again/);
    expect(fetched).toEqual([]);
  });

  it("a definition made again after its worker is lost gives what it gave in process, or says why it cannot", async () => {
    // Turns, then a program run with the memory sent whole (a copy of the map: no worker keeps it),
    // against the same turns in process. A function reads a name when called, so one defined
    // before what it calls comes back; a value read while a definition was made and changed since
    // (its own earlier value too) cannot be had again, and the definition says so.
    const cases: ReadonlyArray<readonly [turns: string[], program: string, same: boolean]> = [
      [["(defn helper [] 1) (defn main [] 2)", "(defn helper [] (+ 40 (main)))"], "(helper)", true],
      [["(def x 1) (defn rx [] x)", "(def x 5)"], "(rx)", true],
      [["(defn f [x] (* 2 x))", "(def fs (mapv (fn [i] (fn [] (f i))) (range 3)))"], "((nth fs 2))", true],
      [["(def handlers {:a (fn [] 1)})", "(def handlers2 (assoc handlers :b (fn [] 2)))"], "[((:a handlers2)) ((:b handlers2))]", true],
      [["(defn f [] 1)", "(def f (let [old f] (fn [] (+ 1 (old)))))"], "(f)", false],
      [["(def x 1) (def f (let [y x] (fn [] y)))", "(def x 2)"], "(f)", false],
      [["(defn f [] 1) (def g f)", "(defn f [] 2)"], "(g)", false],
    ];
    for (const [turns, program, same] of cases) {
      let here: EvalResult | undefined;
      let there: EvalResult | undefined;
      for (const t of turns) {
        here = await evaluate(t, { memory: here?.memory });
        there = await evaluate(t, worker({ memory: there?.memory }));
      }
      const expected = await evaluate(program, { memory: here?.memory });
      const after = await evaluate(program, worker({ memory: new Map(there?.memory) }));
      if (same) expect(shown(after), program).toEqual(shown(expected));
      else expect(after.ok ? print(after.lisp) : after.error.message, program).toMatch(/cannot be called here: its definition read (its own earlier value|x|f), which is not what it was then; define it again/);
    }
  });

  it("a function rebuilt after its worker is lost reads context given as JSON text", async () => {
    const ctxJson = JSON.stringify({ xs: [1, 2, 3] });
    const { started, tool } = starter();
    const first = await evaluate("(defn total [] (reduce + data/xs))", worker({ ctxJson, tools: { started: tool } }));
    if (!first.ok) throw new Error(first.error.message);
    const ac = new AbortController();
    const pending = evaluate(SPIN, worker({ ctxJson, tools: { started: tool }, limits: SPIN_LIMITS, signal: ac.signal, memory: first.memory }));
    await started;
    ac.abort();
    expect((await pending).ok).toBe(false);
    const after = await evaluate("(total)", worker({ ctxJson, memory: first.memory }));
    expect(after.ok ? after.value : after.error.message).toBe(6);
  });

  it("memory made in process is usable in a worker, and the other way round", async () => {
    const inProcess = await evaluate("(defn twice [x] (* 2 x)) (def xs [1 2 3])");
    if (!inProcess.ok) throw new Error(inProcess.error.message);
    const there = await evaluate("(def ys (mapv twice xs)) ys", worker({ memory: inProcess.memory }));
    expect(there.ok && print(there.lisp)).toBe("[2 4 6]");
    if (!there.ok) return;
    const back = await evaluate("(conj ys 8)", { memory: there.memory });
    expect(back.ok && print(back.lisp)).toBe("[2 4 6 8]");
  });

  it("shared structure crosses once: a value with 2^40 leaves comes back as the same small graph", async () => {
    const r = await evaluate("(def v (reduce (fn [m _] [m m]) [] (range 40))) (count v)", worker());
    expect(r.ok && print(r.lisp)).toBe("2");
    const v = r.ok ? r.defs[0].value : null;
    // Both halves are one object on the host too.
    expect(v !== null && typeof v === "object" && "get" in v && v.get(0) === v.get(1)).toBe(true);
  });

  // The worker's stack writes deeper than the host's reads back: such a message was dropped
  // unheard (a messageerror) and the run waited for ever, its clock paused once the program ended.
  // Where reading back gives out depends on the host's stack: each depth ends, as the value or
  // as nesting_too_deep, and the deepest fails.
  it("a value nested deeper than the host can read back fails its run (nesting_too_deep), in a definition and in a tool call's arguments", async () => {
    const outcomes: string[] = [];
    for (const depth of [1000, 1800, 2500, 4000]) {
      const def = await evaluate(`(println "before") (def deep (reduce (fn [m _] [m]) [] (range ${depth}))) (count deep)`, worker());
      expect(def.prints).toEqual(["before"]);
      const calls: unknown[] = [];
      const tools = { t: () => (calls.push(1), 1) };
      const call = await evaluate(`(tool/t {:a (reduce (fn [m _] [m]) [] (range ${depth}))})`, worker({ tools, limits: { maxNestingDepth: 100_000 } }));
      expect(calls).toEqual(call.ok ? [1] : []);
      outcomes.push(def.ok ? print(def.lisp) : def.error.kind, call.ok ? print(call.lisp) : call.error.kind);
    }
    for (const o of outcomes) expect(["1", "nesting_too_deep"]).toContain(o);
    expect(outcomes.slice(-2)).toEqual(["nesting_too_deep", "nesting_too_deep"]);
    // The pool still serves runs.
    const next = await evaluate("(+ 1 2)", worker());
    expect(next.ok && print(next.lisp)).toBe("3");
  });

  // The worker's own stack gives out writing the result: it reported the error with no tool calls
  // (a send done, and the feedback no longer said so) and no marks (its stand-ins left unshown).
  it("a run whose value the worker cannot write keeps its tool calls and its marks", async () => {
    const sent: unknown[] = [];
    const r = await evaluate('(println (:t data/_c)) (tool/send {:to "bob"}) (def deep (reduce (fn [m _] [m]) [] (range 10000)))', worker({ ctx: { _c: { t: "K7Z2Q9-B3M8X4-W5R2" } }, tools: { send: (a) => (sent.push(a), "sent") } }));
    expect(r.ok ? "ok" : r.error.kind).toBe("nesting_too_deep");
    expect(sent).toEqual([{ to: "bob" }]);
    expect(r.toolCalls.map((c) => [c.name, c.args, c.result])).toEqual([["send", { to: "bob" }, "sent"]]);
    expect(r.marks).toBeDefined();
    expect(r.prints.map(showStandIns)).toEqual(["<hidden string from data/_c :t>"]);
  });

  // Posting the answer threw on the host's stack (a result nested deeper than it copies, under a
  // raised maxNestingDepth; where depends on the host's stack, so the overflow is made here), in a
  // promise callback nobody awaited: the host's process ended with an uncaught RangeError.
  it("a tool's result the host cannot post to the worker fails the call (nesting_too_deep); the host's process goes on", async () => {
    const post = PoolWorker.prototype.post;
    const spy = vi.spyOn(PoolWorker.prototype, "post").mockImplementation(function (this: PoolWorker, m) {
      if (m.type === "answer" && m.value !== undefined) throw new RangeError("Maximum call stack size exceeded");
      post.call(this, m);
    });
    try {
      // As a result past maxNestingDepth does in process: a limit, which no try catches.
      const r = await evaluate('(println "before") (try (tool/t) (catch e (println "caught")))', worker({ tools: { t: () => [[1]] } }));
      expect(r.ok ? "ok" : [r.error.kind, r.error.message]).toEqual(["nesting_too_deep", "the result of tool/t is nested too deeply to reach the program's worker thread"]);
      expect(r.prints).toEqual(["before"]);
      expect(r.toolCalls.map((c) => c.error)).toEqual(["the result of tool/t is nested too deeply to reach the program's worker thread"]);
    } finally {
      spy.mockRestore();
    }
    const next = await evaluate("(count (tool/t))", worker({ tools: { t: () => [[1]] } }));
    expect(next.ok && print(next.lisp)).toBe("1");
  });

  it("a long string crosses once however often it is reached, in a definition and in the message itself", async () => {
    // 2,000 references to one 100,000-character string: 200 MB if every reference were copied.
    const r = await evaluate('(def v (let [s (apply str (repeat 100000 "x"))] (vec (repeat 2000 s)))) (count v)', worker());
    expect(r.ok && print(r.lisp)).toBe("2000");
    const v = r.ok ? (r.defs[0].value as unknown as { get(i: number): string }) : null;
    expect(v?.get(0).length).toBe(100_000);
    const s = "y".repeat(300);
    const writer = new WireWriter(false);
    const wire = writer.write(Vec.fromArray([s, s, keyword(s), keyword(s), "short", "short"]));
    // The wire says each long text once: the rest are references to it.
    expect(JSON.stringify(wire).length).toBeLessThan(2 * s.length + 200);
    const back = new WireReader().read(wire);
    expect(print(back)).toBe(print(Vec.fromArray([s, s, keyword(s), keyword(s), "short", "short"])));
  });

  it("text crossing the boundary is bounded in total, a shared string counted each time (maxBoundaryChars)", async () => {
    const s = "z".repeat(1000);
    const limits = { maxBoundaryChars: 50_000 };
    const cases: Array<[string, EvaluateOptions, RegExp]> = [
      ["(count data/xs)", { ctx: { xs: new Array(60).fill(s) }, limits }, /^data\/xs holds more than 50000 characters/],
      ["(count data/m)", { ctx: { m: Object.fromEntries(Array.from({ length: 60 }, (_, i) => [s + i, 1])) }, limits }, /^data\/m holds more than 50000 characters/],
      ["(count (tool/t))", { tools: { t: () => new Array(60).fill(s) }, limits }, /^the result of tool\/t holds more than 50000 characters/],
      ['(let [s (apply str (repeat 1000 "z"))] (vec (repeat 60 s)))', { limits }, /its strings hold more than 50000 characters/],
      ['(let [s (apply str (repeat 1000 "z"))] (zipmap (map #(str s %) (range 60)) (range 60)))', { limits }, /its strings hold more than 50000 characters/],
      ['(let [k (keyword (apply str (repeat 1000 "z")))] (vec (repeat 60 k)))', { limits }, /its strings hold more than 50000 characters/],
      ['(let [s (apply str (repeat 1000 "z"))] (tool/t {:xs (vec (repeat 60 s))}))', { tools: { t: () => 1 }, limits }, /its strings hold more than 50000 characters/],
    ];
    for (const [src, options, message] of cases) {
      for (const o of [options, worker(options)]) {
        const r = await evaluate(src, o);
        expect(!r.ok && r.error.kind, src).toBe("string_too_large");
        expect(!r.ok && r.error.message, src).toMatch(message);
        expect(!r.ok && r.error.message, src).toMatch(/\(maxBoundaryChars\)/);
      }
    }
    // Under the limit, the same data crosses.
    const r = await evaluate("(count data/xs)", { ctx: { xs: new Array(40).fill(s) }, limits });
    expect(r.ok && r.value).toBe(40);
  });

  it("bad isolation options are a value_error naming the option", async () => {
    const r = await evaluate("1", { isolation: { mode: "worker", maxHeapMb: 1 } });
    expect(!r.ok && r.error.kind).toBe("value_error");
    expect(!r.ok && r.error.message).toContain("isolation.maxHeapMb");
  });
});

describe("isolated mode: same results as in process", () => {
  const ctx = { orders: [{ id: 1, total: 10 }, { id: 2, total: 25 }] };
  // No case depends on the clock; a far time limit keeps a loaded machine from making one.
  const limits = { timeoutMs: 60_000 };
  it("every .lisp case gives the same value, prints and error (kind, message, position, hint)", async () => {
    let compared = 0;
    for (const [file, cases] of caseFiles()) {
      for (const c of cases) {
        const a = await evaluate(c.source, { ctx, limits });
        const b = await evaluate(c.source, worker({ ctx, limits }));
        expect(shown(b), `${file}:${c.line}`).toEqual(shown(a));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(300);
  });

  it("generated programs, well-formed and not, give the same results", async () => {
    const sources = [...fc.sample(program, { seed: 19, numRuns: 150 }), ...fc.sample(form, { seed: 19, numRuns: 150 }).map((f) => `(let [xs [3 1 2]] ${f})`)];
    for (const src of sources) expect(shown(await evaluate(src, worker({ limits }))), src).toEqual(shown(await evaluate(src, { limits })));
  });
});

describe("listeners: onPrint and onToolCall hear the same in both modes", () => {
  const run = async (o: EvaluateOptions): Promise<{ r: EvalResult; lines: string[]; events: Array<[string, boolean, unknown]> }> => {
    const lines: string[] = [];
    const events: Array<[string, boolean, unknown]> = [];
    const r = await evaluate('(println "before") (tool/echo {:x 1}) (dotimes [i 50] (println "line" i "xxxxxxxxxxxxxxxxxxxx"))', {
      ...o,
      tools: { echo: (a) => a },
      limits: { maxOutputChars: 300 },
      onPrint: (l) => lines.push(l),
      onToolCall: (c, done) => events.push([c.name, done, c.args]),
    });
    return { r, lines, events };
  };

  it("print listeners stop where the output limit cuts in; tool listeners hear each call start and end", async () => {
    const here = await run({});
    const there = await run(worker());
    for (const { r, lines, events } of [here, there]) {
      expect(r.ok).toBe(true);
      // The lines heard are those written until the output limit cut in: within it, in order.
      const written = ["before", ...Array.from({ length: 50 }, (_, i) => `line ${i} xxxxxxxxxxxxxxxxxxxx`)];
      expect(lines.length).toBeGreaterThan(1);
      expect(lines).toEqual(written.slice(0, lines.length));
      expect(lines.join("").length).toBeLessThanOrEqual(300);
      expect(lines.join("").length + written[lines.length].length).toBeGreaterThan(300);
      expect(r.prints.at(-1)).toBe(written[50]);
      expect(events).toEqual([
        ["echo", false, { x: 1 }],
        ["echo", true, { x: 1 }],
      ]);
    }
    expect(there.lines).toEqual(here.lines);
    expect(there.r.prints).toEqual(here.r.prints);
  });
});
