// A builtin that cuts a text into pieces (split, split-lines, replace, seq, escape, reverse,
// printed lines) counts them against the limits before it makes them: under raised limits, the
// engine's split of a 2^28-character text made an array past the longest V8 holds and aborted the
// whole process, past any catching. Here the limits are small and the engine's split is watched:
// it is never asked for more pieces than the limit (or a chunk) holds.
import { spawnSync } from "node:child_process";
import { afterEach, describe, expect, it, vi } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { CHUNK } from "../../src/lisp/limits.js";

/** The most pieces one String.prototype.split call made while `f` ran. */
async function mostPieces<T>(f: () => Promise<T>): Promise<[T, number]> {
  let most = 0;
  const original = String.prototype.split;
  vi.spyOn(String.prototype, "split").mockImplementation(function (this: string, ...args: Parameters<typeof original>) {
    const out = original.apply(this, args);
    most = Math.max(most, out.length);
    return out;
  } as typeof original);
  return [await f(), most];
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** A program: (x1024 "u") is u 1,024 times, built by doubling (no collection of that many elements). */
const program = (call: string): string => `(let [x1024 (fn [u] (loop [s u i 0] (if (< i 10) (recur (str s s) (inc i)) s)))]\n${call})`;

const outcome = (r: Awaited<ReturnType<typeof evaluate>>): unknown => (r.ok ? r.value : [r.error.kind, r.error.line, r.error.column]);

describe("builtins cutting a text count its pieces before making them", () => {
  const limits = { maxCollectionSize: 10, maxStringLength: 100_000 };
  it.each([
    ["split at a string, over the limit", '(clojure.string/split (x1024 "a,") ",")', ["collection_too_large", 2, 1]],
    ["split at a string, the trailing empty pieces dropped", '(count (clojure.string/split (str "a,b" (x1024 ",")) ","))', 2],
    ["split at a string, only separators", '(count (clojure.string/split (x1024 ",") ","))', 0],
    ["split at a string with a limit", '(count (last (clojure.string/split (x1024 "a,") "," 3)))', 2044],
    ["split into characters, over the limit", '(clojure.string/split (x1024 "a") "")', ["collection_too_large", 2, 1]],
    ["split-lines, over the limit", '(clojure.string/split-lines (x1024 "a\\n"))', ["collection_too_large", 2, 1]],
    ["split-lines, only newlines", '(count (clojure.string/split-lines (x1024 "\\n")))', 0],
    ["split-lines, only CRLF newlines", '(count (clojure.string/split-lines (x1024 "\\r\\n")))', 0],
    ["split-lines, the trailing empty lines dropped", '(clojure.string/split-lines (str "a\\r\\nb" (x1024 "\\r\\n")))', ["a", "b"]],
    ["replace every match", '(count (clojure.string/replace (x1024 "a,") "," ""))', 1024],
    ["replace every match, growing", '(count (clojure.string/replace (x1024 "a,") "," ";;"))', 3072],
  ])("%s", async (_what, call, expected) => {
    const [result, most] = await mostPieces(() => evaluate(program(call), { limits }));
    expect(outcome(result)).toEqual(expected);
    expect(most).toBeLessThanOrEqual(limits.maxCollectionSize);
  });

  it("a replacement past the string limit fails where it is called", async () => {
    const [result, most] = await mostPieces(() => evaluate(program('(clojure.string/replace (x1024 "a,") "," ";;")'), { limits: { maxCollectionSize: 10, maxStringLength: 2500 } }));
    expect(outcome(result)).toEqual(["string_too_large", 2, 1]);
    expect(most).toBeLessThanOrEqual(10);
  });

  it.each([
    ["escape", `(count (clojure.string/escape (apply str (repeat ${3 * CHUNK} "ab")) {\\a "xy"}))`, 9 * CHUNK],
    ["reverse", `(subs (clojure.string/reverse (str "abc" (apply str (repeat ${3 * CHUNK} "é")))) ${3 * CHUNK})`, "cba"],
    ["printed lines", `(do (print (apply str (repeat ${3 * CHUNK} "a\\n"))) 1)`, 1],
  ])("%s walks the text a chunk at a time", async (_what, call, expected) => {
    const [result, most] = await mostPieces(() => evaluate(call, { limits: { maxStringLength: 1e7, maxOutputChars: 100 } }));
    expect(outcome(result)).toEqual(expected);
    expect(most).toBeLessThanOrEqual(CHUNK);
  });

  // A chunk ends inside each emoji's pair of halves here: neither half is escaped as a lone one.
  it("pr-str escapes a text a chunk at a time", async () => {
    let most = 0;
    const original = String.prototype.replace;
    vi.spyOn(String.prototype, "replace").mockImplementation(function (this: string, pattern: unknown, f: unknown) {
      let n = 0;
      const counted = typeof f === "function" ? (...a: unknown[]) => (n++, (f as (...b: unknown[]) => string)(...a)) : f;
      const out = (original as (p: unknown, r: unknown) => string).call(this, pattern, counted);
      most = Math.max(most, n);
      return out;
    } as typeof original);
    const result = await evaluate(`(count (pr-str (str "a" (apply str (repeat ${3 * CHUNK} "\\"\\n😀")))))`, { limits: { maxStringLength: 1e7 } });
    expect(outcome(result)).toBe(3 + 15 * CHUNK);
    expect(most).toBeLessThanOrEqual(CHUNK);
  });

  it("pr-str of a text whose escapes pass the string limit fails where it is called", async () => {
    const result = await evaluate(`(let [q (apply str (repeat ${3 * CHUNK} "\\""))]\n(pr-str q))`, { limits: { maxStringLength: 4 * CHUNK } });
    expect(outcome(result)).toEqual(["string_too_large", 2, 1]);
  });

  it("in a worker the same split fails with the same error", async () => {
    const result = await evaluate(program('(clojure.string/split (x1024 "a,") ",")'), { limits, isolation: "worker" });
    expect(outcome(result)).toEqual(["collection_too_large", 2, 1]);
  });
});

// The real thing, in a child process (it aborted the process): a text of 2^27 characters (128 MB)
// made into its characters. Skipped where that much memory is not to be had.
const bigMemory = (await import("node:os")).freemem() > 2 ** 31;
describe.skipIf(!bigMemory)("a text past the engine's longest array", () => {
  it("(seq text) fails with collection_too_large instead of aborting the process", () => {
    const program = '(let [b (loop [s "x" i 0] (if (< i 27) (recur (str s s) (inc i)) s))]\n(count (seq b)))';
    const script = `import { evaluate } from ${JSON.stringify(new URL("../../src/lisp/evaluate.ts", import.meta.url).pathname)};
const r = await evaluate(${JSON.stringify(program)}, { limits: { maxStringLength: Infinity, maxCollectionSize: Infinity, timeoutMs: 120000 } });
console.log(JSON.stringify(r.ok ? "ok" : [r.error.kind, r.error.line]));`;
    const child = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { encoding: "utf8", timeout: 240_000 });
    expect(child.stdout.trim()).toBe(JSON.stringify(["collection_too_large", 2]));
    expect(child.status).toBe(0);
  }, 300_000);
});
