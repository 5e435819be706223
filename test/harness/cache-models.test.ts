// Strategies priced under three cache models with the one measure: observation masking with its
// defaults on a coding run sends fewer tokens than full, costs no more under a token-prefix
// cache, saves exactly what it removes without a cache, and the breakpoints it declares hold;
// far facts only in old tool output are what masking gives up.
import { describe, expect, it } from "vitest";
import { messageText } from "../../src/llm/messages.js";
import { createStrategy } from "../../src/compaction/registry.js";
import { DEFAULT_PRICES, NO_CACHE } from "../../src/compaction/prices.js";
import { compareUnderCaches, CACHE_MODELS, renderCacheTable } from "../../src/harness/cache-models.js";
import { compareStrategies } from "../../src/harness/compare.js";
import type { Transcript } from "../../src/harness/transcript.js";
import type { ChatMessage, Llm } from "../../src/llm/types.js";
import { withFragile } from "../support/strategies.js";

/** A coding run of `steps` bash calls with 60-line outputs; step 1's output names the file the last call edits. */
function codingRun(id: string, steps: number): Transcript {
  const messages: ChatMessage[] = [
    { role: "system", content: "You are a coding agent with a bash tool." },
    { role: "user", content: "The parser crashes on empty input. Find the file and fix it." },
  ];
  for (let s = 0; s < steps; s++) {
    const cid = `${id}_${s}`;
    messages.push({ role: "assistant", content: `Step ${s}: looking around.`, tool_calls: [{ id: cid, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: `grep -rn parse src/part_${s}` }) } }] });
    const body = Array.from({ length: 60 }, (_, i) => `src/part_${s}/mod_${i}.py:${i}: result_${i} = parse(value_${s}_${i})`).join("\n");
    messages.push({ role: "tool", tool_call_id: cid, content: s === 1 ? `${body}\nfound the culprit in src/deep/header_${id}.py` : body });
  }
  const needed = messages.length;
  messages.push({ role: "assistant", content: "Fixing it.", tool_calls: [{ id: `${id}_fix`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: `sed -i 's/x/y/' src/deep/header_${id}.py` }) } }] });
  return { id, messages, probes: [{ fact: "the file", value: `src/deep/header_${id}.py`, introduced_at: 5, needed_at: [needed], mentions: [5, needed] }] };
}

const runs = [codingRun("a", 40), codingRun("b", 30)];

describe("compareUnderCaches", () => {
  it("masking with its defaults: fewer tokens, no dearer than full under a token-prefix cache, and saves what it removes without one", async () => {
    const r = await compareUnderCaches(runs, ["observation-masking"]);
    const [full, masking] = r.rows;
    expect(full.strategy).toBe("full");
    expect(masking.inputTokens).toBeLessThan(full.inputTokens);
    expect(masking.costRatio["token-prefix"]).toBeLessThanOrEqual(1);
    expect(masking.costRatio["breakpoint"]).toBeLessThanOrEqual(1);
    // No cache: every input token at the list price, so the saving is the removed tokens exactly.
    const price = CACHE_MODELS.none.input / 1e6;
    expect(full.cost.none - masking.cost.none).toBeCloseTo((full.inputTokens - masking.inputTokens) * price, 9);
    expect(masking.fired).toBe(2);
    // The file named only in an old tool output is lost; everything a command repeats is kept.
    expect(full.farRetention).toBe(1);
    expect(masking.farRetention).toBe(0);
    expect(masking.farNeeded).toBe(2);
  });

  it("a breakpoint cache that allows fewer marks than the client sends prices the latest it allows, as the agent's run does (it threw a RangeError)", async () => {
    const { cache } = CACHE_MODELS.breakpoint;
    if (cache.kind !== "breakpoint") throw new Error("the breakpoint model has a breakpoint cache");
    const allowing = (maxBreakpoints: number) => ({ ...CACHE_MODELS.breakpoint, cache: { ...cache, maxBreakpoints } });
    const r = await compareUnderCaches([runs[1]], ["observation-masking"], { models: { four: allowing(4), two: allowing(2), one: allowing(1) } });
    const masking = r.rows[1];
    expect(masking.cost.four).toBe((await compareUnderCaches([runs[1]], ["observation-masking"], { models: { breakpoint: CACHE_MODELS.breakpoint } })).rows[1].cost.breakpoint);
    // Fewer marks hit no more often: each allowance costs at least what a larger one does.
    expect(masking.cost.two).toBeGreaterThanOrEqual(masking.cost.four);
    expect(masking.cost.one).toBeGreaterThanOrEqual(masking.cost.two);
  });

  it("prices the summarizer's calls by its own model, not a guess (the cache models are no model names)", async () => {
    // Every summary call reports 1,000 tokens in and 100 out.
    const summarizer: Llm = { name: "s", complete: async () => ({ content: JSON.stringify({ ConversationSummary: "Grepped src for parse." }), usage: { inputTokens: 1000, outputTokens: 100, cachedTokens: 0 } }) };
    const spec = { name: "rolling-summary", options: { unit: "step", summarizer: "llm" } };
    const run = async (summaryModel: string) => (await compareUnderCaches([runs[1]], [spec], { models: { none: CACHE_MODELS.none }, llm: summarizer, summaryModel })).rows[1];
    const [mini, big] = [await run("gpt-4o-mini"), await run("gpt-4o")];
    expect(mini.llmCalls).toBeGreaterThan(0);
    expect(mini.inputTokens).toBe(big.inputTokens);
    const [pm, pb] = [DEFAULT_PRICES["gpt-4o-mini"], DEFAULT_PRICES["gpt-4o"]];
    expect(big.cost.none - mini.cost.none).toBeCloseTo((mini.llmCalls * (1000 * (pb.input - pm.input) + 100 * (pb.output - pm.output))) / 1e6, 9);
  });

  it("tells a strategy whose summaries all failed from one that never fired", async () => {
    const down: Llm = { name: "down", complete: () => Promise.reject(new Error("connect ECONNREFUSED")) };
    const r = await compareUnderCaches(runs, [{ name: "rolling-summary", options: { unit: "step", summarizer: "llm" } }], { llm: down });
    expect(r.rows[1]).toMatchObject({ fired: 0, failed: 2 });
    expect(renderCacheTable(r)).toMatch(/\nrolling-summary:unit=step,summarizer=llm .* never, summaries failed in 2\/2\n?/);
  });

  it("measures the rest when a strategy throws on one transcript, and compares its row with full on the others", async () => {
    // A throw stopped the --caches table, after the main table had been measured, losing both.
    const registry = withFragile((stored) => {
      if (stored.some((m) => messageText(m).includes("header_b"))) throw new TypeError("boom");
      return null;
    });
    const r = await compareUnderCaches(runs, ["fragile", "observation-masking"], { registry });
    const [full, fragile, masking] = r.rows;
    expect(fragile.failures).toEqual([{ id: "b", message: expect.stringMatching(/^strategy fragile failed on transcript b at the request for message \d+: TypeError: boom$/) as string }]);
    expect([full.failures, masking.failures]).toEqual([[], []]);
    const alone = await compareUnderCaches([runs[0]], ["fragile"], { registry });
    expect(fragile).toEqual({ ...alone.rows[1], failures: fragile.failures });
    expect(masking).toEqual((await compareUnderCaches(runs, ["observation-masking"])).rows[1]);
    expect(renderCacheTable(r)).toMatch(/\nfragile .* never, failed on 1\/2 \(left out\)\n/);
  });

  it("shows a strategy that failed on every transcript as failed, with no reduction or cost ratio: it read 0.0% at 1.000x", async () => {
    const registry = withFragile((stored) => {
      if (stored.length > 1) throw new TypeError("boom");
      return null;
    });
    const r = await compareUnderCaches(runs, ["fragile"], { registry });
    const fragile = r.rows[1];
    expect(fragile.failures).toHaveLength(2);
    expect([fragile.reduction, fragile.costRatio]).toEqual([null, { "token-prefix": null, breakpoint: null, none: null }]);
    expect(renderCacheTable(r)).toMatch(/\nfragile( +n\/a){7} +failed on 2\/2 \(left out\)\n?$/);
  });

  it("a strategy that sent everything never fired, in both tables (recap on runs without recap lines)", async () => {
    const caches = await compareUnderCaches(runs, ["recap"], { models: { none: CACHE_MODELS.none } });
    const table = await compareStrategies(runs, ["recap"], { models: ["gpt-4o"] });
    expect(caches.rows[1].reduction).toBe(0);
    expect(table.rows[1].triggered).toBe(false);
    expect(caches.rows[1].fired).toBe(0);
  });

  it("the breakpoints a strategy declares make a breakpoint cache cheaper than marking the last message only", async () => {
    const options = { turns: 2, polling: 10 };
    const withMarks = await compareUnderCaches(runs, [{ name: "observation-masking", options }], { models: { breakpoint: CACHE_MODELS.breakpoint } });
    // The same strategy without its marks: a wrapper that only projects.
    const inner = createStrategy({ name: "observation-masking", options });
    const { defaultStrategies } = await import("../../src/history/registry.js");
    const { z } = await import("zod");
    const registry = defaultStrategies.with({ name: "masking-without-marks", description: "test only", usesLlm: false, schema: z.object({}).strict(), create: () => ({ name: "masking-without-marks", options: {}, usesLlm: false, initialState: () => null, project: (c, s, ctx) => inner.project(c, s, ctx) }) });
    const without = await compareUnderCaches(runs, ["masking-without-marks"], { models: { breakpoint: CACHE_MODELS.breakpoint }, registry });
    expect(withMarks.rows[1].inputTokens).toBe(without.rows[1].inputTokens);
    expect(withMarks.rows[1].cost.breakpoint).toBeLessThan(without.rows[1].cost.breakpoint);
  });

  it("counts a fact as the compare table does: not when only the system prompt or the task states it", async () => {
    const run = codingRun("e", 30);
    const file = run.probes?.[0].value as string;
    // A system prompt that names the file keeps nothing: the masked output was the conversation's only copy.
    const named: Transcript = { ...run, id: "named", messages: [{ role: "system", content: `You are a coding agent. The project's headers include ${file}.` }, ...run.messages.slice(1)] };
    const caches = await compareUnderCaches([named], ["observation-masking"]);
    expect(caches.rows[1].farRetention).toBe(0);
    // A value the task states is left out of both tables, so their retention is one figure.
    const stated: Transcript = { ...run, id: "stated", messages: [run.messages[0], { role: "user", content: `Fix the parser crash; it may be in ${file}.` }, ...run.messages.slice(2)] };
    const both = await compareUnderCaches([named, stated], ["observation-masking"]);
    const table = await compareStrategies([named, stated], ["observation-masking"], { models: ["gpt-4o"] });
    expect(both.rows[1].farNeeded).toBe(1);
    expect(both.rows.map((r) => r.retention)).toEqual(table.rows.slice(0, 2).map((r) => r.retention));
  });

  it("refuses a timeoutMs no timer can keep before measuring anything, as compareStrategies does", async () => {
    for (const timeoutMs of [0, -5, 1.5, 2 ** 31]) {
      await expect(compareUnderCaches(runs, ["observation-masking"], { timeoutMs })).rejects.toThrow(/^compaction harness: timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got /);
    }
  });

  it("says when a strategy never fired", async () => {
    const r = await compareUnderCaches([codingRun("c", 3)], ["observation-masking"], { models: { none: { input: 1, output: 1, cache: NO_CACHE } } });
    expect(r.rows[1].fired).toBe(0);
    expect(renderCacheTable(r)).toMatch(/observation-masking .* never$/m);
  });
});

describe("observation-masking's cache breakpoints", () => {
  it("every later prompt keeps the messages up to each declared breakpoint unchanged", async () => {
    const strategy = createStrategy({ name: "observation-masking", options: { turns: 2, polling: 5 } });
    const t = codingRun("d", 30);
    const prompts: Array<{ messages: ChatMessage[]; marks: number[] }> = [];
    for (let j = 3; j < t.messages.length; j += 2) {
      const r = await strategy.project({ messages: t.messages.slice(0, j) }, null, {});
      prompts.push({ messages: r.messages, marks: strategy.cacheBreakpoints?.(r.messages) ?? [] });
    }
    expect(prompts.some((p) => p.marks.length === 2)).toBe(true);
    for (let a = 0; a < prompts.length; a++) {
      for (const mark of prompts[a].marks) for (let b = a + 1; b < prompts.length; b++) expect(prompts[b].messages.slice(0, mark + 1)).toEqual(prompts[a].messages.slice(0, mark + 1));
    }
  });
});

describe("the breakpoints the harness prices", () => {
  // anthropicLlm marks the end of the system prompt besides the strategy's marks and the last
  // message (cacheMarks); the harness priced prompts without that mark, so a strategy that
  // rewrites everything after a long system prompt paid to write it again on every request.
  it("are the ones the Anthropic client sends, the system prompt's end included", async () => {
    const { cacheMarks } = await import("../../src/llm/messages.js");
    const { measure } = await import("../../src/harness/measure.js");
    const policy = Array.from({ length: 400 }, (_, i) => `Rule ${i}: never book flight AB${i} without consent.`).join("\n");
    const messages: ChatMessage[] = [{ role: "system", content: policy }];
    for (let r = 0; r < 8; r++) messages.push({ role: "user", content: `Question ${r} about booking ${r}.` }, { role: "assistant", content: `Answer ${r}: done.` });
    const strategy = createStrategy({ name: "sliding-window", options: { turns: 1 } });
    const sent: Array<{ messages: readonly ChatMessage[]; breakpoints?: readonly number[] }> = [];
    await measure({ id: "policy", messages }, { name: "sliding-window", options: { turns: 1 } }, { models: ["claude-sonnet-4"], onPrompt: (p) => sent.push(p) });
    expect(sent.length).toBe(8);
    for (const p of sent) {
      const client = [...cacheMarks({ messages: [...p.messages], cacheBreakpoints: strategy.cacheBreakpoints?.(p.messages) ?? [] })];
      expect(p.breakpoints).toEqual(client);
      expect(p.breakpoints?.[0]).toBe(0);
    }
  });

  it("a round of 25 parallel tool calls still reads the system prompt from the cache", async () => {
    const { measure } = await import("../../src/harness/measure.js");
    const policy = Array.from({ length: 400 }, (_, i) => `Rule ${i}: never book flight AB${i} without consent.`).join("\n");
    const ids = Array.from({ length: 25 }, (_, i) => `c${i}`);
    const messages: ChatMessage[] = [
      { role: "system", content: policy },
      { role: "user", content: "Check all 25 flights." },
      { role: "assistant", content: null, tool_calls: ids.map((id) => ({ id, type: "function" as const, function: { name: "get", arguments: `{"id":"${id}"}` } })) },
      ...ids.map((id): ChatMessage => ({ role: "tool", tool_call_id: id, content: `flight ${id}: on time` })),
      { role: "assistant", content: "All on time." },
    ];
    // The second prompt's last message is 27 messages past the first prompt's end, beyond the
    // 20-block lookback: only the mark at the system prompt's end finds the entry.
    const m = await measure({ id: "parallel", messages }, "full", { models: ["claude-sonnet-4"] });
    expect(m.cachedTokens).toBeGreaterThan(4000);
  });
});
