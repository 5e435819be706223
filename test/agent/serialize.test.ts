import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { runFromJson, runToJson } from "../../src/agent/saved-run.js";
import { MAX_TRACE_MESSAGES, parseTraceJson, traceFromJson, traceToJson, TraceFormatError } from "../../src/trace/serialize.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { saveRun } from "../../src/agent/resume.js";
import { ResumeError, runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";
import { AgentDefinitionError } from "../../src/agent/errors.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

async function sampleRun() {
  const stats = tool({ description: "Odd numbers.", run: () => ({ mean: 2.5, spread: Infinity, missing: NaN, list: [1, -Infinity] }) });
  const child = SubAgent.create({ prompt: "Echo {{word}}", maxTurns: 1, llm: scriptedLlm([code('(return (str "echo " data/word))')]) });
  const agent = SubAgent.create({
    prompt: "Summarise",
    tools: { stats, echo: SubAgent.asTool(child) },
    output: z.object({ mean: z.number() }),
    maxTurns: 4,
  });
  const llm = scriptedLlm([
    code('(def s "the stats" (tool/stats))\n(defn half [x] (/ x 2))\n(println (:mean s) (tool/echo "hi"))'),
    code('(println (+ 1 "x"))'),
    "no code here",
    code("(return {:mean (:mean s)})"),
  ]);
  return SubAgent.run(agent, { llm, context: { n: 3, _hidden: "x" } });
}

describe("trace JSON", () => {
  it("round-trips a run's trace exactly, non-finite numbers, nested runs and errors included", async () => {
    const step = await sampleRun();
    expect(step.ok).toBe(true);
    expect(step.turns.map((t) => t.status)).toEqual(["ok", "error", "no_code", "returned"]);
    const json = traceToJson(step.trace);
    const back = traceFromJson(json);
    expect(back).toEqual(step.trace);
    expect(back.turns[0].toolCalls[0].result).toEqual({ mean: 2.5, spread: Infinity, missing: NaN, list: [1, -Infinity] });
    expect(back.turns[0].nested?.[0].trace.task).toContain("Echo hi");
    expect(back.turns[0].definitions.map((d) => d.name)).toEqual(["s", "half"]);
    expect(back.turns[1].error?.line).toBe(1);
    expect(traceToJson(back)).toBe(json);
  });

  it("writes the messages a turn shares with the turn before only once", async () => {
    const step = await sampleRun();
    const json = traceToJson(step.trace);
    const system = JSON.stringify(step.trace.system);
    expect(json.split(system).length - 1).toBe(1);
    expect(json.length).toBeLessThan(JSON.stringify(step.trace).length / 2);
    expect(JSON.parse(json).turns[3].messages[0]).toEqual({ "$ptc:reuse": 6 });
  });

  it("round-trips traces built with the compressed view, whose prefixes differ", async () => {
    const agent = SubAgent.create({ prompt: "Sum", maxTurns: 4 });
    const llm = scriptedLlm([code("(def a 1)\n(println a)"), code("(def b 2)\n(println b)"), code("(return (+ a b))")]);
    const step = await SubAgent.run(agent, { llm, compressHistory: true });
    expect(step.value).toBe(3);
    expect(traceFromJson(traceToJson(step.trace))).toEqual(step.trace);
  });

  it("rejects a reuse marker that points past the previous turn", () => {
    const text = JSON.stringify({ version: 1, system: "s", task: "t", turns: [{ messages: [{ "$ptc:reuse": 3 }] }] });
    expect(() => traceFromJson(text)).toThrow("at turns.0.messages: reuses 3 messages of a turn that sent 2");
  });

  it("validates each message of the file once, not once per turn that repeats it", () => {
    // A long run repeats its history on every turn: a turn is a reuse marker and two messages.
    const turns = 300;
    const bare = { reply: "x", program: null, status: "no_code", prints: [], toolCalls: [], definitions: [], memory: [], usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0, llmMs: 0, execMs: 0 } };
    const raw = {
      version: 2,
      system: "s",
      task: "t",
      turns: Array.from({ length: turns }, (_, i) => ({ ...bare, number: i + 1, messages: [{ "$ptc:reuse": 2 * (i + 1) }, { role: "assistant", content: `a${i}` }, { role: "user", content: `u${i}` }] })),
    };
    const text = JSON.stringify(raw);
    const loaded = traceFromJson(text);
    expect(loaded.turns.at(-1)?.messages).toHaveLength(2 + 2 * turns);
    expect(loaded.turns[2].messages.map((m) => m.content)).toEqual(["s", "t", "a0", "u0", "a1", "u1", "a2", "u2"]);
    // Read through a schema counting the messages it checks: those written, not some n²/2 (90,900 here).
    let checked = 0;
    const counting = z.looseObject({ turns: z.array(z.looseObject({ messages: z.array(z.custom(() => ++checked > 0)) })) });
    parseTraceJson(text, counting, "trace", (r) => r, "");
    expect(checked).toBe(3 * turns);
    // A malformed message after a marker is placed as the file numbers it.
    raw.turns[5].messages[2] = { role: "robot", content: "x" };
    expect(() => traceFromJson(JSON.stringify(raw))).toThrow("at turns.5.messages.2.role");
  });

  it("refuses a trace whose reuse markers expand past MAX_TRACE_MESSAGES, before expanding them", () => {
    // 7,100 turns of full history (2.5 MB) hold some 50 million messages; 20,000 (7 MB) ran out of heap.
    const bare = { reply: "", program: null, status: "no_code", prints: [], toolCalls: [], definitions: [], memory: [], usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmMs: 0, execMs: 0 } };
    const turns = Array.from({ length: 7_100 }, (_, i) => ({ ...bare, number: i + 1, messages: [{ "$ptc:reuse": 2 * (i + 1) }, { role: "assistant", content: "a" }, { role: "user", content: "u" }] }));
    const text = JSON.stringify({ version: 2, system: "s", task: "t", turns });
    expect(() => traceFromJson(text)).toThrow(new TraceFormatError(`not a ptc-lisp trace: its turns' prompts hold more than ${MAX_TRACE_MESSAGES.toLocaleString("en-US")} messages in all (at turns.7069)`));
    expect(traceFromJson(JSON.stringify({ version: 2, system: "s", task: "t", turns: turns.slice(0, 1_000) })).turns).toHaveLength(1_000);
  });

  it("pretty-prints on request", async () => {
    const step = await sampleRun();
    expect(traceToJson(step.trace, 2)).toContain('\n  "version": 2');
  });

  it("keeps fields it does not know (written by newer code)", () => {
    const trace = { version: 1, system: "s", task: "t", turns: [], extra: { a: 1 } };
    expect(traceFromJson(JSON.stringify(trace))).toEqual(trace);
  });

  it.each([
    ["{not json", "invalid JSON"],
    ["[]", "not a ptc-lisp trace"],
    [JSON.stringify({ version: 3, system: "", task: "", turns: [] }), "unsupported ptc-lisp trace version 3"],
    [JSON.stringify({ version: 1, system: "", turns: [] }), "at task"],
    [JSON.stringify({ version: 1, system: "", task: "", turns: [{ number: 1 }] }), "at turns.0.messages"],
  ])("rejects %s with a clear error", (text, message) => {
    expect(() => traceFromJson(text)).toThrow(TraceFormatError);
    expect(() => traceFromJson(text)).toThrow(message);
  });

  it("rejects a turn with an unknown status, naming where", async () => {
    const step = await sampleRun();
    const raw = JSON.parse(traceToJson(step.trace));
    raw.turns[2].status = "weird";
    expect(() => traceFromJson(JSON.stringify(raw))).toThrow(/at turns\.2\.status/);
  });

  it("rejects what the viewer and the tables read when it is malformed: a turn's view statistics and cost, the run's settings", async () => {
    const step = await sampleRun();
    type Raw = { turns: Array<{ view?: unknown; usage: { cost?: unknown } }>; settings: { strategy?: unknown; model?: unknown } | null };
    const edits: Array<[(raw: Raw) => void, RegExp]> = [
      [(raw) => (raw.turns[0].view = { turnsFull: -1 }), /at turns\.0\.view\.turnsFull/],
      // The viewer adds and prints costs: one it cannot (a string, null) blanked its page.
      [(raw) => (raw.turns[1].usage.cost = "0.01"), /at turns\.1\.usage\.cost/],
      [(raw) => (raw.turns[0].usage.cost = null), /at turns\.0\.usage\.cost/],
      [(raw) => (raw.turns[0].view = { turnsFull: [{ turn: "one", reason: "error" }] }), /at turns\.0\.view\.turnsFull\.0\.turn/],
      [(raw) => (raw.settings = null), /at settings/],
      [(raw) => ((raw.settings ?? {}).strategy = null), /at settings\.strategy/],
      [(raw) => ((raw.settings ?? {}).model = 4), /at settings\.model/],
    ];
    for (const [edit, where] of edits) {
      const raw = JSON.parse(traceToJson(step.trace));
      edit(raw);
      expect(() => traceFromJson(JSON.stringify(raw))).toThrow(where);
    }
  });

  it("rejects turns not numbered in order (a duplicated or moved turn), which readers find by number", async () => {
    const step = await sampleRun();
    // The viewer's deep links and keys and ptc trace show --turn find a turn by its number: a second turn 2 could not be opened.
    for (const [numbers, where] of [
      [[1, 2, 2], /at turns\.2\.number: turn 2 follows turn 2/],
      [[1, 3, 2], /at turns\.2\.number: turn 2 follows turn 3/],
    ] as const) {
      const raw = JSON.parse(traceToJson(step.trace)) as { turns: Array<{ number: number }> };
      raw.turns = raw.turns.slice(0, 3);
      numbers.forEach((n, i) => (raw.turns[i].number = n));
      expect(() => traceFromJson(JSON.stringify(raw))).toThrow(where);
    }
  });

  it("refuses nested agents more than 64 levels deep, without overflowing the stack at any depth", async () => {
    const step = await sampleRun();
    const base = JSON.parse(traceToJson(step.trace));
    // Built as text: a deep object would overflow a recursive JSON.stringify before the reader got it.
    const level = JSON.stringify({ ...base, turns: [{ ...base.turns[0], nested: [{ tool: "t", ok: true, trace: "@inner@" }] }] });
    const [open, close] = level.split('"@inner@"');
    const nest = (levels: number): string => open.repeat(levels) + JSON.stringify(base) + close.repeat(levels);
    // The sample run nests one agent already.
    expect(() => traceFromJson(nest(63))).not.toThrow();
    for (const levels of [64, 400]) expect(() => traceFromJson(nest(levels))).toThrow(/not a ptc-lisp trace: its nested agents go more than 64 levels deep/);
    // Deeper still, the JSON reader itself gives up first: refused all the same.
    for (const levels of [900, 3000]) expect(() => traceFromJson(nest(levels))).toThrow(TraceFormatError);
  });
});

describe("saved runs", () => {
  it("saves the outcome, usage and trace, and loads them back", async () => {
    const step = await sampleRun();
    const saved = runFromJson(runToJson(step));
    expect(saved.ok).toBe(true);
    expect(saved.value).toEqual({ mean: 2.5 });
    expect(saved.trace).toEqual(step.trace);
    expect(saved.usage).toEqual(JSON.parse(JSON.stringify(step.usage)));
  });

  it("saves and loads back an answer holding a BigInt, as an output schema may transform to one", async () => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 1, output: z.object({ id: z.string().transform((s) => BigInt(s)) }) });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(return {:id "9007199254740993"})')]), isolation: "none" });
    expect(step.value).toEqual({ id: 9007199254740993n });
    expect(runFromJson(runToJson(step)).value).toEqual({ id: 9007199254740993n });
  });

  // The saved forms tag Maps and Sets (55231ff); the answer's check refused them still ("value.byId is a Map").
  it("saves and loads back an answer holding a Map and a Set, as an output schema may transform to them", async () => {
    const answer = () => ({ byId: new Map<unknown, unknown>([["a", 1], [7, new Set(["x", "y"])]]), tags: new Set([1, 2]) });
    const agent = SubAgent.create({ prompt: "x", maxTurns: 1, output: z.number().transform(answer) });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), isolation: "none" });
    expect(step.ok).toBe(true);
    expect(runFromJson(runToJson(step)).value).toEqual(answer());
    const state = runStateFromJson(runStateToJson(saveRun(step, agent)));
    expect(state.outcome).toEqual({ ok: true, value: answer() });
  });

  // An output schema may transform the answer to anything: what JSON cannot hold is named, never a raw TypeError nor silently dropped.
  it.each([
    ["a cycle", () => { const c: Record<string, unknown> = { a: 1 }; c.self = c; return c; }, "value.self is a cycle (it contains itself)"],
    ["a function in a Map", () => ({ byId: new Map<unknown, unknown>([["a", 1], ["b", () => 2]]) }), "value.byId.b is a function"],
    ["a function as a Map's key", () => ({ byId: new Map([[() => 1, 1]]) }), "value.byId.(key 0) is a function"],
    ["a symbol in a Set", () => [1, new Set([2, Symbol("x")])], "value.1.1 is a symbol"],
    ["a WeakMap", () => ({ cache: new WeakMap() }), "value.cache is a WeakMap"],
    ["a function, which JSON drops", () => ({ total: 3, format: () => "3" }), "value.format is a function"],
    ["a symbol", () => Symbol("x"), "value is a symbol"],
  ] as Array<[string, () => unknown, string]>)("refuses to save an answer holding %s, saying where", async (_what, answer, where) => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 1, output: z.number().transform(answer) });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), isolation: "none" });
    expect(step.ok).toBe(true);
    const message = `the run's value cannot be saved as JSON: ${where}`;
    expect(() => runToJson(step)).toThrow(message);
    expect(() => runStateToJson(saveRun(step, agent))).toThrow(message);
  });

  // A JavaScript host's slip (a step not awaited, null, the trace alone) met a raw TypeError deep inside ("Cannot read properties of null (reading 'ok')").
  it.each([
    ["null", null, "got null"],
    ["a step not awaited", Promise.resolve(), "got a Promise: await SubAgent.run first"],
    ["a trace", { version: 2, system: "", task: "", turns: [] }, "got an object that is not one"],
  ])("refuses to save %s, naming what it expects", async (_what, given, got) => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 1 });
    expect(() => runToJson(given as never)).toThrow(new TypeError(`runToJson expects a Step (what SubAgent.run resolves to), ${got}`));
    expect(() => saveRun(given as never, agent)).toThrow(new ResumeError(`saveRun expects a Step (what SubAgent.run resolves to), ${got}`));
  });

  // The other writers met the same slips bare: runStateToJson(step.paused?.state) of a run that did not pause threw
  // "Cannot destructure property 'trace' of 'state' as it is undefined", traceToJson(step) "Cannot read properties of undefined (reading 'map')".
  it("refuses to write a state or a trace that is not one, naming what it expects", async () => {
    const step = await SubAgent.run(SubAgent.create({ prompt: "x", maxTurns: 1 }), { llm: scriptedLlm([code("(return 1)")]), isolation: "none" });
    expect(() => runStateToJson(step.paused?.state as never)).toThrow(new TypeError("runStateToJson expects a RunState (saveRun's result, a paused step's state, or runStateFromJson's), got undefined"));
    expect(() => runStateToJson(step as never)).toThrow(new TypeError("runStateToJson expects a RunState (saveRun's result, a paused step's state, or runStateFromJson's), got an object without its format"));
    expect(() => traceToJson(step as never)).toThrow(new TypeError("traceToJson expects a RunTrace (a Step's trace), got a Step: pass its trace"));
    expect(() => traceToJson(null as never)).toThrow(new TypeError("traceToJson expects a RunTrace (a Step's trace), got null"));
  });

  it("refuses to save a run with something other than its agent", async () => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 1 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), isolation: "none" });
    // Taken as given, {} saved a state without maxTurns, which no resume could read back.
    for (const other of [null, {}, { prompt: "x" }]) expect(() => saveRun(step, other as never)).toThrow(new AgentDefinitionError("saveRun expects an agent made by SubAgent.create"));
  });

  // resume(null, state) threw "Cannot read properties of null (reading 'maxTurns')"; asTool(agent, null) "(reading 'input')".
  it("refuses to resume with something other than an agent, and offers an agent as a tool with null options", async () => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 3 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(println 1)")]), isolation: "none" });
    for (const other of [null, { prompt: "x", maxTurns: 3 }]) await expect(SubAgent.resume(other as never, saveRun(step, agent), { llm: scriptedLlm([]) })).rejects.toThrow(new AgentDefinitionError("SubAgent.resume expects an agent made by SubAgent.create"));
    expect(SubAgent.asTool(agent, null as never).description).toBe("A sub-agent for: x");
  });

  it("saves a failure with its reason", async () => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 1 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(fail {:why "no data"})')]) });
    const saved = runFromJson(runToJson(step));
    expect(saved.ok).toBe(false);
    expect(saved.fail).toEqual({ reason: "failed", message: '{:why "no data"}', details: { why: "no data" } });
    expect(saved.value).toBeUndefined();
  });

  it("keeps the definitions needed to rebuild memory: EDN for data, source for functions", async () => {
    const step = await sampleRun();
    const memory = runFromJson(runToJson(step)).trace.turns.at(-1)?.memory ?? [];
    const s = memory.find((d) => d.name === "s");
    const half = memory.find((d) => d.name === "half");
    expect(s).toMatchObject({ doc: "the stats", kind: "value", type: "map" });
    expect(s?.edn).toContain(":mean 2.5");
    expect(half).toMatchObject({ kind: "function", params: "[x]", source: "(defn half [x] (/ x 2))" });
    expect(half?.edn).toBeUndefined();
  });
});
