// What the loop records about its prompts: the settings they were built with (so a stored
// trace rebuilds either view by itself) and `step.usage.compression`'s per-prompt figures.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { runFromJson, runToJson } from "../../src/agent/saved-run.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import type { RunTrace, Turn } from "../../src/trace/trace.js";
import { compressedView } from "../../src/history/compressed.js";
import { fullView } from "../../src/history/full.js";
import { sharedPrefix } from "../../src/compaction/measure.js";
import { compressionReport } from "../../src/history/stats.js";
import { renderComparison } from "../../src/history/compare.js";
import { promptTokens } from "../../src/compaction/tokens.js";
import { defaultViewOptions } from "../../src/history/view.js";

const clj = (prose: string, code: string): string => `${prose}\n\n\`\`\`clojure\n${code}\n\`\`\``;

const tools = {
  lookup: tool({
    description: "Stock level of an item.",
    input: z.object({ item: z.string() }),
    run: ({ item }) => ({ item, stock: item.length * 3, warehouse: item < "m" ? "north" : "south" }),
  }),
};

const agent = SubAgent.create({ prompt: "Which items are low on stock?", tools, output: z.array(z.string()), maxTurns: 8 });

const replies = [
  clj("First the items.", `(def items "The items to check" (mapv :name data/items))\n(println (count items) "items:" items)`),
  clj("Look them all up at once.", `(def stock "Stock per item" (into {} (pmap (fn [i] [i (:stock (tool/lookup {:item i}))]) items)))\n(println stock)`),
  clj("Oops, a typo.", `(println (count stok))`),
  clj("Which are low?", `(def low "Items under 15 units" (sort (keep (fn [[i n]] (when (< n 15) i)) stock)))\n(println "low:" low)`),
  clj("Redefine with a higher bar.", `(def low "Items under 20 units" (sort (keep (fn [[i n]] (when (< n 20) i)) stock)))\n(println "low:" low)`),
  clj("Done.", `(return (vec low))`),
];

const items = ["ax", "bolt", "cable", "drill", "nut", "saw", "screw", "tape", "vice", "wrench", "clamp", "file"].map((name) => ({ name }));

async function run(options: Parameters<typeof SubAgent.run>[1]) {
  const step = await SubAgent.run(agent, { llm: scriptedLlm(replies), context: { items }, ...options });
  expect(step.ok, JSON.stringify(step.fail)).toBe(true);
  return step;
}

describe("trace settings", () => {
  it("records what the prompts were built with; the stored trace rebuilds every prompt sent", async () => {
    const step = await run({ compressHistory: true, printlnHistoryLimit: 2, maxPrintChars: 500, view: { sampleItems: 2, strictPrefix: true, paybackPrompts: 0, errorContextTurns: undefined } });
    const settings = step.trace.settings;
    expect(settings).toEqual({ maxTurns: 8, toolsWithdrawn: true, maxPrintChars: 500, model: "scripted", view: { ...defaultViewOptions, compressHistory: true, printlnHistoryLimit: 2, sampleItems: 2, strictPrefix: true, paybackPrompts: 0 }, strategy: { name: "interpreter-summaries", options: { printlnHistoryLimit: 2, sampleItems: 2, strictPrefix: true, paybackPrompts: 0 } } });
    const stored: RunTrace = runFromJson(runToJson(step)).trace;
    expect(stored.settings).toEqual(settings);
    const s = stored.settings as NonNullable<RunTrace["settings"]>;
    for (const turn of stored.turns) {
      const input = { system: stored.system, task: stored.task, turns: stored.turns.slice(0, turn.number - 1), maxTurns: s.maxTurns, toolsWithdrawn: s.toolsWithdrawn, maxPrintChars: s.maxPrintChars };
      expect(compressedView(input, s.view).messages).toEqual(turn.messages);
    }
    expect(step.turns.some((t) => t.view !== undefined && t.view.turnsCompressed > 0)).toBe(true);
  });

  it("records them with compression off too: the full view is rebuilt", async () => {
    const step = await run({});
    const s = step.trace.settings as NonNullable<RunTrace["settings"]>;
    expect(s.view.compressHistory).toBe(false);
    for (const turn of step.turns) {
      const input = { system: step.trace.system, task: step.trace.task, turns: step.turns.slice(0, turn.number - 1), maxTurns: s.maxTurns, toolsWithdrawn: s.toolsWithdrawn, maxPrintChars: s.maxPrintChars };
      expect(fullView(input, s.view).messages).toEqual(turn.messages);
    }
  });
});

// The records hold hidden values' stand-ins unshown (tool arguments and results, a failed turn's
// feedback listing its calls); the loop showed them only in what it sent. Rebuilt from the trace,
// both views held `"\uE000hidden string ...\uE001"` where the prompt had `<hidden string ...>`:
// compressionReport's tokens differed from step.usage.compression (2,684 against 2,676 on turn 2),
// and `ptc trace show --compressed` printed private-use characters.
describe("a run with hidden context, rebuilt from its trace", () => {
  const echo = tool({ description: "Echoes its argument.", input: z.object({ v: z.string() }), run: ({ v }) => ({ got: v, n: 1 }) });
  const prose = "I will look at the data carefully and decide what to do next with the results that come back. ".repeat(3);
  const programs = ['(def r (tool/echo {:v (str "Bearer " data/_tok)}))\n(def r2 (tool/echo {:v data/_tok}))\n(println "done")', '(tool/echo {:v data/_tok})\n(nth [] 3)', ...[1, 2, 3, 4, 5].map((k) => `(println ${k})`), "(return 1)"];
  it.each([true, false])("sends what the views rebuild, and the report's figures are the run's (compressed: %s)", async (compressHistory) => {
    const hidden = SubAgent.create({ prompt: "Echo the token.", tools: { echo }, maxTurns: programs.length });
    const step = await SubAgent.run(hidden, { llm: scriptedLlm(programs.map((p) => clj(prose, p))), context: { _tok: "K7Z2Q9-B3M8X4-W5R2" }, compressHistory });
    expect(step.ok).toBe(true);
    const s = step.trace.settings as NonNullable<RunTrace["settings"]>;
    for (const turn of step.trace.turns) {
      const input = { system: step.trace.system, task: step.trace.task, turns: step.trace.turns.slice(0, turn.number - 1), maxTurns: s.maxTurns, toolsWithdrawn: s.toolsWithdrawn, maxPrintChars: s.maxPrintChars };
      expect(compressedView(input, s.view).messages).toEqual(turn.messages);
    }
    expect(step.trace.turns.some((t) => t.messages.some((m) => /<hidden string (derived )?from data\/_tok>/.test(m.content)))).toBe(true);
    if (compressHistory) {
      expect(step.trace.turns.at(-1)?.view?.turnsCompressed).toBeGreaterThan(0);
      expect(compressionReport(step.trace, s, s.view, s.model).prompts).toEqual(step.usage.compression.perTurn);
    }
    expect(renderComparison(step.trace)).not.toMatch(/[\uE000\uE001]/);
  });
});

describe("step.usage.compression", () => {
  it("reports per prompt the view's stats, both views' tokens and the prefix shared with the previous prompt", async () => {
    const step = await run({ compressHistory: true });
    const usage = step.usage.compression;
    const s = step.trace.settings as NonNullable<RunTrace["settings"]>;
    expect(usage.perTurn).toHaveLength(step.turns.length);
    step.turns.forEach((turn, i) => {
      const p = usage.perTurn[i];
      const input = { system: step.trace.system, task: step.trace.task, turns: step.turns.slice(0, i), maxTurns: s.maxTurns, toolsWithdrawn: s.toolsWithdrawn, maxPrintChars: s.maxPrintChars };
      expect(p).toMatchObject({ ...turn.view, turn: turn.number });
      expect(p.viewTokens).toBe(promptTokens(turn.messages));
      expect(p.fullTokens).toBe(promptTokens(fullView(input, s.view).messages));
      expect(p.prefixTokens).toBe(i === 0 ? 0 : sharedPrefix(step.turns[i - 1].messages, turn.messages).tokens);
      if (i > 0) expect(p.fullPrefixTokens).toBe(sharedPrefix(fullView({ ...input, turns: step.turns.slice(0, i - 1) }, s.view).messages, fullView(input, s.view).messages).tokens);
    });
    const last = usage.perTurn.at(-1)!;
    // Each view sends its own system prompt (the full view's explains `Stored:`; the compressed
    // view's legend heads its first summary instead): whole prompts compare.
    const after = (messages: Parameters<typeof promptTokens>[0]) => promptTokens(messages);
    const fullAt = (i: number) => fullView({ system: step.trace.system, task: step.trace.task, turns: step.turns.slice(0, i), maxTurns: s.maxTurns, toolsWithdrawn: s.toolsWithdrawn, maxPrintChars: s.maxPrintChars }, s.view).messages;
    expect(after((step.turns.at(-1) as Turn).messages)).toBeLessThan(after(fullAt(step.turns.length - 1)));
    // The error (turn 3) is three turns back and was fixed since, but the few prompts left in
    // the budget cannot repay rewriting the cached prompt from it: it stays, kept for cost;
    // turn 2 keeps its short program; turn 5 was summarized as soon as it was done.
    expect(last.turnsFull).toEqual([
      { turn: 2, reason: "short" },
      { turn: 3, reason: "cost" },
    ]);
    // While the error is being fixed it stays in full; the turn before it did not define the
    // function the error happened in, so it stays summarized (or short).
    expect(usage.perTurn[4].turnsFull).toEqual([
      { turn: 2, reason: "short" },
      { turn: 3, reason: "error" },
    ]);
    expect(usage.tokens).toEqual(compressionReport(step.trace, s, s.view, s.model).totals);
    const full = step.turns.reduce((sum, _, i) => sum + after(fullAt(i)), 0);
    expect(step.turns.reduce((sum, t) => sum + after(t.messages), 0)).toBeLessThan(full);
    // The same figures a trace viewer rebuilds from the stored trace.
    expect(compressionReport(step.trace, s, s.view).prompts).toEqual(usage.perTurn);
  });

  // The cost figures are the one meter's, prompt after prompt: under a breakpoint cache (Anthropic)
  // a prompt is served only up to an entry an earlier prompt wrote, and writes bill at 1.25x.
  // Priced from each prompt's shared prefix alone, every shared prefix was served and nothing
  // written: 24 turns of wide rows on claude-sonnet-4 reported compressed 12% below full history
  // where the run was billed 8% below it.
  it("prices both views' prompts as the run's model bills them, breakpoint caches included", async () => {
    const orders = Array.from({ length: 200 }, (_, i) => ({ id: i + 1, customer: `customer-${1000 + ((i * 7919) % 9000)}`, city: ["Lisbon", "Oslo", "Quito"][i % 3], status: ["open", "held"][i % 2], total: ((i * 3571) % 90000) / 100 }));
    const pages = Array.from({ length: 23 }, (_, k) => clj(`Page ${k + 1}.`, `(println (take 8 (drop ${k * 8} data/orders)))`));
    const wide = SubAgent.create({ prompt: "Page through the orders, then count them.", maxTurns: 24 });
    const billed = async (compressHistory: boolean) => {
      const llm = { ...scriptedLlm([...pages, clj("Done.", "(return (count data/orders))")], { name: "claude-sonnet-4" }), cacheModel: "breakpoint" as const };
      const step = await SubAgent.run(wide, { llm, context: { orders }, compressHistory });
      expect(step.ok).toBe(true);
      // Input only: the reply's output tokens at the output price come off each turn's cost.
      return { step, input: step.usage.perTurn.reduce((sum, t) => sum + (t.cost as number) - (t.outputTokens * 15) / 1e6, 0) };
    };
    const compressed = await billed(true);
    const full = await billed(false);
    const tokens = compressed.step.usage.compression.tokens as NonNullable<typeof compressed.step.usage.compression.tokens>;
    expect(tokens.viewCachedCost).toBeCloseTo(compressed.input, 9);
    expect(tokens.fullCachedCost).toBeCloseTo(full.input, 9);
    // A stored trace rebuilds the same figures.
    const s = compressed.step.trace.settings as NonNullable<RunTrace["settings"]>;
    expect(compressionReport(compressed.step.trace, s, s.view, s.model).totals).toEqual(tokens);
  });

  it("measures nothing with compression off", async () => {
    const step = await run({});
    expect(step.usage.compression).toMatchObject({ enabled: false, perTurn: [], tokens: null });
  });
});
