// The one payback rule at its edge: a change that exactly breaks even is not made, under every
// provider's cache, though prices like 0.1x are not exact in binary (9 x 0.1 > 0.9 in floats).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { payback } from "../../src/compaction/payback.js";
import { PROVIDER_CACHES, providerPrice, readMultiplier, writeMultiplier } from "../../src/compaction/prices.js";

const providers = Object.keys(PROVIDER_CACHES).filter((p) => p !== "none");

describe("payback at break-even", () => {
  it("an exact break-even never pays, and one more saved token always does", () => {
    fc.assert(
      fc.property(fc.constantFrom(...providers), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 5000 }), fc.constantFrom(0.15, 1, 2.5, 3, 15), (provider, prompts, rewritten, input) => {
        const price = providerPrice(input, input * 4, provider);
        const read = readMultiplier(price.cache);
        const extra = writeMultiplier(price.cache) - read;
        // Saved tokens at break-even: prompts x saved x read = rewritten x (write - read), in whole tokens.
        const saved = (rewritten * extra) / (prompts * read);
        fc.pre(Number.isInteger(saved) && saved > 0);
        expect(payback(price, { savedTokens: saved, prompts, rewrittenTokens: rewritten }).pays).toBe(false);
        expect(payback(price, { savedTokens: saved + 1, prompts, rewrittenTokens: rewritten }).pays).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("the grid of break-evens of the view's two rules: 9 and 11.5 cached reads per rewritten token", () => {
    const wrong: string[] = [];
    for (const [provider, ratio] of [["openai", 9], ["anthropic", 11.5]] as const) {
      const price = providerPrice(1, 0, provider);
      for (let rewritten = 1; rewritten <= 100; rewritten++) {
        for (let prompts = 1; prompts <= 30; prompts++) {
          const saved = (ratio * rewritten) / prompts;
          if (Number.isInteger(saved) && payback(price, { savedTokens: saved, prompts, rewrittenTokens: rewritten }).pays) wrong.push(`${provider} ${prompts}x${saved} vs ${rewritten}`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it("prices the summary call at the summarizer's model, its input and output each at their own price", () => {
    const main = providerPrice(3, 15, "anthropic");
    const cheap = providerPrice(0.15, 0.6, "openai");
    // Nothing rewritten: the cost is the summary call alone.
    const change = { savedTokens: 100, prompts: 10, rewrittenTokens: 0, summaryInputTokens: 1000, summaryOutputTokens: 100 };
    const withCheap = payback(main, change, cheap);
    expect(withCheap.cost).toBeCloseTo((1000 * 0.15 + 100 * 0.6) / 1e6, 15);
    expect(payback(main, change).cost).toBeCloseTo((1000 * 3 + 100 * 15) / 1e6, 15);
    // The saving is the conversation model's cached reads (0.1 x $3 per million), whoever summarizes.
    expect(withCheap.saving).toBeCloseTo((10 * 100 * 0.1 * 3) / 1e6, 15);
    expect([withCheap.pays, payback(main, change).pays]).toEqual([true, false]);
  });

  it("a free model never pays for a change", () => {
    expect(payback(providerPrice(0, 0, "openai"), { savedTokens: 1000, prompts: 10, rewrittenTokens: 0 }).pays).toBe(false);
  });
});
