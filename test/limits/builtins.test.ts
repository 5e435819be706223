// Every builtin that does work proportional to its input pays fuel for it and lets the clock
// stop it: generated heavy calls over inputs built inside the program, across the builtin areas.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { CHECK_INTERVAL } from "../../src/lisp/runtime.js";
import { virtualClock } from "../support/run.js";

// Inputs of n elements (or about 2n characters), bound in a let before the call under test.
const INPUTS = {
  ints: (n: number) => `x (vec (range ${n}))`,
  strs: (n: number) => `x (mapv str (range ${n}))`,
  text: (n: number) => `x (apply str (repeat ${n} "a,"))`,
  words: (n: number) => `x (clojure.string/join " " (map str (range ${n})))`,
  map: (n: number) => `x (zipmap (map str (range ${n})) (range ${n}))`,
  set: (n: number) => `x (set (range ${n}))`,
  nested: (n: number) => `x (mapv (fn [i] {:a i :b [i]}) (range ${n}))`,
  pair: (n: number) => `x (vec (range ${n})) y (vec (range ${n}))`,
  maps: (n: number) => `x (zipmap (range ${n}) (range ${n})) y (zipmap (range ${n}) (range ${n}))`,
  // Two equal texts built apart: comparing them reads every character.
  texts: (n: number) => `x (apply str (repeat ${n} "a,")) y (apply str (repeat ${n} "a,"))`,
  // Two equal keywords made apart: a long name is not interned, so comparing them reads it.
  keywords: (n: number) => `x (keyword (apply str (repeat ${n} "a,"))) y (keyword (apply str (repeat ${n} "a,")))`,
} as const;

type Input = keyof typeof INPUTS;

// [call, input]: one heavy call per row, grouped by area.
const CALLS: ReadonlyArray<readonly [string, Input]> = [
  // collections and sequences
  ["(into [] x)", "ints"], ["(seq x)", "map"], ["(seq x)", "text"], ["(butlast x)", "set"],
  ["(mapv inc x)", "ints"], ["(map + x x)", "ints"], ["(filter even? x)", "ints"], ["(keep identity x)", "ints"],
  ["(mapcat vector x)", "ints"], ["(reduce + x)", "ints"], ["(reductions + x)", "ints"], ["(take-while some? x)", "ints"],
  ["(drop-last x)", "ints"], ["(split-with even? x)", "ints"], ["(take-nth 2 x)", "ints"], ["(distinct x)", "strs"],
  ["(dedupe x)", "ints"], ["(concat x x)", "ints"], ["(flatten x)", "nested"], ["(interleave x x)", "ints"],
  ["(interpose 0 x)", "ints"], ["(partition 2 x)", "ints"], ["(partition-all 3 x)", "ints"], ["(partition-by even? x)", "ints"],
  ["(reverse x)", "ints"], ["(rseq x)", "ints"], ["(sort x)", "strs"], ["(sort > x)", "ints"], ["(sort-by - x)", "ints"], ["(group-by even? x)", "ints"],
  ["(frequencies x)", "strs"], ["(every? some? x)", "ints"], ["(some neg? x)", "ints"], ["(pluck :a x)", "nested"],
  ["(zip x x)", "ints"], ["(run! identity x)", "ints"], ["(transduce (map inc) + x)", "ints"], ["(sequence (map inc) x)", "ints"],
  // maps and sets
  ["(merge x x)", "map"], ["(merge-with + x x)", "map"], ["(select-keys x (keys x))", "map"], ["(update-vals x inc)", "map"],
  ["(update-keys x identity)", "map"], ["(zipmap x x)", "ints"], ["(apply hash-map (interleave x x))", "ints"], ["(apply sorted-map (interleave x x))", "ints"],
  ["(clojure.set/map-invert x)", "map"], ["(set x)", "strs"], ["(apply sorted-set x)", "ints"], ["(clojure.set/union x x)", "set"],
  ["(clojure.set/difference x x)", "set"], ["(clojure.set/select even? x)", "set"],
  // equality and ordering of big values
  ["(= x y)", "pair"], ["(not= x y)", "pair"], ["(compare x y)", "pair"], ["(= x y)", "maps"], ["(apply < x)", "ints"],
  ["(= x y)", "texts"], ["(compare x y)", "texts"], ["(= [x] [y])", "texts"], ["(not= {:a x} {:a y})", "texts"],
  ["(= x y)", "keywords"], ["(get {x 1} y)", "keywords"], ["(contains? #{x} y)", "keywords"], ["(compare x y)", "keywords"],
  // strings and regexes
  ["(apply str x)", "strs"], ["(str x)", "ints"], ["(clojure.string/join \",\" x)", "strs"], ["(clojure.string/split x #\",\")", "text"],
  ["(clojure.string/replace x #\"a\" \"b\")", "text"], ["(clojure.string/escape x {\\a \"b\"})", "text"], ["(vec x)", "text"],
  ["(frequencies x)", "text"], ["(re-seq #\"a\" x)", "text"], ["(.split x \" \")", "words"], ["(clojure.string/upper-case x)", "text"],
  ["(clojure.string/includes? x \"zz\")", "text"],
  ["(keyword x)", "text"], ["(format \"%s\" x)", "text"], ["(parse-double x)", "text"], ["(clojure.string/blank? x)", "text"],
  ["(clojure.string/split x \",\")", "text"], ["(clojure.string/index-of x \"zz\")", "text"], ["(.toUpperCase x)", "text"],
  // reading characters of a text: each call scans it (for combining marks) or splits it
  ["(count x)", "text"], ["(nth x 5)", "text"], ["(get x 5)", "text"], ["(contains? x 5)", "text"], ["(last x)", "text"],
  ["(second x)", "text"], ["(take 2 x)", "text"], ["(take-last 2 x)", "text"], ["(subs x 1 2)", "text"], ["(format \"%.3s\" x)", "text"],
  // a copy of the whole collection that a call makes, however little it keeps of it
  ["(last x)", "set"], ["(take 1 x)", "set"], ["(take-last 1 x)", "map"], ["(sequence x)", "set"], ["(drop 1 x)", "map"],
  ["(take-while neg? x)", "ints"], ["(drop-while neg? x)", "set"], ["(split-with neg? x)", "ints"],
  // hashing a text as a key (in a set or map big enough to hash its keys) reads every character
  ["(conj (set (range 9)) x)", "text"], ["(contains? (set (range 9)) x)", "text"], ["(get (zipmap (range 9) (range 9)) x)", "text"],
  ["(assoc (zipmap (range 9) (range 9)) x 1)", "text"], ["(conj (set (range 9)) [x])", "text"], ["(conj (set (range 9)) {:a x})", "text"],
  ["(distinct [x 1])", "text"], ["(frequencies [x])", "text"],
  // hashing a fresh collection as a key (a set big enough to hash its members) reads every element
  ["(contains? (set (range 9)) (conj x -1))", "ints"], ["(contains? (set (range 9)) (assoc x -1 0))", "map"],
  ["(contains? (set (range 9)) (conj x -1))", "set"], ["(get (zipmap (range 9) (range 9)) [x])", "strs"],
  // printing, aggregates, trees, functions
  ["(pr-str x)", "nested"], ["(prn-str x)", "map"], ["(with-out-str (println x))", "nested"], ["(sum x)", "ints"], ["(median x)", "ints"],
  ["(max-by :a x)", "nested"], ["(distinct-by :a x)", "nested"], ["(clojure.walk/postwalk identity x)", "nested"],
  ["(clojure.walk/prewalk identity x)", "nested"], ["(clojure.walk/keywordize-keys x)", "map"], ["(tree-seq coll? seq x)", "nested"],
  ["(apply max x)", "ints"], ["(pmap inc x)", "ints"],
];

const BIG = { maxFuel: 1e12, timeoutMs: 60_000, maxLoopIterations: 1e9, maxStringLength: 1e8, maxCollectionSize: 1e8 };

/** Fuel of the program that only builds the input, and of the one that also makes the call. */
async function fuelOf(call: string, input: Input, n: number): Promise<{ setup: number; full: number; source: string }> {
  const bind = INPUTS[input](n);
  const setup = await evaluate(`(let [${bind}] nil)`, { limits: BIG });
  const source = `(let [${bind}] ${call} nil)`;
  const full = await evaluate(source, { limits: BIG });
  expect(setup.ok && full.ok, `${call} over ${input}`).toBe(true);
  return { setup: setup.stats.fuelUsed, full: full.stats.fuelUsed, source };
}

describe("heavy builtin calls charge fuel for their input (property)", () => {
  // Strings are charged per 64 characters scanned, collections per element: n/64 is the least.
  it("every call charges in proportion to its input, and a budget that ends inside it stops it there", async () => {
    for (const [call, input] of CALLS) {
      const { setup, full } = await fuelOf(call, input, 2_000);
      expect(full - setup, `${call} over ${input} (n=2000)`).toBeGreaterThanOrEqual(2_000 / 64);
    }
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CALLS), fc.integer({ min: 3_000, max: 12_000 }), fc.double({ min: 0.1, max: 0.9, noNaN: true }), async ([call, input], n, part) => {
        const { setup, full, source } = await fuelOf(call, input, n);
        expect(full - setup).toBeGreaterThanOrEqual(n / 64);
        const maxFuel = setup + Math.floor((full - setup) * part);
        const r = await evaluate(source, { limits: { ...BIG, maxFuel } });
        expect(!r.ok && r.error.kind, `${call} over ${input} (n=${n}, fuel=${maxFuel})`).toBe("fuel_exhausted");
        expect(r.stats.fuelUsed).toBe(maxFuel);
      }),
      { numRuns: 15 },
    );
  });
});

describe("heavy builtin calls stop on time (property)", () => {
  // The same call over and over on a big input: the timeout fires after a bounded amount of
  // work, never after the whole loop. Time here is the virtual clock: each check of it is a
  // millisecond, so the bound is on the work done between checks, not on machine speed (the
  // wall-clock overshoot is measured by `npm run bench`).
  it("a small timeout stops a loop of heavy calls on time", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CALLS), fc.integer({ min: 10_000, max: 30_000 }), fc.integer({ min: 50, max: 100 }), async ([call, input], n, timeoutMs) => {
        const { setup, full } = await fuelOf(call, input, n);
        const source = `(let [${INPUTS[input](n)}] (dotimes [_ 1000000] ${call}))`;
        const clock = virtualClock(1);
        const r = await evaluate(source, { limits: { ...BIG, timeoutMs }, clock: clock.now });
        expect(!r.ok && r.error.kind, `${call} over ${input} (n=${n})`).toBe("timeout");
        // At most a check interval plus one call's charge passes between two reads of the clock.
        expect(r.stats.fuelUsed - setup, `${call} over ${input} (n=${n})`).toBeLessThanOrEqual((timeoutMs + 2) * (CHECK_INTERVAL + (full - setup) + 1));
        expect(clock.reads()).toBeGreaterThan(timeoutMs);
      }),
      // The case that finished instead of timing out on a loaded machine when this read the wall clock (seed 824147959).
      { numRuns: 10, examples: [[["(parse-double x)", "text"], 20_000, 72]] },
    );
  });

  // One call over a big input from the host (ints, strings or text, which cross the boundary
  // quickly): the builtin looks at the clock at least once per check interval of the work it
  // is charged for, so a limit can fire inside it. A clock that stands still counts the looks.
  const hostInputs: Partial<Record<Input, (n: number) => unknown>> = {
    ints: (n) => Array.from({ length: n }, (_, i) => i),
    strs: (n) => Array.from({ length: n }, (_, i) => String(i % 100_000)),
    text: (n) => "a,".repeat(Math.min(n, 450_000)),
    words: (n) => Array.from({ length: Math.min(n, 100_000) }, (_, i) => String(i)).join(" "),
  };
  const single = CALLS.filter(([, input]) => input in hostInputs);
  it("one heavy call over a big input ends, and a clock check inside it stops it", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...single), fc.integer({ min: 200_000, max: 500_000 }), fc.integer({ min: 2, max: 6 }), async ([call, input], n, timeoutMs) => {
        const ctx = { x: hostInputs[input]!(n) };
        const clock = virtualClock(1);
        const r = await evaluate(`(let [x data/x] ${call} nil)`, { ctx, limits: { ...BIG, timeoutMs }, clock: clock.now });
        // Read 0 starts the run (deadline timeoutMs, reading the program included), the last one
        // times its stats: a check that read past the deadline is read timeoutMs + 1, and it must
        // stop the run there.
        const overdue = clock.reads() === timeoutMs + 3;
        expect(r.ok || r.error.kind, `${call} over ${input} (n=${n}, ${clock.reads()} clock reads)`).toBe(overdue ? "timeout" : true);
        expect(clock.reads()).toBeLessThanOrEqual(timeoutMs + 3);
      }),
      // A regex literal's compile read the clock once more, in analysis (found on a loaded CI run).
      { numRuns: 10, examples: [[['(clojure.string/split x #",")', "text"], 200_000, 2]] },
    );
  });
});

// Builtins that charge their whole input up front and then hand it to immutable element by element
// (a set built from a vector, a set operation, a map rebuilt key by key) read no clock inside that
// work: clojure.set/intersection of two vectors of 200,000 strings ran 2.4 s with the clock unread.
// Each key operation now counts towards a look at the clock: a clock that stands still counts the looks.
describe("key-by-key work over a big input looks at the clock as it goes", () => {
  const n = 100_000;
  const strs = Array.from({ length: n }, (_, i) => String(i));
  const map = Object.fromEntries(strs.map((s) => ["k" + s, 1]));
  const rows: ReadonlyArray<readonly [string, unknown]> = [
    ["(clojure.set/intersection x x)", strs], ["(clojure.set/union x x)", strs], ["(clojure.set/difference x x)", strs],
    ["(clojure.set/subset? x x)", strs], ["(clojure.set/superset? x x)", strs], ["(clojure.set/select some? x)", strs],
    ["(clojure.set/rename-keys x x)", map], ["(update-vals x inc)", map], ["(select-keys x (keys x))", map],
  ];
  it.each(rows)("%s", async (call, x) => {
    const reads = async (source: string): Promise<number> => {
      const clock = virtualClock(0);
      const r = await evaluate(source, { ctx: { x }, limits: BIG, clock: clock.now });
      expect(r.ok, source).toBe(true);
      return clock.reads();
    };
    const setup = await reads("(let [x data/x] nil)");
    const full = await reads(`(let [x data/x] ${call} nil)`);
    // At least one look per 8,192 elements a pass of the call goes through.
    expect(full - setup).toBeGreaterThanOrEqual(n / 8_192);
  });
});

// A builtin that makes a vector per element of a big input: (zip x x) over a context vector of
// 1,000,000 strings went 1.8 s between two reads of the clock.
describe("a vector made per element of a big input looks at the clock as it goes", () => {
  const n = 100_000;
  const ints = Array.from({ length: n }, (_, i) => i);
  it.each(["(zip x x)", "(partition 1 x)", "(partition-all 1 x)", "(partition 2 1 x)", "(partition 1 1 [0] x)"])("%s", async (call) => {
    const reads = async (source: string): Promise<number> => {
      const clock = virtualClock(0);
      const r = await evaluate(source, { ctx: { x: ints }, limits: BIG, clock: clock.now });
      expect(r.ok, source).toBe(true);
      return clock.reads();
    };
    const setup = await reads("(let [x data/x] nil)");
    expect((await reads(`(let [x data/x] ${call} nil)`)) - setup).toBeGreaterThanOrEqual(n / 8_192);
  });
});

// Printing walks every element: it was charged per 16 characters of what it wrote, so
// collections that print short ((vec (repeat n [])), 3 characters each; a shared-structure
// tree of []s) paid for one element in five, and a loop of such prints outran its fuel.
describe("printing a collection charges each element it prints", () => {
  const n = 4_096;
  const empties = `x (vec (repeat ${n} []))`;
  // 2^13 - 1 vectors below the root, each printed as "[]" or the brackets around two others.
  const dag = "x (reduce (fn [m _] [m m]) [] (range 12))";
  const calls = ["(str x)", "(pr-str x)", "(prn-str x)", "(println x)", "(print x)", "(with-out-str (prn x))", '(format "%s" x)', '(clojure.string/join "," [x])', "(str [x] x)"];
  it.each(calls)("%s", async (call) => {
    for (const [bind, elements] of [[empties, n], [dag, 2 ** 13 - 2]] as const) {
      const setup = await evaluate(`(let [${bind}] nil)`, { limits: BIG });
      const full = await evaluate(`(let [${bind}] ${call} nil)`, { limits: BIG });
      expect(full.ok, call).toBe(true);
      expect(full.stats.fuelUsed - setup.stats.fuelUsed, `${call} over ${bind}`).toBeGreaterThanOrEqual(elements);
    }
  });
});
