// Replays a transcript request by request under a strategy: the prompt for assistant message j
// is the strategy's projection of messages[0..j-1], its state carried from the request before,
// as an app or the proxy would send it. Measures tokens, cost under a prefix cache, cache breaks,
// what the compaction itself spent, and whether each probe fact is still in the prompt that needs it.
import { cacheBreakpointsOf } from "../agent/history.js";
import { compact } from "../compaction/compact.js";
import { createMeter, outputTokens, requestPrice, sentPrompt, type Prompt } from "../compaction/measure.js";
import { lookupPrice, modelPrice, type ModelPrice, type PriceTable } from "../compaction/prices.js";
import type { StrategyRegistry, StrategySpec } from "../compaction/registry.js";
import { taskIndex } from "../compaction/messages.js";
import { knownContextLimit } from "../compaction/models.js";
import { defaultStrategies } from "../history/registry.js";
import { boundedCall } from "../compaction/summarizers/llm.js";
import { promptTokens } from "../compaction/tokens.js";
import type { CompactionResult, Json, Strategy } from "../compaction/types.js";
import { forClientCache } from "../history/strategy.js";
import { mustBe } from "../llm/args.js";
import { MAX_TIMER_MS } from "../llm/errors.js";
import { cacheMarks, messageText, toolCallText } from "../llm/messages.js";
import type { ChatMessage, Llm, TextMessage } from "../llm/types.js";
import { showHidden } from "../trace/redact.js";
import { nextReply, type Transcript } from "./transcript.js";

export interface Metrics {
  requests: number;
  /** Prompt tokens summed over every request, and the largest prompt. */
  inputTokens: number;
  peakPrompt: number;
  /**
   * Requests whose prompt is larger than the conversations' model's context window (the first
   * price model's, when known): no app could have sent them, yet they are priced as if sent.
   */
  overWindow: number;
  /**
   * Dollars under the first price model: the requests (input under its cache rules, and the
   * recorded replies) plus every compaction LLM call (uncached input and output).
   */
  cost: number;
  /** The same under each price model of the run, in order (cost is costs[0]). */
  costs: number[];
  /** Input tokens the first model's cache served. */
  cachedTokens: number;
  /** Requests whose prompt does not start with the whole previous prompt (the cache breaks early). */
  rewrites: number;
  /** LLM calls and tokens the compaction itself made, and the time it took. */
  llmCalls: number;
  llmTokens: number;
  compactionMs: number;
  /** Requests whose prompt is smaller than the stored conversation (the strategy did something). */
  compacted: number;
  /** Requests at which the compaction tried a summary and it failed (the prompt went out without it). */
  summaryFailures: number;
  /**
   * Probe facts needed at a request, and how many of those were still in its prompt outside the
   * system messages. Values of fewer than 3 characters and values the task states are not
   * counted here (they are in `short*` and `taskStated`).
   */
  probesNeeded: number;
  probesKept: number;
  /** The same by distance of the value's last mention before the request: ≤ 6, 7–20, > 20 messages back. */
  nearNeeded: number;
  nearKept: number;
  midNeeded: number;
  midKept: number;
  farNeeded: number;
  farKept: number;
  /** Values of 1–2 characters (a lone "2" matches too easily to be evidence of retention). */
  shortNeeded: number;
  shortKept: number;
  /** Probe needs left out because the task message states the value. */
  taskStated: number;
}

export const emptyMetrics = (): Metrics => ({
  requests: 0,
  inputTokens: 0,
  peakPrompt: 0,
  overWindow: 0,
  cost: 0,
  costs: [],
  cachedTokens: 0,
  rewrites: 0,
  llmCalls: 0,
  llmTokens: 0,
  compactionMs: 0,
  compacted: 0,
  summaryFailures: 0,
  probesNeeded: 0,
  probesKept: 0,
  nearNeeded: 0,
  nearKept: 0,
  midNeeded: 0,
  midKept: 0,
  farNeeded: 0,
  farKept: 0,
  shortNeeded: 0,
  shortKept: 0,
  taskStated: 0,
});

export function addMetrics(into: Metrics, m: Metrics): void {
  for (const k of Object.keys(into) as Array<keyof Metrics>) {
    if (k === "costs") into.costs = m.costs.map((c, i) => c + (into.costs[i] ?? 0));
    else into[k] = k === "peakPrompt" ? Math.max(into[k], m[k]) : into[k] + m[k];
  }
}

/** Distance bands of a probe's last mention before the request that needs it. */
export const NEAR_MAX = 6;
export const MID_MAX = 20;
/** Values shorter than this are reported apart. */
export const SHORT_VALUE = 3;

/** How the corpora README says a probe's value is found: whole, case-insensitive, not inside a longer token. */
export function probePattern(value: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9])${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9])`, "i");
}

/** Whether a stored message is the system prompt: a system message, or OpenAI's developer message that newer models take in its place. */
const isSystemPrompt = (m: ChatMessage): boolean => m.role === "system" || (m.role as string) === "developer";

/** Whether a message says the value (content or tool-call arguments). */
function says(m: ChatMessage, re: RegExp): boolean {
  return re.test(messageText(m)) || re.test(toolCallText(m));
}

/**
 * Whether a prompt holds the value outside the conversation's own system prompt messages (a system
 * prompt naming "Cambridge" keeps nothing). A summary a strategy sends as a system message
 * counts: it is not one of the stored messages.
 */
export function holds(messages: readonly ChatMessage[], re: RegExp, systems: ReadonlySet<ChatMessage> = new Set()): boolean {
  for (const m of messages) if (!systems.has(m) && says(m, re)) return true;
  return false;
}

export type Band = "near" | "mid" | "far" | "short";

interface Need {
  re: RegExp;
  band: Band;
  /** Messages from the value's last mention to the request. */
  distance: number;
}

/** A probe need at a request, judged: its band, how far back the value was last said, whether the prompt holds it. */
export interface ProbeOutcome {
  readonly band: Band;
  readonly distance: number;
  readonly kept: boolean;
}

/** A probe's needs by request, banded; the ones the task states are only counted. */
function probeNeeds(t: Transcript, m: Metrics): Map<number, Need[]> {
  const needs = new Map<number, Need[]>();
  const task = taskIndex(t.messages);
  for (const p of t.probes ?? []) {
    const re = probePattern(p.value);
    const mentions = p.mentions ?? [p.introduced_at];
    const scored = new Set<number>();
    for (const at of p.needed_at) {
      // A need at a user or tool message is scored once, at the next reply.
      const j = nextReply(t.messages, at);
      if (scored.has(j)) continue;
      scored.add(j);
      if (task >= 0 && task < j && says(t.messages[task], re)) {
        m.taskStated++;
        continue;
      }
      let last = p.introduced_at;
      for (const i of mentions) if (i < j && i > last) last = i;
      const distance = j - last;
      const band: Band = p.value.length < SHORT_VALUE ? "short" : distance <= NEAR_MAX ? "near" : distance <= MID_MAX ? "mid" : "far";
      const list = needs.get(j);
      if (list === undefined) needs.set(j, [{ re, band, distance }]);
      else list.push({ re, band, distance });
    }
  }
  return needs;
}

function count(m: Metrics, band: Band, kept: boolean): void {
  const k = kept ? 1 : 0;
  if (band === "short") {
    m.shortNeeded++;
    m.shortKept += k;
    return;
  }
  m.probesNeeded++;
  m.probesKept += k;
  if (band === "near") {
    m.nearNeeded++;
    m.nearKept += k;
  } else if (band === "mid") {
    m.midNeeded++;
    m.midKept += k;
  } else {
    m.farNeeded++;
    m.farKept += k;
  }
}

/**
 * A reference prompt no strategy should fall below: the floor a report shows beside the
 * strategies (`system+last`: the system messages and the last message; `system+task+last`:
 * also the task).
 */
export interface Baseline {
  readonly baseline: "system+last" | "system+task+last";
}

export const BASELINES: readonly Baseline[] = [{ baseline: "system+last" }, { baseline: "system+task+last" }];

function baselinePrompt(b: Baseline, stored: readonly ChatMessage[]): ChatMessage[] {
  const task = b.baseline === "system+task+last" ? taskIndex(stored) : -1;
  return stored.filter((m, i) => isSystemPrompt(m) || i === task || i === stored.length - 1);
}

export const isBaseline = (s: unknown): s is Baseline => typeof s === "object" && s !== null && "baseline" in s;

/** One request of a transcript: its prompt's tokens, and whether the cache broke early. */
export interface RequestPoint {
  tokens: number;
  cacheBreak: boolean;
}

export interface MeasureOptions {
  /** Price models by model name (the first is the conversation's model: its context limit, and `cost`). */
  models: readonly string[];
  /** The price table the names are looked up in (default: the built-in one). */
  prices?: PriceTable;
  /** The model the compaction's LLM calls go to, when not the conversation's (their spend is priced by it). */
  summaryModel?: string;
  /** The summarizer model, for strategies that call one (default: none, extractive summaries). */
  llm?: Llm;
  model?: string;
  /** Receives each request's point (charts). */
  onRequest?: (point: RequestPoint) => void;
  /** Where strategies given by name are found (default: every shipped strategy). */
  registry?: StrategyRegistry;
  /**
   * Most milliseconds one compaction call may take (default STRATEGY_TIMEOUT_MS, or more for a
   * strategy whose summary calls may take longer): past it the call's signal fires and it fails
   * as a StrategyFailure, so a strategy that never settles ends its transcript, not the run.
   */
  timeoutMs?: number;
  /** Receives each request as sent (the recorded reply's index, the prompt, the reply's tokens, the compaction's events and statistics), for pricing under other cache models. */
  onPrompt?: (prompt: SentPrompt) => void;
}

export interface SentPrompt {
  readonly index: number;
  readonly messages: readonly ChatMessage[];
  /** The messages that end with a cache breakpoint, as the Anthropic client marks them: the system prompt's end, the strategy's marks and the last message. */
  readonly breakpoints?: readonly number[];
  readonly outputTokens: number;
  /** Absent for the baselines, which are no strategy. */
  readonly events?: CompactionResult["events"];
  readonly stats?: CompactionResult["stats"];
  /** The probe needs at this request as the metrics count them (task-stated values left out). */
  readonly probes: readonly ProbeOutcome[];
}

/** A compaction call's deadline by default: several summary calls' (120 s each) with room to spare. */
export const STRATEGY_TIMEOUT_MS = 600_000;

/**
 * The deadline of one compaction call under `spec`: `given`, else STRATEGY_TIMEOUT_MS, or longer
 * for a strategy whose own bounded calls may take longer (its summary attempts and a goal
 * detector's call, each up to its summaryTimeoutMs): a slow summarizer it was told to wait for
 * must not fail here first.
 */
function deadlineOf(spec: StrategySpec | string, registry: StrategyRegistry, given: number | undefined): number {
  if (given !== undefined) return given;
  const name = typeof spec === "string" ? spec : spec.name;
  const o: Record<string, unknown> = { ...registry.list().find((s) => s.name === name)?.defaults, ...(typeof spec === "string" ? {} : spec.options) };
  const each = o.summaryTimeoutMs;
  const attempts = o.maxAttempts;
  return typeof each === "number" && typeof attempts === "number" ? Math.min(MAX_TIMER_MS, Math.max(STRATEGY_TIMEOUT_MS, (attempts + 2) * each)) : STRATEGY_TIMEOUT_MS;
}

/** A deadline setTimeout can keep: past MAX_TIMER_MS it fires at once, failing every call. */
export function checkTimeout(ms: unknown): void {
  if (ms !== undefined && !(Number.isInteger(ms) && (ms as number) >= 1 && (ms as number) <= MAX_TIMER_MS)) throw new TypeError(mustBe("compaction harness: timeoutMs", `a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`, ms));
}

/** The metrics of one transcript under one strategy. */
export async function measure(t: Transcript, spec: StrategySpec | string | Baseline, options: MeasureOptions): Promise<Metrics> {
  checkTimeout(options.timeoutMs);
  const registry = options.registry ?? defaultStrategies;
  const m = emptyMetrics();
  // One cost per price model even when the transcript has no request: summed into totals, a
  // shorter list would cut theirs short.
  m.costs = options.models.map(() => 0);
  const needs = probeNeeds(t, m);
  // A model nobody knows has no window to pass (contextLimit's small fallback is a guess).
  const window = knownContextLimit(options.models[0]) ?? Infinity;
  const systems = new Set(t.messages.filter(isSystemPrompt));
  const meters = options.models.map((name) => createMeter(name, options.prices));
  // A summary model is a real model: one a table of cache models lacks is priced from the built-in table, not by the fallback guess.
  const summaryModel = options.summaryModel;
  const summaryPrices = options.models.map((name) => (summaryModel === undefined ? modelPrice(name, options.prices) : (lookupPrice(summaryModel, options.prices) ?? modelPrice(summaryModel))));
  // Each price model's client runs the strategy laid out for its cache (forClientCache): the first
  // model's run gives every metric; a model whose client runs it otherwise is priced on its own run.
  const specs = meters.map(({ price: { cache } }) => (isBaseline(spec) ? spec : forClientCache(spec, cache.kind === "breakpoint" ? "breakpoint" : "token-prefix", cache.kind === "none" ? undefined : cache.minTokens, cache.kind === "breakpoint" ? cache.write : undefined, cache.kind === "breakpoint" ? cache.maxBreakpoints : undefined)));
  const own = specs.map((s) => JSON.stringify(s) === JSON.stringify(specs[0]));
  await replay(t, specs[0], registry, options, (j, stored, sent, result, prompt) => {
    const tokens = promptTokens(sent);
    if (tokens < promptTokens(stored)) m.compacted++;
    if (result?.events.some((e) => e.kind === "summary_failed") === true) m.summaryFailures++;
    const reply = outputTokens(t.messages[j]);
    const measured = meters.map((meter, k) => (own[k] ? meter.add(sentPrompt(prompt.messages, prompt.breakpoints, meter.price), reply) : undefined));
    const costs = measured.map((x, k) => (x === undefined ? 0 : x.cost + llmCost(result, summaryPrices[k])));
    const cacheBreak = measured[0]?.cacheBreak ?? false;
    if (cacheBreak) m.rewrites++;
    const probes = (needs.get(j) ?? []).map((need) => ({ band: need.band, distance: need.distance, kept: holds(sent, need.re, systems) }));
    for (const p of probes) count(m, p.band, p.kept);
    options.onRequest?.({ tokens, cacheBreak });
    options.onPrompt?.({ index: j, messages: sent, outputTokens: reply, breakpoints: prompt.breakpoints, probes, ...(result === undefined ? {} : { events: result.events, stats: result.stats }) });
    m.requests++;
    m.inputTokens += tokens;
    m.peakPrompt = Math.max(m.peakPrompt, tokens);
    if (tokens > window) m.overWindow++;
    m.cachedTokens += measured[0]?.cachedTokens ?? 0;
    m.costs = costs.map((c, k) => c + (m.costs[k] ?? 0));
    m.llmCalls += result?.stats.llmCalls ?? 0;
    m.llmTokens += (result?.stats.llmInputTokens ?? 0) + (result?.stats.llmOutputTokens ?? 0);
  }, m);
  for (let k = 1; k < meters.length; k++) {
    if (own[k]) continue;
    let cost = 0;
    await replay(t, specs[k], registry, options, (j, _stored, _sent, result, prompt) => {
      cost += meters[k].add(sentPrompt(prompt.messages, prompt.breakpoints, meters[k].price), outputTokens(t.messages[j])).cost + llmCost(result, summaryPrices[k]);
    });
    m.costs[k] = cost;
  }
  m.cost = m.costs[0] ?? 0;
  return m;
}

/**
 * Replays the transcript's requests under `spec`: for assistant message j, the projection of
 * messages[0..j-1] with the state carried from the request before, as sent (with the strategy's
 * cache breakpoints and the last message marked). `into` collects the compaction's time.
 */
async function replay(t: Transcript, spec: StrategySpec | string | Baseline, registry: StrategyRegistry, options: MeasureOptions, each: (j: number, stored: readonly ChatMessage[], sent: readonly ChatMessage[], result: CompactionResult | undefined, prompt: Prompt) => void, into?: Metrics): Promise<void> {
  const strategy = isBaseline(spec) ? undefined : registry.create(spec);
  const deadline = isBaseline(spec) ? 0 : deadlineOf(spec, registry, options.timeoutMs);
  // A PTC-Lisp run's turn records hold hidden values' stand-ins unshown (a failed turn's feedback
  // lists its calls' arguments); the agent shows them in every prompt it sends, and so is priced.
  const shown = t.recordsAt === undefined ? (ms: ChatMessage[]) => ms : (ms: ChatMessage[]) => (ms.every((m) => typeof m.content === "string") ? showHidden(ms as TextMessage[]) : ms);
  let state: Json | undefined;
  for (let j = 1; j < t.messages.length; j++) {
    if (t.messages[j].role !== "assistant") continue;
    const stored = t.messages.slice(0, j);
    const started = performance.now();
    const records = t.recordsAt?.(j);
    let result: CompactionResult | undefined;
    try {
      result =
        strategy === undefined
          ? undefined
          : await boundedCall(
              (signal) =>
                compact(stored, strategy, {
                  ...(state === undefined ? {} : { state }),
                  ...(records === undefined ? {} : { records }),
                  ...(options.llm === undefined ? {} : { llm: options.llm }),
                  ...(options.model === undefined ? {} : { model: options.model }),
                  signal,
                }),
              deadline,
              undefined,
              `strategy ${strategy.name}`,
            );
    } catch (e) {
      throw failedAt(strategy, t, j, e);
    }
    if (into !== undefined) into.compactionMs += performance.now() - started;
    state = result?.state;
    const sent = shown(result === undefined ? baselinePrompt(spec as Baseline, stored) : result.messages);
    // Marked as the Anthropic client marks them: the system prompt's end, the strategy's marks, the last message.
    let marks: number[] | undefined;
    try {
      marks = strategy === undefined ? undefined : cacheBreakpointsOf(strategy, sent);
    } catch (e) {
      throw failedAt(strategy, t, j, e);
    }
    each(j, shown(stored), sent, result, { messages: sent, breakpoints: [...cacheMarks({ messages: sent, ...(marks === undefined ? {} : { cacheBreakpoints: marks }) })] });
  }
}

/** A strategy's throw at the request for message `j` of `t`, named (see StrategyFailure). */
function failedAt(strategy: Strategy | undefined, t: Transcript, j: number, e: unknown): StrategyFailure {
  return new StrategyFailure(`strategy ${strategy?.name ?? "?"} failed on transcript ${t.id} at the request for message ${j}: ${thrownText(e)}`, { cause: e });
}

/**
 * A strategy threw while a transcript was replayed: which one, on which transcript, at which
 * request, and what it threw (the thrown value is the cause). Without them a run over a corpus
 * stopped with the strategy's bare error ("Cannot read properties of undefined") and no way to
 * find the conversation that provoked it.
 */
export class StrategyFailure extends Error {
  override readonly name = "StrategyFailure";
}

/** A thrown value as text, whatever it is (an Error whose message getter throws, an object String() cannot convert). */
function thrownText(e: unknown): string {
  try {
    return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  } catch {
    return "a thrown value that cannot be read";
  }
}

/** The compaction's own calls, paid at the model's uncached prices: whole cost, not just the prompt's. */
function llmCost(result: CompactionResult | undefined, price: ModelPrice): number {
  const llmIn = result?.stats.llmInputTokens ?? 0;
  const llmOut = result?.stats.llmOutputTokens ?? 0;
  return llmIn + llmOut === 0 ? 0 : requestPrice(price, { inputTokens: llmIn, cachedTokens: 0, outputTokens: llmOut });
}
