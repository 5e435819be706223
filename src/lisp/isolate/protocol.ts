// The messages between the host and a worker running one program at a time. Everything here
// is structured-clone-safe: values travel as Wire, tool arguments and results as plain data.
// (A run's fuel counter is shared memory, which the clone shares rather than copies.)
import { LispError, type ErrorInfo } from "../errors.js";
import type { Limits } from "../limits.js";
import type { HandedText, Origin } from "../marks.js";
import type { Wire } from "../wire.js";

/** A value too deeply nested to cross between the threads: a stack overflow writing or reading its message. */
export function tooDeepToCross(message = "a value the program made is nested too deeply to leave its worker thread"): LispError {
  return new LispError("nesting_too_deep", message, undefined, "keep data shallow");
}

/** A tool as the worker knows it: its name and call rules; the code stays on the host. */
export interface ToolInfo {
  name: string;
  params?: readonly string[];
  timeoutMs?: number;
  maxCalls?: number;
}

/** An error a context value gives when the program reads it (it was not plain data). */
export interface DataError {
  kind: ErrorInfo["kind"];
  message: string;
  hint?: string;
}

/** One context key: its value, or the error reading it gives and, for a hidden key, its readable parts (`readableParts`, for its records). */
export type CtxEntry = readonly [key: string, value: Wire, error: DataError | null, parts?: readonly Wire[]];

/** A memory entry sent as data, or to be defined again from its source (it holds a function). */
export interface MemoryEntryWire {
  name: string;
  doc?: string;
  source?: string;
  value?: Wire;
  hidden?: Origin;
}

export interface RunMessage {
  type: "run";
  source: string;
  ctx: readonly CtxEntry[] | null;
  /** The hidden context of the runs above (`EvaluateOptions.callerHidden`), as the context is sent. */
  callerHidden?: ReadonlyArray<readonly CtxEntry[]>;
  /** The context as JSON text, parsed by the run in the worker (`EvaluateOptions.ctxJson`). */
  ctxJson?: string;
  tools: ToolInfo[];
  /** What earlier evaluations handed their tools (`EvaluateOptions.handed`), searched for in the tools' answers. */
  handed?: readonly HandedText[];
  /** Memory the worker kept from an earlier run (by id), or sent whole. */
  memory: { kept: number } | { entries: MemoryEntryWire[] };
  limits?: Partial<Limits>;
  toolTimeoutMs?: number;
  /**
   * One number over shared memory (not copied): the fuel the run has used, as of its last check
   * of the clock or tool call, which the host reports if it ends the worker.
   */
  fuel: Float64Array;
}

export interface MemoryMessage {
  type: "memory";
  entries: MemoryEntryWire[];
}

export interface AnswerMessage {
  type: "answer";
  call: number;
  /** The tool's result, already converted (and checked) as the program receives it. */
  value?: Wire;
  /** The tool said its result is computed from its hidden arguments (`ToolCallInfo.hideResult`). */
  hidden?: true;
  /** The tool said these parts of its result are (`ToolCallInfo.hideResult(parts)`). */
  hiddenParts?: string[];
  /** Why the call failed, as the program's `tool_error` tells it. */
  error?: string;
  /** The result was refused as it was converted (too big, not data, out of time): the error the run sees. */
  refused?: DataError;
  /** What converting the result cost on the host, charged to the run. */
  cost?: { steps: number; ms: number };
  /** The host's tool session gave up on the call after this many ms: the program sees `tool_timeout`. */
  timeoutMs?: number;
  /** The host stopped the program at this call (a run pausing for approval): it ends with `aborted`, which no try catches. */
  halted?: true;
  /** Hidden keys of the context a tool renewed in place since the run started (`renewedContext`), as the context's own entries. */
  ctx?: CtxEntry[];
  /** Likewise for the hidden context of the runs above (`callerHidden`), each by its place there. */
  callers?: Array<readonly [at: number, entries: CtxEntry[]]>;
}

export type ToWorker = RunMessage | MemoryMessage | AnswerMessage;

export interface CallRecordWire {
  name: string;
  args: unknown;
  result?: unknown;
  /** Index into `DoneMessage.values` of the value the program received. */
  value?: number;
  error?: string;
  errorKind?: string;
  errorHint?: string;
  durationMs: number;
}

export interface DoneMessage {
  type: "done";
  ok: boolean;
  error?: ErrorInfo;
  outcome?: "value" | "return" | "fail";
  /** The result as plain data. */
  value?: unknown;
  /** The result first, then the definitions' values, then tool results: one writer, sharing kept. */
  values: Wire[];
  defs: Array<{ name: string; doc?: string; source?: string; hidden?: Origin }>;
  calls: CallRecordWire[];
  prints: string[];
  /** The run's marks of strings and numbers (objects carry theirs in `values`), when it has marks. */
  marks?: Array<[string | number, Origin]>;
  fuelUsed: number;
  /** The id the worker keeps the new memory under. */
  memory: number;
}

export type FromWorker =
  | { type: "ready" }
  | { type: "need-memory" }
  /**
   * `shown`: the arguments as the call's record shows them (marked values as stand-ins), when they
   * differ. `marks`: the strings and numbers the run marked since its previous call, when any: the
   * host's record of the call hides the hidden values a tool's error message quotes with them, as
   * the run's own record does.
   */
  | { type: "call"; call: number; name: string; args: Record<string, unknown>; shown?: Record<string, unknown>; size?: number; marks?: Array<[string | number, Origin]> }
  /** Lines the program printed since the last such message, so they outlive a worker that is ended. */
  | { type: "print"; lines: string[] }
  | { type: "cancel"; call: number }
  /** The program started (true) or stopped (false) running: the span the host's hard stop counts. */
  | { type: "running"; running: boolean }
  /** The run has read its context text (ctxJson): a hard stop from here on stops the program, not the read. */
  | { type: "read" }
  | DoneMessage;
