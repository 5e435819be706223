// Limits hold across tool calls: one time and fuel budget for the whole evaluation, one clock,
// an abort that does not wait for tools, per-tool timeouts and call caps, a bounded source, and
// builtins that check the clock inside long loops.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { virtualClock } from "../support/run.js";

const busy = "(reduce + (map (fn [x] (* x x)) (range 20000)))";

describe("limits across tool calls", () => {
  it("one time budget for the whole evaluation: work between sequential tool calls adds up", async () => {
    let calls = 0;
    const source = `(loop [i 0 acc 0] (if (< i 200) (recur (inc i) (+ acc ${busy} (tool/tick {:i i}))) acc))`;
    // Virtual time (a millisecond per clock check): each round's work alone is far under the limit.
    const r = await evaluate(source, { tools: { tick: () => ++calls }, limits: { timeoutMs: 300 }, clock: virtualClock(1).now });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.kind).toBe("timeout");
    }
    // Stopped early: far fewer than the 200 calls the loop wanted.
    expect(calls).toBeLessThan(200);
  });

  it("one fuel budget for the whole evaluation", async () => {
    const source = `(loop [i 0 acc 0] (if (< i 100) (recur (inc i) (+ acc ${busy} (tool/tick {}))) acc))`;
    const r = await evaluate(source, { tools: { tick: () => 1 }, limits: { maxFuel: 2_000_000, timeoutMs: 60_000 } });
    expect(!r.ok && r.error.kind).toBe("fuel_exhausted");
    // What the stats report is what the evaluation spent, passes included.
    expect(r.stats.fuelUsed).toBeGreaterThanOrEqual(2_000_000);
  });

  it("one clock: the program and its tools see the same now in every pass", async () => {
    const r = await evaluate("(let [a (System/currentTimeMillis) r (tool/echo {:t a}) b (System/currentTimeMillis)] [(= a b) (= a (:t r))])", {
      tools: { echo: async (args) => new Promise((resolve) => setTimeout(() => resolve(args), 20)) },
    });
    expect(r.ok && r.value).toEqual([true, true]);
  });

  it("ends with aborted when the signal fires, even while a tool never answers", async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const r = await evaluate("(tool/hang {})", { tools: { hang: () => new Promise(() => undefined) }, signal: ac.signal });
    expect(!r.ok && r.error.kind).toBe("aborted");
  });

  it("a tool that takes longer than its timeout fails the call, and its signal fires", async () => {
    let aborted = false;
    const slow = (_args: Record<string, unknown>, signal: AbortSignal) =>
      new Promise((resolve) => {
        signal.addEventListener("abort", () => (aborted = true));
        setTimeout(() => resolve(1), 5_000).unref();
      });
    const r = await evaluate("(tool/slow {})", { tools: { slow }, toolTimeoutMs: 30 });
    expect(!r.ok && r.error.kind).toBe("tool_timeout");
    expect(!r.ok && r.error.message).toContain("no answer within 30 ms");
    expect(r.toolCalls[0].error).toBe("no answer within 30 ms");
    expect(aborted).toBe(true);
    const own = await evaluate("(try (tool/slow {}) (catch e :caught))", { tools: { slow: { run: slow, timeoutMs: 20 } }, toolTimeoutMs: 10_000 });
    expect(own.ok && own.value).toBe("caught");
  });

  it("a timeout past setTimeout's range (2^31 ms) sets no timer, as none would, instead of firing at once", async () => {
    // A tool that answers on the next macrotask: a timer Node clamps to 1 ms fires before it.
    const later = () => new Promise((resolve) => setTimeout(() => resolve(7), 20));
    for (const options of [{ tools: { later: { run: later, timeoutMs: 2 ** 31 } } }, { tools: { later }, toolTimeoutMs: 2 ** 32 }]) {
      const r = await evaluate("(tool/later {})", options);
      expect(r.ok && r.value).toBe(7);
    }
  });

  it("caps the calls of one tool with maxCalls", async () => {
    const r = await evaluate("(doseq [i (range 5)] (tool/t {:i i}))", { tools: { t: { run: () => 1, maxCalls: 3 } } });
    expect(!r.ok && r.error.kind).toBe("tool_limit_exceeded");
    expect(!r.ok && r.error.message).toBe("tool/t may be called at most 3 times per program");
    expect(r.toolCalls).toHaveLength(3);
  });
});

describe("limits on source and host data", () => {
  it("refuses a source over maxSourceChars before reading it", async () => {
    const huge = `[${"1 ".repeat(2_000_000)}]`;
    const r = await evaluate(huge);
    expect(!r.ok && r.error.kind).toBe("source_too_large");
    expect(!r.ok && r.error.message).toBe(`the program is ${huge.length} characters long, over the limit of 200000`);
    const small = await evaluate("(+ 1 2)", { limits: { maxSourceChars: 5 } });
    expect(!small.ok && small.error.kind).toBe("source_too_large");
  });

  it("refuses a source over maxSourceForms before parsing it, where the form past the limit is", async () => {
    const r = await evaluate(`(count [${"1 ".repeat(99_000)}])`, { limits: { maxSourceForms: 50_000 } });
    expect(!r.ok && r.error.kind).toBe("source_too_large");
    expect(!r.ok && r.error.message).toBe("the program has more than 50000 forms");
    // "(count [" is 8 characters; the 50,001st form is the 49,998th number.
    expect(!r.ok && r.error.column).toBe(9 + 2 * (49_998 - 1));
    // Strings, collections and atoms count one each; comments and whitespace nothing.
    const counted = await evaluate('(str "a" [:b 1] ; many words here\n)', { limits: { maxSourceForms: 6 } });
    expect(counted.ok && counted.value).toBe("a[:b 1]");
    const over = await evaluate('(str "a" [:b 1] 2)', { limits: { maxSourceForms: 6 } });
    expect(!over.ok && over.error.kind).toBe("source_too_large");
  });

  it("reads the holes of a sparse array from the host as nil", async () => {
    // eslint-disable-next-line no-sparse-arrays
    const r = await evaluate("(let [v (tool/sparse {})] [(count v) (nil? (second v)) (str v)])", { tools: { sparse: () => [1, , 3] } });
    expect(r.ok && r.value).toEqual([3, true, "[1 nil 3]"]);
    // eslint-disable-next-line no-sparse-arrays
    const ctx = await evaluate("(nil? (first data/xs))", { ctx: { xs: [, 2] } });
    expect(ctx.ok && ctx.value).toBe(true);
  });

  // 30 levels, each holding the previous one twice: 61 objects that unfold into 2^31 values.
  // Counting the reads of each level's fields tells how much of it the walk unfolded.
  const hostDag = (): { value: unknown; reads: () => number } => {
    let reads = 0;
    let level: unknown = [1];
    for (let i = 0; i < 30; i++) {
      const below = level;
      level = Object.defineProperties({}, { a: { enumerable: true, get: () => (reads++, below) }, b: { enumerable: true, get: () => (reads++, [below]) } });
    }
    return { value: level, reads: () => reads };
  };

  it("host data sharing its parts is refused by its unfolded size without unfolding it, as context and as a tool's result", async () => {
    // A clock that stands still: only the size limit can stop the walk.
    const clock = (): number => 0;
    for (const run of [(x: unknown) => evaluate("(count data/x)", { ctx: { x }, clock }), (x: unknown) => evaluate("(count (tool/t))", { tools: { t: () => x }, clock })]) {
      const dag = hostDag();
      const r = await run(dag.value);
      expect(!r.ok && r.error.kind).toBe("collection_too_large");
      expect(dag.reads()).toBeLessThan(1000);
    }
  });

  it("a part the host shares is counted, and costs fuel, each time it appears", async () => {
    const part = { a: [1, 2, 3], s: "abcd" };
    const shared = { p: part, q: part };
    const copied = { p: { a: [1, 2, 3], s: "abcd" }, q: { a: [1, 2, 3], s: "abcd" } };
    const fuel = async (x: unknown): Promise<number> => {
      const r = await evaluate("(count data/x)", { ctx: { x } });
      return r.stats.fuelUsed;
    };
    expect(await fuel(shared)).toBe(await fuel(copied));
    // 13 values and 14 characters unfolded (the keys' too); one occurrence of the part alone fits.
    const sized = (x: unknown, limits: object): Promise<unknown> => evaluate("(get-in data/x [:q :a 2])", { ctx: { x }, limits }).then((r) => (r.ok ? r.value : r.error.kind));
    for (const x of [shared, copied]) {
      expect(await sized(x, { maxBoundaryValues: 13, maxBoundaryChars: 14 })).toBe(3);
      expect(await sized(x, { maxBoundaryValues: 12 })).toBe("collection_too_large");
      expect(await sized(x, { maxBoundaryChars: 13 })).toBe("string_too_large");
    }
  });

  it("a tool's result within limits the host raised reaches the program, and its record, in both modes", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 300; i++) deep = [deep];
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("(count (tool/t))", { tools: { t: () => deep }, limits: { maxNestingDepth: 400 }, isolation });
      expect(r.ok ? r.value : r.error.message).toBe(1);
      expect(r.toolCalls[0].result).toEqual(deep);
    }
  });

  // Past the host's own stack, the read's overflow was refused where it struck as "an object that
  // cannot be read (reading it threw)", a catchable tool_error whose 1,000-character message was
  // that object's path of [0]s, cut before it said why.
  it("data nested deeper than the host's stack reads, under a raised maxNestingDepth, is nesting_too_deep with a short message", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const limits = { maxNestingDepth: 1_000_000 };
    for (const isolation of ["none", "worker"] as const) {
      for (const run of [() => evaluate("(count data/x)", { ctx: { x: deep }, limits, isolation }), () => evaluate("(try (count (tool/t)) (catch e :caught))", { tools: { t: () => deep }, limits, isolation })]) {
        const r = await run();
        expect(r.ok ? r.value : r.error.kind).toBe("nesting_too_deep");
        // resolveLimits caps maxNestingDepth at 500 (7afb440): the cap is met before the stack gives out.
        expect(!r.ok && r.error.message).toMatch(/^data nested deeper than 500 levels cannot cross into the program/);
      }
    }
  });

  it("a shared part met again deeper down is nested as deep as it unfolds: the depth limit holds", async () => {
    // Each layer wraps the one before in 250 objects, and the root meets every layer first near
    // the top: unfolded, layer k is 250 × k deep, though no walk from the root below a layer's
    // own 250 goes deeper than that unless the shared layers count their depth again.
    const layers: unknown[] = [];
    let layer: unknown = { leaf: 1 };
    for (let k = 0; k < 3; k++) {
      for (let i = 0; i < 250; i++) layer = { d: layer };
      layers.push(layer);
    }
    for (const run of [(x: unknown) => evaluate("(count data/x)", { ctx: { x } }), (x: unknown) => evaluate("(count (tool/t))", { tools: { t: () => x } })]) {
      const r = await run(layers);
      expect(!r.ok && r.error.kind).toBe("nesting_too_deep");
      expect(!r.ok && r.error.message).toContain("cannot cross into the program");
    }
    // Met again at the depth it was first met, a shared part is taken.
    const part = layers[0];
    const ok = await evaluate("(count data/x)", { ctx: { x: [part, part] } });
    expect(ok.ok && ok.value).toBe(2);
  });

  // Host data whose reading is slow (getters, Proxy traps): each read takes a virtual
  // millisecond, so the walk can stop near its limit only if it reads the clock as it goes, and
  // more often when reads are slow than the every-4,096-values pace cheap data allows.
  const slowReads = (clock: ReturnType<typeof virtualClock>, n: number): { value: Record<string, number>; reads: () => number } => {
    let reads = 0;
    const value: Record<string, number> = {};
    for (let i = 0; i < n; i++) Object.defineProperty(value, `k${i}`, { enumerable: true, get: () => (clock.advance(1), ++reads) });
    return { value, reads: () => reads };
  };

  it("a context value whose reads are slow stops with timeout near the limit, not after all of them", async () => {
    const clock = virtualClock(0);
    const slow = slowReads(clock, 3000);
    const r = await evaluate("(count data/slow)", { ctx: { slow: slow.value }, clock: clock.now, limits: { timeoutMs: 100 } });
    expect(r.ok ? "ok" : r.error.kind).toBe("timeout");
    expect(slow.reads()).toBeLessThanOrEqual(200);
  });

  it("many small context values read one after another share the run's clock", async () => {
    const clock = virtualClock(0);
    const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    const ctx: Record<string, unknown> = {};
    let reads = 0;
    for (const k of keys) ctx[k] = slowReads(clock, 1).value;
    const counted = new Proxy(ctx, { get: (t, k) => (reads++, Reflect.get(t, k)) });
    const r = await evaluate(`(+ ${keys.map((k) => `(count data/${k})`).join(" ")})`, { ctx: counted, clock: clock.now, limits: { timeoutMs: 100 } });
    expect(r.ok ? "ok" : r.error.kind).toBe("timeout");
    expect(reads).toBeLessThanOrEqual(200);
  });
});

describe("heavy builtins check the clock (property)", () => {
  // Each of these spent seconds in one call under a 1 s limit before checking the clock inside
  // its loop. With virtual time (a millisecond per check of the clock) the timeout can fire
  // inside the call only if the call checks the clock as it goes.
  const heavy = ["frequencies", "(partial group-by identity)", "(partial into #{})", "set", "distinct"];
  it("a timeout fires inside one big builtin call", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...heavy), fc.integer({ min: 600_000, max: 900_000 }), async (f, n) => {
        const setup = await evaluate(`(count (map str (range ${n})))`, { limits: { timeoutMs: 1e9, maxFuel: 1e12 }, clock: virtualClock(1).now });
        const r = await evaluate(`(count (${f} (map str (range ${n}))))`, { limits: { timeoutMs: setup.stats.durationMs + 100, maxFuel: 1e12 }, clock: virtualClock(1).now });
        expect(!r.ok && r.error.kind).toBe("timeout");
      }),
      { numRuns: 5 },
    );
  });

  // Higher-order builtins given a builtin (no closure whose calls read the clock): the builtin's
  // own loop must read it. 300,000 elements leave room for 73 reads at one per 4,096.
  const builtinSteps = [
    "(reduce + data/xs)", "(reduce max data/xs)", "(reduce conj [] data/xs)", "(reduce + 0 data/xs)", "(reduce-kv assoc {} (zipmap data/xs data/xs))",
    "(mapv inc data/xs)", "(map inc data/xs)", "(filter odd? data/xs)", "(remove odd? data/xs)", "(keep identity data/xs)", "(map-indexed vector data/xs)",
    "(some neg? data/xs)", "(every? int? data/xs)", "(reductions + data/xs)", "(group-by odd? data/xs)", "(partition-by odd? data/xs)", "(take-while int? data/xs)",
    "(drop-while int? data/xs)", "(sort-by - data/xs)", "(mapcat vector data/xs)", "(map + data/xs data/xs)", "(run! identity data/xs)", "(into [] (map inc) data/xs)",
    "(transduce (map inc) + data/xs)", "(split-with int? data/xs)",
  ];
  it.each(builtinSteps)(
    "a timeout fires inside %s over 300,000 elements",
    async (src) => {
      const xs = Array.from({ length: 300_000 }, (_, i) => i);
      const setup = await evaluate("(count data/xs)", { ctx: { xs }, limits: { timeoutMs: 1e9, maxFuel: 1e12 }, clock: virtualClock(1).now });
      const r = await evaluate(`(nil? ${src})`, { ctx: { xs }, limits: { timeoutMs: setup.stats.durationMs + 50, maxFuel: 1e12 }, clock: virtualClock(1).now });
      expect(r.ok ? "ok" : r.error.kind).toBe("timeout");
    },
  );

  // Each charges fuel for the elements it goes through before (or while) doing the work, so a
  // small fuel budget stops one call over a big input at once rather than after the work.
  const charging = [
    "frequencies", "(partial group-by identity)", "(partial into #{})", "set", "distinct", "sort", "(partial sort-by identity)", "reverse",
    "(partial apply str)", "(partial clojure.string/join \",\")", "flatten", "(partial partition 2)", "dedupe", "(partial mapv identity)",
    "(partial into [])", "(partial reduce max)", "(partial apply hash-map)", "(partial map-indexed vector)", "(partial partition-by count)", "(partial apply merge [{}])",
  ];
  it("fuel runs out inside one big builtin call, before the work is done", async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...charging), fc.integer({ min: 150_000, max: 300_000 }), fc.integer({ min: 20_000, max: 120_000 }), async (f, n, fuel) => {
        const xs = Array.from({ length: n }, (_, i) => String(i % 50_000));
        const r = await evaluate(`(count (${f} data/xs))`, { ctx: { xs }, limits: { maxFuel: fuel, timeoutMs: 60_000 } });
        expect(!r.ok && r.error.kind).toBe("fuel_exhausted");
        expect(r.stats.fuelUsed).toBe(fuel);
      }),
      { numRuns: 15 },
    );
  });
});
