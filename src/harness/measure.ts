// Replays a transcript request by request under a strategy: the prompt for assistant message j
// is the strategy's projection of messages[0..j-1], its state carried from the request before,
// as an app or the proxy would send it. Measures tokens, cost under a prefix cache, cache breaks,
// what the compaction itself spent, and whether each probe fact is still in the prompt that needs it.
import { compact } from "../compaction/compact.js";
import { requestCost, sharedPrefixTokens, type PriceModel } from "../compaction/cost.js";
import type { StrategyRegistry, StrategySpec } from "../compaction/registry.js";
import { defaultStrategies } from "../history/registry.js";
import { messageTokens, promptTokens, TOKENS_PER_REPLY } from "../compaction/tokens.js";
import type { CompactionResult, Json } from "../compaction/types.js";
import { messageText, toolCallText } from "../llm/messages.js";
import type { ChatMessage, Llm } from "../llm/types.js";
import type { Transcript } from "./transcript.js";

export interface Metrics {
  requests: number;
  /** Prompt tokens summed over every request, and the largest prompt. */
  inputTokens: number;
  peakPrompt: number;
  /** Cost of the requests (input and the recorded replies) with a prefix cache, in dollars. */
  cost: number;
  /** Requests whose prompt does not start with the whole previous prompt (the cache breaks early). */
  rewrites: number;
  /** LLM calls and tokens the compaction itself made, and the time it took. */
  llmCalls: number;
  llmTokens: number;
  compactionMs: number;
  /** Probe facts needed at a request, and how many of those were still in its prompt. */
  probesNeeded: number;
  probesKept: number;
}

export const emptyMetrics = (): Metrics => ({ requests: 0, inputTokens: 0, peakPrompt: 0, cost: 0, rewrites: 0, llmCalls: 0, llmTokens: 0, compactionMs: 0, probesNeeded: 0, probesKept: 0 });

export function addMetrics(into: Metrics, m: Metrics): void {
  for (const k of Object.keys(into) as Array<keyof Metrics>) into[k] = k === "peakPrompt" ? Math.max(into[k], m[k]) : into[k] + m[k];
}

/** How the corpora README says a probe's value is found: whole, case-insensitive, not inside a longer token. */
export function probePattern(value: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9])${value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?![A-Za-z0-9])`, "i");
}

export function holds(messages: readonly ChatMessage[], re: RegExp): boolean {
  for (const m of messages) if (re.test(messageText(m)) || (m.tool_calls !== undefined && re.test(toolCallText(m)))) return true;
  return false;
}

/** One request of a transcript: its prompt's tokens, and whether the cache broke early. */
export interface RequestPoint {
  tokens: number;
  cacheBreak: boolean;
}

export interface MeasureOptions {
  price: PriceModel;
  /** The summarizer model, for strategies that call one (default: none, extractive summaries). */
  llm?: Llm;
  model?: string;
  /** Receives each request's point (charts). */
  onRequest?: (point: RequestPoint) => void;
  /** Where strategies given by name are found (default: every shipped strategy). */
  registry?: StrategyRegistry;
  /** Receives each request as sent (the recorded reply's index, the prompt, the reply's tokens, the compaction's events and statistics), for pricing under other cache models. */
  onPrompt?: (prompt: SentPrompt) => void;
}

export interface SentPrompt {
  readonly index: number;
  readonly messages: readonly ChatMessage[];
  readonly outputTokens: number;
  readonly events: CompactionResult["events"];
  readonly stats: CompactionResult["stats"];
}

/** The metrics of one transcript under one strategy. */
export async function measure(t: Transcript, spec: StrategySpec | string, options: MeasureOptions): Promise<Metrics> {
  const strategy = (options.registry ?? defaultStrategies).create(spec);
  const m = emptyMetrics();
  const needs = new Map<number, RegExp[]>();
  for (const p of t.probes ?? []) for (const j of p.needed_at) needs.set(j, [...(needs.get(j) ?? []), probePattern(p.value)]);
  let state: Json | undefined;
  let previous: ChatMessage[] | null = null;
  for (let j = 1; j < t.messages.length; j++) {
    if (t.messages[j].role !== "assistant") continue;
    const stored = t.messages.slice(0, j);
    const started = performance.now();
    const records = t.recordsAt?.(j);
    const result = await compact(stored, strategy, {
      ...(state === undefined ? {} : { state }),
      ...(records === undefined ? {} : { records }),
      ...(options.llm === undefined ? {} : { llm: options.llm }),
      ...(options.model === undefined ? {} : { model: options.model }),
    });
    m.compactionMs += performance.now() - started;
    state = result.state;
    const sent = result.messages;
    const tokens = promptTokens(sent);
    const cached = previous === null ? 0 : sharedPrefixTokens(previous, sent);
    // Every message of the previous prompt is still at the front, or the cache breaks early.
    const cacheBreak = previous !== null && cached < promptTokens(previous) - TOKENS_PER_REPLY;
    if (cacheBreak) m.rewrites++;
    options.onRequest?.({ tokens, cacheBreak });
    options.onPrompt?.({ index: j, messages: sent, outputTokens: messageTokens(t.messages[j]), events: result.events, stats: result.stats });
    m.requests++;
    m.inputTokens += tokens;
    m.peakPrompt = Math.max(m.peakPrompt, tokens);
    m.cost += requestCost(options.price, { inputTokens: tokens, cachedTokens: cached, outputTokens: messageTokens(t.messages[j]), cacheWriteTokens: tokens - cached });
    m.llmCalls += result.stats.llmCalls;
    m.llmTokens += result.stats.llmInputTokens + result.stats.llmOutputTokens;
    for (const re of needs.get(j) ?? []) {
      m.probesNeeded++;
      if (holds(sent, re)) m.probesKept++;
    }
    previous = sent;
  }
  return m;
}

