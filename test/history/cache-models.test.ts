// Compressed history under both cache models (issue 20): with a breakpoint cache (Anthropic
// style) each summary is its own message, appended once, and the view marks breakpoints after
// the task and at the end, so a session's compressed prompts cost no more than full history.
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { createMeter } from "../../src/compaction/measure.js";
import { countTokens } from "../../src/compaction/tokens.js";
import { anthropicCache, openaiCache, type ModelPrice } from "../../src/compaction/prices.js";
import { compressedView, printCut, viewPrice } from "../../src/history/compressed.js";
import { readMultiplier, writeMultiplier } from "../../src/compaction/prices.js";
import { defaultViewOptions, type ViewOptions } from "../../src/history/view.js";
import { historySection, summaryLegend } from "../../src/history/legend.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { RunTrace } from "../../src/trace/trace.js";
import { buildTrace } from "./traces.js";
import { breakdown, runSession } from "../../bench/history/measure.js";
import { factsReadLate } from "../../bench/history/sessions/round3.js";

const code = (body: string): string => "Next step.\n\n```clojure\n" + body + "\n```";
const rows = Array.from({ length: 60 }, (_, i) => ({ id: i, city: ["Oslo", "Lima", "Perth"][i % 3], total: (i * 37) % 500, note: `order note ${i}` }));

async function session(turns: number): Promise<RunTrace> {
  const programs = Array.from({ length: turns - 1 }, (_, k) => `(def t${k} (filter #(= (:city %) "${["Oslo", "Lima", "Perth"][k % 3]}") data/rows))\n(println "step ${k}" (count t${k}) (reduce + (map :total t${k})))`);
  const agent = SubAgent.create({ prompt: "Sum the totals per city.", maxTurns: turns });
  const step = await SubAgent.run(agent, { llm: scriptedLlm([...programs, "(return :done)"].map(code)), context: { rows } });
  expect(step.ok).toBe(true);
  return step.trace;
}

function cost(trace: RunTrace, options: ViewOptions, price: ModelPrice, maxTurns = trace.turns.length): number {
  const meter = createMeter(price);
  for (let k = 0; k < trace.turns.length; k++) {
    const view = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns }, options);
    meter.add({ messages: view.messages, ...(view.breakpoints === undefined ? {} : { breakpoints: view.breakpoints }) });
  }
  return meter.totals.cost;
}

const BREAKPOINT: ModelPrice = { input: 1, output: 0, cache: anthropicCache(1024) };
const TOKEN_PREFIX: ModelPrice = { input: 1, output: 0, cache: openaiCache(0.1) };
const full: ViewOptions = { ...defaultViewOptions, compressHistory: false };
const compressed = (cacheModel: "token-prefix" | "breakpoint"): ViewOptions => ({ ...defaultViewOptions, compressHistory: true, cacheModel });

describe("cache models", () => {
  it("breakpoint layout: one message per summary, appended once, breakpoints after the task, before the note and at the end", async () => {
    const trace = await session(8);
    const input = (k: number) => ({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: 8 });
    for (let k = 2; k < trace.turns.length; k++) {
      const before = compressedView(input(k - 1), compressed("breakpoint"));
      const now = compressedView(input(k), compressed("breakpoint"));
      // Every message but the previous prompt's last is carried over unchanged.
      expect(now.messages.slice(0, before.messages.length - 1)).toEqual(before.messages.slice(0, -1));
      // The last message ends with the model's note (one prompt only): a breakpoint before it
      // too, and one before that, where the next prompt hits after rewriting the message between.
      expect(now.messages.at(-1)?.content).toContain("; Note: Next step.");
      const n = now.messages.length;
      expect(now.breakpoints).toEqual(n - 3 > 1 ? [1, n - 3, n - 2, n - 1] : [1, n - 2, n - 1]);
      // Each summary starts its message; the first, after the legend that heads it.
      expect((now.turns ?? []).map((p) => p.start)).toEqual((now.turns ?? []).map((_, i) => (i === 0 ? summaryLegend().length + 1 : 0)));
    }
  });

  it("a 12-turn session's compressed prompts cost less than full history under both cache models", async () => {
    const trace = await session(12);
    expect(cost(trace, compressed("breakpoint"), BREAKPOINT)).toBeLessThan(cost(trace, full, BREAKPOINT));
    expect(cost(trace, compressed("token-prefix"), TOKEN_PREFIX)).toBeLessThan(cost(trace, full, TOKEN_PREFIX));
  });

  // Each turn prints one wide line of eight rows (about 350 tokens): the line floor (8 of 15
  // lines) once overrode the 2,000-token budget, so the cut moved on every prompt and the
  // session cost 90% (token prefix) / 135% (breakpoint) more than full history.
  async function wide(turns: number): Promise<RunTrace> {
    const orders = Array.from({ length: 8 * turns }, (_, i) => ({ id: i + 1, customer: `customer-${1000 + ((i * 7919) % 9000)}`, city: ["Lisbon", "Oslo", "Quito", "Hanoi"][i % 4], status: ["open", "held"][i % 2], total: ((i * 3571) % 90000) / 100, note: ["gift wrap", "call first", "fragile"][i % 3] }));
    const programs = Array.from({ length: turns - 1 }, (_, k) => `(println (take 8 (drop ${k * 8} data/orders)))`);
    const agent = SubAgent.create({ prompt: "Page through the orders and count the held ones.", maxTurns: turns });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([...programs, `(return (count (filter #(= (:status %) "held") data/orders)))`].map(code)), context: { orders } });
    expect(step.ok).toBe(true);
    return step.trace;
  }

  it("wide println lines: the token budget bounds the output shown, and the session costs no more than full under both models", async () => {
    const trace = await wide(24);
    const line = countTokens(trace.turns[0].prints[0]);
    expect(line).toBeGreaterThan(250);
    const options = compressed("token-prefix");
    let moves = 0;
    let previous = 0;
    for (let k = 1; k < trace.turns.length; k++) {
      const view = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: 24 }, options);
      if (view.stats.printlnDropped !== previous) moves++;
      previous = view.stats.printlnDropped;
      // The output shown stays within the 2,000-token budget (each turn prints one line) while
      // enough turns are left for a cut to pay; near the end the output stays instead.
      if (k <= 12) expect(view.stats.printlnShown * line).toBeLessThanOrEqual(2000);
    }
    // The cut moves by half a budget at a time: about once every three prompts, not on every one.
    expect(moves).toBeLessThanOrEqual(Math.ceil(trace.turns.length / 3));
    expect(cost(trace, compressed("token-prefix"), TOKEN_PREFIX)).toBeLessThan(cost(trace, full, TOKEN_PREFIX));
    expect(cost(trace, compressed("breakpoint"), BREAKPOINT)).toBeLessThan(cost(trace, full, BREAKPOINT));
  });

  // Under a breakpoint cache a prompt writes cache entries only near its end, so after a cut that
  // wrote the history again no entry sits before the turns just after it: the next cut, which drops
  // their output, writes the whole history again, not only what follows them. Priced from the turn
  // it changes, such cuts paid on paper: facts-read-late with a turn budget of 1.5-5 times the
  // turns it uses cost 1.019x full history.
  it("a println cut under a breakpoint cache is priced from the last cache entry before it: no session dearer than full at budgets above its turns", async () => {
    const budget = Math.round(factsReadLate.replies.length * 1.5);
    const { trace } = await runSession(factsReadLate, budget);
    expect(cost(trace, compressed("breakpoint"), BREAKPOINT, budget)).toBeLessThan(cost(trace, full, BREAKPOINT, budget));
    // The same cuts under a token-prefix cache are priced from the turn they change, as before.
    expect(cost(trace, compressed("token-prefix"), TOKEN_PREFIX, budget)).toBeLessThan(cost(trace, full, TOKEN_PREFIX, budget));
  });

  // bench:history's table of where the cost goes priced every token shared with the previous
  // prompt at the read price, below the cache's 1,024-token minimum and past its last 128-token
  // step too, where every other table prices the cache: its costs came out below theirs for the
  // same prompts (terse, full history, sessions of 10+ turns: 108,264 against 116,587).
  it("bench:history's cost breakdown adds up to the token-prefix cost the bench's other tables report", async () => {
    const n = factsReadLate.replies.length;
    const { trace } = await runSession(factsReadLate);
    const run = { maxTurns: n };
    for (const options of [full, compressed("token-prefix"), { ...compressed("token-prefix"), strictPrefix: true }]) {
      const parts = breakdown(trace, run, options);
      expect(parts.cost, JSON.stringify(options)).toBeCloseTo(cost(trace, options, TOKEN_PREFIX, n) * 1e6, 6);
    }
  });

  // Each turn defines eight values and prints three lines: the output is a small part of what a
  // cut rewrites, the summaries after it are most of it. Priced as the output alone, cuts paid on
  // paper and the session cost 1.23x full history under a breakpoint cache (0.68x token prefix).
  it("a cut is priced with the summaries it rewrites: many definitions and a little output per turn cost less than full under both models", async () => {
    const rows = Array.from({ length: 40 }, (_, i) => ({ id: i, sku: `SKU-${1000 + i}`, qty: (i * 7) % 13, price: (i * 37) % 500 }));
    const turns = 40;
    const programs = Array.from({ length: turns - 1 }, (_, k) => {
      const defs = Array.from({ length: 8 }, (_, j) => `(def v${k}_${j} "step ${k} value ${j}" (vec (take ${3 + j} (drop ${(k + j) % 30} data/rows))))`);
      const prints = Array.from({ length: 3 }, (_, j) => `(println "step ${k} line ${j}" (take 4 (map :sku (drop ${j} data/rows))))`);
      return [...defs, ...prints].join("\n");
    });
    const agent = SubAgent.create({ prompt: "Look through the rows.", maxTurns: turns });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([...programs, "(return 1)"].map(code)), context: { rows } });
    expect(step.ok).toBe(true);
    const trace = step.trace;
    expect(cost(trace, compressed("breakpoint"), BREAKPOINT)).toBeLessThan(0.8 * cost(trace, full, BREAKPOINT));
    expect(cost(trace, compressed("token-prefix"), TOKEN_PREFIX)).toBeLessThan(0.8 * cost(trace, full, TOKEN_PREFIX));
  });

  it("a cut that would not pay back in the turns left keeps the output (payback is the default rule)", async () => {
    const trace = await wide(10);
    const input = (k: number) => ({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: 10 });
    // Near the end of the turn budget the rewrite a cut costs is never repaid: nothing more is dropped.
    const late = compressedView(input(9), compressed("token-prefix"));
    const earlier = compressedView(input(8), compressed("token-prefix"));
    expect(late.stats.printlnDropped).toBe(earlier.stats.printlnDropped);
    // The same turns under a long budget are cut.
    const long = compressedView({ ...input(9), maxTurns: 60 }, compressed("token-prefix"));
    expect(long.stats.printlnDropped).toBeGreaterThan(late.stats.printlnDropped);
    // Each view as sent: the compressed view's system prompt is the full view's without its
    // `Stored:` note, and its legend heads the first summary.
    expect(compressedView(input(1), compressed("token-prefix")).messages[0].content).toBe(trace.system.replace(`\n\n${historySection("full")}`, ""));
    expect(cost(trace, compressed("token-prefix"), TOKEN_PREFIX)).toBeLessThanOrEqual(cost(trace, full, TOKEN_PREFIX));
    expect(cost(trace, compressed("breakpoint"), BREAKPOINT)).toBeLessThanOrEqual(cost(trace, full, BREAKPOINT));
  });

  it("the payback rule prices a rewrite from the price table: 9 cached reads for a prefix cache, 11.5 for a breakpoint cache's 1.25x write, 19 for an hour's 2x", () => {
    const price = (model: "token-prefix" | "breakpoint", cacheWrite = 1.25) => viewPrice({ cacheModel: model, cacheWrite });
    const ratio = (model: "token-prefix" | "breakpoint", cacheWrite?: number): number => (writeMultiplier(price(model, cacheWrite).cache) - readMultiplier(price(model, cacheWrite).cache)) / readMultiplier(price(model, cacheWrite).cache);
    expect(ratio("token-prefix")).toBeCloseTo(9, 9);
    expect(ratio("breakpoint")).toBeCloseTo(11.5, 9);
    expect(ratio("breakpoint", 2)).toBeCloseTo(19, 9);
    // Three turns of 10 lines and 1,000 tokens: the cut drops two turns (2,000 tokens) and rewrites one (1,000).
    const lines = [10, 10, 10];
    const tokens = [1000, 1000, 1000];
    const cut = (model: "token-prefix" | "breakpoint", prompts: number, cacheWrite?: number): number => printCut(lines, tokens, { limit: 15, tokens: 2000, dropAfter: 500, price: price(model, cacheWrite), promptsLeft: () => prompts }, false);
    // 4 x 2,000 < 9 x 1,000: no cut under either; 5 x 2,000 pays at 9 but not at 11.5; 6 x 2,000 pays at both, not at 19.
    expect([cut("token-prefix", 4), cut("breakpoint", 4)]).toEqual([0, 0]);
    expect([cut("token-prefix", 5), cut("breakpoint", 5)]).toEqual([20, 0]);
    expect([cut("token-prefix", 6), cut("breakpoint", 6), cut("breakpoint", 6, 2)]).toEqual([20, 20, 0]);
    expect(cut("breakpoint", 10, 2)).toBe(20);
    // Eight turns of one 400-token line, each showing 100 tokens besides, a 1,000-token budget. The
    // first cut (prompt over five turns) drops turns 1-3; the next (over eight) would drop turns 4-6.
    const eight = { limit: 15, tokens: 1000, dropAfter: 500, price: price("breakpoint"), promptsLeft: () => 8, rest: new Array<number>(8).fill(100) };
    const cuts = (entryAfter?: (end: number) => number): number[] => {
      const out: number[] = [];
      printCut(new Array<number>(8).fill(1), new Array<number>(8).fill(400), entryAfter === undefined ? eight : { ...eight, entryAfter }, true, out);
      return out;
    };
    // Priced from the changed turn 4: 8 x 1,200 > 11.5 x (4 x 100 + 400 kept), so it is made.
    expect(cuts()).toEqual([0, 0, 0, 0, 3, 3, 3, 6]);
    // A breakpoint cache with entries only after the turn before each prompt's latest has none
    // before turn 4 once the first cut rewrote turn 1: it writes turns 1-7 again (7 x 100 + 400) and is not made.
    expect(cuts((end) => end - 2)).toEqual([0, 0, 0, 0, 3, 3, 3, 3]);
  });

  it("strict mode prices a summary's payback under the configured cache model (11.5 cached reads per rewritten token under a breakpoint cache, 9 under a prefix cache)", () => {
    // One wordy turn shown in full first (the earlier timing), then summarized: its summary saves
    // F - S tokens per prompt and rewrites S once.
    const spec = { status: "ok" as const, defs: [{ name: "users", fn: false, value: [1, 2, 3] }], prints: 2, tools: [], prose: 100 };
    const trace = buildTrace([spec, { ...spec, defs: [] }], 20);
    const input = { system: trace.system, task: trace.task, turns: trace.turns, maxTurns: 20 };
    const strict = (cacheModel: "token-prefix" | "breakpoint", paybackPrompts: number): ViewOptions => ({ ...compressed(cacheModel), strictPrefix: true, keepLatestFull: true, paybackPrompts });
    const summarized = compressedView(input, strict("token-prefix", 0));
    const kept = compressedView(input, strict("token-prefix", 1));
    const first = (v: typeof kept) => v.stats.turnsFull?.find((f) => f.turn === 1)?.reason;
    expect(first(summarized)).toBeUndefined();
    expect(first(kept)).toBe("cost");
    // The legend heading the first summary is not part of the turn's price.
    const tokens = (v: typeof kept): number => countTokens(v.messages[2].content.replace(`${summaryLegend({ strictPrefix: true })}\n`, "")) + countTokens(v.messages[3].content);
    const [S, F] = [tokens(summarized), tokens(kept)];
    // The largest horizon that does not pay at 11.5, which must pay at 9.
    const horizon = Math.floor((11.5 * S) / (F - S));
    expect(horizon * (F - S)).toBeGreaterThan(9 * S);
    expect(first(compressedView(input, strict("token-prefix", horizon)))).toBeUndefined();
    expect(first(compressedView(input, strict("breakpoint", horizon)))).toBe("cost");
    // With the design's timing the summary is the turn's first appearance: nothing is rewritten,
    // so a smaller summary pays at once, under either model.
    for (const cacheModel of ["token-prefix", "breakpoint"] as const) expect(first(compressedView(input, { ...strict(cacheModel, 1), keepLatestFull: false }))).toBeUndefined();
  });

  it("view.cacheModel is a run option: accepted by SubAgent.run, and a wrong value is invalid input", async () => {
    const agent = SubAgent.create({ prompt: "Return 1.", maxTurns: 2 });
    const ok = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), compressHistory: true, view: { cacheModel: "breakpoint" } });
    expect(ok.ok).toBe(true);
    const bad = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), compressHistory: true, view: { cacheModel: "lru" as "breakpoint" } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.fail.message).toContain("view.cacheModel");
  });
});
