// A run as the page shows it: outcome and totals, then per turn the program, output, tool
// calls (arguments, result shape, duration), definitions, error, tokens and prompts. Nested
// agents' runs become runs of their own, linked both ways with the tool call that started them.
import { randomUUID } from "node:crypto";
import { requestPrice } from "../compaction/measure.js";
import { lookupPrice } from "../compaction/prices.js";
import { resultShape } from "../history/summary.js";
import { traceSettings } from "../history/settings.js";
import type { SavedRunFile } from "../trace/saved-run.js";
import { renderPause } from "../trace/feedback.js";
import { HELD_SHOWN, isHeld, pausedOutcome, runTotals } from "../trace/totals.js";
import type { ErrorInfo } from "../lisp/index.js";
import type { DefinitionTrace, RunTrace, ToolCallTrace, Turn } from "../trace/trace.js";
import type { DefinitionView, ErrorView, RunView, ToolCallView, Totals, TurnView } from "./model.js";
import { isFailed, runPrompts } from "./prompt.js";
import type { TextTable } from "./texts.js";

const SHAPE_CHARS = 160;

export interface RunSource {
  trace: RunTrace;
  saved?: SavedRunFile;
}

/**
 * JSON for people, never throwing: numbers JSON cannot spell (-0, ±Infinity, NaN) are written
 * as numbers. They pass through JSON.stringify as strings carrying a fresh random marker, which
 * no string in the data can forge, and are unquoted afterwards.
 */
export function prettyJson(v: unknown, indent = 2): string {
  if (v === undefined) return "nil";
  const marker = `ptc-number-${randomUUID()}:`;
  try {
    const text = JSON.stringify(
      v,
      (_k, x: unknown) => (typeof x === "number" && (!Number.isFinite(x) || Object.is(x, -0)) ? `${marker}${x === 0 ? "-0" : String(x)}` : typeof x === "bigint" ? x.toString() : x),
      indent,
    );
    return text === undefined ? String(v) : text.replaceAll(new RegExp(`"${marker}([^"]*)"`, "g"), "$1");
  } catch {
    return String(v);
  }
}

function errorView(e: ErrorInfo): ErrorView {
  const out: ErrorView = { kind: e.kind, phase: e.phase, message: e.message };
  if (e.line !== undefined) out.line = e.line;
  if (e.column !== undefined) out.column = e.column;
  if (e.excerpt !== undefined) out.excerpt = e.excerpt;
  if (e.hint !== undefined) out.hint = e.hint;
  if (e.trace !== undefined && e.trace.length > 0) out.trail = e.trace;
  return out;
}

function definitionView(d: DefinitionTrace): DefinitionView {
  const signature = d.kind === "function" ? `(${d.name}${d.params ? ` ${d.params}` : ""})` : d.size === undefined ? d.type : `${d.type}[${d.size}]`;
  const out: DefinitionView = { name: d.name, kind: d.kind, signature, sample: d.sample };
  if (d.doc !== undefined) out.doc = d.doc;
  return out;
}

function toolCallView(c: ToolCallTrace): ToolCallView {
  const held = isHeld(c);
  const out: ToolCallView = { name: c.name, args: prettyJson(c.args), shape: held ? HELD_SHOWN : c.error !== undefined ? "error" : resultShape(c.result, SHAPE_CHARS), durationMs: c.durationMs };
  if (Object.hasOwn(c, "asked")) out.asked = prettyJson(c.asked);
  if (held) out.held = true;
  else if (c.error !== undefined) out.error = c.error;
  else out.result = prettyJson(c.result);
  return out;
}

/** How the run ended: the saved outcome when there is one, else what the last turn did. */
export function outcomeOf(trace: RunTrace, saved?: SavedRunFile): RunView["outcome"] {
  const paused = pausedOutcome(trace, saved?.fail);
  if (paused !== undefined) return { ok: null, paused: true, text: paused };
  if (saved !== undefined && !saved.ok) return { ok: false, text: saved.fail ? `${saved.fail.reason}: ${saved.fail.message}` : "no answer" };
  const last = trace.turns.at(-1);
  if (last === undefined) return { ok: null, text: "no turns" };
  if (last.status === "returned") return { ok: true, text: `returned ${last.value ?? "nil"}` };
  if (last.status === "failed") return { ok: false, text: `failed: ${last.value ?? ""}` };
  return { ok: saved?.ok ?? null, text: `ended after turn ${last.number} (${last.status})` };
}

/** The model a trace's costs are priced by, when it records one. */
export function runModel(trace: RunTrace): string | null {
  const model = (trace.settings as { model?: unknown } | undefined)?.model;
  return typeof model === "string" && model !== "" ? model : null;
}

/** A turn's cost as recorded, or priced by the run's model for traces that recorded none; undefined when the model has no known price. */
function turnCost(turn: Turn, model: string | null): number | undefined {
  if (turn.usage.cost !== undefined) return turn.usage.cost;
  const price = model === null ? undefined : lookupPrice(model);
  if (price === undefined) return undefined;
  const u = turn.usage;
  return requestPrice(price, { inputTokens: u.inputTokens, cachedTokens: u.cachedTokens, outputTokens: u.outputTokens });
}

function totalsOf(trace: RunTrace, saved?: SavedRunFile): Totals {
  const model = runModel(trace);
  const t: Totals = { turns: trace.turns.length, ...runTotals(trace), cost: 0 };
  for (const turn of trace.turns) {
    const cost = turnCost(turn, model);
    t.cost = t.cost === null || cost === undefined ? null : t.cost + cost;
  }
  // A billed request that failed has no turn, but its tokens were spent (as the step counts them).
  const price = model === null ? undefined : lookupPrice(model);
  for (const failed of trace.failedRequests ?? []) {
    t.cost = t.cost === null || price === undefined ? null : t.cost + requestPrice(price, failed);
  }
  const duration = (saved?.usage as { durationMs?: unknown } | undefined)?.durationMs;
  if (typeof duration === "number") t.durationMs = duration;
  return t;
}

/** "full history", "compressed history", or the strategy that built the prompts. */
export function promptMode(trace: RunTrace): string {
  const checked = traceSettings(trace);
  const strategy = trace.settings?.strategy;
  if (strategy !== undefined) {
    const opts = Object.entries(strategy.options ?? {}).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
    // Every run records its strategy now; the two built-in views keep their names.
    const name = strategy.name === "full" ? "full history" : strategy.name === "interpreter-summaries" ? "compressed history" : strategy.name;
    return opts.length === 0 ? name : `${name} (${opts.join(", ")})`;
  }
  if (!checked.ok || checked.settings === undefined) return "full history (no settings recorded)";
  return checked.settings.view.compressHistory ? "compressed history" : "full history";
}

function turnView(turn: Turn, prompt: TurnView["prompt"]): TurnView {
  const out: TurnView = {
    number: turn.number,
    status: turn.status,
    failed: isFailed(turn),
    program: turn.program,
    output: turn.prints.join("\n"),
    toolCalls: turn.toolCalls.map(toolCallView),
    definitions: turn.definitions.map(definitionView),
    notes: turn.notes ?? [],
    usage: { ...turn.usage },
    prompt,
  };
  if (turn.program === null) out.reply = turn.reply;
  if (turn.value !== undefined) out.value = turn.value;
  if (turn.error !== undefined && turn.status === "paused") out.pausedAt = { heading: renderPause(turn.error, false), ...(turn.error.excerpt === undefined ? {} : { excerpt: turn.error.excerpt }) };
  else if (turn.error !== undefined) out.error = errorView(turn.error);
  if (turn.feedback !== undefined) out.feedback = turn.feedback;
  return out;
}

/**
 * Projects a run and its nested runs, appending them to `into` (the run first). `id` names
 * the run in deep links; nested runs are named after their place: `r1.t2.n1`.
 */
export function projectRun(source: RunSource, file: string, id: string, table: TextTable, into: RunView[], parent?: RunView["parent"]): RunView {
  const { trace, saved } = source;
  const { prompts, chart } = runPrompts(trace, table);
  const run: RunView = {
    id,
    file,
    task: trace.task,
    outcome: outcomeOf(trace, saved),
    totals: totalsOf(trace, saved),
    priceModel: runModel(trace),
    promptMode: promptMode(trace),
    turns: trace.turns.map((t, k) => turnView(t, prompts[k])),
    chart,
  };
  if (parent !== undefined) run.parent = parent;
  into.push(run);
  trace.turns.forEach((turn, k) => {
    const calls = run.turns[k].toolCalls;
    let from = 0;
    (turn.nested ?? []).forEach((n, j) => {
      // Nested runs are recorded in call order: each belongs to the next call of its tool.
      const call = calls.findIndex((c, i) => i >= from && c.name === n.tool && c.nested === undefined);
      const childId = `${id}.t${turn.number}.n${j + 1}`;
      projectRun({ trace: n.trace }, file, childId, table, into, { run: id, turn: turn.number, call, tool: n.tool });
      if (call >= 0) {
        calls[call].nested = { run: childId, ok: n.ok };
        from = call + 1;
      }
    });
  });
  return run;
}
