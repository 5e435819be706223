// Saving a run (trace, memory, summaries) and resuming it: round trips, view rebuilding,
// memory restoration, and replay that catches a changed context.
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { Llm } from "../../src/llm/types.js";
import { restoreMemory, resumeRun, saveMemory, saveRun, stateView, type ResumeOptions } from "../../src/agent/resume.js";
import { ResumeError, runStateFromJson, runStateToJson, type RunState } from "../../src/trace/run-state.js";
import { traceFromJson, traceToJson } from "../../src/trace/serialize.js";
import { SubAgent } from "../../src/agent/subagent.js";
import type { Agent } from "../../src/agent/types.js";
import { tool } from "../../src/agent/tools.js";
import { compressedView } from "../../src/history/compressed.js";
import { fullView } from "../../src/history/full.js";
import { summaryLegend } from "../../src/history/legend.js";
import { defaultViewOptions } from "../../src/history/view.js";
import { evaluate, print } from "../../src/lisp/evaluate.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { answersBFirst } from "../support/reorder.js";

const clj = (prose: string, code: string): string => `${prose} Keeping the program short and printing only what I need.\n\n\`\`\`clojure\n${code}\n\`\`\``;

const orders = [
  { id: 1, customer: "acme", total: 120.5 },
  { id: 2, customer: "globex", total: 80 },
  { id: 3, customer: "acme", total: 42.25 },
];

function setup() {
  const calls: string[] = [];
  const tools = {
    "customer-info": tool({
      description: "Customer record by id.",
      input: z.object({ id: z.string() }),
      run: ({ id }) => {
        calls.push(id);
        if (id === "nobody") throw new Error("no such customer");
        return { id, tier: id === "acme" ? "gold" : "silver", since: 2019 };
      },
    }),
  };
  const make = (maxTurns: number) => SubAgent.create({ prompt: "Total order value per customer tier", tools, output: z.record(z.string(), z.number()), maxTurns });
  const replies = [
    // (Reasoning the summary leaves out: in a budget of 3 the first summary must repay the legend.)
    clj("Look at the orders. I will total them per customer first, so that the tiers can be compared once the customers are fetched, and keep the totals for the next turns.", `(def by-customer "Order totals per customer" (reduce (fn [m o] (update m (:customer o) (fnil + 0) (:total o))) {} data/orders))\n(println by-customer)`),
    clj(
      "Fetch the customers: one call per customer, kept by id, and one for a customer that does not exist, to see what a failure looks like.",
      `(def info (into {} (map (fn [c] [c (tool/customer-info {:id c})]) (keys by-customer))))
(def missing (try (tool/customer-info {:id "nobody"}) (catch e (str "failed: " (ex-message e)))))
(defn tier-of "Tier of a customer" [c] (get-in info [c :tier]))
(println (count info) missing)`,
    ),
    clj("Group by tier.", `(def by-tier (reduce (fn [m [c t]] (update m (tier-of c) (fnil + 0) t)) {} by-customer))\n(println by-tier)`),
    clj("Return it.", "(return by-tier)"),
  ];
  return { calls, make, replies, context: { orders } };
}

describe("run state", () => {
  it("saves trace, memory and summaries, and reads them back", async () => {
    const { make, replies, context } = setup();
    const agent = make(3);
    const step = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 3)), context, compressHistory: true });
    expect(step.ok).toBe(false);
    expect(step.fail?.reason).toBe("max_turns_exceeded");
    const state = saveRun(step, agent, { compressHistory: true });
    expect(state.memory.map((d) => d.name)).toEqual(["by-customer", "info", "missing", "tier-of", "by-tier"]);
    expect(state.memory.find((d) => d.name === "tier-of")).toMatchObject({ kind: "function", doc: "Tier of a customer" });
    expect(state.memory.find((d) => d.name === "tier-of")?.source).toMatch(/^\(defn tier-of/);
    // Every turn is summarized (turn 2's function source followed its summary for one prompt only).
    expect(state.summaries.map((s) => s.turn)).toEqual([1, 2, 3]);
    expect(state.summaries[1].text).toMatch(/^; Function: tier-of \[/);
    expect(state.summaries[1].text).not.toContain("(defn");
    expect(state.summaries[0].text).toBe('; Defined: by-customer - "Order totals per customer" = map[2]\n; Output:\n{"acme" 162.75 "globex" 80}');
    // Tool results may hold non-finite numbers; they survive the trip.
    const odd = structuredClone(state);
    odd.trace.turns[1].toolCalls[0].result = { score: Infinity, low: -Infinity };
    expect(runStateFromJson(runStateToJson(odd)).trace.turns[1].toolCalls[0].result).toEqual({ score: Infinity, low: -Infinity });
    const back = runStateFromJson(runStateToJson(state, 2));
    expect(back.trace).toEqual(state.trace);
    expect(back.memory).toEqual(state.memory);
    expect(back.summaries).toEqual(state.summaries);
    expect(back.view).toEqual(state.view);
    expect(stateView(back, "full")).toEqual(fullView({ system: step.trace.system, task: step.trace.task, turns: step.turns, maxTurns: 3, toolsWithdrawn: true, maxPrintChars: 4000 }, state.view));
    const compressed = stateView(back, "compressed");
    expect(compressed.messages[2].content.startsWith(`${summaryLegend()}\n${state.summaries[0].text}`)).toBe(true);
    expect(compressed.turns?.filter((p) => state.summaries.some((x) => x.turn === p.turn)).map((p) => p.text)).toEqual(state.summaries.map((x) => x.text));
    expect(compressed).toEqual(compressedView({ system: step.trace.system, task: step.trace.task, turns: step.turns, maxTurns: 3, toolsWithdrawn: true, maxPrintChars: 4000 }, state.view));
  });

  it("saves a finished run's answer as an export: hidden context in it as stand-ins, a BigInt kept", async () => {
    const secret = SubAgent.create({ prompt: "Go", maxTurns: 1 });
    const hidden = await SubAgent.run(secret, { llm: scriptedLlm([clj("Key.", '(return {:key (str "k-" data/_apiKey)})')]), context: { _apiKey: "sk-live-1234" }, isolation: "none" });
    expect(hidden.value).toEqual({ key: "k-sk-live-1234" });
    const json = runStateToJson(saveRun(hidden, secret));
    expect(json).not.toContain("sk-live-1234");
    expect(runStateFromJson(json).outcome).toEqual({ ok: true, value: hidden.trace.turns[0].value });
    const big = SubAgent.create({ prompt: "Go", maxTurns: 1, output: z.object({ id: z.string().transform((s) => BigInt(s)) }) });
    const step = await SubAgent.run(big, { llm: scriptedLlm([clj("Id.", '(return {:id "12"})')]), isolation: "none" });
    expect(runStateFromJson(runStateToJson(saveRun(step, big))).outcome).toEqual({ ok: true, value: { id: 12n } });
  });

  it("rejects what is not a run state, saying where", () => {
    const state = {
      format: "ptc-lisp.run-state",
      version: 1,
      maxTurns: 2,
      view: { compressHistory: true, printlnHistoryLimit: 15, errorContextTurns: 1, sampleItems: 3, sampleChars: 80, strictPrefix: false },
      toolsWithdrawn: false,
      maxPrintChars: 4000,
      outcome: { ok: false, reason: "aborted", message: "stop" },
      trace: { version: 1, system: "s", task: "t", turns: [] },
      memory: [],
      summaries: [],
    } as const;
    expect(() => runStateFromJson("{")).toThrow(ResumeError);
    expect(() => runStateFromJson(JSON.stringify({ ...state, maxTurns: 0 }))).toThrow(/at maxTurns/);
    expect(() => runStateFromJson(JSON.stringify({ ...state, trace: { version: 1, system: 1 } }))).toThrow(/system/);
  });

  // JSON keys become keywords whatever they hold; saved as `{:first name "Al"}`, such a map failed to
  // restore ("unexpected ' '") and its value was lost.
  it("restores a map whose keys the reader cannot read as keywords", async () => {
    const run = await evaluate(`(def row {(keyword "first name") "Al" (keyword "") 2 (keyword "a,b") 3 :ok [(keyword "x y")]})`);
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    const memory = await restoreMemory(JSON.parse(JSON.stringify(saveMemory(run.memory))));
    const back = await evaluate(`[(get row (keyword "first name")) (get row (keyword "")) (get row (keyword "a,b")) (count row) (= (first (:ok row)) (keyword "x y"))]`, { memory });
    expect(back.ok ? back.value : back.error.message).toEqual(["Al", 2, 3, 4, true]);
  });

  // Saved as `#{1 2 3}` and `{1 :b 3 :a}`, a sorted set or map came back a hash one: what was
  // added after the resume fell out of order (`(conj s 0)` gave #{1 2 3 0}).
  it("restores sorted maps and sets sorted, in their order, nested too", async () => {
    const run = await evaluate(`(def s (sorted-set 3 1 2))
(def m (sorted-map 3 :a 1 :b))
(def d (sorted-set-by > 3 1 2))
(def big (into (sorted-map) (map (fn [i] [i (str i)]) (range 20))))
(def nested {:in [(sorted-set "b" "a")] (sorted-map-by >= 1 2 3 4) :k})`);
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    const memory = await restoreMemory(JSON.parse(JSON.stringify(saveMemory(run.memory))));
    const program = `[(conj s 0) (assoc m 2 :c) (conj d 0 4) (first (assoc big -1 "x")) (conj (first (:in nested)) "0") (assoc (first (keys (dissoc nested :in))) 2 0)]`;
    const before = await evaluate(program, { memory: run.memory });
    const after = await evaluate(program, { memory });
    expect(before.ok && print(before.lisp)).toBe(`[#{0 1 2 3} {1 :b 2 :c 3 :a} #{4 3 2 1 0} [-1 "x"] #{"0" "a" "b"} {3 4 2 0 1 2}]`);
    expect(after.ok ? print(after.lisp) : after.error.message).toBe(before.ok && print(before.lisp));
  });

  // Saved as EDN, a collection sorted by the program's own comparator came back a hash one: what
  // was added after the restore fell out of order (`(conj s 0 4)` gave #{3 2 1 0 4}).
  it("restores collections sorted by the program's own comparator in that order, nested and big too", async () => {
    const run = await evaluate(`(def by-len (fn [a b] (compare (count a) (count b))))
(def s (sorted-set-by by-len "ccc" "a" "bb"))
(def d (sorted-set-by (fn [a b] (compare b a)) 3 1 2))
(def m (sorted-map-by (fn [a b] (compare b a)) 1 :a 2 :b))
(def n {:k [(sorted-set-by (fn [a b] (> a b)) 1 2)]})
(def big (into (sorted-set-by (fn [a b] (compare b a))) (range 100)))`);
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    const saved = saveMemory(run.memory);
    // Code, not data: each is made again from its source.
    expect(saved.filter((d) => d.kind === "function").map((d) => d.name)).toEqual(["by-len", "s", "d", "m", "n", "big"]);
    const memory = await restoreMemory(JSON.parse(JSON.stringify(saved)));
    const program = `[(conj s "dddd" "") (conj d 0 4) (assoc m 3 :c) (conj (first (:k n)) 0 3) (take 3 (conj big 100))]`;
    const before = await evaluate(program, { memory: run.memory });
    const after = await evaluate(program, { memory });
    expect(before.ok && print(before.lisp)).toBe(`[#{"" "a" "bb" "ccc" "dddd"} #{4 3 2 1 0} {3 :c 2 :b 1 :a} #{3 2 1 0} [100 99 98]]`);
    expect(after.ok ? print(after.lisp) : after.error.message).toBe(before.ok && print(before.lisp));
  });

  // A run's memory comes back from the worker (SubAgent's default) as data: a collection sorted by
  // the program's comparator came to the host as a hash set (small) or one in compare's order
  // (large), saved so and used so in process ((subseq big < 5) gave nil, not its 14 elements).
  it.each(["worker", "none"] as const)("keeps a run's collections sorted by the program's comparator in their order, or says it cannot (isolation %s)", async (isolation) => {
    const code = (body: string): string => "```clojure\n" + body + "\n```";
    const agent = SubAgent.create({ prompt: "Go.", maxTurns: 3 });
    const defs = "(def d (sorted-set-by (fn [a b] (compare b a)) 3 1 2))\n(def big (into (sorted-set-by (fn [a b] (compare b a))) (range 20)))";
    const step = await SubAgent.run(agent, { isolation, llm: scriptedLlm([code(defs), code("(return 1)")]) });
    const program = "[(conj d 0 4) (take 3 (conj big 25)) (count (subseq big < 5))]";
    const memory = await restoreMemory(JSON.parse(JSON.stringify(saveMemory(step.memory))));
    const restored = await evaluate(program, { memory });
    expect(restored.ok ? print(restored.lisp) : restored.error.message).toBe("[#{4 3 2 1 0} [25 19 18] 14]");
    // The step's own memory, used in process: right, or an error naming the comparator, never another order.
    const used = await evaluate(program, { memory: step.memory });
    if (used.ok) expect(print(used.lisp)).toBe("[#{4 3 2 1 0} [25 19 18] 14]");
    else expect(used.error).toMatchObject({ kind: "not_callable", message: expect.stringContaining("comparator") });
  });

  it("says which definition it cannot make again when a sorted collection's source called a tool", async () => {
    const run = await evaluate(`(def s (into (sorted-set-by (fn [a b] (compare b a))) (tool/rows)))`, { tools: { rows: { run: async () => [1, 2, 3] } } });
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    // Never a set that says it is sorted and is not: the restore names the definition instead.
    await expect(restoreMemory(JSON.parse(JSON.stringify(saveMemory(run.memory))), { tools: { rows: {} } })).rejects.toThrow(/cannot restore s: .*tool\/rows is not called again/);
  });

  it("restores memory from EDN and source", async () => {
    const run = await evaluate(`(def xs "numbers" [1 2.5 {:a #{:k}} "s" nil true])
(def inf [##Inf 1.0])
(defn twice "double" [x] (* 2 x))
(defn sum-xs [] (reduce + (map twice [1 2])))
(def ops {:twice twice :inc (fn [x] (inc x))})`);
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    const saved = saveMemory(run.memory);
    // A map of functions is code, not data: it is saved as its source (as EDN it read `#fn[...]`).
    expect(saved.find((d) => d.name === "ops")).toMatchObject({ kind: "function", source: "(def ops {:twice twice :inc (fn [x] (inc x))})" });
    const memory = await restoreMemory(JSON.parse(JSON.stringify(saved)));
    expect([...memory.keys()].sort()).toEqual(["inf", "ops", "sum-xs", "twice", "xs"]);
    const ops = await evaluate("[((:twice ops) 4) ((:inc ops) 1)]", { memory });
    expect(ops.ok ? ops.value : ops.error.message).toEqual([8, 2]);
    expect(print(memory.get("xs")?.value)).toBe(print(run.memory.get("xs")?.value));
    expect(memory.get("xs")?.doc).toBe("numbers");
    const check = await evaluate("(sum-xs)", { memory });
    expect(check.ok && check.value).toBe(6);
    await expect(restoreMemory([{ name: "f", kind: "function" }])).rejects.toThrow(/source was not saved/);
    await expect(restoreMemory([{ name: "x", kind: "value", edn: "(+ 1" }])).rejects.toThrow(ResumeError);
  });

  // An untyped host's slip (the whole state, its JSON text, null) met a raw TypeError: "saved.filter is not a function".
  it.each([
    ["null", null, "got null"],
    ["a run state's JSON text", "{}", "got a string: read it with runStateFromJson and pass its memory"],
    ["a whole run state", { format: "ptc-lisp.run-state", memory: [] }, "got an object: pass the state's memory"],
    ["an entry that is not a definition", [null], "got an entry that is not one: 0: expected object, received null"],
  ])("refuses to restore %s, naming what it expects", async (_what, saved, got) => {
    await expect(restoreMemory(saved as never)).rejects.toThrow(new ResumeError(`restoreMemory expects saved definitions (saveMemory's result, or a RunState's memory), ${got}`));
  });

  it("restores functions that read the context or call tools, given what the runs that use them have", async () => {
    const ctx = { xs: [1, 2, 3], _token: "sk-live-restore-7f3a9c21" };
    const fetched: unknown[] = [];
    const tools = { fetch: (args: Record<string, unknown>) => (fetched.push(args), Number(args.n) * 10) };
    const run = await evaluate("(defn total [] (reduce + data/xs)) (defn fetch10 [n] (tool/fetch {:n n})) (defn up [s] (clojure.string/upper-case s))", { ctx, tools });
    if (!run.ok) throw new Error(run.error.message);
    const saved = saveMemory(run.memory);
    await expect(restoreMemory(saved)).rejects.toThrow(/cannot restore total: data\/xs is not available/);
    const memory = await restoreMemory(saved, { ctx, tools });
    const r = await evaluate("(println (up data/_token)) [(total) (fetch10 4)]", { ctx, tools, memory });
    expect(r.ok ? [r.value, showStandIns(r.prints.join())] : r.error.message).toEqual([[6, 40], "<hidden string derived from data/_token>"]);
    // A definition that called a tool while being made is not made again: the call would happen twice.
    const once = await evaluate("(def g (let [v (tool/fetch {:n 1})] (fn [] v)))", { tools });
    if (!once.ok) throw new Error(once.error.message);
    fetched.length = 0;
    await expect(restoreMemory(saveMemory(once.memory), { tools })).rejects.toThrow(/cannot restore g: .*tool\/fetch is not called again/);
    expect(fetched).toEqual([]);
  });

  it("saves a value too big to print without its EDN, instead of throwing; restoring it says why", async () => {
    // 3,000 references to one 1M-character string: 3 GB as EDN.
    const run = await evaluate('(def big (let [s (apply str (repeat 1000 (apply str (repeat 1000 "x"))))] (vec (repeat 3000 s)))) (def small 1)');
    expect(run.ok).toBe(true);
    if (!run.ok) return;
    const saved = saveMemory(run.memory);
    expect(saved.find((d) => d.name === "big")).toMatchObject({ name: "big", kind: "value" });
    expect(saved.find((d) => d.name === "big")?.edn).toBeUndefined();
    expect(saved.find((d) => d.name === "small")?.edn).toBe("1");
    await expect(restoreMemory(saved)).rejects.toThrow(/cannot restore big: its value was not saved \(it prints to more than/);
  });
});

// A print cap a run takes must be one its saved files read back: maxPrintChars Infinity (no cap)
// ran, but its trace and state were refused ('at maxPrintChars: expected number, received
// Infinity'), and saveRun wrote a state with a cap of -5 that no resume could read.
describe("the print cap as saved", () => {
  it("reads back a run with maxPrintChars Infinity, its trace and its state, and resumes it", async () => {
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none" });
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm([clj("Start.", '(def a 1)\n(println (apply str (repeat 5000 "x")))')]), maxPrintChars: Infinity });
    expect(stopped.fail?.reason).toBe("llm_error");
    expect(stopped.trace.settings?.maxPrintChars).toBe(Infinity);
    expect(traceFromJson(traceToJson(stopped.trace)).settings?.maxPrintChars).toBe(Infinity);
    const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
    expect(state.maxPrintChars).toBe(Infinity);
    const step = await resumeRun(agent, state, { llm: scriptedLlm([clj("Done.", "(return a)")]) });
    expect(step.ok ? step.value : step.fail.message).toBe(1);
  });

  it.each([[-5, "-5"], [Number.NaN, "NaN"], ["x", '"x"']])("saveRun refuses maxPrintChars %s rather than save a state no resume reads", async (cap, shown) => {
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none" });
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm([clj("Start.", "(def a 1)")]) });
    expect(() => saveRun(stopped, agent, { maxPrintChars: cap as number })).toThrow(new TypeError(`maxPrintChars must be a positive number, got ${shown}`));
    // No options at all (null from an untyped host) is the run's own settings.
    expect(runStateFromJson(runStateToJson(saveRun(stopped, agent, null as never))).maxPrintChars).toBe(4000);
  });
});

describe("resumeRun", () => {
  it("continues a stopped run without calling the tools of saved turns again", async () => {
    const { calls, make, replies, context } = setup();
    const first = make(3);
    const stopped = await SubAgent.run(first, { llm: scriptedLlm(replies.slice(0, 3)), context, compressHistory: true });
    expect(calls).toEqual(["acme", "globex", "nobody"]);
    const state = runStateFromJson(runStateToJson(saveRun(stopped, first, { compressHistory: true })));
    const live = scriptedLlm(replies.slice(3));
    const step = await resumeRun(make(6), state, { llm: live, context, compressHistory: true });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toEqual({ gold: 162.75, silver: 80 });
    expect(calls).toEqual(["acme", "globex", "nobody"]);
    expect(step.turns.map((t) => t.program)).toEqual(stopped.turns.map((t) => t.program).concat(["(return by-tier)"]));
    expect(step.turns.slice(0, 3).map((t) => t.prints)).toEqual(stopped.turns.map((t) => t.prints));
    // The live LLM saw the compressed history of the replayed turns.
    expect(live.requests).toHaveLength(1);
    const sent = live.requests[0].messages;
    // The saved summaries, in one message headed by the legend (the latest with its note).
    expect(state.summaries.map((x) => x.turn)).toEqual([1, 2, 3]);
    expect(sent[2].content).toBe(`${summaryLegend()}\n${state.summaries.map((x) => x.text).join("\n\n")}`);
    expect(state.summaries[2].text).toMatch(/\n; Note: Group by tier\./);
    expect(state.summaries[1].text).toContain("; Tool: customer-info {:id \"nobody\"} -> error: no such customer");
    expect(state.summaries[2].text).toMatch(/^; Defined: by-tier = map\[2\]\n; Output:/);
  });

  it("resumes a run aborted during a tool call by running the cut turn's program again", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    const ctl = new AbortController();
    const calls: string[] = [];
    const lookup = tool({
      description: "Length of a word.",
      input: z.object({ q: z.string() }),
      run: ({ q }) => {
        calls.push(q);
        if (q === "worlds" && calls.length === 2) ctl.abort();
        return { n: q.length };
      },
    });
    const agent = SubAgent.create({ prompt: "Add the lengths.", tools: { lookup }, maxTurns: 4 });
    const replies = [code('(def a (tool/lookup {:q "hello"}))'), code('(def b (tool/lookup {:q "worlds"}))'), code("(return (+ (:n a) (:n b)))")];
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 2)), signal: ctl.signal });
    expect(stopped.fail?.reason).toBe("aborted");
    const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
    const live = scriptedLlm(replies.slice(2));
    const step = await SubAgent.resume(agent, state, { llm: live });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toBe(11);
    // The first turn's call is replayed; the cut turn's saved program runs again, and its call, which the cut stopped, runs live.
    expect(calls).toEqual(["hello", "worlds", "worlds"]);
    expect(live.requests).toHaveLength(1);
    expect(step.turns.map((t) => t.program)).toEqual(['(def a (tool/lookup {:q "hello"}))', '(def b (tool/lookup {:q "worlds"}))', "(return (+ (:n a) (:n b)))"]);
  });

  it("resumes a run whose deadline passed during a tool call by running the cut turn's program again, in either isolation", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    for (const isolation of ["none", "worker"] as const) {
      const calls: string[] = [];
      let late = true;
      const lookup = tool({
        description: "Length of a word.",
        input: z.object({ q: z.string() }),
        run: ({ q }) => {
          calls.push(q);
          // The run's clock passes its deadline while this call is in flight (fake timers: no wait).
          if (q === "worlds" && late) vi.advanceTimersByTime(60_000);
          return { n: q.length };
        },
      });
      const agent = SubAgent.create({ prompt: "Add the lengths.", tools: { lookup }, maxTurns: 4 });
      const replies = [code('(def a (tool/lookup {:q "hello"}))'), code('(def b (tool/lookup {:q "worlds"}))'), code("(return (+ (:n a) (:n b)))")];
      vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
      let stopped;
      try {
        stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 2)), deadlineMs: 30_000, isolation });
      } finally {
        vi.useRealTimers();
      }
      expect(stopped.fail?.reason).toBe("deadline_exceeded");
      late = false;
      const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
      const live = scriptedLlm(replies.slice(2));
      const step = await SubAgent.resume(agent, state, { llm: live, isolation });
      expect(step.ok ? step.value : step.fail.message).toBe(11);
      // The first turn's call is replayed; the cut turn's saved program runs again, and its call, which the cut stopped, runs live.
      expect(calls).toEqual(["hello", "worlds", "worlds"]);
      expect(live.requests).toHaveLength(1);
    }
  });

  it("resumes a run whose deadline cut a computing program's time limit by running the cut turn's program again", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    // A time limit longer than the deadline: the run cuts it to what is left of the deadline.
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 4, limits: { timeoutMs: 120_000 } });
    const replies = [code("(def a 1)"), code('(println "counting")\n(def n (loop [i 0] (if (< i 100000) (recur (inc i)) i)))'), code("(return n)")];
    // The clock passes the deadline while the program computes, after its line is printed (fake clocks: no wait).
    vi.useFakeTimers({ toFake: ["Date", "performance"] });
    let stopped;
    try {
      const onEvent = (e: { type: string }): void => void (e.type === "print" && vi.advanceTimersByTime(120_000));
      stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 2)), deadlineMs: 60_000, isolation: "none", onEvent });
    } finally {
      vi.useRealTimers();
    }
    expect(stopped.fail?.reason).toBe("deadline_exceeded");
    expect(stopped.turns.map((t) => t.error?.kind)).toEqual([undefined, "timeout"]);
    const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
    const live = scriptedLlm(replies.slice(2));
    const step = await SubAgent.resume(agent, state, { llm: live, isolation: "none" });
    expect(step.ok ? step.value : step.fail.message).toBe(100000);
    expect(step.turns[1].prints).toEqual(["counting"]);
    // The cut turn's saved program ran again: the model was asked only for the turn after it.
    expect(live.requests).toHaveLength(1);
  });

  it("resumes a run aborted after a tool call had finished without running that call again, in either isolation", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    for (const isolation of ["none", "worker"] as const) {
      let runs = 0;
      const charge = tool({ description: "Charge the card.", input: z.object({ amount: z.number() }), run: ({ amount }) => (runs++, { charged: amount, receipt: `r-${runs}` }) });
      const agent = SubAgent.create({ prompt: "Charge 5.", tools: { charge }, maxTurns: 4 });
      // The program charges, then works on; the host aborts once the charge is done.
      const replies = [code('(def r (tool/charge {:amount 5}))\n(println "charged" (:receipt r))\n(def more (tool/charge {:amount 1}))'), code("(return [(:receipt r) (:receipt more)])")];
      for (const at of ["tool-result", "print"] as const) {
        runs = 0;
        const ctl = new AbortController();
        const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 1)), signal: ctl.signal, isolation, onEvent: (e) => void (e.type === at && ctl.abort()) });
        expect(stopped.fail?.reason).toBe("aborted");
        expect(runs).toBe(1);
        const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
        const live = scriptedLlm(replies.slice(1));
        const step = await SubAgent.resume(agent, state, { llm: live, isolation });
        // The cut turn's program goes on from its saved reply: the finished charge answers from its record, the rest runs live.
        expect(step.ok ? step.value : step.fail.message, `${isolation} ${at}`).toEqual(["r-1", "r-2"]);
        expect(runs, `${isolation} ${at}`).toBe(2);
        expect(step.turns[0].prints).toEqual(["charged r-1"]);
        expect(step.turns[0].program).toBe(stopped.turns[0].program);
        expect(live.requests).toHaveLength(1);
      }
    }
  });

  it("keeps the cut turn's finished calls when the resumed run is cut again before its program reaches them", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    for (const isolation of ["none", "worker"] as const) {
      let runs = 0;
      const charge = tool({ description: "Charge.", input: z.object({ amount: z.number() }), run: ({ amount }) => (runs++, { charged: amount }) });
      const agent = SubAgent.create({ prompt: "Charge.", tools: { charge }, maxTurns: 3 });
      const replies = [code('(def r (tool/charge {:amount 5}))\n(println "charged")'), code("(return r)")];
      const abortAt = (type: string, ctl: AbortController) => (e: { type: string }) => void (e.type === type && ctl.abort());
      const first = new AbortController();
      let state = saveRun(await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 1)), signal: first.signal, isolation, onEvent: abortAt("tool-result", first) }), agent);
      // Cut again as the cut turn's program starts, before it calls the tool: a state saved then still holds the finished call.
      const second = new AbortController();
      const again = await SubAgent.resume(agent, runStateFromJson(runStateToJson(state)), { llm: scriptedLlm(replies.slice(1)), signal: second.signal, isolation, onEvent: abortAt("program", second) });
      expect(again.fail?.reason).toBe("aborted");
      state = saveRun(again, agent);
      const step = await SubAgent.resume(agent, runStateFromJson(runStateToJson(state)), { llm: scriptedLlm(replies.slice(1)), isolation });
      expect(step.ok ? step.value : step.fail.message).toEqual({ charged: 5 });
      expect(runs).toBe(1);
    }
  });

  it("resumes a run aborted during its output check as a cut turn: the check runs again, the finished call does not", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    for (const confirmed of [true, false]) {
      let runs = 0;
      let slow = true;
      const ctl = new AbortController();
      const charge = tool({ description: "Charge.", input: z.object({ amount: z.number() }), run: ({ amount }) => (runs++, { charged: amount }) });
      // A host's check that is slow the first time: the host aborts while it runs.
      const output = z.object({ charged: z.number() }).refine(async () => (slow ? (ctl.abort(), new Promise<boolean>(() => undefined)) : confirmed), "not confirmed");
      const agent = SubAgent.create({ prompt: "Charge.", tools: { charge }, output, maxTurns: 2 });
      const replies = [code("(return (tool/charge {:amount 5}))"), code("(return {:charged 5})")];
      const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 1)), signal: ctl.signal, isolation: "none" });
      expect(stopped.fail?.reason).toBe("aborted");
      slow = false;
      const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
      const live = scriptedLlm(replies.slice(1));
      const step = await SubAgent.resume(agent, state, { llm: live, isolation: "none" });
      // Confirmed, the cut turn returns; not, its feedback says why and the next turn is live.
      expect(step.ok ? step.value : step.fail.message).toEqual(confirmed ? { charged: 5 } : "no valid (return ...) within 2 turns; the last turn ended with value_error: the (return ...) value does not match the expected output:\n- the value: not confirmed");
      expect(runs).toBe(1);
      if (!confirmed) expect(step.turns[0].feedback).toContain("not confirmed");
    }
  });

  it("refuses to resume a cut turn whose finished call's result the worker did not record (hidden arguments), rather than run it again", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    let runs = 0;
    const charge = tool({ description: "Charge.", input: z.object({ card: z.string() }), run: () => (runs++, { ok: true }) });
    const agent = SubAgent.create({ prompt: "Charge the card.", tools: { charge }, maxTurns: 3 });
    const ctl = new AbortController();
    const context = { _card: "4111-1111-1111-1111" };
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm([code("(def r (tool/charge {:card data/_card}))")]), context, signal: ctl.signal, isolation: "worker", onEvent: (e) => void (e.type === "tool-result" && ctl.abort()) });
    expect(stopped.fail?.reason).toBe("aborted");
    const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
    await expect(SubAgent.resume(agent, state, { llm: scriptedLlm([code("(return r)")]), context, isolation: "worker" })).rejects.toThrow(/turn 1 was cut short after its call of tool\/charge had finished, and the call's result was not recorded; .*isolation "none" records them/);
    expect(runs).toBe(1);
  });

  it("with worker isolation and hidden context, a result the worker did not record is not recorded by the host either (it could hold a hidden value)", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    const secret = "sk-live-K7Z2Q9B3M8X4";
    // The tool is not given the hidden value, but sends back text equal to it: the program's marks hide it.
    const lookup = tool({ description: "Account.", input: z.object({ user: z.string() }), run: () => ({ key: secret }) });
    const agent = SubAgent.create({ prompt: "Look up bob.", tools: { lookup }, maxTurns: 3 });
    const program = code('(def k data/_key)\n(def a (tool/lookup {:user "bob"}))\n(println "found")');
    const recorded: string[] = [];
    for (const [isolation, abort] of [["none", false], ["worker", false], ["worker", true]] as const) {
      const ctl = new AbortController();
      const onEvent = (e: { type: string }): void => void (abort && e.type === "tool-result" && ctl.abort());
      const step = await SubAgent.run(agent, { llm: scriptedLlm([program]), context: { _key: secret }, signal: ctl.signal, isolation, onEvent });
      recorded.push(JSON.stringify(step.turns[0].toolCalls));
    }
    expect(recorded[0]).not.toContain(secret);
    expect(recorded[1]).toBe(recorded[0].replace(/"durationMs":[0-9.e-]+/, recorded[1].match(/"durationMs":[0-9.e-]+/)?.[0] ?? ""));
    expect(recorded[2]).not.toContain(secret);
    // The call made before a parallel branch read the hidden value: its answer is hidden all the same.
    let ready: () => void = () => undefined;
    const read = new Promise<void>((r) => (ready = r));
    const waits = tool({ description: "Account.", input: z.object({ user: z.string() }), run: async () => (await read, { key: secret }) });
    const mark = tool({ description: "Ready.", input: z.object({ n: z.number() }), run: () => (ready(), { ok: true }) });
    const racing = SubAgent.create({ prompt: "Look up bob.", tools: { lookup: waits, mark }, maxTurns: 3 });
    const ctl = new AbortController();
    const onEvent = (e: { type: string; name?: string }): void => void (e.type === "tool-result" && e.name === "lookup" && ctl.abort());
    const raced = await SubAgent.run(racing, { llm: scriptedLlm([code('(def out (pmap (fn [i] (if (= i 0) (tool/lookup {:user "bob"}) (tool/mark {:n (count data/_key)}))) [0 1]))')]), context: { _key: secret }, signal: ctl.signal, isolation: "worker", onEvent });
    expect(raced.fail?.reason).toBe("aborted");
    expect(JSON.stringify(raced.turns[0].toolCalls)).not.toContain(secret);
  });

  it("a cut turn run again asks approval for the calls after the cut, and a second abort in it keeps the finished call's record", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    for (const isolation of ["none", "worker"] as const) {
      const runs = { charge: 0, refund: 0 };
      const charge = tool({ description: "Charge.", input: z.object({ amount: z.number() }), run: ({ amount }) => (runs.charge++, { charged: amount }) });
      const refund = tool({ description: "Refund.", input: z.object({ amount: z.number() }), needsApproval: true, run: ({ amount }) => (runs.refund++, { refunded: amount }) });
      const agent = SubAgent.create({ prompt: "Charge, then refund.", tools: { charge, refund }, maxTurns: 4 });
      const replies = [code("(def r (tool/charge {:amount 5}))\n(def f (tool/refund {:amount 2}))"), code("(return [r f])")];
      const abortAt = (ctl: AbortController) => (e: { type: string }) => void (e.type === "tool-result" && ctl.abort());
      const first = new AbortController();
      const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 1)), signal: first.signal, isolation, onEvent: abortAt(first) });
      // Aborted again in the resumed cut turn, at the charge answered from its record.
      const second = new AbortController();
      const again = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(stopped, agent))), { llm: scriptedLlm(replies.slice(1)), signal: second.signal, isolation, onEvent: abortAt(second) });
      expect(again.fail?.reason).toBe("aborted");
      expect(again.turns[0].toolCalls.map((c) => c.result)).toEqual([{ charged: 5 }]);
      const paused = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(again, agent))), { llm: scriptedLlm(replies.slice(1)), isolation });
      expect(paused.paused?.approvals.map((a) => a.tool)).toEqual(["refund"]);
      expect(runs).toEqual({ charge: 1, refund: 0 });
      const id = paused.paused?.approvals[0].id as string;
      const done = await SubAgent.resume(agent, paused.paused?.state as RunState, { llm: scriptedLlm(replies.slice(1)), isolation, approvals: { [id]: { approved: true } } });
      expect(done.ok ? done.value : done.fail.message).toEqual([{ charged: 5 }, { refunded: 2 }]);
      expect(runs).toEqual({ charge: 1, refund: 1 });
    }
  });

  it("refuses, rather than give a step short of the saved turns, a resume stopped before its replay ended", async () => {
    const { calls, make, replies, context } = setup();
    const agent = make(6);
    const stopped = await SubAgent.run(make(3), { llm: scriptedLlm(replies.slice(0, 3)), context });
    const state = runStateToJson(saveRun(stopped, make(3)));
    // Aborted before it starts, and aborted while replaying turn 2 (its program calls a tool, answered from the record).
    const ctl = new AbortController();
    const llm = { name: "live", complete: () => Promise.reject(new Error("no live turn expected")) };
    for (const signal of [AbortSignal.abort(), ctl.signal]) {
      const resumed = SubAgent.resume(agent, runStateFromJson(state), { llm, context, signal, onEvent: (e) => void (e.type === "tool-call" && ctl.abort()) });
      // A step holding fewer turns than the state, saved in its place, would run the rest again live (tools, model).
      await expect(resumed).rejects.toThrow(/resume: the run was aborted before its saved turns were replayed; nothing ran, and the saved state is still the one to resume/);
    }
    expect(calls).toEqual(["acme", "globex", "nobody"]);
    const done = await SubAgent.resume(agent, runStateFromJson(state), { llm: scriptedLlm(replies.slice(3)), context });
    expect(done.value).toEqual({ gold: 162.75, silver: 80 });
  });

  it("refuses, rather than give a step short of the saved turns, a resume whose onTurn hook threw while replaying", async () => {
    const { calls, make, replies, context } = setup();
    const stopped = await SubAgent.run(make(3), { llm: scriptedLlm(replies.slice(0, 3)), context });
    const state = runStateToJson(saveRun(stopped, make(3)));
    const llm = { name: "live", complete: () => Promise.reject(new Error("no live turn expected")) };
    const onTurn = (): void => {
      throw new Error("hook broke");
    };
    // Before: an internal_error step holding turn 1 of 3; saved, the next resume ran turns 2 and 3 live (their tools again).
    await expect(SubAgent.resume(make(6), runStateFromJson(state), { llm, context, onTurn })).rejects.toThrow(
      new ResumeError("resume: the run ended before its saved turns were replayed (internal error: the onTurn hook threw (its message is left out of the run's record: a host's text may hold secrets)); nothing ran, and the saved state is still the one to resume"),
    );
    expect(calls).toEqual(["acme", "globex", "nobody"]);
    const done = await SubAgent.resume(make(6), runStateFromJson(state), { llm: scriptedLlm(replies.slice(3)), context });
    expect(done.value).toEqual({ gold: 162.75, silver: 80 });
  });

  it("is SubAgent.resume, and carries the saved run's prompt settings over", async () => {
    const { calls, make, replies, context } = setup();
    const first = make(3);
    const stopped = await SubAgent.run(first, { llm: scriptedLlm(replies.slice(0, 3)), context, compressHistory: true, printlnHistoryLimit: 1, view: { sampleItems: 2 } });
    // saveRun takes the settings the run recorded in its trace.
    const state = runStateFromJson(runStateToJson(saveRun(stopped, first)));
    expect(state.view).toEqual({ ...defaultViewOptions, compressHistory: true, printlnHistoryLimit: 1, sampleItems: 2 });
    expect(state.view).toEqual(stopped.trace.settings?.view);
    const live = scriptedLlm(replies.slice(3));
    const step = await SubAgent.resume(make(6), state, { llm: live, context });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toEqual({ gold: 162.75, silver: 80 });
    expect(calls).toEqual(["acme", "globex", "nobody"]);
    expect(step.trace.settings?.view).toEqual(state.view);
    // The live prompt is the saved run's next compressed prompt (with the larger turn budget).
    const next = compressedView({ system: step.trace.system, task: step.trace.task, turns: step.turns.slice(0, 3), maxTurns: 6, toolsWithdrawn: true, maxPrintChars: 4000 }, state.view);
    expect(live.requests[0].messages).toEqual(next.messages);
    expect(next.stats.turnsCompressed).toBe(3);
    expect(next.stats.turnsFull).toEqual([]);
    await expect(SubAgent.resume(make(6), { ...state, outcome: { ok: true } }, { llm: live, context })).rejects.toThrow(ResumeError);
  });

  // The saved run's strategy carries over, with the view options the resume gives (as the saved
  // ones would be overridden with compressHistory): the strategy ran with the saved options alone
  // while the trace recorded the given ones, so keepLatestFull given to resume changed no prompt,
  // and the trace's settings rebuilt a prompt the run never sent.
  it("applies view options given to resume to the saved run's strategy, and records what built the prompts", async () => {
    const { make, replies, context } = setup();
    const first = make(3);
    const stopped = await SubAgent.run(first, { llm: scriptedLlm(replies.slice(0, 3)), context, compressHistory: true });
    const live = scriptedLlm(replies.slice(3));
    const step = await SubAgent.resume(make(6), saveRun(stopped, first), { llm: live, context, view: { keepLatestFull: true } });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    const settings = step.trace.settings!;
    expect(settings.view.keepLatestFull).toBe(true);
    const next = compressedView({ system: step.trace.system, task: step.trace.task, turns: step.turns.slice(0, 3), maxTurns: 6, toolsWithdrawn: settings.toolsWithdrawn, maxPrintChars: settings.maxPrintChars }, settings.view);
    expect(next.stats.turnsFull).toEqual([{ turn: 3, reason: "latest" }]);
    expect(live.requests[0].messages).toEqual(next.messages);
  });

  it("refuses a changed context before any live turn", async () => {
    const { make, replies, context } = setup();
    const agent = make(3);
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 3)), context });
    const state = saveRun(stopped, agent);
    const live = scriptedLlm(replies.slice(3));
    // Before: an llm_error step holding no turn, which, saved, ran every saved turn again live.
    await expect(resumeRun(make(6), state, { llm: live, context: { orders: orders.slice(1) } })).rejects.toThrow(/^resume: the task message differs.*; nothing ran, and the saved state is still the one to resume$/);
    expect(live.requests).toHaveLength(0);
    // Saved as it was, the state resumes with the saved run's context.
    expect((await resumeRun(make(6), state, { llm: scriptedLlm(replies.slice(3)), context })).value).toEqual({ gold: 162.75, silver: 80 });
  });

  // Sample options given to resume reshape the task's data samples, and the resume was refused as
  // if the context had changed: "the context (input data) differs", the context being the same.
  it("refuses other sample options than the saved run's, naming them, not the context", async () => {
    const { make, replies, context } = setup();
    const agent = make(3);
    const state = saveRun(await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 3)), context }), agent);
    const rows: Array<[object, string]> = [
      [{ sampleItems: 1 }, "view.sampleItems 1 (the saved run's: 3) shapes its data samples, which the saved run sent with its own: resume without changing it ("],
      [{ sampleItems: 1, sampleChars: 20 }, "view.sampleItems 1 (the saved run's: 3) and view.sampleChars 20 (the saved run's: 80) shape its data samples, which the saved run sent with its own: resume without changing them ("],
    ];
    for (const [view, why] of rows) {
      const live = scriptedLlm(replies.slice(3));
      await expect(resumeRun(make(6), state, { llm: live, context, view })).rejects.toThrow(`resume: the task message differs from the saved run's: ${why}`);
      expect(live.requests).toHaveLength(0);
    }
  });

  it("refuses a changed context the task message does not show, when a replayed tool call's arguments differ", async () => {
    // The task message samples the first items only: item 40 is not in it, and the replayed
    // call's recorded result is the old item's. Answering the new item's call with it would
    // hand the live turns a stale result.
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    const calls: string[] = [];
    const price = tool({ description: "Price of a sku.", input: z.object({ sku: z.string(), currency: z.string().default("EUR") }), run: ({ sku }) => (calls.push(sku), { sku, price: sku.length }) });
    const agent = SubAgent.create({ prompt: "Price item 40.", tools: { price }, maxTurns: 4 });
    const items = (x: string): string[] => Array.from({ length: 50 }, (_, i) => (i === 40 ? x : `sku-${i}`));
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm([code("(def p (tool/price (nth data/items 40)))\n(println (:sku p))"), code("(println 1)")]), context: { items: items("sku-40") } });
    const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
    // The same context resumes, the call answered from its record (its default argument filled in again).
    const same = await SubAgent.resume(agent, state, { llm: scriptedLlm([code("(return p)")]), context: { items: items("sku-40") } });
    expect(same.value).toEqual({ sku: "sku-40", price: 6 });
    const live = scriptedLlm([code("(return p)")]);
    await expect(SubAgent.resume(agent, state, { llm: live, context: { items: items("sku-forty") } })).rejects.toThrow(/resume: replaying turn 1, tool\/price is called with a different :sku than in the saved run/);
    expect(live.requests).toHaveLength(0);
    expect(calls).toEqual(["sku-40"]);
  });

  it("replays a call whose left-out argument takes a default that differs on every parse (a fresh id)", async () => {
    const code = (b: string): string => "```clojure\n" + b + "\n```";
    let next = 0;
    const log = tool({ description: "Logs a line.", input: z.object({ line: z.string(), id: z.number().default(() => ++next) }), run: ({ id }) => id });
    const agent = SubAgent.create({ prompt: "Log.", tools: { log }, maxTurns: 3 });
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm([code('(def id (tool/log "hi"))')]) });
    const step = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(stopped, agent))), { llm: scriptedLlm([code("(return id)")]) });
    // The saved run's id, answered from its record.
    expect(step.ok ? step.value : step.fail.message).toBe(stopped.turns[0].toolCalls[0].result);
  });

  it("detects a replay that does not reproduce the saved turns", async () => {
    const { make, replies, context } = setup();
    const agent = make(3);
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 3)), context });
    const state = saveRun(stopped, agent);
    state.trace.turns[0].prints = ["something else"];
    state.trace.turns[0].feedback = "tampered";
    await expect(resumeRun(make(6), state, { llm: scriptedLlm(replies.slice(3)), context })).rejects.toThrow(/replaying turn 1 did not reproduce/);
  });

  it("refuses runs that ended, and agents without turns left", async () => {
    const { make, replies, context } = setup();
    const agent = make(4);
    const done = await SubAgent.run(agent, { llm: scriptedLlm(replies), context });
    expect(done.ok).toBe(true);
    await expect(resumeRun(agent, saveRun(done, agent), { llm: scriptedLlm([]), context })).rejects.toThrow(/already returned/);
    const short = make(3);
    const stopped = await SubAgent.run(short, { llm: scriptedLlm(replies.slice(0, 3)), context });
    await expect(resumeRun(short, saveRun(stopped, short), { llm: scriptedLlm([]), context })).rejects.toThrow(/allows more/);
  });
  it("replays a turn whose reply was cut at the output token limit, its feedback saying so again", async () => {
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Go", maxTurns });
    const cut = { content: clj("Start.", "(def a 1)\n(def rows [1").replace(/\n```$/, ""), truncated: true };
    const step = await SubAgent.run(make(2), { llm: scriptedLlm([cut, clj("Again.", "(def a 1)")]), isolation: "none" });
    expect(step.turns[0].feedback).toContain("your reply was cut off at the output limit");
    const state = runStateFromJson(runStateToJson(saveRun(step, make(2))));
    expect(state.trace.turns[0].truncated).toBe(true);
    const resumed = await SubAgent.resume(make(3), state, { llm: scriptedLlm([clj("Done.", "(return a)")]), isolation: "none" });
    expect([resumed.fail?.message, resumed.value, resumed.turns[0].truncated]).toEqual([undefined, 1, true]);
  });

  it("replays pmap branches whose later calls came in another order than the replay makes them", async () => {
    // tool/slow answers "a" only once "b" has answered, so the branches' tool/echo calls came b first.
    const tools = {
      slow: answersBFirst(),
      echo: tool({ description: "Echo.", input: z.object({ x: z.string() }), run: ({ x }) => `echo ${x}` }),
    };
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Go", tools, maxTurns });
    const first = clj("Both.", '(def r (pmap (fn [x] (tool/echo {:x (tool/slow {:x x})})) ["a" "b"]))\n(println r)');
    const step = await SubAgent.run(make(2), { llm: scriptedLlm([first, clj("Look.", "(println 1)")]) });
    expect(step.turns[0].toolCalls.map((c) => c.args)).toEqual([{ x: "a" }, { x: "b" }, { x: "B" }, { x: "A" }]);
    const resumed = await SubAgent.resume(make(3), saveRun(step, make(2)), { llm: scriptedLlm([clj("Done.", "(return r)")]) });
    expect(resumed.fail?.message).toBeUndefined();
    expect(resumed.value).toEqual(["echo A", "echo B"]);
  });
});

describe("resume given what is not a run state", () => {
  // It rejects with a ResumeError saying what it expects, not a TypeError from inside the replay.
  it.each([
    ["the state's JSON text, not parsed", (text: string) => text, "resume expects a RunState object, got its JSON text: read it with runStateFromJson first"],
    ["null", () => null, "resume expects a RunState (saveRun's result, a paused step's state, or runStateFromJson's), got null"],
    ["an object that is not one", () => ({ turns: [] }), "resume expects a RunState (saveRun's result, a paused step's state, or runStateFromJson's), got an object without its format"],
  ])("%s", async (_what, given, message) => {
    const first = SubAgent.create({ prompt: "Count.", maxTurns: 1 });
    const stopped = await SubAgent.run(first, { llm: scriptedLlm([clj("Start.", "(def a 1)")]), isolation: "none" });
    const text = runStateToJson(saveRun(stopped, first));
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3 });
    await expect(SubAgent.resume(agent, given(text) as never, { llm: scriptedLlm([]) })).rejects.toThrow(new ResumeError(message));
  });

  // Host code: a getter or Proxy trap that throws while resume reads its options or the state
  // rejected with the host's own Error (its text may quote a secret). Read once, as run reads them.
  const boom = (): never => {
    throw new Error("sk-secret");
  };
  const getter = <T extends object>(o: T, name: string): T => Object.defineProperty({ ...o }, name, { get: boom, enumerable: true });
  const trap = (o: object): never => new Proxy(o, { get: boom, ownKeys: boom, getOwnPropertyDescriptor: boom }) as never;
  const unreadable = "resume: the saved state could not be read (reading it threw)";
  it.each<[string, (state: RunState, llm: ReturnType<typeof scriptedLlm>) => [RunState, object], string]>([
    ["an llm getter", (state) => [state, getter({}, "llm")], "resume: options.llm could not be read (reading it threw)"],
    ["an approvals getter", (state, llm) => [state, getter({ llm }, "approvals")], "resume: options.approvals could not be read (reading it threw)"],
    ["options that are a throwing Proxy", (state) => [state, trap({})], "resume: options.llm could not be read (reading it threw)"],
    ["approvals that are a throwing Proxy", (state, llm) => [state, { llm, approvals: trap({}) }], "resume: options.approvals could not be read (reading it threw)"],
    ["a view getter in the options", (state, llm) => [state, { llm, view: getter({}, "sampleItems") }], "resume: options.view could not be read (reading it threw)"],
    ["a state that is a throwing Proxy", (state, llm) => [trap(state), { llm }], unreadable],
    ["a state whose outcome getter throws", (state, llm) => [getter(state, "outcome"), { llm }], unreadable],
    ["a state whose view getter throws", (state, llm) => [getter(state, "view"), { llm }], unreadable],
    ["a state whose history getter throws", (state, llm) => [getter(state, "history"), { llm }], unreadable],
    ["a state whose trace's system getter throws", (state, llm) => [{ ...state, trace: getter(state.trace, "system") }, { llm }], unreadable],
    // Deeper down, where the replay read them: the reply was quoted as llm_error "LLM request failed on turn 1: sk-secret".
    ["a state whose turn's reply getter throws", (state, llm) => [{ ...state, trace: { ...state.trace, turns: [getter(state.trace.turns[0], "reply")] } }, { llm }], unreadable],
    ["a state whose turn's usage getter throws", (state, llm) => [{ ...state, trace: { ...state.trace, turns: [getter(state.trace.turns[0], "usage")] } }, { llm }], unreadable],
    ["a state whose turns are a throwing Proxy", (state, llm) => [{ ...state, trace: { ...state.trace, turns: trap(state.trace.turns) } }, { llm }], unreadable],
    ["a state whose tool call's result getter throws", (state, llm) => [{ ...state, trace: { ...state.trace, turns: [{ ...state.trace.turns[0], toolCalls: [getter({ name: "look", args: {}, durationMs: 1 } as never, "result")] }] } }, { llm }], unreadable],
    ["a state whose held result getter throws", (state, llm) => [{ ...state, hiddenResults: [getter({ turn: 1, call: 0 } as never, "result")] }, { llm }], unreadable],
  ])("%s rejects with a ResumeError without the host's text", async (_what, given, message) => {
    const first = SubAgent.create({ prompt: "Count.", maxTurns: 1 });
    const stopped = await SubAgent.run(first, { llm: scriptedLlm([clj("Start.", "(def a 1)")]), isolation: "none" });
    const llm = scriptedLlm([clj("Done.", "(return a)")]);
    const [state, options] = given(saveRun(stopped, first), llm);
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none" });
    await expect(SubAgent.resume(agent, state, options as never)).rejects.toThrow(new ResumeError(message));
    expect(llm.requests).toHaveLength(0);
  });

  // A state edited in memory is read as its file is: a malformed part is named by its place,
  // where the replay failed on it (a raw TypeError, or llm_error quoting what it met).
  it.each<[string, (state: RunState) => void, string]>([
    ["a turn that is null", (s) => void ((s.trace.turns as unknown[])[0] = null), "at turns.0: Invalid input: expected object, received null"],
    ["a system prompt that is a number", (s) => void ((s.trace as { system: unknown }).system = 5), "at system: Invalid input: expected string, received number"],
    ["a reply that is a number", (s) => void ((s.trace.turns[0] as { reply: unknown }).reply = 5), "at turns.0.reply: Invalid input: expected string, received number"],
    ["a turn without its tool calls", (s) => void delete (s.trace.turns[0] as { toolCalls?: unknown }).toolCalls, "at turns.0.toolCalls: Invalid input: expected array, received undefined"],
    ["a turn whose messages are not a list", (s) => void ((s.trace.turns[0] as { messages: unknown }).messages = "hi"), "at turns.0.messages: Invalid input: expected array, received string"],
    ["a nested run that is null", (s) => void ((s.trace.turns[0] as { nested?: unknown }).nested = [null]), "at turns.0.nested.0: Invalid input: expected object, received null"],
  ])("a state holding %s rejects with a ResumeError naming the place", async (_what, edit, place) => {
    const first = SubAgent.create({ prompt: "Count.", maxTurns: 1 });
    const stopped = await SubAgent.run(first, { llm: scriptedLlm([clj("Start.", "(def a 1)")]), isolation: "none" });
    const state = saveRun(stopped, first);
    edit(state);
    const llm = scriptedLlm([clj("Done.", "(return a)")]);
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none" });
    await expect(SubAgent.resume(agent, state, { llm })).rejects.toThrow(new ResumeError(`not a ptc-lisp run state: not a ptc-lisp trace: ${place}`));
    expect(llm.requests).toHaveLength(0);
  });

  // Options the run refuses: resume resolved with an invalid_input step holding no turn, and
  // saving that step, the usual next step, lost the saved turns (every later resume then failed,
  // 'the task message differs from the saved run's: saved ""').
  it.each<[string, object, string]>([
    ["a negative deadline", { deadlineMs: -1 }, "deadlineMs must be a positive number, got -1"],
    ["an onTurn that is not a function", { onTurn: 5 }, "onTurn must be a function, got number"],
    ["a context that is not a map", { context: 5 }, "context must be a plain object of key → data"],
    // Merged into the saved view settings by spreading: a Map or a number was read as no view options, a string as "unknown view option '0'".
    ["a view that is a Map", { view: new Map([["keepLatestFull", 1]]) }, "view must be an object of prompt-view options"],
    ["a view that is a number", { view: 5 }, "view must be an object of prompt-view options"],
    ["a view that is a string", { view: "compressed" }, "view must be an object of prompt-view options"],
  ])("refuses %s in its options, the saved state still the one to resume", async (_what, bad, message) => {
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none" });
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm([clj("Start.", "(def a 1)")]) });
    const state = saveRun(stopped, agent);
    const llm = scriptedLlm([clj("Done.", "(return a)")]);
    await expect(SubAgent.resume(agent, state, { llm, ...bad })).rejects.toThrow(new ResumeError(`resume: ${message}; nothing ran, and the saved state is still the one to resume`));
    expect(llm.requests).toHaveLength(0);
    const step = await SubAgent.resume(agent, state, { llm });
    expect(step.ok ? step.value : step.fail.message).toBe(1);
  });

  it("refuses a state saved from a run whose options were refused: it has no turn and no task", async () => {
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none" });
    const refused = await SubAgent.run(agent, { llm: scriptedLlm([]), deadlineMs: -1 });
    expect(refused.fail?.reason).toBe("invalid_input");
    const llm = scriptedLlm([clj("Done.", "(return 1)")]);
    await expect(SubAgent.resume(agent, saveRun(refused, agent), { llm })).rejects.toThrow(
      new ResumeError("resume: the saved run ended before its first turn (invalid_input: deadlineMs must be a positive number, got -1); there is nothing to resume: run the agent again"),
    );
    expect(llm.requests).toHaveLength(0);
  });

  // Six refusals said "the saved run used 3 of the agent's 2 turns; ..." where every other began "resume: ".
  it.each<[string, (agent: Agent) => Promise<[Agent, RunState, ResumeOptions]>, string]>([
    ["a run that returned", async (a) => [a, saveRun(await SubAgent.run(a, { llm: scriptedLlm([clj("Done.", "(return 1)")]) }), a), { llm: scriptedLlm([]) }], "the saved run already returned a value; there is nothing to resume"],
    ["a run that failed", async (a) => [a, saveRun(await SubAgent.run(a, { llm: scriptedLlm([clj("No.", '(fail "no data")')]) }), a), { llm: scriptedLlm([]) }], "the saved run ended with (fail ...): no data"],
    ["a run whose options were refused", async (a) => [a, saveRun(await SubAgent.run(a, { llm: scriptedLlm([]), deadlineMs: -1 }), a), { llm: scriptedLlm([]) }], "the saved run ended before its first turn (invalid_input: deadlineMs must be a positive number, got -1); there is nothing to resume: run the agent again"],
    ["an agent with fewer turns", async (a) => {
      const three = SubAgent.create({ prompt: "Count.", maxTurns: 4, isolation: "none" });
      const stopped = await SubAgent.run(three, { llm: scriptedLlm([clj("1.", "(def a 1)"), clj("2.", "(def b 2)"), clj("3.", "(def c 3)")]) });
      return [a, saveRun(stopped, three), { llm: scriptedLlm([]) }];
    }, "the saved run used 3 of the agent's 3 turns; resume with an agent that allows more"],
    ["no llm", async (a) => [a, saveRun(await SubAgent.run(a, { llm: scriptedLlm([clj("1.", "(def a 1)")]) }), a), {}], "no llm: pass { llm } to serve the turns after the saved ones"],
  ])("refuses %s with a message that says resume", async (_, make, message) => {
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none" });
    const [to, state, options] = await make(agent);
    await expect(SubAgent.resume(to, state, options)).rejects.toThrow(new ResumeError(`resume: ${message}`));
  });

  it("takes no options when the agent has its llm", async () => {
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3, isolation: "none", llm: scriptedLlm([clj("Done.", "(return a)")]) });
    // The first run's script ends after one turn: the run stops with llm_error, to be resumed.
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm([clj("Start.", "(def a 1)")]) });
    const step = await SubAgent.resume(agent, saveRun(stopped, agent), undefined as never);
    expect(step.value).toBe(1);
  });
});

describe("resume explains what differs", () => {
  it("resumes a run saved with maxTurns 2 (tools withdrawn on its last turn) into an agent with more turns", async () => {
    const { make, replies, context } = setup();
    const agent = make(2);
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 2)), context });
    expect(stopped.fail?.reason).toBe("max_turns_exceeded");
    const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
    expect(state.toolsWithdrawn).toBe(true);
    // The saved second turn ran without tools (its run's last turn), so its fetch failed: the live turns fetch again.
    expect(state.trace.turns[1].status).toBe("error");
    const step = await SubAgent.resume(make(5), state, { llm: scriptedLlm(replies.slice(1)), context });
    expect(JSON.stringify(step.fail)).toBeUndefined();
    expect(step.turns.map((t) => t.status)).toEqual(["ok", "error", "ok", "ok", "returned"]);
    expect(step.value).toEqual({ gold: 162.75, silver: 80 });
  });

  it("resumes a single-turn run (the system prompt's one-turn rules) into an agent with more turns, still catching other tools", async () => {
    const { make, replies, context } = setup();
    const agent = make(1);
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 1)), context, isolation: "none" });
    expect(stopped.fail?.reason).toBe("max_turns_exceeded");
    expect(stopped.trace.system).toContain("# One turn");
    const state = runStateFromJson(runStateToJson(saveRun(stopped, agent)));
    const llm = scriptedLlm(replies.slice(1));
    const step = await SubAgent.resume(make(4), state, { llm, context, isolation: "none" });
    expect(JSON.stringify(step.fail)).toBeUndefined();
    expect(step.value).toEqual({ gold: 162.75, silver: 80 });
    // The resumed run works over several turns, and its prompts say so.
    expect(llm.requests[0].messages[0].content).toContain("# Working over several turns");
    expect(step.trace.system).toBe(llm.requests[0].messages[0].content);
    const fewerTools = SubAgent.create({ prompt: "Total order value per customer tier", tools: {}, output: z.record(z.string(), z.number()), maxTurns: 4 });
    await expect(SubAgent.resume(fewerTools, state, { llm: scriptedLlm(replies.slice(1)), context, isolation: "none" })).rejects.toThrow(/the system prompt differs from the saved run's \(different tools/);
  });

  it("prices the replayed turns as the saved run did, cache writes included", async () => {
    const { make, replies, context } = setup();
    const model = "claude-sonnet-4-5";
    const reply = (i: number) => ({ content: replies[i], model, usage: { inputTokens: 3000 + i, outputTokens: 50, cachedTokens: 1000, cacheWriteTokens: 1500 } });
    // The script ends after two turns: the run stops with llm_error, to be resumed.
    const stopped = await SubAgent.run(make(4), { llm: scriptedLlm([reply(0), reply(1)]), context, isolation: "none" });
    const state = runStateFromJson(runStateToJson(saveRun(stopped, make(4))));
    const step = await SubAgent.resume(make(4), state, { llm: scriptedLlm([reply(2), reply(3)]), context, isolation: "none" });
    expect(step.value).toEqual({ gold: 162.75, silver: 80 });
    const cost = (turns: readonly { usage: { cost?: number } }[]) => turns.map((t) => t.usage.cost);
    expect(cost(stopped.turns).every((c) => c !== undefined && c > 0)).toBe(true);
    // Before, the replay dropped the cache writes: 0.008175 and 0.008178 became 0.00705 and 0.007053.
    expect(cost(step.turns.slice(0, 2))).toEqual(cost(stopped.turns));
  });

  it("names the part that differs: mission, context, tools, a turn that no longer replays", async () => {
    const { make, replies, context } = setup();
    const agent = make(3);
    const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 3)), context });
    const state = saveRun(stopped, agent);
    const live = () => scriptedLlm(replies.slice(3));
    const context2 = { orders: orders.slice(1) };
    const refusal = (p: Promise<unknown>): Promise<string> => p.then(() => "resolved", (e: unknown) => (e instanceof ResumeError ? e.message : String(e)));
    const changedContext = await refusal(SubAgent.resume(make(6), state, { llm: live(), context: context2 }));
    expect(changedContext).toMatch(/the context \(input data\) differs, saved ".*" \/ now ".*"/);
    expect(changedContext).not.toMatch(/mission differs/);
    const otherMission = SubAgent.create({ prompt: "Total order value per customer", tools: make(6).tools, output: z.record(z.string(), z.number()), maxTurns: 6 });
    const changedMission = await refusal(SubAgent.resume(otherMission, state, { llm: live(), context }));
    expect(changedMission).toMatch(/the mission differs, saved "Total order value per customer tier" \/ now "Total order value per customer"/);
    expect(changedMission).not.toMatch(/context/);
    const fewerTools = SubAgent.create({ prompt: "Total order value per customer tier", tools: {}, output: z.record(z.string(), z.number()), maxTurns: 6 });
    expect(await refusal(SubAgent.resume(fewerTools, state, { llm: live(), context }))).toMatch(/the system prompt differs from the saved run's \(different tools/);
    // A tool that answers differently now is caught where the saved turn stops replaying.
    const tampered = structuredClone(state);
    tampered.trace.turns[1].toolCalls[0].result = { id: "acme", tier: "bronze", since: 2019 };
    // Found at the first live prompt, the step holds every saved turn: it ends with llm_error.
    const replayed = await SubAgent.resume(make(6), tampered, { llm: live(), context });
    expect(replayed.turns).toHaveLength(3);
    expect(replayed.fail?.message).toMatch(/replaying turn 3 did not reproduce the saved run: .*: its feedback differs, saved ".*" \/ now ".*"/);
  });

  it("replays a saved tool timeout as a timeout: the program meets tool_timeout again, and the run resumes", async () => {
    const slow = tool({ description: "slow", input: z.object({}), timeoutMs: 20, run: () => new Promise((r) => setTimeout(() => r(1), 200)) });
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Call slow.", tools: { slow }, maxTurns });
    const replies = [clj("Trying it.", '(println (try (tool/slow {}) (catch e (str "caught " (:kind e)))))'), clj("Again.", "(tool/slow {})"), clj("Done.", "(return 1)")];
    const stopped = await SubAgent.run(make(3), { llm: scriptedLlm(replies.slice(0, 2)) });
    expect(stopped.trace.turns.map((t) => t.error?.kind ?? t.prints[0])).toEqual(["caught :tool_timeout", "tool_timeout"]);
    const state = runStateFromJson(runStateToJson(saveRun(stopped, make(3))));
    const step = await resumeRun(make(4), state, { llm: scriptedLlm(replies.slice(2)) });
    expect(step.ok ? step.value : step.fail.message).toBe(1);
    expect(step.trace.turns.slice(0, 2).map((t) => t.error?.kind ?? t.prints[0])).toEqual(["caught :tool_timeout", "tool_timeout"]);
  });

  it("resumes a run whose tool sent a hidden argument back: the replayed call gives the program the value, not its stand-in", async () => {
    const token = "tok-9f2c41d7e6";
    const used: unknown[] = [];
    const tools = {
      echo: tool({ description: "Echoes its argument.", input: z.object({ x: z.string() }), run: ({ x }) => ({ got: x, len: x.length }) }),
      use: tool({ description: "Uses a token.", input: z.object({ t: z.string() }), run: ({ t }) => (used.push(t), "ok") }),
    };
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Echo the token, then use it.", tools, maxTurns });
    const context = { _token: token, user: "ann" };
    const replies = [clj("Echo it.", "(def r (tool/echo {:x data/_token}))\n(println (:len r) r)"), clj("Look.", "(println (:got r))"), clj("Use it.", "(return (tool/use {:t (:got r)}))")];
    const stopped = await SubAgent.run(make(4), { llm: scriptedLlm(replies.slice(0, 2)), context });
    const state = runStateFromJson(runStateToJson(saveRun(stopped, make(4))));
    expect(JSON.stringify(state.trace)).not.toContain(token);
    const step = await resumeRun(make(4), state, { llm: scriptedLlm(replies.slice(2)), context });
    expect(step.ok ? step.value : step.fail.message).toBe("ok");
    expect(used).toEqual([token]);
    expect(step.trace.turns.slice(0, 2).map((t) => t.feedback)).toEqual(stopped.trace.turns.map((t) => t.feedback));
    expect(JSON.stringify(step.trace)).not.toContain(token);
  });
});

// The saved turns' nested runs ran: replayed calls answer from their records and start none, so
// a resumed run counted none of them (each resume could start maxNestedRuns more, and its usage
// left out what they spent). It counts them as the straight run does.
describe("resume counts the saved turns' nested runs", () => {
  const leaf = SubAgent.create({ prompt: "Echo {{x}}.", maxTurns: 1, isolation: "none" });
  const top = SubAgent.create({ prompt: "Use the helper.", tools: { helper: SubAgent.asTool(leaf) }, maxTurns: 4, isolation: "none" });
  const calls = (xs: string[]): string => xs.map((x) => `(def r${x} (tool/helper {:x "${x}"}))`).join("\n");
  const replies = [clj("Three.", calls(["1", "2", "3"])), clj("Three more.", calls(["4", "5", "6"])), clj("Done.", "(return 1)")];
  /** Top-level turns from `script` (then a failure, to stop the run), each nested run's turn with its own reply; 100 + 10 tokens a request. */
  function llm(script: string[]) {
    const seen = { top: 0, leaf: 0 };
    const client: Llm = {
      name: "fake",
      complete: (request) => {
        const isTop = (request.messages[1]?.content as string).includes("Use the helper.");
        const content = isTop ? script[seen.top++] : (seen.leaf++, clj("Echo.", '(return "leaf")'));
        if (content === undefined) return Promise.reject(new Error("no more replies"));
        return Promise.resolve({ content, usage: { inputTokens: 100, outputTokens: 10, cachedTokens: 0 } });
      },
    };
    return { client, seen };
  }

  it("counts them against maxNestedRuns and in usage.nested", async () => {
    const straight = llm(replies);
    const whole = await SubAgent.run(top, { llm: straight.client, maxNestedRuns: 4 });
    expect(whole.ok ? whole.value : whole.fail.message).toBe(1);
    expect(straight.seen.leaf).toBe(4);
    expect(whole.turns[1].error?.message).toContain("nested_runs_exceeded");

    const first = llm(replies.slice(0, 1));
    const stopped = await SubAgent.run(top, { llm: first.client, maxNestedRuns: 4 });
    expect(stopped.fail?.reason).toBe("llm_error");
    const state = runStateFromJson(runStateToJson(saveRun(stopped, top)));
    const rest = llm(replies.slice(1));
    const step = await resumeRun(top, state, { llm: rest.client, maxNestedRuns: 4 });
    expect(step.ok ? step.value : step.fail.message).toBe(1);
    // Before: 3 more nested runs (6 in all, none refused), usage.nested { runs: 3, inputTokens: 300 }.
    expect(first.seen.leaf + rest.seen.leaf).toBe(4);
    expect(step.turns[1].error?.message).toContain("nested_runs_exceeded");
    expect(step.usage.nested).toEqual(whole.usage.nested);
    expect(step.usage.nested).toMatchObject({ runs: 4, inputTokens: 400, outputTokens: 40, llmRequests: 4 });
  });

  it("counts what they spent against the tokenBudget", async () => {
    // The saved turn: 110 tokens of its own and 330 of nested runs; a budget of 500 is spent by the next request.
    const stopped = await SubAgent.run(top, { llm: llm(replies.slice(0, 1)).client });
    const state = runStateFromJson(runStateToJson(saveRun(stopped, top)));
    const rest = llm(replies.slice(1));
    const step = await resumeRun(top, state, { llm: rest.client, tokenBudget: 500 });
    expect(step.fail?.reason).toBe("token_budget_exceeded");
    expect(rest.seen).toEqual({ top: 1, leaf: 0 });
  });

  // The saved turn's nested run kept 3,000 of tool results, not counted by the resumed run:
  // resumed, a second nested run made all 3 of its calls (6 in all, none refused) where the
  // run made without a stop refuses the sixth.
  it.each(["none", "worker"] as const)("counts the tool results they kept against maxToolResultSize (isolation %s)", async (isolation) => {
    const calls = { n: 0 };
    const big = tool({ description: "Big.", input: z.object({}), run: () => (calls.n++, "x".repeat(999)) });
    const child = SubAgent.create({ prompt: "Fetch.", tools: { big }, maxTurns: 1, output: z.number() });
    const parent = (maxTurns: number) => SubAgent.create({ prompt: "Go.", tools: { fetch: SubAgent.asTool(child, { input: z.object({}) }) }, maxTurns, isolation, maxToolResultSize: 4500 });
    const script = [clj("Fetch.", "(tool/fetch {})"), clj("Three.", "(dotimes [i 3] (tool/big {}))\n(return 1)"), clj("Again.", "(tool/fetch {})"), clj("Three.", "(dotimes [i 3] (tool/big {}))\n(return 1)"), clj("Done.", "(return 2)")];
    const whole = await SubAgent.run(parent(3), { llm: scriptedLlm(script) });
    expect(calls.n).toBe(5);
    expect(whole.turns[1].error?.message).toContain("more than maxToolResultSize (4500)");

    calls.n = 0;
    const stopped = await SubAgent.run(parent(1), { llm: scriptedLlm(script.slice(0, 2)) });
    expect(stopped.fail?.reason).toBe("max_turns_exceeded");
    const state = runStateFromJson(runStateToJson(saveRun(stopped, parent(1))));
    const step = await resumeRun(parent(3), state, { llm: scriptedLlm(script.slice(2)) });
    expect(calls.n).toBe(5);
    expect(step.turns[1].error?.message).toBe(whole.turns[1].error?.message);
    expect(step.ok ? step.value : step.fail.message).toBe(2);
  });
});
