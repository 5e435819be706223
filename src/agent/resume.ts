// Saving a run and resuming it later. The saved state is the trace (every turn as it
// happened), the memory (data as EDN, functions as their defining source), the history
// strategy with its last state, and the compressed summaries, so either prompt view can be
// rebuilt without the interpreter. Resuming replays the saved turns through the ordinary loop —
// the saved replies stand in for the LLM, the recorded results for the tools and the recorded
// summaries for the strategy's summarizer, so nothing runs twice outside the sandbox — checks
// every message of every replayed prompt, then goes on with the live LLM. The file a state is
// stored in (its format, reader and writer) is src/trace/run-state.ts.
import { isDeepStrictEqual } from "node:util";
import { isStrategy, type StrategySpec } from "../compaction/registry.js";
import type { Json, Strategy } from "../compaction/types.js";
import { compressedView } from "../history/compressed.js";
import { fullView } from "../history/full.js";
import { INTERPRETER_STRATEGY } from "../history/strategy.js";
import { mergeViewOptions, resolveViewOptions } from "../trace/view-settings.js";
import { maxPrintCharsSchema } from "../trace/serialize.js";
import type { View, ViewOptions } from "../history/view.js";
import { againOptions, evaluate, type EvaluateOptions, holdsFunction, type Memory, type MemoryEntry, ours, print, type Value } from "../lisp/index.js";
import { DEFAULT_MAX_PRINT_CHARS, renderFeedback } from "../trace/feedback.js";
import type { Llm, LlmRequest, LlmResponse } from "../llm/types.js";
import { isObjectArg, mustBe } from "../llm/args.js";
import { withTurnMode } from "./prompt/system.js";
import { firstTurnLine } from "./prompt/task.js";
import { approvalId, type ApprovalDecision, type ApprovalSetup } from "./approval.js";
import { create, isAgent } from "./definition.js";
import { notStep } from "./saved-run.js";
import { AgentDefinitionError, describeIssues } from "./errors.js";
import { errorText } from "../llm/errors.js";
import { buildPrompt, clientCacheMinimum, historyStrategy, recordedSummarizer, strategySpec, type HistoryStrategy } from "./history.js";
import { runAgent } from "./loop.js";
import { checkInheritable, isPlainObject, mergeOptions, pickInheritable, readRunOptions } from "./options.js";
import { hiddenOutcome, showHidden } from "../trace/redact.js";
import { askedArgs, heldResult, holdResult, replayAnswer } from "../trace/record.js";
import { isHeld } from "../trace/totals.js";
import type { Agent, InheritableOptions, RunOptions, Step, UsageTotals } from "./types.js";
import { answersItself, claimRecord, parseOwn, recordedFailure, tool, type Tool, type ToolRunContext } from "./tools.js";
import type { ToolCallTrace, Turn } from "../trace/trace.js";
import { approvalDecisionSchema, readRunState, ResumeError, RUN_STATE_FORMAT, RUN_STATE_VERSION, type RunState, type SavedDefinition, savedMemorySchema } from "../trace/run-state.js";

/** Why a state cannot be resumed, as every refusal of resume says it. */
const refused = (why: string): ResumeError => new ResumeError(`resume: ${why}`);

/** Settings that shaped the saved prompts and feedback (the agent's, merged with the run's). */
export interface SaveOptions {
  compressHistory?: boolean;
  printlnHistoryLimit?: number;
  view?: Partial<ViewOptions>;
  maxPrintChars?: number;
}


const withdraws = (agent: Agent): boolean => Object.keys(agent.tools).length > 0 && agent.maxTurns > 1;

/**
 * The memory as saved: data as EDN, a definition holding a function (a map of them too) as its
 * defining source. A value that prints
 * past `print`'s limit (shared structure can unfold into gigabytes) is saved without its EDN,
 * which `restoreMemory` reports; a resumed run does not need it (it replays the turns).
 */
export function saveMemory(memory: Memory): SavedDefinition[] {
  if (!isObjectArg(memory) || typeof (memory as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== "function") {
    throw new TypeError(mustBe("saveMemory: memory", "a run's memory (the Map EvalResult.memory and Step.memory hold)", memory));
  }
  const out: SavedDefinition[] = [];
  for (const [name, entry] of memory) {
    const d: SavedDefinition = { name, kind: holdsFunction(entry.value) ? "function" : "value" };
    if (entry.doc !== undefined) d.doc = entry.doc;
    if (d.kind === "value") {
      const edn = printable(entry.value);
      if (edn !== undefined) d.edn = edn;
    }
    if (entry.source !== undefined) d.source = entry.source;
    if (entry.hidden !== undefined) d.hidden = { ...entry.hidden };
    out.push(d);
  }
  return out;
}

function printable(v: Value): string | undefined {
  try {
    // Read back as a program: a keyword from a JSON key with a space must come back whole.
    return print(v, true);
  } catch (e) {
    const mine = ours(e);
    if (mine !== null && "kind" in mine && mine.kind === "string_too_large") return undefined;
    throw e;
  }
}

/**
 * Captures a run (finished or stopped) so it can be stored and resumed. The prompt settings
 * are the ones the run recorded in its trace; `options` overrides them (and stands in for
 * them for a trace written without settings).
 */
export function saveRun(step: Step, agent: Agent, given: SaveOptions = {}): RunState {
  const wrong = notStep(step);
  if (wrong !== null) throw new ResumeError(`saveRun expects a Step (what SubAgent.run resolves to), ${wrong}`);
  if (!isAgent(agent)) throw new AgentDefinitionError("saveRun expects an agent made by SubAgent.create");
  // An untyped host may pass null for no options, as resume's may be.
  const options = given ?? {};
  // Checked as the state's reader checks it: a state it refuses could never be resumed.
  if (options.maxPrintChars !== undefined && !maxPrintCharsSchema.safeParse(options.maxPrintChars).success) throw new TypeError(`maxPrintChars must be a positive number, got ${typeof options.maxPrintChars === "string" ? JSON.stringify(options.maxPrintChars) : String(options.maxPrintChars)}`);
  const trace = step.trace;
  const recorded = trace.settings;
  const view = resolveViewOptions(recorded === undefined ? agent.options : recorded.view, options);
  const maxPrintChars = options.maxPrintChars ?? recorded?.maxPrintChars ?? agent.options.maxPrintChars ?? DEFAULT_MAX_PRINT_CHARS;
  const state: RunState = {
    format: RUN_STATE_FORMAT,
    version: RUN_STATE_VERSION,
    maxTurns: agent.maxTurns,
    view,
    toolsWithdrawn: recorded?.toolsWithdrawn ?? withdraws(agent),
    maxPrintChars,
    // The state is an export, as runToJson's file is: an answer computed from hidden context is kept as the trace records it.
    outcome: step.ok ? { ok: true, value: hiddenOutcome(trace) ?? step.value } : { ok: false, reason: step.fail.reason, message: step.fail.message },
    trace,
    memory: saveMemory(step.memory),
    summaries: [],
    history: { strategy: savedStrategy(trace.settings?.strategy, view), state: trace.turns.at(-1)?.compaction?.state ?? null },
  };
  // The results the records show hidden parts of: a replayed call answers with what the program had.
  const hiddenResults: NonNullable<RunState["hiddenResults"]> = [];
  trace.turns.forEach((t, i) =>
    t.toolCalls.forEach((c, call) => {
      const held = heldResult(c);
      if (held !== undefined) hiddenResults.push(held.whole ? { turn: i + 1, call, result: held.result, whole: true } : { turn: i + 1, call, result: held.result });
    }),
  );
  if (hiddenResults.length > 0) state.hiddenResults = hiddenResults;
  if (step.paused !== undefined) {
    const { approvals, held, decided } = step.paused;
    state.paused = { approvals, held, ...(decided === undefined ? {} : { decided }) };
  }
  // The state is the host's to keep, apart from the step: a host redacting the turns it logs
  // (step.turns, in place) must not change what a resume replays, nor the other way round. The
  // copy is the state as its file reads back (what a resume reads it as): plain data throughout.
  // The answer is the host's own value (it may be one JSON cannot hold: runStateToJson says where), kept as it is.
  const own = { ...readRunState({ ...state, outcome: { ok: false, reason: "", message: "" } }, "saveRun"), outcome: state.outcome };
  // Every state of one pause (step.paused.state, each saveRun of the step) is one pause to resume once.
  pauses.set(own.trace, pauses.get(trace) ?? trace);
  const compressed = stateView(own, "compressed");
  const full = new Set(compressed.stats.turnsFull.map((f) => f.turn));
  own.summaries = (compressed.turns ?? []).filter((p) => !full.has(p.turn)).map((p) => ({ turn: p.turn, text: p.text }));
  return own;
}

/** The trace of the step each saved state's trace was copied from: what identifies its pause (pauseOf). */
const pauses = new WeakMap<object, object>();

/** The strategy a saved run used: the one its trace records, or the view's (traces without one). */
function savedStrategy(recorded: { name: string; options: Readonly<Record<string, unknown>> } | undefined, view: ViewOptions): { name: string; options: Record<string, unknown> } {
  if (recorded !== undefined) return { name: recorded.name, options: { ...recorded.options } };
  const { compressHistory, ...options } = view;
  return strategySpec(historyStrategy({ compressHistory, view: options }));
}

/**
 * The view options the live client's cache sets (`Llm.cacheModel`, its model's minimum), as the loop
 * takes them for a run (withClientCache), but over the saved run's: its recorded `cacheModel` is its
 * own client's, or the default. A run saved under a token-prefix client and resumed with compression
 * under an Anthropic one kept the token-prefix layout, whose growing summary message that cache
 * misses on every prompt: 1.90x full history resumed alike (never-dearer.test.ts); resumed without
 * options it was refused, the replay laying the saved turns out for the client and the loop not.
 */
function clientCache(llm: Llm, named: Partial<ViewOptions> | undefined): Pick<ViewOptions, "cacheModel" | "cacheMinTokens"> {
  const minimum = clientCacheMinimum(llm);
  return { ...(named?.cacheModel === undefined && llm.cacheModel !== undefined ? { cacheModel: llm.cacheModel } : {}), ...(named?.cacheMinTokens === undefined && minimum !== undefined ? { cacheMinTokens: minimum } : {}) };
}

/** Rebuilds the prompt that would follow the saved turns, under either view. */
export function stateView(state: RunState, which: "full" | "compressed"): View {
  const input = { system: state.trace.system, task: state.trace.task, turns: state.trace.turns, maxTurns: state.maxTurns, toolsWithdrawn: state.toolsWithdrawn, maxPrintChars: state.maxPrintChars };
  return which === "full" ? fullView(input, state.view) : compressedView(input, resolveViewOptions(state.view, { compressHistory: true }));
}

/**
 * Re-creates the saved memory in the interpreter: data from its EDN, then functions from
 * their source (in saved order, so a function defined from another finds it). `run` is what
 * the runs that will use the memory have: their context, so a function may read `data/` (and
 * marks what it computes from `_` keys), and their tools, by name, so it may call them. A
 * definition is only made again: one that calls a tool while being defined cannot be restored.
 */
export async function restoreMemory(saved: readonly SavedDefinition[], run: { ctx?: Record<string, unknown>; tools?: Readonly<Record<string, unknown>> } = {}): Promise<Memory> {
  const wrong = notSavedMemory(saved);
  if (wrong !== null) throw new ResumeError(`restoreMemory expects saved definitions (saveMemory's result, or a RunState's memory), ${wrong}`);
  const values = saved.filter((d) => d.kind === "value");
  const functions = saved.filter((d) => d.kind === "function");
  let memory: Memory = new Map();
  for (const d of values) {
    if (d.edn === undefined) throw new ResumeError(`cannot restore ${d.name}: its value was not saved (it prints to more than print's limit)`);
    const program = `(def ${d.name} ${d.doc === undefined ? "" : JSON.stringify(d.doc) + " "}${d.edn})`;
    memory = await step(program, memory, d.name, {});
    if (d.hidden !== undefined) {
      const entry = memory.get(d.name) as MemoryEntry;
      memory = new Map(memory).set(d.name, { ...entry, hidden: d.hidden });
    }
  }
  const again = againOptions(Object.keys(run.tools ?? {}).map((name) => ({ name })), { ctx: run.ctx });
  for (const d of functions) {
    if (d.source === undefined) throw new ResumeError(`cannot restore function ${d.name}: its source was not saved`);
    memory = await step(d.source, memory, d.name, again);
  }
  return memory;
}

/** What a value an untyped host passed as saved definitions is instead (the whole state, its JSON text), or null. */
function notSavedMemory(x: unknown): string | null {
  if (typeof x === "string") return "got a string: read it with runStateFromJson and pass its memory";
  if (!Array.isArray(x)) return typeof x === "object" && x !== null ? "got an object: pass the state's memory" : `got ${x === null ? "null" : typeof x}`;
  const parsed = savedMemorySchema.safeParse(x);
  return parsed.success ? null : `got an entry that is not one: ${describeIssues(parsed.error, x).join("; ")}`;
}

async function step(program: string, memory: Memory, name: string, options: EvaluateOptions): Promise<Memory> {
  const result = await evaluate(program, { ...options, memory });
  if (!result.ok) throw new ResumeError(`cannot restore ${name}: ${result.error.message}`);
  if (!result.memory.has(name)) throw new ResumeError(`cannot restore ${name}: its saved form does not define it`);
  return result.memory;
}

/** Options of a resumed run: the usual run options; `llm` serves the turns after the saved ones. */
export interface ResumeOptions extends RunOptions {
  /** For a run paused for approval: the host's decision per request id (a request left out pauses the run again). */
  approvals?: Readonly<Record<string, ApprovalDecision>>;
}

/**
 * Continues a saved run with the same agent (its turn budget may be larger) and the same
 * context, with the saved run's prompt settings (compression, println limit, view
 * options, print cap) unless `options` sets them. Also `SubAgent.resume`. The saved turns are replayed — their replies instead of LLM calls, their
 * recorded results instead of tool calls — and each replayed turn's feedback must match
 * the saved one, so a changed context or agent is caught before a live turn is spent.
 */
export async function resumeRun(agent: Agent, savedState: RunState, resumeOptions: ResumeOptions = {}): Promise<Step> {
  if (!isAgent(agent)) throw new AgentDefinitionError("SubAgent.resume expects an agent made by SubAgent.create");
  const state = readRunState(savedState, "resume");
  // Only a paused state's approved calls are one-time: another state may be resumed again (with a larger budget, another context).
  if (state.paused === undefined) return (await resumeState(agent, state, resumeOptions)).step;
  // Claimed before the first await, so a second resume of the same pause started meanwhile sees it.
  const key = pauseOf(savedState);
  const claim = resumed.get(key);
  if (claim !== undefined) throw refused(claim === "running" ? RESUMING : RESUMED);
  resumed.set(key, "running");
  let ran = false;
  try {
    const out = await resumeState(agent, state, resumeOptions);
    ran = out.ran;
    return out.step;
  } finally {
    // A resume that ran none of the paused turn's calls (refused, rejected, a changed context) leaves the state to resume.
    if (ran) resumed.set(key, "done");
    else resumed.delete(key);
  }
}

/** What identifies a pause in memory: its step's trace, which step.paused.state and every saveRun(step) of the step were copied from. */
function pauseOf(state: RunState): object {
  try {
    const trace: unknown = state.trace;
    return typeof trace === "object" && trace !== null ? (pauses.get(trace) ?? trace) : state;
  } catch {
    // Read once already by readRunState: a getter that throws now keeps the state itself as the key.
    return state;
  }
}

/**
 * The pauses resumed, or being resumed (by pauseOf). A resume runs the calls the host approved; a
 * second resume of the same state would run them again (a payment approved once, paid twice), so
 * once one of them ran, the state is spent: what ran is in the step that resume gave.
 */
const resumed = new WeakMap<object, "running" | "done">();
const RESUMING = "this paused state is being resumed already: a second resume would run its approved calls again; wait for the first and continue from the step it gives";
const RESUMED = "this paused state was resumed already, and its approved calls ran then: continue from the step that resume gave (step.paused.state, or saveRun(step, agent))";

/** The resume itself: its step, and whether a call of the paused turn ran live. */
async function resumeState(agent: Agent, state: RunState, resumeOptions: ResumeOptions): Promise<{ step: Step; ran: boolean }> {
  const read = readRunOptions(resumeOptions ?? {}, ["approvals"]);
  if (typeof read === "string") throw refused(read);
  const { approvals: decisions, ...options } = read;
  // Checked before they are merged with the saved settings: a view that is not an object (a Map, a number, null) spread into them was read as no view options.
  checkInheritable(pickInheritable(options), (message) => {
    throw refused(`${message}; nothing ran, and the saved state is still the one to resume`);
  });
  // A Map or a list of decisions was read as no decisions (copied as {}), null threw a TypeError.
  if (decisions !== undefined && !isPlainObject(decisions)) {
    const expected = 'an object of decisions by request id ({ "turn-2-call-1": { approved: true } })';
    throw refused(`${(decisions as unknown) instanceof Map ? `options.approvals must be ${expected}, got a Map: pass Object.fromEntries(map)` : mustBe("options.approvals", expected, decisions)}`);
  }
  if (state.outcome.ok) throw refused("the saved run already returned a value; there is nothing to resume");
  if (state.outcome.reason === "failed") throw refused(`the saved run ended with (fail ...): ${state.outcome.message}`);
  // Its options were refused before its task was built: no turn to replay, no task to check one against.
  if (state.outcome.reason === "invalid_input") throw refused(`the saved run ended before its first turn (invalid_input: ${state.outcome.message}); there is nothing to resume: run the agent again`);
  const saved = state.trace.turns;
  const cut = cutTurn(state);
  for (const { turn, call, result, whole } of state.hiddenResults ?? []) {
    const record = saved[turn - 1]?.toolCalls[call];
    if (record === undefined) throw refused(`the saved state's hiddenResults name call ${call + 1} of turn ${turn}, which its trace does not hold`);
    holdResult(record, { result, whole: whole === true });
  }
  const approvals = await approvalSetup(agent, state, decisions, cut);
  // The turns saved whole; a paused or cut turn runs again.
  const whole = saved.length - (state.paused === undefined && cut === 0 ? 0 : 1);
  if (whole >= agent.maxTurns) throw refused(`the saved run used ${saved.length} of the agent's ${agent.maxTurns} turns; resume with an agent that allows more`);
  // The paused turn runs again; as the final turn its tools are withdrawn, and the calls it paused on (approved or not) would fail instead of running.
  if (state.paused !== undefined && saved.length >= agent.maxTurns && withdraws(agent)) {
    throw refused(`the saved run paused in turn ${saved.length}, which is the final turn of the agent's ${agent.maxTurns}, where its tools are withdrawn: the calls waiting for approval could not run; resume with an agent that allows more turns`);
  }
  const live = options.llm ?? agent.options.llm;
  if (live === undefined) throw refused("no llm: pass { llm } to serve the turns after the saved ones");
  // The saved run's prompt settings and history strategy carry over unless the options say otherwise.
  const { compressHistory, printlnHistoryLimit, ...view } = state.view;
  // The prompts from here on go to the live client's cache: its kind and minimum replace those the
  // saved run recorded (its client's, or the defaults), unless the agent or the resume names them.
  const cache = clientCache(live, agent.options.view);
  // The saved interpreter strategy's options are its view options: those the resume gives apply to
  // it. Run with the saved ones alone, it left them unused while the trace recorded them, and the
  // trace's settings rebuilt prompts the run never sent.
  const savedSpec = options.compressHistory === undefined ? state.history?.strategy : undefined;
  const given = { ...cache, ...mergeViewOptions(options) };
  const history = options.history ?? (savedSpec?.name === INTERPRETER_STRATEGY && Object.keys(given).length > 0 ? { name: savedSpec.name, options: { ...savedSpec.options, ...given } } : savedSpec);
  const run: RunOptions = { compressHistory, printlnHistoryLimit, maxPrintChars: state.maxPrintChars, ...(history === undefined ? {} : { history }), ...options, view: { ...view, ...cache, ...options.view } };
  let strategy: HistoryStrategy;
  try {
    strategy = historyStrategy({ ...agent.options, ...run, view: { ...agent.options.view, ...run.view } });
    // Saved under full history and resumed with compression: the prompts the saved run sent are
    // in the provider's cache, so its turns stay as full history shows them (fullTurns). Summarized,
    // the first live prompt wrote all of it again (a run resumed for its last 2 of 11 turns: 1.12x
    // full history under a token-prefix cache, 1.48x under breakpoints).
    const savedName = state.history?.strategy.name ?? (state.view.compressHistory ? INTERPRETER_STRATEGY : "full");
    if (savedName === "full" && strategy.name === INTERPRETER_STRATEGY && (run.history === undefined || !isStrategy(run.history as Strategy | StrategySpec | string))) {
      const fullTurns = saved.length;
      if (run.history === undefined) run.view = { ...run.view, fullTurns };
      else run.history = { name: INTERPRETER_STRATEGY, options: { ...(strategy.options as Record<string, Json>), fullTurns } };
      strategy = historyStrategy({ ...agent.options, ...run, view: { ...agent.options.view, ...run.view } });
    }
  } catch (e) {
    throw refused(`the saved run's history strategy cannot be rebuilt: ${(e as Error).message}`);
  }
  // What an agent started live inherits (Replay.live): the saved settings, as a run's nested agents
  // inherit its options, but not what rebuilds this run's own prompts: its strategy as a spec (which
  // overrode a nested agent's own compressHistory) and its client's cache (the saved turns kept whole
  // no nested run inherits: inheritedOptions). A compressed nested agent with its own claude-haiku-4
  // client took this run's 1,024-token minimum: 1.67x its full history, where the same call in a run
  // not resumed costs 0.94x (never-dearer.test.ts).
  const { cacheModel: _model, cacheMinTokens: _minimum, ...carried } = view;
  const named = savedSpec !== undefined && savedSpec.name !== "full" && savedSpec.name !== INTERPRETER_STRATEGY ? { history: savedSpec } : {};
  const inherited = mergeOptions(agent.options, { compressHistory, printlnHistoryLimit, maxPrintChars: state.maxPrintChars, ...named, view: carried }, pickInheritable(options));
  const replay = new Replay(saved, state, agent, run, live, strategy, approvals.paused?.turn ?? 0, cut, inherited);
  const replaying = create({
    prompt: agent.prompt,
    tools: replay.tools(agent.tools),
    maxTurns: agent.maxTurns,
    ...agent.options,
    ...(agent.output !== undefined ? { output: agent.output } : {}),
    ...(agent.description !== undefined ? { description: agent.description } : {}),
  });
  const step = await runAgent(replaying as Agent, { ...run, llm: replay.llm, historyLlm: replay.summarizer(run.historyLlm ?? agent.options.historyLlm) }, null, approvals);
  // Stopped (abort, deadline, a token budget the saved turns' tokens spend, an onTurn hook that threw) before the turns saved
  // whole were replayed, or in the paused turn before a held call ran: nothing ran live, and the
  // step holds fewer turns than the state (the paused one cut), so a state saved from it would
  // run the rest again live (the paused turn's calls that had run before the pause too).
  const pausedUntouched = approvals.paused !== undefined && replay.reached === saved.length && !replay.pausedTurnRan;
  // A replay that did not reproduce the saved run ends it before the saved turns are all in the
  // step: saved, that step would run the rest again live (with the context that differs).
  if (!step.ok && replay.mismatch !== undefined && step.turns.length < saved.length) throw new ResumeError(`${replay.mismatch}; nothing ran, and the saved state is still the one to resume`);
  // Options the run refuses end it before anything ran, with no turn: saved, that step would lose the saved turns.
  if (!step.ok && step.fail.reason === "invalid_input") throw refused(`${step.fail.message}; nothing ran, and the saved state is still the one to resume`);
  if (!step.ok && saved.length > 0 && (replay.reached <= whole || pausedUntouched)) {
    const reason = step.fail.reason;
    if (reason === "token_budget_exceeded") {
      throw refused(`the saved turns spent the run's tokenBudget of ${String(run.tokenBudget)} before they were replayed (${step.fail.message}); nothing ran, and the saved state is still the one to resume, with a larger budget`);
    }
    if (reason === "aborted" || reason === "deadline_exceeded") {
      throw refused(`the run was ${reason === "aborted" ? "aborted" : "past its deadline"} before its saved turns were replayed; nothing ran, and the saved state is still the one to resume`);
    }
    if (reason === "internal_error") {
      throw refused(`the run ended before its saved turns were replayed (${step.fail.message}); nothing ran, and the saved state is still the one to resume`);
    }
  }
  // The cut turn cut again: its record holds the calls this attempt reached; the saved calls it
  // did not reach had finished all the same (before these: a call this attempt's cut stopped
  // is answered from the finished record of it first), and a state saved from the step must answer them too.
  const again = cut === 0 || step.ok ? undefined : step.turns[cut - 1];
  if (again !== undefined && step.turns.length === cut && isCut(step.fail?.reason, again)) again.toolCalls.unshift(...unreached(saved[cut - 1].toolCalls, again.toolCalls));
  // Nested agents' traces of replayed calls were not re-run: carry the saved ones over (before a paused turn's new ones).
  for (let i = 0; i < Math.min(saved.length, step.turns.length); i++) {
    const before = saved[i].nested;
    if (before !== undefined) step.turns[i].nested = approvals.paused?.turn === i + 1 || cut === i + 1 ? [...before, ...(step.turns[i].nested ?? [])] : before;
  }
  return { step, ran: replay.pausedTurnRan };
}

/** Whether a run that ended for `reason` ended in `last` cut short (see cutTurn). */
function isCut(reason: string | undefined, last: Turn): boolean {
  const kind = last.error?.kind;
  return (reason === "aborted" || reason === "deadline_exceeded") && (kind === "aborted" || (reason === "deadline_exceeded" && kind === "timeout" && last.feedback === undefined));
}

/** What the record of a call the cut stopped (in flight, or not yet started) holds as its error. */
const CUT_CALL = "aborted";

// A held call (isHeld) did not run either: the host had not been asked yet when the cut came.
const finished = (c: ToolCallTrace): boolean => c.result !== undefined || (c.error !== undefined && c.error !== CUT_CALL && !isHeld(c));

/** The saved calls that had finished and that `now` does not hold finished (one for one, by tool and recorded arguments). */
function unreached(saved: readonly ToolCallTrace[], now: readonly ToolCallTrace[]): ToolCallTrace[] {
  const key = (c: ToolCallTrace): string => `${c.name} ${JSON.stringify(askedArgs(c))}`;
  const made = new Map<string, number>();
  for (const c of now) if (finished(c)) made.set(key(c), (made.get(key(c)) ?? 0) + 1);
  return saved.filter((c) => {
    if (!finished(c)) return false;
    const n = made.get(key(c)) ?? 0;
    made.set(key(c), n - 1);
    return n <= 0;
  });
}

/**
 * The number of the last turn when the caller's abort or the run's deadline cut its program
 * short (stopped at a tool call, or out of the time limit the deadline cut, with no feedback
 * given), else 0. Its saved program runs again, and its calls that had finished before the cut
 * are answered from their records (Replay.cutCall): a call must not run twice. A finished call
 * whose result was not recorded (with worker isolation in a run with hidden context, the worker's
 * record, lost when the worker is ended) would have to run again: such a state is refused.
 */
function cutTurn(state: RunState): number {
  const last = state.trace.turns.at(-1);
  if (state.outcome.ok || state.paused !== undefined || last === undefined || last.status === "paused") return 0;
  if (!isCut(state.outcome.reason, last)) return 0;
  const lost = last.toolCalls.find((c) => c.result === undefined && c.error === undefined);
  if (lost !== undefined) throw refused(`turn ${last.number} was cut short after its call of tool/${lost.name} had finished, and the call's result was not recorded; resuming would run it again (with hidden context, a worker keeps its calls' results until the program ends, and the cut ended it: a run with isolation "none" records them)`);
  return last.number;
}

/** What is wrong with a host's edited arguments, checked as the tool session checks a call's (asynchronously: a schema may refine so), or undefined. */
async function argumentProblem(t: Tool, args: Record<string, unknown>): Promise<string | undefined> {
  try {
    const edited = await parseOwn(t.input, args);
    return edited.success ? undefined : describeIssues(edited.error, args).join("; ");
  } catch (e) {
    // A transform that throws instead of adding an issue.
    return errorText(e);
  }
}

const savedTurns = (turns: readonly Turn[]): Array<{ llmMs: number; execMs: number; prints: number }> => turns.map((t) => ({ llmMs: t.usage.llmMs, execMs: t.usage.execMs, prints: t.prints.length }));

/** The approvals of a resumed run: every decision checked against the requests and the tools' schemas before anything runs. */
async function approvalSetup(agent: Agent, state: RunState, decisions: Readonly<Record<string, ApprovalDecision>> = {}, cut = 0): Promise<ApprovalSetup> {
  const paused = state.paused;
  const ids = Object.keys(decisions);
  const saved = state.trace.turns;
  const save = (step: Step): RunState => saveRun(step, agent);
  if (paused === undefined) {
    if (saved.at(-1)?.status === "paused") throw new ResumeError("not a ptc-lisp run state: its last turn paused for approval, but it holds no requests");
    if (ids.length > 0) throw refused(`the saved run is not waiting for approval, so the decision for "${ids[0]}" applies to nothing`);
    // A cut turn's calls that run again live are asked for approval as in any live turn.
    const calls = cut === 0 ? [] : saved[cut - 1].toolCalls;
    const finishedCalls = new Set(calls.flatMap((c, i) => (finished(c) ? [i] : [])));
    return { save, decisions: new Map(), replayedTurns: saved.length - (cut === 0 ? 0 : 1), replayedNested: nestedSpending(saved), savedTurns: savedTurns(saved), failedRequests: state.trace.failedRequests ?? [], ...(cut === 0 ? {} : { cut: { turn: cut, calls, finished: finishedCalls } }) };
  }
  const last = saved.at(-1);
  if (last === undefined || last.status !== "paused" || paused.approvals.some((a) => a.turn !== last.number)) throw new ResumeError("not a ptc-lisp run state: it is paused for approval but its last turn is not the paused one");
  // A held call does not run on its record (which holds no result): each request's call must be one, and held calls the turn's.
  const held = new Set(paused.held.filter((i) => i < last.toolCalls.length).map((i) => approvalId(last.number, i)));
  const astray = paused.approvals.find((a) => !held.has(a.id));
  if (held.size < paused.held.length) throw new ResumeError("not a ptc-lisp run state: its held calls are not the paused turn's calls");
  if (astray !== undefined) throw new ResumeError(`not a ptc-lisp run state: its request ${astray.id} is not among the paused turn's held calls`);
  const waiting = new Map(paused.approvals.map((a) => [a.id, a]));
  // Decisions given at an earlier resume for calls the turn had not reached when it paused again.
  const earlier = new Map(Object.entries(paused.decided ?? {}));
  for (const id of earlier.keys()) {
    if (!held.has(id) || waiting.has(id)) throw new ResumeError(`not a ptc-lisp run state: its decision for ${id} is not for a held call left to decide`);
  }
  const out = new Map<string, ApprovalDecision>(earlier);
  for (const id of ids) {
    const request = waiting.get(id);
    const given = earlier.get(id);
    if (given !== undefined) throw refused(`${id} was decided (${given.approved ? "approved" : "rejected"}) at an earlier resume, and the decision stands; the saved run waits for ${paused.approvals.map((a) => `${a.id} (tool/${a.tool})`).join(", ")}`);
    if (request === undefined) throw refused(`no call waits for approval under the id "${id}"; the saved run waits for ${paused.approvals.map((a) => `${a.id} (tool/${a.tool})`).join(", ")}`);
    let checked: ReturnType<typeof approvalDecisionSchema.safeParse>;
    try {
      checked = approvalDecisionSchema.safeParse(decisions[id]);
    } catch {
      // A getter or Proxy trap of the host's: its text may quote a secret.
      throw refused(`the decision for ${id} could not be read (reading it threw)`);
    }
    if (!checked.success) throw refused(`the decision for ${id} must be { approved: true, args? } or { approved: false, reason? }`);
    const decision = checked.data as ApprovalDecision;
    const t = agent.tools[request.tool] as Tool | undefined;
    if (t === undefined) throw refused(`the agent has no tool/${request.tool}, which the saved run paused on (${id})`);
    if (decision.approved && decision.args !== undefined) {
      const problem = await argumentProblem(t, decision.args);
      if (problem !== undefined) throw refused(`the edited arguments for ${id} (tool/${request.tool}) are invalid: ${problem}; the run is still paused`);
    }
    out.set(id, decision);
  }
  return { save, decisions: out, replayedTurns: saved.length - 1, replayedNested: nestedSpending(saved), savedTurns: savedTurns(saved), failedRequests: state.trace.failedRequests ?? [], paused: { turn: last.number, calls: last.toolCalls, held: new Set(paused.held) } };
}

/**
 * What the saved turns' nested runs (at any depth) spent: one LLM request per turn with its
 * tokens, and their summaries; and the size of their tool calls. Replayed calls answer from their
 * records and start no run, yet these runs happened: a resumed run counts them as the saved run did
 * (maxNestedRuns, tokenBudget, maxToolResultSize, usage.nested), or each resume could start
 * maxNestedRuns more, keep maxToolResultSize more, and report a fraction of the spend.
 */
function nestedSpending(turns: readonly Turn[]): UsageTotals & { runs: number; kept: number } {
  const out = { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmRequests: 0, runs: 0, kept: 0 };
  const pending = turns.flatMap((t) => t.nested ?? []);
  for (let run = pending.pop(); run !== undefined; run = pending.pop()) {
    out.runs++;
    for (const t of run.trace.turns) {
      out.inputTokens += t.usage.inputTokens;
      out.outputTokens += t.usage.outputTokens;
      out.cachedTokens += t.usage.cachedTokens;
      out.llmRequests++;
      for (const c of t.toolCalls) out.kept += c.size ?? 0;
      const summaries = t.compaction?.stats;
      if (summaries !== undefined) {
        out.inputTokens += summaries.llmInputTokens;
        out.outputTokens += summaries.llmOutputTokens;
        out.llmRequests += summaries.llmCalls;
      }
      pending.push(...(t.nested ?? []));
    }
  }
  return out;
}

const cut = (s: string): string => JSON.stringify(s.length > 80 ? `${s.slice(0, 79)}…` : s);

/** Where two texts first differ, as `saved "line" / now "line"`. */
function firstLineDifference(saved: string, now: string): string {
  const a = saved.split("\n");
  const b = now.split("\n");
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return `saved ${cut(a[i] ?? "(end)")} / now ${cut(b[i] ?? "(end)")}`;
}

/** The parts of a task message (the task template): input data, mission, first turn line. */
function taskParts(task: string): { context: string; mission: string; turns: string } | null {
  const m = /^# Input data\n\n([\s\S]*?)\n\n# Mission\n\n([\s\S]*)$/.exec(task);
  if (m === null) return null;
  const end = m[2].lastIndexOf("\n\n");
  return { context: m[1], mission: end < 0 ? m[2] : m[2].slice(0, end), turns: end < 0 ? "" : m[2].slice(end + 2) };
}

/** Which parts of the task message differ (the context, the mission, the turn budget), each with its first differing line. */
function taskDifference(saved: string, now: string): string {
  const a = taskParts(saved);
  const b = taskParts(now);
  if (a === null || b === null) return firstLineDifference(saved, now);
  const names = { context: "the context (input data)", mission: "the mission", turns: "the turn budget" } as const;
  return (Object.keys(names) as Array<keyof typeof names>)
    .filter((k) => a[k] !== b[k])
    .map((k) => `${names[k]} differs, ${firstLineDifference(a[k], b[k])}`)
    .join("; ");
}

const text = (m: { content: unknown } | undefined): string => (typeof m?.content === "string" ? m.content : "");

/** Index of the first message where two prompts differ (role or text), or -1. */
function firstDifference(a: ReadonlyArray<{ role: string; content: unknown }>, b: ReadonlyArray<{ role: string; content: unknown }>): number {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i]?.role !== b[i]?.role || a[i]?.content !== b[i]?.content) return i;
  return -1;
}

/**
 * A saved turn's summaries as the summarizer answered them. The trace keeps each reply and the
 * turn's spend: the first carries it all, so the replayed turn's compaction stats, and the
 * tokens charged for them, are the saved turn's.
 */
function recordedSummaries(turn: Turn): LlmResponse[] {
  const c = turn.compaction;
  if (c?.calls === undefined) return [];
  const spent = { inputTokens: c.stats.llmInputTokens, outputTokens: c.stats.llmOutputTokens, cachedTokens: 0 };
  return c.calls.map((content, i) => ({ content, usage: i === 0 ? spent : { inputTokens: 0, outputTokens: 0, cachedTokens: 0 } }));
}

/** The replay of saved turns: an LLM and tools that answer from the trace, then hand over. */
class Replay {
  /** The saved turn being replayed (1-based). */
  private current = 0;
  /** The latest turn whose reply was asked for: the turns before it were replayed, and checked by its prompt. */
  reached = 0;
  /** Set once the saved turns are replayed: from then on everything is live. */
  private isLive = false;
  /** Set once a call of the paused turn ran live (a held call, decided): the turn is no longer the saved one. */
  pausedTurnRan = false;
  /** Per replayed turn, the places of its recorded calls answered so far. */
  private readonly answered = new Map<number, Set<number>>();
  /** Why a replayed prompt was not the saved run's, once one was not: the run ends there. */
  mismatch: string | undefined = undefined;
  /** Set when a replayed turn called a tool with other arguments than the saved run. */
  private diverged: string | undefined = undefined;
  /** The prompts the saved turns' records give under the resumed run's settings, built one by one as the checks ask. */
  private expectedState: Json | undefined = undefined;
  private readonly expectedSummaries: ReturnType<typeof recordedSummarizer>;
  private readonly summaries: readonly LlmResponse[];
  /** Whether the turn budget and the history strategy are the saved run's: its prompts are then sent again as they were. */
  private readonly unchanged: boolean;
  /** The saved system prompt under the resumed turn budget: a single-turn run resumed with more turns gets the turn rules. */
  private readonly system: string;

  constructor(
    private readonly saved: readonly Turn[],
    private readonly state: RunState,
    private readonly agent: Agent,
    private readonly options: RunOptions,
    private readonly liveLlm: Llm,
    private readonly strategy: HistoryStrategy,
    /** The turn the saved run paused on (0: none): its calls are answered by the approval gate, or run live. */
    private readonly pausedTurn: number,
    /** The turn an abort or the deadline cut short (0: none): its calls that had finished are answered from their records, the others run live. */
    private readonly cutTurn: number,
    /** The options an agent started by a live call inherits. */
    private readonly inherited: InheritableOptions,
  ) {
    this.summaries = saved.flatMap(recordedSummaries);
    this.expectedSummaries = recordedSummarizer(this.summaries);
    const spec = strategySpec(strategy);
    this.unchanged = agent.maxTurns === state.maxTurns && isDeepStrictEqual(spec, state.history?.strategy ?? spec);
    this.system = withTurnMode(state.trace.system, agent.maxTurns > 1);
    this.llm = {
      name: "resume",
      ...(liveLlm.cacheModel === undefined ? {} : { cacheModel: liveLlm.cacheModel }),
      standsFor: liveLlm.standsFor ?? liveLlm.name,
      complete: (request: LlmRequest): Promise<LlmResponse> => this.complete(request),
    };
  }

  /** The summarizer of the resumed run: the recorded summaries while replaying, then the live one (or none). */
  summarizer(live: Llm | undefined): Llm | undefined {
    if (this.summaries.length === 0) return live;
    const replayed = recordedSummarizer(this.summaries);
    return {
      name: live?.name ?? replayed.name,
      complete: (request) => (replayed.left > 0 && !this.isLive ? replayed.complete(request) : live !== undefined ? live.complete(request) : Promise.reject(new Error("resume: no historyLlm for the summaries after the saved turns"))),
    };
  }

  /**
   * It answers for the live client, whose cache the loop lays out a strategy the resume names for
   * (`history: "interpreter-summaries"`), as the checks build it: told nothing, the loop took the
   * token-prefix layout and the default minimum, and a compressed run resumed so under an Anthropic
   * client was refused at its first prompt ("the system prompt differs from the saved run's").
   */
  readonly llm: Llm;

  // Only the resumed run's own requests arrive while replaying (replayed tool calls start
  // no nested agents); once live, every request (nested agents' too) goes to the live LLM.
  private async complete(request: LlmRequest): Promise<LlmResponse> {
    if (this.isLive) return this.liveLlm.complete(request);
    const n = request.turn ?? 1;
    try {
      await this.check(request, n);
    } catch (e) {
      this.mismatch ??= errorText(e);
      throw e;
    }
    this.reached = Math.max(this.reached, n);
    if (n > this.saved.length) {
      this.isLive = true;
      return this.liveLlm.complete(request);
    }
    this.current = n;
    const t = this.saved[n - 1];
    // The saved run's model prices the replayed turns; figures it measured itself are measured again (the same prompts give the same figures).
    const model = this.state.trace.settings?.model;
    const usage = t.usage.source === "local" ? undefined : { inputTokens: t.usage.inputTokens, outputTokens: t.usage.outputTokens, cachedTokens: t.usage.cachedTokens, ...(t.usage.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: t.usage.cacheWriteTokens }) };
    return { content: t.reply, ...(model === undefined ? {} : { model }), ...(usage === undefined ? {} : { usage }), ...(t.truncated === true ? { truncated: true } : {}) };
  }

  /**
   * The replayed run must send, message for message, the prompt the saved turns' records give
   * under the resumed settings (the saved prompt itself when the turn budget and strategy are
   * unchanged): a changed context, agent, tool or strategy state is caught before a live turn is spent.
   */
  private async check(request: LlmRequest, n: number): Promise<void> {
    if (this.diverged !== undefined) throw new ResumeError(this.diverged);
    // The paused turn ran again with the host's decisions: its feedback is new, not the saved
    // turn's (which stopped at the held call), and the turns before it were checked by its own prompt.
    if (this.pausedTurn !== 0 && n > this.pausedTurn) return;
    // So did the cut turn, run to its end this time.
    if (this.cutTurn !== 0 && n > this.cutTurn) return;
    const sent = request.messages;
    const asked = this.expectedSummaries.overrun;
    const expected = await this.expected(n);
    // The first live prompt may hold summaries written just now: then only its latest message is known.
    if (this.expectedSummaries.overrun > asked) {
      if (sent.at(-1)?.content !== expected.at(-1)?.content) throw refused(`replaying turn ${n - 1} did not reproduce the saved run: its feedback differs (a different context, agent or tool?)`);
      return;
    }
    const saved = this.unchanged && n <= this.saved.length ? this.saved[n - 1].messages : undefined;
    for (const [what, want] of [["the saved turns' records give", expected], ["the saved run sent", saved]] as const) {
      if (want === undefined) continue;
      const at = firstDifference(sent, want);
      if (at !== -1 && n === 1) {
        const [was, is] = [text(want[at]), text(sent[at])];
        throw new ResumeError(
          at === 0
            ? `resume: the system prompt differs from the saved run's (different tools, tool descriptions or output schema, or a history strategy whose prompt is not a function of its input and state?): ${firstLineDifference(was, is)}`
            : `resume: the task message differs from the saved run's: ${this.resampled(was, is) ?? taskDifference(was, is)}`,
        );
      }
      if (at !== -1) {
        const turn = n === 1 ? "the task" : `turn ${n - 1}`;
        throw new ResumeError(
          `resume: replaying ${turn} did not reproduce the saved run: message ${at + 1} of prompt ${n} differs from what ${what} (a different context, agent, tool or history strategy?): its feedback differs, ${firstLineDifference(text(want[at]), text(sent[at]))}`,
        );
      }
    }
    if (n === this.saved.length && this.unchanged && this.state.history !== undefined && !isDeepStrictEqual(this.expectedState ?? null, this.state.history.state)) {
      throw refused("the history strategy's state rebuilt from the saved turns differs from the saved one");
    }
  }

  /**
   * Why the task differs when the resume sets other sample options than the saved run's: told that
   * "the context (input data) differs", a host resuming with the same context looked there.
   */
  private resampled(was: string, is: string): string | undefined {
    const changed = (["sampleItems", "sampleChars"] as const).filter((k) => this.options.view?.[k] !== undefined && this.options.view[k] !== this.state.view[k]);
    if (changed.length === 0) return undefined;
    const given = changed.map((k) => `view.${k} ${String(this.options.view?.[k])} (the saved run's: ${this.state.view[k]})`).join(" and ");
    return `${given} ${changed.length === 1 ? "shapes" : "shape"} its data samples, which the saved run sent with its own: resume without changing ${changed.length === 1 ? "it" : "them"} (${firstLineDifference(was, is)})`;
  }

  private info(): { maxTurns: number; toolsWithdrawn: boolean } {
    return { maxTurns: this.agent.maxTurns, toolsWithdrawn: withdraws(this.agent) };
  }

  private maxPrintChars(): number {
    return this.options.maxPrintChars ?? this.agent.options.maxPrintChars ?? this.state.maxPrintChars;
  }

  /** Prompt n as the saved turns' records give it under the resumed run's settings. */
  private async expected(n: number): Promise<Array<{ role: string; content: string }>> {
    const info = this.info();
    const maxPrintChars = this.maxPrintChars();
    const task = this.state.trace.task.replace(firstTurnLine(this.state.maxTurns, this.state.toolsWithdrawn), firstTurnLine(this.agent.maxTurns, info.toolsWithdrawn));
    const turns = this.saved.slice(0, n - 1).map((t) => ({ ...t, feedback: renderFeedback(t, info, { prints: true, maxPrintChars }) }));
    const input = { system: this.system, task, turns, maxTurns: this.agent.maxTurns, toolsWithdrawn: info.toolsWithdrawn, maxPrintChars };
    const built = await buildPrompt(input, this.state.view, this.strategy, { state: this.expectedState, llm: this.expectedSummaries });
    this.expectedState = built.compaction.state;
    // As the loop sends it: hidden values are stand-ins in the records, shown unquoted.
    return showHidden(built.messages);
  }

  /** The agent's tools, answering from the recorded calls while a saved turn replays. */
  tools(tools: Readonly<Record<string, Tool>>): Record<string, Tool> {
    const out: Record<string, Tool> = {};
    for (const [name, t] of Object.entries(tools)) {
      out[name] = answersItself(
        tool({
          ...t,
          run: (args, signal, ctx) => {
            if (this.isLive) return t.run(args, signal, this.live(ctx));
            if (this.current === this.cutTurn) return this.cutCall(name, t, args, signal, ctx);
            if (this.current !== this.pausedTurn) return this.recorded(name, t, args, ctx);
            this.pausedTurnRan = true;
            return t.run(args, signal, this.live(ctx));
          },
        }),
      );
    }
    return out;
  }

  /**
   * A live call's context, the call told as live. An agent it starts (SubAgent.asTool) inherits the caller's models: the
   * live ones, not the replay's, which would take its prompts for the saved run's (the paused
   * turn's calls run live before the replay hands over); and the caller's options as a run passes them (`inherited`).
   */
  private live(ctx: ToolRunContext): ToolRunContext {
    ctx.answering?.("live");
    const options = { ...this.inherited, llm: this.liveLlm, historyLlm: this.options.historyLlm ?? this.agent.options.historyLlm };
    return { ...ctx, scope: { ...ctx.scope, options } };
  }

  /** The replayed turn's recorded call of `name` with these arguments (claimRecord): its result, or its error again; a call no record matches is refused. */
  private async recorded(name: string, t: Tool, args: Readonly<Record<string, unknown>>, ctx: ToolRunContext): Promise<unknown> {
    const turn = this.current;
    const { call, differs } = await this.claim(turn, name, t, args, ctx.hidden);
    if (call === undefined && differs === undefined) throw new Error(`resume: turn ${turn} calls tool/${name} more often than the saved run did`);
    if (call === undefined) throw this.diverge(turn, name, differs as string);
    ctx.answering?.("replayed", call.durationMs);
    if (call.error !== undefined) throw recordedFailure(call.error, call.errorKind, call.errorHint);
    return replayAnswer(call, ctx);
  }

  /**
   * A call of the cut turn: answered from its record when it is a call that had finished before
   * the cut; run live when the cut stopped it or the program had not reached it.
   */
  private async cutCall(name: string, t: Tool, args: Readonly<Record<string, unknown>>, signal: AbortSignal, ctx: ToolRunContext): Promise<unknown> {
    const turn = this.current;
    const { call, differs } = await this.claim(turn, name, t, args, ctx.hidden);
    if (call === undefined && differs !== undefined) throw this.diverge(turn, name, differs);
    if (call === undefined || !finished(call)) return t.run(args, signal, this.live(ctx));
    ctx.answering?.("replayed", call.durationMs);
    if (call.error !== undefined) throw recordedFailure(call.error, call.errorKind, call.errorHint);
    return replayAnswer(call, ctx);
  }

  /** The turn's first unclaimed record of this call (claimRecord), or where the nearest record's arguments differ. */
  private async claim(turn: number, name: string, t: Tool, args: Readonly<Record<string, unknown>>, hidden: readonly string[]): Promise<{ call?: ToolCallTrace; differs?: string }> {
    const calls: readonly ToolCallTrace[] = this.saved[turn - 1].toolCalls;
    let answered = this.answered.get(turn);
    if (answered === undefined) this.answered.set(turn, (answered = new Set()));
    const { index, differs } = await claimRecord(calls, answered, name, t.input, args, hidden);
    return index === undefined ? (differs === undefined ? {} : { differs }) : { call: calls[index] };
  }

  /** A call with other arguments than the saved run's: the next prompt's check ends the run with this, whatever the program made of the failed call. */
  private diverge(turn: number, name: string, differs: string): Error {
    this.diverged ??= `resume: replaying turn ${turn}, tool/${name} is called with a different :${differs} than in the saved run (a different context?)`;
    return new Error(this.diverged);
  }
}
