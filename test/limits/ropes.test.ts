// str and join put strings together without copying them (V8 keeps a rope of the parts), and V8
// copies the whole rope the first time anything reads a character of it: (first (str s i)), an
// error message quoting (str s "b"), (subs (str s i) 0 1). They charged only their arguments, so
// (dotimes [i 2000] (first (str s i))) over a 1M-character s ran 26 s between two reads of the
// clock under a 1,000 ms limit (2 units of fuel an iteration; join's likewise 32 s). They now pay
// for the length of what they make, at the rate string builtins pay for reading (one unit per 64
// characters).
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { stillClock, virtualClock } from "../support/run.js";

const N = 999_990;
const BIND = `s (apply str (repeat ${N} "a"))`;

async function fuel(body: string): Promise<number> {
  // A still clock: a loaded machine must not stop the run early and shrink its fuel.
  const r = await evaluate(`(let [${BIND}] ${body} nil)`, { clock: stillClock });
  expect(r.ok, body).toBe(true);
  return r.stats.fuelUsed;
}

describe("limits: strings str and join make", () => {
  it.each([
    ["(first (str s i))"],
    ["(first (str s \"b\" i))"],
    ["(first (apply str [s i]))"],
    ["(first (clojure.string/join [s i]))"],
    ['(first (clojure.string/join "," [s i]))'],
    ['(try (+ (str s "b") 1) (catch Exception e nil))'],
    ['(try ((str s "b") 1) (catch Exception e nil))'],
  ])("%s is charged for the length of the string made", async (call) => {
    const setup = await fuel("");
    const used = (await fuel(`(dotimes [i 10] ${call})`)) - setup;
    expect(used).toBeGreaterThanOrEqual((10 * N) / 64);
  });

  it("a loop reading strings it makes reaches the clock", async () => {
    const clock = virtualClock(1);
    const r = await evaluate(`(let [${BIND}] (dotimes [i 2000] (first (str s i))))`, { clock: clock.now, limits: { timeoutMs: 20 } });
    expect(!r.ok && r.error.kind).toBe("timeout");
  });

  it("short strings cost what they did", async () => {
    expect((await evaluate('(str "a" 1 :k)')).stats.fuelUsed).toBe(3);
  });
});
