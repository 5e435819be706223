// Token counting, shared prefixes, per-prompt statistics and the side-by-side comparison.
import { describe, expect, it } from "vitest";
import { renderComparison } from "../../src/history/compare.js";
import { compressedView } from "../../src/history/compressed.js";
import { fullView } from "../../src/history/full.js";
import { summaryLegend } from "../../src/history/legend.js";
import { sharedPrefix } from "../../src/compaction/measure.js";
import { promptCost } from "../../src/compaction/measure.js";
import { modelPrice } from "../../src/compaction/prices.js";
import { compressionReport, totalsOf } from "../../src/history/stats.js";
import { countTokens, messageTokens, promptTokens, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from "../../src/compaction/tokens.js";
import { defaultViewOptions, type ViewOptions } from "../../src/history/view.js";
import { buildTrace, type TurnSpec } from "./traces.js";

const on: ViewOptions = { ...defaultViewOptions, compressHistory: true };

const spec = (over: Partial<TurnSpec>): TurnSpec => ({ status: "ok", defs: [], prints: 2, tools: [], prose: 200, ...over });
const specs: TurnSpec[] = [
  spec({ defs: [{ name: "users", fn: false, value: [{ name: "Ann", id: 1 }, { name: "Bo", id: 2 }], doc: "Users" }], prints: 0 }),
  spec({ tools: [{ name: "search", args: { query: "x" }, result: [1, 2, 3] }], prints: 3 }),
  // A long reasoning before the failed program: summarizing it, once fixed, pays back in a few prompts.
  spec({ status: "error", prints: 0, prose: 1000 }),
  spec({ defs: [{ name: "users", fn: false, value: "redefined" }] }),
  spec({ prints: 1 }),
];
const trace = buildTrace(specs, 8);
const run = { maxTurns: 8, toolsWithdrawn: true };

describe("tokens", () => {
  it("counts with the o200k_base encoding, framing included", () => {
    expect(countTokens("hello world")).toBe(2);
    expect(countTokens("")).toBe(0);
    expect(messageTokens({ role: "user", content: "hello world" })).toBe(2 + TOKENS_PER_MESSAGE);
    expect(promptTokens([{ role: "user", content: "hello world" }])).toBe(2 + TOKENS_PER_MESSAGE + TOKENS_PER_REPLY);
  });

  it("counts special-token text as ordinary text", () => {
    expect(countTokens("a <|endoftext|> b")).toBeGreaterThan(3);
  });
});

describe("shared prefix", () => {
  const a = [
    { role: "system" as const, content: "sys" },
    { role: "user" as const, content: "task" },
    { role: "assistant" as const, content: "the same start, then one ending" },
  ];

  it("covers identical messages and the common start of the first differing one", () => {
    expect(sharedPrefix([], a)).toEqual({ messages: 0, chars: 0, tokens: 0 });
    const same = sharedPrefix(a, a);
    expect(same.messages).toBe(3);
    expect(same.tokens).toBe(promptTokens(a) - TOKENS_PER_REPLY);
    const b = [...a.slice(0, 2), { role: "assistant" as const, content: "the same start, then another ending" }];
    const p = sharedPrefix(a, b);
    expect(p.messages).toBe(2);
    expect(p.chars).toBe("systask".length + "the same start, then ".length);
    expect(p.tokens).toBeGreaterThan(messageTokens(a[0]) + messageTokens(a[1]));
    expect(p.tokens).toBeLessThan(promptTokens(b));
    const c = [...a.slice(0, 2), { role: "user" as const, content: a[2].content }];
    expect(sharedPrefix(a, c).tokens).toBe(messageTokens(a[0]) + messageTokens(a[1]));
  });
});

describe("compression usage", () => {
  const usage = compressionReport(trace, run, on);

  it("measures every prompt of the run against the full view", () => {
    expect(usage.prompts.map((p) => p.turn)).toEqual([1, 2, 3, 4, 5]);
    trace.turns.forEach((_, k) => {
      const input = { ...run, system: trace.system, task: trace.task, turns: trace.turns.slice(0, k) };
      expect(usage.prompts[k].viewTokens).toBe(promptTokens(compressedView(input, on).messages));
      expect(usage.prompts[k].fullTokens).toBe(promptTokens(fullView(input, on).messages));
      // But for the legend heading the first summary (the agent's system prompt gives the full
      // view a note of its own instead; this trace's has neither).
      expect(usage.prompts[k].viewTokens).toBeLessThanOrEqual(usage.prompts[k].fullTokens + countTokens(summaryLegend()));
    });
    expect(usage.prompts[4].turnsCompressed).toBe(3);
    expect(usage.prompts[4].turnsFull).toEqual([{ turn: 3, reason: "error" }]);
    // users (turn 1, which printed nothing) is redefined in turn 4: dropping its stale line
    // would not pay back in the 3 prompts left, so it stays and the new line says (redefined).
    // A 200-turn budget changes nothing: a rewrite counts on 8 prompts at most, not on a budget
    // the run may never use (before, with 196 prompts counted, the line went).
    expect(usage.prompts[4].definitionsSuperseded).toBe(0);
    const long = compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, 4), maxTurns: 200, toolsWithdrawn: true }, on);
    expect(long.stats.definitionsSuperseded).toBe(0);
    const sample = '{:name "Ann" :id 1}';
    expect(compressedView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, 4), maxTurns: 8, toolsWithdrawn: true }, on).messages.map((m) => m.content).join("\n")).toContain(sample);
    expect(long.messages.map((m) => m.content).join("\n")).toContain(sample);
  });

  it("finds the full view append-only: each prompt caches all of the previous one", () => {
    for (let k = 1; k < usage.prompts.length; k++) expect(usage.prompts[k].fullPrefixTokens).toBe(usage.prompts[k - 1].fullTokens - TOKENS_PER_REPLY);
    expect(usage.prompts[0].prefixTokens).toBe(0);
    for (const p of usage.prompts) expect(p.prefixTokens).toBeLessThanOrEqual(p.viewTokens);
  });

  it("totals tokens, peaks and cached cost", () => {
    const t = usage.totals;
    expect(t.prompts).toBe(5);
    expect(t.fullTokens).toBe(usage.prompts.reduce((s, p) => s + p.fullTokens, 0));
    expect(t.viewPeak).toBe(Math.max(...usage.prompts.map((p) => p.viewTokens)));
    // Dollars under the one measure's price model: each prompt's input with its shared prefix served by the cache.
    const price = modelPrice(undefined);
    expect(t.viewCachedCost).toBeCloseTo(usage.prompts.reduce((s, p) => s + promptCost(price, p.viewTokens, p.prefixTokens), 0), 12);
    expect(t.saved).toBeCloseTo(1 - t.viewTokens / t.fullTokens);
    // OpenAI-style: nothing below 1,024 shared tokens, then whole 128-token steps at the read price.
    const gpt = modelPrice("gpt-4o");
    expect(promptCost(gpt, 2000, 1000)).toBeCloseTo((2000 * 2.5) / 1e6, 12);
    expect(promptCost(gpt, 2000, 1300)).toBeCloseTo(((2000 - 1280) * 2.5 + 1280 * 1.25) / 1e6, 12);
    expect(totalsOf([], []).saved).toBe(0);
    expect(usage.enabled).toBe(true);
  });

  it("reports the full view's figures when compression is off", () => {
    const off = compressionReport(trace, run, defaultViewOptions);
    for (const p of off.prompts) {
      expect(p.viewTokens).toBe(p.fullTokens);
      expect(p.turnsCompressed).toBe(0);
    }
  });
});

describe("side-by-side comparison", () => {
  it("shows both prompts turn by turn, then the figures of every prompt", () => {
    const text = renderComparison(trace, run, { ...on, errorWindowTurns: 0 }, { width: 120 });
    expect(text).toMatch(/^Prompt for turn 6: full \d+ tokens, compressed \d+ tokens \(\d+% fewer\)/);
    expect(text).toContain("-- system: ");
    expect(text).toContain("same in both");
    expect(text).toContain("-- assistant (turn 1): full ");
    expect(text).toMatch(/\| ; Defined: users \(redefined\) = "redefined"\n/);
    expect(text).toContain("kept full: error");
    // Turns 4 and 5 are summaries in one message: the turn line between them is left out.
    expect(text).toMatch(/-- user \(turn 4\): full \d+ tokens \| compressed 0 tokens -+\n.*\| \(turn line left out between summaries\)/);
    expect(text).toContain("Compression per prompt");
    expect(text).toMatch(/\n\s*total\s+\d+\s+\d+/);
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(120);
    // With the default window the error (two turns back, fixed since) is summarized once that
    // pays: in a 30-turn budget, not in this run's 8 (it stays as written, kept for cost).
    expect(renderComparison(trace, { ...run, maxTurns: 30 }, on, { width: 120 })).toContain("| ; (failed program omitted)");
    expect(renderComparison(trace, run, on, { width: 120 })).toContain("kept full: cost");
  });

  // Lines were wrapped and clipped by UTF-16 code unit: a cut inside an emoji printed half of its
  // surrogate pair, which a terminal shows as a replacement character (and JSON output rejects).
  it("never cuts a line inside an emoji", () => {
    const emoji = "😀".repeat(150);
    const turns = [{ ...trace.turns[0], reply: `x${emoji}` }, ...trace.turns.slice(1)];
    const text = renderComparison({ ...trace, task: `y${emoji}`, turns }, run, on, { width: 81 });
    expect(text).toContain("😀😀");
    expect(text).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });

  // A terminal gives a CJK character or an emoji two columns: counted as one, each row of such
  // text filled twice its share and pushed the gutter and the other column off to the right.
  it("keeps the columns aligned with double-width text (CJK, emoji) and combining marks", () => {
    const columns = (line: string) => [...line].reduce((n, c) => n + (/[\u4E00-\u9FFF]|\p{Emoji_Presentation}/u.test(c) ? 2 : /\p{Mn}/u.test(c) ? 0 : 1), 0);
    const wide = `x${"漢字".repeat(60)}😀😀${"e\u0301".repeat(70)}`;
    const turns = [{ ...trace.turns[0], reply: `${wide}\n(def a 1)` }, ...trace.turns.slice(1)];
    const width = 100;
    const text = renderComparison({ ...trace, task: `Task ${"表".repeat(80)}`, turns }, run, on, { width });
    const lines = text.split("\n");
    for (const line of lines) expect(columns(line)).toBeLessThanOrEqual(width);
    const col = Math.floor((width - 3) / 2);
    const from = lines.findIndex((l) => l.startsWith("-- assistant (turn 1)"));
    const rows = lines.slice(from + 1, lines.indexOf("", from));
    expect(rows.length).toBeGreaterThan(3);
    for (const row of rows) expect(columns(row.slice(0, row.indexOf(" | ")))).toBe(col);
    expect(rows.map((r) => r.slice(0, r.indexOf(" | ")).trimEnd()).join("")).toBe(`${wide}(def a 1)`);
    expect(text).toContain(`Task ${"表".repeat(46)}...`);
  });

  it("shows the prompt of a chosen turn", () => {
    const text = renderComparison({ ...trace, settings: { ...run, maxPrintChars: 4000, view: on } }, undefined, undefined, { turn: 2 });
    expect(text).toMatch(/^Prompt for turn 2:/);
    expect(text).not.toContain("(turn 2)");
  });
});
