import { constants } from "node:buffer";
import { describe, expect, it } from "vitest";
import { evaluate, type EvaluateOptions } from "../../src/lisp/evaluate.js";
import { formatError } from "../../src/lisp/errors.js";
import { resolveLimits } from "../../src/lisp/limits.js";

function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}

// evaluate never throws and resolves to an EvalResult: input of the wrong type is a value_error naming it, not a raw TypeError.
describe("evaluate given input of the wrong type", () => {
  it.each([
    ["a source that is not a string", 5, {}, "the source must be a string, got number"],
    ["no source", undefined, {}, "the source must be a string, got undefined"],
    ["options that are not an object", "1", null, "the options must be an object, got null"],
    ["memory that is not a Map", "1", { memory: 5 }, "memory must be a Map of definitions (an EvalResult's memory), got number"],
    ["a clock that is not a function", "1", { clock: 5 }, "clock must be a function returning milliseconds, got number"],
    ["ctxJson that is not text", "data/a", { ctxJson: 5 }, "ctxJson must be a string of JSON, got number"],
    ["a null ctx", "1", { ctx: null }, "ctx must be an object of key → data, got null"],
    ["a ctx that is text", "data/a", { ctx: "abc" }, "ctx must be an object of key → data, got string"],
    ["a ctx that is an array", "data/a", { ctx: [1] }, "ctx must be an object of key → data, got an array"],
    ["a revoked Proxy as ctx", "data/a", { ctx: revoked() }, "ctx must be an object of key → data, got one that cannot be read"],
    ["callerHidden that is one object", "1", { callerHidden: { _k: 1 } }, "callerHidden must be an array of objects of key → data, got object"],
    ["callerHidden holding text", "1", { callerHidden: [{ _k: 1 }, "abc"] }, "callerHidden must be an array of objects of key → data, got string"],
    // A signal without its methods failed the run as internal_error, and in the worker mode a listener's removal threw later, unhandled: a crash.
    ["a signal that is not an AbortSignal", "1", { signal: {} }, "signal must be an AbortSignal"],
    ["a signal that is not an AbortSignal, in a worker", "1", { signal: "x", isolation: "worker" }, "signal must be an AbortSignal"],
    // Taken as given, a negative or textual timeout timed every tool call out at once ("no answer within -5 ms").
    ["a negative tool timeout", "1", { toolTimeoutMs: -5 }, "toolTimeoutMs must be a positive number (or Infinity), got -5"],
    ["a tool timeout that is text", "1", { toolTimeoutMs: "5" }, "toolTimeoutMs must be a positive number (or Infinity), got 5"],
    // Entries made by hand: null threw a raw TypeError; plain host data read as #unknown (#fn[x] in a worker); a host function, in a worker, threw a DOMException.
    ["a memory entry that is null", "x", { memory: new Map([["x", null]]) }, 'memory entry "x" is not a definition from an EvalResult\'s memory (or restoreMemory\'s)'],
    ["a memory entry holding host data", "x", { memory: new Map([["x", { value: [1, 2, 3] }]]) }, 'memory entry "x" is not a definition from an EvalResult\'s memory (or restoreMemory\'s)'],
    // What a host hands on by hand: a search for it, and marking what quotes it, would fail deep inside.
    ["handed that is not a list", "1", { handed: "K7Z2Q9-B3M8X" }, "handed must be what an EvalResult's handed holds (a list of [text, origin] pairs)"],
    ["handed texts without origins", "1", { handed: [["K7Z2Q9-B3M8X", null]] }, "handed must be what an EvalResult's handed holds (a list of [text, origin] pairs)"],
    ["a memory entry holding a host function, in a worker", "(x)", { memory: new Map([["x", { value: () => 1 }]]), isolation: "worker" }, 'memory entry "x" is not a definition from an EvalResult\'s memory (or restoreMemory\'s)'],
  ])("%s", async (_what, source, options, message) => {
    const result = await evaluate(source as string, options as EvaluateOptions);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ kind: "value_error", message });
  });
});

// formatError is public: a host that passes what is not an EvalResult's error (the result itself
// when it is ok, so no error) got "Cannot read properties of null (reading 'line')", or for a
// number the text "undefined: undefined".
describe("formatError given what is not an error", () => {
  it.each([
    ["null", null, "got null"],
    ["undefined (an ok result's error)", undefined, "got undefined"],
    ["a number", 42, "got number"],
    ["a string", "oops", "got string"],
    ["an object without kind and message", {}, "got an object without them"],
  ])("%s", (_what, value, got) => {
    expect(() => formatError(value as never)).toThrow(new TypeError(`formatError: error must be an EvalResult's error (with kind and message), ${got}`));
  });
});

// A clock reading that is not a finite number made every deadline comparison false: the run
// went on with no time limit (NaN, text, undefined, Infinity ran 300,000 iterations past a
// 100 ms limit the same clock counting normally stops at once). Now the run stops, whatever
// the program catches.
describe("evaluate given a clock that reads what is not a finite number", () => {
  const source = "(try (loop [i 0] (if (< i 300000) (recur (inc i)) i)) (catch e :caught))";
  const limits = { timeoutMs: 100, maxFuel: 1e9, maxLoopIterations: 1e9 };
  const badClock = (reading: unknown, goodReadings: number): (() => number) => {
    let n = 0;
    return () => (n++ < goodReadings ? n : reading) as number;
  };
  it.each([
    ["NaN", NaN, "NaN"],
    ["text", "5", "string"],
    ["undefined", undefined, "undefined"],
    ["Infinity", Infinity, "Infinity"],
    ["null", null, "null"],
  ])("%s from the first reading, or once the program runs", async (_what, reading, got) => {
    for (const good of [0, 3]) {
      const result = await evaluate(source, { clock: badClock(reading, good), limits });
      expect(result.ok).toBe(false);
      if (!result.ok) {
        expect(result.error).toMatchObject({ kind: "internal_error", message: `the host's clock returned ${got}, not a finite number of milliseconds: the time limit cannot be kept` });
        expect(Number.isFinite(result.stats.durationMs)).toBe(true);
      }
    }
  });

  it("a clock that counts normally still times the same program out", async () => {
    let t = 0;
    const result = await evaluate(source, { clock: () => (t += 1000), limits });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.kind).toBe("timeout");
  });
});

// A fuel budget a double cannot count down by one (past 2^53: 1e17, Infinity) never reached the
// checkpoint that reads the clock and the abort signal: a program ran with no time limit at all
// (an endless loop under timeoutMs 500 hung the host's thread). The budget is now counted exactly.
describe("evaluate given a fuel budget past what a double counts one by one", () => {
  const source = "(loop [i 0] (if (< i 1000000) (recur (inc i)) i))";
  it.each([1e17, 2 ** 60, Infinity])("maxFuel %d still times the program out, its fuel a count", async (maxFuel) => {
    // One ms a reading: the checkpoints (every 10,000 steps) reach 50 long before the loop ends.
    let t = 0;
    const result = await evaluate(source, { clock: () => ++t, limits: { timeoutMs: 50, maxFuel, maxLoopIterations: 1e9 } });
    expect(result.ok ? "ok" : result.error.kind).toBe("timeout");
    expect(Number.isSafeInteger(result.stats.fuelUsed)).toBe(true);
  });

  it("the budget is the largest a double counts exactly", () => {
    expect(resolveLimits({ maxFuel: Infinity, maxLoopIterations: 1e300 })).toMatchObject({ maxFuel: Number.MAX_SAFE_INTEGER, maxLoopIterations: Number.MAX_SAFE_INTEGER });
  });
});

// A string limit past the longest string the engine makes (2^29-24 characters in V8) let a
// program reach the engine's own RangeError: internal_error "Invalid string length", with no
// position. The limit is now at most that length, so the program's own check says where.
describe("evaluate given a string limit past the engine's longest string", () => {
  it.each([2e9, Infinity])("maxStringLength %d: doubling a string fails with string_too_large where it is built", async (maxStringLength) => {
    const result = await evaluate('(loop [s "x"] (recur (str s s)))', { limits: { maxStringLength, timeoutMs: 60_000 } });
    expect(result.ok ? "ok" : [result.error.kind, result.error.line, result.error.column]).toEqual(["string_too_large", 1, 22]);
  });

  // Three strings of 2^28 characters (ropes: cheap) joined past the engine's longest string.
  const big = '(loop [s "x" i 0] (if (< i 28) (recur (str s s) (inc i)) s))';
  it.each([
    ["str", "(str b b b)"],
    ["join", '(clojure.string/join "," [b b])'],
    ["format", '(format "%s%s%s" b b b)'],
    ["replace-first", '(clojure.string/replace-first (str b "q") "q" b)'],
  ])("%s past the engine's longest string fails with string_too_large where it is called", async (_what, call) => {
    const result = await evaluate(`(let [b ${big}]\n${call})`, { limits: { maxStringLength: Infinity, timeoutMs: 60_000 } });
    expect(result.ok ? "ok" : [result.error.kind, result.error.line]).toEqual(["string_too_large", 2]);
  });

  it("the limit is the engine's longest string", () => {
    expect(resolveLimits({ maxStringLength: Infinity }).maxStringLength).toBe(constants.MAX_STRING_LENGTH);
  });
});

// A collection limit past 2^24 let frequencies, distinct and group-by index more elements than a JS
// Map holds: (frequencies (range 16777217)) failed after 26 s with internal_error "Map maximum size
// exceeded". The limit is now at most 2^24, so range refuses the collection where it is built.
describe("evaluate given a collection limit past what a JS Map holds", () => {
  it("the limit is 2^24, and a larger collection is refused where it is built", async () => {
    expect(resolveLimits({ maxCollectionSize: Infinity }).maxCollectionSize).toBe(2 ** 24);
    const result = await evaluate("(count\n(frequencies (range 16777217)))", { limits: { maxCollectionSize: Infinity, timeoutMs: 120_000 } });
    expect(result.ok ? "ok" : [result.error.kind, result.error.line]).toEqual(["collection_too_large", 2]);
  });
});

// Host code among the options (a getter, a Proxy trap) that threw gave internal_error quoting the
// host's message ("internal error: sk-secret ..."); the option is now named, its message left out.
describe("evaluate given options whose reading throws", () => {
  const boom = () => {
    throw new Error("sk-secret-7f3a");
  };
  const getter = (o: object, key: string): object => Object.defineProperty(o, key, { get: boom, enumerable: true });
  it.each([
    ["tools whose keys cannot be listed", { tools: new Proxy({}, { ownKeys: boom }) }, "tools"],
    ["a tool behind a getter", { tools: getter({}, "t") }, "tools"],
    ["a tool whose run is a getter", { tools: { t: getter({}, "run") } }, "tool/t"],
    ["a tool whose run is a getter, in a worker", { tools: { t: getter({}, "run") }, isolation: "worker" }, "tool/t"],
    ["limits with a getter", { limits: getter({}, "timeoutMs") }, "limits"],
    ["limits whose keys cannot be listed", { limits: new Proxy({}, { ownKeys: boom }) }, "limits"],
    ["isolation with a getter", { isolation: getter({ mode: "worker" }, "maxHeapMb") }, "isolation"],
    ["an isolation option behind a getter", getter({}, "isolation"), "options.isolation"],
    ["options that are a throwing Proxy", new Proxy({}, { get: boom }), "options.ctx"],
  ])("%s", async (_what, options, named) => {
    const result = await evaluate("1", options as EvaluateOptions);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.error).toMatchObject({ kind: "value_error", message: `${named} could not be read (reading it threw)` });
      expect(JSON.stringify(result)).not.toContain("sk-secret");
    }
  });
});
