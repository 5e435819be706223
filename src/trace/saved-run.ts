// The saved-run file: a finished run's outcome, usage and trace (in the trace format of
// serialize.ts), and its one reader. It lives below the agent so the viewer and the CLI read a
// saved run without loading the agent; the agent writes one (agent/saved-run.ts) and types its
// outcome and usage more narrowly.
import { z } from "zod";
import { parseTraceJson, runTrace, TRACE_VERSION } from "./serialize.js";
import type { RunTrace } from "./trace.js";

const savedRun = z.looseObject({
  version: z.union([z.literal(1), z.literal(TRACE_VERSION)]),
  ok: z.boolean(),
  value: z.unknown().optional(),
  fail: z.looseObject({ reason: z.string(), message: z.string(), details: z.unknown().optional() }).optional(),
  usage: z.looseObject({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number(), llmRequests: z.number() }),
  trace: runTrace,
});

/** A saved run as its file holds it: what a reader can rely on, whichever agent wrote it. */
export interface SavedRunFile {
  version: 1 | typeof TRACE_VERSION;
  ok: boolean;
  value?: unknown;
  fail?: { reason: string; message: string; details?: unknown };
  usage: { inputTokens: number; outputTokens: number; cachedTokens: number; llmRequests: number };
  trace: RunTrace;
}

/** Reads a saved run; throws TraceFormatError saying what is wrong and where. */
export function parseSavedRun(text: string): SavedRunFile {
  return parseTraceJson<SavedRunFile>(text, savedRun, "saved ptc-lisp run", (raw) => raw.trace, "trace.");
}
