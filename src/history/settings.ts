// The run settings a stored trace carries (turn budget, tool withdrawal, print cap, view
// options), checked before a view is rebuilt from them: a trace is input from disk, and a
// bad value must be reported, not rendered.
import type { RunTrace, TraceSettings } from "../trace/trace.js";
import { settingsSchema } from "../trace/serialize.js";

export type SettingsCheck = { ok: true; settings: TraceSettings | undefined } | { ok: false; message: string };

/** The trace's settings, checked: undefined when it has none (traces written before they existed). */
export function traceSettings(trace: Pick<RunTrace, "settings">): SettingsCheck {
  if (trace.settings === undefined) return { ok: true, settings: undefined };
  const checked = settingsSchema.safeParse(trace.settings);
  if (checked.success) return { ok: true, settings: checked.data };
  const issue = checked.error.issues[0];
  return { ok: false, message: `invalid trace settings at ${["settings", ...issue.path].join(".")}: ${issue.message}` };
}

/** A run's turn budget, read from the task message's turn line ("Turn 1 of 5."); else the turns taken. */
export function turnBudget(trace: Pick<RunTrace, "task" | "turns">): number {
  if (/This is your only turn/.test(trace.task)) return 1;
  const m = /Turn 1 of (\d+)\./.exec(trace.task);
  return m ? Number(m[1]) : Math.max(1, trace.turns.length);
}
