// The agent's public types: definitions, run options, results and usage. Kept apart from the
// code so every agent module (the loop, tools, resume, serialization) can share them without
// importing each other.
import type { z } from "zod";
import type { StrategySpec } from "../compaction/registry.js";
import type { Strategy } from "../compaction/types.js";
import type { CompressionTotals, PromptCompression } from "../history/stats.js";
import type { ViewOptions, ViewStats } from "../history/view.js";
import type { Isolation, Limits, Memory } from "../lisp/index.js";
import type { TextMessage as ChatMessage, Llm } from "../llm/types.js";
import type { RunTrace, Turn, TurnUsage } from "../trace/trace.js";
import type { PausedStep } from "./approval.js";
import type { AgentFailure } from "./errors.js";
import type { AgentEvent } from "./events.js";
import type { TracerOption } from "./telemetry.js";
import type { Tool } from "./tools.js";
import type { Replayed } from "./observer.js";

/** Options a nested agent inherits from the run that calls it, unless it sets its own. */
export interface InheritableOptions {
  llm?: Llm;
  /** Interpreter limits for each program. */
  limits?: Partial<Limits>;
  /** Build prompts with the compressed view instead of the full history. Default false. */
  compressHistory?: boolean;
  /** println outputs kept by the compressed view. Default 15. */
  printlnHistoryLimit?: number;
  /** Further prompt-view options (sample sizes, error context...). */
  view?: Partial<Omit<ViewOptions, "compressHistory" | "printlnHistoryLimit">>;
  /** Per-call timeout of tools that set none. Default 30 s. */
  toolTimeoutMs?: number;
  /** Nesting depth allowed for agents called as tools. Default 3. A nested agent's own may lower its callers' limit, never raise it. */
  maxDepth?: number;
  /**
   * Nested agent runs the run may start in all, at any depth and over all its turns. Default 50.
   * Each running one holds a worker (isolation "worker"), so this bounds a fan-out's memory. A
   * nested agent's own bounds its subtree and may lower its callers' limit, never raise it.
   */
  maxNestedRuns?: number;
  /**
   * Size of the tool calls (arguments and results) a run keeps in its trace, its nested runs'
   * included: characters of their strings plus one per value, as they crossed. Default
   * 100,000,000. Past it, a call stops the program with tool_limit_exceeded, so a run cannot
   * hold more than the host's memory. A nested agent's own bounds its subtree; its callers' still bound it.
   */
  maxToolResultSize?: number;
  /** Characters of println output shown in feedback. Default 4000. */
  maxPrintChars?: number;
  /** Largest EDN recorded whole for a definition or a turn's value. Default 4096. */
  ednBudget?: number;
  /**
   * How earlier turns are sent: any compaction strategy (an instance, a registered name, or
   * `{ name, options }`, e.g. "sliding-window" or "interpreter-summaries"). It is given the full
   * history and the turn records, and its state is kept from turn to turn. Overrides
   * `compressHistory`. Default: none (the full history, or the compressed view with `compressHistory`).
   */
  history?: Strategy | StrategySpec | string;
  /** The model a history strategy that summarizes calls (default: none, so it summarizes extractively). */
  historyLlm?: Llm;
  /**
   * Where each program runs: "worker" (the default) in a pooled worker thread with a hard heap
   * cap, ended at once on abort or a time-limit overrun, so no program can stall or crash the
   * host; "none" in the host's thread. See `EvaluateOptions.isolation`.
   */
  isolation?: Isolation;
  /**
   * Export the run as OpenTelemetry spans (GenAI semantic conventions) to this tracer, or to the
   * globally registered provider's with "global". Default: none, and no cost. See docs/agent.md.
   */
  tracer?: TracerOption;
}

export interface AgentDefinition<O extends z.ZodType | undefined = z.ZodType | undefined> extends InheritableOptions {
  /** The mission. `{{key}}` placeholders are filled from the run's context. */
  prompt: string;
  tools?: Record<string, Tool>;
  /** What (return v) must satisfy. Without it any value is accepted. */
  output?: O;
  /** Turns (LLM calls) allowed. Default 5. */
  maxTurns?: number;
  /** Shown when the agent is offered to another agent as a tool. */
  description?: string;
}

/** Marks the objects SubAgent.create made. */
export const AGENT = Symbol("ptc-lisp.agent");

export interface Agent<O extends z.ZodType | undefined = z.ZodType | undefined> {
  readonly prompt: string;
  readonly tools: Readonly<Record<string, Tool>>;
  readonly output?: O;
  readonly maxTurns: number;
  readonly description?: string;
  /** The agent's own settings, which win over inherited ones. */
  readonly options: Readonly<InheritableOptions>;
  readonly [AGENT]: true;
}

export interface RunOptions extends InheritableOptions {
  /** Input data, readable as data/key. Keys starting with `_` are usable but never shown in prompts. */
  context?: Readonly<Record<string, unknown>>;
  /** Aborts the run (and its in-flight LLM and tool calls): reason `aborted`. */
  signal?: AbortSignal;
  /** Wall-clock budget of the whole run, in ms: reason `deadline_exceeded`. */
  deadlineMs?: number;
  /** LLM tokens (input + output, nested agents included) the run may use: reason `token_budget_exceeded`. */
  tokenBudget?: number;
  /**
   * Called after each turn of this run (not of nested agents), with its record, usage and the
   * compression stats of the prompt it answered: for logs and progress without wrapping the Llm.
   * A callback that throws ends the run with `internal_error`; an async one is not awaited, and its rejection is ignored.
   */
  onTurn?: (event: TurnEvent) => void;
  /**
   * Told each event of this run as it happens: model text, the program, tool calls, printed
   * lines, turns and the end (see `AgentEvent`; `SubAgent.stream` gives the same as an async
   * iterable). Hidden values appear as stand-ins. What it throws (or its promise rejects with) is ignored.
   */
  onEvent?: (event: AgentEvent) => void;
  /** Called once with the run's result, just before `run` resolves. What it throws is ignored (the run has ended); an async one is not awaited, its rejection ignored. */
  onStep?: (step: Step) => void;
}

/** What `onTurn` receives. */
export interface TurnEvent {
  /** A copy of the turn as recorded in the trace (program, output, tool calls, definitions, error, usage): editing it changes neither the next prompt nor the trace. */
  readonly turn: Turn;
  readonly maxTurns: number;
  /** Tokens and LLM requests of the run so far, this turn included (nested agents apart). */
  readonly totals: Readonly<UsageTotals>;
  /** The stats of the view that built this turn's prompt (null before any prompt). */
  readonly compression: ViewStats | null;
  /** In a resumed run, what of this turn the saved run did (see Replayed): its usage was counted then. Absent for a live turn. */
  readonly replayed?: Replayed;
}

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  cachedTokens: number;
  llmRequests: number;
}

export interface CompressionUsage {
  enabled: boolean;
  /** The stats of the view that built the last prompt. */
  latest: ViewStats | null;
  /** Sums over every prompt built in the run. */
  totals: Pick<ViewStats, "turnsCompressed" | "definitionsShown" | "printlnShown" | "printlnDropped" | "toolCallsShown">;
  /**
   * Per prompt (with compression on): the view's stats with the prompt's tokens under the
   * full and the compressed view and the tokens shared with the previous prompt (o200k_base).
   */
  perTurn: PromptCompression[];
  /** Token totals over `perTurn`: summed and peak prompts, prefix-cached cost of both views. Null with compression off. */
  tokens: CompressionTotals | null;
}

export interface RunUsage extends UsageTotals {
  /** inputTokens + outputTokens. */
  totalTokens: number;
  /** Time waiting for the LLM, running programs, and the whole run, in ms. */
  llmMs: number;
  execMs: number;
  durationMs: number;
  perTurn: Array<TurnUsage & { turn: number }>;
  /** What nested agents (called as tools) used; counted against the token budget too. */
  nested: UsageTotals & { runs: number };
  /** What the history strategy's summarizer (`historyLlm`) used, rejected summaries included; counted against the token budget too. */
  summaries: UsageTotals;
  compression: CompressionUsage;
}

export interface StepBase {
  /** Every turn as it happened: the debugging view, never shortened. */
  turns: Turn[];
  trace: RunTrace;
  /** Definitions after the last successful turn (values, docstrings, sources). */
  memory: Memory;
  usage: RunUsage;
  /** Exactly what the LLM was sent, turn by turn. */
  messages: ChatMessage[][];
  /** With reason `approval_required`: the calls waiting for a decision, and the run saved there (resume it with the decisions). */
  paused?: PausedStep;
}

export type Step<T = unknown> = (StepBase & { ok: true; value: T; fail?: undefined }) | (StepBase & { ok: false; value?: undefined; fail: AgentFailure });

export type OutputOf<O> = O extends z.ZodType ? z.output<O> : unknown;

/** What a run hands to the tools it calls, so nested agents can inherit from it. */
export interface RunScope {
  readonly depth: number;
  readonly options: Readonly<InheritableOptions>;
  /** Absolute time (Date.now) when the run's deadline passes, if it has one. */
  readonly deadlineAt: number | undefined;
  /** Tokens the run may still spend (Infinity without a budget). */
  tokensLeft(): number;
  /** Counts usage a nested run just spent, as it spends it (and passes it up to the runs above). */
  charge(usage: Readonly<UsageTotals>): void;
  /** Counts a nested run about to start against `maxNestedRuns` (this run's and its callers'); a refusal's message when one is past it. */
  admitNested(): string | undefined;
  /** Records a nested run started on the current turn; the turn waits for it to end (it ends soon after the turn's program stops, as its signal fires). */
  addNested(tool: string, step: Promise<Step>): void;
  /** The span a nested run's spans hang under (the calling program's evaluation), when the run exports spans. */
  parentSpan?(): unknown;
  /** Why a tool call is refused because the run (or one above it) has kept `maxToolResultSize` of tool results, if it is. */
  toolResultsFull?(): string | undefined;
  /** Counts a tool result's size (ToolCallRecord.size) against this run's `maxToolResultSize` and its callers'. */
  keepToolResult?(size: number): void;
  /** The hidden context of the run and of the runs above it, nearest first: never readable by a nested run, but hidden where its tools quote it. */
  hiddenContexts?(): ReadonlyArray<Readonly<Record<string, unknown>>>;
}

/** Options of SubAgent.asTool. */
export interface AsToolOptions {
  /** What the calling agent's prompt says the tool does (default: the agent's description or mission). */
  description?: string;
  /** The argument map; it becomes the nested run's context. Default: one string per {{placeholder}} of the mission. */
  input?: z.ZodObject;
  /** Per-call timeout in ms. Default: none (the nested run has its own limits). */
  timeoutMs?: number;
  /** Calls allowed per parent run. */
  maxCalls?: number;
}
