// The one seam between a run's turns and its next prompt: exactly one history strategy (the
// full history by default; `compressHistory: true` is shorthand for the interpreter-aware
// strategy with the run's view options) projects the full-history view of the turns, with the
// turn records beside it. The loop and resume's replay check both build prompts here, so a
// replayed prompt is built exactly as the original was.
import { messageProblem } from "../compaction/compact.js";
import { isStrategy, resolveStrategy, type StrategySpec } from "../compaction/registry.js";
import { lookupPrice } from "../compaction/prices.js";
import { jsonProblem } from "../compaction/result.js";
import type { CompactionResult, Json, Strategy } from "../compaction/types.js";
import { fullView } from "../history/full.js";
import { defaultStrategies } from "../history/registry.js";
import { forClientCache, INTERPRETER_STRATEGY } from "../history/strategy.js";
import { mergeViewOptions } from "../trace/view-settings.js";
import type { ViewInput, ViewOptions, ViewStats } from "../history/view.js";
import { wellFormed } from "../lisp/index.js";
import { messageText } from "../llm/messages.js";
import type { ChatMessage, Llm, LlmRequest, LlmResponse, TextMessage } from "../llm/types.js";
import type { Turn, TurnCompaction } from "../trace/trace.js";
import { providerOf } from "./telemetry.js";
import type { InheritableOptions } from "./types.js";

export type HistoryStrategy = Strategy<Json, ViewInput>;

/**
 * Strategies the host built itself: given the turn records to read, never the run's own, whose
 * trace and saved state a strategy that changed them would rewrite (the built-in ones only read).
 */
const hostStrategies = new WeakSet<object>();

/** Each finished turn's copy for host strategies, made once: copied at every prompt, 50 turns of 1,000-row results took 6x the run. */
const turnCopies = new WeakMap<Turn, Turn>();

/** The records a host strategy reads: copies, which it may change without changing the run's (its own later views aside). */
function hostRecords(input: ViewInput): ViewInput {
  const turns = input.turns.map((t) => {
    let copy = turnCopies.get(t);
    if (copy === undefined) turnCopies.set(t, (copy = structuredClone(t)));
    return copy;
  });
  return { ...input, turns };
}

/**
 * The shortest prefix the client's model caches (its price's `minTokens`, prices.ts), by the model
 * its name gives (`anthropic:claude-haiku-4-5`: 4,096; a replay's, the recorded client's name,
 * `standsFor`), or undefined for a model no table knows.
 */
export function clientCacheMinimum(llm: Pick<Llm, "name" | "standsFor"> | undefined): number | undefined {
  const name = typeof llm?.standsFor === "string" ? llm.standsFor : llm?.name;
  const model = typeof name === "string" ? providerOf(name).model : undefined;
  const cache = model === undefined ? undefined : lookupPrice(model)?.cache;
  return cache === undefined || cache.kind === "none" ? undefined : cache.minTokens;
}

/** The run's one strategy: `history` if set, else the interpreter strategy for `compressHistory`, else the full history. Throws on an unknown name or invalid options. */
export function historyStrategy(options: Pick<InheritableOptions, "history" | "compressHistory" | "printlnHistoryLimit" | "view" | "llm">): HistoryStrategy {
  if (options.history !== undefined) {
    const history = options.history as Strategy | StrategySpec | string;
    // The client's cache lays out a strategy given by name or spec, as it does the view (withClientCache).
    if (!isStrategy(history)) return resolveStrategy(forClientCache(history, options.llm?.cacheModel, clientCacheMinimum(options.llm)), defaultStrategies);
    const own = resolveStrategy(history, defaultStrategies);
    hostStrategies.add(own);
    return own;
  }
  if (options.compressHistory === true) return defaultStrategies.create({ name: INTERPRETER_STRATEGY, options: interpreterOptions(options) });
  return defaultStrategies.create("full");
}

/** The interpreter strategy's options from the run's view options (only those set; compressHistory is the strategy itself). */
function interpreterOptions(options: Pick<InheritableOptions, "printlnHistoryLimit" | "view">): Record<string, unknown> {
  const { compressHistory: _, ...given } = mergeViewOptions(options);
  return given;
}

/** The strategy as traces and saved states record it. */
export const strategySpec = (s: Pick<Strategy, "name" | "options">): { name: string; options: Record<string, unknown> } => ({ name: s.name, options: { ...s.options } });

// A new object per turn record: records are handed to hosts, and one shared array would be every turn's.
const noViewStats = (): ViewStats => ({ turnsCompressed: 0, turnsFull: [], definitionsShown: 0, printlnShown: 0, printlnDropped: 0, toolCallsShown: 0 });

function isViewStats(x: unknown): x is ViewStats {
  const r = x as Partial<ViewStats> | undefined;
  return typeof r === "object" && r !== null && typeof r.turnsCompressed === "number" && Array.isArray(r.turnsFull);
}

/**
 * A projection the run cannot send or keep: messages that are not a prompt (the trace holds
 * system, user and assistant text, and is read back checked), or a state that is not JSON. The
 * message says what and where (`a state that is not JSON (state.seen is a Map)`), never the text or the values.
 */
export class StrategyResultError extends Error {
  override readonly name = "StrategyResultError";
}

const PROMPT_ROLES = new Set(["system", "user", "assistant"]);

/** What makes `messages` no prompt, or null: a message compact() would refuse (messageProblem, the one check of a message's shape), or one of a role no prompt holds. */
function promptProblem(messages: unknown): string | null {
  if (!Array.isArray(messages)) return "messages that are not a list";
  if (messages.length === 0) return "no messages";
  for (const [i, m] of messages.entries()) {
    const role: unknown = typeof m === "object" && m !== null ? (m as { role?: unknown }).role : undefined;
    if (typeof role === "string" && !PROMPT_ROLES.has(role)) return `message ${i + 1} with role ${JSON.stringify(role.slice(0, 40))} (a prompt holds system, user and assistant messages)`;
    const p = messageProblem(m);
    if (p !== undefined) return `message ${i + 1} that ${p.problem}`;
  }
  return null;
}

/** The statistics a run charges and replays (what the summarizer spent), which a result must give. */
const SPEND_STATS = ["llmCalls", "llmInputTokens", "llmOutputTokens"] as const;
/** The other statistics, checked when given. */
const OTHER_STATS = ["messagesIn", "tokensIn", "messagesOut", "tokensOut", "durationMs", "compressionRatio"] as const;

const isCount = (x: unknown): boolean => typeof x === "number" && Number.isFinite(x) && x >= 0;

/** What makes a projection's result other than a CompactionResult the run can charge and keep (its messages and state are checked apart), or null. */
function resultProblem(result: unknown): string | null {
  if (typeof result !== "object" || result === null || Array.isArray(result)) return `a result that is not an object (${result === null ? "null" : Array.isArray(result) ? "a list" : typeof result}; expected { messages, state, stats, events })`;
  const { stats, events } = result as { stats?: unknown; events?: unknown };
  if (typeof stats !== "object" || stats === null || Array.isArray(stats)) return `stats that are not an object (${stats === null ? "null" : Array.isArray(stats) ? "a list" : typeof stats}; expected CompactionStats)`;
  for (const key of SPEND_STATS) {
    const v = (stats as Record<string, unknown>)[key];
    if (!isCount(v)) return `${v === undefined ? `stats without ${key}` : `stats.${key} of ${typeof v === "number" ? String(v) : `type ${typeof v}`}`} (expected a count: what the strategy's own model calls spent, 0 for none)`;
  }
  for (const key of OTHER_STATS) {
    const v = (stats as Record<string, unknown>)[key];
    if (v !== undefined && !isCount(v)) return `stats.${key} of ${typeof v === "number" ? String(v) : `type ${typeof v}`} (expected a non-negative number)`;
  }
  if (!Array.isArray(events)) return `events that are not a list (${events === null ? "null" : typeof events}; expected CompactionEvent[], [] for none)`;
  for (const [i, e] of events.entries()) {
    if (typeof e !== "object" || e === null || typeof (e as { kind?: unknown }).kind !== "string") return `event ${i + 1} that is not one (expected { kind, detail? })`;
  }
  return null;
}

export interface BuiltPrompt {
  messages: TextMessage[];
  /** The full-history view the strategy projected (what the prompt is measured against). */
  full: readonly TextMessage[];
  /** The interpreter strategy's view statistics; zeros for strategies that have none. */
  view: ViewStats;
  compaction: TurnCompaction;
}

export interface BuildContext {
  readonly state: Json | undefined;
  /** The summarizer's model, for strategies that call one. */
  readonly llm?: Llm;
  readonly signal?: AbortSignal;
}

/** The next prompt: the strategy's projection of the full-history view, with what it did. */
export async function buildPrompt(input: ViewInput, viewOptions: ViewOptions, strategy: HistoryStrategy, context: BuildContext): Promise<BuiltPrompt> {
  const full = fullView(input, viewOptions);
  const calls: string[] = [];
  const llm = context.llm === undefined ? undefined : noting(context.llm, calls);
  // The strategy's own copies: the prompt is measured against the full history's messages after.
  const result: CompactionResult = await strategy.project(
    { messages: full.messages.map((m) => ({ ...m })), records: hostStrategies.has(strategy) ? hostRecords(input) : input },
    context.state === undefined ? strategy.initialState() : context.state,
    { ...(llm === undefined ? {} : { llm }), ...(context.signal === undefined ? {} : { signal: context.signal }) },
  );
  const wrong = resultProblem(result) ?? promptProblem(result.messages);
  if (wrong !== null) throw new StrategyResultError(wrong);
  // Strategies keep the stored messages' text; summaries they add are text too. Host text may hold
  // half of a surrogate pair (a printed title cut inside an emoji, a tool's error, the mission's
  // {{placeholder}}): the model gets a replacement character, as a provider's JSON parser refuses it raw.
  // Each message is the turn's own: a strategy that rewrote the objects it gave on a later turn
  // rewrote what the trace says this turn sent.
  const messages = result.messages.map((m) => ({ ...m, content: wellFormed(typeof m.content === "string" ? m.content : messageText(m)) })) as TextMessage[];
  // Kept in the trace and the saved state as JSON, which are read back checked.
  const notJson = jsonProblem(result.state);
  if (notJson !== null) throw new StrategyResultError(`a state that is not JSON (${notJson})`);
  const { durationMs: _wallTime, ...stats } = result.stats;
  const compaction: TurnCompaction = { stats, events: [...result.events], state: result.state };
  if (calls.length > 0) compaction.calls = calls;
  return { messages, full: full.messages, view: isViewStats(result.details) ? result.details : noViewStats(), compaction };
}

/**
 * Where the strategy says its prompt stays stable (`Strategy.cacheBreakpoints`), for clients that
 * mark a cache: what it throws is rethrown, and a result that is not a list is a StrategyResultError.
 */
export function cacheBreakpointsOf(strategy: Pick<Strategy, "cacheBreakpoints">, messages: readonly ChatMessage[]): number[] | undefined {
  const marks: unknown = strategy.cacheBreakpoints?.(messages);
  if (marks === undefined) return undefined;
  // Indices that are no message's are left out where the marks are placed (cacheMarks).
  if (!Array.isArray(marks)) throw new StrategyResultError("cache breakpoints that are not a list of message indices");
  return marks as number[];
}

/** The summarizer, with each reply noted (for the trace). */
function noting(llm: Llm, calls: string[]): Llm {
  return {
    name: llm.name,
    async complete(request: LlmRequest): Promise<LlmResponse> {
      // What it is asked about holds the turns' host text as the prompt does.
      const messages = request.messages.map((m) => {
        const sent = typeof m.content === "string" ? wellFormed(m.content) : m.content;
        return sent === m.content ? m : { ...m, content: sent };
      });
      const response = await llm.complete({ ...request, messages });
      if (typeof response?.content === "string") calls.push(response.content);
      return response;
    },
  };
}

/** A summarizer that answers from recorded replies (their text, or the response with its usage), in order (a replayed run asks nothing twice). */
export function recordedSummarizer(replies: ReadonlyArray<string | LlmResponse>, name = "recorded-summaries"): Llm & { readonly left: number; readonly overrun: number } {
  let next = 0;
  let overrun = 0;
  return {
    name,
    get left() {
      return replies.length - next;
    },
    /** Requests made after the recorded replies ran out. */
    get overrun() {
      return overrun;
    },
    complete(): Promise<LlmResponse> {
      if (next >= replies.length) {
        overrun++;
        return Promise.reject(new Error("resume: the history strategy asked for more summaries than the saved run recorded"));
      }
      const reply = replies[next++];
      return Promise.resolve(typeof reply === "string" ? { content: reply } : reply);
    },
  };
}
