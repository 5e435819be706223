// The one token measure on text a real conversation can hold: a run of one character with no
// break (a divider line, a blob, padding) is one piece to the tokenizer, whose merge is
// quadratic in a piece's length (100,000 dashes: 6 s; a megabyte: minutes). Such runs are cut
// into slices, so a count takes time in proportion to the text. The bound below is 100 times
// what a count takes here on a loaded machine, and a small part of what the uncut count takes.
import { describe, expect, it } from "vitest";
import { countTokens, tokenize } from "../../src/compaction/tokens.js";

describe("countTokens on long runs", () => {
  it("counts a megabyte of one character, of spaces and of emoji, and tokenize agrees", { timeout: 20_000 }, () => {
    for (const text of ["-".repeat(1_000_000), "a".repeat(1_000_000), " ".repeat(500_000), "😀".repeat(200_000), `${"word ".repeat(2_000)}${"=".repeat(100_000)} end`]) {
      const n = countTokens(text);
      expect(tokenize(text)).toHaveLength(n);
      // Within the tokenizer's range for such text: at least one token per 128 characters, at most one per character.
      expect(n).toBeGreaterThan(text.length / 128);
      expect(n).toBeLessThanOrEqual(text.length);
    }
  });

  it("leaves text without long runs as the tokenizer counts it", () => {
    const prose = "The quick brown fox jumps over the lazy dog. ".repeat(200);
    expect(countTokens(prose)).toBe(tokenize(prose).length);
    expect(countTokens("hello world")).toBe(2);
    // A cut never falls between the halves of a surrogate pair: no replacement characters appear.
    const emoji = "😀".repeat(1_000);
    expect(countTokens(emoji)).toBe(1_000);
  });
});
