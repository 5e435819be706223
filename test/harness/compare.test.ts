// The harness: transcripts read with line-numbered errors, probe matching as the corpora README
// defines it, per-request metrics checked against hand-built conversations, and `ptc compare`.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { priceModel } from "../../src/compaction/cost.js";
import { promptTokens } from "../../src/compaction/tokens.js";
import { runCli } from "../../src/cli/commands.js";
import { compareStrategies, renderTable } from "../../src/harness/compare.js";
import { measure, probePattern } from "../../src/harness/measure.js";
import { parseTranscripts, type Transcript } from "../../src/harness/transcript.js";

const price = priceModel(2, 8, "openai");

// The name is said once, early, and needed at the last reply.
const booking: Transcript = {
  id: "booking",
  messages: [
    { role: "system", content: "You book tables." },
    { role: "user", content: "Book a table for tonight." },
    { role: "assistant", content: "Under which name?" },
    { role: "user", content: "Zed." },
    { role: "assistant", content: "For how many people?" },
    { role: "user", content: "4 of us." },
    { role: "assistant", content: "Booked for Zed, 4 people." },
  ],
  probes: [{ fact: "the booking name", value: "Zed", introduced_at: 3, needed_at: [6] }],
};

describe("probe matching", () => {
  it("matches a whole value, case-insensitively, never inside a longer token", () => {
    const re = probePattern("2");
    expect(re.test("for 2 people")).toBe(true);
    expect(re.test("room 12")).toBe(false);
    expect(re.test("a2b")).toBe(false);
    expect(probePattern("zed").test("ZED.")).toBe(true);
    expect(probePattern("a.b").test("axb")).toBe(false);
  });
});

describe("measure", () => {
  it("sends everything under full: the prompts' tokens, no cache break, every probe kept", async () => {
    const m = await measure(booking, "full", { price });
    const prompts = [2, 4, 6].map((j) => promptTokens(booking.messages.slice(0, j)));
    expect(m.requests).toBe(3);
    expect(m.inputTokens).toBe(prompts[0] + prompts[1] + prompts[2]);
    expect(m.peakPrompt).toBe(prompts[2]);
    expect(m.rewrites).toBe(0);
    expect([m.probesNeeded, m.probesKept]).toEqual([1, 1]);
    expect(m.llmCalls).toBe(0);
  });

  it("a one-turn window drops the name before it is needed, and breaks the cache", async () => {
    const m = await measure(booking, { name: "sliding-window", options: { turns: 1 } }, { price });
    const full = await measure(booking, "full", { price });
    expect(m.inputTokens).toBeLessThan(full.inputTokens);
    expect([m.probesNeeded, m.probesKept]).toEqual([1, 0]);
    expect(m.rewrites).toBeGreaterThan(0);
  });
});

describe("compareStrategies", () => {
  it("always measures full as the baseline, and reports reduction, cost ratio and retention against it", async () => {
    const r = await compareStrategies([booking, booking], [{ name: "sliding-window", options: { turns: 1 } }], { price });
    expect(r.rows.map((row) => row.strategy)).toEqual(["full", "sliding-window:turns=1"]);
    const [full, window] = r.rows;
    expect(full.reduction).toBe(0);
    expect(full.retention).toBe(1);
    expect(window.reduction).toBeCloseTo(1 - window.totals.inputTokens / full.totals.inputTokens, 10);
    expect(window.retention).toBe(0);
    expect(window.costRatio).toBeCloseTo(window.totals.cost / full.totals.cost, 10);
    expect(renderTable(r)).toMatch(/^2 transcripts, 14 messages\nstrategy +input tokens/);
    // Per transcript too, adding up to the totals.
    expect(window.perTranscript.map((p) => p.id)).toEqual(["booking", "booking"]);
    expect(window.perTranscript[0].metrics.inputTokens * 2).toBe(window.totals.inputTokens);
  });
});

describe("transcripts", () => {
  it("reports a bad line with its number and what is wrong", () => {
    const good = JSON.stringify(booking);
    expect(() => parseTranscripts(`${good}\n{oops`, "t.jsonl")).toThrow(/^t\.jsonl:2: not valid JSON/);
    expect(() => parseTranscripts(`${good}\n\n${JSON.stringify({ id: "x", messages: [{ role: "robot", content: "hi" }] })}`, "t.jsonl")).toThrow(/^t\.jsonl:3: at messages\.0\.role/);
    expect(parseTranscripts(`${good}\n${good}\n${good}`, "t.jsonl", 2)).toHaveLength(2);
  });
});

describe("ptc compare", () => {
  const dir = mkdtempSync(join(tmpdir(), "ptc-compare-"));
  const file = join(dir, "booking.jsonl");
  writeFileSync(file, `${JSON.stringify(booking)}\n`);
  const cli = async (args: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await runCli(["compare", ...args], { stdin: Readable.from([""]), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    return { code, stdout, stderr };
  };

  it("scores the goal detector on labelled transcripts", async () => {
    const labelled = join(dir, "goals.jsonl");
    writeFileSync(labelled, `${JSON.stringify({ ...booking, goals: [{ start: 1, label: "booking" }, { start: 5, label: "party" }] })}\n`);
    const r = await cli([labelled, "--strategy", "full"]);
    expect(r.stdout).toMatch(/\ngoal boundaries, heuristic detector: precision \d+\.\d%, recall \d+\.\d% \(\d+ found, \d+ false, \d+ missed\)\n$/);
  });

  it("prints the table and writes the JSON report", async () => {
    const json = join(dir, "report.json");
    const r = await cli([file, "--strategy", "sliding-window:turns=1", "--json", json]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^1 transcripts, 7 messages/);
    expect(r.stdout).toMatch(/\nsliding-window:turns=1 +\d/);
    const report = JSON.parse(readFileSync(json, "utf8")) as { rows: Array<{ strategy: string; options: unknown; retention: number }> };
    expect(report.rows[1]).toMatchObject({ strategy: "sliding-window:turns=1", options: { turns: 1 }, retention: 0 });
  });

  it("with --caches, prices every strategy under the three cache models and says which never fired", async () => {
    const json = join(dir, "caches.json");
    const r = await cli([file, "--strategy", "sliding-window:turns=1", "--strategy", "observation-masking", "--caches", "--json", json]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\nCost against full under each cache model/);
    expect(r.stdout).toMatch(/cost token-prefix +cost breakpoint +cost none/);
    expect(r.stdout).toMatch(/\nobservation-masking +[\d,]+ +0\.0% +1\.000x +1\.000x +1\.000x .* never\n/);
    const report = JSON.parse(readFileSync(json, "utf8")) as { caches: { models: string[]; rows: Array<{ strategy: string; fired: number }> } };
    expect(report.caches.models).toEqual(["token-prefix", "breakpoint", "none"]);
    expect(report.caches.rows.map((row) => [row.strategy, row.fired])).toEqual([["full", 0], ["sliding-window:turns=1", 1], ["observation-masking", 0]]);
  });

  it("writes a self-contained HTML report with its charts", async () => {
    const html = join(dir, "report.html");
    const r = await cli([file, "--strategy", "sliding-window:turns=1", "--html", html]);
    expect(r.code).toBe(0);
    const page = readFileSync(html, "utf8");
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain("Content-Security-Policy");
    // Three charts: bars per strategy, cost against retention, tokens per request with cache breaks.
    expect(page.match(/<svg /g)).toHaveLength(3);
    expect(page.match(/<rect /g)).toHaveLength(2);
    expect(page).toContain("sliding-window:turns=1: cost");
    expect(page).toContain("<polyline");
    expect(page).toMatch(/sliding-window:turns=1: the cache breaks at request \d/);
    // Nothing is loaded from anywhere.
    expect(page).not.toMatch(/(src|href)=|https?:/);
  });

  it("refuses a bad strategy, limit or file with exit 2 and a reason", async () => {
    expect(await cli([file, "--strategy", "nope"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown strategy "nope"/) });
    expect(await cli([file, "--strategy", "sliding-window:turns=0"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/invalid options for strategy "sliding-window"/) });
    expect(await cli([file, "--limit", "0"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--limit takes a whole number/) });
    expect(await cli([join(dir, "absent.jsonl")])).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot read .*absent\.jsonl \(ENOENT\)/) });
    expect((await cli([])).code).toBe(2);
  });
});

describe("goal detector scoring", () => {
  it("counts found, false and missed boundaries against the labels", async () => {
    const { scoreDetector } = await import("../../src/harness/goals.js");
    const chat: Transcript = {
      id: "g",
      messages: [
        { role: "system", content: "s" },
        { role: "user", content: "hotel" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "taxi" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "more taxi" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "train" },
      ],
      goals: [
        { start: 1, label: "hotel" },
        { start: 3, label: "taxi" },
        { start: 7, label: "train" },
      ],
    };
    // Says "new goal" at messages 3 and 5: 3 is right, 5 is wrong, 7 is missed.
    const said = new Set([3, 5]);
    const detector = { name: "fixed", usesLlm: false, isNewGoal: async (_m: unknown, i: number) => ({ newGoal: said.has(i), llmCalls: 0, inputTokens: 0, outputTokens: 0 }) };
    expect(await scoreDetector(detector, [chat])).toEqual({ truePositives: 1, falsePositives: 1, falseNegatives: 1, precision: 0.5, recall: 0.5 });
  });
});
