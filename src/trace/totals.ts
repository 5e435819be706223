// A run's totals over its turns, as `ptc trace show` and the viewer both report them.
import { HELD_CALL } from "../lisp/index.js";
import type { RunTrace, ToolCallTrace } from "./trace.js";

/** Whether the call waits for the host's approval: it did not run, and failed at nothing (a paused run's). */
export function isHeld(call: ToolCallTrace): boolean {
  return call.error === HELD_CALL;
}

/** How a held call's outcome reads, in `ptc trace show` and the viewer alike. */
export const HELD_SHOWN = "held for the host's approval: it did not run";

/**
 * How a run paused for approval ends, or undefined for a run that did not pause: it has not
 * failed but waits (its saved step says why as a failure, approval_required). A trace read without
 * its saved run reads the same way, in `ptc trace show` and the viewer alike.
 */
export function pausedOutcome(trace: RunTrace, fail?: { message: string }): string | undefined {
  if (trace.turns.at(-1)?.status !== "paused") return undefined;
  return `paused: ${fail?.message ?? "waiting for the host's approval"}`;
}

export interface RunTotals {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  llmMs: number;
  execMs: number;
  /** Calls that ran (or failed). */
  toolCalls: number;
  /** Calls held for the host's approval, which did not run. */
  heldCalls: number;
}

/** Token, time and call totals over the turns, with the tokens of billed requests that failed. */
export function runTotals(trace: RunTrace): RunTotals {
  const t: RunTotals = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmMs: 0, execMs: 0, toolCalls: 0, heldCalls: 0 };
  for (const turn of trace.turns) {
    t.inputTokens += turn.usage.inputTokens;
    t.outputTokens += turn.usage.outputTokens;
    t.cachedTokens += turn.usage.cachedTokens;
    t.llmMs += turn.usage.llmMs;
    t.execMs += turn.usage.execMs;
    for (const c of turn.toolCalls) {
      if (isHeld(c)) t.heldCalls++;
      else t.toolCalls++;
    }
  }
  // A billed request that failed has no turn, but its tokens were spent (as the step counts them).
  for (const failed of trace.failedRequests ?? []) {
    t.inputTokens += failed.inputTokens;
    t.outputTokens += failed.outputTokens;
    t.cachedTokens += failed.cachedTokens;
  }
  return t;
}
