// A finished run to JSON and back: the outcome, the usage and the trace (in the trace format
// of src/trace/serialize.ts).
import { z } from "zod";
import { encodeTrace, numberReplacer, parseTraceJson, runTrace, TRACE_VERSION } from "../trace/serialize.js";
import type { RunTrace } from "../trace/trace.js";
import type { AgentFailure } from "./errors.js";
import type { RunUsage, Step } from "./types.js";

const savedRun = z.looseObject({
  version: z.union([z.literal(1), z.literal(TRACE_VERSION)]),
  ok: z.boolean(),
  value: z.unknown().optional(),
  fail: z.looseObject({ reason: z.string(), message: z.string(), details: z.unknown().optional() }).optional(),
  usage: z.looseObject({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number(), llmRequests: z.number() }),
  trace: runTrace,
});

/** A finished run as saved: the outcome, the usage and the full trace (values as plain data). */
export interface SavedRun {
  version: 1 | typeof TRACE_VERSION;
  ok: boolean;
  value?: unknown;
  fail?: AgentFailure;
  usage: RunUsage;
  trace: RunTrace;
}

/** A finished run as JSON. Live memory values are not saved: the trace's definitions carry their EDN and source. */
export function runToJson(step: Step, indent?: number): string {
  const saved: Record<string, unknown> = { version: TRACE_VERSION, ok: step.ok };
  if (step.ok) saved.value = step.value;
  else saved.fail = step.fail;
  saved.usage = step.usage;
  saved.trace = encodeTrace(step.trace);
  return JSON.stringify(saved, numberReplacer, indent);
}

export function runFromJson(text: string): SavedRun {
  return parseTraceJson<SavedRun>(text, savedRun, "saved ptc-lisp run", (raw) => raw.trace, "trace.");
}
