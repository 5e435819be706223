// An error quoting a long value the program made (a keyword of a million characters, digits past
// the integer range, an assert's message, a string as a hint's example) quotes it cut short: the
// agent sends the error back to the model on every turn it stays in view. A cut never splits a
// surrogate pair (half an emoji is text a provider's JSON parser refuses).
import { describe, expect, it } from "vitest";
import { wellFormed } from "../../src/lisp/cuts.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { failure, stillClock } from "../support/run.js";

const LONG = 1_000_000;
const KW = `(keyword (apply str (repeat ${LONG} "a")))`;
// A keyword str can still show (its colon makes one of the string limit one too long).
const SHORTER_KW = `(keyword (apply str (repeat ${LONG / 10} "a")))`;
const DIGITS = `(apply str (repeat ${LONG} "1"))`;
const TEXT = `(apply str (repeat ${LONG} "a"))`;

describe("limits: errors quoting a long value the program made", () => {
  const cases: Array<[string, RegExp]> = [
    [`(inc ${KW})`, /^inc expects a number, got keyword :a+…$/],
    [`(< ${KW} 1)`, /got keyword :a+…$/],
    [`(nth [1 2] ${KW})`, /got keyword :a+…$/],
    [`(take ${KW} [1])`, /got keyword :a+…$/],
    [`(case ${KW} :b 1)`, /^case: no clause matches keyword :a+…$/],
    [`(select-keys {} ${KW})`, /got keyword :a+…/],
    [`(max-key ${KW} [1])`, /^max-key compares its arguments/],
    [`(max-key ${TEXT} [1])`, /^max-key compares its arguments/],
    [`(format "%d" ${KW})`, /keyword :a+…/],
    [`(${KW} 1 2 3)`, /^keyword :a+… used as a function expects 1 or 2 arguments/],
    [`(apply ${KW} [])`, /^keyword :a+… used as a function/],
    [`(assert false ${TEXT})`, /^Assert failed: a+…$/],
    [`(assert false ${SHORTER_KW})`, /^Assert failed: :a+…$/],
    [`(Integer/parseInt ${DIGITS})`, /^Integer\/parseInt: 1+… is out of range for an int/],
    [`(Long/parseLong ${DIGITS})`, /^Long\/parseLong: 1+… is out of range for a long/],
    [`(clojure.string/join [1 2] ${TEXT})`, /^join expects \(join separator coll\)/],
  ];
  it.each(cases)("%s", async (source, says) => {
    const { error } = await failure(source);
    expect(error.message).toMatch(says);
    // An assert's message is the program's own, cut as a thrown message is (1,000 characters).
    expect(error.message.length).toBeLessThanOrEqual(1_100);
    expect((error.hint ?? "").length).toBeLessThanOrEqual(300);
  });

  it("a value quoted in a type error is cut within 200 characters", async () => {
    for (const source of [`(inc ${KW})`, `(range ${KW})`, `(.indexOf ${KW} "a")`, `(Long/parseLong ${DIGITS})`]) {
      expect((await failure(source)).error.message.length, source).toBeLessThanOrEqual(200);
    }
  });

  // Cutting a message built by concatenation copies all of it first: a loop catching such errors
  // ran 6.6 s between two reads of the clock under a 1,000 ms limit, for 2 units of fuel an error.
  it.each([
    ["a thrown message", `(str s "b")`, `(throw (ex-info (str s "b") {}))`],
    ["an assert's message", `(str s "b")`, `(assert false (str s "b"))`],
    ["an assert's keyword", `(keyword s)`, `(assert false (keyword s))`],
  ])("cutting %s is charged as reading it", async (_, made, call) => {
    const bind = `s (apply str (repeat ${LONG - 10} "a"))`;
    // A still clock: on a loaded machine the 1 s limit could stop either run early and shrink its fuel.
    const fuel = async (body: string): Promise<number> => (await evaluate(`(let [${bind}] ${body} 1)`, { clock: stillClock })).stats.fuelUsed;
    expect((await fuel(`(try ${call} (catch Exception e 1))`)) - (await fuel(made))).toBeGreaterThanOrEqual(LONG / 64 - 10);
  });

  const emoji = (n: number) => `(str (apply str (repeat ${n} "a")) "😀")`;
  it.each([
    ["a thrown message", `(throw (ex-info ${emoji(999)} {}))`],
    ["an assert's message", `(assert false ${emoji(999)})`],
    ["a string in a type error", `(+ ${emoji(23)} 1)`],
    ["a keyword in a type error", `(+ (keyword ${emoji(23)}) 1)`],
    ["a string called", `(${emoji(19)} 1)`],
    ["a date", `(java.util.Date. ${emoji(39)})`],
  ])("%s cut at an emoji keeps it whole or leaves it out", async (_, source) => {
    const { error } = await failure(source);
    expect(wellFormed(error.message)).toBe(error.message);
    expect(error.message).not.toMatch(/\\ud83d/);
  });
});
