// The viewer's data projections over real runs of the examples: turns, errors, prompts as
// sent against the full history, the prefix-cache break, chart series, nested runs, compare
// reports, the hidden-value scrub, and safe embedding in the page.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { runToJson } from "../../src/agent/saved-run.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { buildPageData } from "../../src/viewer/data.js";
import { readViewerInput, ViewerInputError } from "../../src/viewer/input.js";
import { expandRuns, type MessageRef, type MessageRuns, type PageData, type RunView } from "../../src/viewer/model.js";
import { embedJson, renderPage } from "../../src/viewer/page.js";
import { messageChanges } from "../../src/viewer/prompt.js";
import { placeholderValues, scrubber } from "../../src/viewer/scrub.js";
import { compareStrategies, failureLines, idleLabel } from "../../src/harness/compare.js";
import { parseTranscripts } from "../../src/harness/transcript.js";
import { assistant, sys, user } from "../compaction/conversations.js";
import { chats, compareReportJson, olderTrace, pausedRunJson, savedExample } from "./fixtures.js";
import { withFragile } from "../support/strategies.js";

const page = (files: Array<[string, string]>): Promise<PageData> => buildPageData(files.map(([name, text]) => readViewerInput(name, text)));
const text = (data: PageData, i: number): string => data.texts[i];
const refs = (data: PageData, runs: MessageRuns): MessageRef[] => expandRuns(runs).map((i) => data.messages[i]);

describe("run projection", () => {
  it("shows each turn of the recovery run: the error with its caret excerpt and hint, then the recovery", async () => {
    const data = await page([["recovery.json", await savedExample("recovery")]]);
    expect(data.files).toEqual([{ name: "recovery.json", kind: "run", id: "r1" }]);
    const run = data.runs[0];
    expect(run.turns.map((t) => t.status)).toEqual(["ok", "error", "ok", "returned"]);
    expect(run.turns.map((t) => t.failed)).toEqual([false, true, false, false]);
    const err = run.turns[1].error;
    expect(err?.kind).toBe("type_error");
    expect(err?.line).toBe(2);
    expect(err?.excerpt).toMatch(/\n\s+\|\s+\^/);
    expect(err?.hint).toContain("parse");
    // Failed turns roll back: nothing defined.
    expect(run.turns[1].definitions).toEqual([]);
    expect(run.outcome.ok).toBe(true);
    expect(run.outcome.text).toMatch(/^returned \{/);
    expect(run.totals.turns).toBe(4);
    expect(run.totals.inputTokens).toBe(run.turns.reduce((n, t) => n + t.usage.inputTokens, 0));
    // A scripted model has no price: the cost is unknown, not guessed at another model's prices.
    expect(run.priceModel).toBe("scripted:recovery");
    expect(run.totals.cost).toBeNull();
    expect(run.totals.durationMs).toBeGreaterThan(0);
    const call = run.turns[0].toolCalls[0];
    expect(call.name).toBe("list-orders");
    expect(JSON.parse(call.args)).toEqual({ status: "shipped" });
    expect(call.shape).toMatch(/^vector\[\d+\] of \{:id integer/);
    expect(JSON.parse(call.result as string)).toBeInstanceOf(Array);
    expect(run.turns[0].definitions.map((d) => d.name)).toContain("shipped");
    expect(run.turns[0].output).toContain("Shipped orders:");
  });

  it("pairs each turn's prompt as sent with the full history and marks where the cache prefix breaks", async () => {
    const data = await page([["recovery.json", await savedExample("recovery")]]);
    const [t1, t2, t3] = data.runs[0].turns.map((t) => ({ ...t.prompt, sent: refs(data, t.prompt.sent), full: refs(data, t.prompt.full), dropped: refs(data, t.prompt.dropped) }));
    // Turn 1: system and task, the same in both views, nothing cached before it.
    expect(t1.prefix).toBeNull();
    expect(t1.sent.map((m) => m.role)).toEqual(["system", "user"]);
    expect(t1.full.map((m) => m.text)).toEqual(t1.sent.map((m) => m.text));
    expect(t1.sentTokens).toBe(t1.fullTokens);
    expect(t1.changes).toEqual(["new", "new"]);
    // Turn 2 extends turn 1: its two messages are the cached prefix, the reply and feedback are new.
    expect(t2.full.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(t2.prefix?.messages).toBe(2);
    expect(t2.changes).toEqual(["new", "new"]);
    expect(t2.dropped).toEqual([]);
    expect(t3.full).toHaveLength(6);
    expect(text(data, t3.full[2].text)).toBe(text(data, t2.full[2].text));
    // The system prompt is stored once however many prompts repeat it.
    expect(data.texts.filter((s) => s === text(data, t1.sent[0].text))).toHaveLength(1);
    const chart = data.runs[0].chart;
    expect(chart.map((p) => p.turn)).toEqual([1, 2, 3, 4]);
    expect(chart.every((p, i) => i === 0 || p.fullTokens > chart[i - 1].fullTokens)).toBe(true);
    // A scripted model is no provider: its figures are measured locally, and said to be.
    expect(chart[1].cachedSource).toBe("local");
    expect(chart.map((p) => p.failed)).toEqual([false, true, false, false]);
  });

  it("shows a compressed run's summarized prompts as smaller than the full history, with the compaction events", async () => {
    const data = await page([["exploration.json", await savedExample("exploration", { compressHistory: true })]]);
    const run = data.runs[0];
    expect(run.promptMode).toBe("compressed history");
    const last = run.turns.at(-1)?.prompt;
    expect(last?.summarized).toBeGreaterThan(0);
    expect(last?.sentTokens).toBeLessThan(last?.fullTokens ?? 0);
    const events = run.chart.filter((p) => p.compaction !== undefined);
    expect(events.length).toBeGreaterThan(0);
    expect(events[0].compaction).toMatch(/summarized/);
    // With the design's timing a turn is summarized as soon as the next starts: the prompt
    // extends the one before.
    const k = run.chart.indexOf(events[0]);
    expect(run.turns[k].prompt.prefix?.messages).toBe(expandRuns(run.turns[k - 1].prompt.sent).length);
  });

  it("shows where a summarized prompt rewrites what the one before sent (the earlier timing)", async () => {
    const data = await page([["exploration.json", await savedExample("exploration", { compressHistory: true, view: { keepLatestFull: true } })]]);
    const run = data.runs[0];
    const events = run.chart.filter((p) => p.compaction !== undefined);
    const k = run.chart.indexOf(events[0]);
    const p = run.turns[k].prompt;
    // The previous turn, sent in full, is now its summary: the cache breaks before its end.
    expect(p.prefix?.messages).toBeLessThan(expandRuns(run.turns[k - 1].prompt.sent).length);
    expect(p.changes).toContain("new");
  });

  it("gives a nested agent's run its own entry, linked from the tool call that started it and back", async () => {
    const data = await page([["budget.json", await savedExample("budget-alert")]]);
    expect(data.runs.length).toBeGreaterThan(1);
    const nested = data.runs[1];
    expect(nested.id).toMatch(/^r1\.t\d+\.n1$/);
    expect(nested.parent?.run).toBe("r1");
    const turn = data.runs[0].turns.find((t) => t.number === nested.parent?.turn);
    const call = turn?.toolCalls[nested.parent?.call ?? -1];
    expect(call?.name).toBe(nested.parent?.tool);
    expect(call?.nested).toEqual({ run: nested.id, ok: true });
    expect(nested.turns.length).toBeGreaterThan(0);
  });

  it("shows a call held for the host's approval as held: neither failed nor counted among the calls that ran", async () => {
    const data = await page([["paused.json", await pausedRunJson()]]);
    const run = data.runs[0];
    expect(run.totals.toolCalls).toBe(0);
    expect(run.totals.heldCalls).toBe(1);
    const call = run.turns[1].toolCalls[0];
    expect(call).toMatchObject({ name: "wipe", held: true, shape: "held for the host's approval: it did not run" });
    expect(call.error).toBeUndefined();
    // Where the program stopped for the approval: not an error of the turn.
    expect(run.turns[1].error).toBeUndefined();
    expect(run.outcome).toEqual({ ok: null, paused: true, text: "paused: the run is waiting for the host's approval of tool/wipe (turn-2-call-1)" });
    expect(run.turns[1].pausedAt).toEqual({ heading: "Paused at line 1, column 9, waiting for the host's approval", excerpt: expect.stringContaining("(return (tool/wipe {}))") });
  });

  it("classifies messages against the previous prompt", () => {
    const m = (content: string) => ({ role: "user" as const, content });
    expect(messageChanges(null, [m("a")], 0, 0)).toEqual(["new"]);
    expect(messageChanges([m("a"), m("b"), m("c")], [m("a"), m("bX"), m("c"), m("d")], 1, 2)).toEqual(["changed", "same", "new"]);
    expect(messageChanges([m("a"), m("b")], [m("a"), m("z")], 1, 1)).toEqual(["new"]);
  });
});

describe("hidden context values", () => {
  const lookup = tool({ description: "Looks a customer up.", input: z.object({ token: z.string() }), run: async ({ token }) => ({ echoed: token }) });
  const code = (body: string) => "```clojure\n" + body + "\n```";

  it("are shown nowhere on the page, even from a trace that kept them", async () => {
    const secret = "sk-live-7f3a9c2e11";
    const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 3 });
    const step = await SubAgent.run(agent, {
      llm: scriptedLlm([code('(def r (tool/lookup {:token data/_token}))\n(println "got" (:echoed r))'), code('(println (str "token=" data/_token))'), code("(return :done)")]),
      context: { _token: secret, region: "eu" },
    });
    // The agent's own trace holds no hidden value; an older one did.
    expect(runToJson(step)).not.toContain(secret);
    const json = olderTrace(runToJson(step), { _token: secret });
    expect(json).toContain(secret);
    const data = await page([["run.json", json]]);
    const shown = JSON.stringify(data);
    expect(shown).not.toContain(secret);
    expect(shown).toContain("data/_token");
    // Where the value was, its place is shown instead: the tool's arguments and the output.
    expect(data.runs[0].turns[0].toolCalls[0].args).toContain("data/_token");
    expect(data.runs[0].turns[1].output).toBe("<hidden string derived from data/_token>");
  });

  // The programs the agent's own hidden-context test uses: every way a value could reach a prompt.
  const PROGRAMS = [
    '(def t data/_token)\n(println "token is" t)',
    '(def r (tool/lookup {:token data/_token}))\n(println (:echoed r))',
    '(def auth (str "Bearer " data/_token))\n(def creds data/_creds)',
    "(println (pr-str data/_creds))",
    "(tool/lookup {:token (:secret data/_creds)})\n(+ 1 data/_token)",
    "(return :done)",
  ];

  for (const compressHistory of [false, true]) {
    it(`are found and scrubbed in every way a program can show them (${compressHistory ? "compressed" : "full"} history)`, async () => {
      const token = "sk-test-Ab12Cd34";
      const inner = "sk-inner-Zz9Yy8";
      const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: PROGRAMS.length });
      const step = await SubAgent.run(agent, { llm: scriptedLlm(PROGRAMS.map(code)), context: { _token: token, _creds: { secret: inner, user: "ann" } }, compressHistory });
      expect(runToJson(step)).not.toContain(token);
      const json = olderTrace(runToJson(step), { _token: token, _creds: inner });
      expect(json).toContain(token);
      expect(json).toContain(inner);
      const shown = JSON.stringify(await page([["run.json", json]]));
      expect(shown).not.toContain(token);
      expect(shown).not.toContain(inner);
    });
  }

  it("show as stand-ins in the full history rebuilt from the turns, as in the prompt sent: a full-history run's prompts are the same", async () => {
    // The feedback of a failed turn lists the tool calls that completed, their hidden arguments as stand-ins.
    const programs = ["(tool/lookup {:token data/_token})\n(+ 1 data/_token)", "(return :done)"];
    const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _token: "sk-live-7f3a9c2e11" } });
    const data = await page([["run.json", runToJson(step)]]);
    const prompts = data.runs[0].turns.map((t) => t.prompt);
    expect(prompts.map((p) => expandRuns(p.full))).toEqual(prompts.map((p) => expandRuns(p.sent)));
    expect(prompts.map((p) => p.fullTokens)).toEqual(prompts.map((p) => p.sentTokens));
    expect(text(data, refs(data, prompts[1].full).at(-1)?.text ?? -1)).toContain('tool/lookup {"token":<hidden string from data/_token>}');
  });

  it("are not read off another message that only starts and ends like one sent as it was", async () => {
    // Reply 1 is sent unchanged; reply 2 starts and ends as it does, with more between: no hidden value, and nothing on the page is replaced.
    const programs = ["(println (count data/_token))", "(println (count data/_token))\n(println (count data/_token))", "(return 1)"];
    const agent = SubAgent.create({ prompt: "Count.", maxTurns: 3 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _token: "sk-live-7f3a9c2e11" } });
    const data = await page([["run.json", runToJson(step)]]);
    expect(data.runs[0].turns.map((t) => t.program)).toEqual(programs);
  });

  it("are read off a sent message and the same message rebuilt", () => {
    expect(placeholderValues("got data/_token here", "got sk-123456 here")).toEqual([["_token", "sk-123456"]]);
    expect(placeholderValues("a data/_k b data/_j c", "a 1111 b 2222 c")).toEqual([
      ["_k", "1111"],
      ["_j", "2222"],
    ]);
    expect(placeholderValues("uses data/_token", "uses data/_token")).toEqual([]);
    expect(placeholderValues("x data/_k y", "completely different")).toEqual([]);
  });

  it("are replaced in every spelling an older trace holds them in: as is, printed (EDN) and JSON-escaped", () => {
    const scrub = scrubber(new Map([["_token", new Set(['sk-"q\\1'])]]));
    expect(scrub('tool args {"token":"sk-\\"q\\\\1"}')).toBe('tool args {"token":"data/_token"}');
    expect(scrub('printed {:token "sk-\\"q\\\\1"}')).toBe('printed {:token "data/_token"}');
    expect(scrub('raw sk-"q\\1 here')).toBe("raw data/_token here");
  });
});

describe("page size", () => {
  /** A saved run of `turns` turns under the full history: each prompt repeats every earlier message. */
  async function longRun(turns: number): Promise<string> {
    const lookup = tool({ description: "Looks up an item.", input: z.object({ id: z.number() }), run: (a) => ({ id: a.id, details: "Details of the catalogue entry. ".repeat(5) }) });
    const agent = SubAgent.create({ prompt: "Look up every item.", tools: { lookup }, maxTurns: turns });
    const code = (src: string) => `Next.\n\n\`\`\`clojure\n${src}\n\`\`\``;
    const replies = Array.from({ length: turns - 1 }, (_, i) => code(`(println (:details (tool/lookup {:id ${i}})))`));
    const step = await SubAgent.run(agent, { llm: scriptedLlm([...replies, code("(return 1)")]) });
    expect(step.trace.turns).toHaveLength(turns);
    return runToJson(step);
  }

  it("grows with a run's turns, not their square: each message is listed once, prompts refer to it", async () => {
    // 120 turns of full history send 14,520 messages in all; listed per prompt (sent and full,
    // each with its change mark) they made 1.3 MB of the page besides the texts (now 22 KB).
    const data = await page([["long.json", await longRun(120)]]);
    const run = data.runs[0];
    const last = run.turns[119].prompt;
    expect(expandRuns(last.sent)).toHaveLength(240);
    expect(refs(data, last.full).map((m) => text(data, m.text))).toEqual(refs(data, last.sent).map((m) => text(data, m.text)));
    expect(data.messages).toHaveLength(240);
    const prompts = JSON.stringify(run.turns.map((t) => t.prompt)).length;
    expect(prompts).toBeLessThan(120 * 400);
    const { texts, ...rest } = data;
    expect(JSON.stringify(rest).length).toBeLessThan(120 * 3000);
    expect(texts.length).toBeLessThanOrEqual(240);
  });

  it("refuses runs whose prompts hold more messages in all than a page can list, naming the file, before building it", async () => {
    // A page lists each turn's prompt whole: 1,001 turns sending 1,000 messages each is past the limit.
    const input = readViewerInput("recovery.json", await savedExample("recovery"));
    if (input.kind !== "run") throw new Error("a run was expected");
    const base = input.source.trace.turns[0];
    const messages = Array.from({ length: 1000 }, (_, i) => ({ role: "user" as const, content: `message ${i}` }));
    const turns = Array.from({ length: 1001 }, (_, i) => ({ ...base, number: i + 1, messages }));
    const long = { ...input, name: "long.json", source: { trace: { ...input.source.trace, turns } } };
    await expect(buildPageData([long])).rejects.toThrow(new ViewerInputError("long.json is too large to view: the prompts of the runs shown hold 1,252,502 messages in all (the limit is 1,000,000; each turn's prompt is shown whole, as sent and as the full history)"));
  });

  it("counts the full history each turn's prompt is shown beside, not only the few messages a windowed strategy sent", async () => {
    // 1,001 turns each sending the last turn only (4 messages): the full history rebuilt for
    // turn k holds 2k messages, a million in all, built and compared whole (a 6 MB trace of
    // 4,000 such turns took ten minutes to build).
    const input = readViewerInput("recovery.json", await savedExample("recovery"));
    if (input.kind !== "run") throw new Error("a run was expected");
    const base = input.source.trace.turns[0];
    const messages = base.messages.slice(0, 4);
    const turns = Array.from({ length: 1001 }, (_, i) => ({ ...base, number: i + 1, messages }));
    const windowed = { ...input, name: "windowed.json", source: { trace: { ...input.source.trace, turns } } };
    await expect(buildPageData([windowed])).rejects.toThrow(new ViewerInputError("windowed.json is too large to view: the prompts of the runs shown hold 1,003,002 messages in all (the limit is 1,000,000; each turn's prompt is shown whole, as sent and as the full history)"));
  });
});

describe("compare reports", () => {
  it("projects the table, the per-transcript figures and the longest transcript's series", async () => {
    const json = await compareReportJson();
    const data = await page([["report.json", json]]);
    expect(data.files).toEqual([{ name: "report.json", kind: "report", id: "c1" }]);
    const r = data.reports[0];
    const raw = JSON.parse(json) as { rows: Array<{ strategy: string; totals: { inputTokens: number } }> };
    expect(r.rows.map((row) => row.strategy)).toEqual(raw.rows.map((row) => row.strategy));
    expect(r.rows.map((row) => row.inputTokens)).toEqual(raw.rows.map((row) => row.totals.inputTokens));
    expect(r.rows[0].strategy).toBe("full");
    expect(r.rows[1].reduction).toBeGreaterThan(0);
    expect(r.rows[0].perTranscript.map((p) => p.id)).toEqual(["chat-1", "chat-2", "chat-3"]);
    expect(r.longest?.id).toBe("chat-3");
    expect(r.longest?.series[0].tokens).toHaveLength(14);
    expect(r.rows.every((row) => row.retention !== null)).toBe(true);
  });

  // The text and HTML reports say "never triggered" where such a row's retention would read 100%
  // (it sent everything, so it kept everything: it measured nothing); the page showed 100.0%.
  it("says a strategy that never compacted never triggered, as the text and HTML reports do, instead of its retention", async () => {
    const report = await compareStrategies(chats(), ["recap", "sliding-window"], { models: ["gpt-4o"] });
    const r = (await page([["report.json", JSON.stringify(report)]])).reports[0];
    const raw = report.rows.find((row) => row.strategy === "recap");
    expect(raw?.triggered).toBe(false);
    expect(raw?.retention).toBe(1);
    expect(r.rows.map((row) => [row.strategy, row.idle])).toEqual(report.rows.map((row) => [row.strategy, idleLabel(row)]));
    expect(r.rows.find((row) => row.strategy === "recap")?.idle).toBe("never triggered");
    expect(r.rows.find((row) => row.strategy === "sliding-window")?.idle).toBeUndefined();
  });

  // A strategy that failed on a transcript is left out there, and the report lists it: the page
  // showed its empty figures as 0 tokens, with nothing to say it had failed.
  it("shows where a strategy failed, as the text report lists it, instead of its empty figures", async () => {
    const registry = withFragile((stored) => {
      if (stored.length > 3) throw new TypeError("boom");
      return null;
    });
    const short = { id: "short", messages: [user("hi"), assistant("hello")] };
    const report = await compareStrategies([short, ...chats()], ["fragile"], { models: ["gpt-4o"], registry });
    const r = (await page([["report.json", JSON.stringify(report)]])).reports[0];
    expect(r.failures).toEqual(failureLines(report));
    expect(r.failures?.[0]).toBe("fragile failed on 3 of 4 transcripts (its figures, and full's they are compared with, leave them out):");
    expect(r.rows[1].perTranscript.map((p) => [p.id, p.failed])).toEqual([["short", undefined], ["chat-1", true], ["chat-2", true], ["chat-3", true]]);
    expect(r.rows[0].perTranscript.every((p) => p.failed === undefined)).toBe(true);
  });

  // `ptc compare --json` writes the transcripts no API would have taken and, with --caches, the
  // cost under each cache model; the page showed neither.
  it("projects the report's data problems and its table under each cache model", async () => {
    const json = await compareReportJson();
    const raw = JSON.parse(json) as { dataProblems: unknown; caches: { models: string[]; rows: Array<{ strategy: string; inputTokens: number }> } };
    const r = (await page([["report.json", json]])).reports[0];
    expect(r.dataProblems).toEqual(raw.dataProblems);
    expect(r.dataProblems?.map((p) => p.id)).toEqual(["chat-2"]);
    expect(r.caches?.models).toEqual(["token-prefix", "breakpoint", "none"]);
    expect(r.caches?.rows.map((row) => [row.strategy, row.inputTokens])).toEqual(raw.caches.rows.map((row) => [row.strategy, row.inputTokens]));
  });
});

describe("one transcript under two strategies", () => {
  it("replays the report's longest transcript under full and the strategy that saved most, request by request", async () => {
    const report = readViewerInput("report.json", await compareReportJson());
    const data = await buildPageData([report, { kind: "transcripts", name: "chats.jsonl", transcripts: chats() }]);
    const r = data.reports[0];
    const sbs = r.sideBySide;
    expect(sbs?.transcript).toBe("chat-3");
    expect(sbs?.strategies).toEqual(["full", "sliding-window:turns=2"]);
    expect(sbs?.requests).toHaveLength(14);
    // The replay agrees with the report's own figures for the same strategies.
    for (const k of [0, 1] as const) {
      const series = r.longest?.series.find((s) => s.strategy === sbs?.strategies[k]);
      expect(sbs?.requests.map((q) => q.tokens[k])).toEqual(series?.tokens);
    }
    const last = sbs?.requests.at(-1);
    const [full, window] = (last?.prompts ?? [[], []]).map(expandRuns);
    expect(full).toHaveLength(28);
    expect(window.length).toBeLessThan(28);
    expect(sbs?.messages[window[0]].role).toBe("system");
  });

  it("replays a recorded PTC-Lisp run under interpreter-summaries, from its turn records, as ptc compare measured it", async () => {
    const saved = JSON.parse(await savedExample("exploration")) as { trace: unknown };
    const transcripts = parseTranscripts(`${JSON.stringify({ id: "exploration", trace: saved.trace })}\n`, "run.jsonl");
    const report = readViewerInput("report.json", JSON.stringify(await compareStrategies(transcripts, ["interpreter-summaries"], { models: ["gpt-4o"] })));
    const data = await buildPageData([report, { kind: "transcripts", name: "run.jsonl", transcripts }]);
    const r = data.reports[0];
    expect(r.note).toBeUndefined();
    expect(r.sideBySide?.strategies).toEqual(["full", "interpreter-summaries"]);
    for (const k of [0, 1] as const) {
      const series = r.longest?.series.find((s) => s.strategy === r.sideBySide?.strategies[k]);
      expect(r.sideBySide?.requests.map((q) => q.tokens[k])).toEqual(series?.tokens);
    }
  });

  it("replays a recorded run with hidden context as ptc compare measured it: stand-ins shown, as the agent sent them", async () => {
    // A failed turn's feedback lists its completed calls' arguments, their hidden values stand-ins the turn records keep unshown.
    const lookup = tool({ description: "Looks a customer up.", input: z.object({ token: z.string() }), run: async ({ token }) => ({ found: token.length > 0 }) });
    const code = (body: string) => "```clojure\n" + body + "\n```";
    const programs = ["(tool/lookup {:token data/_token})\n(+ 1 data/_token)", "(println (tool/lookup {:token data/_token}))", "(return :done)"];
    const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 3, compressHistory: true });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _token: "sk-live-7f3a9c2e11" } });
    const transcripts = parseTranscripts(`${JSON.stringify({ id: "hidden", trace: (JSON.parse(runToJson(step)) as { trace: unknown }).trace })}\n`, "run.jsonl");
    const report = readViewerInput("report.json", JSON.stringify(await compareStrategies(transcripts, ["interpreter-summaries"], { models: ["gpt-4o"] })));
    const r = (await buildPageData([report, { kind: "transcripts", name: "run.jsonl", transcripts }])).reports[0];
    expect(r.sideBySide?.strategies).toEqual(["full", "interpreter-summaries"]);
    for (const k of [0, 1] as const) {
      const series = r.longest?.series.find((s) => s.strategy === r.sideBySide?.strategies[k]);
      expect(r.sideBySide?.requests.map((q) => q.tokens[k])).toEqual(series?.tokens);
    }
    // Request 2 is turn 2's prompt: under interpreter-summaries, which the run used, the one its agent sent.
    expect(r.sideBySide?.requests[1].tokens[1]).toBe(step.trace.turns[1].usage.inputTokens);
  });

  it("says so when the transcript holds no request to replay (no assistant reply): no empty side by side, which the page could not draw", async () => {
    const silent = { id: "silent", messages: [sys("You are helpful."), user("Anyone there?"), user("Hello?")] };
    // A comparison needs one request somewhere (compareStrategies refuses a set with none); the silent transcript is the one shown.
    const answered = { id: "answered", messages: [sys("You are helpful."), user("Anyone there?"), assistant("Yes.")] };
    const report = readViewerInput("report.json", JSON.stringify(await compareStrategies([answered, silent], ["sliding-window"], { models: ["gpt-4o"] })));
    const data = await buildPageData([report, { kind: "transcripts", name: "silent.jsonl", transcripts: [silent] }]);
    expect(data.reports[0].sideBySide).toBeUndefined();
    expect(data.reports[0].note).toBe("silent has no request to replay: no assistant reply follows its first message");
  });

  it("lists each request's prompts as runs of message numbers: the page grows with the transcript, not its square", async () => {
    // 400 replies: the full history's prompts hold 2 + 4 + ... + 800 = 160,400 messages, which
    // listed one number each made 640 KB of the page (now 28 KB).
    const messages = [sys("You are helpful.")];
    for (let i = 0; i < 400; i++) messages.push(user(`q${i}`), assistant(`a${i}`));
    const report = readViewerInput("report.json", await compareReportJson());
    const data = await buildPageData([report, { kind: "transcripts", name: "long.jsonl", transcripts: [{ id: "chat-3", messages }] }]);
    const sbs = data.reports[0].sideBySide;
    const last = sbs?.requests.at(-1);
    expect(sbs?.requests).toHaveLength(400);
    expect(expandRuns(last?.prompts[0] ?? []).map((i) => sbs?.messages[i].role)).toEqual(messages.slice(0, 800).map((m) => m.role));
    expect(JSON.stringify(sbs?.requests).length).toBeLessThan(400 * 100);
  });

  it("says so when the transcript is too long to list every request's prompts, and still shows the report", async () => {
    // The report's longest transcript, grown to 3,200 replies: the full history's prompts hold 2 + 4 + ... + 6,400 = 10,243,200 messages.
    const messages = [sys("You are helpful.")];
    for (let i = 0; i < 3200; i++) messages.push(user(`q${i}`), assistant(`a${i}`));
    const report = readViewerInput("report.json", await compareReportJson());
    const data = await buildPageData([report, { kind: "transcripts", name: "long.jsonl", transcripts: [{ id: "chat-3", messages }] }]);
    expect(data.reports[0].sideBySide).toBeUndefined();
    expect(data.reports[0].note).toBe("chat-3 is too long to show side by side: its requests' prompts hold 10,243,200 messages in all (the limit is 10,000,000)");
    expect(data.reports[0].rows.map((r) => r.strategy)).toContain("rolling-summary");
  });

  it("says so when none of the transcripts given is one the report measured", async () => {
    const report = readViewerInput("report.json", await compareReportJson());
    const other = chats().map((c) => ({ ...c, id: `other-${c.id}` }));
    const data = await buildPageData([report, { kind: "transcripts", name: "x.jsonl", transcripts: other }]);
    expect(data.reports[0].sideBySide).toBeUndefined();
    expect(data.reports[0].note).toMatch(/none of the transcripts/);
  });
});

describe("input", () => {
  it("rejects what is not a trace or a report, naming the file and the problem", async () => {
    const bad = (t: string) => () => readViewerInput("f.json", t);
    expect(bad("{nope")).toThrow(/^f\.json is not valid JSON/);
    expect(bad('{"version":2,"system":"s","task":"t","turns":[{"number":0}]}')).toThrow(/^f\.json: not a ptc-lisp trace: at turns\.0\.number/);
    expect(bad('{"transcripts":1,"messages":2,"rows":[],"longest":null}')).toThrow(/^f\.json: not a ptc compare report: at rows/);
    expect(bad('{"experiment":[]}')).toThrow(/goal-experiment results/);
    expect(bad("[1,2]")).toThrow(ViewerInputError);
    const ok = await savedExample("reviews");
    expect(readViewerInput("ok.json", ok).kind).toBe("run");
  });
});

describe("page", () => {
  it("embeds data that holds </script> without ending the script element, and reads back the same", async () => {
    const data = await page([["recovery.json", await savedExample("recovery")]]);
    const hostile: PageData = { ...data, title: "</script><script>alert(1)</script>", texts: [...data.texts, "<!-- </SCRIPT> \u2028 &amp;"] };
    const html = renderPage(hostile);
    expect(html.match(/<\/script>/gi)).toHaveLength(2);
    const embedded = /<script type="application\/json" id="ptc-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "";
    expect(JSON.parse(embedded)).toEqual(hostile);
    expect(embedJson("</script>")).toBe('"\\u003c/script\\u003e"');
    expect(html).toContain("<title>&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;</title>");
  });

  it("allows only its own inline script and style by hash, and nothing from the network", async () => {
    const html = renderPage(await page([["r.json", await savedExample("reviews")]]));
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? "";
    expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+'; style-src 'sha256-[A-Za-z0-9+/=]+'; img-src data:/);
    expect(csp).not.toContain("unsafe");
    expect(html).not.toMatch(/\b(src|href)="(https?:)?\/\//);
    const run: RunView = JSON.parse(/id="ptc-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "{}").runs[0];
    expect(run.turns.length).toBeGreaterThan(0);
  });
});
