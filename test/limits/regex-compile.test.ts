// Compiling a regex costs more than its instructions where RE2 builds big character classes:
// under (?iu) it folds a class's range one character at a time (re2js: every character from
// U+0041 to U+1E943 it covers, with their case variants), and a Unicode class (\p{L}) is a table
// of hundreds of ranges. (re-pattern "(?iu)[B-\x{1E942}]...") with 60 such classes was 62 units of
// fuel for half a second of compiling, with no clock read in it: ten of them ran 6 s under a
// 1,000 ms limit. That work is charged before RE2 compiles, so the budget and the clock stop it.
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { virtualClock } from "../support/run.js";

// Every character of [B-\x{1E942}] is one RE2 folds under (?iu) (Unicode case, as Java's UNICODE_CASE): 125,185 of them (U+0042 to U+1E942).
const WIDE = "[B-\\\\x{1E942}]";
const folded = (n: number): string => `(str "(?iu)" (apply str (repeat ${n} "${WIDE}")))`;

describe("limits: compiling a regex", () => {
  it("a class RE2 folds a character at a time is charged for each character", async () => {
    const one = await evaluate(`(re-pattern ${folded(1)})`);
    expect(one.ok).toBe(true);
    expect(one.stats.fuelUsed).toBeGreaterThan(125_000);
    const many = await evaluate(`(re-pattern ${folded(60)})`, { limits: { maxFuel: 1_000_000 } });
    expect(!many.ok && many.error.kind).toBe("fuel_exhausted");
    // Ranges RE2 does not fold one by one: outside (?i), under Java's (?i) (ASCII only), the whole fold range.
    for (const cheap of ['"[B-\\\\x{1E942}]"', '"(?i)[B-\\\\x{1E942}]"', '"(?i)[a-z]"', '"(?i)[\\\\x{0}-\\\\x{10FFFF}]"']) {
      const r = await evaluate(`(re-pattern ${cheap})`);
      expect(r.ok && r.stats.fuelUsed, cheap).toBeLessThan(1_000);
    }
  });

  it("Unicode classes are charged for their tables", async () => {
    const r = await evaluate(`(re-pattern (apply str (repeat 200 "\\\\pL")))`);
    expect(r.ok && r.stats.fuelUsed).toBeGreaterThanOrEqual(200 * 1_000);
  });

  it("a loop of such compiles reads the clock at each, and stops on time", async () => {
    const clock = virtualClock(1);
    const r = await evaluate(`(def p ${folded(10)}) (dotimes [i 10] (re-pattern (str p i)))`, { clock: clock.now, limits: { timeoutMs: 3 } });
    expect(!r.ok && r.error.kind).toBe("timeout");
    expect(clock.reads()).toBeLessThan(10);
  });

  it("so do regex literals, while the program is analyzed", async () => {
    const literal = `#"(?iu)${"[B-\\x{1E942}]".repeat(20)}`;
    const src = "[" + Array.from({ length: 10 }, (_, i) => `\n${literal}${i}"`).join(" ") + "]";
    const clock = virtualClock(1);
    const r = await evaluate(src, { clock: clock.now, limits: { timeoutMs: 3 } });
    expect(r.ok || r.error).toMatchObject({ kind: "timeout", phase: "analysis" });
    // Literal n is on line n + 1: the clock is read before each compiles, and the fourth read is past the limit.
    expect(!r.ok && r.error.line).toBeLessThanOrEqual(6);
  });
});
