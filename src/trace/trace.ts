// The full trace of a run: every turn as it happened. It is the debugging view, never
// shrinks, serializes to JSON, and is the input from which prompt views are built.
import type { CompactionEvent, CompactionStats, Json } from "../compaction/types.js";
import type { ErrorInfo } from "../lisp/index.js";
import type { ViewOptions, ViewStats } from "./view-settings.js";

export type { Role } from "../llm/types.js";
import type { Role } from "../llm/types.js";

export interface TraceMessage {
  role: Role;
  content: string;
}

export interface ToolCallTrace {
  name: string;
  /** Arguments as the tool received them (plain JSON; hidden values as stand-ins). */
  args: unknown;
  /** The program's arguments, when the tool ran with others: the host approved the call with edited arguments (`args`). A resumed run matches its calls against these. */
  asked?: unknown;
  /** The result as plain JSON, when the call succeeded. */
  result?: unknown;
  /**
   * The result as the program had it, when its plain JSON loses that: its sets as JS Sets, its
   * maps as JS Maps (keys other than keywords). A replayed call (resume) answers with it.
   */
  exact?: unknown;
  /** The definition of this turn holding the whole result (the very value the call returned), if one does. */
  holder?: string;
  error?: string;
  /** The limit the result ran into (nesting_too_deep, collection_too_large, ...), when that is why the call failed: a replay meets it again. */
  errorKind?: string;
  /** That limit's hint. */
  errorHint?: string;
  /** What the call's arguments and result counted against `maxToolResultSize` (ToolCallRecord.size): a resumed run counts its nested runs' calls, which it does not run again. */
  size?: number;
  durationMs: number;
}

/** A definition (def/defn) as recorded for summaries and resume. */
export interface DefinitionTrace {
  name: string;
  doc?: string;
  kind: "function" | "value";
  /** Parameter vector(s) of a function, e.g. "[x y]". */
  params?: string;
  /** Type label: vector, map, set, string, integer, float, boolean, keyword, nil, function. */
  type: string;
  /** Element count of a collection, character count of a string. */
  size?: number;
  /** Bounded EDN preview of the value (the interpreter's sample printer). */
  sample: string;
  /** Full EDN of a data value when it fits the trace's size budget (for resume). */
  edn?: string;
  /** Source of the defining form (functions are re-created from it on resume). */
  source?: string;
}

export type TurnStatus =
  | "ok" // the program ran and did not return
  | "error" // the program failed (parse, analysis or runtime error)
  | "no_code" // the reply had no usable program
  | "invalid_return" // (return v) failed the output schema
  | "returned" // (return v) passed validation: the run ends
  | "failed" // (fail reason): the run ends
  | "paused"; // a tool call waits for the host's approval: the run ends paused, and resumes from this turn

export interface TurnUsage {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** Prompt tokens the provider reported writing to its cache (priced above input), when it reported any: a resumed run prices the turn again with them. */
  cacheWriteTokens?: number;
  /**
   * Where the token figures come from: "provider" when the LLM client reported usage, "local"
   * when the run measured the prompt itself (src/compaction/measure.ts). Absent in older traces.
   */
  source?: "provider" | "local";
  /** Dollars of the request under the price of the run's model (`settings.model`); absent when no price is known for it. */
  cost?: number;
  /** Time waiting for the LLM. */
  llmMs: number;
  /** Time running the program (tools included). */
  execMs: number;
}

export interface Turn {
  /** 1-based. */
  number: number;
  /** Exactly what the LLM was sent for this turn. */
  messages: TraceMessage[];
  /** The LLM's raw reply. */
  reply: string;
  /** Set when the reply stopped at the model's output token limit: it is cut, and the feedback says so. */
  truncated?: true;
  /** The program extracted from the reply, or null. */
  program: string | null;
  status: TurnStatus;
  /** EDN of the program's value (returned value for "returned"), when it ran. */
  value?: string;
  /** Set when the value holds hidden context: its EDN shows stand-ins, but one cut at the EDN budget may show none of them. */
  valueHidden?: true;
  error?: ErrorInfo;
  /** println output lines (bounded by the interpreter, with a marker when cut). */
  prints: string[];
  toolCalls: ToolCallTrace[];
  /** Definitions made by this turn (empty when it failed: failed turns roll back). */
  definitions: DefinitionTrace[];
  /** Every name in memory after the turn, with its latest definition. */
  memory: DefinitionTrace[];
  /** The user message fed back to the LLM after this turn (absent on the final turn). */
  feedback?: string;
  usage: TurnUsage;
  /** What sanitising changed in the program before it ran (smart quotes, invisible characters). */
  notes?: string[];
  /** Statistics of the prompt view that built this turn's messages. */
  view?: ViewStats;
  /** What the run's history strategy did for this turn's prompt. */
  compaction?: TurnCompaction;
  /** Runs of nested agents (SubAgent.asTool) called by this turn's program, in call order. */
  nested?: NestedRunTrace[];
}

/** A history strategy's work on one prompt, as the trace keeps it. */
export interface TurnCompaction {
  /** Its statistics without the wall time (a trace is the same however fast the machine was). */
  stats: Omit<CompactionStats, "durationMs">;
  events: CompactionEvent[];
  /** The strategy's state after building the prompt: a resumed run continues from the last one. */
  state: Json;
  /** The replies of the summary calls it made, in order, so a resumed run replays them instead of asking again. */
  calls?: string[];
}

/** A nested agent's run, called as a tool. */
export interface NestedRunTrace {
  /** The tool name the parent called it by. */
  tool: string;
  ok: boolean;
  trace: RunTrace;
}

export interface RunTrace {
  /** 2 since traces record a history strategy; version 1 traces read the same way. */
  version: 1 | 2;
  /** The system prompt (byte-stable across turns). */
  system: string;
  /** The first user message: the task. */
  task: string;
  turns: Turn[];
  /** What the run's prompts were built with, so a stored trace can rebuild either view. */
  settings?: TraceSettings;
  /**
   * LLM requests that failed after the provider billed them (LlmError details.usage), the one
   * the run ended at and, in a resumed run, the saved run's: their turns have no record, yet
   * their tokens count in the step's usage, so the trace's totals add them.
   */
  failedRequests?: FailedRequest[];
}

/** A billed LLM request that failed (see RunTrace.failedRequests). */
export interface FailedRequest {
  turn: number;
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  /** The LlmError's kind. */
  error: string;
}

/** The run settings prompt views depend on besides the turns. */
export interface TraceSettings {
  maxTurns: number;
  /** The run withdrew its tools on the final turn. */
  toolsWithdrawn: boolean;
  /** Characters of println output its feedback showed. */
  maxPrintChars: number;
  view: ViewOptions;
  /** The model the run's replies came from (what its costs are priced by). */
  model?: string;
  /** The history strategy that built every prompt, when one did instead of the view (trace version 2). */
  strategy?: { name: string; options: Readonly<Record<string, unknown>> };
}
