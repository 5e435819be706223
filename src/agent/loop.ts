// The turn loop of one run: each turn the prompt view builds the messages from the trace, the
// LLM replies, one program is extracted and run with the memory of earlier turns, and the
// outcome is recorded and fed back, until the program returns a valid value, fails, or the run
// meets one of its limits.
import { measureView, totalsOf, type PromptCompression, type PromptPair, type SentPrompts } from "../history/stats.js";
import { INTERPRETER_STRATEGY } from "../history/strategy.js";
import { defaultViewOptions, resolveViewOptions, type ViewInput, type ViewOptions, type ViewStats } from "../history/view.js";
import { createMeter, outputTokens, requestPrice, sentPrompt, type Meter } from "../compaction/measure.js";
import { lookupPrice, type ModelPrice } from "../compaction/prices.js";
import type { Json } from "../compaction/types.js";
import { ABORTED, ContextReader, isAbortSignal, isHiddenKey, publicShown, readableContext, sentBackSearch, UNLISTED_CONTEXT, defaultLimits, type ErrorInfo, MAX_TIMER_MS, evaluate, type HandedText, type Limits, Marks, type Memory, print, resolveLimits, showStandIns, showStandInsIn, toHost, type ToolCallRecord, unlessAborted, type Value, valueOf } from "../lisp/index.js";
import { isTokenCount } from "../llm/args.js";
import type { Llm, LlmUsage } from "../llm/types.js";
import { DEFAULT_MAX_PRINT_CHARS, renderFeedback } from "../trace/feedback.js";
import { defaultRecordOptions, Recorder } from "../trace/record.js";
import type { FailedRequest, NestedRunTrace, TraceSettings, Turn, TurnStatus } from "../trace/trace.js";
import { ApprovalGate, type ApprovalSetup } from "./approval.js";
import type { Paused } from "../trace/run-state.js";
import { systemOf } from "./definition.js";
import { AgentDefinitionError, describeIssues, shortIssues, shortMessage, type AgentFailure, type FailReason } from "./errors.js";
import { errorText, LlmError } from "../llm/errors.js";
import { extractProgram } from "./extract.js";
import { buildPrompt, type BuiltPrompt, cacheBreakpointsOf, clientCacheMinimum, historyStrategy, strategySpec, StrategyResultError, type HistoryStrategy } from "./history.js";
import { checkInheritable, DEFAULTS, inheritedOptions, isPlainObject, mergeOptions, nestedOptions, pickInheritable, positiveNumber, readRunOptions } from "./options.js";
import { TRACE_VERSION } from "../trace/serialize.js";
import { expandMission, taskMessage } from "./prompt/task.js";
import { showHidden } from "../trace/redact.js";
import { parseOwn, ToolSession } from "./tools.js";
import { eventObserver } from "./events.js";
import { observers, unheard, type Replayed, type RunObserver } from "./observer.js";
import { isTracerOption, telemetryObserver } from "./telemetry.js";
import type { Agent, CompressionUsage, InheritableOptions, RunOptions, RunScope, Step, StepBase, TurnEvent, UsageTotals } from "./types.js";

/**
 * The failure of a host's callback as the run records it: named, its own message left out (the
 * failure is kept in the saved state, the trace's export and the viewer, and a host's text may
 * quote its secrets).
 */
function hostThrew(who: string, doing = ""): string {
  return `${who} threw${doing} (its message is left out of the run's record: a host's text may hold secrets)`;
}

/** Why the run's internal controller fired. */
class Stop {
  constructor(readonly reason: Interruption) {}
}

function tokenCount(n: unknown): number {
  return typeof n === "number" && Number.isFinite(n) && n > 0 ? n : 0;
}

/** The client's usage when it holds the prompt's and the reply's token counts; else none (the turn is measured). */
function reportedUsage(usage: LlmUsage | undefined): LlmUsage | undefined {
  return isTokenCount(usage?.inputTokens) && isTokenCount(usage?.outputTokens) ? usage : undefined;
}

/** The call's value, or the signal's reason thrown as soon as it aborts (the call is left to settle unheard). */
async function abortable<T>(start: () => Promise<T>, signal: AbortSignal): Promise<T> {
  const r = await unlessAborted(Promise.resolve().then(start), signal);
  if (r === ABORTED) throw signal.reason;
  return r;
}

/** An LLM failure's kind (an LlmError's), for spans: never its message. */
function errorKind(e: unknown): string {
  const kind = (e as { kind?: unknown } | null)?.kind;
  return typeof kind === "string" ? kind : "error";
}

const USAGE_KEYS = ["inputTokens", "outputTokens", "cachedTokens", "llmRequests"] as const;

/** Held calls a pause's message names; the rest are counted. */
const MAX_PAUSED_NAMED = 3;

/** Adds `usage` into `into`, key by key. */
function addUsage(into: Pick<UsageTotals, (typeof USAGE_KEYS)[number]>, usage: Readonly<UsageTotals>): void {
  for (const k of USAGE_KEYS) into[k] += usage[k];
}

/** Endings that interrupt a run from outside the loop. */
type Interruption = "aborted" | "deadline_exceeded";

const INTERRUPTED: Readonly<Record<Interruption, string>> = {
  aborted: "the run was aborted by the caller",
  deadline_exceeded: "the run's deadline passed",
};


/** The state of one run. */
class AgentRun {
  private readonly turns: Turn[] = [];
  private memory: Memory = new Map();
  /** What the run's tools have been handed of what its programs computed from hidden context (`EvaluateOptions.handed`). */
  private handed: readonly HandedText[] = [];
  private readonly totals: UsageTotals = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmRequests: 0 };
  private readonly nested: UsageTotals & { runs: number } = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmRequests: 0, runs: 0 };
  /** What the history strategy's summarizer spent (compaction stats), rejected summaries included. */
  private readonly summaries: UsageTotals = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmRequests: 0 };
  /** Set when a prompt's summaries spent what was left of the budget: its LLM call is not made. */
  private summariesOverBudget = false;
  private llmMs = 0;
  private execMs = 0;
  /** The stats of the view that built the last prompt, and their sums over the run. */
  private latestView: ViewStats | null = null;
  private readonly viewTotals: CompressionUsage["totals"] = { turnsCompressed: 0, definitionsShown: 0, printlnShown: 0, printlnDropped: 0, toolCallsShown: 0 };
  /** Per-prompt token figures (compression on), and the prompts they were measured on. */
  private readonly measured: PromptCompression[] = [];
  private prompts: PromptPair | undefined;
  /** Those prompts as sent, with the strategy's cache marks: what the compression totals price. */
  private readonly sent: Array<{ pair: PromptPair; marks: readonly number[] | undefined }> = [];
  private readonly controller = new AbortController();
  private readonly started = performance.now();
  private readonly viewOptions: ViewOptions;
  private readonly recorder: Recorder;
  private readonly session: ToolSession;
  private readonly scope: RunScope;
  private readonly deadlineAt: number | undefined;
  /** This run's own budget (Infinity for none); a nested run also stays within its callers' (`tokensLeft`). */
  private readonly tokenBudget: number;
  private readonly parent: RunScope | null;
  /** Tools are withdrawn on the final turn (the agent has tools and more than one turn). */
  private readonly withdraws: boolean;
  private readonly maxPrintChars: number;
  private system = "";
  private task = "";
  /** The run's one history strategy (null only when the option is invalid: the run then ends with invalid_input) and its state. */
  private readonly strategy: HistoryStrategy | null;
  private strategyState: Json | undefined = undefined;
  /** The one measure of this run's prompts, priced by the model of its first reply (created then). */
  private meter: Meter | undefined;
  private model: string | undefined;
  private price: ModelPrice | undefined;
  private pendingNested: Array<Promise<NestedRunTrace>> = [];
  /** Nested runs started under this run, at any depth: `maxNestedRuns` bounds them. */
  private nestedStarted = 0;
  /** The size of the tool results this run and its nested runs keep: `maxToolResultSize` bounds it. */
  private toolResultsKept = 0;
  private stopReason: Interruption | null = null;
  /** Present when a tool may need approval (a nested run's refuses such calls). */
  private readonly gate: ApprovalGate | undefined;
  private paused: Paused | null = null;
  private readonly approvals: ApprovalSetup | undefined;
  private llmError = "";
  /** Billed requests that failed (RunTrace.failedRequests): a resumed run's saved ones, then the one it may end at. */
  private readonly failedRequests: FailedRequest[] = [];
  private returned: unknown = undefined;
  private failMessage = "";
  private failDetails: unknown = undefined;
  /** Who watches the run live (events, spans); null when nobody does. */
  readonly observer: RunObserver | null;
  /** The run's context as prepare() read it (a Proxy's keys listed once). */
  private context: Readonly<Record<string, unknown>> = {};
  /** The hidden keys of the context, read when searched (hiddenContexts). */
  private hiddenView: Readonly<Record<string, unknown>> | undefined;

  constructor(
    private readonly agent: Agent,
    private readonly options: InheritableOptions,
    private readonly run: RunOptions,
    depth: number,
    parent: RunScope | null,
    approvals: ApprovalSetup | undefined,
    /** Why the run's options could not be read, if they could not: `prepare` ends the run with it. */
    private readonly unread: string | null = null,
  ) {
    const settled = withClientCache(options);
    this.viewOptions = tryViewOptions(settled);
    this.strategy = tryStrategy(settled);
    this.recorder = new Recorder({ sampleItems: this.viewOptions.sampleItems, sampleChars: this.viewOptions.sampleChars, ednBudget: options.ednBudget ?? defaultRecordOptions.ednBudget });
    const own = run.deadlineMs !== undefined ? Date.now() + run.deadlineMs : undefined;
    this.deadlineAt = own === undefined ? parent?.deadlineAt : parent?.deadlineAt === undefined ? own : Math.min(own, parent.deadlineAt);
    this.tokenBudget = run.tokenBudget ?? Infinity;
    this.parent = parent;
    this.scope = {
      depth,
      options,
      deadlineAt: this.deadlineAt,
      tokensLeft: () => this.tokensLeft(),
      charge: (usage) => this.charge(usage),
      admitNested: () => this.admitNested(),
      addNested: (name, step) => this.addNested(name, step),
      parentSpan: () => this.observer?.parent(),
      toolResultsFull: () => this.toolResultsFull(),
      keepToolResult: (size) => this.keepToolResult(size),
      hiddenContexts: () => this.hiddenContexts(),
    };
    const asks = approvals?.paused !== undefined || Object.values(agent.tools).some((t) => t.needsApproval !== undefined && t.needsApproval !== false);
    this.gate = asks ? new ApprovalGate(parent === null && approvals !== undefined ? approvals : null) : undefined;
    this.approvals = approvals;
    const replayed = approvals?.replayedNested;
    if (replayed !== undefined) {
      addUsage(this.nested, replayed);
      this.nested.runs += replayed.runs;
      this.nestedStarted += replayed.runs;
      this.toolResultsKept += replayed.kept;
    }
    // The saved run's billed failures were spent as its turns were: the resumed run counts them (usage, tokenBudget) and keeps them in its trace.
    for (const r of approvals?.failedRequests ?? []) {
      this.failedRequests.push({ ...r });
      addUsage(this.totals, { inputTokens: r.inputTokens, outputTokens: r.outputTokens, cachedTokens: r.cachedTokens, llmRequests: 1 });
    }
    this.session = new ToolSession(agent.tools, { defaultTimeoutMs: options.toolTimeoutMs ?? DEFAULTS.toolTimeoutMs, scope: this.scope, ...(this.gate === undefined ? {} : { gate: this.gate }) });
    this.withdraws = this.session.size > 0 && agent.maxTurns > 1;
    this.maxPrintChars = options.maxPrintChars ?? DEFAULT_MAX_PRINT_CHARS;
    this.observer = observers([
      run.onEvent === undefined ? null : eventObserver(run.onEvent),
      // An invalid tracer makes no spans: `prepare` ends the run with invalid_input.
      !isTracerOption(options.tracer) ? null : telemetryObserver(options.tracer, options.llm?.name ?? "none", depth, parent?.parentSpan?.()),
    ]);
  }

  private tokensUsed(): number {
    const { totals, nested, summaries } = this;
    return totals.inputTokens + totals.outputTokens + nested.inputTokens + nested.outputTokens + summaries.inputTokens + summaries.outputTokens;
  }

  /** What is left of this run's budget and of every calling run's, whose nested runs spend it as they go. */
  private tokensLeft(): number {
    return Math.min(this.tokenBudget - this.tokensUsed(), this.parent?.tokensLeft() ?? Infinity);
  }

  /**
   * Usage a nested run (or one under it) just spent, counted at once, so nested runs going
   * at the same time (pmap) see each other's spending against the budget they share.
   */
  private charge(usage: Readonly<UsageTotals>): void {
    addUsage(this.nested, usage);
    this.parent?.charge(usage);
  }

  /** This run's own spending so far, counted by the runs that called it. */
  private spent(usage: Readonly<UsageTotals>): void {
    addUsage(this.totals, usage);
    this.parent?.charge(usage);
  }

  private stop(reason: Interruption): void {
    if (this.stopReason !== null) return;
    this.stopReason = reason;
    this.controller.abort(new Stop(reason));
  }

  /**
   * Counts a nested run about to start under this run and every run above it, or says which
   * limit refuses it (nothing counted then): each run's `maxNestedRuns` bounds its whole subtree.
   */
  private admitNested(): string | undefined {
    const limit = this.options.maxNestedRuns ?? DEFAULTS.maxNestedRuns;
    if (this.nestedStarted >= limit) return `nested_runs_exceeded: the run may start at most ${limit} nested agent runs in all (maxNestedRuns); use the results you already have`;
    const above = this.parent?.admitNested();
    if (above === undefined) this.nestedStarted++;
    return above;
  }

  /** Why no more tool results may be kept, when this run or one above it has kept `maxToolResultSize`. */
  private toolResultsFull(): string | undefined {
    const limit = this.options.maxToolResultSize ?? DEFAULTS.maxToolResultSize;
    if (this.toolResultsKept > limit) return `the run has kept ${this.toolResultsKept} of tool results (characters plus one per value), more than maxToolResultSize (${limit}); use the results you already have`;
    return this.parent?.toolResultsFull?.();
  }

  private keepToolResult(size: number): void {
    this.toolResultsKept += size;
    this.parent?.keepToolResult?.(size);
  }

  /** A nested run started (its usage is charged as it goes); runAgent never rejects. */
  private addNested(tool: string, running: Promise<Step>): void {
    this.pendingNested.push(
      running.then((step) => {
        this.nested.runs += 1 + step.usage.nested.runs;
        return { tool, ok: step.ok, trace: step.trace };
      }),
    );
  }

  async execute(): Promise<Step> {
    const outer = this.run.signal;
    const onAbort = (): void => this.stop("aborted");
    let timer: ReturnType<typeof setTimeout> | undefined;
    // A signal `prepare` refused has no listener to remove (and may have no method to remove it with).
    let listening = false;
    try {
      this.observer?.runStart(this.agent.maxTurns);
      this.system = systemOf(this.agent, this.strategy?.name === INTERPRETER_STRATEGY ? "compressed" : "full");
      const invalid = this.prepare();
      if (invalid !== null) return this.failure("invalid_input", invalid);
      if (outer?.aborted) return this.interrupted("aborted");
      outer?.addEventListener("abort", onAbort, { once: true });
      listening = true;
      const delay = this.deadlineAt === undefined ? Infinity : Math.max(0, this.deadlineAt - Date.now());
      // Longer deadlines are checked between turns only.
      if (delay <= MAX_TIMER_MS) timer = setTimeout(() => this.stop("deadline_exceeded"), delay);
      return await this.loop();
    } catch (e) {
      return this.failure("internal_error", `internal error: ${errorText(e)}`);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
      if (listening) outer?.removeEventListener("abort", onAbort);
    }
  }

  /** Validates the run's input and builds the task message; returns a problem, or null. */
  private prepare(): string | null {
    if (this.unread !== null) return this.unread;
    try {
      checkInheritable(pickInheritable(this.run), (m) => {
        throw new AgentDefinitionError(m);
      });
    } catch (e) {
      return errorText(e);
    }
    if (this.run.signal !== undefined && !isAbortSignal(this.run.signal)) return "signal must be an AbortSignal";
    for (const key of ["onTurn", "onEvent", "onStep"] as const) {
      const callback = this.run[key] as unknown;
      if (callback !== undefined && typeof callback !== "function") return `${key} must be a function, got ${callback === null ? "null" : typeof callback}`;
    }
    if (!isPlainObject(this.run.context ?? {})) return "context must be a plain object of key → data";
    const context = readableContext(this.run.context ?? {});
    if (context === null) return `context must be a plain object of key → data, got ${UNLISTED_CONTEXT}`;
    this.context = context;
    if (this.options.llm === undefined) return "no llm: pass { llm } to SubAgent.run (or set it on the agent)";
    if (this.run.deadlineMs !== undefined && !positiveNumber(this.run.deadlineMs)) return `deadlineMs must be a positive number, got ${String(this.run.deadlineMs)}`;
    if (this.run.tokenBudget !== undefined && !positiveNumber(this.run.tokenBudget)) return `tokenBudget must be a positive number, got ${String(this.run.tokenBudget)}`;
    // The prompt reads the context as the first program would: within its limits and its time.
    const limits = resolveLimits(this.limits().limits);
    const reader = new ContextReader(limits, undefined, publicShown(context, limits, this.callerHidden().callerHidden));
    const mission = expandMission(this.agent.prompt, context, reader);
    if (!mission.ok) return mission.message;
    try {
      this.task = taskMessage({ mission: mission.text, context, maxTurns: this.agent.maxTurns, toolsWithdrawn: this.withdraws, sample: this.recorder.options, reader });
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
      if (this.tokensLeft() <= 0) return this.overBudget();
      const turn = await this.turn(n, this.withdraws && n === maxTurns);
      if (turn === null) return this.stopReason !== null ? this.interrupted(this.stopReason) : this.summariesOverBudget ? this.overBudget() : this.failure("llm_error", this.llmError);
      this.turns.push(turn);
      const ending = this.ending(turn, n === maxTurns);
      if (ending === null) turn.feedback = renderFeedback(turn, { maxTurns, toolsWithdrawn: this.withdraws }, { prints: true, maxPrintChars: this.maxPrintChars });
      // Each hook gets its own copy of the record: the next prompt and the trace are built from
      // this one, so a host editing what it was told must not rewrite the conversation.
      const replayed = this.replayed(n);
      const told = (): TurnEvent => ({ turn: structuredClone(turn), maxTurns, totals: { ...this.totals }, compression: structuredClone(this.latestView), ...(replayed === undefined ? {} : { replayed }) });
      // Observers first: an onTurn that throws ends the run, and the turn it was told is in the trace.
      this.observer?.turnEnd(told());
      if (this.run.onTurn !== undefined) {
        try {
          unheard(this.run.onTurn(told()));
        } catch {
          const failed = this.failure("internal_error", `internal error: ${hostThrew("the onTurn hook")}`);
          // A pause stands: its calls still wait, and the run resumes from this step as from any paused one.
          return this.paused !== null && turn.status === "paused" ? this.holding(failed, this.paused) : failed;
        }
      }
      if (ending !== null) return ending;
    }
  }

  /** What of turn `n` retells the saved run, in a resumed run (see Replayed). */
  private replayed(n: number): Replayed | undefined {
    const a = this.approvals;
    if (a === undefined) return undefined;
    if (n <= a.replayedTurns) return "turn";
    return n === a.paused?.turn || n === a.cut?.turn ? "reply" : undefined;
  }

  /** Charges what the summarizer spent building a prompt to the run (and its callers); true when it spent the budget, so the prompt is not sent. */
  private chargeSummaries(stats: BuiltPrompt["compaction"]["stats"]): boolean {
    const usage = { inputTokens: tokenCount(stats.llmInputTokens), outputTokens: tokenCount(stats.llmOutputTokens), cachedTokens: 0, llmRequests: tokenCount(stats.llmCalls) };
    if (usage.inputTokens + usage.outputTokens + usage.llmRequests === 0) return false;
    addUsage(this.summaries, usage);
    this.parent?.charge(usage);
    this.summariesOverBudget = this.tokensLeft() <= 0;
    return this.summariesOverBudget;
  }

  /** The step a finished turn ends the run with, or null when the run goes on. */
  private ending(turn: Turn, last: boolean): Step | null {
    if (this.stopReason !== null) return this.interrupted(this.stopReason);
    if (turn.status === "paused") return this.pause(this.paused as Paused);
    if (turn.status === "returned") return this.success(this.returned);
    if (turn.status === "failed") return this.failure("failed", this.failMessage, this.failDetails);
    if (last) {
      const why = turn.error !== undefined ? `; the last turn ended with ${turn.error.kind}: ${turn.error.message}` : "";
      return this.failure("max_turns_exceeded", `no valid (return ...) within ${this.agent.maxTurns} turns${why}`);
    }
    if (this.tokensLeft() <= 0) return this.overBudget();
    return null;
  }

  private interrupted(reason: Interruption): Step {
    return this.failure(reason, INTERRUPTED[reason]);
  }

  private pause(paused: Paused): Step {
    // Bounded: a program may hold hundreds of calls at once, and step.paused lists them all.
    const { approvals } = paused;
    const named = approvals.slice(0, MAX_PAUSED_NAMED).map((a) => `tool/${a.tool} (${a.id})`).join(", ");
    const which = approvals.length > MAX_PAUSED_NAMED ? `${named} and ${approvals.length - MAX_PAUSED_NAMED} more calls` : named;
    return this.holding(this.failure("approval_required", `the run is waiting for the host's approval of ${which}`), paused);
  }

  /** `step` with the pause it ends at, and the run saved there. */
  private holding(step: Step, paused: Paused): Step {
    step.paused = { ...paused, state: undefined as never };
    step.paused.state = (this.approvals as ApprovalSetup).save(step);
    return step;
  }

  private overBudget(): Step {
    const used = this.tokensUsed();
    if (used >= this.tokenBudget) return this.failure("token_budget_exceeded", `the run used ${used} tokens of its budget of ${this.tokenBudget}`);
    return this.failure("token_budget_exceeded", `the run used ${used} tokens, and the budget it shares with the agent that called it is spent`);
  }

  /** One turn: prompt, LLM call, extraction, evaluation, record. Null when the LLM call failed. */
  private async turn(n: number, withdrawn: boolean): Promise<Turn | null> {
    const input: ViewInput = { system: this.system, task: this.task, turns: this.turns, maxTurns: this.agent.maxTurns, toolsWithdrawn: this.withdraws, maxPrintChars: this.maxPrintChars };
    let built: BuiltPrompt;
    try {
      // A strategy's summarizer that ignores the signal must not hold the run past its abort or deadline.
      built = await abortable(
        () =>
          buildPrompt(input, this.viewOptions, this.strategy as HistoryStrategy, {
            state: this.strategyState,
            signal: this.controller.signal,
            ...(this.options.historyLlm === undefined ? {} : { llm: this.options.historyLlm }),
          }),
        this.controller.signal,
      );
    } catch (e) {
      // Stopped (abort, deadline): the run ends as such, not as an internal error.
      if (this.stopReason !== null) return null;
      throw this.strategyFailed(e, `building the prompt of turn ${n}`);
    }
    this.strategyState = built.compaction.state;
    if (this.chargeSummaries(built.compaction.stats)) return null;
    // Hidden values are stand-ins in the records already (the interpreter marks them); here they are shown unquoted.
    const view = { messages: showHidden(built.messages), stats: built.view };
    this.noteView(view.stats);
    let marks: number[] | undefined;
    try {
      // Where the strategy's prompt stays stable, for clients with explicit cache breakpoints.
      marks = cacheBreakpointsOf(this.strategy as HistoryStrategy, view.messages);
    } catch (e) {
      throw this.strategyFailed(e, `marking the prompt of turn ${n} for the cache`);
    }
    const observer = this.observer;
    const replayed = this.replayed(n);
    const saved = replayed === undefined ? undefined : this.approvals?.savedTurns?.[n - 1];
    const replayedPrints = replayed === "reply" ? saved?.prints : undefined;
    observer?.turnStart(n, { messages: view.messages.length, view: view.stats, compaction: built.compaction.stats, ...(replayed === undefined ? {} : { replayed }), ...(replayedPrints === undefined ? {} : { replayedPrints }) });
    if (this.compressing()) {
      const m = measureView(input, view, this.prompts, built.full);
      this.measured.push(m.stats);
      this.prompts = m.prompts;
    }
    const llm = this.options.llm as Llm;
    const t0 = performance.now();
    this.spent({ inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmRequests: 1 });
    let content: string;
    let usage: LlmUsage | undefined;
    let model: string;
    let truncated = false;
    observer?.llmStart(n, { llm: llm.name });
    const text = observer?.text ?? null;
    let streamed = false;
    try {
      if (this.compressing() && this.prompts !== undefined) this.sent.push({ pair: this.prompts, marks });
      // A client that ignores the signal may still stream after the run abandoned its request
      // (even after the run ended): that text is not the run's, as its late reply is not.
      let open = true;
      const onText = text === null ? undefined : (delta: string, attempt: number) => void (open && ((streamed = true), text(n, delta, attempt)));
      const request = { messages: view.messages, signal: this.controller.signal, turn: n, ...(marks === undefined ? {} : { cacheBreakpoints: marks }), ...(onText === undefined ? {} : { onText }) };
      const response = await abortable(() => llm.complete(request), this.controller.signal).finally(() => (open = false));
      if (typeof response?.content !== "string") throw new Error("the LLM response has no text content");
      content = response.content;
      usage = response.usage;
      truncated = response.truncated === true;
      model = typeof response.model === "string" && response.model !== "" ? response.model : llm.name;
      // A client that does not stream gives its reply as one piece.
      if (text !== null && !streamed) text(n, content, 1);
      observer?.llmEnd(n, { usage, model: response.model });
    } catch (e) {
      this.llmMs += performance.now() - t0;
      this.llmError = `LLM request failed on turn ${n}: ${errorText(e)}`;
      // A reply the provider billed but the run cannot use (no text) still spent its tokens.
      const billed = e instanceof LlmError ? reportedUsage(e.details.usage) : undefined;
      if (billed !== undefined) {
        const cachedTokens = isTokenCount(billed.cachedTokens) ? billed.cachedTokens : 0;
        this.spent({ inputTokens: billed.inputTokens, outputTokens: billed.outputTokens, cachedTokens, llmRequests: 0 });
        this.failedRequests.push({ turn: n, inputTokens: billed.inputTokens, outputTokens: billed.outputTokens, cachedTokens, error: (e as LlmError).kind });
      }
      observer?.llmEnd(n, { usage: billed, model: undefined, errorKind: errorKind(e) });
      return null;
    }
    // A replayed reply waited for the saved run's model, not the replay's: its record keeps that wait.
    const llmMs = saved?.llmMs ?? performance.now() - t0;
    this.llmMs += llmMs;
    // Counts a client left out (or garbled) would count as zero and let the token budget pass.
    const tokens = this.usageOf(model, view.messages, marks, content, reportedUsage(usage));
    this.spent({ inputTokens: tokens.inputTokens, outputTokens: tokens.outputTokens, cachedTokens: tokens.cachedTokens, llmRequests: 0 });

    const base = { number: n, messages: view.messages, reply: content, ...(truncated ? { truncated: true as const } : {}), usage: { ...tokens, llmMs, execMs: 0 }, view: view.stats, compaction: built.compaction };
    const extraction = extractProgram(content);
    if (!extraction.ok) {
      const error: ErrorInfo = { kind: "parse_error", phase: "read", message: extraction.message, hint: extraction.hint };
      return { ...base, program: null, status: "no_code", error, prints: [], toolCalls: [], definitions: [], memory: this.recorder.memory(this.memory) };
    }
    const program = extraction.program;
    this.pendingNested = [];
    const { limits, deadlineCut } = this.limits();
    const t1 = performance.now();
    // Each reported call's size when it was told (its arguments': no result has crossed yet).
    const admitted = new WeakMap<ToolCallRecord, number>();
    this.gate?.beginTurn(n);
    observer?.programStart(n, program);
    const result = await evaluate(program, {
      ...(observer === null ? {} : { onPrint: (line: string) => observer.print(n, line) }),
      onToolCall: (call: ToolCallRecord, done: boolean) => {
        // The session counted the arguments as it admitted the call (ToolCallInfo.size): what the
        // record holds past them is the result, counted as it arrives: the next call may be refused.
        if (!done) admitted.set(call, call.size ?? 0);
        else if (call.size !== undefined) this.keepToolResult(call.size - (admitted.get(call) ?? 0));
        observer?.toolCall(n, call, done);
      },
      ctx: this.context,
      ...this.callerHidden(),
      tools: this.session.specs(withdrawn),
      memory: this.memory,
      ...(this.handed.length === 0 ? {} : { handed: this.handed }),
      limits,
      signal: this.controller.signal,
      isolation: this.options.isolation ?? DEFAULTS.isolation,
    });
    // A turn replayed whole ran its program as the saved run did; the replay's own time is not the turn's.
    base.usage.execMs = saved !== undefined && replayed === "turn" ? saved.execMs : performance.now() - t1;
    // A program stopped by a time limit that was the deadline's cut has met the deadline.
    if (!result.ok && result.error.kind === "timeout" && deadlineCut) this.stop("deadline_exceeded");
    // An abort or the deadline that stopped the turn while a call waited (its approval check
    // pending) cut it: the run ends interrupted, and its resume asks again, as for any cut turn.
    const pausing = this.stopReason === null && this.gate?.holding === true;
    observer?.programEnd(n, { ok: result.ok, fuelUsed: result.stats.fuelUsed, ...(result.ok ? {} : { error: result.error }), ...(pausing ? { paused: true as const } : {}) });
    this.execMs += base.usage.execMs;
    // A resumed paused turn records its calls in the saved run's order, where its requests' ids point.
    this.gate?.arrange(result.toolCalls);
    // A failed program's calls happened too: what they were handed is kept.
    if (result.handed !== undefined) this.handed = result.handed;
    const record = this.recorder.evaluation(result, result.marks === undefined ? undefined : resolveLimits(limits));
    let status: TurnStatus = "error";
    if (result.ok) {
      this.memory = result.memory;
      status = result.outcome === "return" ? await this.validate(result.value, result.lisp, record, result.marks) : result.outcome === "fail" ? this.failed(result.value, result.lisp, result.marks) : "ok";
    }
    this.paused = pausing ? (this.gate?.pausedAt(result.toolCalls) ?? null) : null;
    if (this.paused !== null) status = "paused";
    const turn: Turn = { ...base, program, status, ...record };
    if (extraction.notes.length > 0) turn.notes = extraction.notes;
    // A nested run the program left behind (an abort stopped it mid-call) ends as its signal fired.
    if (this.pendingNested.length > 0) turn.nested = await Promise.all(this.pendingNested);
    return turn;
  }

  /** The run's ending when its history strategy failed `doing` something: what it gave wrong is said, what it threw is not (a host's text may quote a secret). */
  private strategyFailed(e: unknown, doing: string): Error {
    const strategy = `the history strategy "${String(this.strategy?.name)}"`;
    return new Error(e instanceof StrategyResultError ? `${strategy} gave ${e.message} ${doing}` : hostThrew(strategy, ` ${doing}`));
  }

  /** This run's hidden context and its callers', nearest first: what the tools of a run it calls may quote. */
  private hiddenContexts(): ReadonlyArray<Readonly<Record<string, unknown>>> {
    const above = this.parent?.hiddenContexts?.() ?? [];
    // Asked for each evaluation, and read as the run holds it now: a host tool may replace or add a
    // hidden value while a run it called goes on, or between such runs.
    return Object.keys(this.context).some(isHiddenKey) ? [(this.hiddenView ??= hiddenView(this.context)), ...above] : above;
  }

  /** The callers' hidden context, for the evaluation and the output check (EvaluateOptions.callerHidden), when there is any. */
  private callerHidden(): { callerHidden?: ReadonlyArray<Readonly<Record<string, unknown>>> } {
    const above = this.parent?.hiddenContexts?.() ?? [];
    return above.length === 0 ? {} : { callerHidden: above };
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

  private async validate(value: unknown, lisp: Value, record: { error?: ErrorInfo }, marks: Marks | undefined): Promise<TurnStatus> {
    const schema = this.agent.output;
    if (schema === undefined) {
      this.returned = value;
      return "returned";
    }
    let message: string;
    let thrown = false;
    let stopped = false;
    try {
      // Async: a host's schema may refine or transform asynchronously.
      // Raced against the run's signal: a refinement that never settles must not hold the run past its abort or deadline.
      const parsed = await abortable(() => parseOwn(schema, value), this.controller.signal);
      if (parsed.success) {
        this.returned = parsed.data;
        return "returned";
      }
      message = `the (return ...) value does not match the expected output:\n- ${describeIssues(parsed.error, value, marks === undefined ? undefined : (m, at) => marks.hideBareIn(m, at)).join("\n- ")}`;
    } catch (e) {
      // A host's transform or refinement that throws (instead of adding an issue) fails the check
      // as an issue would: the run goes on, and its message, which may quote the value, is hidden below.
      stopped = this.stopReason !== null;
      message = this.stopReason !== null ? `the output check was stopped: ${INTERRUPTED[this.stopReason]}` : `the output check failed on the (return ...) value: ${errorText(e)}`;
      thrown = true;
    }
    // The issues name the value's keys and may quote it (a host's own message), rewritten too, as
    // a tool's message may quote its arguments: hidden ones are stand-ins. A host's message may
    // quote hidden context the program never read too (its check reads the vault): searched for
    // as a tool's message is. Then cut, after hiding (as the interpreter cuts a tool's error), so
    // that no cut leaves a piece of a hidden value unrecognized.
    const hiding = marks ?? new Marks();
    const back = sentBackSearch(this.context, resolveLimits(this.options.limits), () => hiding, new Map(), this.callerHidden().callerHidden)(undefined, message);
    const shown = (thrown ? shortMessage : shortIssues)(showStandIns(hiding.hideEchoes(lisp, hiding.hideText(message, true), back)));
    // A check the abort or the deadline stopped gave no verdict: the turn was cut short, as a
    // program stopped so is (resume runs it again rather than replay a verdict it never had).
    record.error = stopped ? { kind: "aborted", phase: "runtime", message: shown } : { kind: "value_error", phase: "runtime", message: shown, hint: "fix the value so it has the shape under Expected output, then return it again" };
    return "invalid_return";
  }

  private failed(value: unknown, lisp: Value, marks: Marks | undefined): TurnStatus {
    // The reason reaches the result, the saved run, `ptc trace show` and the viewer: hidden values in it are stand-ins.
    const shown = marks === undefined ? lisp : marks.hide(lisp);
    this.failMessage = showStandIns(typeof shown === "string" ? shown : print(shown));
    this.failDetails = shown === lisp ? value : showStandInsIn(toHost(shown));
    return "failed";
  }

  private noteView(stats: ViewStats): void {
    this.latestView = stats;
    const t = this.viewTotals;
    for (const k of Object.keys(t) as Array<keyof typeof t>) t[k] += stats[k];
  }

  /**
   * A turn's token figures and cost: what the provider reported, or else the one local measure
   * of the prompt (src/compaction/measure.ts), so the trace, onTurn, the viewer, the harness and
   * the proxy show one count for one prompt. Every prompt goes through the meter, reported or
   * not, so its cache simulation follows the whole session.
   */
  private usageOf(model: string, messages: Turn["messages"], marks: readonly number[] | undefined, reply: string, reported: LlmUsage | undefined): Pick<Turn["usage"], "inputTokens" | "outputTokens" | "cachedTokens" | "cacheWriteTokens" | "source" | "cost"> {
    if (this.meter === undefined) {
      this.model = model;
      this.price = lookupPrice(model);
      this.meter = createMeter(this.price ?? model);
    }
    const m = this.meter.add(sentPrompt(messages, marks, this.meter.price), outputTokens(reply));
    if (reported === undefined) return { inputTokens: m.tokens, outputTokens: m.outputTokens, cachedTokens: m.cachedTokens, source: "local", ...(this.price === undefined ? {} : { cost: m.cost }) };
    const u = { inputTokens: tokenCount(reported.inputTokens), outputTokens: tokenCount(reported.outputTokens), cachedTokens: tokenCount(reported.cachedTokens) };
    const written = tokenCount(reported.cacheWriteTokens);
    const cost = this.price === undefined ? undefined : requestPrice(this.price, { ...u, writtenTokens: written });
    return { ...u, ...(written > 0 ? { cacheWriteTokens: written } : {}), source: "provider", ...(cost === undefined ? {} : { cost }) };
  }

  /** The prompts of the run under both views, as the meter prices them under the run's model. */
  private sentPrompts(): SentPrompts[] {
    const price = this.meter?.price;
    return this.sent.map(({ pair, marks }) => ({ view: price === undefined ? { messages: pair.view } : sentPrompt(pair.view, marks, price), full: { messages: pair.full } }));
  }

  /** Whether the strategy rewrites history (its prompts are then measured against the full history's). */
  private compressing(): boolean {
    return this.strategy !== null && this.strategy.name !== "full";
  }

  /**
   * What the prompts were built with, so a stored trace rebuilds them by itself. `view` keeps
   * the interpreter strategy's options (readers of older traces rebuild the compressed view from it).
   */
  private settings(): TraceSettings {
    const interpreter = this.strategy?.name === INTERPRETER_STRATEGY;
    const view = resolveViewOptions(this.viewOptions, interpreter ? (this.strategy?.options as Partial<ViewOptions>) : undefined, { compressHistory: interpreter });
    const settings: TraceSettings = { maxTurns: this.agent.maxTurns, toolsWithdrawn: this.withdraws, maxPrintChars: this.maxPrintChars, view, ...(this.model === undefined ? {} : { model: this.model }) };
    if (this.strategy !== null) settings.strategy = strategySpec(this.strategy);
    return settings;
  }

  private base(): StepBase {
    const turns = this.turns;
    const { inputTokens, outputTokens, cachedTokens, llmRequests } = this.totals;
    return {
      turns,
      trace: { version: TRACE_VERSION, system: this.system, task: this.task, turns, settings: this.settings(), ...(this.failedRequests.length === 0 ? {} : { failedRequests: this.failedRequests.map((r) => ({ ...r })) }) },
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
        summaries: { ...this.summaries },
        compression: {
          enabled: this.compressing(),
          latest: this.latestView,
          totals: { ...this.viewTotals },
          perTurn: [...this.measured],
          tokens: this.compressing() ? totalsOf(this.measured, this.sentPrompts(), this.meter?.price) : null,
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

export async function runAgent(agent: Agent, given: RunOptions, parent: RunScope | null, approvals?: ApprovalSetup): Promise<Step> {
  // Options that cannot be read end the run with invalid_input; it is set up without them.
  const read = readRunOptions(given);
  const run = typeof read === "string" ? {} : read;
  // mergeOptions takes only the inheritable keys, so the run's own options (context, signal...) stay out.
  const merged = mergeOptions(parent === null ? undefined : inheritedOptions(parent.options), agent.options, run);
  const options = parent === null ? merged : nestedOptions(merged, parent.options);
  const agentRun = new AgentRun(agent, options, run, parent === null ? 0 : parent.depth + 1, parent, approvals, typeof read === "string" ? read : null);
  const step = await agentRun.execute();
  agentRun.observer?.runEnd(step);
  // An onStep that is not a function has ended the run with invalid_input.
  if (typeof run.onStep === "function") {
    // The run has ended: what the host's callback throws, as what it rejects with, must not lose the step.
    try {
      unheard(run.onStep(step));
    } catch {
      // Ignored, as the docs say.
    }
  }
  return step;
}

/**
 * The options with the client's cache model (`Llm.cacheModel`) and its model's cache minimum
 * where the view names none: a breakpoint client given the token-prefix layout found its cache
 * only at the task on every prompt (3.6 times full history's cost over 63 turns); a view assuming
 * 1,024 tokens for claude-haiku-4's 4,096 kept prompts under the minimum full history had passed.
 */
function withClientCache(options: InheritableOptions): InheritableOptions {
  const cacheModel = options.view?.cacheModel === undefined ? options.llm?.cacheModel : undefined;
  const cacheMinTokens = options.view?.cacheMinTokens === undefined ? clientCacheMinimum(options.llm) : undefined;
  if (cacheModel === undefined && cacheMinTokens === undefined) return options;
  return { ...options, view: { ...options.view, ...(cacheModel === undefined ? {} : { cacheModel }), ...(cacheMinTokens === undefined ? {} : { cacheMinTokens }) } };
}

/** The run's view options, or the defaults when they are invalid: `prepare` then ends the run with invalid_input. */
function tryViewOptions(options: InheritableOptions): ViewOptions {
  try {
    return resolveViewOptions(options);
  } catch {
    return defaultViewOptions;
  }
}

/** The history strategy, or null when the option is invalid: `prepare` then ends the run with invalid_input. */
function tryStrategy(options: InheritableOptions): HistoryStrategy | null {
  try {
    return historyStrategy(options);
  } catch {
    return null;
  }
}

/** The hidden keys of `ctx`, listed and read when asked, as `ctx` holds them then; one that cannot be read is undefined (the program's read reports it). */
function hiddenView(ctx: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const held = (k: string | symbol): k is string => typeof k === "string" && isHiddenKey(k) && Object.hasOwn(ctx, k);
  return new Proxy<Record<string, unknown>>({}, {
    ownKeys: () => Object.keys(ctx).filter(isHiddenKey),
    // A getter, not the value: listing the keys (Object.keys asks for each one's descriptor) reads none of them.
    getOwnPropertyDescriptor: (_, k) => (held(k) ? { get: () => valueOf(ctx, k), enumerable: true, configurable: true } : undefined),
    get: (_, k) => (held(k) ? valueOf(ctx, k) : undefined),
    has: (_, k) => held(k),
  });
}
