// The system prompt says exactly what each history view sends (issue 20): the compressed view's
// legend explains every summary line kind the view emits, and only those; the full view's
// prompt explains `Stored:` and no summary line; a single-turn prompt explains neither.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compressedView } from "../../src/history/compressed.js";
import { renderComparison } from "../../src/history/compare.js";
import { fullView } from "../../src/history/full.js";
import { summaryLegend, viewSystem } from "../../src/history/legend.js";
import { defaultViewOptions, type ViewInput, type ViewOptions } from "../../src/history/view.js";
import { staticPrompt, systemPrompt } from "../../src/agent/prompt/system.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { RunTrace, Turn } from "../../src/trace/trace.js";
import { renderFeedback } from "../../src/trace/feedback.js";
import { saveRun } from "../../src/agent/resume.js";
import { runSession } from "../../bench/history/measure.js";
import { sessions } from "../../bench/history/sessions/index.js";
import { round3Sessions } from "../../bench/history/sessions/round3.js";
import { buildTrace, turnSpecs, type TurnSpec } from "./traces.js";

/** Which legend a view's options call for: strict-prefix mode and keepLatestFull send fewer kinds of line. */
const modeOf = (opts: ViewOptions): string => (opts.strictPrefix === true ? "strict" : opts.keepLatestFull === true ? "latest" : "default");
const legendOf = (mode: string): string => summaryLegend({ strictPrefix: mode === "strict", keepLatestFull: mode === "latest" });

/**
 * The kinds of summary line in a text: `; Label:` lines, `; (...)` lines, and the markers
 * inside lines (`(redefined later)`, `(N dropped)`, samples, shapes, record keys, grouped calls).
 */
function kindsOf(text: string, into: Set<string>): void {
  for (const line of text.split("\n")) {
    if (!line.startsWith("; ")) continue;
    if (line.startsWith("; (")) into.add("; (...)");
    else {
      const label = /^; ([A-Z][a-z]+(?: [a-z]+)*)[ :(]/.exec(line);
      if (label !== null) into.add(`; ${label[1]}`);
    }
    if (line.includes("(redefined later)")) into.add("(redefined later)");
    if (/^; (Defined|Function): \S+ \(redefined\)/.test(line)) into.add("(redefined)");
    if (/^; Output \(\d+ dropped\)/.test(line)) into.add("(N dropped)");
    if (line.includes(", sample: ")) into.add("sample:");
    if (/^; Defined: .* = \w+\[\d+\] of /.test(line)) into.add("of {");
    if (line.includes(", keys: ")) into.add("keys:");
    if (/^; Tool: \S+ x\d+/.test(line)) into.add("xN");
    if (/^; Tool: .* -> [a-z][\w-]*$/.test(line) && !/-> (integer|float|string|boolean|nil|map|vector|set)\b/.test(line)) into.add("-> name");
  }
}

/**
 * Kinds whose text says what they mean in words (`; Tool calls not listed: 3`, `; (failed
 * program omitted)`, `(redefined later)`, `; Output (5 dropped):`, `sample:`, `x3`): the legend
 * leaves them out, since every token of it is paid on every request.
 */
const IN_WORDS = new Set(["; Tool calls not listed", "; (...)", "(redefined)", "(redefined later)", "(N dropped)", "sample:", "of {", "keys:", "xN"]);

/** What the legend must say for each kind: every `; Label:` and the name a tool's result was stored under. */
function explained(kind: string, legend: string): boolean {
  if (IN_WORDS.has(kind)) return true;
  if (kind === "-> name") return /`-> [a-z][\w-]*`: stored in/.test(legend);
  return kind.startsWith("; ") && legend.includes("`" + kind + ":`");
}

/** Summary texts and feedback lines of every compressed prompt of a trace, under a few option sets, by the legend's mode (see modeOf). */
function collect(trace: Pick<RunTrace, "system" | "task" | "turns">, maxTurns: number, byMode: Map<string, Set<string>>, options: ViewOptions[]): void {
  for (const opts of options) {
    let into = byMode.get(modeOf(opts));
    if (into === undefined) byMode.set(modeOf(opts), (into = new Set()));
    for (let k = 1; k <= trace.turns.length; k++) {
      const turns = trace.turns.slice(0, k);
      const input: ViewInput = { system: trace.system, task: trace.task, turns, maxTurns };
      const view = compressedView(input, opts);
      for (const p of view.turns ?? []) if (p.text !== turns[p.turn - 1].reply) kindsOf(p.text, into);
      // The legend heads what a turn kept in full taught, in its feedback: not a line kind.
      for (const m of view.messages.slice(2)) if (m.role === "user") kindsOf(m.content.replace(`${legendOf(modeOf(opts))}\n`, ""), into);
    }
  }
}

const OPTIONS: ViewOptions[] = [
  { ...defaultViewOptions, compressHistory: true },
  { ...defaultViewOptions, compressHistory: true, strictPrefix: true },
  { ...defaultViewOptions, compressHistory: true, cacheModel: "breakpoint" },
  { ...defaultViewOptions, compressHistory: true, printlnHistoryLimit: 2, printlnHistoryTokens: 40, dropAfterTokens: 0, toolCallsPerTurn: 1 },
];

/** A turn whose return value was rejected, summarized: the one failure the generated traces lack. */
function rejectedReturn(): RunTrace {
  const trace = buildTrace([{ status: "ok", defs: [], prints: 1, tools: [], prose: 0 }, { status: "ok", defs: [], prints: 1, tools: [], prose: 0 }], 6);
  const bad: Turn = { ...trace.turns[1], status: "invalid_return", error: { kind: "value_error", message: "the (return ...) value does not match the expected output", phase: "runtime" } };
  bad.feedback = renderFeedback(bad, { maxTurns: 6 }, { prints: true });
  const later = [3, 4, 5].map((number) => ({ ...trace.turns[0], number, feedback: renderFeedback({ ...trace.turns[0], number }, { maxTurns: 6 }, { prints: true }) }));
  return { ...trace, turns: [trace.turns[0], bad, ...later] };
}

describe("the compressed view's legend (issue 20)", () => {
  // Strict-prefix mode sends no `; Read:` and no `; Note:` line, keepLatestFull no `; Note:`: each
  // mode's legend explained both.
  it("explains every summary line kind the view emits over the bench's sessions and generated turns, and names no other, in each mode", async () => {
    const byMode = new Map<string, Set<string>>();
    const latest = { ...defaultViewOptions, compressHistory: true, keepLatestFull: true };
    for (const session of [...sessions, ...round3Sessions]) {
      const step = await runSession(session);
      collect(step.trace, session.replies.length, byMode, [...OPTIONS.slice(0, 2), latest]);
    }
    // In a 14-turn budget and a 200-turn one, where more rewrites pay (a superseded line goes).
    for (const specs of fc.sample(turnSpecs(3, 12), { numRuns: 60, seed: 20 })) for (const budget of [14, 200]) collect(buildTrace(specs, budget), budget, byMode, [...OPTIONS, latest]);
    collect(rejectedReturn(), 6, byMode, OPTIONS);
    // A turn whose only definition is redefined by the next one, many turns left: its summary says so.
    const only = (defs: TurnSpec["defs"], prints: number): TurnSpec => ({ status: "ok", defs, prints, tools: [], prose: 0 });
    const users = { name: "users", fn: false, value: Array.from({ length: 20 }, (_, i) => ({ id: i, name: `user ${i}` })) };
    collect(buildTrace([only([users], 0), only([{ ...users, value: 1 }], 1), only([], 2), only([], 1)], 200), 200, byMode, OPTIONS);
    // The collection itself works: these kinds occur in those sessions.
    const all = new Set([...byMode.values()].flatMap((s) => [...s]));
    for (const k of ["; Defined", "; Function", "; Tool", "; Output", "; Note", "; Tool calls not listed", "(N dropped)", "(redefined later)", "(redefined)", "; Read", "; (...)", "sample:", "of {", "xN", "-> name"]) expect(all, k).toContain(k);
    expect([...byMode.keys()].sort()).toEqual(["default", "latest", "strict"]);
    for (const [mode, seen] of byMode) {
      const text = legendOf(mode);
      const unexplained = [...seen].filter((k) => !explained(k, text));
      expect(unexplained, mode).toEqual([]);
      // Only those: every line kind the mode's legend names (a backticked `; Label`) occurs in that mode.
      const named = [...text.replace(/\n\s*/g, " ").matchAll(/`(; [A-Z][a-z]+(?: [a-z]+)*)/g)].map((m) => m[1]);
      expect(named.length).toBeGreaterThan(3);
      for (const n of named) expect([...seen].some((k) => k === n || k.startsWith(n)), `${mode}: ${n}`).toBe(true);
    }
  }, 90_000);
});

// The legend headed the first summary only: a turn kept in full with what it taught (keepLatestFull's
// latest turn, a turn before an error) showed '; Defined: rows = vector[6], sample: ...' in prompts
// with no summary, and so no legend (71 prompts over the bench's sessions and 300 generated traces).
describe("every prompt that shows a summary line shows the legend before it", () => {
  const labelled = (text: string, legend: string): number => text.split("\n").findIndex((l) => l !== legend && /^; [A-Z][a-z]+[ :(]/.test(l));
  const check = (trace: Pick<RunTrace, "system" | "task" | "turns">, maxTurns: number, options: ViewOptions[]): void => {
    for (const opts of options) {
      const legend = legendOf(modeOf(opts));
      for (let k = 1; k <= trace.turns.length; k++) {
        const turns = trace.turns.slice(0, k);
        const view = compressedView({ system: trace.system, task: trace.task, turns, maxTurns }, opts);
        // Summary lines are in summaries and in feedback, never in a reply kept as written.
        const kept = new Set((view.turns ?? []).filter((p) => p.text === turns[p.turn - 1].reply).map((p) => p.message));
        const shown = view.messages.slice(2).map((m, i) => (kept.has(i + 2) ? "" : m.content)).join("\n");
        const at = labelled(shown, legend);
        if (at >= 0) expect(shown.split("\n").slice(0, at).join("\n") + "\n", `${JSON.stringify(opts)} k=${k}`).toContain(legend + "\n");
      }
    }
  };

  it("with the latest turn kept in full (keepLatestFull), over a session that defines without printing", async () => {
    const program = (code: string): string => "```clojure\n" + code + "\n```";
    const replies = [program("(def rows (vec (map (fn [i] {:sku (str \"S\" i) :rating (/ i 2)}) (range 6))))"), program("(def best (first (sort-by :rating > rows)))"), program("(return (:sku best))")];
    const step = await SubAgent.run(SubAgent.create({ prompt: "Find the best.", maxTurns: 3 }), { llm: scriptedLlm(replies), compressHistory: true, view: { keepLatestFull: true } });
    expect(step.ok).toBe(true);
    const second = step.turns[1].messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
    expect(second).toContain("; Defined: rows = vector[6]");
    expect(second).toContain(legendOf("latest"));
    check(step.trace, 3, [{ ...defaultViewOptions, compressHistory: true, keepLatestFull: true }]);
  });

  it("over generated traces, under every option set", () => {
    const options = [...OPTIONS, { ...defaultViewOptions, compressHistory: true, keepLatestFull: true }, { ...defaultViewOptions, compressHistory: true, keepLatestFull: true, cacheModel: "breakpoint" as const }];
    for (const specs of fc.sample(turnSpecs(2, 10), { numRuns: 40, seed: 7 })) for (const budget of [14, 200]) check(buildTrace(specs, budget), budget, options);
  }, 60_000);
});

describe("a system prompt per view (issue 20)", () => {
  const agent = { tools: {}, maxTurns: 5 };
  const full = systemPrompt(agent, "full");
  const compressed = systemPrompt(agent, "compressed");
  const single = systemPrompt({ tools: {}, maxTurns: 1 });

  it("the full view's explains `Stored:`; the compressed view's and the single-turn prompt explain no history; no prompt explains a summary line", () => {
    expect(full).toContain("`Stored:`");
    expect(compressed).not.toContain("Stored:");
    expect(full.replace(/\n\nEarlier turns are shown as you sent them[^\n]*/, "")).toBe(compressed);
    for (const text of [full, compressed, single]) {
      for (const kind of ["; Defined", "; Function", "; Tool", "; Output", "; Note", "(redefined later)", "dropped)", "omitted)"]) expect(text, kind).not.toContain(kind);
    }
    expect(single).not.toContain("Stored:");
    expect(staticPrompt(false, "compressed")).toBe(staticPrompt(false, "full"));
  });

  it("each view sends its own part, whichever view's prompt the input carries; other prompts are left as they are", () => {
    expect(viewSystem(full, "compressed")).toBe(compressed);
    expect(viewSystem(compressed, "full")).toBe(full);
    expect(viewSystem(full, "full")).toBe(full);
    expect(viewSystem(single, "compressed")).toBe(single);
    expect(viewSystem("custom prompt", "full")).toBe("custom prompt");
    const trace = buildTrace([{ status: "ok", defs: [{ name: "xs", fn: false, value: [1, 2, 3] }], prints: 1, tools: [], prose: 0 }, { status: "ok", defs: [], prints: 1, tools: [], prose: 0 }], 5);
    for (const system of [full, compressed]) {
      const input: ViewInput = { system, task: trace.task, turns: trace.turns, maxTurns: 5 };
      expect(fullView(input, defaultViewOptions).messages[0].content).toBe(full);
      expect(compressedView(input, { ...defaultViewOptions, compressHistory: true }).messages[0].content).toBe(compressed);
    }
  });

  it("a run sends its view's prompt: `Stored:` in the full view's feedback and system prompt, in neither with compression", async () => {
    const program = (code: string): string => "```clojure\n" + code + "\n```";
    // Reasoning the summaries leave out, in a budget of 8: enough to repay the legend.
    const why = "I will fetch the numbers first, see how many there are, and add them up in the next program. ".repeat(2) + "\n\n";
    const replies = [why + program("(def xs (tool/nums))\n(println (count xs))"), why + program("(def total (sum xs))\n(println total)"), program("(return total)")];
    const nums = tool({ description: "Numbers.", input: z.object({}), run: () => [1, 2, 3] });
    const agentDef = SubAgent.create({ prompt: "Sum the numbers.", tools: { nums }, maxTurns: 8 });
    for (const compressHistory of [false, true]) {
      const step = await SubAgent.run(agentDef, { llm: scriptedLlm(replies), compressHistory });
      expect(step.ok).toBe(true);
      const sent = step.turns.map((t) => t.messages);
      expect(new Set(sent.map((m) => m[0].content)).size).toBe(1);
      expect(step.trace.system).toBe(sent[0][0].content);
      expect(step.trace.system).toBe(systemPrompt(agentDef, compressHistory ? "compressed" : "full"));
      // Hidden context changes neither the system prompt nor the task.
      const hidden = await SubAgent.run(agentDef, { llm: scriptedLlm(replies), compressHistory, context: { _token: "sk-hidden-value-1234" } });
      expect(hidden.trace.system).toBe(step.trace.system);
      expect(hidden.trace.task).toBe(step.trace.task);
      const later = sent.at(-1)?.slice(2).map((m) => m.content).join("\n") ?? "";
      expect(later.includes("Stored:")).toBe(!compressHistory);
      expect(later.includes("; Defined:")).toBe(compressHistory);
      // `ptc trace show --compressed` shows the two system prompts side by side only where they differ.
      const shown = renderComparison(step.trace, undefined, undefined, { width: 200 });
      expect(shown).toContain("`Stored:`");
      expect(shown).toContain("; Earlier turns, summarized: `; Defined:`");
      expect(shown).toMatch(/\.\.\. \(\d+ lines, same in both views\)/);
      expect(shown).not.toContain("# Common mistakes");
    }
  });

  // Saved under full history and resumed with compression, the saved turns stay as full history
  // showed them, under its system prompt, which the provider's cache holds (fullTurns: resumed
  // under the compressed view's own, the run cost up to 1.48x full history, never-dearer.test.ts).
  // The trace keeps the compressed view's system prompt; the view adds the note back.
  it("a run saved under one view and resumed under the other records the new view's system prompt, and sends it unless the saved turns stay as full history showed them", async () => {
    const program = (code: string): string => "```clojure\n" + code + "\n```";
    const replies = [program("(def xs [1 2 3])\n(println (count xs))"), program("(def total (sum xs))\n(println total)"), program("(return total)")];
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Sum the numbers.", maxTurns });
    for (const [before, after, sent] of [[false, true, "full"], [true, false, "full"], [true, true, "compressed"]] as const) {
      const first = make(2);
      const stopped = await SubAgent.run(first, { llm: scriptedLlm(replies.slice(0, 2)), compressHistory: before });
      const state = saveRun(stopped, first);
      const agentNow = make(5);
      const live = scriptedLlm(replies.slice(2));
      const step = await SubAgent.resume(agentNow, state, { llm: live, compressHistory: after });
      expect(step.ok, JSON.stringify(step.fail)).toBe(true);
      expect(live.requests[0].messages[0].content).toBe(systemPrompt(agentNow, sent));
      expect(step.trace.system).toBe(systemPrompt(agentNow, after ? "compressed" : "full"));
    }
  });

  // The count of saved turns a run resumed from full history keeps as written (fullTurns) was
  // inherited by the agents it nests: their turns were none of them, and each of their prompts went
  // out under the full view's system prompt, its first turns kept as written.
  it("a run nested in one resumed from full history lays out its own turns", async () => {
    const program = (code: string): string => "```clojure\n" + code + "\n```";
    const child = SubAgent.create({ prompt: "Count the items.", maxTurns: 3 });
    const counter = SubAgent.asTool(child, { description: "Counts." });
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Sum the numbers.", tools: { counter }, maxTurns });
    const first = make(2);
    const stopped = await SubAgent.run(first, { llm: scriptedLlm([program("(def xs [1 2 3])\n(println (count xs))"), program("(def total (sum xs))\n(println total)")]) });
    const live = scriptedLlm([program("(println (tool/counter {:items [1 2]}))"), program("(def n 2)\n(println n)"), program("(println (inc n))"), program("(return n)"), program("(return :done)")]);
    const step = await SubAgent.resume(make(5), saveRun(stopped, first), { llm: live, compressHistory: true });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    const nested = live.requests.slice(1, 4);
    expect(nested.map((r) => r.messages[0].content === systemPrompt(child, "compressed"))).toEqual([true, true, true]);
    expect(live.requests[0].messages[0].content).toBe(systemPrompt(make(5), "full"));
  });
});
