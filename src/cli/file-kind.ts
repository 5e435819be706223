// What a file given to a command is, read from its content (not its name), so a command handed
// another command's file can say which command reads it instead of failing on its schema.
import { RUN_STATE_FORMAT } from "../trace/run-state.js";
import { looksLikeReport } from "../viewer/report.js";

export type FileKind = "run" | "trace" | "run-state" | "report" | "experiment" | "transcripts" | "other";

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** The kind of a JSON value (the whole file parsed), by the fields each kind always has. */
export function jsonKind(raw: unknown): FileKind {
  if (!isRecord(raw)) return "other";
  if (raw.format === RUN_STATE_FORMAT) return "run-state";
  if (looksLikeReport(raw)) return "report";
  if ("experiment" in raw) return "experiment";
  // A one-line transcript file parses as one value; one carrying a run's trace is still no saved run (that has ok).
  if (typeof raw.id === "string" && !("ok" in raw) && (Array.isArray(raw.messages) || isRecord(raw.trace))) return "transcripts";
  if (isRecord(raw.trace)) return "run";
  if (Array.isArray(raw.turns)) return "trace";
  return "other";
}

/** The kind of a file's text: one JSON value, or JSON lines of chat transcripts. */
export function fileKind(text: string): FileKind {
  try {
    return jsonKind(JSON.parse(text));
  } catch {
    const first = text.split("\n").find((l) => l.trim() !== "");
    try {
      const raw: unknown = JSON.parse(first ?? "");
      return isRecord(raw) && Array.isArray(raw.messages) ? "transcripts" : "other";
    } catch {
      return "other";
    }
  }
}

/** What reads a file of this kind, as advice to a user who gave it to the wrong command. */
export function whatReads(kind: FileKind, file: string): string | undefined {
  switch (kind) {
    case "run":
    case "trace":
      return `${file} is a recorded agent run: ptc trace show ${file} prints it, ptc view ${file} shows it in the browser`;
    case "run-state":
      return `${file} is a run state saved for SubAgent.resume: ptc trace show ${file} prints its trace, ptc view ${file} shows it`;
    case "report":
      return `${file} is a ptc compare report: ptc view ${file} shows it`;
    case "experiment":
      return `${file} holds goal-experiment results (ptc compare --experiment --json); no command reads them back`;
    case "transcripts":
      return `${file} holds chat transcripts (JSON lines): ptc compare ${file} measures compaction strategies on them`;
    case "other":
      return undefined;
  }
}
