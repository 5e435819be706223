// Resuming a run that used a history strategy: saved, read back from JSON and resumed with a
// larger turn budget, it must send exactly the prompts the same run sends done straight, record
// the strategy in the resumed trace, and refuse a replay whose earlier prompts differ.
import { describe, expect, it } from "vitest";
import { resumeRun, saveRun } from "../../src/agent/resume.js";
import { runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";
import { SubAgent } from "../../src/agent/subagent.js";
import type { RunOptions } from "../../src/agent/types.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";
// Five turns that never return, so a 3-turn run stops with max_turns_exceeded and can be resumed.
const PROGRAMS = ["(def xs (range 10))", '(def total (reduce + xs))\n(println "total" total)', "(def big (mapv (fn [x] {:id x :sq (* x x)}) xs))", '(println "count" (count big))', '(println "still" total)'].map(code);

const HISTORIES: Array<[string, RunOptions]> = [
  ["full (default)", {}],
  ["sliding-window turns:1", { history: { name: "sliding-window", options: { turns: 1 } } }],
  ["interpreter-summaries", { history: "interpreter-summaries" }],
  ["compressHistory: true", { compressHistory: true }],
  ["recap", { history: "recap" }],
];

const sizes = (requests: ReadonlyArray<{ messages: unknown[] }>): number[] => requests.map((r) => r.messages.length);

describe("resuming a run with a history strategy", () => {
  for (const [label, options] of HISTORIES) {
    it(`${label}: the resumed run sends exactly the straight run's prompts`, async () => {
      const straightLlm = scriptedLlm(PROGRAMS);
      const straight = await SubAgent.run(SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 5 }), { llm: straightLlm, ...options });
      expect(straight.fail?.reason).toBe("max_turns_exceeded");

      const short = SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 3 });
      const first = await SubAgent.run(short, { llm: scriptedLlm(PROGRAMS.slice(0, 3)), ...options });
      expect(first.fail?.reason).toBe("max_turns_exceeded");
      const state = runStateFromJson(runStateToJson(saveRun(first, short)));

      const liveLlm = scriptedLlm(PROGRAMS.slice(3));
      const resumed = await resumeRun(SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 5 }), state, { llm: liveLlm });
      expect(resumed.fail?.reason).toBe("max_turns_exceeded");
      // The prompts of the replayed and the live turns are the straight run's, message for message.
      expect(resumed.messages).toEqual(straight.messages);
      expect(sizes(liveLlm.requests)).toEqual(sizes(straightLlm.requests.slice(3)));
      expect(resumed.trace.settings?.strategy).toEqual(straight.trace.settings?.strategy);
      // One measure: the replayed and live turns show the straight run's figures, measured locally.
      const figures = (s: typeof straight) => s.trace.turns.map((t) => [t.usage.inputTokens, t.usage.cachedTokens, t.usage.outputTokens, t.usage.source]);
      expect(figures(resumed)).toEqual(figures(straight));
    });
  }

  it("rolling-summary with a summarizer model: the saved summaries are replayed, only the live turns ask the model", async () => {
    // Each summary names the call, so a re-asked summarizer would change the prompt.
    const summarizer = () => {
      let n = 0;
      // A provider's usage, which the replayed summaries must be charged as the saved run was.
      return scriptedLlm(Array.from({ length: 20 }, () => () => ({ content: JSON.stringify({ ConversationSummary: `summary ${++n}: xs is (range 10), total is 45.` }), usage: { inputTokens: 700 + n, outputTokens: 40, cachedTokens: 0 } })));
    };
    // Long replies, so a summary of them makes the prompt smaller and is kept.
    const programs = PROGRAMS.map((p) => "Thinking aloud about how to add up the numbers. ".repeat(30) + "\n\n" + p);
    const options = (historyLlm: ReturnType<typeof summarizer>): RunOptions => ({ history: { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } }, historyLlm });
    const straightSummaries = summarizer();
    const straight = await SubAgent.run(SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 5 }), { llm: scriptedLlm(programs), ...options(straightSummaries) });
    const short = SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 3 });
    const firstSummaries = summarizer();
    const first = await SubAgent.run(short, { llm: scriptedLlm(programs.slice(0, 3)), ...options(firstSummaries) });
    expect(firstSummaries.requests.length).toBeGreaterThan(0);
    expect(first.turns.flatMap((t) => t.compaction?.calls ?? [])).toHaveLength(firstSummaries.requests.length);
    const state = runStateFromJson(runStateToJson(saveRun(first, short)));
    expect(state.history?.strategy.name).toBe("rolling-summary");
    const liveSummaries = summarizer();
    // The live summarizer continues the numbering where the saved run stopped.
    for (let i = 0; i < firstSummaries.requests.length; i++) await liveSummaries.complete({ messages: [] });
    const resumed = await resumeRun(SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 5 }), state, { llm: scriptedLlm(programs.slice(3)), ...options(liveSummaries) });
    expect(JSON.stringify(straight.messages.at(-1))).toMatch(/summary \d/);
    expect(resumed.fail?.message).toMatch(/no valid/);
    expect(resumed.messages).toEqual(straight.messages);
    expect(liveSummaries.requests.length).toBe(straightSummaries.requests.length);
    // (Their prompts differ from the saved ones in the turn budget they state.)
    const spent = (t: (typeof first.turns)[number]) => [t.compaction?.stats.llmCalls, t.compaction?.stats.llmInputTokens, t.compaction?.stats.llmOutputTokens];
    expect(resumed.turns.slice(0, 3).map(spent)).toEqual(first.turns.map(spent));
    expect(resumed.usage.summaries).toEqual(straight.usage.summaries);
  });

  it("sliding-window turns:1 sends 2, 4, 4, 4, 4 messages straight and resumed", async () => {
    const options: RunOptions = { history: { name: "sliding-window", options: { turns: 1 } } };
    const short = SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 3 });
    const first = await SubAgent.run(short, { llm: scriptedLlm(PROGRAMS.slice(0, 3)), ...options });
    expect(first.messages.map((m) => m.length)).toEqual([2, 4, 4]);
    const state = runStateFromJson(runStateToJson(saveRun(first, short)));
    const resumed = await resumeRun(SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 5 }), state, { llm: scriptedLlm(PROGRAMS.slice(3)) });
    expect(resumed.messages.map((m) => m.length)).toEqual([2, 4, 4, 4, 4]);
  });

  it("refuses a replay whose earlier prompt differs anywhere, not only in its last message", async () => {
    const agent = SubAgent.create({ prompt: "Add up the numbers.", maxTurns: 5 });
    for (const options of [{ history: { name: "sliding-window", options: { turns: 1 } } }, {}] as RunOptions[]) {
      // The LLM gives out after three turns: the run stops with llm_error, resumable with the same agent.
      const first = await SubAgent.run(agent, { llm: scriptedLlm(PROGRAMS.slice(0, 3)), ...options });
      expect(first.fail?.reason).toBe("llm_error");
      const intact = runStateFromJson(runStateToJson(saveRun(first, agent)));
      expect((await resumeRun(agent, intact, { llm: scriptedLlm(PROGRAMS.slice(3)) })).messages).toHaveLength(5);
      // A middle message of the third saved prompt (the first reply it repeats) changed.
      const state = runStateFromJson(runStateToJson(saveRun(first, agent)));
      const prompt = state.trace.turns[2].messages;
      prompt[2] = { ...prompt[2], content: prompt[2].content + " " };
      const live = scriptedLlm(PROGRAMS.slice(3));
      // The replay stops at that prompt, before any live turn is spent.
      await expect(resumeRun(agent, state, { llm: live })).rejects.toThrow(/resume: replaying turn 2 did not reproduce the saved run: message 3 of prompt 3 differs/);
      expect(live.requests).toHaveLength(0);
    }
  });
});

// A strategy whose system prompt changes on every call (kept in its closure, not its state) gave a
// resume refusal that blamed only "different tools, tool descriptions or output schema".
describe("resuming under a history strategy whose system prompt is not a function of its input", () => {
  it("names the history strategy among the causes", async () => {
    const { z } = await import("zod");
    const { tool } = await import("../../src/agent/tools.js");
    const strategy = () => {
      let calls = 0;
      return {
        name: "mine",
        usesLlm: false,
        initialState: () => null,
        project: async (c: { messages: Array<{ role: string; content: string }> }) => {
          calls++;
          const messages = c.messages.map((m, i) => (i === 0 ? { ...m, content: `system, call ${calls}` } : { ...m }));
          return { messages, state: null, stats: { llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 }, events: [] };
        },
      };
    };
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval: true, run: () => "sent" });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 5 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(def a 1)"), code('(def r (tool/send {:to "x"}))')]), history: strategy() as never, isolation: "none" });
    expect(step.paused).toBeDefined();
    const state = runStateFromJson(runStateToJson(saveRun(step, agent)));
    await expect(SubAgent.resume(agent, state, { llm: scriptedLlm([code("(return r)")]), history: strategy() as never, isolation: "none", approvals: { "turn-2-call-1": { approved: true } } })).rejects.toThrow(
      /^resume: the system prompt differs from the saved run's \(different tools, tool descriptions or output schema, or a history strategy whose prompt is not a function of its input and state\?\)/,
    );
  });
});
