// A finished run to JSON and back: the outcome, the usage and the trace. The file's reader is
// src/trace/saved-run.ts (the viewer and the CLI read it there); this side writes it and types
// the outcome and usage as this agent's.
import { encodeTrace, numberReplacer, TRACE_VERSION, unsavable } from "../trace/serialize.js";
import { parseSavedRun } from "../trace/saved-run.js";
import type { RunTrace } from "../trace/trace.js";
import { isObjectArg, kindOf } from "../llm/args.js";
import type { AgentFailure } from "./errors.js";
import { hiddenOutcome } from "../trace/redact.js";
import type { RunUsage, Step } from "./types.js";

/** A finished run as saved: the outcome, the usage and the full trace (values as plain data). */
export interface SavedRun {
  version: 1 | typeof TRACE_VERSION;
  ok: boolean;
  value?: unknown;
  fail?: AgentFailure;
  usage: RunUsage;
  trace: RunTrace;
}

/**
 * A finished run as JSON. Live memory values are not saved: the trace's definitions carry their
 * EDN and source. An answer computed from hidden context is the host's (`step.value`), but the
 * file is an export: it holds the answer as the trace records it, its hidden parts stand-ins.
 */
export function runToJson(step: Step, indent?: number): string {
  const wrong = notStep(step);
  if (wrong !== null) throw new TypeError(`runToJson expects a Step (what SubAgent.run resolves to), ${wrong}`);
  const saved: Record<string, unknown> = { version: TRACE_VERSION, ok: step.ok };
  if (step.ok) {
    saved.value = hiddenOutcome(step.trace) ?? step.value;
    const problem = unsavable(saved.value);
    if (problem !== null) throw new TypeError(`runToJson: the run's value cannot be saved as JSON: ${problem}`);
  } else saved.fail = step.fail;
  saved.usage = step.usage;
  saved.trace = encodeTrace(step.trace);
  return JSON.stringify(saved, numberReplacer, indent);
}

/** What a value an untyped host passed as a Step is instead (a step not awaited, say), or null: reading it would fail with a bare TypeError. */
export function notStep(x: unknown): string | null {
  if (!isObjectArg(x)) return `got ${kindOf(x)}`;
  if (typeof (x as { then?: unknown }).then === "function") return "got a Promise: await SubAgent.run first";
  const { ok, trace } = x as Partial<Record<keyof Step, unknown>>;
  if (typeof ok !== "boolean" || typeof trace !== "object" || trace === null || !Array.isArray((trace as { turns?: unknown }).turns)) return "got an object that is not one";
  return null;
}

/** Reads a run written by runToJson (one written by this agent: its outcome and usage are this agent's). */
export function runFromJson(text: string): SavedRun {
  return parseSavedRun(text) as SavedRun;
}
