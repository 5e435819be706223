// The price model of the cost trigger: what a request costs with a provider's prefix cache, and
// whether a compaction pays for itself. Prices are in dollars per million tokens; list prices
// come from the one table in prices.ts.
import { modelPrice, readMultiplier, writeMultiplier } from "./prices.js";

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

/** The price model of a model, from the one price table (prices.ts) by longest name prefix, or its fallback. */
export function priceFor(model: string | undefined): PriceModel {
  const p = modelPrice(model);
  return { input: p.input, cachedRead: p.input * readMultiplier(p.cache), cacheWrite: p.input * writeMultiplier(p.cache), output: p.output };
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
