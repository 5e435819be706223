// Compressed history under both cache models (issue 20): with a breakpoint cache (Anthropic
// style) each summary is its own message, appended once, and the view marks breakpoints after
// the task and at the end, so a session's compressed prompts cost no more than full history.
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { createMeter } from "../../src/compaction/measure.js";
import { anthropicCache, openaiCache, type ModelPrice } from "../../src/compaction/prices.js";
import { compressedView } from "../../src/history/compressed.js";
import { defaultViewOptions, type ViewOptions } from "../../src/history/view.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { RunTrace } from "../../src/trace/trace.js";

const code = (body: string): string => "Next step.\n\n```clojure\n" + body + "\n```";
const rows = Array.from({ length: 60 }, (_, i) => ({ id: i, city: ["Oslo", "Lima", "Perth"][i % 3], total: (i * 37) % 500, note: `order note ${i}` }));

async function session(turns: number): Promise<RunTrace> {
  const programs = Array.from({ length: turns - 1 }, (_, k) => `(def t${k} (filter #(= (:city %) "${["Oslo", "Lima", "Perth"][k % 3]}") data/rows))\n(println "step ${k}" (count t${k}) (reduce + (map :total t${k})))`);
  const agent = SubAgent.create({ prompt: "Sum the totals per city.", maxTurns: turns });
  const step = await SubAgent.run(agent, { llm: scriptedLlm([...programs, "(return :done)"].map(code)), context: { rows } });
  expect(step.ok).toBe(true);
  return step.trace;
}

function cost(trace: RunTrace, options: ViewOptions, price: ModelPrice): number {
  const meter = createMeter(price);
  for (let k = 0; k < trace.turns.length; k++) {
    const view = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: trace.turns.length }, options);
    meter.add({ messages: view.messages, ...(view.breakpoints === undefined ? {} : { breakpoints: view.breakpoints }) });
  }
  return meter.totals.cost;
}

const BREAKPOINT: ModelPrice = { input: 1, output: 0, cache: anthropicCache(1024) };
const TOKEN_PREFIX: ModelPrice = { input: 1, output: 0, cache: openaiCache(0.1) };
const full: ViewOptions = { ...defaultViewOptions, compressHistory: false };
const compressed = (cacheModel: "token-prefix" | "breakpoint"): ViewOptions => ({ ...defaultViewOptions, compressHistory: true, cacheModel });

describe("cache models", () => {
  it("breakpoint layout: one message per summary, appended once, breakpoints after the task and at the end", async () => {
    const trace = await session(8);
    const input = (k: number) => ({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: 8 });
    for (let k = 2; k < trace.turns.length; k++) {
      const before = compressedView(input(k - 1), compressed("breakpoint"));
      const now = compressedView(input(k), compressed("breakpoint"));
      // Every message but the previous prompt's last is carried over unchanged.
      expect(now.messages.slice(0, before.messages.length - 1)).toEqual(before.messages.slice(0, -1));
      expect(now.breakpoints).toEqual([1, now.messages.length - 1]);
      expect((now.turns ?? []).every((p) => p.start === 0)).toBe(true);
    }
  });

  it("a 12-turn session's compressed prompts cost less than full history under both cache models", async () => {
    const trace = await session(12);
    expect(cost(trace, compressed("breakpoint"), BREAKPOINT)).toBeLessThan(cost(trace, full, BREAKPOINT));
    expect(cost(trace, compressed("token-prefix"), TOKEN_PREFIX)).toBeLessThan(cost(trace, full, TOKEN_PREFIX));
  });
});
