// subseq and rsubseq pay for the keys they search once per collection and for what they return.
import { Map as IMap } from "ptc-immutable";
import { describe, expect, it, vi } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { stillClock } from "../support/run.js";

const N = 100_000;
const limits = { maxFuel: 1e9, maxLoopIterations: 1e7 };

async function fuel(source: string): Promise<number> {
  const r = await evaluate(source, { clock: stillClock, limits });
  expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
  return r.stats.fuelUsed;
}

describe("subseq fuel", () => {
  it("a loop of subseq over one large collection searches it, not walks it, each time", async () => {
    const setup = `(def s (apply sorted-set (range ${N})))`;
    const base = await fuel(`${setup} (reduce + 0 (range 2000))`);
    const loop = await fuel(`${setup} (reduce (fn [acc i] (+ acc (first (subseq s >= (* i 50) < (inc (* i 50)))))) 0 (range 2000))`);
    // A few dozen steps per call; a walk per call would be 2,000 N.
    expect(loop - base).toBeLessThan(N + 2000 * 100);
  });

  // Each conj makes a new set, whose keys were copied out whole for its first subseq: 500 rounds
  // over 20,000 elements cost 10M fuel, as many as a filter over the set each time.
  it("a loop of subseq over a set that changes each time walks the tree, not every key", async () => {
    const n = 20_000;
    const rounds = (body: string): string =>
      `(loop [s (apply sorted-set (range ${n})) i 0 acc 0] (if (< i 500) (let [s (conj s (- -1 i))] (recur s (inc i) (+ acc ${body}))) acc))`;
    const base = await fuel(rounds("(first s)"));
    const loop = await fuel(rounds("(count (subseq s >= (* i 30) < (+ (* i 30) 3)))"));
    const back = await fuel(rounds("(count (rsubseq s > (- i) <= (- 3 i)))"));
    // A descent of the tree (about 2 log n steps) and the three keys each round.
    expect(loop - base).toBeLessThan(500 * 100);
    expect(back - base).toBeLessThan(500 * 100);
  });

  it("charges the elements it returns", async () => {
    const setup = `(def m (apply sorted-map (range ${2 * N})))`;
    const one = await fuel(`${setup} (count (subseq m >= 0 < 2))`);
    const all = await fuel(`${setup} (count (rsubseq m >= 0))`);
    expect(all - one).toBeGreaterThanOrEqual(N - 100);
  });
});

describe("sorted tree maps and sets", () => {
  // Reads of a map's entries while `body` runs on a large sorted map and set, less those of the
  // same program without it: the work `body` does that no fuel sees.
  async function entryReads(body: string): Promise<number> {
    const setup = `(def m (apply sorted-map (range ${2 * N}))) (def s (apply sorted-set (range ${N})))`;
    const reads = async (src: string): Promise<number> => {
      const get = vi.spyOn(IMap.prototype, "get");
      try {
        await fuel(src);
        return get.mock.calls.length;
      } finally {
        get.mockRestore();
      }
    };
    return (await reads(`${setup} ${body}`)) - (await reads(`${setup} nil`));
  }

  it("first reads one entry, not all of them", async () => {
    // Each iteration copied every entry first: draining a 8,000-element set by (disj s (first s))
    // took 3.3 s on 256k fuel, and 8,000 (first s) of one 8,000-element set 17.6 s on 160k fuel.
    expect(await entryReads("[(first m) (first s) (key (first m)) (val (first m))]")).toBeLessThan(100);
  });
});
