// SubAgent: an LLM that works by writing PTC-Lisp programs, one per turn. Each turn the
// prompt view builds the messages from the trace, the LLM replies, one program is
// extracted and run with the memory of earlier turns, and the outcome is recorded and fed
// back, until the program returns a valid value, fails, or the run meets one of its limits.
import { hiddenRedactor, type Redactor } from "./redact.js";
import { z } from "zod";
import { compressedView } from "../history/compressed.js";
import { fullView } from "../history/full.js";
import { measureView, totalsOf, type CompressionTotals, type PromptCompression, type PromptPair } from "../history/stats.js";
import { defaultViewOptions, type PromptView, type ViewInput, type ViewOptions, type ViewStats } from "../history/view.js";
import type { ErrorInfo } from "../lisp/errors.js";
import { evaluate, print, type Memory } from "../lisp/evaluate.js";
import { defaultLimits, resolveLimits, type Limits } from "../lisp/limits.js";
import { AgentDefinitionError, describeIssues, type AgentFailure, type FailReason } from "./errors.js";
import { extractProgram } from "./extract.js";
import { DEFAULT_MAX_PRINT_CHARS, renderFeedback } from "../trace/feedback.js";
import type { TextMessage as ChatMessage, Llm, LlmUsage } from "../llm/types.js";
import { systemPrompt } from "./prompt/system.js";
import { expandMission, placeholders, taskMessage } from "./prompt/task.js";
import { defaultRecordOptions, Recorder } from "../trace/record.js";
import type { ResumeOptions, RunState } from "./resume.js";
import { isTool, tool, TOOL_NAME, ToolSession, type Tool, type ToolRunContext } from "./tools.js";
import type { NestedRunTrace, RunTrace, TraceSettings, Turn, TurnStatus, TurnUsage } from "../trace/trace.js";

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
  /** Nesting depth allowed for agents called as tools. Default 3. */
  maxDepth?: number;
  /** Characters of println output shown in feedback. Default 4000. */
  maxPrintChars?: number;
  /** Largest EDN recorded whole for a definition or a turn's value. Default 4096. */
  ednBudget?: number;
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

const AGENT = Symbol("ptc-lisp.agent");

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
   * A callback that throws ends the run with `internal_error`.
   */
  onTurn?: (event: TurnEvent) => void;
  /** Called once with the run's result, just before `run` resolves (what it throws rejects the run). */
  onStep?: (step: Step) => void;
}

/** What `onTurn` receives. */
export interface TurnEvent {
  /** The turn as recorded in the trace (program, output, tool calls, definitions, error, usage). */
  readonly turn: Turn;
  readonly maxTurns: number;
  /** Tokens and LLM requests of the run so far, this turn included (nested agents apart). */
  readonly totals: Readonly<UsageTotals>;
  /** The stats of the view that built this turn's prompt (null before any prompt). */
  readonly compression: ViewStats | null;
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
  compression: CompressionUsage;
}

interface StepBase {
  /** Every turn as it happened: the debugging view, never shortened. */
  turns: Turn[];
  trace: RunTrace;
  /** Definitions after the last successful turn (values, docstrings, sources). */
  memory: Memory;
  usage: RunUsage;
  /** Exactly what the LLM was sent, turn by turn. */
  messages: ChatMessage[][];
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
  /** Records a nested run on the current turn and adds its usage to the run's. */
  addNested(tool: string, step: Step): void;
}

const DEFAULTS = {
  maxTurns: 5,
  toolTimeoutMs: 30_000,
  maxDepth: 3,
} as const;

function positiveNumber(v: unknown): boolean {
  return typeof v === "number" && v > 0;
}

function checkInheritable(o: InheritableOptions, fail: (message: string) => never): void {
  if (o.llm !== undefined && (typeof o.llm !== "object" || o.llm === null || typeof o.llm.complete !== "function")) fail("llm must implement complete(request)");
  if (o.limits !== undefined) {
    try {
      resolveLimits(o.limits);
    } catch (e) {
      fail((e as { message?: string }).message ?? "invalid limits");
    }
  }
  if (o.printlnHistoryLimit !== undefined && !(Number.isInteger(o.printlnHistoryLimit) && o.printlnHistoryLimit >= 0)) fail(`printlnHistoryLimit must be a non-negative integer, got ${String(o.printlnHistoryLimit)}`);
  for (const key of ["toolTimeoutMs", "maxPrintChars", "ednBudget"] as const) {
    if (o[key] !== undefined && !positiveNumber(o[key])) fail(`${key} must be a positive number, got ${String(o[key])}`);
  }
  if (o.maxDepth !== undefined && !(Number.isInteger(o.maxDepth) && o.maxDepth >= 0)) fail(`maxDepth must be a non-negative integer, got ${String(o.maxDepth)}`);
  if (o.view !== undefined) {
    if (!isPlainObject(o.view)) fail("view must be an object of prompt-view options");
    const defaults = defaultViewOptions as Readonly<Record<string, unknown>>;
    for (const [k, v] of Object.entries(o.view)) {
      if (!Object.hasOwn(defaults, k)) fail(`unknown view option '${k}'; known: ${Object.keys(defaults).join(", ")}`);
      const d = defaults[k];
      if (v !== undefined && (typeof v !== typeof d || (typeof v === "number" && !(Number.isInteger(v) && v >= 0)))) {
        fail(`view.${k} must be ${typeof d === "number" ? "a non-negative integer" : `a ${typeof d}`}, got ${String(v)}`);
      }
    }
  }
}

const INHERITABLE_KEYS = ["llm", "limits", "compressHistory", "printlnHistoryLimit", "view", "toolTimeoutMs", "maxDepth", "maxPrintChars", "ednBudget"] as const;

function pickInheritable(o: InheritableOptions): InheritableOptions {
  const out: InheritableOptions = {};
  for (const k of INHERITABLE_KEYS) if (o[k] !== undefined) (out as Record<string, unknown>)[k] = o[k];
  return out;
}

/** Later layers win; `limits` and `view` merge key by key. */
function mergeOptions(...layers: ReadonlyArray<InheritableOptions | undefined>): InheritableOptions {
  const out: InheritableOptions = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const k of INHERITABLE_KEYS) {
      const v = layer[k];
      if (v === undefined) continue;
      if (k === "limits" || k === "view") (out as Record<string, unknown>)[k] = { ...(out[k] as object | undefined), ...(v as object) };
      else (out as Record<string, unknown>)[k] = v;
    }
  }
  return out;
}

function create<O extends z.ZodType | undefined = undefined>(def: AgentDefinition<O>): Agent<O> {
  const fail = (message: string): never => {
    throw new AgentDefinitionError(message);
  };
  if (typeof def !== "object" || def === null) fail("SubAgent.create expects a definition object");
  if (typeof def.prompt !== "string" || def.prompt.trim() === "") fail("an agent needs a prompt (its mission)");
  const maxTurns = def.maxTurns ?? DEFAULTS.maxTurns;
  if (!Number.isInteger(maxTurns) || maxTurns < 1 || maxTurns > 1000) fail(`maxTurns must be an integer from 1 to 1000, got ${String(def.maxTurns)}`);
  const tools = def.tools ?? {};
  if (typeof tools !== "object" || tools === null) fail("tools must be an object of name → tool({...})");
  for (const [name, t] of Object.entries(tools)) {
    if (!TOOL_NAME.test(name)) fail(`tool name '${name}' cannot be called as tool/${name}: use letters, digits and -`);
    if (!isTool(t)) fail(`tool '${name}' must be created with tool({ description, input, run })`);
  }
  if (def.output !== undefined && !(def.output instanceof z.ZodType)) fail("output must be a zod schema");
  checkInheritable(def, fail);
  const agent: Agent<O> = {
    prompt: def.prompt,
    tools: Object.freeze({ ...tools }),
    maxTurns,
    options: Object.freeze(pickInheritable(def)),
    [AGENT]: true,
    ...(def.output !== undefined ? { output: def.output } : {}),
    ...(def.description !== undefined ? { description: def.description } : {}),
  };
  return Object.freeze(agent);
}

function isAgent(x: unknown): x is Agent {
  return typeof x === "object" && x !== null && (x as Partial<Agent>)[AGENT] === true;
}

const systemPrompts = new WeakMap<Agent, string>();

function systemOf(agent: Agent): string {
  let s = systemPrompts.get(agent);
  if (s === undefined) systemPrompts.set(agent, (s = systemPrompt(agent)));
  return s;
}

/** Why the run's internal controller fired. */
class Stop {
  constructor(readonly reason: Interruption) {}
}

function tokenCount(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}

function abortable<T>(start: () => Promise<T>, signal: AbortSignal): Promise<T> {
  const p = Promise.resolve().then(start);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) {
      p.catch(() => undefined);
      onAbort();
      return;
    }
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (typeof e === "object" && e !== null && typeof (e as { message?: unknown }).message === "string") return (e as { message: string }).message;
  return String(e);
}

/** The keys of `o` whose value is not undefined (an explicit undefined leaves the default in place). */
function definedOnly<T extends object>(o: T | undefined): Partial<T> {
  const out: Partial<T> = {};
  if (o !== undefined) for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** Endings that interrupt a run from outside the loop. */
type Interruption = "aborted" | "deadline_exceeded";

const INTERRUPTED: Readonly<Record<Interruption, string>> = {
  aborted: "the run was aborted by the caller",
  deadline_exceeded: "the run's deadline passed",
};

// setTimeout fires at once for delays past 2^31-1 ms; such deadlines are checked between turns only.
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The state of one run. */
class AgentRun {
  private readonly turns: Turn[] = [];
  private memory: Memory = new Map();
  private readonly totals: UsageTotals = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmRequests: 0 };
  private readonly nested: UsageTotals & { runs: number } = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmRequests: 0, runs: 0 };
  private llmMs = 0;
  private execMs = 0;
  /** The stats of the view that built the last prompt, and their sums over the run. */
  private latestView: ViewStats | null = null;
  private readonly viewTotals: CompressionUsage["totals"] = { turnsCompressed: 0, definitionsShown: 0, printlnShown: 0, printlnDropped: 0, toolCallsShown: 0 };
  /** Per-prompt token figures (compression on), and the prompts they were measured on. */
  private readonly measured: PromptCompression[] = [];
  private prompts: PromptPair | undefined;
  private readonly controller = new AbortController();
  private readonly started = performance.now();
  private readonly view: PromptView;
  private readonly viewOptions: ViewOptions;
  private readonly recorder: Recorder;
  private readonly session: ToolSession;
  private readonly scope: RunScope;
  private readonly deadlineAt: number | undefined;
  private readonly tokenBudget: number;
  /** Tools are withdrawn on the final turn (the agent has tools and more than one turn). */
  private readonly withdraws: boolean;
  private readonly maxPrintChars: number;
  private system = "";
  private task = "";
  private redact: Redactor | null = null;
  private pendingNested: NestedRunTrace[] = [];
  private stopReason: Interruption | null = null;
  private llmError = "";
  private returned: unknown = undefined;
  private failMessage = "";
  private failDetails: unknown = undefined;

  constructor(
    private readonly agent: Agent,
    private readonly options: InheritableOptions,
    private readonly run: RunOptions,
    depth: number,
    parent: RunScope | null,
  ) {
    this.viewOptions = {
      ...defaultViewOptions,
      ...definedOnly(options.view),
      compressHistory: options.compressHistory ?? defaultViewOptions.compressHistory,
      printlnHistoryLimit: options.printlnHistoryLimit ?? defaultViewOptions.printlnHistoryLimit,
    };
    this.view = this.viewOptions.compressHistory ? compressedView : fullView;
    this.recorder = new Recorder({ sampleItems: this.viewOptions.sampleItems, sampleChars: this.viewOptions.sampleChars, ednBudget: options.ednBudget ?? defaultRecordOptions.ednBudget });
    const own = run.deadlineMs !== undefined ? Date.now() + run.deadlineMs : undefined;
    this.deadlineAt = own === undefined ? parent?.deadlineAt : parent?.deadlineAt === undefined ? own : Math.min(own, parent.deadlineAt);
    this.tokenBudget = Math.min(run.tokenBudget ?? Infinity, parent?.tokensLeft() ?? Infinity);
    this.scope = {
      depth,
      options,
      deadlineAt: this.deadlineAt,
      tokensLeft: () => this.tokenBudget - this.tokensUsed(),
      addNested: (name, step) => this.addNested(name, step),
    };
    this.session = new ToolSession(agent.tools, { defaultTimeoutMs: options.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs, scope: this.scope });
    this.withdraws = this.session.size > 0 && agent.maxTurns > 1;
    this.maxPrintChars = options.maxPrintChars ?? DEFAULT_MAX_PRINT_CHARS;
  }

  private tokensUsed(): number {
    return this.totals.inputTokens + this.totals.outputTokens + this.nested.inputTokens + this.nested.outputTokens;
  }

  private stop(reason: Interruption): void {
    if (this.stopReason !== null) return;
    this.stopReason = reason;
    this.controller.abort(new Stop(reason));
  }

  private addNested(tool: string, step: Step): void {
    const u = step.usage;
    for (const k of ["inputTokens", "outputTokens", "cachedTokens", "llmRequests"] as const) this.nested[k] += u[k] + u.nested[k];
    this.nested.runs += 1 + u.nested.runs;
    this.pendingNested.push({ tool, ok: step.ok, trace: step.trace });
  }

  async execute(): Promise<Step> {
    const outer = this.run.signal;
    const onAbort = (): void => this.stop("aborted");
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      this.system = systemOf(this.agent);
      const invalid = this.prepare();
      if (invalid !== null) return this.failure("invalid_input", invalid);
      if (outer?.aborted) return this.interrupted("aborted");
      outer?.addEventListener("abort", onAbort, { once: true });
      const delay = this.deadlineAt === undefined ? Infinity : Math.max(0, this.deadlineAt - Date.now());
      if (delay <= MAX_TIMER_MS) timer = setTimeout(() => this.stop("deadline_exceeded"), delay);
      return await this.loop();
    } catch (e) {
      return this.failure("internal_error", `internal error: ${errorText(e)}`);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      outer?.removeEventListener("abort", onAbort);
    }
  }

  /** Validates the run's input and builds the task message; returns a problem, or null. */
  private prepare(): string | null {
    try {
      checkInheritable(pickInheritable(this.run), (m) => {
        throw new AgentDefinitionError(m);
      });
    } catch (e) {
      return errorText(e);
    }
    const context = this.run.context ?? {};
    if (!isPlainObject(context)) return "context must be a plain object of key → data";
    if (this.options.llm === undefined) return "no llm: pass { llm } to SubAgent.run (or set it on the agent)";
    if (this.run.deadlineMs !== undefined && !positiveNumber(this.run.deadlineMs)) return `deadlineMs must be a positive number, got ${String(this.run.deadlineMs)}`;
    if (this.run.tokenBudget !== undefined && !positiveNumber(this.run.tokenBudget)) return `tokenBudget must be a positive number, got ${String(this.run.tokenBudget)}`;
    this.redact = hiddenRedactor(context);
    const mission = expandMission(this.agent.prompt, context);
    if (!mission.ok) return mission.message;
    try {
      this.task = taskMessage({
        mission: mission.text,
        context,
        maxTurns: this.agent.maxTurns,
        toolsWithdrawn: this.withdraws,
        sample: this.recorder.options,
        maxDepth: resolveLimits(this.options.limits).maxNestingDepth,
      });
    } catch (e) {
      return `the context cannot be passed to the program: ${errorText(e)}`;
    }
    return null;
  }

  private async loop(): Promise<Step> {
    const maxTurns = this.agent.maxTurns;
    // The last turn always ends the run (see `ending`), so the loop needs no bound of its own.
    for (let n = 1; ; n++) {
      if (this.deadlineAt !== undefined && Date.now() >= this.deadlineAt) this.stop("deadline_exceeded");
      if (this.stopReason !== null) return this.interrupted(this.stopReason);
      if (this.tokensUsed() >= this.tokenBudget) return this.overBudget();
      const turn = await this.turn(n, this.withdraws && n === maxTurns);
      if (turn === null) return this.stopReason !== null ? this.interrupted(this.stopReason) : this.failure("llm_error", this.llmError);
      this.turns.push(turn);
      const ending = this.ending(turn, n === maxTurns);
      if (ending === null) turn.feedback = renderFeedback(turn, { maxTurns, toolsWithdrawn: this.withdraws }, { prints: true, maxPrintChars: this.maxPrintChars });
      this.run.onTurn?.({ turn, maxTurns, totals: { ...this.totals }, compression: this.latestView });
      if (ending !== null) return ending;
    }
  }

  /** The step a finished turn ends the run with, or null when the run goes on. */
  private ending(turn: Turn, last: boolean): Step | null {
    if (this.stopReason !== null) return this.interrupted(this.stopReason);
    if (turn.status === "returned") return this.success(this.returned);
    if (turn.status === "failed") return this.failure("failed", this.failMessage, this.failDetails);
    if (last) {
      const why = turn.error !== undefined ? `; the last turn ended with ${turn.error.kind}: ${turn.error.message}` : "";
      return this.failure("max_turns_exceeded", `no valid (return ...) within ${this.agent.maxTurns} turns${why}`);
    }
    if (this.tokensUsed() >= this.tokenBudget) return this.overBudget();
    return null;
  }

  private interrupted(reason: Interruption): Step {
    return this.failure(reason, INTERRUPTED[reason]);
  }

  private overBudget(): Step {
    return this.failure("token_budget_exceeded", `the run used ${this.tokensUsed()} tokens of its budget of ${this.tokenBudget}`);
  }

  /** One turn: prompt, LLM call, extraction, evaluation, record. Null when the LLM call failed. */
  private async turn(n: number, withdrawn: boolean): Promise<Turn | null> {
    const input: ViewInput = { system: this.system, task: this.task, turns: this.turns, maxTurns: this.agent.maxTurns, toolsWithdrawn: this.withdraws, maxPrintChars: this.maxPrintChars };
    const built = this.view(input, this.viewOptions);
    // Nothing derived from a hidden context value is sent: the prompt is scrubbed as a whole.
    const view = this.redact === null ? built : { ...built, messages: this.redact(built.messages) };
    this.noteView(view.stats);
    if (this.viewOptions.compressHistory) {
      const m = measureView(input, view, this.prompts);
      this.measured.push(m.stats);
      this.prompts = m.prompts;
    }
    const llm = this.options.llm as Llm;
    const t0 = performance.now();
    this.totals.llmRequests++;
    let content: string;
    let usage: LlmUsage | undefined;
    try {
      const response = await abortable(() => llm.complete({ messages: view.messages, signal: this.controller.signal, turn: n }), this.controller.signal);
      if (typeof response?.content !== "string") throw new Error("the LLM response has no text content");
      content = response.content;
      usage = response.usage;
    } catch (e) {
      this.llmMs += performance.now() - t0;
      this.llmError = `LLM request failed on turn ${n}: ${errorText(e)}`;
      return null;
    }
    const llmMs = performance.now() - t0;
    this.llmMs += llmMs;
    const tokens = { inputTokens: tokenCount(usage?.inputTokens), outputTokens: tokenCount(usage?.outputTokens), cachedTokens: tokenCount(usage?.cachedTokens) };
    this.totals.inputTokens += tokens.inputTokens;
    this.totals.outputTokens += tokens.outputTokens;
    this.totals.cachedTokens += tokens.cachedTokens;

    const base = { number: n, messages: view.messages, reply: content, usage: { ...tokens, llmMs, execMs: 0 }, view: view.stats };
    const extraction = extractProgram(content);
    if (!extraction.ok) {
      const error: ErrorInfo = { kind: "parse_error", phase: "read", message: extraction.message, hint: extraction.hint };
      return { ...base, program: null, status: "no_code", error, prints: [], toolCalls: [], definitions: [], memory: this.recorder.memory(this.memory) };
    }
    const program = extraction.program;
    this.pendingNested = [];
    const { limits, deadlineCut } = this.limits();
    const t1 = performance.now();
    const result = await evaluate(program, {
      ctx: this.run.context ?? {},
      tools: this.session.specs(withdrawn),
      memory: this.memory,
      limits,
      signal: this.controller.signal,
    });
    base.usage.execMs = performance.now() - t1;
    this.execMs += base.usage.execMs;
    // A program stopped by a time limit that was the deadline's cut has met the deadline.
    if (!result.ok && result.error.kind === "timeout" && deadlineCut) this.stop("deadline_exceeded");
    const record = this.recorder.evaluation(result);
    let status: TurnStatus = "error";
    if (result.ok) {
      this.memory = result.memory;
      status = result.outcome === "return" ? this.validate(result.value, record) : result.outcome === "fail" ? this.failed(result.value) : "ok";
    }
    const turn: Turn = { ...base, program, status, ...record };
    if (extraction.notes.length > 0) turn.notes = extraction.notes;
    if (this.pendingNested.length > 0) turn.nested = this.pendingNested;
    return turn;
  }

  /** The program's limits, with the time limit cut to what is left of the deadline (and whether it was cut). */
  private limits(): { limits: Partial<Limits>; deadlineCut: boolean } {
    const limits = { ...this.options.limits };
    if (this.deadlineAt === undefined) return { limits, deadlineCut: false };
    const own = limits.timeoutMs ?? defaultLimits.timeoutMs;
    const left = Math.max(1, this.deadlineAt - Date.now());
    limits.timeoutMs = Math.min(own, left);
    return { limits, deadlineCut: left < own };
  }

  private validate(value: unknown, record: { error?: ErrorInfo }): TurnStatus {
    const schema = this.agent.output;
    if (schema === undefined) {
      this.returned = value;
      return "returned";
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) {
      this.returned = parsed.data;
      return "returned";
    }
    record.error = {
      kind: "value_error",
      phase: "runtime",
      message: `the (return ...) value does not match the expected output:\n- ${describeIssues(parsed.error, value).join("\n- ")}`,
      hint: "fix the value so it has the shape under Expected output, then return it again",
    };
    return "invalid_return";
  }

  private failed(value: unknown): TurnStatus {
    this.failMessage = typeof value === "string" ? value : print(value);
    this.failDetails = value;
    return "failed";
  }

  private noteView(stats: ViewStats): void {
    this.latestView = stats;
    const t = this.viewTotals;
    for (const k of Object.keys(t) as Array<keyof typeof t>) t[k] += stats[k];
  }

  /** What the prompts were built with, so a stored trace rebuilds either view by itself. */
  private settings(): TraceSettings {
    return { maxTurns: this.agent.maxTurns, toolsWithdrawn: this.withdraws, maxPrintChars: this.maxPrintChars, view: { ...this.viewOptions } };
  }

  private base(): StepBase {
    const turns = this.turns;
    const { inputTokens, outputTokens, cachedTokens, llmRequests } = this.totals;
    return {
      turns,
      trace: { version: 1, system: this.system, task: this.task, turns, settings: this.settings() },
      memory: this.memory,
      messages: turns.map((t) => t.messages),
      usage: {
        inputTokens,
        outputTokens,
        cachedTokens,
        llmRequests,
        totalTokens: inputTokens + outputTokens,
        llmMs: this.llmMs,
        execMs: this.execMs,
        durationMs: performance.now() - this.started,
        perTurn: turns.map((t) => ({ turn: t.number, ...t.usage })),
        nested: { ...this.nested },
        compression: {
          enabled: this.viewOptions.compressHistory,
          latest: this.latestView,
          totals: { ...this.viewTotals },
          perTurn: [...this.measured],
          tokens: this.viewOptions.compressHistory ? totalsOf(this.measured) : null,
        },
      },
    };
  }

  private success(value: unknown): Step {
    return { ...this.base(), ok: true, value };
  }

  private failure(reason: FailReason, message: string, details?: unknown): Step {
    const fail: AgentFailure = { reason, message };
    if (details !== undefined) fail.details = details;
    return { ...this.base(), ok: false, fail };
  }
}

async function runAgent(agent: Agent, run: RunOptions, parent: RunScope | null): Promise<Step> {
  // mergeOptions takes only the inheritable keys, so the run's own options (context, signal...) stay out.
  const options = mergeOptions(parent?.options, agent.options, run);
  const step = await new AgentRun(agent, options, run, parent === null ? 0 : parent.depth + 1, parent).execute();
  run.onStep?.(step);
  return step;
}

/** Runs an agent to the end. Never throws: every ending is a Step with the trace so far. */
async function runTop<O extends z.ZodType | undefined>(agent: Agent<O>, options: RunOptions): Promise<Step<OutputOf<O>>> {
  if (!isAgent(agent)) throw new AgentDefinitionError("SubAgent.run expects an agent made by SubAgent.create");
  return (await runAgent(agent as Agent, options ?? {}, null)) as Step<OutputOf<O>>;
}

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

/** Offers an agent to other agents as a tool. The nested run inherits the caller's options (llm, limits...) unless the agent sets its own. */
function asTool<O extends z.ZodType | undefined>(agent: Agent<O>, opts: AsToolOptions = {}): Tool<z.ZodObject, O> {
  if (!isAgent(agent)) throw new AgentDefinitionError("SubAgent.asTool expects an agent made by SubAgent.create");
  const input = opts.input ?? z.object(Object.fromEntries(placeholders(agent.prompt).map((k) => [k, z.string()])));
  const description = opts.description ?? agent.description ?? `A sub-agent for: ${agent.prompt.trim().split("\n")[0]}`;
  const run = async (args: Record<string, unknown>, signal: AbortSignal, ctx: ToolRunContext): Promise<unknown> => {
    const scope = ctx.scope;
    const maxDepth = scope.options.maxDepth ?? DEFAULTS.maxDepth;
    if (scope.depth + 1 > maxDepth) throw new Error(`max_depth_exceeded: agents may nest at most ${maxDepth} levels deep`);
    const step = await runAgent(agent as Agent, { context: args, signal }, scope);
    scope.addNested(ctx.name, step);
    if (!step.ok) throw new Error(`${step.fail.reason}: ${step.fail.message}`);
    return step.value;
  };
  // The output type is only known as a schema here, so the run returns unknown.
  return tool<z.ZodObject, z.ZodType | undefined>({
    description,
    input,
    run,
    timeoutMs: opts.timeoutMs ?? Infinity,
    // The nested run already validated its value against the output schema.
    ...(agent.output !== undefined ? { output: agent.output, checkOutput: false } : {}),
    ...(opts.maxCalls !== undefined ? { maxCalls: opts.maxCalls } : {}),
  }) as Tool<z.ZodObject, O>;
}

/**
 * Continues a saved run (`saveRun` → `runStateToJson` → `runStateFromJson`) with the same
 * agent (its turn budget may be larger) and context: the saved turns are replayed from the
 * trace, then the run goes on with `options.llm`. Unlike `run`, it rejects with a
 * `ResumeError` when the state cannot be resumed (the run returned or failed, no turns
 * left, a replayed turn differs from the saved one). See `resumeRun` in `./resume.ts`.
 */
async function resume<O extends z.ZodType | undefined>(agent: Agent<O>, state: RunState, options: ResumeOptions): Promise<Step<OutputOf<O>>> {
  // resume.ts runs agents through this module: loaded on first use, so neither module imports the other at load time.
  const { resumeRun } = await import("./resume.js");
  return (await resumeRun(agent as Agent, state, options)) as Step<OutputOf<O>>;
}

/** The agent API: `SubAgent.create(definition)`, `.run(agent, options)`, `.asTool(agent)`, `.resume(agent, state, options)`. */
export const SubAgent = Object.freeze({ create, run: runTop, asTool, resume });
