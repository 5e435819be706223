// Compression never costs more than full history (issue 20), tried on sessions no bench holds:
// generated traces of every shape (tool errors, failures, redefinitions, prose) and agent runs
// with random definitions, output widths and failures. Every rewrite of text an earlier prompt
// sent (a println cut, a superseded line, a summarized error or function turn) must pay back.
import fc from "fast-check";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { saveRun } from "../../src/agent/resume.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { createMeter, sentPrompt } from "../../src/compaction/measure.js";
import { messageTokens } from "../../src/compaction/tokens.js";
import { DEFAULT_PRICES, PROVIDER_CACHES, type ModelPrice } from "../../src/compaction/prices.js";
import { compressedView } from "../../src/history/compressed.js";
import { forClientCache, INTERPRETER_STRATEGY } from "../../src/history/strategy.js";
import { summaryLegend, viewSystem } from "../../src/history/legend.js";
import { defaultViewOptions, type ViewOptions } from "../../src/history/view.js";
import { cacheMarks } from "../../src/llm/messages.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { Llm } from "../../src/llm/types.js";
import type { RunTrace } from "../../src/trace/trace.js";
import { buildTrace, turnSpec } from "./traces.js";
import { rng } from "../support/rng.js";
import { reply, type Session } from "../../bench/history/session.js";
import { runSession } from "../../bench/history/measure.js";
import { inventoryReconcile } from "../../bench/history/sessions/inventory.js";

const MODELS = {
  "token-prefix": { input: 1, output: 0, cache: PROVIDER_CACHES.openai },
  breakpoint: { input: 1, output: 0, cache: PROVIDER_CACHES.anthropic },
} as const satisfies Record<string, ModelPrice>;
type CacheName = keyof typeof MODELS;

/** Caches from 4,096 tokens on, above the agent's system prompt (about 2,600): gemini-2.5-pro's and claude-haiku-4's. */
const MIN_4096 = {
  "token-prefix": { ...DEFAULT_PRICES["gemini-2.5-pro"], input: 1, output: 0 },
  breakpoint: { ...DEFAULT_PRICES["claude-haiku-4"], input: 1, output: 0 },
} as const satisfies Record<CacheName, ModelPrice>;

function cost(trace: RunTrace, options: ViewOptions, price: ModelPrice, maxTurns: number): number {
  const meter = createMeter(price);
  for (let k = 0; k < trace.turns.length; k++) {
    const view = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns }, options);
    meter.add({ messages: view.messages, ...(view.breakpoints === undefined ? {} : { breakpoints: view.breakpoints }) });
  }
  return meter.totals.cost;
}

/**
 * Compressed cost over full cost under a cache model (at `price`, by default the provider's usual
 * one), the view told the cache's minimum, the run having a turn budget of `n` (by default the
 * turns it used), with the view options `extra` besides the defaults.
 */
function ratio(trace: RunTrace, cache: CacheName, n = trace.turns.length, price: ModelPrice = MODELS[cache], extra: Partial<ViewOptions> = {}): number {
  const cacheMinTokens = price.cache.kind === "none" ? 0 : price.cache.minTokens;
  const cacheWrite = price.cache.kind === "breakpoint" ? price.cache.write : defaultViewOptions.cacheWrite;
  return cost(trace, { ...defaultViewOptions, ...extra, compressHistory: true, cacheModel: cache, cacheMinTokens, cacheWrite }, price, n) / cost(trace, { ...defaultViewOptions, ...extra, compressHistory: false }, price, n);
}

const rows = Array.from({ length: 200 }, (_, i) => ({ id: i, sku: `SKU-${1000 + i}`, city: ["Oslo", "Lima", "Perth"][i % 3], qty: (i * 7) % 13, price: (i * 37) % 500, note: `note ${i} ${"x".repeat(i % 17)}` }));

/**
 * An agent run of 4-39 turns: each defines a few values (one name, `acc`, again and again), prints
 * rows of random width, and fails now and then; its turn budget is `budget` times the turns it uses.
 */
async function randomRun(seed: number, budget = 1): Promise<RunTrace> {
  const r = rng(seed);
  const turns = 4 + Math.floor(r() * 36);
  const prose = ["", "Next.", "Let me look at the data and then decide what to do next with the rows that matter. ".repeat(1 + Math.floor(r() * 4))][Math.floor(r() * 3)];
  const replies: string[] = [];
  for (let k = 0; k < turns - 1; k++) {
    const parts: string[] = [];
    const defs = Math.floor(r() * r() * 10);
    const lines = Math.floor(r() * r() * 10);
    const width = 1 + Math.floor(r() * r() * 12);
    for (let j = 0; j < defs; j++) parts.push(`(def v${k}_${j} (vec (take ${1 + Math.floor(r() * 10)} (drop ${Math.floor(r() * 150)} data/rows))))`);
    if (r() < 0.3 && k > 0) parts.push(`(def acc [${k}])`);
    for (let j = 0; j < lines; j++) parts.push(`(println "t${k} l${j}" (take ${width} (drop ${Math.floor(r() * 150)} data/rows)))`);
    if (r() < 0.08) parts.push("(nth [] 5)");
    if (parts.length === 0) parts.push(`(println ${k})`);
    replies.push((prose === "" ? "" : prose + "\n\n") + "```clojure\n" + parts.join("\n") + "\n```");
  }
  replies.push("```clojure\n(return 1)\n```");
  // A raised time limit: on a loaded machine a turn must not fail by the clock and change the run.
  const agent = SubAgent.create({ prompt: "Look through the rows.", maxTurns: Math.round(turns * budget), limits: { timeoutMs: 600_000 } });
  return (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
}

const catalogue = Array.from({ length: 300 }, (_, i) => ({ sku: `P${1000 + i}`, name: `Item ${i} ${"long name ".repeat(i % 4)}`, price: (i * 37) % 400, stock: i % 5, tags: ["a", "b", "c"].slice(0, i % 4) }));
const catalogueTools = {
  page: tool({ description: "A page of items", input: z.object({ n: z.number().int() }), run: ({ n }) => ({ items: catalogue.slice((n % 25) * 12, (n % 25) * 12 + 12), pages: 25 }) }),
  detail: tool({
    description: "One item's details",
    input: z.object({ sku: z.string() }),
    run: ({ sku }) => {
      if (sku.endsWith("7")) throw new Error(`no details for ${sku}`);
      return { sku, watts: sku.length * 100, reviews: Array.from({ length: 5 }, (_, i) => ({ stars: i + 1, text: `review ${i} of ${sku}` })) };
    },
  }),
};

/**
 * A tool-heavy agent run of 3-27 turns: pages kept or printed, details fetched (one sku in ten
 * fails), fan-outs printed whole, helpers, an accumulator, prose of any length.
 */
async function toolRun(seed: number, budget = 1): Promise<RunTrace> {
  const r = rng(seed);
  const turns = 3 + Math.floor(r() * 25);
  const replies: string[] = [];
  for (let k = 0; k < turns - 1; k++) {
    const prose = "I will look at the next part of the catalogue and keep what matters for the answer. ".repeat(Math.floor(r() * r() * 8));
    const parts: string[] = [];
    const kind = r();
    if (kind < 0.3) parts.push(`(def p${k} (tool/page {:n ${k}}))`, r() < 0.5 ? `(println (count (:items p${k})) "items")` : "");
    else if (kind < 0.5) parts.push(`(def d${k} (tool/detail {:sku "P${1000 + Math.floor(r() * 300)}"}))`, r() < 0.5 ? `(println (:watts d${k}))` : "");
    else if (kind < 0.6) parts.push(`(defn f${k} "helper ${k}" [x] (+ x ${k}))`, `(println (f${k} 1))`);
    else if (kind < 0.75) parts.push(`(def acc (vec (range ${Math.floor(r() * 30)})))`);
    else if (kind < 0.85) parts.push(`(println (pmap #(tool/detail {:sku %}) ["P1001" "P1002" "P1003"]))`);
    else parts.push(`(println (take ${1 + Math.floor(r() * 6)} (:items (tool/page {:n ${Math.floor(r() * 20)}}))))`);
    if (r() < 0.1) parts.push(`(println (tool/detail {:sku "P1007"}))`);
    replies.push((prose === "" ? "" : prose + "\n\n") + "```clojure\n" + parts.filter(Boolean).join("\n") + "\n```");
  }
  replies.push("```clojure\n(return 1)\n```");
  const agent = SubAgent.create({ prompt: "Look through the catalogue.", tools: catalogueTools, maxTurns: Math.round(turns * budget) });
  return (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: {} })).trace;
}


const advRows = Array.from({ length: 120 }, (_, i) => ({ id: i, sku: `SKU-${1000 + i}`, city: ["Oslo", "Lima", "Perth"][i % 3], qty: (i * 7) % 13, note: `note ${i} ${"lorem ipsum ".repeat(i % 9)}` }));
const advTools = {
  search: tool({ description: "Search rows", input: z.object({ q: z.string(), n: z.number().int() }), run: ({ q, n }) => advRows.slice(n % 100, (n % 100) + 5 + (n % 30)).map((r) => ({ ...r, q })) }),
};
const ADV_PROSE = "The previous output shows the rows I expected; the quantities differ by city, so next I will narrow the selection and check the notes before deciding what to return. ";

/**
 * A scripted session unlike the bench's (run by the bench's own runner, which adds its hidden
 * context value): 2-9 turns of definitions (many small ones, an accumulator redefined, functions,
 * big collections, a count of the hidden token), tool results, short or wide println lines or
 * none, prose from none to five long sentences, and failed turns followed by recovery.
 */
function adversarySession(seed: number): Session {
  const r = rng(seed);
  const turns = 2 + Math.floor(r() * 8);
  const replies: string[] = [];
  const failing: number[] = [];
  const prose = (): string => (r() < 0.4 ? ADV_PROSE.repeat(1 + Math.floor(r() * 5)) : r() < 0.5 ? "Next." : "");
  for (let k = 0; k < turns - 1; k++) {
    if (r() < 0.15 && k < turns - 2) {
      failing.push(k + 1);
      replies.push(reply(prose(), `(def bad${k} (nth [] ${k + 5}))`));
      continue;
    }
    const parts: string[] = [];
    const defs = Math.floor(r() * 6);
    for (let j = 0; j < defs; j++) parts.push(r() < 0.3 ? `(def acc ${k * 10 + j})` : r() < 0.5 ? `(def d${k}_${j} (vec (take ${1 + Math.floor(r() * 8)} (drop ${Math.floor(r() * 100)} data/rows))))` : `(defn f${k}_${j} [x] (+ x ${j}))`);
    if (r() < 0.4) parts.push(`(def res${k} (tool/search {:q "q${k}" :n ${Math.floor(r() * 200)}}))`);
    if (r() < 0.15) parts.push(`(def big${k} (vec (take ${40 + Math.floor(r() * 80)} data/rows)))`);
    if (r() < 0.2) parts.push(`(def hid${k} (count data/_token))`);
    const lines = r() < 0.35 ? 0 : Math.floor(r() * 8);
    const wide = r() < 0.3;
    for (let j = 0; j < lines; j++) parts.push(wide ? `(println "w${k}" (take ${5 + Math.floor(r() * 10)} (drop ${Math.floor(r() * 100)} data/rows)))` : `(println "t${k} l${j}" ${j})`);
    if (parts.length === 0) parts.push(`(def n${k} ${k})`);
    replies.push(reply(prose(), parts.join("\n")));
  }
  replies.push(reply("Done.", "(return 1)"));
  return { name: `adversary-${seed}`, kind: "exploration", prompt: "Look through the rows and report.", tools: advTools, context: { rows: advRows }, replies, failingTurns: failing };
}

const SERVICES = ["api", "db", "cache", "queue", "auth", "search", "billing", "mail"];
const wideRecords = Array.from({ length: 30 }, (_, i) => Object.fromEntries(Array.from({ length: 25 }, (_, j) => [`field-number-${j}-of-record-with-long-name`, i * j])));
const displayTools = {
  health: tool({ description: "Health of a service", input: z.object({ service: z.string() }), run: ({ service }) => ({ status: service.length % 3 === 0 ? "degraded" : "ok", "p95-ms": service.length * 37 }) }),
  batch: tool({ description: "Marks ids done", input: z.object({ ids: z.array(z.string()) }), run: ({ ids }) => ({ ok: true, n: ids.length }) }),
  records: tool({ description: "Wide records", input: z.object({ n: z.number().int() }), run: ({ n }) => wideRecords.slice(0, 3 + (n % 20)) }),
  lookup: tool({ description: "Looks one up", input: z.object({ id: z.string() }), run: ({ id }) => ({ id, tier: id.length % 2 === 0 ? "gold" : "silver", open: id.length }) }),
};

/**
 * An agent run of 3-22 turns reaching the summary lines the other runs here never show:
 * dictionaries keyed by long strings (a sample naming its keys, some cut at 40 characters),
 * written-out strings of 41-80 characters and small commented maps, regexes, tool results whose
 * record keys follow their shape, small results of one tool shown whole (a fan-out, one line per
 * call), arguments shown whole, and println lines; its turn budget is `budget` times its turns.
 */
async function displayRun(seed: number, budget = 1): Promise<RunTrace> {
  const r = rng(seed);
  const turns = 3 + Math.floor(r() * 20);
  const longKey = (i: number): string => `${["Enterprise", "Growth", "Starter", "Northwind", "Contoso"][i % 5]} plan for region ${i} ${"x".repeat(Math.floor(r() * 30))}`;
  const note = "Use eu-west-1 for all writes; us-east-1 is read-only now ok";
  const replies: string[] = [];
  const dicts: string[] = [];
  for (let k = 0; k < turns - 1; k++) {
    const prose = ["", "Next.", "Let me look at what came back and decide which part matters for the answer before I go on. ".repeat(1 + Math.floor(r() * 3))][Math.floor(r() * 3)];
    const parts: string[] = [];
    const steps = 1 + Math.floor(r() * 3);
    for (let s = 0; s < steps; s++) {
      const kind = Math.floor(r() * 9);
      if (kind === 0) {
        dicts.push(`d${k}_${s}`);
        parts.push(`(def d${k}_${s} {${Array.from({ length: 4 + Math.floor(r() * 10) }, (_, i) => `"${longKey(i + k)}" {:n ${i} :mrr ${(i * 13.5).toFixed(1)}}`).join(" ")}})`);
      } else if (kind === 1 && dicts.length > 0) parts.push(`(println (count ${dicts[Math.floor(r() * dicts.length)]}))`);
      else if (kind === 2) {
        parts.push(`(def cfg${k}_${s} {:min-free ${Math.floor(r() * 50)} :order-qty ${Math.floor(r() * 900)} :max-price ${(r() * 10).toFixed(2)}0 ; cap\n :note "${note.slice(0, 20 + Math.floor(r() * 30))}"})`);
        parts.push(`(def s${k}_${s} "${note.slice(0, 41 + Math.floor(r() * 20))}")`);
      } else if (kind === 3) parts.push(`(def h${k}_${s} (mapv #(tool/health {:service %}) [${SERVICES.slice(0, 2 + Math.floor(r() * 7)).map((x) => `"${x}"`).join(" ")}]))`);
      else if (kind === 4) parts.push(`(tool/batch {:ids [${Array.from({ length: 3 + Math.floor(r() * 10) }, (_, i) => `"o${k * 10 + i}"`).join(" ")}]})`);
      else if (kind === 5) parts.push(`(def w${k}_${s} (tool/records {:n ${Math.floor(r() * 40)}}))`, `(println (count w${k}_${s}))`);
      else if (kind === 6) parts.push(`(def re${k}_${s} #"${["charge|refund|invoice", "^ERR-\\d{3,5}$", "(?i)timeout|deadline exceeded|503"][Math.floor(r() * 3)]}")`);
      else if (kind === 7) parts.push(`(doseq [c [${Array.from({ length: 1 + Math.floor(r() * 5) }, (_, i) => `"C${k}${i}${"x".repeat(i)}"`).join(" ")}]] (tool/lookup {:id c}))`);
      else {
        const lines = Math.floor(r() * r() * 12);
        for (let j = 0; j < lines; j++) parts.push(`(println "t${k} l${j}" "${"row ".repeat(1 + Math.floor(r() * 12))}")`);
      }
    }
    if (parts.length === 0) parts.push(`(println ${k})`);
    replies.push((prose === "" ? "" : prose + "\n\n") + "```clojure\n" + parts.join("\n") + "\n```");
  }
  replies.push("```clojure\n(return 1)\n```");
  const agent = SubAgent.create({ prompt: "Look through the data.", tools: displayTools, maxTurns: Math.round(turns * budget), limits: { timeoutMs: 600_000 } });
  return (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: {} })).trace;
}

/**
 * Prices the run `make` gives for each seed from `first` to `last` at each budget factor (its turn
 * budget that many times the turns it uses), under both cache models, against full history:
 * at most `bound(turns)` times its cost.
 */
async function expectRuns(make: (seed: number, factor: number) => Promise<RunTrace>, first: number, last: number, factors: readonly number[], bound: (turns: number) => number, averaged = false): Promise<void> {
  for (let seed = first; seed <= last; seed++) {
    for (const factor of factors) {
      const trace = await make(seed, factor);
      const budget = Math.round(trace.turns.length * factor);
      for (const cache of ["token-prefix", "breakpoint"] as const) {
        const r = averaged && cache === "token-prefix" ? stepAveraged(trace, budget) : ratio(trace, cache, budget);
        expect(r, `seed ${seed}, ${factor}x, ${cache}, ${trace.turns.length} turns`).toBeLessThanOrEqual(bound(trace.turns.length));
      }
    }
  }
}

/**
 * The token-prefix ratio averaged over 8 task lengths 16 tokens apart, one 128-token step in all.
 * Such a cache serves whole steps, so where each prompt's shared prefix ends against a step is
 * luck that moves a short run's cost by up to 5% whichever the view: a change to the system
 * prompt or the task deals every run a new hand. The average is what the view decides.
 */
function stepAveraged(trace: RunTrace, budget: number, extra: Partial<ViewOptions> = {}): number {
  let sum = 0;
  for (let pad = 0; pad < 128; pad += 16) sum += ratio({ ...trace, task: trace.task + " x".repeat(pad) }, "token-prefix", budget, MODELS["token-prefix"], extra);
  return sum / 8;
}

/** Generated traces of every shape with the system prompt `system`, under both cache models: at most 1.03 times full history. */
function expectGenerated(system: string): void {
  fc.assert(
    fc.property(fc.array(turnSpec, { minLength: 2, maxLength: 30 }), (specs) => {
      const trace = buildTrace(specs, specs.length);
      trace.system = system;
      for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(trace, cache), cache).toBeLessThanOrEqual(1.03);
    }),
    // A fixed seed: over 3,000 random traces 2 passed 1.03 (up to 1.04), so an unseeded run would fail about one time in six.
    { numRuns: 150, seed: 20261126 },
  );
}

describe("compressed history is never dearer than full history", () => {
  // Before every rewrite was priced, 2 of these 12 cost more than full under a breakpoint cache
  // (up to 1.15x), and 14 of the first 60 seeds.
  it("agent runs of random shape, under both cache models", async () => {
    await expectRuns(randomRun, 1, 12, [1], () => 1);
  }, 60_000);

  // Seeds 13-100 hold runs of short programs that define without printing: with every such
  // definition sampled, seed 87 (5 turns) cost 1.044x full history under a token-prefix cache and
  // 1.066x under breakpoints, seed 51 1.012x, and at a budget of twice the turns seed 106 1.086x.
  // What a turn teaches now fits in the turn it summarizes (compressed.ts, taughtSummary).
  // Token-prefix costs are averaged over where the cache's steps fall (stepAveraged), as for the
  // tool-heavy runs: unaveraged, adding six names to the language reference (a longer system
  // prompt) dealt seed 45 (5 turns, 2x) 1.0024x by where a 128-token step fell.
  it("agent runs of short programs that print nothing, under both cache models", async () => {
    await expectRuns(randomRun, 13, 100, [1, 2], () => 1, true);
  }, 600_000);

  // Tool-heavy runs, at their own budget and three times it. Before: at 3x, seed 67 (27 turns)
  // cost 1.07x full history under breakpoints: a println cut rewrote every message, and the next
  // prompt, changing the turn just kept as written, found no written prefix past the task and
  // wrote them all again (now a breakpoint marks the message before the latest turn); a cut
  // counted what it rewrote of each summary at the program's size, though tool lines with their
  // results' shapes can be longer (now at the summary's own). Before the turn just done showed
  // its functions' source after its summary instead of staying as written, seed 68 (12 turns)
  // cost 1.016x and seed 70 1.005x. Token-prefix costs are averaged over where the cache's steps
  // fall (stepAveraged): on one task length this test allowed short runs 1.035x, and moving the
  // legend out of the system prompt (20 tokens shorter) dealt seed 79 (3 turns) 1.054x and seed 46
  // 1.043x, though averaged it made short runs cheaper. Runs of 3-9 turns often save too little
  // to cover the legend (60 tokens heading the first summary, 20 more than the full view's note
  // on `Stored:`): with it in the system prompt 21 of these 62 were dearer under token prefix and
  // 28 under breakpoints, at most 1.012x; now that the first summary must repay its share of it,
  // 9 and 14, at most 1.011x. Runs of 10+ turns: none dearer, at most 0.975x.
  it("tool-heavy agent runs, under both cache models", async () => {
    await expectRuns(toolRun, 1, 100, [1, 3], (turns) => (turns >= 10 ? 1 : 1.015), true);
  }, 600_000);

  // Runs whose summaries show what the runs above never make: long dictionary keys, strings and
  // maps written out, regexes, record keys after a result's shape, small results and arguments
  // whole. Each such line is longer than the shape it replaced, and must still pay for itself. Of
  // seeds 0-1,999 at their own budget none is dearer: at worst 0.994x (seed 1109, 3 turns; token
  // prefix, averaged) and 0.989x (breakpoint). Those closest to 1 are kept here besides the first
  // twelve: sending the legend twice while pricing it once makes eight of them dearer (up to 1.012x),
  // and counting no legend share three (up to 1.003x).
  it("agent runs whose summaries show values whole, at their own budget, under both cache models", async () => {
    for (const seed of [...Array.from({ length: 12 }, (_, i) => i), 183, 281, 309, 1109, 1350, 1518, 1670, 1704, 1952]) await expectRuns(displayRun, seed, seed, [1], () => 1, true);
  }, 120_000);

  // Generated traces (with a system prompt long enough to cache). Before: 271 of 400 dearer, up
  // to 1.53x. Two small costs remain allowed: a turn that printed nothing shows samples of what
  // it defined (what it taught, which full history never shows), and a token-prefix cache serves
  // whole 128-token steps, so a prompt a few tokens shorter can lose a step.
  it("generated traces of every shape, under both cache models, within 3%", () => {
    expectGenerated("You write PTC-Lisp programs. The reference follows.\n".repeat(300));
  }, 60_000);

  // A run that stops far short of its turn budget: every rewrite was a bet on prompts that never
  // came. Counting the whole budget left, seeds 1-26 at 5x cost up to 1.33x full history (seed 21,
  // 19 turns of 95, breakpoint cache), 10 of them more than 1.01x. Each rewrite now has to pay back
  // within a short horizon (prompts-left.ts): none is dearer than full (of seeds 1-40, the worst 0.997x).
  it("agent runs that stop far short of a large turn budget, under both cache models", async () => {
    await expectRuns(randomRun, 1, 26, [5], () => 1);
  }, 120_000);

  // The bet a rewrite makes on prompts to come, at its widest (measured 2026-11-28, kept as a
  // bound, not a promise: docs/history.md, "The prompts a rewrite counts on"). Six turns that
  // each print one wide line, with a budget of three times their turns: a println cut is priced
  // over 8 prompts in a run that returns two prompts later. At their own budget none is dearer.
  it("runs of wide lines that stop far short of their budget stay within the measured bet", async () => {
    for (const chars of [500, 700, 950]) {
      const replies = [...Array.from({ length: 6 }, (_, k) => `Looking at it.\n\n\`\`\`clojure\n(println (apply str (map #(str "w" (mod (+ % ${k * 7}) 97) " ") (range ${Math.round(chars / 4)}))))\n\`\`\``), "Done.\n\n```clojure\n(return 1)\n```"];
      for (const factor of [1, 3]) {
        const agent = SubAgent.create({ prompt: "Look.", maxTurns: replies.length * factor, limits: { timeoutMs: 600_000 } });
        const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies) })).trace;
        const budget = replies.length * factor;
        const bound = factor === 1 ? 1 : 1.035;
        expect(stepAveraged(trace, budget), `${chars} characters, ${factor}x, token prefix`).toBeLessThanOrEqual(bound);
        expect(ratio(trace, "breakpoint", budget), `${chars} characters, ${factor}x, breakpoint`).toBeLessThanOrEqual(factor === 1 ? 1 : 1.025);
      }
    }
  }, 120_000);

  // One definition refined turn after turn without printing (narrowing a filter): each prompt
  // drops the previous turn's line for it (superseded), rewriting that summary. The breakpoint
  // layout marked only the task, the message before the latest turn and the last one, so the
  // next prompt found its cache at the task and wrote the whole history again: 1.14x full
  // history at its own budget, 1.29x at twice it. A mark one message earlier holds the rest.
  it("a definition refined every turn without printing, under both cache models", async () => {
    const cities = ["Oslo", "Lima", "Perth"];
    for (const factor of [1, 2]) {
      const replies = [...Array.from({ length: 19 }, (_, k) => `Refining the filter.\n\n\`\`\`clojure\n(def candidates (take 5 (sort-by :price > (filter #(and (= (:city %) "${cities[k % 3]}") (> (:price %) ${k * 10})) data/rows))))\n\`\`\``), "```clojure\n(return (count candidates))\n```"];
      const agent = SubAgent.create({ prompt: "Find the priciest candidates.", maxTurns: replies.length * factor });
      const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
      for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(trace, cache, replies.length * factor), `${factor}x, ${cache}`).toBeLessThan(1);
    }
  }, 60_000);

  // A helper refined every turn, its body growing by a term, printing one score: the turn just done
  // stays as written (its source does not fit after its summary) and is summarized a prompt later
  // where that pays. Priced at a 5-minute cache's 1.25x write under Anthropic's 1-hour cache, which
  // writes at 2x, those rewrites did not pay: 1.0023x full history at the run's own budget (14,291
  // against 14,258 token-equivalents). The view is told the cache's write price (cacheWrite).
  it("a helper refined every turn at its own budget, and a log grown every turn at twice it, under a 1-hour cache writing at 2x", async () => {
    const replies = [...Array.from({ length: 16 }, (_, k) => `Next.\n\n\`\`\`clojure\n(defn score [r] (+ ${Array.from({ length: k + 1 }, (_, j) => `(* ${j + 1} (:qty r))`).join(" ")}))\n(println (score (first data/rows)))\n\`\`\``), "Done.\n\n```clojure\n(return 1)\n```"];
    const agent = SubAgent.create({ prompt: "Look through the rows and report.", maxTurns: replies.length });
    const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
    expect(ratio(trace, "breakpoint", replies.length, { input: 1, output: 0, cache: PROVIDER_CACHES["anthropic-1h"] })).toBeLessThanOrEqual(1);
    // A log string grown every turn without printing, with a budget of twice its turns: its
    // superseded lines were left out where that paid at 1.25x, 1.0122x full history under the hour's cache.
    const grown = [...Array.from({ length: 16 }, (_, k) => `Next.\n\n\`\`\`clojure\n(def log (apply str (repeat ${(k + 1) * 200} "ab ")))\n\`\`\``), "Done.\n\n```clojure\n(return 1)\n```"];
    const logAgent = SubAgent.create({ prompt: "Look through the rows and report.", maxTurns: grown.length * 2 });
    const logTrace = (await SubAgent.run(logAgent, { llm: scriptedLlm(grown), context: { rows } })).trace;
    expect(ratio(logTrace, "breakpoint", grown.length * 2, { input: 1, output: 0, cache: PROVIDER_CACHES["anthropic-1h"] })).toBeLessThanOrEqual(1);
  }, 60_000);

  // The same helper refined over 11 turns without prose: each turn just done stays as written (its
  // source does not fit after its summary), and the first of them summarized later, where that paid,
  // brought the legend heading the run's first summary, which the payback left out: 1.0026x full
  // history under a 5-minute breakpoint cache at the run's own budget (8,033 against 8,013
  // token-equivalents; now 0.9845x). The legend is now priced with it.
  it("a turn summarized later as a run's first summary pays for the legend it brings", async () => {
    const replies = [...Array.from({ length: 11 }, (_, k) => `\n\n\`\`\`clojure\n(defn score [r] (+ ${Array.from({ length: k + 1 }, (_, j) => `(* ${j + 1} (:qty r))`).join(" ")}))\n(println (score (first data/rows)))\n\`\`\``), "Done.\n\n```clojure\n(return 1)\n```"];
    const agent = SubAgent.create({ prompt: "Look through the rows and report.", maxTurns: replies.length });
    const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
    expect(ratio(trace, "breakpoint")).toBeLessThanOrEqual(1);
  }, 60_000);

  // Orders with six fields, for sessions whose silent turns show their records' keys.
  const orders = Array.from({ length: 40 }, (_, i) => ({ id: i + 1, customer: `customer-${1000 + ((i * 7919) % 9000)}`, city: ["Lisbon", "Oslo", "Quito", "Hanoi"][i % 4], status: ["open", "held"][i % 2], total: ((i * 3571) % 90000) / 100, note: ["gift wrap", "call first", "fragile"][i % 3] }));
  const step = (code: string): string => `Next step.\n\n\`\`\`clojure\n${code}\n\`\`\``;
  async function ordersRun(programs: readonly string[], maxTurns: number): Promise<RunTrace> {
    const agent = SubAgent.create({ prompt: "Look through the orders.", maxTurns });
    const run = await SubAgent.run(agent, { llm: scriptedLlm([...programs, "(return 1)"].map(step)), context: { orders } });
    expect(run.ok).toBe(true);
    return run.trace;
  }

  // A turn that printed, then one name refined every turn without printing: each summary (the
  // records' keys) is about its turn's size. With the breakpoint layout the turn just done's
  // `; Note:` goes in its feedback's message, which the next prompt writes again without it; the
  // note was shown whenever it fitted in the turn, that rewrite unpaid: 1.010x full history.
  it("a note under a breakpoint cache pays for the feedback message the next prompt writes again", async () => {
    const programs = [`(def acc (vec (take 2 data/orders)))\n(def cities (distinct (map :city data/orders)))\n(println "cities" (count cities) "rows" (count data/orders))`, ...Array.from({ length: 8 }, (_, k) => `(def acc (vec (take ${((k + 1) % 5) + 1} (drop ${k + 1} data/orders))))`)];
    const trace = await ordersRun(programs, 10);
    expect(ratio(trace, "breakpoint")).toBeLessThan(1);
    // Averaged over step alignments: on one task length a 5-token longer system prompt made it 1.003x.
    expect(stepAveraged(trace, 10)).toBeLessThan(1);
  }, 60_000);

  // The same session with the system prompt padded by 0-200 tokens: the breakpoint ratio stays
  // 0.988-0.989x at every size and the step-averaged token-prefix one 0.985-0.987x, while on one
  // task length the token-prefix ratio swings 0.951-1.021x with where the steps fall.
  it("a note under a breakpoint cache: the promise does not depend on the system prompt's size", async () => {
    const programs = [`(def acc (vec (take 2 data/orders)))\n(def cities (distinct (map :city data/orders)))\n(println "cities" (count cities) "rows" (count data/orders))`, ...Array.from({ length: 8 }, (_, k) => `(def acc (vec (take ${((k + 1) % 5) + 1} (drop ${k + 1} data/orders))))`)];
    const trace = await ordersRun(programs, 10);
    for (let pad = 0; pad <= 200; pad++) {
      const padded = { ...trace, system: trace.system + " x".repeat(pad) };
      expect(ratio(padded, "breakpoint"), `pad ${pad}, breakpoint`).toBeLessThan(1);
      if (pad % 8 === 0) expect(stepAveraged(padded, 10), `pad ${pad}, token-prefix`).toBeLessThan(1);
    }
  }, 120_000);

  // One name refined every turn without printing, its records' keys shown (the sample would not
  // fit in the turn). Leaving the previous turn's line out was priced as saving the sample line,
  // not the shorter keys line the summary shows, and, under a breakpoint cache, without the legend
  // the first summary's message writes again with it: 1.016x full history at twice its turns.
  it("leaving out a superseded line is priced with the line the summary shows and the legend it writes again", async () => {
    const programs = Array.from({ length: 9 }, (_, k) => `(def acc (vec (take ${(k % 5) + 1} (drop ${k} data/orders))))`);
    for (const factor of [1, 2]) {
      const trace = await ordersRun(programs, 10 * factor);
      for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(trace, cache, 10 * factor), `${factor}x, ${cache}`).toBeLessThan(1);
    }
  }, 60_000);

  // Wide rows printed every other turn, and between them a paragraph of reasoning (about 400
  // tokens) whose program fails. A println cut rewrites the failed turns kept in full, reply and
  // feedback, but priced each at its program's size: 1.05x full history at its own budget and
  // 1.14x at three times it (token prefix), 1.22x and 1.40x (breakpoint).
  it("failed turns with long reasoning between wide prints, under both cache models", async () => {
    const cities = ["Oslo", "Lima", "Perth"];
    const reasoning = (k: number): string => Array.from({ length: 8 }, (_, i) => `Point ${k}.${i}: the rows in ${cities[i % 3]} have prices that do not follow the quantity, so I want to group them and compare the medians before deciding.`).join(" ");
    const replies = [...Array.from({ length: 23 }, (_, k) => (k % 2 === 1 ? `${reasoning(k)}\n\n\`\`\`clojure\n(def g${k} (group-by :city data/rows))\n(println (nth (keys g${k}) 9))\n\`\`\`` : `\`\`\`clojure\n(println (take 8 (drop ${k * 5} data/rows)))\n\`\`\``)), "```clojure\n(return 1)\n```"];
    for (const factor of [1, 3]) {
      const agent = SubAgent.create({ prompt: "Compare prices by city.", maxTurns: replies.length * factor });
      const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
      for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(trace, cache, replies.length * factor), `${factor}x, ${cache}`).toBeLessThan(1);
    }
  }, 60_000);

  // The compressed view's legend sat in its system prompt, 40 tokens more than the full view's:
  // a run that returned on its first turn, the commonest run, cost 1.016x full history for
  // summaries it never sent. It heads the first summary now, and the system prompt is the full
  // view's without its note on `Stored:`. The first summary must also save its share of the
  // legend over the prompts left: in 3 turns of a 3-turn budget, two terse turns saving about 20
  // tokens each were summarized and cost 1.004x full history under breakpoints.
  it("a run that summarizes nothing (it returns at once, fails a turn, or its summaries would save less than the legend) costs less than full history, and sends no legend", async () => {
    const program = (code: string): string => "```clojure\n" + code + "\n```";
    const runs = [[program("(return (count data/rows))")], [program("(nth [] 5)"), program("(return 2)")], ["Counting first.\n\n" + program("(println (count data/rows))"), "Now the cities.\n\n" + program("(println (count (distinct (map :city data/rows))))"), program("(return 3)")]];
    for (const replies of runs) {
      const agent = SubAgent.create({ prompt: "Count the rows.", tools: catalogueTools, maxTurns: 3 });
      const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows }, compressHistory: true })).trace;
      expect(stepAveraged(trace, 3), `${replies.length} turns, token-prefix`).toBeLessThan(1);
      expect(ratio(trace, "breakpoint", 3), `${replies.length} turns, breakpoint`).toBeLessThan(1);
      const last = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, -1), maxTurns: 3 }, { ...defaultViewOptions, compressHistory: true });
      expect(last.stats.turnsCompressed).toBe(0);
      expect(last.messages.map((m) => m.content).join("\n")).not.toContain(summaryLegend());
    }
  });

  // Strict-prefix mode took a summary whenever it was smaller than its turn, and the legend (60
  // tokens) heading the first one was owed by nothing: a 2-turn run whose one summary saved less
  // than that cost 1.006x full history under breakpoints (3,750 against 3,727 token-equivalents;
  // now 3,695, the turn kept as written).
  it("strict-prefix mode: the run's first summary owes its share of the legend too", async () => {
    const replies = [reply("Next.", "(def acc (vec (take 1 data/rows)))\n(println (count acc))"), reply("Done.", "(return 1)")];
    const agent = SubAgent.create({ prompt: "Look through the rows and report.", maxTurns: 2 });
    const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
    expect(ratio(trace, "breakpoint", 2, MODELS.breakpoint, { strictPrefix: true })).toBeLessThanOrEqual(1);
    expect(stepAveraged(trace, 2, { strictPrefix: true })).toBeLessThanOrEqual(1);
  });

  // Strict-prefix mode cut each turn's output to its own last N lines in the prompt after the one
  // that showed it whole (the turn just done), rewriting that turn where the cache held it, for a
  // saving no rule priced: a first turn of 40 short lines cost a 4-turn run 1.012x full history
  // under breakpoints (4,703 against 4,647 token-equivalents) and 1.009x under token prefix, 1.023x
  // under breakpoints at three times its turns. The cut is made only where it pays, else the output
  // stays whole: 0.985x, 0.989x, 0.992x. (At three times its turns the token-prefix ratio, 1.004x
  // either way, is the bet on prompts to come: see the wide lines above.)
  it("strict-prefix mode: a turn's output is cut to its last N lines only where that pays", async () => {
    const replies = [reply("Next.", '(dotimes [i 40] (println "line" i))'), reply("Next.", "(def v1 (vec (take 3 data/rows)))"), reply("Next.", '(defn f2 "helper" [x] (+ x 2))\n(println (f2 1))'), reply("Done.", "(return 1)")];
    for (const factor of [1, 3]) {
      const agent = SubAgent.create({ prompt: "Look through the rows and report.", maxTurns: replies.length * factor });
      const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
      expect(ratio(trace, "breakpoint", replies.length * factor, MODELS.breakpoint, { strictPrefix: true }), `${factor}x, breakpoint`).toBeLessThanOrEqual(1);
      if (factor === 1) expect(stepAveraged(trace, replies.length, { strictPrefix: true }), "token-prefix").toBeLessThanOrEqual(1);
    }
  }, 60_000);

  // Six turns of tool calls, twelve wide lines, fourteen quiet turns, twelve wide lines again: the
  // cut that drops the first wide lines changes turn 7, and was priced as writing the prompt again
  // from the cache entry after turn 6. An Anthropic-style cache looks for an entry only 20 message
  // boundaries back from a breakpoint, and that entry lay 30 back: the prompt was written again
  // from the task, and the run cost 2.0% more than without the cut (18,575 against 18,208
  // token-equivalents).
  it("a println cut under a breakpoint cache is priced from an entry the cache's lookback can reach", async () => {
    const fence = (code: string): string => "```clojure\n" + code + "\n```";
    const wideLines = (from: number): string => fence(`(dotimes [i 12] (println (take 2 (drop (+ ${from} (* i 2)) data/rows))))`);
    const replies = [
      ...Array.from({ length: 6 }, (_, k) => fence(Array.from({ length: 4 }, (_, j) => `(def r${k}_${j} (tool/page {:n ${k * 4 + j}}))`).join("\n"))),
      wideLines(0),
      ...Array.from({ length: 14 }, (_, k) => fence(`(def x${k} ${k * 3})`)),
      wideLines(50),
      ...Array.from({ length: 6 }, (_, k) => fence(`(def y${k} ${k})`)),
      fence("(return 1)"),
    ];
    const agent = SubAgent.create({ prompt: "Look through the rows.", tools: catalogueTools, maxTurns: replies.length });
    const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
    const options = { ...defaultViewOptions, compressHistory: true, cacheModel: "breakpoint" } as const;
    const withCuts = cost(trace, options, MODELS.breakpoint, replies.length);
    const withoutCuts = cost(trace, { ...options, printlnHistoryLimit: 1000, printlnHistoryTokens: 100_000 }, MODELS.breakpoint, replies.length);
    expect(withCuts).toBeLessThanOrEqual(withoutCuts);
  }, 60_000);

  // A price table's own breakpoint cache allowing fewer marks per request than the layout places
  // (four): the client keeps the latest. With one, at the last message, which the default layout
  // rewrites in the next prompt (the tail after the turn just done), no prompt found an entry: 8
  // turns printing two rows each with a one-word note cost 1.2031x full history (8,405 against
  // 6,987 token-equivalents); with two and no lookback, the task's mark gone, 2.7534x. Told the
  // allowance as the harness tells it (forClientCache), the view keeps a strict prefix there: 0.9685x, 0.5884x.
  it("a breakpoint cache allowing fewer marks than the layout places, the view told so as the harness tells it", async () => {
    const replies = [...Array.from({ length: 8 }, (_, k) => `Next.\n\n\`\`\`clojure\n(println (take 2 (drop ${k * 5} data/rows)))\n\`\`\``), "Done.\n\n```clojure\n(return 1)\n```"];
    const agent = SubAgent.create({ prompt: "Look through the rows and report.", maxTurns: replies.length });
    const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
    for (const [marks, lookback] of [[1, 20], [2, 0], [3, 0]]) {
      const price: ModelPrice = { input: 1, output: 0, cache: { kind: "breakpoint", read: 0.1, write: 1.25, minTokens: 1024, maxBreakpoints: marks, lookback } };
      const spec = forClientCache(INTERPRETER_STRATEGY, "breakpoint", 1024, 1.25, marks);
      const told = typeof spec === "string" ? {} : spec.options;
      const sent = (options: ViewOptions): number => {
        const meter = createMeter(price);
        for (let k = 0; k < trace.turns.length; k++) {
          const view = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: replies.length }, options);
          meter.add(sentPrompt(view.messages, view.breakpoints, price));
        }
        return meter.totals.cost;
      };
      expect(sent({ ...defaultViewOptions, ...told, compressHistory: true }) / sent({ ...defaultViewOptions, compressHistory: false }), `${marks} marks, lookback ${lookback}`).toBeLessThan(1);
    }
  }, 60_000);

  // A run's first summary pays for the legend heading it (legendShare), and so must what follows it
  // on the turn just done: its functions' source and note were fitted in the turn without that
  // share. Here the turn after a failed one prints, defines two functions and explains itself; in
  // the run's last prompt the legend, summary, source and note came to 38 tokens more than the turn
  // as written: 1.0037x full history under breakpoints at the run's own budget.
  it("the tail after a run's first summary owes the legend's share too", async () => {
    const prose = "The previous output shows the rows I expected; the quantities differ by city, so next I will narrow the selection and check the notes before deciding what to return. ";
    const replies = [
      reply(prose.repeat(4), "(def bad0 (nth [] 5))"),
      reply(prose, '(def acc 10)\n(def acc 11)\n(def d1_2 (vec (take 1 (drop 1 data/rows))))\n(defn f1_3 [x] (+ x 3))\n(defn f1_4 [x] (+ x 4))\n(println "w1" (take 12 (drop 77 data/rows)))'),
      reply("Done.", "(return 1)"),
    ];
    const data = Array.from({ length: 120 }, (_, i) => ({ id: i, sku: `SKU-${1000 + i}`, city: ["Oslo", "Lima", "Perth"][i % 3], qty: (i * 7) % 13, note: `note ${i} ${"lorem ipsum ".repeat(i % 9)}` }));
    const agent = SubAgent.create({ prompt: "Look through the rows and report.", maxTurns: 3 });
    const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows: data } })).trace;
    expect(ratio(trace, "breakpoint", 3)).toBeLessThan(1);
    expect(stepAveraged(trace, 3)).toBeLessThan(1);
  });

  // Scripted sessions unlike the bench's: 2-9 turns, budgets 1-5 times the turns used. At their own
  // budget none costs more than full history (seed 66 did, 1.0037x, before the tail after a first
  // summary owed the legend's share). At larger budgets a rewrite is a bet on the prompts the
  // budget allows (at most 8, prompts-left.ts), which a run that stops early loses: of seeds 1-160,
  // 16 (seed, budget) pairs cost more than full, all under breakpoints at 2-5x, the worst 1.021x
  // (seed 145, 6 turns of a 12-turn budget: a println cut at turn 5 priced over 7 prompts).
  it("short scripted sessions with turn budgets 1-5 times their turns, under both cache models", async () => {
    for (let seed = 1; seed <= 24; seed++) {
      const session = adversarySession(seed);
      for (const factor of [1, 3]) {
        const budget = session.replies.length * factor;
        const trace = (await runSession(session, budget)).trace;
        const bound = factor === 1 ? 1 : 1.025;
        expect(stepAveraged(trace, budget), `seed ${seed}, ${factor}x, token-prefix`).toBeLessThanOrEqual(bound);
        expect(ratio(trace, "breakpoint", budget), `seed ${seed}, ${factor}x, breakpoint`).toBeLessThanOrEqual(bound);
      }
    }
  }, 120_000);

  // A big collection defined without printing, too big for its summary to fit in its turn, so the
  // turn stays as written; the next turn redefines it. Leaving the stale line out was priced as
  // dropping one line from a summary, but the turn showed no summary: it was summarized in place
  // of its reply, rewriting the prompt from it, in the run's last prompt: 1.002x full history
  // under breakpoints at three times its turns.
  it("a turn kept as written is not summarized later because a later turn redefined its name", async () => {
    const replies = [reply(ADV_PROSE, "(def big (vec (take 68 (drop 15 data/rows))))"), reply("", '(def big (vec (take 40 (drop 17 data/rows))))\n(println "big" (count big) (first big))'), reply("Done.", "(return 1)")];
    const session: Session = { name: "big-redefined", kind: "exploration", prompt: "Look through the rows and report.", tools: advTools, context: { rows: advRows }, replies };
    for (const factor of [1, 3]) {
      const budget = replies.length * factor;
      const trace = (await runSession(session, budget)).trace;
      expect(ratio(trace, "breakpoint", budget), `${factor}x, breakpoint`).toBeLessThanOrEqual(1);
      expect(stepAveraged(trace, budget), `${factor}x, token-prefix`).toBeLessThanOrEqual(1);
      const last = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, 2), maxTurns: budget }, { ...defaultViewOptions, compressHistory: true, cacheModel: "breakpoint" });
      expect(last.stats.turnsFull.map((t) => t.turn), `${factor}x`).toContain(1);
    }
  }, 60_000);

  // The generated traces again, each with a budget 1.5 to 5 times its turns. Counting the whole
  // budget left, 42 of 200 traces at 5x cost more than 1.03x full history (up to 1.21x).
  it("generated traces with a turn budget 1.5-5 times the turns used, under both cache models, within 3%", () => {
    fc.assert(
      fc.property(fc.array(turnSpec, { minLength: 2, maxLength: 30 }), fc.constantFrom(1.5, 2, 3, 5), (specs, factor) => {
        const budget = Math.round(specs.length * factor);
        const trace = buildTrace(specs, budget);
        trace.system = "You write PTC-Lisp programs. The reference follows.\n".repeat(300);
        for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(trace, cache, budget), `${cache}, budget ${budget}`).toBeLessThanOrEqual(1.03);
      }),
      { numRuns: 150, seed: 20261126 },
    );
  }, 60_000);
  // A cache whose minimum the system prompt and task do not reach: no prompt below it is cached.
  // The view assumed 1,024 tokens, summarized the first turns, and kept prompts under the minimum
  // that full history had passed, paying the input price on the whole prompt where full history
  // read it cached: a 6-turn run (seed 19) 1.22x full history under claude-haiku-4's cache and
  // 1.18x under gemini-2.5-pro's, an 18-turn tool run (seed 40) 1.06x, and 20 names redefined
  // every turn 1.27x. Now the turns that carry the prompt to the minimum are shown as full
  // history shows them, under its system prompt (compressed.ts, cacheFloor).
  it("a cache whose minimum is above the system prompt (4,096 tokens), under both cache models", async () => {
    const fence = (code: string, prose = "Next."): string => `${prose}\n\n\`\`\`clojure\n${code}\n\`\`\``;
    const shapes: Record<string, string[]> = {
      "one enormous line a turn": Array.from({ length: 6 }, (_, k) => fence(`(println (apply str (map #(str "w" (mod (+ % ${k * 7}) 97) " ") (range 1250))))`)),
      "CJK and emoji output": Array.from({ length: 8 }, (_, k) => fence(`(println (apply str (repeat ${40 + k * 10} "東京都の売上データ🎉")))`, "見てみます。")),
      "the same 20 names every turn": Array.from({ length: 10 }, (_, k) => fence(Array.from({ length: 20 }, (_, j) => `(def n${j} ${k * 100 + j})`).join("\n"))),
      "long prose every turn": Array.from({ length: 10 }, (_, k) => fence(`(def y${k} ${k})`, "The data shows a pattern in how the quantities vary by city and price; let me reason about it before going on. ".repeat(6))),
      "an accumulator of maps that grows": [fence("(def acc [])"), ...Array.from({ length: 10 }, (_, k) => fence(`(def acc (conj acc {:k ${k} :city "Oslo" :rows (vec (take 2 (drop ${k} data/rows)))}))`))],
    };
    const traces: Array<[string, RunTrace]> = [];
    for (const [name, replies] of Object.entries(shapes)) {
      const agent = SubAgent.create({ prompt: "Look through the rows.", maxTurns: replies.length + 1, limits: { timeoutMs: 600_000 } });
      traces.push([name, (await SubAgent.run(agent, { llm: scriptedLlm([...replies, fence("(return 1)", "Done.")]), context: { rows } })).trace]);
    }
    for (const [name, trace] of traces) {
      for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(trace, cache, trace.turns.length, MIN_4096[cache]), `${name}, ${cache}`).toBeLessThanOrEqual(1);
    }
    for (let seed = 1; seed <= 30; seed++) {
      for (const factor of [1, 3]) {
        const trace = await randomRun(seed, factor);
        const budget = Math.round(trace.turns.length * factor);
        for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(trace, cache, budget, MIN_4096[cache]), `random run ${seed}, ${factor}x, ${cache}`).toBeLessThanOrEqual(1);
      }
    }
    const tools = await toolRun(40);
    for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(tools, cache, tools.turns.length, MIN_4096[cache]), `tool run 40, ${cache}`).toBeLessThanOrEqual(1);
  }, 120_000);

  // A large task that brings the system prompt and task to the cache's minimum with full history's
  // note on `Stored:` (20 tokens) and not without it: the view decided on the full view's opening
  // and sent its own, so its first prompt was not cached where full history's was, and its second
  // wrote all of it: a 2-turn run cost 1.65x full history under claude-haiku-4's cache (9,265
  // against 5,625 token-equivalents) and 1.58x under gemini-2.5-pro's, a 6-turn run 1.45x and
  // 1.30x. Now the view starts as full history does there: 0.999x, 1.000x.
  it("a system prompt and task that reach the cache's minimum only with full history's note on `Stored:`", async () => {
    const fence = (code: string): string => "Next.\n\n```clojure\n" + code + "\n```";
    const task = "Look through the rows and report. " + "The report must cover every city, the quantities, the price spread and the notes. ".repeat(80);
    for (const replies of [[fence("(defn f [x] (+ x 1))\n(println (f 1))"), fence("(return 1)")], [...Array.from({ length: 5 }, (_, k) => fence(`(println (take 2 (drop ${k * 3} data/rows)))`)), fence("(return 1)")]]) {
      const agent = SubAgent.create({ prompt: task, maxTurns: replies.length });
      const trace = (await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { rows } })).trace;
      const opening = (t: RunTrace, view: "full" | "compressed"): number => messageTokens({ role: "system", content: viewSystem(t.system, view) }) + messageTokens({ role: "user", content: t.task });
      // The task padded so that full history's opening is just past 4,096 tokens.
      const padded = { ...trace, task: trace.task + " x".repeat(4100 - opening(trace, "full")) };
      expect(opening(padded, "full")).toBeGreaterThanOrEqual(4096);
      expect(opening(padded, "compressed")).toBeLessThan(4096);
      for (const cache of ["token-prefix", "breakpoint"] as const) expect(ratio(padded, cache, replies.length, MIN_4096[cache]), `${replies.length} turns, ${cache}`).toBeLessThanOrEqual(1);
    }
  }, 60_000);

  // A run saved under full history and resumed with compression on: the prompts the saved run sent
  // (full history's system prompt and turns) are in the provider's cache. The first live prompt
  // summarized the saved turns under the compressed view's own system prompt and wrote it all again:
  // inventory-reconcile saved after 9 of its 11 turns (its model failed) and resumed for the last 2
  // cost 9,445 token-equivalents against 8,375 resumed under full history (1.13x, token prefix),
  // 13,393 against 9,041 (1.48x, breakpoint); saved out of turns after 8 and resumed with a budget
  // of 12, 13,071 against 10,458 under breakpoints (1.25x: full history's system prompt, which the
  // client marks, was still cached). The saved turns now stay as full history shows them, under its
  // system prompt (fullTurns, set by resume): 0.996x, 0.995x, 0.992x.
  it("a run saved under full history and resumed with compression costs no more than one resumed under full history", async () => {
    const s = inventoryReconcile;
    const context = { ...s.context, _token: "sk-live-bench-7f3a9c21e4b8d6" };
    const n = s.replies.length;
    for (const [saved, budget] of [[n - 2, n], [n - 3, n + 1]] as const) {
      const agent = (maxTurns: number) => SubAgent.create({ prompt: s.prompt, tools: { ...s.tools }, maxTurns });
      // Stopped by its model (no reply left) within the budget, or out of turns.
      const first = agent(budget === n ? n : saved);
      const stopped = await SubAgent.run(first, { llm: scriptedLlm(s.replies.slice(0, saved)), context });
      const state = saveRun(stopped, first);
      for (const cache of ["token-prefix", "breakpoint"] as const) {
        // One resume at a time: two at once on a loaded machine, a replayed turn can outrun the
        // interpreter's 1-second default, and the resume is refused.
        const resumedCost = async (compress: boolean): Promise<number> => {
          const step = await SubAgent.resume(agent(budget), state, { llm: scriptedLlm(s.replies.slice(saved)), context, ...(compress ? { compressHistory: true, view: { cacheModel: cache } } : {}) });
          const meter = createMeter(MODELS[cache]);
          // Priced as sent: the saved run's prompts, then the resumed run's live ones, marked as the client marks them.
          for (const t of stopped.trace.turns) meter.add({ messages: t.messages, breakpoints: [...cacheMarks({ messages: t.messages })] });
          const settings = step.trace.settings!;
          for (const t of step.trace.turns.slice(saved)) {
            const view = compressedView({ system: step.trace.system, task: step.trace.task, turns: step.trace.turns.slice(0, t.number - 1), maxTurns: budget, toolsWithdrawn: settings.toolsWithdrawn, maxPrintChars: settings.maxPrintChars }, settings.view);
            expect(view.messages.map((m) => m.content), `prompt ${t.number} rebuilt from the trace`).toEqual(t.messages.map((m) => m.content));
            meter.add({ messages: t.messages, breakpoints: [...cacheMarks({ messages: t.messages, ...(view.breakpoints === undefined ? {} : { cacheBreakpoints: view.breakpoints }) })] });
          }
          return meter.totals.cost;
        };
        const full = await resumedCost(false);
        const compressed = await resumedCost(true);
        expect(compressed / full, `saved ${saved} turns, budget ${budget}, ${cache}`).toBeLessThanOrEqual(1);
      }
    }
  }, 60_000);

  // A run saved under a token-prefix client (OpenAI's, or one that names no cache) and resumed with
  // compression under an Anthropic one: the saved state records the layout its client got, and the
  // resume kept it. The growing summary message missed the breakpoint cache on every prompt: saved
  // compressed after 2 of 15 turns, 20,423 token-equivalents against 10,737 for full history resumed
  // alike (1.90x); saved under full history after 12, 1.011x; resumed without options, the replay
  // (laid out for the client) and the loop (not) disagreed and the resume was refused. The live
  // client's cache, kind and minimum, now lays out the resumed prompts: 0.905x, 0.986x.
  it("a run saved under a token-prefix client and resumed under a breakpoint one costs no more than full history resumed alike", async () => {
    const replies = [...Array.from({ length: 14 }, (_, k) => `Looking at the next rows.\n\n\`\`\`clojure\n(def v${k} (vec (take 3 (drop ${k * 4} data/rows))))\n(println (take 2 (drop ${k * 5} data/rows)))\n\`\`\``), "Done.\n\n```clojure\n(return 1)\n```"];
    const n = replies.length;
    const agent = SubAgent.create({ prompt: "Look through the rows.", maxTurns: n });
    // Anthropic's clients: cacheModel "breakpoint", and by its name claude-haiku-4's 4,096-token minimum.
    const clients = { scripted: { model: MODELS.breakpoint, name: undefined }, haiku: { model: MIN_4096.breakpoint, name: "anthropic:claude-haiku-4-5" } } as const;
    for (const [client, { model, name }] of Object.entries(clients)) {
      const anthropic = (rest: readonly string[]): Llm => ({ ...scriptedLlm(rest), ...(name === undefined ? {} : { name }), cacheModel: "breakpoint" });
      for (const [saved, compressFirst] of [[2, true], [12, false]] as const) {
        const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, saved)), context: { rows }, compressHistory: compressFirst });
        const state = saveRun(stopped, agent);
        const costs: number[] = [];
        // One at a time: five at once on a loaded machine ran a replayed turn past the interpreter's timeout.
        for (const options of [{ compressHistory: false }, { compressHistory: true }, {}, { history: "interpreter-summaries" }, { history: { name: "interpreter-summaries", options: { sampleChars: 80 } } }]) {
          const step = await SubAgent.resume(agent, state, { llm: anthropic(replies.slice(saved)), context: { rows }, ...options });
          const meter = createMeter(model);
          const settings = step.trace.settings!;
          // Priced as sent to the new provider (nothing of it cached yet), marked as the client marks them.
          for (const t of step.trace.turns.slice(saved)) {
            const view = compressedView({ system: step.trace.system, task: step.trace.task, turns: step.trace.turns.slice(0, t.number - 1), maxTurns: n, toolsWithdrawn: settings.toolsWithdrawn, maxPrintChars: settings.maxPrintChars }, settings.view);
            meter.add({ messages: t.messages, breakpoints: [...cacheMarks({ messages: t.messages, ...(view.breakpoints === undefined ? {} : { cacheBreakpoints: view.breakpoints }) })] });
          }
          costs.push(meter.totals.cost);
        }
        const [full, compressed, bare, named, spec] = costs;
        const what = `${client}, saved ${compressFirst ? "compressed" : "under full history"} after ${saved}`;
        expect(compressed / full, what).toBeLessThanOrEqual(1);
        // Resumed without options, a compressed run stays compressed, laid out alike.
        if (compressFirst) expect(bare, what).toBe(compressed);
        // So is one resumed with the strategy by name or spec: the loop, seeing only the replay's
        // llm, laid it out for no cache (token-prefix, 1,024) while the replay's checks built it for
        // the client's, and the resume was refused ("the system prompt differs from the saved run's").
        expect([named, spec], what).toEqual([compressed, compressed]);
      }
    }
  }, 60_000);

  // The generated traces with their own short system prompt (about 120 tokens), under the
  // providers' usual 1,024-token minimum: before the first turns were kept as full history shows
  // them, 1.23-1.34x full history under a token-prefix cache, 1.17x under breakpoints (seeds 11, 14).
  // A nested agent started in a live turn of a resumed run inherited the options the resume set to
  // rebuild the caller's own prompts: its strategy as a spec, which overrode the nested agent's own
  // compressHistory, and the caller's client's cache. A compressed nested agent with its own
  // claude-haiku-4 client (4,096-token minimum) under a gpt-4o or claude-sonnet-4 caller took the
  // caller's 1,024: 86,459 token-equivalents against 51,817 for its full history (1.67x), where the
  // same call in a run not resumed costs 48,782 (0.94x); one compressed by its own option under a
  // caller run without compression ran uncompressed (1.00x). Now it inherits what a run passes: 0.94x.
  it("a nested agent with its own client, started live in a resumed run, is laid out as in a run not resumed", async () => {
    const code = (body: string): string => "```clojure\n" + body + "\n```";
    const leafReplies = [...Array.from({ length: 25 }, (_, k) => code(`(def v${k} (mapv (fn [i] {:id i :sku (str "SKU-" (+ 1000 i)) :city data/city}) (range ${k * 4} ${k * 4 + 3})))\n(println (mapv (fn [i] {:id i :note (str "note " i)}) (range ${k * 5} ${k * 5 + 2})))`)), code("(return 1)")];
    const topReplies = [code("(def a 1)"), code("(def b 2)"), code('(return (tool/explore {:city "Oslo"}))')];
    // [the caller's client, whose compression setting: the caller's run option or the nested agent's own]
    const rows = [["openai:gpt-4o", undefined, "caller"], ["anthropic:claude-sonnet-4", "breakpoint", "caller"], ["openai:gpt-4o", undefined, "own"]] as const;
    for (const [name, cacheModel, setting] of rows) {
      const costs: Record<string, number> = {};
      for (const compressHistory of [true, false]) {
        for (const resumed of [false, true]) {
          const meter = createMeter(MIN_4096.breakpoint);
          const leafScript = scriptedLlm(leafReplies);
          const haiku: Llm = { name: "anthropic:claude-haiku-4-5", cacheModel: "breakpoint", complete: (request) => (meter.add({ messages: request.messages, breakpoints: [...cacheMarks(request)] }), leafScript.complete(request)) };
          const leaf = SubAgent.create({ prompt: "Explore the rows of {{city}}", output: z.number(), maxTurns: leafReplies.length, llm: haiku, ...(setting === "own" ? { compressHistory } : {}) });
          const top = SubAgent.create({ prompt: "Look at the rows.", tools: { explore: SubAgent.asTool(leaf) }, maxTurns: topReplies.length + 1 });
          const caller = (replies: readonly string[]): Llm => ({ ...scriptedLlm(replies), name, ...(cacheModel === undefined ? {} : { cacheModel }) });
          const options = setting === "caller" ? { compressHistory } : {};
          const step = resumed
            ? await SubAgent.resume(top, saveRun(await SubAgent.run(top, { llm: caller(topReplies.slice(0, 2)), ...options }), top), { llm: caller(topReplies.slice(2)) })
            : await SubAgent.run(top, { llm: caller(topReplies), ...options });
          expect(step.fail?.message).toBeUndefined();
          expect(step.value).toBe(1);
          costs[`${compressHistory ? "compressed" : "full"}${resumed ? ", resumed" : ""}`] = meter.totals.cost;
        }
      }
      const what = `${name}, compressed by the ${setting === "caller" ? "caller's" : "nested agent's own"} option`;
      expect(costs["compressed, resumed"] / costs["full, resumed"], what).toBeLessThan(1);
      expect(costs["compressed, resumed"], what).toBe(costs["compressed"]);
    }
  }, 60_000);

  it("generated traces whose system prompt is below the cache's minimum, under both cache models, within 3%", () => {
    expectGenerated("You write PTC-Lisp programs.\n".repeat(20));
  }, 60_000);
});
