// The one token measure on text a real conversation can hold: a run of one character with no
// break (a divider, a blob, padding) is one piece to the tokenizer, whose merge is quadratic in a
// piece's length (100,000 dashes: 6 s; a megabyte: minutes). Such runs are counted in slices, so
// no piece the tokenizer gets is long. How long a count takes is bench:proxy's row "one 100 KB
// line without a break"; here, what is counted.
import { describe, expect, it } from "vitest";
import { countedParts, countTokens, tokenize } from "../../src/compaction/tokens.js";

/** The longest run of characters that are all space or all not. */
function longestRun(text: string): number {
  let best = 0;
  for (const m of text.matchAll(/\S+|\s+/g)) best = Math.max(best, m[0].length);
  return best;
}

const LONG = ["-".repeat(100_000), "a".repeat(100_000), " ".repeat(50_000), "😀".repeat(20_000), `${"word ".repeat(2_000)}${"=".repeat(10_000)} end ${"\n".repeat(3_000)}x`, ("x".repeat(511) + " ").repeat(100)];

describe("countTokens on long runs", () => {
  it("gives the tokenizer no run of 512 characters or more, and loses no character", () => {
    for (const text of LONG) {
      const parts = countedParts(text) ?? [text];
      expect(parts.join("")).toBe(text);
      for (const p of parts) expect(longestRun(p)).toBeLessThan(512);
    }
    expect(countedParts("x".repeat(511) + " ")).toBeNull();
  });

  it("counts what tokenize gives, within the tokenizer's range for such text", () => {
    for (const text of LONG) {
      const n = countTokens(text);
      expect(tokenize(text)).toHaveLength(n);
      expect(n).toBeGreaterThan(text.length / 128);
      expect(n).toBeLessThanOrEqual(text.length);
    }
  });

  it("leaves text without long runs as the tokenizer counts it, and never cuts a surrogate pair", () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(200);
    expect(countedParts(prose)).toBeNull();
    expect(countTokens(prose)).toBe(tokenize(prose).length);
    expect(countTokens("hello world")).toBe(2);
    for (const p of countedParts("😀".repeat(1_000)) ?? []) expect(p.length % 2).toBe(0);
    expect(countTokens("😀".repeat(1_000))).toBe(1_000);
  });
});
