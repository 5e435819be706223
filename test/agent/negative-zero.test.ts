// -0 is a value a tool can return (and a program can compute); plain JSON writes it as 0.
// Every path that serializes values must keep it: the trace, a saved run, the run state
// resumed from, and the text the viewer and `ptc trace show` display.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { runFromJson, runToJson } from "../../src/agent/saved-run.js";
import { traceFromJson, traceToJson } from "../../src/trace/serialize.js";
import { saveRun, stateView } from "../../src/agent/resume.js";
import { runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { prettyJson } from "../../src/viewer/run.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";
const odd = { zero: -0, list: [-0, 0, Infinity, -Infinity, NaN], nested: { z: -0 } };

async function run(maxTurns: number, replies: string[]) {
  const agent = SubAgent.create({
    prompt: "Report the reading",
    tools: { reading: tool({ description: "A reading.", run: () => odd }) },
    output: z.object({ zero: z.number() }),
    maxTurns,
  });
  return { agent, step: await SubAgent.run(agent, { llm: scriptedLlm(replies), compressHistory: true }) };
}

/** Deep equality where -0 and 0 differ (toEqual treats them as the same only by luck of the matcher). */
const same = (a: unknown, b: unknown): boolean => {
  if (typeof a === "number" || typeof b === "number") return Object.is(a, b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (a !== null && b !== null && typeof a === "object" && typeof b === "object") {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
};

describe("-0 through every serialization", () => {
  it("the checker itself tells -0 from 0", () => {
    expect(same({ a: [-0] }, { a: [0] })).toBe(false);
    expect(same({ a: [-0] }, { a: [-0] })).toBe(true);
  });

  it("survives a trace and a saved run", async () => {
    const { step } = await run(2, [code("(def r (tool/reading))\n(println (:zero r))"), code("(return {:zero (:zero r)})")]);
    expect(step.ok).toBe(true);
    expect(Object.is((step.value as { zero: number }).zero, -0)).toBe(true);
    const trace = traceFromJson(traceToJson(step.trace));
    expect(same(trace.turns[0].toolCalls[0].result, odd)).toBe(true);
    const saved = runFromJson(runToJson(step));
    expect(same(saved.value, { zero: -0 })).toBe(true);
    expect(same(saved.trace.turns[0].toolCalls[0].result, odd)).toBe(true);
    expect(traceToJson(trace)).toBe(traceToJson(step.trace));
  });

  it("survives the run state, and the rebuilt views show it as the live run did", async () => {
    const { agent, step } = await run(2, [code("(println (:zero (tool/reading)))"), code("(println 1)")]);
    expect(step.ok).toBe(false);
    const state = saveRun(step, agent);
    const back = runStateFromJson(runStateToJson(state));
    expect(same(back.trace.turns[0].toolCalls[0].result, odd)).toBe(true);
    expect(stateView(back, "compressed")).toEqual(stateView(state, "compressed"));
    const ended = { ...state, outcome: { ok: true as const, value: { zero: -0, big: Infinity } } };
    expect(same(runStateFromJson(runStateToJson(ended)).outcome, ended.outcome)).toBe(true);
  });

  it("shows as -0 in the text the viewer and ptc trace show display, and a string cannot pose as a number", () => {
    expect(prettyJson(odd, 0)).toBe('{"zero":-0,"list":[-0,0,Infinity,-Infinity,NaN],"nested":{"z":-0}}');
    expect(prettyJson({ s: "ptc-number-x:-0", t: "-0" }, 0)).toBe('{"s":"ptc-number-x:-0","t":"-0"}');
  });
});
