// The price model: what a request costs with a provider's prefix cache, and whether a
// compaction pays for itself. Prices are in dollars per million tokens.
import type { ChatMessage } from "../llm/types.js";
import { messageTokens } from "./tokens.js";

/** How a provider bills its prefix cache, as multiples of the input price. */
export interface CacheMultipliers {
  /** Price of a cached input token (Anthropic 0.1, OpenAI 0.1 to 0.5, Gemini 0.25). */
  readonly read: number;
  /** Price of writing a token into the cache (Anthropic 1.25 for 5 minutes, 2 for an hour; others 1: no surcharge). */
  readonly write: number;
}

export const PROVIDER_CACHE: Readonly<Record<string, CacheMultipliers>> = {
  openai: { read: 0.1, write: 1 },
  anthropic: { read: 0.1, write: 1.25 },
  "anthropic-1h": { read: 0.1, write: 2 },
  gemini: { read: 0.25, write: 1 },
  deepseek: { read: 0.1, write: 1 },
  none: { read: 1, write: 1 },
};

export interface PriceModel {
  /** Uncached input, per million tokens. */
  readonly input: number;
  /** Input served from the prefix cache. */
  readonly cachedRead: number;
  /** Input written into the cache (the first time a prefix is sent). */
  readonly cacheWrite: number;
  readonly output: number;
}

/** A price model from list prices and a provider's cache multipliers. */
export function priceModel(input: number, output: number, provider: string = "openai"): PriceModel {
  const m = PROVIDER_CACHE[provider];
  if (m === undefined) throw new Error(`compaction: unknown provider "${provider}" for cache prices (known: ${Object.keys(PROVIDER_CACHE).join(", ")})`);
  return { input, cachedRead: input * m.read, cacheWrite: input * m.write, output };
}

/** List prices by model-name prefix: [input, output, provider]. */
export const MODEL_PRICES: Readonly<Record<string, readonly [number, number, string]>> = {
  "gpt-5-nano": [0.05, 0.4, "openai"],
  "gpt-5-mini": [0.25, 2, "openai"],
  "gpt-5": [1.25, 10, "openai"],
  "gpt-4.1-mini": [0.4, 1.6, "openai"],
  "gpt-4.1": [2, 8, "openai"],
  "gpt-4o-mini": [0.15, 0.6, "openai"],
  "gpt-4o": [2.5, 10, "openai"],
  "claude-haiku-4": [1, 5, "anthropic"],
  "claude-sonnet-4": [3, 15, "anthropic"],
  "claude-opus-4-1": [15, 75, "anthropic"],
  "claude-opus-4-5": [5, 25, "anthropic"],
  "gemini-2.5-flash": [0.3, 2.5, "gemini"],
  "gemini-2.5-pro": [1.25, 10, "gemini"],
  "deepseek-chat": [0.28, 0.42, "deepseek"],
};

/** Used for a model the table does not know. */
export const FALLBACK_PRICE: PriceModel = priceModel(1, 4, "openai");

/** The price model of a model by longest name prefix, or the fallback. */
export function priceFor(model: string | undefined): PriceModel {
  const name = (model ?? "").toLowerCase().split("/").pop() ?? "";
  let best: string | undefined;
  for (const prefix of Object.keys(MODEL_PRICES)) if (name.startsWith(prefix) && (best === undefined || prefix.length > best.length)) best = prefix;
  if (best === undefined) return FALLBACK_PRICE;
  const [input, output, provider] = MODEL_PRICES[best];
  return priceModel(input, output, provider);
}

export interface RequestTokens {
  readonly inputTokens: number;
  /** Input tokens served from the cache. */
  readonly cachedTokens: number;
  /** Input tokens written to the cache (on providers that bill writes). */
  readonly cacheWriteTokens?: number;
  readonly outputTokens: number;
}

/** Dollars of one request: cached input at the read price, written input at the write price, the rest at the input price. */
export function requestCost(price: PriceModel, t: RequestTokens): number {
  const written = Math.min(t.cacheWriteTokens ?? 0, t.inputTokens - t.cachedTokens);
  const fresh = t.inputTokens - t.cachedTokens - written;
  return (t.cachedTokens * price.cachedRead + written * price.cacheWrite + fresh * price.input + t.outputTokens * price.output) / 1e6;
}

export interface PaybackInput {
  /** Prompt tokens without compaction. */
  readonly promptTokens: number;
  /** Tokens the compaction would remove (replaced minus the summary). */
  readonly savedTokens: number;
  /** Tokens after the unchanged head that the compacted prompt must write to the cache again. */
  readonly rewrittenTokens: number;
  /** The summary call: its input and output tokens (0 for an extractive summary). */
  readonly summaryInputTokens: number;
  readonly summaryOutputTokens: number;
  /** Requests expected after this one that would carry the saving. */
  readonly remainingTurns: number;
}

export interface Payback {
  /** Dollars saved over the remaining turns (cached reads of the removed tokens). */
  readonly saving: number;
  /** Dollars the compaction costs now: the summary call and re-writing the prefix after the cut. */
  readonly cost: number;
  readonly pays: boolean;
}

/**
 * Whether compacting now pays: without it, every remaining turn reads the removed tokens from
 * the cache; with it, the prefix after the cut is written again once (at the write price instead
 * of the read price) and the summary call is paid.
 */
export function payback(price: PriceModel, p: PaybackInput, summaryPrice: PriceModel = price): Payback {
  const saving = (p.remainingTurns + 1) * p.savedTokens * price.cachedRead / 1e6;
  const cost = (p.rewrittenTokens * (price.cacheWrite - price.cachedRead) + p.summaryInputTokens * summaryPrice.input + p.summaryOutputTokens * summaryPrice.output) / 1e6;
  return { saving, cost, pays: saving > cost };
}

function sameMessage(a: ChatMessage, b: ChatMessage): boolean {
  if (a === b) return true;
  return a.role === b.role && a.name === b.name && a.tool_call_id === b.tool_call_id && JSON.stringify(a.content) === JSON.stringify(b.content) && JSON.stringify(a.tool_calls) === JSON.stringify(b.tool_calls);
}

/**
 * Tokens of the leading messages two prompts share (what a prefix cache can serve), counted by
 * whole messages: a message that changed breaks the prefix where it starts.
 */
export function sharedPrefixTokens(previous: readonly ChatMessage[], next: readonly ChatMessage[]): number {
  let n = 0;
  for (let i = 0; i < Math.min(previous.length, next.length) && sameMessage(previous[i], next[i]); i++) n += messageTokens(next[i]);
  return n;
}
