// Agent-level failures: why a run ended without a validated value, and how schema
// validation problems are worded for the LLM (naming the failing field).
import type { z } from "zod";
import { cutPoint } from "../lisp/index.js";

/** Why a run ended without a value. Each ending keeps the trace of the turns so far. */
export type FailReason =
  /** The program called (fail reason). */
  | "failed"
  /** The last turn ended without a valid (return ...). */
  | "max_turns_exceeded"
  /** The run's overall `deadlineMs` passed. */
  | "deadline_exceeded"
  /** The LLM tokens used reached the run's `tokenBudget`. */
  | "token_budget_exceeded"
  /** A tool call waits for the host's approval: `step.paused` says which; resume with the decisions. */
  | "approval_required"
  /** The caller's AbortSignal fired. */
  | "aborted"
  /** The LLM client failed (network, HTTP, or an empty reply). */
  | "llm_error"
  /** The run's input was unusable: no LLM, a context that is not an object, an unfilled placeholder... */
  | "invalid_input"
  /** Nested agents went deeper than `maxDepth`. */
  | "max_depth_exceeded"
  /** A bug in the runtime or in a pluggable part (a prompt view); the message says where. */
  | "internal_error";

export interface AgentFailure {
  reason: FailReason;
  message: string;
  /** The value given to (fail ...), as plain data, when the program failed explicitly. */
  details?: unknown;
}

/** Thrown by `SubAgent.create`, `SubAgent.asTool` and `tool()` for an invalid definition. */
export class AgentDefinitionError extends Error {
  override readonly name = "AgentDefinitionError";
}

const MAX_ISSUES = 8;
// A map with thousands of extra keys would otherwise fill the feedback with their names.
const MAX_KEYS = 8;

/** The most of a host-written text (an output check's issue) shown to a model: a host may throw megabytes. A tool's error is the interpreter's to cut (toolMessage), after hiding as here. */
const MAX_HOST_CHARS = 500;

/** `text` cut to MAX_HOST_CHARS at a character boundary, marked "…". */
export function shortMessage(text: string): string {
  return text.length > MAX_HOST_CHARS ? text.slice(0, cutPoint(text, MAX_HOST_CHARS)) + "…" : text;
}

/** describeIssues' lines under a heading, each cut by shortMessage, and no more lines than it writes (an issue's own message may hold line breaks). */
export function shortIssues(text: string): string {
  return text.length <= MAX_HOST_CHARS ? text : text.split("\n", MAX_ISSUES + 2).map(shortMessage).join("\n");
}

/** `:query` for a top-level key, `[:products 0 :name]` for a nested path: how the program would write it. */
export function fieldPath(path: readonly PropertyKey[]): string {
  const parts = path.map((p) => (typeof p === "number" ? String(p) : `:${String(p)}`));
  if (parts.length === 0) return "the value";
  return parts.length === 1 ? parts[0] : `[${parts.join(" ")}]`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const p of path) {
    if (v === null || typeof v !== "object" || !Object.hasOwn(v, p)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}

/**
 * One line per zod issue, each naming its field: `missing :query (expected string)`,
 * `:limit: expected number, received string`. `input` is what was validated; `shown` gives an
 * issue's message as it is shown, told the value it is about (which a host's message may quote).
 */
export function describeIssues(error: z.ZodError, input: unknown, shown: (message: string, at: unknown) => string = (m) => m): string[] {
  const lines: string[] = [];
  for (const issue of error.issues.slice(0, MAX_ISSUES)) {
    const where = fieldPath(issue.path);
    const message = shown(issue.message, valueAt(input, issue.path)).replace(/^Invalid input: /, "");
    if (issue.code === "invalid_type" && issue.path.length > 0 && valueAt(input, issue.path) === undefined) {
      // zod's own message says "received undefined"; a host's own (z.string({ error })) is kept.
      const own = message === issue.message;
      lines.push(`missing ${where} (${own || issue.expected === undefined ? message : `expected ${issue.expected}`})`);
    } else if (issue.code === "unrecognized_keys") {
      const keys = issue.keys.slice(0, MAX_KEYS).map((k) => ":" + k);
      if (issue.keys.length > MAX_KEYS) keys.push(`and ${issue.keys.length - MAX_KEYS} more`);
      lines.push(`${where}: unknown key${issue.keys.length === 1 ? "" : "s"} ${keys.join(", ")}`);
    } else {
      lines.push(`${where}: ${message}`);
    }
  }
  if (error.issues.length > MAX_ISSUES) lines.push(`... and ${error.issues.length - MAX_ISSUES} more`);
  return lines;
}
