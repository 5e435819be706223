// The run-state file: a run as saved for resuming (the trace, the memory as EDN and source, the
// history strategy and its last state, the view options the prompts were built with), its
// format constant, and its one reader and writer. It lives below the agent so the viewer and
// the CLI read a saved run without loading the agent; resuming one is the agent's (agent/resume.ts).
import { z } from "zod";
import type { Json } from "../compaction/types.js";
import type { Origin } from "../lisp/index.js";
import { jsonSyntaxError } from "../json/json-error.js";
import { encodeTrace, maxPrintCharsSchema, numberReplacer, numberReviver, traceFromJson, unsavable } from "./serialize.js";
import type { RunTrace } from "./trace.js";
import { isObjectArg, kindOf } from "../llm/args.js";
import { viewOptionsSchema, type ViewOptions } from "./view-settings.js";

/** A tool call waiting for the host's decision. Plain data: it survives JSON as it is. */
export interface ApprovalRequest {
  /** Stable across saving and resuming: the turn and the call's place among the turn's tool calls. */
  id: string;
  turn: number;
  tool: string;
  /** The arguments as the trace shows them: values from hidden context are stand-ins. */
  args: unknown;
}

/** The host's answer to one request: run it (with `args` replacing the program's, validated again), or reject it. */
export type ApprovalDecision = { approved: true; args?: Record<string, unknown> } | { approved: false; reason?: string };

export const approvalDecisionSchema = z.union([
  z.object({ approved: z.literal(true), args: z.record(z.string(), z.unknown()).optional() }).strict(),
  z.object({ approved: z.literal(false), reason: z.string().optional() }).strict(),
]);

/** Where a run paused: the requests, and which calls of the paused turn did not run (by their place in it). */
export interface Paused {
  approvals: ApprovalRequest[];
  held: number[];
  /**
   * Decisions the host gave for held calls that had not reached the approval gate when the
   * resumed turn paused again (parallel branches), by request id: they apply at the next resume,
   * so the host is not asked again about a call it decided. Absent when there are none.
   */
  decided?: Record<string, ApprovalDecision>;
}

export const RUN_STATE_FORMAT = "ptc-lisp.run-state";
export const RUN_STATE_VERSION = 1;

/** One name in memory: data as EDN, a function as the source of its defining form. */
export interface SavedDefinition {
  name: string;
  kind: "value" | "function";
  doc?: string;
  edn?: string;
  source?: string;
  /** Where a value from hidden context came from: restored with the value, so it stays hidden. */
  hidden?: Origin;
}

/** A run as saved for resuming: trace, memory and summaries, with the settings they were made with. */
export interface RunState {
  format: typeof RUN_STATE_FORMAT;
  version: typeof RUN_STATE_VERSION;
  /** The agent's turn budget when the run was saved. */
  maxTurns: number;
  /** The prompt-view options the run used. */
  view: ViewOptions;
  /** Whether the run withdrew its tools on the final turn (it had tools and more than one turn). */
  toolsWithdrawn: boolean;
  maxPrintChars: number;
  /** How the run ended, if it did: resuming a run that returned or failed is refused. */
  outcome: { ok: true; value?: unknown } | { ok: false; reason: string; message: string };
  trace: RunTrace;
  memory: SavedDefinition[];
  /** The compressed view's summary of every summarized turn, as the next prompt would show it. */
  summaries: Array<{ turn: number; text: string }>;
  /** The history strategy that built the prompts, and its state after the last saved turn (states saved before strategies were recorded have none). */
  history?: { strategy: { name: string; options: Record<string, unknown> }; state: Json };
  /** Set when the run paused for approval: the requests, and the paused turn's calls that did not run. The paused turn is the trace's last. */
  paused?: Paused;
  /**
   * The results, as the program had them, of the calls whose records show hidden values as
   * stand-ins (by turn number and the call's place among the turn's calls): a replayed call
   * answers with them; `whole` when the result was hidden whole (the tool called hideResult).
   * Like the memory's EDN, they hold hidden values. Absent when there are none.
   */
  hiddenResults?: Array<{ turn: number; call: number; result: unknown; whole?: true }>;
}

/** Thrown when a run state cannot be read or resumed; the message says why. */
export class ResumeError extends Error {
  override readonly name = "ResumeError";
}

const json: z.ZodType<Json> = z.lazy(() => z.union([z.null(), z.boolean(), z.number(), z.string(), z.array(json), z.record(z.string(), json)]));

const savedDefinition = z.object({
  name: z.string(),
  kind: z.enum(["value", "function"]),
  doc: z.string().optional(),
  edn: z.string().optional(),
  source: z.string().optional(),
  hidden: z.object({ path: z.string(), root: z.string(), derived: z.boolean(), keywords: z.array(z.string()).optional(), smalls: z.array(z.union([z.string(), z.number()])).optional(), cut: z.boolean().optional() }).optional(),
});

/** A run's memory as saved (saveMemory's result): what restoreMemory reads. */
export const savedMemorySchema = z.array(savedDefinition);

const runStateSchema = z.object({
  format: z.literal(RUN_STATE_FORMAT),
  version: z.literal(RUN_STATE_VERSION),
  maxTurns: z.number().int().positive(),
  view: viewOptionsSchema,
  toolsWithdrawn: z.boolean(),
  maxPrintChars: maxPrintCharsSchema,
  outcome: z.union([z.object({ ok: z.literal(true), value: z.unknown().optional() }), z.object({ ok: z.literal(false), reason: z.string(), message: z.string() })]),
  trace: z.unknown(),
  memory: savedMemorySchema,
  summaries: z.array(z.object({ turn: z.number().int().positive(), text: z.string() })),
  history: z.object({ strategy: z.object({ name: z.string(), options: z.record(z.string(), z.unknown()) }), state: json }).optional(),
  paused: z
    .object({
      approvals: z.array(z.object({ id: z.string(), turn: z.number().int().positive(), tool: z.string(), args: z.unknown() })).min(1),
      held: z.array(z.number().int().nonnegative()),
      decided: z.record(z.string(), approvalDecisionSchema).optional(),
    })
    .optional(),
  hiddenResults: z.array(z.object({ turn: z.number().int().positive(), call: z.number().int().nonnegative(), result: z.unknown(), whole: z.literal(true).optional() })).optional(),
});

/** Why a value an untyped host passed as a state is not one (its JSON text, say), or null: reading it would fail with a bare TypeError. `who` names the function it was passed to. */
export function notRunState(x: unknown, who: string): string | null {
  if (typeof x === "string") return `${who} expects a RunState object, got its JSON text: read it with runStateFromJson first`;
  const expects = `${who} expects a RunState (saveRun's result, a paused step's state, or runStateFromJson's), got`;
  if (!isObjectArg(x)) return `${expects} ${kindOf(x)}`;
  const { format, trace, outcome } = x as Partial<Record<keyof RunState, unknown>>;
  if (format !== RUN_STATE_FORMAT) return `${expects} an object without its format`;
  if (typeof outcome !== "object" || outcome === null || typeof trace !== "object" || trace === null || !Array.isArray((trace as { turns?: unknown }).turns)) return `${expects} an object without its trace and outcome`;
  return null;
}

/** The state as JSON (every number kept, -0 and non-finite ones included, as traceToJson does). */
export function runStateToJson(state: RunState, indent?: number): string {
  const wrong = notRunState(state, "runStateToJson");
  if (wrong !== null) throw new TypeError(wrong);
  const { trace, ...rest } = state;
  const problem = state.outcome.ok ? unsavable(state.outcome.value) : null;
  if (problem !== null) throw new TypeError(`runStateToJson: the run's value cannot be saved as JSON: ${problem}`);
  // The trace goes through its own serializer (which tags non-finite numbers) as data, never
  // spliced in as text: a value such as {:trace nil} elsewhere in the state cannot misplace it.
  return JSON.stringify({ ...rest, trace: encodeTrace(trace) }, numberReplacer, indent);
}

/**
 * A state a host hands over as an object (saveRun's, a paused step's, or one it edited), read as
 * its file is read: written in runStateToJson's form and read back by runStateFromJson, so every
 * part is plain data the reader checked, and a malformed one is named by its place. A getter or
 * Proxy trap that throws is refused without its message (host text, which may quote a secret).
 */
export function readRunState(x: unknown, who: string): RunState {
  let wrong: string | null;
  let text = "";
  try {
    wrong = notRunState(x, who);
    if (wrong === null) {
      const { trace, ...rest } = x as RunState;
      text = JSON.stringify({ ...rest, trace: encodeTrace(trace) }, numberReplacer);
    }
  } catch {
    throw new ResumeError(`${who}: the saved state could not be read (reading it threw)`);
  }
  if (wrong !== null) throw new ResumeError(wrong);
  return runStateFromJson(text);
}

/** Reads a state written by runStateToJson; throws ResumeError saying what is wrong and where. */
export function runStateFromJson(text: string): RunState {
  let raw: unknown;
  try {
    raw = JSON.parse(text, numberReviver);
  } catch (e) {
    throw new ResumeError(`not a ptc-lisp run state: invalid JSON (${jsonSyntaxError(text, e)})`);
  }
  const checked = runStateSchema.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    throw new ResumeError(`not a ptc-lisp run state: at ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
  }
  let trace: RunTrace;
  try {
    trace = traceFromJson(JSON.stringify(checked.data.trace, numberReplacer));
  } catch (e) {
    throw new ResumeError(`not a ptc-lisp run state: ${(e as Error).message}`);
  }
  return { ...(checked.data as Omit<RunState, "trace">), trace };
}
