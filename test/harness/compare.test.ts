// The harness: transcripts read with line-numbered errors, probe matching as the corpora README
// defines it, per-request metrics checked against hand-built conversations, and `ptc compare`.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-openai.js";
import { localServer } from "../support/local-server.js";
import { openaiLlm } from "../../src/llm/openai.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { modelPrice } from "../../src/compaction/prices.js";
import { promptTokens } from "../../src/compaction/tokens.js";
import { runCli } from "../../src/cli/commands.js";
import { MAX_INPUT_BYTES } from "../../src/viewer/input.js";
import { compareStrategies, probeNeedsText, renderTable } from "../../src/harness/compare.js";
import { defaultStrategies } from "../../src/history/registry.js";
import { pureStrategy } from "../../src/compaction/strategies/pure.js";
import { z } from "zod";
import { renderHtml } from "../../src/harness/html.js";
import { compareUnderCaches } from "../../src/harness/cache-models.js";
import { percentText } from "../../src/compaction/figures.js";
import type { Llm } from "../../src/llm/types.js";
import { measure, probePattern } from "../../src/harness/measure.js";
import { messageText } from "../../src/llm/messages.js";
import { readViewerInput } from "../../src/viewer/input.js";
import { compareReportSchema, projectReport } from "../../src/viewer/report.js";
import { loadTranscripts, parseTranscripts, TranscriptError, type Transcript } from "../../src/harness/transcript.js";
import { saveRun } from "../../src/agent/resume.js";
import { runStateToJson } from "../../src/trace/run-state.js";
import { runToJson } from "../../src/agent/saved-run.js";
import { traceToJson } from "../../src/trace/serialize.js";
import { findExample, type Example } from "../../examples/index.js";
import { exampleAgent, runExample } from "../../examples/run.js";
import { withFragile } from "../support/strategies.js";

const models = ["gpt-4o"];

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
    const m = await measure(booking, "full", { models });
    const prompts = [2, 4, 6].map((j) => promptTokens(booking.messages.slice(0, j)));
    expect(m.requests).toBe(3);
    expect(m.inputTokens).toBe(prompts[0] + prompts[1] + prompts[2]);
    expect(m.peakPrompt).toBe(prompts[2]);
    expect(m.rewrites).toBe(0);
    expect([m.probesNeeded, m.probesKept]).toEqual([1, 1]);
    expect(m.llmCalls).toBe(0);
  });

  it("scores a need at a user message (check.mjs only warns of one) at the next reply, once", async () => {
    // Message 3 says the name, 5 is the user's; 4 and 6 are replies.
    const atUser = { ...booking, probes: [{ fact: "the booking name", value: "Zed", introduced_at: 3, needed_at: [5] }] };
    const full = await measure(atUser, "full", { models });
    expect([full.probesNeeded, full.probesKept, full.nearNeeded]).toEqual([1, 1, 1]);
    const window = await measure(atUser, { name: "sliding-window", options: { turns: 1 } }, { models });
    expect([window.probesNeeded, window.probesKept]).toEqual([1, 0]);
    // 5 and 6 are one need, at reply 6.
    const both = await measure({ ...atUser, probes: [{ ...atUser.probes[0], needed_at: [5, 6] }] }, "full", { models });
    expect(both.probesNeeded).toBe(1);
  });

  it("a one-turn window drops the name before it is needed, and breaks the cache", async () => {
    const m = await measure(booking, { name: "sliding-window", options: { turns: 1 } }, { models });
    const full = await measure(booking, "full", { models });
    expect(m.inputTokens).toBeLessThan(full.inputTokens);
    expect([m.probesNeeded, m.probesKept]).toEqual([1, 0]);
    expect(m.rewrites).toBeGreaterThan(0);
  });
});

describe("strict, stratified retention", () => {
  // A value in the system prompt, one the task states, a short one, and one whose last mention is far back.
  const messages: Transcript["messages"] = [
    { role: "system", content: "You are a concierge in Cambridge." },
    { role: "user", content: "Book the Ortega for Friday." },
  ];
  for (let i = 0; i < 12; i++) messages.push({ role: "assistant", content: i === 0 ? "Which area, and how many?" : i === 6 ? "Still the centre." : `Noted ${i}.` }, { role: "user", content: i === 0 ? "Centre, 4 of us, ref QX77Z." : `More ${i}.` });
  messages.push({ role: "assistant", content: "Booked." });
  const last = messages.length - 1;
  const t: Transcript = {
    id: "strata",
    messages,
    probes: [
      { fact: "city", value: "Cambridge", introduced_at: 0, needed_at: [last] },
      { fact: "name", value: "Ortega", introduced_at: 1, needed_at: [last] },
      { fact: "people", value: "4", introduced_at: 3, needed_at: [last] },
      { fact: "area", value: "centre", introduced_at: 3, needed_at: [last], mentions: [3, 14] },
      { fact: "ref", value: "QX77Z", introduced_at: 3, needed_at: [4, last], mentions: [3] },
    ],
  };

  it("counts only values outside the system prompt and not stated by the task, bands them by distance and keeps short values apart", async () => {
    const full = await measure(t, "full", { models });
    expect(full.taskStated).toBe(1);
    expect([full.shortNeeded, full.shortKept]).toEqual([1, 1]);
    // Cambridge is only in the system prompt: never kept, even by full.
    expect([full.probesNeeded, full.probesKept]).toEqual([4, 3]);
    // ref: needed 1 and 23 messages after its only mention; centre: 12 after its last; Cambridge: 26.
    expect([full.nearNeeded, full.midNeeded, full.farNeeded]).toEqual([1, 1, 2]);
    const window = await measure(t, { name: "sliding-window", options: { turns: 2 } }, { models });
    expect([window.nearKept, window.midKept, window.farKept]).toEqual([1, 0, 0]);
    expect(window.compacted).toBeGreaterThan(0);
  });

  it("reports each row's ratios from its transcripts' own counts: each band, the short values, each price model", async () => {
    const r = await compareStrategies([t, booking], ["full", { name: "sliding-window", options: { turns: 2 } }], { models: ["gpt-4o", "claude-sonnet-4"] });
    const sum = (row: number, pick: (m: (typeof r.rows)[number]["perTranscript"][number]["metrics"]) => number) => r.rows[row].perTranscript.reduce((n, p) => n + pick(p.metrics), 0);
    for (const i of [0, 1]) {
      const row = r.rows[i];
      expect(row.failures).toEqual([]);
      expect(row.retentionByDistance).toEqual({
        near: sum(i, (m) => m.nearKept) / sum(i, (m) => m.nearNeeded),
        mid: sum(i, (m) => m.midKept) / sum(i, (m) => m.midNeeded),
        far: sum(i, (m) => m.farKept) / sum(i, (m) => m.farNeeded),
        beyond6: (sum(i, (m) => m.midKept) + sum(i, (m) => m.farKept)) / (sum(i, (m) => m.midNeeded) + sum(i, (m) => m.farNeeded)),
      });
      expect(row.shortRetention).toBe(sum(i, (m) => m.shortKept) / sum(i, (m) => m.shortNeeded));
      expect(row.costRatios).toEqual([0, 1].map((k) => sum(i, (m) => m.costs[k]) / sum(0, (m) => m.costs[k])));
    }
    // The window loses what full keeps, so the figures tell the rows apart; the two price models differ.
    expect(r.rows[1].retentionByDistance.beyond6).toBeLessThan(r.rows[0].retentionByDistance.beyond6 as number);
    expect(r.rows[1].costRatios[0]).not.toBe(r.rows[1].costRatios[1]);
  });

  it("counts a summary the strategy sends as a system message: only the conversation's own system messages are ignored", async () => {
    const steps: Transcript["messages"] = [{ role: "system", content: "You are a coding agent." }, { role: "user", content: "Fix the failing import." }];
    for (let i = 0; i < 8; i++) {
      steps.push({ role: "assistant", content: `Step ${i}.`, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: i === 0 ? "python src/pkg/cli_main.py --check" : `ls dir_${i}` }) } }] });
      steps.push({ role: "tool", tool_call_id: `c${i}`, content: i === 0 ? "name = pkg\nversion = 1.0\nentry = src/pkg/cli_main.py" : Array.from({ length: 30 }, (_, k) => `file_${i}_${k}.txt`).join("\n") });
    }
    steps.push({ role: "assistant", content: "Done." });
    const t: Transcript = { id: "steps", messages: steps, probes: [{ fact: "entry", value: "src/pkg/cli_main.py", introduced_at: 2, needed_at: [steps.length - 1] }] };
    const seen: string[] = [];
    const m = await measure(t, { name: "rolling-summary", options: { unit: "step" } }, { models, onPrompt: (p) => void (p.index === steps.length - 1 && seen.push(...p.messages.filter((x) => x.role === "system").map((x) => String(x.content)))) });
    expect(seen.some((c) => c.startsWith("[Summary of"))).toBe(true);
    expect([m.midNeeded, m.midKept]).toEqual([1, 1]);
  });

  it("takes a developer message (OpenAI's newer system prompt) as the system prompt: it keeps no value, and the floors keep it", async () => {
    const asDeveloper: Transcript = { ...t, id: "developer", messages: [{ role: "developer" as never, content: messages[0].content }, ...messages.slice(1)] };
    for (const spec of ["full", { name: "sliding-window", options: { turns: 1 } }, { baseline: "system+last" as const }]) {
      const [a, b] = [await measure(t, spec, { models }), await measure(asDeveloper, spec, { models })];
      expect({ ...b, compactionMs: 0 }).toEqual({ ...a, compactionMs: 0 });
    }
  });

  it("says a strategy that never sent less than everything never triggered, instead of showing its retention", async () => {
    const r = await compareStrategies([t], [{ name: "sliding-window", options: { turns: 50 } }], { models });
    expect(r.rows[1].triggered).toBe(false);
    expect(renderTable(r)).toMatch(/\nsliding-window:turns=50 .*never triggered/);
    expect(r.rows[1].retentionByDistance.beyond6).toBe(r.rows[0].retentionByDistance.beyond6);
    // Nor does the HTML page plot it at 100% retention in the cost-against-retention chart.
    const html = renderHtml(r);
    expect(html).toContain("<title>full: cost 1.000x full, retention");
    expect(html).not.toContain("<title>sliding-window:turns=50: cost");
  });
});

describe("compareStrategies", () => {
  it("always measures full as the baseline, and reports reduction, cost ratio and retention against it", async () => {
    const r = await compareStrategies([booking, { ...booking, id: "booking-2" }], [{ name: "sliding-window", options: { turns: 1 } }], { models });
    expect(r.rows.map((row) => row.strategy)).toEqual(["full", "sliding-window:turns=1", "baseline:system+last", "baseline:system+task+last"]);
    const [full, window, last, taskLast] = r.rows;
    expect([last.kind, taskLast.kind, window.kind]).toEqual(["baseline", "baseline", "strategy"]);
    // The floor: only the system prompt and the last message ("4 of us.") — the name is gone.
    expect(last.retention).toBe(0);
    expect(last.totals.inputTokens).toBeLessThan(taskLast.totals.inputTokens);
    expect(full.reduction).toBe(0);
    expect(full.retention).toBe(1);
    expect(window.reduction).toBeCloseTo(1 - window.totals.inputTokens / full.totals.inputTokens, 10);
    expect(window.retention).toBe(0);
    expect(window.costRatio).toBeCloseTo(window.totals.cost / full.totals.cost, 10);
    expect(renderTable(r)).toMatch(/^price model gpt-4o: \$2\.5\/\$10 per M input\/output tokens, token-prefix cache \(reads 0\.5x, from 1024 tokens in steps of 128\)\n2 transcripts, 14 messages; probe needs: 2 counted \(≤6 back 2, 7-20 0, >20 0\), 0 short values apart, 0 left out because the task states them.*\nstrategy +input tokens/);
    // The HTML report says what the probes counted too: the table's retention means nothing without it.
    const needs = /probe needs: [^\n]*/.exec(renderTable(r))?.[0] ?? "no probe needs line";
    expect(renderHtml(r)).toContain(needs.replace(/>/g, "&gt;"));
    // Per transcript too, adding up to the totals.
    expect(window.perTranscript.map((p) => p.id)).toEqual(["booking", "booking-2"]);
    expect(window.perTranscript[0].metrics.inputTokens * 2).toBe(window.totals.inputTokens);
  });

  it("compares a strategy of the caller's own registry, as measure and compareUnderCaches do", async () => {
    const registry = defaultStrategies.with(
      pureStrategy({ name: "drop-middle", description: "test only", schema: z.object({}).strict(), rewrite: (stored) => (stored.length > 4 ? { messages: [...stored.slice(0, 2), ...stored.slice(-2)] } : null) }),
    );
    const r = await compareStrategies([booking], ["drop-middle"], { models, registry });
    const mine = r.rows.find((row) => row.strategy === "drop-middle");
    expect(mine?.triggered).toBe(true);
    expect(mine?.totals).toEqual(await measure(booking, "drop-middle", { models, model: models[0], registry }).then((m) => ({ ...m, compactionMs: mine?.totals.compactionMs })));
    await expect(compareStrategies([booking], ["drop-middle"], { models })).rejects.toThrow(/unknown strategy "drop-middle"/);
  });

  it("measures the other strategies and transcripts when one throws, and names the failed cell with its transcript and request", async () => {
    // A throw stopped the whole run: every other strategy's figures (summaries paid) were lost.
    const registry = withFragile((stored) => {
      if (stored.some((m) => messageText(m).includes("Zed"))) throw new TypeError("Cannot read properties of undefined (reading 'x')");
      return stored.length > 2 ? { messages: stored.slice(-1) } : null;
    });
    const calm: Transcript = { id: "calm", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }, { role: "user", content: "and?" }, { role: "assistant", content: "that is all" }] };
    const window = { name: "sliding-window", options: { turns: 1 } };
    const r = await compareStrategies([calm, booking], ["fragile", window], { models, registry });
    const [full, fragile, win] = r.rows;
    const message = "strategy fragile failed on transcript booking at the request for message 4: TypeError: Cannot read properties of undefined (reading 'x')";
    expect(fragile.failures).toEqual([{ id: "booking", message }]);
    expect(fragile.perTranscript.map((p) => [p.id, p.failed])).toEqual([["calm", undefined], ["booking", message]]);
    // Its figures are calm's alone, and compared with full's on calm alone.
    const calmAlone = await compareStrategies([calm], ["fragile"], { models, registry });
    expect(fragile.totals).toEqual({ ...calmAlone.rows[1].totals, compactionMs: fragile.totals.compactionMs });
    expect(fragile.reduction).toBeCloseTo(calmAlone.rows[1].reduction as number, 12);
    expect(fragile.costRatio).toBeCloseTo(calmAlone.rows[1].costRatio as number, 12);
    // The rest is whole.
    const whole = await compareStrategies([calm, booking], [window], { models });
    expect([full.failures, win.failures]).toEqual([[], []]);
    expect(win.totals).toEqual({ ...whole.rows[1].totals, compactionMs: win.totals.compactionMs });
    expect(full.totals).toEqual({ ...whole.rows[0].totals, compactionMs: full.totals.compactionMs });
    expect(renderTable(r)).toContain(`fragile failed on 1 of 2 transcripts (its figures, and full's they are compared with, leave them out):\n  ${message}`);
    // The probe needs the report states are full's, wherever full is listed.
    const fullLast = await compareStrategies([calm, booking], ["fragile", "full"], { models, registry });
    expect(fullLast.rows.map((row) => row.strategy).slice(0, 2)).toEqual(["fragile", "full"]);
    expect(probeNeedsText(fullLast)).toBe(probeNeedsText(r));
    expect(probeNeedsText(r)).toMatch(/^probe needs: 1 counted/);
    expect(renderHtml(r)).toContain("fragile failed on 1 of 2 transcripts");
  });

  // A strategy that threw on every conversation read "0 tokens, 0.0% reduction, 1.000x, never
  // triggered": a ratio of nothing to nothing, no effect where it failed. The failure was said only
  // in a note under the table.
  it("shows a strategy that failed on every transcript as failed, with no reduction or cost ratio, in the table, the page, the JSON and the viewer", async () => {
    const registry = withFragile((stored) => {
      if (stored.length > 1) throw new TypeError("boom");
      return null;
    });
    const calm: Transcript = { id: "calm", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }, { role: "user", content: "and?" }, { role: "assistant", content: "that is all" }] };
    const r = await compareStrategies([calm, booking], ["fragile", { name: "sliding-window", options: { turns: 1 } }], { models: ["gpt-4o", "claude-sonnet-4"], registry });
    const [full, fragile, win] = r.rows;
    expect(fragile.failures.map((f) => f.id)).toEqual(["calm", "booking"]);
    expect([fragile.reduction, fragile.costRatio, fragile.costRatios]).toEqual([null, null, [null, null]]);
    expect([full.failures.length, win.failures.length, typeof win.reduction, typeof win.costRatio]).toEqual([0, 0, "number", "number"]);
    const table = renderTable(r);
    expect(table).toMatch(/\nstrategy +failed +input tokens +reduction /);
    // Every figure of its row n/a, and its failed count beside its name; the others failed nowhere.
    expect(table).toMatch(/\nfragile +2 of 2( +n\/a){14}\n/);
    expect(table).toMatch(/\nfull {6,}[\d,]+ +0\.0% /);
    expect(table).not.toMatch(/never triggered/);
    const html = renderHtml(r);
    expect(html).toContain(`<td>fragile</td><td>2 of 2</td>${"<td>n/a</td>".repeat(13)}</tr>`);
    expect(html).not.toMatch(/fragile: (0 tokens|cost)/);
    // Written as JSON and read back, the viewer opens it and shows no ratio either.
    const json = JSON.parse(JSON.stringify(r)) as typeof r;
    expect(json.rows[1].reduction).toBeNull();
    const input = readViewerInput("report.json", JSON.stringify(r));
    expect(input.kind).toBe("report");
    if (input.kind === "report") expect(projectReport(input.report, "report.json", "r").rows[1]).toMatchObject({ strategy: "fragile", reduction: null, costRatio: null, idle: "n/a" });
  });

  it("measures a strategy that throws on any conversation as failed on each, with or without a model, not as the run's crash", async () => {
    // Without a model, the check for strategies that need one projected a one-message
    // conversation and let the throw out: compareStrategies rejected with the strategy's bare
    // "TypeError: boom", no strategy or transcript named and nothing reported; with a model the
    // same strategy was measured and failed on each transcript.
    const registry = withFragile(() => {
      throw new TypeError("boom");
    });
    const llm = scriptedLlm([]);
    for (const options of [{ models, registry }, { models, registry, llm }]) {
      const r = await compareStrategies([booking, { ...booking, id: "booking-2" }], ["fragile"], options);
      expect(r.rows[1].failures.map((f) => f.message)).toEqual(["booking", "booking-2"].map((id) => `strategy fragile failed on transcript ${id} at the request for message 2: TypeError: boom`));
      expect(r.rows[1].reduction).toBeNull();
    }
    const caches = await compareUnderCaches([booking], ["fragile"], { registry });
    expect(caches.rows[1].failures).toHaveLength(1);
    // What the run cannot serve is still refused before any is measured.
    await expect(compareStrategies([booking], ["fragile", { name: "rolling-summary", options: { summarizer: "llm" } }], { models, registry })).rejects.toThrow(/^compaction: summarizer "llm" needs an llm/);
  });

  it("counts a strategy's failures in its row when it failed on some transcripts; its figures are those of the others", async () => {
    const registry = withFragile((stored) => {
      if (stored.some((m) => messageText(m).includes("Zed"))) throw new TypeError("boom");
      return stored.length > 2 ? { messages: stored.slice(-1) } : null;
    });
    const calm: Transcript = { id: "calm", messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }, { role: "user", content: "and?" }, { role: "assistant", content: "that is all" }] };
    const r = await compareStrategies([calm, booking, { ...booking, id: "booking-2" }], ["fragile"], { models, registry });
    const fragile = r.rows[1];
    expect(fragile.failures).toHaveLength(2);
    const alone = await compareStrategies([calm], ["fragile"], { models, registry });
    expect(fragile.reduction).toBeCloseTo(alone.rows[1].reduction as number, 12);
    expect(renderTable(r)).toMatch(new RegExp(`\\nfragile +2 of 3 +${fragile.totals.inputTokens} +${percentText(fragile.reduction as number).replace(".", "\\.")} `));
    expect(renderHtml(r)).toContain("<td>fragile</td><td>2 of 3</td>");
    // Without a failure there is no failed column.
    expect(renderTable(alone)).not.toMatch(/ failed /);
  });

  it("fails the cell of a strategy whose cache breakpoints throw or are no list, and goes on with the rest", async () => {
    // Its cacheBreakpoints ran outside the strategy's guard: the first throw ended the whole compare
    // with the host's own error, and a number for a list made cacheMarks throw a bare TypeError.
    for (const [marks, cause] of [
      [() => { throw new Error("boom"); }, "Error: boom"],
      [() => 5, "StrategyResultError: cache breakpoints that are not a list of message indices"],
    ] as const) {
      const base = defaultStrategies.create({ name: "sliding-window", options: { turns: 1 } });
      const registry = defaultStrategies.with({
        name: "marked",
        description: "test only",
        schema: z.object({}).strict(),
        defaults: {},
        create: () => ({ ...base, name: "marked", cacheBreakpoints: marks }),
      } as unknown as Parameters<typeof defaultStrategies.with>[0]);
      const r = await compareStrategies([booking], ["marked", "sliding-window"], { models, registry });
      expect(r.rows[1].failures).toEqual([{ id: "booking", message: `strategy marked failed on transcript booking at the request for message 2: ${cause}` }]);
      expect(r.rows[2].failures).toEqual([]);
      expect(r.rows[2].totals.requests).toBe(3);
    }
  });

  it("gives up on a strategy call that never settles after timeoutMs, and goes on with the rest", async () => {
    // A project() that never settled held compareStrategies for ever.
    let asked = 0;
    let signal: AbortSignal | undefined;
    const registry = defaultStrategies.with({
      name: "stuck",
      description: "test only",
      schema: z.object({}).strict(),
      defaults: {},
      create: () => ({
        name: "stuck",
        initialState: () => null,
        project: (c: { messages: readonly unknown[] }, _state: unknown, context: { signal?: AbortSignal }) => {
          if (c.messages.length <= 1) return Promise.resolve({ messages: c.messages, state: null, events: [], stats: { llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0 } });
          asked++;
          signal = context.signal;
          return new Promise<never>(() => {});
        },
      }),
    } as unknown as Parameters<typeof defaultStrategies.with>[0]);
    vi.useFakeTimers();
    try {
      const run = compareStrategies([booking], ["stuck", "sliding-window"], { models, registry, timeoutMs: 1000 });
      await vi.advanceTimersByTimeAsync(1000);
      const r = await run;
      expect(asked).toBe(1);
      // Told to stop, in case it listens.
      expect(signal?.aborted).toBe(true);
      expect(r.rows[1].failures).toEqual([{ id: "booking", message: "strategy stuck failed on transcript booking at the request for message 2: LlmError: strategy stuck: no reply within 1000 ms" }]);
      expect(r.rows[2].failures).toEqual([]);
      expect(r.rows[2].totals.requests).toBe(3);
    } finally {
      vi.useRealTimers();
    }
    // A deadline setTimeout cannot keep would fire at once and fail every call.
    await expect(compareStrategies([booking], ["sliding-window"], { models, timeoutMs: 2 ** 31 })).rejects.toThrow(/^compaction harness: timeoutMs must be a whole number of milliseconds from 1 to 2147483647, got /);
  });

  it("gives a summarizing strategy the time its own summary calls may take: the deadline is no shorter than its summaryTimeoutMs allows", async () => {
    // A slow local summarizer, summaryTimeoutMs 900 s, answering in 700 s: the harness's 600 s
    // deadline failed a call its strategy was configured to wait for.
    const slow: Llm = { name: "slow", complete: () => new Promise((resolve) => setTimeout(() => resolve({ content: JSON.stringify({ ConversationSummary: "The name is Zed." }) }), 700_000)) };
    const spec = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1, summarizer: "llm", summaryTimeoutMs: 900_000 } };
    vi.useFakeTimers();
    try {
      const run = compareStrategies([booking], [spec], { models, llm: slow });
      await vi.advanceTimersByTimeAsync(700_000);
      const r = await run;
      expect(r.rows[1].failures).toEqual([]);
      expect(r.rows[1].totals.llmCalls).toBe(1);
      expect(r.rows[1].totals.summaryFailures).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses a strategy given twice, however spelled, before measuring any: it made two rows of one name", async () => {
    // ptc compare refused it, the library made rows ["sliding-window", "sliding-window", ...] and ["full", "recap", "recap"].
    const message = /^compaction: strategy sliding-window is given twice: it would be measured twice$/;
    let progress = 0;
    await expect(compareStrategies([booking], ["sliding-window", { name: "sliding-window", options: {} }], { models, onProgress: () => progress++ })).rejects.toThrow(message);
    expect(progress).toBe(0);
    await expect(compareStrategies([booking], ["full", "full"], { models })).rejects.toThrow(/^compaction: strategy full is given twice/);
    await expect(compareStrategies([booking], [{ name: "sliding-window", options: { turns: 3 } }, { name: "sliding-window", options: { turns: 3.0 } }], { models })).rejects.toThrow(/^compaction: strategy sliding-window:turns=3 is given twice/);
    await expect(compareUnderCaches([booking], ["recap", "recap"])).rejects.toThrow(/^compaction: strategy recap is given twice/);
  });

  it("refuses an unknown strategy or a bad option before measuring any, not after the strategies before it ran", async () => {
    // Those before it may summarize through a paid model over every transcript: ptc compare
    // --strategy rolling-summary --strategy nosuch ran rolling-summary, then failed with exit 2.
    for (const bad of ["nosuch", { name: "sliding-window", options: { turns: 0 } }]) {
      let progress = 0;
      await expect(compareStrategies([booking], ["rolling-summary", bad], { models, onProgress: () => progress++ })).rejects.toThrow(/^compaction: (unknown strategy "nosuch"|invalid options for strategy "sliding-window")/);
      expect(progress).toBe(0);
    }
  });

  it("refuses a summarizer or goal detector that needs a model when the run has none, before measuring any", async () => {
    // Found only when the strategy projected: full had replayed every transcript first (30 SGD: 3 s), then exit 2.
    for (const bad of [{ name: "rolling-summary", options: { summarizer: "llm" } }, { name: "goal-boundary", options: { detector: "llm" } }]) {
      let progress = 0;
      await expect(compareStrategies([booking], ["sliding-window", bad], { models, onProgress: () => progress++ })).rejects.toThrow(/^compaction: (summarizer|detector) "llm" needs an llm/);
      expect(progress).toBe(0);
    }
  });

  it("a transcript with no request to replay (a lone question) adds nothing to the costs, and wipes none", async () => {
    // Summing its empty per-model costs into the totals replaced them with an empty list: every
    // row's cost under each price model read 1.000x of full, whatever it sent.
    const question: Transcript = { id: "question", messages: [{ role: "system", content: "You book tables." }, { role: "user", content: "Book a table for tonight." }] };
    const spec = { name: "sliding-window", options: { turns: 1 } };
    const alone = await compareStrategies([booking], [spec], { models: ["gpt-4o", "claude-sonnet-4"] });
    const r = await compareStrategies([booking, question], [spec], { models: ["gpt-4o", "claude-sonnet-4"] });
    expect(r.rows[1].totals.costs).toEqual(alone.rows[1].totals.costs);
    expect(r.rows[1].costRatios).toEqual(alone.rows[1].costRatios);
    expect(r.rows[1].costRatios[0]).toBeLessThan(1);
    expect(r.rows[1].costRatios[0]).toBeCloseTo(r.rows[1].costRatio as number, 12);
  });
});

describe("a summarizer that fails", () => {
  it("counts the requests and transcripts where a summary failed, instead of saying the strategy never triggered", async () => {
    // The summarizer's server is down: every summary fails and the prompts go out whole.
    let attempts = 0;
    const down: Llm = { name: "down", complete: () => Promise.reject(new Error(`connect ECONNREFUSED (${++attempts})`)) };
    const spec = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } };
    const r = await compareStrategies([booking, { ...booking, id: "booking-2" }], [spec], { models, llm: down });
    const row = r.rows[1];
    expect(attempts).toBeGreaterThan(0);
    expect(row.triggered).toBe(false);
    expect(row.totals.summaryFailures).toBeGreaterThan(0);
    expect(row.perTranscript.map((p) => p.metrics.summaryFailures > 0)).toEqual([true, true]);
    const table = renderTable(r);
    expect(table).not.toMatch(/never triggered/);
    expect(table).toMatch(/\nrolling-summary:roundsToCompress=1,roundsToRetain=1 .*summaries failed/);
    expect(table).toContain(`rolling-summary:roundsToCompress=1,roundsToRetain=1: a summary failed at ${row.totals.summaryFailures} requests in 2 of 2 transcripts`);
    // The HTML report and the viewer (from the JSON) say it too.
    expect(renderHtml(r)).toContain(`rolling-summary:roundsToCompress=1,roundsToRetain=1: a summary failed at ${row.totals.summaryFailures} requests in 2 of 2 transcripts`);
    const view = projectReport(compareReportSchema.parse(JSON.parse(JSON.stringify(r))), "report.json", "r");
    expect(view.tableNotes).toEqual([`rolling-summary:roundsToCompress=1,roundsToRetain=1: a summary failed at ${row.totals.summaryFailures} requests in 2 of 2 transcripts; those prompts went out without it`]);
    // Its row says so beside its name: 0.0% and 1.000x are what it sent without its summaries.
    expect(table).toMatch(/\nstrategy +failed +input tokens /);
    expect(table).toMatch(/\nrolling-summary:roundsToCompress=1,roundsToRetain=1 +summary in 2 of 2 +[\d,]+ +0\.0% /);
    expect(renderHtml(r)).toContain("summaries failed");
    expect(renderHtml(r)).toContain("<td>rolling-summary:roundsToCompress=1,roundsToRetain=1</td><td>summary in 2 of 2</td>");
  });

  it("says goal-boundary's goal detector failed, not that the strategy never triggered", async () => {
    const down: Llm = { name: "down", complete: () => Promise.reject(new Error("connect ECONNREFUSED")) };
    const r = await compareStrategies([booking, { ...booking, id: "booking-2" }], ["goal-boundary"], { models, llm: down });
    expect(r.rows[1].totals.summaryFailures).toBeGreaterThan(0);
    expect(renderTable(r)).toMatch(/\ngoal-boundary +summary in 2 of 2 +[\d,]+ +0\.0% .* summaries failed /);
  });

  it("says in the row of a strategy whose summaries failed on some transcripts on how many, not only in a note under the table", async () => {
    // The summarizer fails on the booking conversations only: the row's figures mix prompts sent
    // with summaries and prompts sent without, and read like any other row.
    const flaky: Llm = { name: "flaky", complete: ({ messages }) => (messages.some((m) => messageText(m).includes("Zed")) ? Promise.reject(new Error("upstream 503")) : Promise.resolve({ content: JSON.stringify({ ConversationSummary: "Asked for a table; booked." }) })) };
    const other: Transcript = { ...booking, id: "other", messages: booking.messages.map((m) => ({ ...m, content: String(m.content).replace(/Zed/g, "Amy") })), probes: [] };
    const spec = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } };
    const r = await compareStrategies([booking, other, { ...booking, id: "booking-2" }], [spec], { models, llm: flaky });
    const row = r.rows[1];
    expect(row.triggered).toBe(true);
    expect(row.perTranscript.map((p) => p.metrics.summaryFailures > 0)).toEqual([true, false, true]);
    expect(renderTable(r)).toMatch(/\nrolling-summary:roundsToCompress=1,roundsToRetain=1 +summary in 2 of 3 +[\d,]+ /);
    // The others failed nowhere: their cell is empty.
    expect(renderTable(r)).toMatch(/\nfull {10,}[\d,]+ +0\.0% /);
  });
});

// A reasoning model that spends its output limit thinking answers with no text: the call is billed
// (its usage says so) but the client threw a 'malformed' error without it, so the harness charged
// the strategy nothing for it: 0 llm calls, the cost of full.
describe("a summarizer billed for a reply with no text", () => {
  let origin = "";
  let calls = 0;
  localServer(
    (_req, res) => {
      calls++;
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ id: "x", object: "chat.completion", model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "length" }], usage: { prompt_tokens: 5000, completion_tokens: 400, total_tokens: 5400 } }));
    },
    { listening: (o) => (origin = o), reset: () => (calls = 0) },
  );

  it("charges each such call its reported tokens, at the summary model's price", async () => {
    const llm = openaiLlm({ baseURL: `${origin}/v1`, apiKey: "sk-local", model: "gpt-4o-mini", maxRetries: 0 });
    const spec = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } };
    const failing = await measure(booking, spec, { models, llm, summaryModel: "gpt-4o-mini" });
    const full = await measure(booking, "full", { models });
    expect(calls).toBeGreaterThan(0);
    expect(failing.summaryFailures).toBeGreaterThan(0);
    expect(failing.inputTokens).toBe(full.inputTokens);
    expect(failing.llmCalls).toBe(calls);
    expect(failing.llmTokens).toBe(calls * 5400);
    const price = modelPrice("gpt-4o-mini");
    expect(failing.cost - full.cost).toBeCloseTo((calls * (5000 * price.input + 400 * price.output)) / 1e6, 12);
  });
});

describe("transcripts", () => {
  it("loadTranscripts refuses a file that is not UTF-8, with the byte and where it is, as ptc compare does", () => {
    // Read with readFileSync(file, "utf8"), a Latin-1 "café" reached every prompt and probe as "caf\uFFFD", measured without a word.
    const dir = mkdtempSync(join(tmpdir(), "ptc-transcripts-"));
    const file = join(dir, "latin1.jsonl");
    const line = JSON.stringify({ id: "a", messages: [{ role: "user", content: "un café" }, { role: "assistant", content: "ok" }] });
    writeFileSync(file, Buffer.concat([Buffer.from(`${JSON.stringify(booking)}\n`), Buffer.from(line, "latin1")]));
    expect(() => loadTranscripts(file)).toThrow(TranscriptError);
    expect(() => loadTranscripts(file)).toThrow(`${file} is not UTF-8 text: byte 0xE9 at line 2, column ${line.indexOf("é") + 1} (save it as UTF-8)`);
    // A byte-order mark is no character of the first line.
    writeFileSync(file, `\uFEFF${line}\n`);
    expect(loadTranscripts(file).map((t) => messageText(t.messages[0]))).toEqual(["un café"]);
  });

  it("reports a bad line with its number and what is wrong", () => {
    const good = JSON.stringify(booking);
    expect(() => parseTranscripts(`${good}\n{oops`, "t.jsonl")).toThrow(/^t\.jsonl:2:2: not valid JSON/);
    expect(() => parseTranscripts(`${good}\n\n${JSON.stringify({ id: "x", messages: [{ role: "robot", content: "hi" }] })}`, "t.jsonl")).toThrow(/^t\.jsonl:3: at messages\.0\.role/);
    const numbered = [1, 2, 3].map((k) => JSON.stringify({ ...booking, id: `b${k}` })).join("\n");
    expect(parseTranscripts(numbered, "t.jsonl", 2)).toHaveLength(2);
  });

  it("refuses a conversation id given twice in a file, which counted it twice in every total and left its report rows and the viewer's pick ambiguous", () => {
    const good = JSON.stringify(booking);
    const other = JSON.stringify({ ...booking, id: "other" });
    expect(() => parseTranscripts(`${good}\n${other}\n\n${good}`, "t.jsonl")).toThrow(`t.jsonl:4: at id: "${booking.id}" is also the id of line 1`);
    // A limit that stops before the second is not a duplicate read.
    expect(parseTranscripts(`${good}\n${other}\n${good}`, "t.jsonl", 2).map((t) => t.id)).toEqual([booking.id, "other"]);
  });

  it("notes tool results without their call and calls without results, per file and line, and keeps the conversation", () => {
    const call = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{}" } }] };
    const lines = [
      booking,
      { id: "orphan", messages: [{ role: "user", content: "go" }, { role: "tool", tool_call_id: "zz", content: "x" }, { role: "assistant", content: "ok" }] },
      { id: "unanswered", messages: [{ role: "user", content: "go" }, call, { role: "user", content: "and?" }, { role: "assistant", content: "ok" }] },
    ];
    const ts = parseTranscripts(lines.map((l) => JSON.stringify(l)).join("\n"), "t.jsonl");
    expect(ts.map((t) => t.messages.length)).toEqual(lines.map((l) => l.messages.length));
    expect(ts.map((t) => t.problems)).toEqual([
      undefined,
      ["t.jsonl:2: message 1: tool result without its call: OpenAI's and Anthropic's APIs reject a prompt with it (compared as recorded)"],
      ["t.jsonl:3: message 2: tool calls of an earlier message have no results: OpenAI's and Anthropic's APIs reject a prompt with it (compared as recorded)"],
    ]);
  });

  it("notes a call and its result paired by an id that is no string (null, a number): no API takes them", () => {
    // null === null and 5 === 5 paired them, so the report said nothing of a conversation every
    // provider refuses (a tool_call_id must be the call's string id); absent ids were noted.
    const paired = (id: unknown) => ({
      id: `id-${String(id)}`,
      messages: [{ role: "user", content: "go" }, { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name: "ls", arguments: "{}" } }] }, { role: "tool", tool_call_id: id, content: "x" }, { role: "assistant", content: "ok" }],
    });
    const ts = parseTranscripts([paired(null), paired(5), paired("c1")].map((l) => JSON.stringify(l)).join("\n"), "t.jsonl");
    const problem = (line: number, text: string) => `t.jsonl:${line}: ${text}: OpenAI's and Anthropic's APIs reject a prompt with it (compared as recorded)`;
    expect(ts.map((t) => t.problems)).toEqual([
      [problem(1, "message 2: tool result without its call"), problem(1, "message 3: tool calls of an earlier message have no results")],
      [problem(2, "message 2: tool result without its call"), problem(2, "message 3: tool calls of an earlier message have no results")],
      undefined,
    ]);
  });

  // No transcript holds a reply after its first message: no request was replayed, and every row
  // read 0.0% reduction and cost 1.000x, "no saving", of a comparison that measured nothing.
  it("refuses transcripts none of which has a request to measure, rather than report no saving", async () => {
    const [unanswered] = parseTranscripts(JSON.stringify({ id: "q", messages: [{ role: "system", content: "s" }, { role: "user", content: "hello there" }] }), "q.jsonl");
    const nothing = /nothing to compare: none of the 1 transcripts has an assistant reply after its first message/;
    await expect(compareStrategies([unanswered], ["recap"], { models: ["gpt-4o"] })).rejects.toThrow(nothing);
    await expect(compareUnderCaches([unanswered], ["recap"])).rejects.toThrow(nothing);
    const dir = mkdtempSync(join(tmpdir(), "ptc-nothing-"));
    writeFileSync(join(dir, "q.jsonl"), `${JSON.stringify({ id: "q", messages: [{ role: "user", content: "hello there" }] })}\n`);
    let stdout = "";
    let stderr = "";
    const code = await runCli(["compare", join(dir, "q.jsonl")], { stdin: Readable.from([""]), stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
    expect([code, stdout, stderr]).toEqual([2, "", `ptc compare: ${join(dir, "q.jsonl")}: nothing to compare: none of the 1 transcripts has an assistant reply after its first message (the requests a strategy is measured on)\n`]);
  });

  it("notes a tool call id given twice as a duplicate, not as a result without its call", () => {
    // Two calls of one message with the same id, each answered: the second result read as
    // "without its call", which sent the reader looking for a missing call.
    const call = (id: string) => ({ id, type: "function", function: { name: "ls", arguments: "{}" } });
    const lines = [
      { id: "twice-called", messages: [{ role: "user", content: "go" }, { role: "assistant", content: null, tool_calls: [call("c1"), call("c1")] }, { role: "tool", tool_call_id: "c1", content: "x" }, { role: "tool", tool_call_id: "c1", content: "y" }, { role: "assistant", content: "ok" }] },
      { id: "twice-answered", messages: [{ role: "user", content: "go" }, { role: "assistant", content: null, tool_calls: [call("c1")] }, { role: "tool", tool_call_id: "c1", content: "x" }, { role: "tool", tool_call_id: "c1", content: "y" }, { role: "assistant", content: "ok" }] },
    ];
    const ts = parseTranscripts(lines.map((l) => JSON.stringify(l)).join("\n"), "t.jsonl");
    const problem = (line: number, text: string) => `t.jsonl:${line}: ${text}: OpenAI's and Anthropic's APIs reject a prompt with it (compared as recorded)`;
    expect(ts.map((t) => t.problems)).toEqual([[problem(1, 'message 1: two tool calls have the id "c1"')], [problem(2, 'message 3: a second result for the tool call "c1"')]]);
  });

  it("puts the data problems of the transcripts measured in the report itself: the table, the JSON and the HTML", async () => {
    // They went to standard error only: a --json or --html report covered conversations no
    // provider would take without a word about it.
    const call = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "ls", arguments: "{}" } }] };
    const lines = [
      booking,
      { id: "orphan", messages: [{ role: "user", content: "go" }, { role: "tool", tool_call_id: "zz", content: "x" }, { role: "assistant", content: "ok" }] },
      { id: "unanswered", messages: [{ role: "user", content: "go" }, call, { role: "user", content: "and?" }, { role: "assistant", content: "ok" }] },
    ];
    const ts = parseTranscripts(lines.map((l) => JSON.stringify(l)).join("\n"), "t<1>.jsonl");
    const report = await compareStrategies(ts, ["sliding-window"], { models });
    expect(report.transcripts).toBe(3);
    expect(report.dataProblems).toEqual([
      { id: "orphan", problems: ts[1].problems },
      { id: "unanswered", problems: ts[2].problems },
    ]);
    const table = renderTable(report);
    expect(table).toContain("data problems in 2 of 3 transcripts (compared as recorded):");
    for (const p of [...(ts[1].problems ?? []), ...(ts[2].problems ?? [])]) {
      expect(table).toContain(`\n  ${p}`);
      expect(renderHtml(report)).toContain(p.replace("<", "&lt;").replace(">", "&gt;"));
    }
    expect(renderHtml(report)).toContain("data problems in 2 of 3 transcripts (compared as recorded):");
    // A clean corpus says nothing of them.
    const clean = await compareStrategies([booking], ["sliding-window"], { models });
    expect(clean.dataProblems).toEqual([]);
    expect(renderTable(clean)).not.toContain("data problems");
    expect(renderHtml(clean)).not.toContain("data problems");
  });

  it("refuses a line nested too deeply to measure, with its line and column, instead of crashing the run", async () => {
    // 20,000 levels in a field compact() keeps and never reads: the reader took it, and the rolling
    // summary's fingerprint (JSON.stringify) then overflowed the stack, a host stack trace.
    const deep = { ...booking, id: "deep", messages: booking.messages.map((m, i) => (i === 1 ? { ...m, extra: "DEEP" } : m)) };
    const line = JSON.stringify(deep).replace('"DEEP"', `${"[".repeat(20_000)}${"]".repeat(20_000)}`);
    const column = line.indexOf("[[[") + 1 + (512 - 3);
    expect(() => parseTranscripts(`${JSON.stringify(booking)}\n${line}`, "t.jsonl")).toThrow(new RegExp(`^t\\.jsonl:2:${column}: nested deeper than 512 levels$`));
    // As deep as the reader takes, it is measured.
    const ok = JSON.stringify(deep).replace('"DEEP"', `${"[".repeat(508)}${"]".repeat(508)}`);
    const r = await compareStrategies(parseTranscripts(ok, "t.jsonl"), [{ name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } }], { models });
    expect(r.rows.find((row) => row.strategy.startsWith("rolling-summary"))?.totals.requests).toBe(3);
  });

  it("reads conversations as the OpenAI SDKs export them, as compact() takes them: content parts, null content beside tool calls, tool_calls/refusal/audio/function_call null", async () => {
    // model_dump() / JSON of a ChatCompletionMessage writes every field, absent ones as null;
    // request messages carry content parts and names. The reader refused all of it.
    const sdk = {
      id: "export",
      messages: [
        { role: "system", content: "You read receipts." },
        { role: "user", name: "ann", content: [{ type: "text", text: "What does this receipt total?" }, { type: "image_url", image_url: { url: "https://example.com/r.png", detail: "high" } }] },
        { role: "assistant", content: null, refusal: null, annotations: [], audio: null, function_call: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "ocr", arguments: '{"page":1}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "TOTAL 42.50 EUR" },
        { role: "assistant", content: "It totals 42.50 EUR.", refusal: null, annotations: [], audio: null, function_call: null, tool_calls: null },
        { role: "user", content: [{ type: "text", text: "And the tax?" }] },
        { role: "assistant", content: "8.50 EUR.", refusal: null, audio: null, function_call: null, tool_calls: null },
      ],
    };
    const [t] = parseTranscripts(JSON.stringify(sdk), "sdk.jsonl");
    // tool_calls: null is no tool call (normalized to absent); parts are kept, image included.
    expect(t.messages.map((m) => "tool_calls" in m)).toEqual([false, false, true, false, false, false, false]);
    expect(t.messages[1].content).toEqual(sdk.messages[1].content);
    const r = await compareStrategies([t], [{ name: "sliding-window", options: { turns: 1 } }], { models });
    const full = r.rows[0];
    // The image part is counted: the same conversation without it sends fewer tokens.
    const textOnly = { ...t, messages: t.messages.map((m, i) => (i === 1 ? { ...m, content: [{ type: "text", text: "What does this receipt total?" }] } : m)) };
    const without = await compareStrategies([textOnly], [], { models });
    expect(full.totals.inputTokens).toBeGreaterThan(without.rows[0].totals.inputTokens + 100);
    // What compact() refuses, the reader refuses too, with the line and the message.
    const bad = (m: object): string => JSON.stringify({ id: "x", messages: [{ role: "user", content: "hi" }, m] });
    expect(() => parseTranscripts(bad({ role: "assistant", content: 7 }), "t.jsonl")).toThrow(/^t\.jsonl:1: at messages\.1/);
    expect(() => parseTranscripts(bad({ role: "assistant", content: ["hi"] }), "t.jsonl")).toThrow(/^t\.jsonl:1: at messages\.1/);
    expect(() => parseTranscripts(bad({ role: "assistant", content: null, tool_calls: [{ id: "c", type: "function", function: { name: "f" } }] }), "t.jsonl")).toThrow(/^t\.jsonl:1: at messages\.1/);
    // An Anthropic-shaped transcript was read with its tool_use input and tool_result output counted as nothing: full kept 0% of a value its result held.
    expect(() => parseTranscripts(bad({ role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] }), "t.jsonl")).toThrow(/^t\.jsonl:1: at messages\.1\.content\.0: has an Anthropic tool_use block \(content part 0\)/);
  });

  it("refuses a probe that points outside its conversation or needs a value before it is said, which would be silently uncounted or scored against every strategy", () => {
    const line = (probe: object): string => JSON.stringify({ ...booking, probes: [probe] });
    const probe = booking.probes?.[0] as object;
    expect(() => parseTranscripts(`${JSON.stringify({ ...booking, id: "first" })}\n${line({ ...probe, introduced_at: 40 })}`, "t.jsonl")).toThrow(/^t\.jsonl:2: at probes\.0\.introduced_at: 40 is not the index of one of the 7 messages$/);
    expect(() => parseTranscripts(line({ ...probe, needed_at: [6, 99] }), "t.jsonl")).toThrow(/^t\.jsonl:1: at probes\.0\.needed_at\.1: 99 is not the index of one of the 7 messages$/);
    expect(() => parseTranscripts(line({ ...probe, needed_at: [2] }), "t.jsonl")).toThrow(/^t\.jsonl:1: at probes\.0\.needed_at\.0: a value is needed only after it is introduced \(at 3\)$/);
    expect(() => parseTranscripts(line({ ...probe, mentions: [3, 70] }), "t.jsonl")).toThrow(/^t\.jsonl:1: at probes\.0\.mentions\.1: 70 is not the index/);
    // Only replies' prompts are measured: a need with no reply at or after it could never be counted.
    const tail = { ...booking, messages: [...booking.messages, { role: "user", content: "Thanks, Zed here." }] };
    expect(() => parseTranscripts(JSON.stringify({ ...tail, probes: [{ ...probe, needed_at: [6, 7] }] }), "t.jsonl")).toThrow(/^t\.jsonl:1: at probes\.0\.needed_at\.1: no assistant message at or after message 7, so no prompt would measure it$/);
  });

  it("refuses goal starts that are not user messages in order, which the detector's score would silently skip", () => {
    const line = (goals: object[]): string => JSON.stringify({ ...booking, goals });
    expect(() => parseTranscripts(line([{ start: 1, label: "a" }, { start: 4, label: "b" }]), "t.jsonl")).toThrow(/^t\.jsonl:1: at goals\.1\.start: message 4 \(assistant\) is not the user message that opens a goal$/);
    expect(() => parseTranscripts(line([{ start: 3, label: "a" }, { start: 1, label: "b" }]), "t.jsonl")).toThrow(/^t\.jsonl:1: at goals\.1\.start: goals start in order \(after 3\)$/);
    expect(() => parseTranscripts(line([{ start: 1, label: "a" }, { start: 9, label: "b" }]), "t.jsonl")).toThrow(/^t\.jsonl:1: at goals\.1\.start: 9 is not the index of one of the 7 messages$/);
    expect(parseTranscripts(line([{ start: 1, label: "a" }, { start: 3, label: "b" }]), "t.jsonl")).toHaveLength(1);
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
    // "Zed." and "4 of us." name no domain: the detector claims no boundary, so it has no precision (it printed 0.0%).
    expect(r.stdout).toMatch(/\ngoal boundaries, domain detector: precision - \(no boundary claimed\), recall 0\.0% \(0 found, 0 false, 1 missed\)\n$/);
    // The JSON report carries the same precision and recall.
    const json = JSON.parse((await cli([labelled, "--strategy", "full", "--json", "-"])).stdout) as { goalDetector: { precision: number | null; recall: number; truePositives: number } };
    expect(json.goalDetector).toMatchObject({ precision: null, recall: 0, truePositives: 0 });
    expect(r.stdout).toContain(`recall ${percentText(json.goalDetector.recall)}`);
  });

  // Read up to 512 MB and parsed whole before its kind was known; view and trace show refuse past MAX_INPUT_BYTES.
  it("refuses a file past the input limit ptc view and ptc trace show keep, before reading it", async () => {
    const big = join(dir, "big.jsonl");
    writeFileSync(big, `${JSON.stringify(booking)}\n`);
    truncateSync(big, MAX_INPUT_BYTES + 1);
    const r = await cli([big, "--strategy", "full"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`ptc compare: ${big} is too large to compare (more than ${MAX_INPUT_BYTES} bytes)\n`);
  });

  it("refuses a strategy's bad options before replaying anything", async () => {
    // A typo (turn for turns) was found only when its turn came: after full had replayed every transcript.
    const r = await cli([file, "--strategy", "sliding-window:turns=1", "--strategy", "sliding-window:turn=3"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^ptc compare: compaction: invalid options for strategy "sliding-window":[\s\S]*"turn"/);
    expect(r.stderr).not.toMatch(/transcript runs/);
    expect((await cli([file, "--strategy", "nope"])).stderr).toMatch(/^ptc compare: compaction: unknown strategy "nope"/);
    // An option given twice kept the last silently (the table said turns=3 of a run asked for 2 and 3); "__proto__" set the options' prototype, which the strict schema read as options.
    const twice = await cli([file, "--strategy", "sliding-window:turns=2,turns=3"]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toBe("ptc compare: --strategy sliding-window: option turns is given twice\n");
    const proto = await cli([file, "--strategy", 'sliding-window:__proto__={"turns":1}']);
    expect(proto.code).toBe(2);
    expect(proto.stderr).toMatch(/^ptc compare: compaction: invalid options for strategy "sliding-window":[\s\S]*"__proto__"/);
  });

  it("prints the table and writes the JSON report", async () => {
    const json = join(dir, "report.json");
    const r = await cli([file, "--strategy", "sliding-window:turns=1", "--json", json]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^corpus: .*booking\.jsonl; summarizer: facts\nprice model gpt-4o: .*\nprice model claude-sonnet-4: .*breakpoint cache at message boundaries.*\nptc-lisp \S+, \d{4}-\d\d-\d\dT.*, run time \d+\.\d s\n1 transcripts, 7 messages/);
    expect(r.stdout).toMatch(/\nsliding-window:turns=1 +\d/);
    const report = JSON.parse(readFileSync(json, "utf8")) as { rows: Array<{ strategy: string; options: unknown; retention: number }> };
    expect(report.rows[1]).toMatchObject({ strategy: "sliding-window:turns=1", options: { turns: 1 }, retention: 0 });
  });

  it("takes JSON option values with commas in them (lists, objects)", async () => {
    const json = join(dir, "lists.json");
    const r = await cli([file, "--strategy", 'observation-masking:neverMask=["bash","view"],turns=1', "--strategy", 'rolling-summary:trigger={"name":"token-threshold","options":{"maxTokens":50}},roundsToRetain=1', "--json", json]);
    expect(r.stderr).not.toMatch(/expected key=value/);
    expect(r.code).toBe(0);
    const report = JSON.parse(readFileSync(json, "utf8")) as { rows: Array<{ options: unknown }> };
    expect(report.rows.slice(1, 3).map((row) => row.options)).toEqual([
      { neverMask: ["bash", "view"], turns: 1 },
      { trigger: { name: "token-threshold", options: { maxTokens: 50 } }, roundsToRetain: 1 },
    ]);
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

  it("puts the cache models' table and the goal detector's score in the HTML report too, not only in the table and the JSON", async () => {
    // With --html - the table is not printed: the --caches run (a replay per strategy and cache
    // model) and the detector's score were measured and then shown nowhere.
    const labelled = join(dir, "goals-html.jsonl");
    writeFileSync(labelled, `${JSON.stringify({ ...booking, goals: [{ start: 1, label: "booking" }, { start: 5, label: "party" }] })}\n`);
    const r = await cli([labelled, "--strategy", "sliding-window:turns=1", "--caches", "--html", "-"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("<h2>Cost against full under each cache model</h2>");
    expect(r.stdout).toMatch(/<th>cost token-prefix<\/th><th>cost breakpoint<\/th><th>cost none<\/th>/);
    expect(r.stdout).toMatch(/<tr><td>sliding-window:turns=1<\/td><td>[\d,]+<\/td><td>[\d.]+%<\/td><td>[\d.]+x<\/td>/);
    expect(r.stdout).toContain("<p>goal boundaries, domain detector: precision - (no boundary claimed), recall 0.0% (0 found, 0 false, 1 missed)</p>");
    // Without them, the page has neither.
    const plain = await cli([file, "--strategy", "sliding-window:turns=1", "--html", "-"]);
    expect(plain.stdout).not.toContain("each cache model");
    expect(plain.stdout).not.toContain("goal boundaries");
  });

  it("refuses a --json or --html that names a transcript file or the other report, which would be overwritten", async () => {
    const corpus = join(dir, "keep.jsonl");
    writeFileSync(corpus, `${JSON.stringify(booking)}\n`);
    const both = join(dir, "both.out");
    for (const [args, message] of [
      [["--html", corpus], /--html .*keep\.jsonl is one of the transcript files/],
      [["--json", join(dir, ".", "keep.jsonl")], /--json .*keep\.jsonl is one of the transcript files/],
      [["--json", both, "--html", both], /--json and --html name the same file/],
    ] as Array<[string[], RegExp]>) {
      const r = await cli([corpus, "--strategy", "full", ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(readFileSync(corpus, "utf8")).toBe(`${JSON.stringify(booking)}\n`);
    expect(existsSync(both)).toBe(false);
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
    expect(page.match(/<rect /g)).toHaveLength(4);
    expect(page).toContain("sliding-window:turns=1: cost");
    // full is plotted too, every point and bar carries its number, and the page says what was measured.
    expect(page).toContain("full: cost 1.000x full");
    expect(page.match(/<text class="label"/g)?.length).toBeGreaterThanOrEqual(8);
    expect(page).toMatch(/price model gpt-4o: .*token-prefix cache/);
    expect(page).toContain("<th>&gt;20</th>");
    expect(page).toContain("<polyline");
    expect(page).toMatch(/sliding-window:turns=1: the cache breaks at request \d/);
    // Nothing is loaded from anywhere.
    expect(page).not.toMatch(/(src|href)=|https?:/);
  });

  it("escapes a price model's name in the HTML report's table", async () => {
    const html = join(dir, "named.html");
    const r = await cli([file, "--strategy", "sliding-window:turns=1", "--model", "gpt-4o<b id=x>", "--html", html]);
    expect(r.code).toBe(0);
    const page = readFileSync(html, "utf8");
    expect(page).not.toContain("<b id=x>");
    expect(page).toContain("<th>cost gpt-4o&lt;b id=x&gt;</th>");
  });

  it("refuses a transcript file given twice, which would count its conversations twice in every total", async () => {
    for (const again of [file, join(dir, ".", "booking.jsonl")]) {
      const r = await cli([file, again, "--strategy", "full"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/booking\.jsonl is given twice/);
      expect(r.stdout).toBe("");
    }
  });

  it("refuses a bad strategy, limit or file with exit 2 and a reason", async () => {
    expect(await cli([file, "--strategy", "nope"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown strategy "nope"/) });
    expect(await cli([file, "--strategy", "sliding-window:turns=0"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/invalid options for strategy "sliding-window"/) });
    expect(await cli([file, "--limit", "0"])).toMatchObject({ code: 2, stderr: expect.stringMatching(/--limit takes a whole number/) });
    expect(await cli([join(dir, "absent.jsonl")])).toMatchObject({ code: 2, stderr: expect.stringMatching(/cannot read .*absent\.jsonl \(ENOENT\)/) });
    expect((await cli([])).code).toBe(2);
  });
});

describe("ptc compare on PTC-Lisp runs", () => {
  const dir = mkdtempSync(join(tmpdir(), "ptc-compare-runs-"));
  const cli = async (args: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await runCli(["compare", ...args], { stdin: Readable.from([""]), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    return { code, stdout, stderr };
  };
  type Report = { transcripts: number; rows: Array<{ strategy: string; triggered: boolean; reduction: number; totals: { compacted: number } }> };
  const row = (r: Report, name: string) => r.rows.find((x) => x.strategy === name);

  it("measures interpreter-summaries on a saved run, a bare trace and a run state, from the run's turn records", async () => {
    // Five turns: the legend heading the first summary makes the first prompts of a shorter run
    // larger than full history; from the third prompt on the summaries save more.
    const example = findExample("exploration") as Example;
    const step = await runExample(example);
    const files = {
      run: join(dir, "run.json"),
      trace: join(dir, "trace.json"),
      state: join(dir, "state.json"),
    };
    writeFileSync(files.run, runToJson(step));
    writeFileSync(files.trace, traceToJson(step.trace));
    writeFileSync(files.state, runStateToJson(saveRun(step, exampleAgent(example))));
    for (const file of Object.values(files)) {
      const r = await cli([file, "--strategy", "interpreter-summaries", "--strategy", "sliding-window:turns=1,unit=step", "--json", "-"]);
      expect(r.code, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout) as Report;
      expect(report.transcripts).toBe(1);
      // Built from the compressed turn records: the strategy acted, and its prompts ended smaller.
      expect(row(report, "interpreter-summaries")).toMatchObject({ triggered: true });
      expect(row(report, "interpreter-summaries")?.totals.compacted).toBeGreaterThan(0);
      expect(row(report, "interpreter-summaries")?.reduction).toBeGreaterThan(0);
    }
  });

  it("names two saved runs of one file name apart, and refuses a conversation id an earlier file has, which the report's rows and ptc view could not tell apart", async () => {
    const step = await runExample(findExample("exploration") as Example);
    const runs = [join(dir, "a"), join(dir, "b")].map((d) => {
      mkdirSync(d, { recursive: true });
      writeFileSync(join(d, "run.json"), runToJson(step));
      return join(d, "run.json");
    });
    const r = await cli([...runs, "--strategy", "sliding-window", "--json", "-"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { rows: Array<{ perTranscript: Array<{ id: string }> }> };
    expect(report.rows[0].perTranscript.map((p) => p.id)).toEqual(["run.json", runs[1]]);
    const again = join(dir, "again.jsonl");
    writeFileSync(again, JSON.stringify(booking) + "\n");
    const first = join(dir, "first.jsonl");
    writeFileSync(first, JSON.stringify({ ...booking, id: "other" }) + "\n" + JSON.stringify(booking) + "\n");
    const twice = await cli([first, again]);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`ptc compare: ${again}: conversation id "booking" is also the id of a conversation in ${first}: give each conversation its own id`);
  });

  it("measures it on JSON lines that carry a run's trace, and refuses messages that are not the trace's history", async () => {
    const step = await runExample(findExample("exploration") as Example);
    const trace = JSON.parse(traceToJson(step.trace)) as unknown;
    const lines = join(dir, "runs.jsonl");
    writeFileSync(lines, `${JSON.stringify({ id: "exploration", trace })}\n${JSON.stringify({ id: "plain", messages: booking.messages })}\n`);
    const r = await cli([lines, "--strategy", "interpreter-summaries", "--json", "-"]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as Report & { rows: Array<{ perTranscript: Array<{ id: string; metrics: { compacted: number } }> }> };
    const per = report.rows[1].perTranscript;
    expect(per.map((p) => p.id)).toEqual(["exploration", "plain"]);
    expect(per[0].metrics.compacted).toBeGreaterThan(0);
    // A chat without turn records has nothing for it to summarize from.
    expect(per[1].metrics.compacted).toBe(0);
    const wrong = join(dir, "wrong.jsonl");
    writeFileSync(wrong, `${JSON.stringify({ id: "reviews", trace, messages: booking.messages })}\n`);
    expect(await cli([wrong])).toMatchObject({ code: 2, stderr: expect.stringMatching(/wrong\.jsonl:1: at messages: they are not the trace's full history/) });
    const broken = join(dir, "broken.jsonl");
    writeFileSync(broken, `${JSON.stringify({ id: "x", trace: { turns: "no" } })}\n`);
    expect(await cli([broken])).toMatchObject({ code: 2, stderr: expect.stringMatching(/broken\.jsonl:1: at trace: /) });
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

  it("has no precision for a detector that claimed no boundary, and no recall without labelled ones: not 0%", async () => {
    // A detector that never says "new goal" made no false claim: its precision read 0.0%, as if every claim were wrong.
    const { detectorLine, scoreDetector } = await import("../../src/harness/goals.js");
    const never = { name: "never", usesLlm: false, isNewGoal: async () => ({ newGoal: false, llmCalls: 0, inputTokens: 0, outputTokens: 0 }) };
    const chat: Transcript = { id: "g", messages: [{ role: "user", content: "hotel" }, { role: "assistant", content: "ok" }, { role: "user", content: "taxi" }], goals: [{ start: 0, label: "hotel" }, { start: 2, label: "taxi" }] };
    const score = await scoreDetector(never, [chat]);
    expect(score).toEqual({ truePositives: 0, falsePositives: 0, falseNegatives: 1, precision: null, recall: 0 });
    expect(detectorLine("domain", score)).toBe("goal boundaries, domain detector: precision - (no boundary claimed), recall 0.0% (0 found, 0 false, 1 missed)");
    const oneGoal: Transcript = { ...chat, goals: [{ start: 0, label: "hotel" }] };
    const always = { ...never, isNewGoal: async () => ({ newGoal: true, llmCalls: 0, inputTokens: 0, outputTokens: 0 }) };
    expect(detectorLine("domain", await scoreDetector(always, [oneGoal]))).toBe("goal boundaries, domain detector: precision 0.0%, recall - (no labelled boundary) (0 found, 1 false, 0 missed)");
  });
});

describe("ptc compare reports that stand alone", () => {
  const dir = mkdtempSync(join(tmpdir(), "ptc-compare-alone-"));
  // Long enough that rolling-summary folds rounds into a summary.
  const long: Transcript = {
    id: "long",
    messages: [{ role: "system", content: "You book tables." }, ...Array.from({ length: 12 }, (_, i) => [
      { role: "user" as const, content: `Request ${i}: a table at 19:${10 + i} under the name Person${i}, please. We would like to sit somewhere quiet if that is at all possible, and thank you very much for all of your help with this today.` },
      { role: "assistant" as const, content: `Booked a table at 19:${10 + i} for Person${i}. I have noted that you would like a quiet table and passed that on. Is there anything else I can do for you today?` },
    ]).flat()],
    probes: [{ fact: "name", value: "Person1", introduced_at: 3, needed_at: [24] }],
  };
  const file = join(dir, "long.jsonl");
  writeFileSync(file, `${JSON.stringify(long)}\n`);
  const cli = async (args: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await runCli(["compare", ...args], { stdin: Readable.from([""]), stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) } });
    return { code, stdout, stderr };
  };

  it("refuses a model the price table does not know, listing the known ones", async () => {
    const r = await cli([file, "--model", "gpt-9-ultra"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown model "gpt-9-ultra" \(known: .*gpt-4o.*claude-sonnet-4/);
  });

  it("refuses a price model given twice, which made two identical cost columns of one name", async () => {
    const r = await cli([file, "--strategy", "sliding-window", "--model", "gpt-4o", "--model", "claude-sonnet-4", "--model", "gpt-4o", "--json", "-"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("ptc compare: --model gpt-4o is given twice: its costs would be shown twice\n");
    expect(r.stdout).toBe("");
  });

  it("writes JSON to standard output with --json -, with what was measured, and progress to stderr", async () => {
    const r = await cli([file, "--strategy", "rolling-summary", "--json", "-"]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { meta: { corpus: string[]; summarizer: string; version: string }; models: Array<{ model: string }>; rows: Array<{ strategy: string; costRatios: number[]; retentionByDistance: { far: number | null } }> };
    expect(report.meta.corpus).toEqual([file]);
    expect(report.meta.summarizer).toBe("facts");
    expect(report.models.map((m) => m.model)).toEqual(["gpt-4o", "claude-sonnet-4"]);
    expect(report.rows[1].costRatios).toHaveLength(2);
    expect(report.rows[1].retentionByDistance.far).toBe(1);
    expect(r.stderr).toMatch(/ptc compare: 4\/4 transcript runs\n$/);
    expect(existsSync(join(process.cwd(), "-"))).toBe(false);
  });

  it("refuses a strategy given twice, which was measured twice into two rows of one name", async () => {
    const r = await cli([file, "--strategy", "sliding-window:turns=1", "--strategy", "rolling-summary", "--strategy", "sliding-window:turns=1", "--json", "-"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("ptc compare: --strategy sliding-window:turns=1 is given twice: it would be measured twice\n");
    expect(r.stdout).toBe("");
    const experiment = await cli(["--experiment", "--strategy", "rolling-summary", "--strategy", "rolling-summary", "--json", "-"]);
    expect(experiment.code).toBe(2);
    expect(experiment.stderr).toBe("ptc compare: --strategy rolling-summary is given twice: it would be measured twice\n");
  });

  it("refuses one strategy spelled two ways (a number written otherwise, options in another order, an empty option list)", async () => {
    for (const [a, b] of [["sliding-window:turns=3", "sliding-window:turns=3.0"], ["rolling-summary:roundsToCompress=2,roundsToRetain=4", "rolling-summary:roundsToRetain=4,roundsToCompress=2"], ["rolling-summary", "rolling-summary:"]]) {
      const r = await cli([file, "--strategy", a, "--strategy", b, "--json", "-"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`ptc compare: --strategy ${b} is given twice (as ${a}): it would be measured twice\n`);
      expect(r.stdout).toBe("");
    }
  });

  it("writes the HTML report to standard output with --html -, instead of the table, never to a file named -", async () => {
    const r = await cli([file, "--strategy", "rolling-summary", "--html", "-"]);
    expect(r.code).toBe(0);
    expect(r.stdout.startsWith("<!doctype html>")).toBe(true);
    expect(r.stdout).not.toMatch(/^strategy/m);
    expect(existsSync(join(process.cwd(), "-"))).toBe(false);
    // Both on standard output would run into each other: refused before the run.
    const both = await cli([file, "--strategy", "rolling-summary", "--json", "-", "--html", "-"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--json - and --html - both name standard output/);
    expect(both.stdout).toBe("");
    expect(existsSync(join(process.cwd(), "-"))).toBe(false);
  });

  it("the facts summary keeps the far name that the copy baseline keeps only by copying", async () => {
    const facts = JSON.parse((await cli([file, "--strategy", "rolling-summary", "--json", "-"])).stdout) as { rows: Array<{ reduction: number; retention: number }> };
    const copy = JSON.parse((await cli([file, "--strategy", "rolling-summary", "--summarizer", "copy", "--json", "-"])).stdout) as { rows: Array<{ reduction: number; retention: number }> };
    expect(facts.rows[1].retention).toBe(1);
    expect(facts.rows[1].reduction).toBeGreaterThan(copy.rows[1].reduction);
  });

  describe("--summarizer-llm against an OpenAI-compatible server", () => {
    let upstream: FakeUpstream;
    beforeAll(async () => {
      upstream = await startFakeUpstream({ summary: () => JSON.stringify({ ConversationSummary: "Tables booked for Person0 to Person9." }) });
    });
    afterAll(async () => {
      vi.unstubAllEnvs();
      await upstream.close();
    });

    it("summarizes through the server and adds every call's tokens to the strategy's cost", async () => {
      vi.stubEnv("OPENAI_BASE_URL", upstream.url);
      vi.stubEnv("OPENAI_API_KEY", "sk-local");
      const withLlm = JSON.parse((await cli([file, "--strategy", "rolling-summary", "--summarizer-llm", "gpt-4o-mini", "--json", "-"])).stdout) as {
        meta: { summarizer: string };
        rows: Array<{ strategy: string; totals: { llmCalls: number; llmTokens: number; cost: number; costs: number[] } }>;
      };
      expect(withLlm.meta.summarizer).toBe("llm:gpt-4o-mini");
      const row = withLlm.rows[1];
      expect(row.strategy).toBe("rolling-summary:summarizer=llm,summaryModel=gpt-4o-mini");
      expect(upstream.summaryCalls).toBeGreaterThan(0);
      expect(row.totals.llmCalls).toBe(upstream.summaryCalls);
      expect(row.totals.llmTokens).toBeGreaterThan(0);
      expect(row.totals.cost).toBe(row.totals.costs[0]);
    });

    it("says when the summarizer's model is not in the price table, and what its calls were priced at", async () => {
      // A local model's calls were billed at the fallback price, and the report did not say so.
      vi.stubEnv("OPENAI_BASE_URL", upstream.url);
      vi.stubEnv("OPENAI_API_KEY", "sk-local");
      const r = await cli([file, "--strategy", "rolling-summary", "--summarizer-llm", "llama3-local"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^corpus: .*; summarizer: llm:llama3-local \(not in the price table: its calls are priced at \$1\/\$4 per M input\/output tokens\)\n/);
    });

    // The strategies were told to summarize through a model but not which one: cost-trigger priced
    // the summary call at the conversation's model, so a dearer summarizer made it fire where the
    // call costs more than it saves.
    it("tells the strategies the summary model, so cost-trigger prices its call by it", async () => {
      vi.stubEnv("OPENAI_BASE_URL", upstream.url);
      vi.stubEnv("OPENAI_API_KEY", "sk-local");
      const run = async (summarizer: string) => {
        const r = await cli([file, "--model", "gpt-4o-mini", "--strategy", "cost-trigger:remainingTurns=30", "--summarizer-llm", summarizer, "--json", "-"]);
        expect(r.code).toBe(0);
        return (JSON.parse(r.stdout) as { rows: Array<{ strategy: string; costRatio: number; totals: { llmCalls: number } }> }).rows[1];
      };
      const cheap = await run("gpt-4o-mini");
      expect(cheap.strategy).toBe("cost-trigger:remainingTurns=30,summarizer=llm,summaryModel=gpt-4o-mini");
      expect(cheap.totals.llmCalls).toBeGreaterThan(0);
      expect(cheap.costRatio).toBeLessThan(1);
      const dear = await run("claude-opus-4-1");
      expect(dear.totals.llmCalls).toBe(0);
      expect(dear.costRatio).toBeLessThanOrEqual(1);
    });

    it("with --caches, the cache table summarizes through the same server", async () => {
      // The cache table was run without the model client: every summary strategy threw
      // 'summarizer "llm" needs an llm' and the command failed after the main table was measured.
      vi.stubEnv("OPENAI_BASE_URL", upstream.url);
      vi.stubEnv("OPENAI_API_KEY", "sk-local");
      const before = upstream.summaryCalls;
      const r = await cli([file, "--strategy", "rolling-summary", "--summarizer-llm", "gpt-4o-mini", "--caches", "--json", "-"]);
      expect(r.stderr).not.toMatch(/needs an llm/);
      expect(r.code).toBe(0);
      const report = JSON.parse(r.stdout) as { rows: Array<{ totals: { llmCalls: number } }>; caches: { rows: Array<{ strategy: string; llmCalls: number }> } };
      expect(report.caches.rows[1].strategy).toBe("rolling-summary:summarizer=llm,summaryModel=gpt-4o-mini");
      expect(report.caches.rows[1].llmCalls).toBe(report.rows[1].totals.llmCalls);
      expect(upstream.summaryCalls).toBeGreaterThan(before);
    });
  });
});

// A transcript longer than the model's window (a synthetic one, or one replayed under a smaller
// model than it was had with) was priced as if every prompt had been sent: full history's
// 1.000x stood for requests no app could have made, and nothing said so.
describe("prompts larger than the model's context window", () => {
  // 12 turns of about 14,500 tokens each: full history passes gpt-4o's 128,000 tokens at the 9th
  // request, never claude-sonnet-4's 200,000.
  const long: Transcript = {
    id: "long",
    messages: [
      { role: "system", content: "You read logs." },
      ...Array.from({ length: 12 }, (_, i) => [
        { role: "user" as const, content: `log part ${i}: ` + Array.from({ length: 5_000 }, (_, k) => `w${(k * 7919 + i) % 10_007}`).join(" ") },
        { role: "assistant" as const, content: `Part ${i} read.` },
      ]).flat(),
    ],
    probes: [],
  };

  it("counts them per strategy and says which model's window they pass", async () => {
    const r = await compareStrategies([long], [{ name: "sliding-window", options: { turns: 2 } }], { models });
    const [full, window] = r.rows;
    const sizes: number[] = [];
    for (let j = 2; j < long.messages.length; j += 2) sizes.push(promptTokens(long.messages.slice(0, j)));
    const over = sizes.filter((n) => n > 128_000).length;
    expect(over).toBeGreaterThan(0);
    expect(over).toBeLessThan(sizes.length);
    expect(full.totals.overWindow).toBe(over);
    expect(window.totals.overWindow).toBe(0);
    const table = renderTable(r);
    expect(table).toContain(`full: ${over} of 12 requests have a prompt larger than gpt-4o's context window (128,000 tokens); no app could have sent them, and they are priced as if sent`);
    expect(table).not.toMatch(/\nsliding-window[^\n]*context window/);
    expect(renderHtml(r)).toContain(`full: ${over} of 12 requests have a prompt larger than gpt-4o's context window`);
    // The viewer reads the same lines from the JSON report.
    const view = projectReport(compareReportSchema.parse(JSON.parse(JSON.stringify(r))), "report.json", "r");
    expect(view.tableNotes).toEqual([`full: ${over} of 12 requests have a prompt larger than gpt-4o's context window (128,000 tokens); no app could have sent them, and they are priced as if sent`]);
  });

  it("reads the window of the first model, the conversations' own", async () => {
    const r = await compareStrategies([long], [], { models: ["claude-sonnet-4", "gpt-4o"] });
    expect(r.rows[0].totals.overWindow).toBe(0);
    expect(renderTable(r)).not.toContain("context window");
  });

  it("claims no window for a model nobody knows (the 8,192-token fallback is a guess)", async () => {
    const r = await compareStrategies([long], [], { models: ["my-local-model"] });
    expect(r.rows[0].totals.overWindow).toBe(0);
    expect(r.contextWindow).toBeNull();
    expect(renderTable(r)).not.toContain("context window");
  });
});
