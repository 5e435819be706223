// A host that turns compression on with an Anthropic-style client and names no cache model. The
// client marks cache breakpoints (the system prompt, the strategy's stable points, the last
// message); given the token-prefix layout, whose one summary message changes on every prompt,
// it found its cache only at the system prompt: 3.6 times full history's cost over 63 turns.
// The view now takes the client's cache model (`Llm.cacheModel`) unless told otherwise.
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { createMeter } from "../../src/compaction/measure.js";
import { modelPrice, PROVIDER_CACHES } from "../../src/compaction/prices.js";
import { MockLanguageModelV3 } from "ai/test";
import { aiSdkLlm } from "../../src/llm/ai-sdk.js";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { cacheMarks } from "../../src/llm/messages.js";
import { openaiLlm } from "../../src/llm/openai.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { Llm, LlmRequest } from "../../src/llm/types.js";
import type { StrategySpec } from "../../src/compaction/registry.js";

const code = (body: string, prose = ""): string => (prose === "" ? "" : prose + "\n\n") + "```clojure\n" + body + "\n```";
const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, sku: `SKU-${10000 + i}`, city: ["Oslo", "Lima", "Perth", "Tokyo"][i % 4], qty: (i * 7) % 13, price: (i * 37) % 500 }));

// Explores rows for 62 turns, keeping a few of them now and then: the shape of a long look through data.
const replies = [...Array.from({ length: 62 }, (_, k) => code(k % 3 === 0 ? `(def acc${k % 5} (take 3 (drop ${k} data/rows)))` : `(println (take 2 (drop ${k * 4} data/rows)))`, k % 2 ? "Next." : "")), code("(return 1)")];

/** A client like anthropicLlm: it marks what `cacheMarks` picks, and says it caches at breakpoints unless `cacheModel` is left out. */
function breakpointClient(sent: Array<{ request: LlmRequest; marks: number[] }>, cacheModel: Llm["cacheModel"], name = "fake-anthropic"): Llm {
  const scripted = scriptedLlm(replies);
  return {
    name,
    ...(cacheModel === undefined ? {} : { cacheModel }),
    complete: (request) => {
      sent.push({ request, marks: [...cacheMarks(request)] });
      return scripted.complete(request);
    },
  };
}

/** The run's cost under Anthropic's cache (or the named model's, the client named as anthropicLlm names it), each prompt priced with the breakpoints the client marked. */
async function cost(compressHistory: boolean, view?: { cacheModel: "token-prefix" | "breakpoint" }, history?: StrategySpec | string, model?: string): Promise<{ cost: number; cacheModel: string | undefined; strategyCache: unknown; minimum: unknown }> {
  const sent: Array<{ request: LlmRequest; marks: number[] }> = [];
  const agent = SubAgent.create({ prompt: "Look at the rows.", maxTurns: replies.length });
  const step = await SubAgent.run(agent, { llm: breakpointClient(sent, "breakpoint", model === undefined ? undefined : `anthropic:${model}`), context: { rows }, compressHistory, ...(view === undefined ? {} : { view }), ...(history === undefined ? {} : { history }) });
  expect(step.ok).toBe(true);
  const meter = createMeter({ input: 1, output: 0, cache: model === undefined ? PROVIDER_CACHES.anthropic : modelPrice(model).cache });
  for (const { request, marks } of sent) meter.add({ messages: request.messages, breakpoints: marks });
  const settings = step.trace.settings;
  return { cost: meter.totals.cost, cacheModel: settings?.view?.cacheModel, strategyCache: settings?.strategy?.options?.cacheModel, minimum: history === undefined ? settings?.view?.cacheMinTokens : settings?.strategy?.options?.cacheMinTokens };
}

describe("the compressed view takes the client's cache model", () => {
  it("an Anthropic-style client with compression and no cache model named: the breakpoint layout, and cheaper than full history", async () => {
    const full = await cost(false);
    const compressed = await cost(true);
    expect(compressed.cacheModel).toBe("breakpoint");
    expect(compressed.cost).toBeLessThan(full.cost);
  });

  // Named as a strategy instead of `compressHistory`, it was laid out for a token-prefix cache:
  // 3.24x full history's cost here, now 0.84x. The agent and the harness ask one place (forClientCache).
  it("the same with `history: \"interpreter-summaries\"`, and a spec's own cache model wins", async () => {
    const full = await cost(false);
    const named = await cost(false, undefined, "interpreter-summaries");
    expect(named.strategyCache).toBe("breakpoint");
    expect(named.cost).toBeLessThan(full.cost);
    const own = await cost(false, undefined, { name: "interpreter-summaries", options: { cacheModel: "token-prefix" } });
    expect(own.strategyCache).toBe("token-prefix");
    expect(own.cost).toBeGreaterThan(named.cost);
  });

  // claude-haiku-4 caches from 4,096 tokens on, above the agent's system prompt (about 2,600): the
  // view, assuming 1,024, summarized the first turns and kept prompts under the minimum full
  // history had passed: 1.12x full history's cost here, as a view or a named strategy; now 0.95x.
  // It takes the minimum of the model the client's name gives, as the run's price does.
  it("the view and a named strategy take the cache minimum of the client's model (claude-haiku-4: 4,096 tokens)", async () => {
    const full = await cost(false, undefined, undefined, "claude-haiku-4-5");
    const compressed = await cost(true, undefined, undefined, "claude-haiku-4-5");
    const named = await cost(false, undefined, "interpreter-summaries", "claude-haiku-4-5");
    expect(compressed.cost).toBeLessThan(full.cost);
    expect(named.cost).toBeLessThan(full.cost);
    expect([compressed.minimum, named.minimum]).toEqual([4096, 4096]);
  });

  // An Anthropic model through the AI Gateway or Google Vertex: the client marked breakpoints and
  // said nothing of its cache, so the view took the token-prefix layout, whose one summary message
  // changes on every prompt: 146,296 token-equivalents against 45,483 for full history (3.22x).
  it("an AI SDK Anthropic model through the AI Gateway or Vertex: the breakpoint layout, and cheaper than full history", async () => {
    for (const [provider, modelId] of [["gateway", "anthropic/claude-sonnet-4"], ["vertex.anthropic.messages", "claude-sonnet-4@20250514"]]) {
      const priced = async (compressHistory: boolean): Promise<number> => {
        let turn = 0;
        const model = new MockLanguageModelV3({ provider, modelId, doGenerate: async () => ({ content: [{ type: "text", text: replies[turn++] }], finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }, warnings: [] }) });
        const step = await SubAgent.run(SubAgent.create({ prompt: "Look at the rows.", maxTurns: replies.length }), { llm: aiSdkLlm({ model }), context: { rows }, compressHistory });
        expect(step.ok).toBe(true);
        // Priced as the model received it: the messages whose provider options carry the cache mark.
        const meter = createMeter({ input: 1, output: 0, cache: PROVIDER_CACHES.anthropic });
        for (const { prompt } of model.doGenerateCalls) {
          const messages = prompt.map((m) => ({ role: m.role === "tool" ? ("user" as const) : m.role, content: typeof m.content === "string" ? m.content : m.content.map((p) => ("text" in p ? p.text : "")).join("\n") }));
          meter.add({ messages, breakpoints: prompt.flatMap((m, i) => ((m.providerOptions as { anthropic?: { cacheControl?: unknown } } | undefined)?.anthropic?.cacheControl === undefined ? [] : [i])) });
        }
        return meter.totals.cost;
      };
      expect((await priced(true)) / (await priced(false)), provider).toBeLessThan(1);
    }
  });

  it("a cache model the view names wins over the client's", async () => {
    const named = await cost(true, { cacheModel: "token-prefix" });
    expect(named.cacheModel).toBe("token-prefix");
  });
});

describe("clients say how their provider caches", () => {
  it("anthropicLlm and an AI SDK Anthropic model mark breakpoints; with caching off, or another provider, they say nothing", () => {
    expect(anthropicLlm({ model: "claude-x", apiKey: "k", env: {} }).cacheModel).toBe("breakpoint");
    expect(anthropicLlm({ model: "claude-x", apiKey: "k", env: {}, cache: false }).cacheModel).toBeUndefined();
    // Providers that read the Anthropic cache option the messages carry: Anthropic's, Vertex's Anthropic
    // models and the AI Gateway's (which passes it on). Bedrock reads its own (cachePoint), not this one.
    const models: Array<[provider: string, modelId: string, cache: "breakpoint" | undefined]> = [
      ["anthropic.messages", "claude-x", "breakpoint"],
      ["vertex.anthropic.messages", "claude-sonnet-4@20250514", "breakpoint"],
      ["gateway", "anthropic/claude-sonnet-4", "breakpoint"],
      ["gateway", "openai/gpt-5", undefined],
      ["amazon-bedrock", "us.anthropic.claude-sonnet-4-20250514-v1:0", undefined],
      ["openai.chat", "gpt-x", undefined],
    ];
    for (const [provider, modelId, cache] of models) expect(aiSdkLlm({ model: { provider, modelId } as never }).cacheModel, `${provider}:${modelId}`).toBe(cache);
    expect(aiSdkLlm({ model: "anthropic/claude-sonnet-4" as never }).cacheModel).toBe("breakpoint");
    expect(openaiLlm({ model: "gpt-x", apiKey: "k", env: {} }).cacheModel).toBeUndefined();
  });
});
