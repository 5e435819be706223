// Strings are read as grapheme clusters; V8's segmenter slows with the length of its text, so
// src/lisp/text.ts segments a long text in pieces. The pieces must give the segmenter's own
// answer, and a long text must reach the run's clock while it is read.
import { describe, expect, it } from "vitest";
import { evaluate, print } from "../../src/lisp/evaluate.js";
import { graphemes } from "../../src/lisp/text.js";
import { stillClock, virtualClock } from "../support/run.js";

const whole = (s: string): Array<[string, number]> => Array.from(new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(s), (x) => [x.segment, x.index]);

// Characters around every rule of UAX #29 that could join across a cut: CR LF, combining marks,
// ZWJ emoji sequences (© and ® are emoji too), regional indicator pairs, Hangul jamo before
// syllables, Prepend, kana with a combining voicing mark.
const PARTS = ["a", "b", " ", "\r", "\n", "\r\n", "\u0301", "\u200d", "©", "®", "👨", "\u{1f1eb}", "\u{1f1f7}", "\u1100", "\u1161", "\u11a8", "가", "\u0600", "\u{110bd}", "é", "中", "\t", "\u0903", "\u{1f3fd}", "あ", "ア", "\u3099", "\ua960", "\u1100가", "각"];

function mixed(seed: number, length: number): string {
  let x = seed;
  let s = "";
  while (s.length < length) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    s += PARTS[x % PARTS.length];
  }
  return s;
}

/** Counts the units handed to the segmenter (what a grapheme read costs) until restore(). */
function spySegmenter(): { read: number; restore(): void } {
  const segment = Intl.Segmenter.prototype.segment;
  const spy = { read: 0, restore: () => void (Intl.Segmenter.prototype.segment = segment) };
  Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, input: string) {
    spy.read += input.length;
    return segment.call(this, input);
  };
  return spy;
}

describe("graphemes", () => {
  it("gives the segmenter's graphemes and offsets for texts longer than a piece", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const s = mixed(seed, 300 + seed * 37);
      expect(Array.from(graphemes(s), (g) => [g.segment, g.index])).toEqual(whole(s));
    }
    const crlf = "ab\r\n".repeat(500);
    expect(Array.from(graphemes(crlf)).length).toBe(1_500);
    for (const text of ["中文字".repeat(400), "가\u1100각".repeat(300), "あ\u3099".repeat(400)]) expect(Array.from(graphemes(text), (g) => [g.segment, g.index])).toEqual(whole(text));
  });

  it("reads a long text only up to the character nth and get ask for", async () => {
    // (nth s i) and (get s i) split the whole text into characters on every call: 2,000 of them over
    // 120,000 units of Cyrillic ran past a 5 s limit. Counted here: the units handed to the segmenter.
    const text = "\u{1f600}\u043f".repeat(60_000);
    const spy = spySegmenter();
    try {
      // Still clocks: what is counted is the units read, and a loaded machine must not stop a run first.
      const r = await evaluate("[(nth data/text 3) (get data/text 4) (nth data/text 179999 :none) (get data/text -1 :none)]", { ctx: { text }, clock: stillClock });
      expect(r.ok && print(r.lisp)).toBe('["\u043f" "\u{1f600}" :none :none]');
      // An index past the end reads the text twice: to look for it, and to count for the message
      // (each 256-unit window's last character is read again at the start of the next: a few %).
      expect(spy.read).toBeLessThan(text.length * 2.1);
      spy.read = 0;
      await evaluate("[(nth data/text 3) (get data/text 4)]", { ctx: { text }, clock: stillClock });
      expect(spy.read).toBeLessThan(600);
    } finally {
      spy.restore();
    }
    const out = await evaluate("(nth data/text 120000)", { ctx: { text }, clock: stillClock });
    expect(out.ok ? print(out.lisp) : out.error.message).toContain("out of bounds for a string of 120000 elements");
  });

  it("charges every unit the segmenter reads", async () => {
    // The segmenter spends hundreds of times an evaluation step on each unit it reads, and a
    // count was charged as a scan (one unit of fuel per 64): 20 counts of 400,000 units of
    // accented letters gave it 8,000,000 units for 125,021 fuel. Each unit read costs one now.
    const text = "e\u0301".repeat(200_000);
    const spy = spySegmenter();
    try {
      const r = await evaluate("(dotimes [_ 20] (count data/text))", { ctx: { text }, clock: () => 0, limits: { maxFuel: 1e9 } });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      expect(spy.read).toBeGreaterThanOrEqual(20 * text.length);
      expect(r.ok && r.stats.fuelUsed).toBeGreaterThanOrEqual(spy.read);
      // A budget of 2,000,000 stops the same loop before the segmenter has read 2,000,000 units.
      spy.read = 0;
      const stopped = await evaluate("(dotimes [_ 100] (count data/text))", { ctx: { text }, clock: () => 0, limits: { maxFuel: 2_000_000 } });
      expect(stopped.ok ? "ok" : stopped.error.kind).toBe("fuel_exhausted");
      expect(spy.read).toBeLessThanOrEqual(2_000_000);
    } finally {
      spy.restore();
    }
  });

  it("lets the run's clock stop a count of a long CRLF text", async () => {
    // One (count s) of 120,000 characters read the whole text in one segmenter pass (8.5 s) without a
    // clock check; now the clock is read after each piece: with a clock that moves 1 ms a read, 50 ms stop it.
    const text = "ab\r\n".repeat(30_000);
    const clock = virtualClock(1);
    const r = await evaluate("(count data/text)", { ctx: { text }, clock: clock.now, limits: { timeoutMs: 50 } });
    expect(r.ok ? print(r.lisp) : r.error.kind).toBe("timeout");
    const counted = await evaluate("[(count data/text) (count (seq data/text)) (subs data/text 89998)]", { ctx: { text }, clock: () => 0 });
    expect(counted.ok && print(counted.lisp)).toBe('[90000 90000 "b\\r\\n"]');
  });
});
