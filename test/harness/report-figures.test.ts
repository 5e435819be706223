// Report figures never round a difference away: a cost ratio of 0.9995 (a saving) or 1.0004 (a
// loss) printed as "1.000x", or 2,499 of 2,500 facts kept printed as "100.0%", would tell a reader
// that a strategy changed nothing where it did.
import { describe, expect, it } from "vitest";
import { costRatioText, dollarsText, percentText, ratioText } from "../../src/compaction/figures.js";
import { compareStrategies, renderTable, type CompareReport } from "../../src/harness/compare.js";
import { renderCacheTable, type CacheReport } from "../../src/harness/cache-models.js";
import { renderHtml } from "../../src/harness/html.js";
import type { Transcript } from "../../src/harness/transcript.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { readViewerInput } from "../../src/viewer/input.js";

const chat: Transcript = {
  id: "chat",
  messages: [
    { role: "system", content: "You help." },
    { role: "user", content: "Book a table for Zed." },
    { role: "assistant", content: "For how many?" },
    { role: "user", content: "4." },
    { role: "assistant", content: "Booked." },
  ],
};

describe("report figures", () => {
  it.each([
    [0.9995, "0.9995x"],
    [1.0004, "1.0004x"],
    [0.99996, "0.99996x"],
    [1, "1.000x"],
    [0.962, "0.962x"],
    [1.2346, "1.235x"],
  ])("a cost ratio of %s reads %s, on its own side of 1", (x, text) => {
    expect(ratioText(x)).toBe(text);
  });

  it.each([
    [2499 / 2500, "99.96%"],
    [0.00004, "0.004%"],
    [-0.00004, "-0.004%"],
    [1, "100.0%"],
    [0, "0.0%"],
    [0.4231, "42.3%"],
  ])("a share of %s reads %s, never rounded onto 0% or 100%", (x, text) => {
    expect(percentText(x)).toBe(text);
  });

  it.each([
    [0.00004, "$0.00004"],
    [0.000000004, "$0.000000004"],
    [0, "$0.0000"],
    [0.01234, "$0.0123"],
    [1.5, "$1.5000"],
  ])("a cost of %s reads %s, never rounded onto $0", (x, text) => {
    expect(dollarsText(x)).toBe(text);
  });

  it("the table, the HTML page and the cache table show a 0.9995 saving and a 1.0004 loss as such", async () => {
    const r: CompareReport = await compareStrategies([chat], ["sliding-window"], { models: ["gpt-4o"] });
    const row = r.rows[1];
    row.costRatios = [0.9995];
    row.reduction = 0.00004;
    r.rows[2].costRatios = [1.0004];
    r.rows[2].retention = 2499 / 2500;
    r.rows[2].triggered = true;
    const table = renderTable(r);
    expect(table).toMatch(/\nsliding-window .* 0\.004% .* 0\.9995x /);
    expect(table).toMatch(/\nbaseline:system\+last .* 1\.0004x .* 99\.96% /);
    expect(table).not.toMatch(/ 1\.000x .* 99\.96%/);
    const html = renderHtml(r);
    expect(html).toContain("<td>0.9995x</td>");
    expect(html).toContain("<td>1.0004x</td>");
    expect(html).toContain("<td>99.96%</td>");
    const caches: CacheReport = {
      transcripts: 1,
      models: ["token-prefix"],
      rows: [{ strategy: "observation-masking", inputTokens: 10, reduction: 0.00004, cost: { "token-prefix": 1 }, costRatio: { "token-prefix": 1.0004 }, retention: 2499 / 2500, farRetention: null, farNeeded: 0, llmCalls: 0, fired: 1, failed: 0, failures: [] }],
    };
    expect(renderCacheTable(caches)).toMatch(/observation-masking .* 0\.004% .* 1\.0004x .* 99\.96%/);
  });
});

describe("a conversation model that costs nothing", () => {
  it("a strategy that paid for summary calls shows its cost, not 1.000x against full's $0", async () => {
    const messages: Transcript["messages"] = [{ role: "system", content: "You help." }];
    for (let i = 0; i < 8; i++) messages.push({ role: "user", content: `Question ${i} about booking ${1000 + i}, please answer fully.` }, { role: "assistant", content: `Answer ${i}: booking ${1000 + i} is confirmed for ${i + 2} people.` });
    const llm = scriptedLlm(Array.from({ length: 50 }, () => ({ content: "summary", usage: { inputTokens: 5000, outputTokens: 400, cachedTokens: 0 } })));
    const r = await compareStrategies([{ id: "c", messages }], [{ name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } }], {
      models: ["free"],
      prices: { free: { input: 0, output: 0, cache: { kind: "none" } } },
      llm,
      summaryModel: "gpt-4o-mini",
    });
    const [full, rolling] = r.rows;
    expect(full.totals.cost).toBe(0);
    expect(rolling.totals.llmCalls).toBeGreaterThan(0);
    expect(rolling.totals.cost).toBeGreaterThan(0);
    // No ratio says "paid something against nothing"; two free rows cost the same.
    expect([full.costRatio, rolling.costRatio, rolling.costRatios[0], r.rows[2].costRatio]).toEqual([1, null, null, 1]);
    const paid = costRatioText(null, rolling.totals.cost);
    expect(paid).toBe(`${dollarsText(rolling.totals.cost)} vs $0`);
    expect(renderTable(r)).toMatch(new RegExp(`\\nrolling-summary\\S* .* ${paid.replace(/[$.]/g, "\\$&")} `));
    expect(renderTable(r)).not.toMatch(/\nrolling-summary\S* .* 1\.000x /);
    expect(renderHtml(r)).toContain(`<td>${paid}</td>`);
    // The viewer reads such a report.
    expect(readViewerInput("report.json", JSON.stringify(r))).toBeDefined();
  });
});

describe("the goal experiment's table", () => {
  it("shows a goal lost in 2,500 as lost: 99.96% success and a 0.04 pt drop, not 100.0% and 0.0 pt", async () => {
    const { renderExperiment } = await import("../../src/harness/experiment.js");
    const text = renderExperiment([
      { strategy: "full", conversations: 1, reduction: 0, gsr: 1, accuracyDrop: 0, efficiency: 0, acted: 0 },
      { strategy: "rolling-summary", conversations: 1, reduction: 0.3, gsr: 2499 / 2500, accuracyDrop: 1 / 2500, efficiency: 29.99, acted: 1 },
    ]);
    expect(text).toMatch(/\nrolling-summary .* 30\.0% +99\.96% +0\.04 pt /);
  });
});
