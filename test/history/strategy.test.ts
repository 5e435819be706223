// The interpreter-aware view as a compaction strategy, and SubAgent's history policy: any
// strategy builds the prompts, the trace records which, and older traces still read.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compact } from "../../src/compaction/compact.js";
import { listStrategies } from "../../src/compaction/registry.js";
import { defaultStrategies } from "../../src/history/registry.js";
import { runFromJson, runToJson } from "../../src/agent/saved-run.js";
import { traceFromJson, traceToJson } from "../../src/trace/serialize.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { INTERPRETER_STRATEGY } from "../../src/history/strategy.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";
const PROGRAMS = ["(def xs (range 10))", '(def total (reduce + xs))\n(println "total" total)', "(def big (mapv (fn [x] {:id x :sq (* x x)}) xs))", '(println "count" (count big))', "(return total)"].map(code);

async function run(options: Record<string, unknown>) {
  const agent = SubAgent.create({ prompt: "Add up the numbers.", maxTurns: PROGRAMS.length });
  return SubAgent.run(agent, { llm: scriptedLlm(PROGRAMS), ...options });
}

describe("the interpreter-summaries strategy", () => {
  it("is registered, declares that it calls no model", () => {
    const info = listStrategies(defaultStrategies).find((s) => s.name === INTERPRETER_STRATEGY);
    // The generic registry, below src/history, does not know it.
    expect(listStrategies().some((s) => s.name === INTERPRETER_STRATEGY)).toBe(false);
    expect(info?.usesLlm).toBe(false);
  });

  it("builds exactly the prompts compressHistory builds", async () => {
    const viaView = await run({ compressHistory: true });
    const viaStrategy = await run({ history: INTERPRETER_STRATEGY });
    expect(viaView.ok && viaStrategy.ok).toBe(true);
    expect(viaStrategy.messages).toEqual(viaView.messages);
    // And they are smaller than the full history by the last prompt.
    const full = await run({});
    const size = (s: typeof full) => JSON.stringify(s.messages.at(-1)).length;
    expect(size(viaStrategy)).toBeLessThan(size(full));
  });

  it("leaves a chat without turn records as it is, saying why", async () => {
    const messages = [
      { role: "system" as const, content: "s" },
      { role: "user" as const, content: "hello" },
    ];
    const r = await compact(messages, INTERPRETER_STRATEGY, { registry: defaultStrategies });
    expect(r.messages).toEqual(messages);
    expect(r.events.map((e) => e.kind)).toEqual(["skipped"]);
  });
});

describe("SubAgent's history policy", () => {
  it("gives each turn record of a strategy that is not a view its own empty view statistics", async () => {
    const step = await run({ history: { name: "sliding-window", options: { turns: 1 } } });
    const views = step.trace.turns.map((t) => t.view);
    expect(views.length).toBeGreaterThan(1);
    expect(views[0]).toEqual({ turnsCompressed: 0, turnsFull: [], definitionsShown: 0, printlnShown: 0, printlnDropped: 0, toolCallsShown: 0 });
    // A host editing one record's statistics edits no other record.
    views[0]?.turnsFull.push({ turn: 1, reason: "latest" });
    expect(views[1]?.turnsFull).toEqual([]);
  });

  it("takes any strategy by name and options, keeps its state across turns, and records it in the trace", async () => {
    const step = await run({ history: { name: "sliding-window", options: { turns: 1 } } });
    expect(step.ok).toBe(true);
    expect(step.trace.version).toBe(2);
    expect(step.trace.settings?.strategy).toEqual({ name: "sliding-window", options: expect.objectContaining({ turns: 1 }) });
    // The last prompt is smaller than the full history's.
    const full = await run({});
    expect(JSON.stringify(step.messages.at(-1)).length).toBeLessThan(JSON.stringify(full.messages.at(-1)).length);
    // The record survives saving.
    expect(traceFromJson(traceToJson(step.trace)).settings?.strategy?.name).toBe("sliding-window");
    expect(runFromJson(runToJson(step)).trace.settings?.strategy?.name).toBe("sliding-window");
  });

  it("rejects an unknown strategy when the agent is defined", () => {
    expect(() => SubAgent.create({ prompt: "x", history: "no-such-strategy" })).toThrow(/history: compaction: unknown strategy "no-such-strategy"/);
  });

  it("still reads version 1 traces, written before strategies were recorded", async () => {
    const step = await run({});
    const old = { ...step.trace, version: 1 as const };
    expect(traceFromJson(JSON.stringify(old)).version).toBe(1);
    expect(() => traceFromJson(JSON.stringify({ ...old, version: 3 }))).toThrow(/reads versions 1 and 2/);
  });
});

describe("a bad history option given to run", () => {
  it("ends the run with invalid_input, never a rejection", async () => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), history: { name: "sliding-window", options: { turns: 0 } } });
    expect(step.ok).toBe(false);
    expect(step.fail?.reason).toBe("invalid_input");
    expect(step.fail?.message).toMatch(/^history: compaction: invalid options for strategy "sliding-window"/);
  });
});

// A strategy object is the host's code: one missing a name ran, and its trace and saved state
// could not be read back (`at trace.settings.strategy.name`); one missing initialState ended
// the run mid-way with internal_error. Both are refused up front, naming what is missing.
describe("a custom strategy object that is not whole", () => {
  const project = async (c: { messages: unknown[] }, state: unknown) => ({ messages: c.messages, state, stats: { durationMs: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 }, events: [] });
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ["without a name", { options: {}, usesLlm: false, initialState: () => null, project }, /^history: compaction: a strategy object's name must be a non-empty string, got undefined$/],
    ["with an empty name", { name: "", options: {}, usesLlm: false, initialState: () => null, project }, /^history: compaction: a strategy object's name must be a non-empty string, got a string of 0 characters$/],
    ["without initialState", { name: "mine", options: {}, usesLlm: false, project }, /^history: compaction: strategy "mine": initialState must be a function, got undefined$/],
    ["with options that are not an object", { name: "mine", options: 5, usesLlm: false, initialState: () => null, project }, /^history: compaction: strategy "mine": options must be an object of its option values, got a number$/],
  ];
  it.each(cases)("%s is refused by create, and by run with invalid_input", async (_, history, message) => {
    expect(() => SubAgent.create({ prompt: "Add up.", history: history as never })).toThrow(message);
    const agent = SubAgent.create({ prompt: "Add up." });
    const llm = scriptedLlm([code("(return 1)")]);
    const step = await SubAgent.run(agent, { llm, history: history as never, isolation: "none" });
    expect(step.fail?.reason).toBe("invalid_input");
    expect(step.fail?.message).toMatch(message);
    expect(llm.requests).toHaveLength(0);
  });

  // A registry's definition gave such an object and create took it (its name and options
  // unchecked), so a report or trace recorded a strategy no registry could rebuild.
  it.each(cases)("%s is refused when a registry definition's create gives it", (_, built, message) => {
    const registry = defaultStrategies.with({ name: "odd", description: "a definition gone wrong", usesLlm: false, schema: z.object({}), create: () => built as never });
    expect(() => registry.create("odd")).toThrow(new RegExp(message.source.replace("^history: ", "^")));
  });

  // Its state is kept in the trace and the saved state as JSON: a Map, a function or NaN there
  // ran on, and the saved state then could not be read back ("at history.state: Invalid input");
  // a cycle made runToJson throw JSON.stringify's bare TypeError.
  const cyclic = (): unknown => {
    const a: Record<string, unknown> = {};
    a.self = a;
    return { a };
  };
  it.each<[string, () => unknown, string]>([
    ["a Map", () => ({ seen: new Map([[1, 2]]) }), "state.seen is a Map"],
    ["a function", () => [1, () => 2], "state.1 is a function"],
    ["NaN", () => ({ n: NaN }), "state.n is NaN"],
    ["a cycle", cyclic, "state.a.self is a cycle (it contains itself)"],
    ["undefined", () => undefined, "state is undefined"],
  ])("whose project gives a state holding %s ends the run with internal_error naming where, before the model is asked", async (_, state, where) => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const llm = scriptedLlm([code("(return 1)")]);
    const history = { name: "mine", usesLlm: false, initialState: () => null, project: async (c: { messages: unknown[] }) => ({ messages: c.messages, state: state(), stats: { durationMs: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 }, events: [] }) };
    const step = await SubAgent.run(agent, { llm, history: history as never, isolation: "none" });
    expect(step.fail).toEqual({ reason: "internal_error", message: `internal error: the history strategy "mine" gave a state that is not JSON (${where}) building the prompt of turn 1` });
    expect(llm.requests).toHaveLength(0);
    expect(() => runFromJson(runToJson(step))).not.toThrow();
  });

  // A prompt message of another role ran (sent to the model as is), and the run's trace could not be
  // read back ("at trace.turns.0.messages.1.role"); content that is not text failed as "the
  // strategy threw", which it had not.
  it.each<[string, (m: unknown[]) => unknown, string]>([
    ["a message of another role", (m) => [...m, { role: "wizard", content: "x" }], `message 3 with role "wizard" (a prompt holds system, user and assistant messages)`],
    ["a message whose content is a number", (m) => [...m.slice(0, -1), { role: "user", content: 5 }], "message 2 that has content of type number (expected a string, null or content parts)"],
    ["a message that is null", (m) => [...m, null], "message 3 that is not an object"],
    // The prompt's check was its own weaker copy of compact()'s: a content part that is not an
    // object was sent as an empty message, a name of another type failed as "countTokens: text must
    // be a string", and tool_calls that are text as "Cannot read properties of undefined".
    ["a content part that is not an object", (m) => [...m, { role: "user", content: [5] }], "message 3 that has a content part (0) that is not an object"],
    ["a name that is a number", (m) => [...m, { role: "user", content: "x", name: 5 }], "message 3 that has name of type number (expected a string)"],
    ["tool_calls that are text", (m) => [...m, { role: "assistant", content: "x", tool_calls: "zz" }], "message 3 that has tool_calls of type string (expected an array)"],
    ["no messages", () => [], "no messages"],
    ["messages that are not a list", () => "hello", "messages that are not a list"],
  ])("whose project gives %s ends the run with internal_error saying so, before the model is asked", async (_, messages, what) => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const llm = scriptedLlm([code("(return 1)")]);
    const history = { name: "mine", usesLlm: false, initialState: () => null, project: async (c: { messages: unknown[] }) => ({ messages: messages(c.messages), state: null, stats: { durationMs: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 }, events: [] }) };
    const step = await SubAgent.run(agent, { llm, history: history as never, isolation: "none" });
    expect(step.fail).toEqual({ reason: "internal_error", message: `internal error: the history strategy "mine" gave ${what} building the prompt of turn 1` });
    expect(llm.requests).toHaveLength(0);
  });

  // The trace kept the strategy's own message objects: one that reused (and rewrote) them on a
  // later turn rewrote what the trace and the saved state said earlier turns had sent.
  it("whose project rewrites the messages it gave before leaves the earlier turns' records as sent", async () => {
    let given: Array<{ content: string }> = [];
    const history = {
      name: "mine",
      usesLlm: false,
      initialState: () => null,
      project: async (c: { messages: Array<{ content: string }> }) => {
        for (const m of given) m.content = "rewritten later";
        given = c.messages.map((m) => ({ ...m }));
        return { messages: given, state: null, stats: { durationMs: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 }, events: [] };
      },
    };
    const agent = SubAgent.create({ prompt: "Add up.", maxTurns: 3 });
    const llm = scriptedLlm([code("(def a 1)"), code("(return a)")]);
    const step = await SubAgent.run(agent, { llm, history: history as never, isolation: "none" });
    expect(step.ok).toBe(true);
    const sent = llm.requests.map((r) => r.messages.map((m) => m.content));
    expect(step.trace.turns.map((t) => t.messages.map((m) => m.content))).toEqual(sent);
    expect(JSON.stringify(runToJson(step))).not.toContain("rewritten later");
  });

  // The strategy was given the full history's own messages, which the run then measured the
  // prompt against: one that worked in place (appending to its input) inflated fullTokens.
  it("whose project changes its input does not change what the full history is measured at", async () => {
    const run = async (touch: boolean): Promise<number[]> => {
      const history = {
        name: "mine",
        usesLlm: false,
        initialState: () => null,
        project: async (c: { messages: Array<{ role: string; content: string }> }) => {
          const messages = c.messages.map((m) => ({ ...m }));
          if (touch) {
            for (const m of c.messages) m.content += " padding".repeat(200);
            c.messages.push({ role: "user", content: "more padding ".repeat(500) });
          }
          return { messages, state: null, stats: { durationMs: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 }, events: [] };
        },
      };
      const step = await SubAgent.run(SubAgent.create({ prompt: "Add up.", maxTurns: 3 }), { llm: scriptedLlm([code("(def a 1)"), code("(return a)")]), history: history as never, isolation: "none" });
      expect(step.ok).toBe(true);
      return step.usage.compression.perTurn.map((t) => t.fullTokens);
    };
    expect(await run(true)).toEqual(await run(false));
  });

  // A result without stats or events, or with them of the wrong type, failed as "the history
  // strategy threw building the prompt" (our own TypeError), which it had not; stats without
  // their spend (llmCalls, ...) ran on and were kept, which a resume's nested spending summed as NaN.
  const spend = { durationMs: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 };
  it.each<[string, (m: unknown[]) => unknown, string]>([
    ["no result", () => null, "a result that is not an object (null; expected { messages, state, stats, events })"],
    ["no stats", (m) => ({ messages: m, state: null, events: [] }), "stats that are not an object (undefined; expected CompactionStats)"],
    ["stats that are a number", (m) => ({ messages: m, state: null, stats: 5, events: [] }), "stats that are not an object (number; expected CompactionStats)"],
    ["stats without their spend", (m) => ({ messages: m, state: null, stats: { durationMs: 0 }, events: [] }), "stats without llmCalls (expected a count: what the strategy's own model calls spent, 0 for none)"],
    ["a spend that is text", (m) => ({ messages: m, state: null, stats: { ...spend, llmInputTokens: "12" }, events: [] }), "stats.llmInputTokens of type string (expected a count: what the strategy's own model calls spent, 0 for none)"],
    ["a token count that is negative", (m) => ({ messages: m, state: null, stats: { ...spend, tokensOut: -3 }, events: [] }), "stats.tokensOut of -3 (expected a non-negative number)"],
    ["no events", (m) => ({ messages: m, state: null, stats: spend }), "events that are not a list (undefined; expected CompactionEvent[], [] for none)"],
    ["events that are text", (m) => ({ messages: m, state: null, stats: spend, events: "compacted" }), "events that are not a list (string; expected CompactionEvent[], [] for none)"],
    ["an event without a kind", (m) => ({ messages: m, state: null, stats: spend, events: [{ kind: "compacted" }, 5] }), "event 2 that is not one (expected { kind, detail? })"],
  ])("whose project gives %s ends the run with internal_error naming it, before the model is asked", async (_, result, what) => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const llm = scriptedLlm([code("(return 1)")]);
    const history = { name: "mine", usesLlm: false, initialState: () => null, project: async (c: { messages: unknown[] }) => result(c.messages) };
    const step = await SubAgent.run(agent, { llm, history: history as never, isolation: "none" });
    expect(step.fail).toEqual({ reason: "internal_error", message: `internal error: the history strategy "mine" gave ${what} building the prompt of turn 1` });
    expect(llm.requests).toHaveLength(0);
  });

  // Its cache marks were taken inside the LLM call: one that threw ended the run with llm_error
  // quoting the host's text ("LLM request failed on turn 1: boom sk-live-SECRET"), and a number
  // for a list made SubAgent.run reject with a bare TypeError under a model priced with a
  // breakpoint cache.
  it.each<[string, () => unknown, string]>([
    ["throws", () => { throw new Error("boom sk-live-SECRET"); }, 'the history strategy "mine" threw marking the prompt of turn 1 for the cache (its message is left out of the run\'s record: a host\'s text may hold secrets)'],
    ["gives a number", () => 5, 'the history strategy "mine" gave cache breakpoints that are not a list of message indices marking the prompt of turn 1 for the cache'],
  ])("whose cacheBreakpoints %s ends the run with internal_error, before the model is asked", async (_, cacheBreakpoints, message) => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const llm = scriptedLlm([{ content: code("(return 1)"), model: "claude-sonnet-4-5" }]);
    const history = { name: "mine", usesLlm: false, initialState: () => null, project: async (c: { messages: unknown[] }, state: null) => ({ messages: c.messages, state, stats: { durationMs: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 }, events: [] }), cacheBreakpoints };
    const step = await SubAgent.run(agent, { llm, history: history as never, isolation: "none" });
    expect(step.fail).toEqual({ reason: "internal_error", message: `internal error: ${message}` });
    expect(llm.requests).toHaveLength(0);
  });

  it("whole, runs and its trace reads back", async () => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), history: { name: "mine", usesLlm: false, initialState: () => null, project } as never, isolation: "none" });
    expect(step.value).toBe(1);
    expect(runFromJson(runToJson(step)).trace.settings?.strategy).toEqual({ name: "mine", options: {} });
  });
});
