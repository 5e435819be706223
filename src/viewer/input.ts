// A file given to the viewer, read as what it is: a saved run or a bare trace (through the
// same parser `ptc trace show` uses), or a `ptc compare --json` report. Anything else is
// rejected with a message naming the file and the problem, never rendered half-way.
import { traceFromJson, TraceFormatError } from "../trace/serialize.js";
import { ResumeError, RUN_STATE_FORMAT, runStateFromJson } from "../trace/run-state.js";
import { parseSavedRun } from "../trace/saved-run.js";
import { compareReportSchema, looksLikeReport, type CompareReportJson } from "./report.js";
import type { RunSource } from "./run.js";
import type { ReplayTranscript } from "./sidebyside.js";
import { jsonSyntaxError } from "../json/json-error.js";
import type { ReadLimit } from "../json/text-input.js";

/**
 * Larger files are refused, by ptc view and ptc trace show alike: a page holding them would not
 * load usefully, and a run's parsed values take many times its JSON's bytes (400 MB of small
 * values took minutes and past 7 GB of memory to parse).
 */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** How a command reads a file it shows (a run, a report, transcripts), `what` it does with it in its error's words. */
export const inputLimit = (what: string): ReadLimit => ({ bytes: MAX_INPUT_BYTES, what });

export class ViewerInputError extends Error {
  override readonly name = "ViewerInputError";
}

/** Transcripts (JSONL, read by the caller) are shown beside a report: one replayed under two of its strategies. */
export type ViewerInput =
  | { kind: "run"; name: string; source: RunSource }
  | { kind: "report"; name: string; report: CompareReportJson }
  | { kind: "transcripts"; name: string; transcripts: ReplayTranscript[] };

export function readViewerInput(name: string, text: string): ViewerInput {
  if (text.length > MAX_INPUT_BYTES) throw new ViewerInputError(`${name} is too large to view (${text.length} bytes; the limit is ${MAX_INPUT_BYTES})`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ViewerInputError(`${name} is not valid JSON (${jsonSyntaxError(text, e)})`);
  }
  if (typeof raw === "object" && raw !== null && "experiment" in raw) {
    throw new ViewerInputError(`${name} holds goal-experiment results (ptc compare --experiment); the viewer reads traces and transcript comparison reports`);
  }
  if (looksLikeReport(raw)) {
    const checked = compareReportSchema.safeParse(raw);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new ViewerInputError(`${name}: not a ptc compare report: at ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    }
    return { kind: "report", name, report: checked.data };
  }
  try {
    return { kind: "run", name, source: runSourceOf(text, raw) };
  } catch (e) {
    if (e instanceof TraceFormatError || e instanceof ResumeError) throw new ViewerInputError(`${name}: ${e.message}`);
    throw e;
  }
}

/**
 * The run in a file's text (`raw`, its parsed JSON): a saved run (`runToJson`), a run state saved
 * for resuming (it holds the run's trace) or a bare trace (`traceToJson`). Throws
 * TraceFormatError or ResumeError naming the problem; `ptc trace show` reads runs through it too.
 */
export function runSourceOf(text: string, raw: unknown): RunSource {
  if (typeof raw === "object" && raw !== null && "format" in raw && raw.format === RUN_STATE_FORMAT) return { trace: runStateFromJson(text).trace };
  if (typeof raw === "object" && raw !== null && "trace" in raw) {
    const saved = parseSavedRun(text);
    return { trace: saved.trace, saved };
  }
  return { trace: traceFromJson(text) };
}
