// One prompt, one token count and one cost (issue 18, "Done when"): the same agent run's prompts
// measured by the agent (trace and onTurn), the viewer (turn header and prompt panel), the
// harness and the proxy's metrics, against the one measure in src/compaction/measure.ts.
import { afterEach, describe, expect, it } from "vitest";
import { runToJson } from "../src/agent/saved-run.js";
import { SubAgent } from "../src/agent/subagent.js";
import type { TurnEvent } from "../src/agent/types.js";
import { measureSession, outputTokens } from "../src/compaction/measure.js";
import { cacheMarks } from "../src/llm/messages.js";
import type { Llm, LlmRequest } from "../src/llm/types.js";
import { measure } from "../src/harness/measure.js";
import { scriptedLlm } from "../src/llm/scripted.js";
import { buildPageData } from "../src/viewer/data.js";
import { readViewerInput } from "../src/viewer/input.js";
import { rig, type Rig } from "./proxy/setup.js";

const code = (s: string) => "```clojure\n" + s + "\n```";
const REPLIES = [
  code('(def rows (map (fn [i] {:id i :name (str "item-" i) :note "a line of filler text to make the prompt long"}) (range 60)))\n(println rows)'),
  code("(println (count rows))"),
  code("(println (map :name (take 5 rows)))"),
  code("(return (count rows))"),
];

async function agentRun(model: string) {
  const events: TurnEvent[] = [];
  const llm = scriptedLlm(REPLIES, { name: model });
  const step = await SubAgent.run(SubAgent.create({ prompt: "Count the rows.", maxTurns: 4 }), { llm, maxPrintChars: 20_000, onTurn: (e) => events.push(e) });
  return { step, events, prompts: llm.requests.map((r) => r.messages) };
}

let rigs: Rig[] = [];
afterEach(async () => {
  for (const x of rigs) await x.close();
  rigs = [];
});

describe("one measure", () => {
  it("gives one prompt one token count and one cost in the trace, onTurn, the viewer, the harness and the proxy", async () => {
    const { step, events, prompts } = await agentRun("gpt-4o");
    expect(step.ok).toBe(true);
    const expected = measureSession(
      prompts.map((messages, k) => ({ messages, outputTokens: outputTokens(REPLIES[k]) })),
      "gpt-4o",
    );
    // The test means something only if the cache serves part of some prompt.
    expect(expected.totals.cachedTokens).toBeGreaterThan(0);
    const want = expected.prompts.map((p) => ({ inputTokens: p.tokens, cachedTokens: p.cachedTokens, outputTokens: p.outputTokens, cost: p.cost, source: "local" }));

    // The trace and onTurn: the scripted model is no provider, so the figures are measured locally.
    const pick = (u: { inputTokens: number; cachedTokens: number; outputTokens: number; cost?: number; source?: string }) => ({ inputTokens: u.inputTokens, cachedTokens: u.cachedTokens, outputTokens: u.outputTokens, cost: u.cost, source: u.source });
    expect(step.trace.turns.map((t) => pick(t.usage))).toEqual(want);
    expect(events.map((e) => pick(e.turn.usage))).toEqual(want);
    expect(step.usage.inputTokens).toBe(expected.totals.inputTokens);
    expect(step.usage.cachedTokens).toBe(expected.totals.cachedTokens);
    expect(step.trace.settings?.model).toBe("gpt-4o");

    // The viewer: turn header, prompt panel and totals agree with it, priced with the run's model.
    const data = await buildPageData([readViewerInput("run.json", runToJson(step))]);
    const run = data.runs[0];
    expect(run.turns.map((t) => pick(t.usage))).toEqual(want);
    expect(run.turns.map((t) => t.prompt.sentTokens)).toEqual(want.map((w) => w.inputTokens));
    expect(run.chart.map((p) => [p.sentTokens, p.cachedTokens, p.cachedSource])).toEqual(want.map((w) => [w.inputTokens, w.cachedTokens, "local"]));
    expect(run.priceModel).toBe("gpt-4o");
    expect(run.totals.cost).toBeCloseTo(expected.totals.cost, 12);

    // The harness, replaying the run's conversation under the full history.
    const transcript = { id: "run", messages: [...prompts[prompts.length - 1], { role: "assistant" as const, content: REPLIES[REPLIES.length - 1] }] };
    const h = await measure(transcript, "full", { models: ["gpt-4o"] });
    expect([h.requests, h.inputTokens, h.cachedTokens]).toEqual([expected.totals.prompts, expected.totals.inputTokens, expected.totals.cachedTokens]);
    expect(h.cost).toBeCloseTo(expected.totals.cost, 12);

    // The proxy's metrics, for an upstream that reports no usage (the client asked for none in its stream).
    const x = await rig({ config: { compaction: { contextLimits: { "gpt-4o": 1_000_000 } } } });
    rigs.push(x);
    for (const messages of prompts) {
      const stream = await x.client.chat.completions.create({ model: "gpt-4o", messages: messages as Array<{ role: "user"; content: string }>, stream: true, stream_options: { include_usage: false } });
      for await (const chunk of stream) void chunk;
    }
    const metrics = await (await fetch(`${x.proxy.url}/metrics`)).text();
    expect(Number(/^ptc_proxy_estimated_prompt_tokens_total (\d+)$/m.exec(metrics)?.[1])).toBe(expected.totals.inputTokens);
  });

  it("says so when the run's model has no price, instead of pricing it as another model", async () => {
    const { step } = await agentRun("my-local-model");
    expect(step.trace.turns.every((t) => t.usage.cost === undefined && t.usage.source === "local")).toBe(true);
    const run = (await buildPageData([readViewerInput("run.json", runToJson(step))])).runs[0];
    expect(run.priceModel).toBe("my-local-model");
    expect(run.totals.cost).toBeNull();
  });

  it("prices a breakpoint client's prompts as the client marks them, the system prompt included", async () => {
    // Past the sliding window the history changes right after the task, beyond the 20 blocks a
    // breakpoint looks back: only the system prompt's mark, which the client places, still hits.
    const n = 14;
    const replies = Array.from({ length: n }, (_, i) => code(i === n - 1 ? "(return 1)" : `(println ${i})`));
    const requests: LlmRequest[] = [];
    const llm: Llm = {
      name: "claude-sonnet-4",
      cacheModel: "breakpoint",
      complete: async (r) => {
        requests.push({ messages: [...r.messages], ...(r.cacheBreakpoints === undefined ? {} : { cacheBreakpoints: [...r.cacheBreakpoints] }) });
        return { content: replies[requests.length - 1] };
      },
    };
    const step = await SubAgent.run(SubAgent.create({ prompt: "Print, then return 1.", maxTurns: n }), { llm, history: { name: "sliding-window", options: { turns: 11 } } });
    expect(step.ok).toBe(true);
    const expected = measureSession(
      requests.map((r, k) => ({ messages: r.messages, breakpoints: [...cacheMarks(r)], outputTokens: outputTokens(replies[k]) })),
      "claude-sonnet-4",
    );
    expect(expected.prompts[n - 1].cachedTokens).toBeGreaterThan(0);
    expect(step.trace.turns.map((t) => [t.usage.inputTokens, t.usage.cachedTokens, t.usage.cost])).toEqual(expected.prompts.map((p) => [p.tokens, p.cachedTokens, p.cost]));
    expect(step.usage.cachedTokens).toBe(expected.totals.cachedTokens);
  });
});
