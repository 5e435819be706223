// Whether a change to a cached prompt pays for itself: the one payback rule. The cost-payback
// trigger asks it before a compaction; the compressed history view asks it before dropping
// println output and (in strict-prefix mode) before summarizing a turn. Prices come from the
// one table (prices.ts), so a rule and a bill never disagree on what a cached token costs.
import { readMultiplier, writeMultiplier, type ModelPrice } from "./prices.js";

export interface PaybackInput {
  /** Tokens the change removes from every prompt that follows. */
  readonly savedTokens: number;
  /** Prompts that carry the saving (this one included). */
  readonly prompts: number;
  /** Tokens the changed prompt writes to the cache again, where the unchanged one would have read them cached. */
  readonly rewrittenTokens: number;
  /** A summary call the change needs: its input and output tokens (none for an extractive summary). */
  readonly summaryInputTokens?: number;
  readonly summaryOutputTokens?: number;
}

export interface Payback {
  /** Dollars saved: the removed tokens' cached reads in every prompt that carries the saving. */
  readonly saving: number;
  /** Dollars the change costs now: the rewrite (its write price above the read price) and the summary call. */
  readonly cost: number;
  /** Strictly more saved than spent: at break-even the prompt stays as it is, its cache and detail intact. */
  readonly pays: boolean;
}

/**
 * Whether a change pays: without it, every prompt reads the removed tokens from the cache; with
 * it, the rewritten tokens are written again once (at the write price instead of the read
 * price) and the summary call is paid (at `summaryPrice`, the summarizer's model).
 */
export function payback(price: ModelPrice, p: PaybackInput, summaryPrice: ModelPrice = price): Payback {
  const read = readMultiplier(price.cache);
  const saving = (p.prompts * p.savedTokens * read * price.input) / 1e6;
  const rewrite = p.rewrittenTokens * (writeMultiplier(price.cache) - read) * price.input;
  const cost = (rewrite + (p.summaryInputTokens ?? 0) * summaryPrice.input + (p.summaryOutputTokens ?? 0) * summaryPrice.output) / 1e6;
  // Prices like 0.1x are not exact in binary: 9 x 0.1 comes out above 0.9, so a plain > took 30% of
  // exact break-evens for a saving. A margin far above rounding and far below one token tells them apart.
  return { saving, cost, pays: saving - cost > 1e-12 * Math.max(saving, cost) };
}
