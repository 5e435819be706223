// A preview (an error message's quote of a value, a thrown collection's message, a sample in a
// prompt) shows a few dozen characters of a value: it must not read all of a long string or
// keyword it holds to do so. Quoting a 1M-character string inside a map took about a millisecond
// and no fuel, so (dotimes [i 5000] (try (+ {s 1} 1) (catch Exception e 1))) ran 6.3 s between two
// reads of the clock under a 1,000 ms limit. What quoting reads is counted here (String#replace
// is how quoteString escapes), never timed.
import { afterEach, describe, expect, it, vi } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { printSample } from "../../src/lisp/printer.js";
import { keyword, LMap, type Value } from "../../src/lisp/values.js";
import { Vec } from "../../src/lisp/vector.js";

const LONG = 1_000_000;

/** Characters String#replace went through while `f` ran. */
function replaced(f: () => unknown): number {
  const spy = vi.spyOn(String.prototype, "replace");
  try {
    f();
    return spy.mock.contexts.reduce((n: number, s) => n + String(s).length, 0);
  } finally {
    spy.mockRestore();
  }
}

describe("limits: previews of values holding long text", () => {
  afterEach(() => vi.restoreAllMocks());

  it("a sample quotes only the part of a long string it shows", () => {
    const s = "a".repeat(LONG);
    for (const v of [Vec.fromArray<Value>([s]), LMap<Value, Value>().set(s, 1), LMap<Value, Value>().set(keyword("k"), s)]) {
      let text = "";
      expect(replaced(() => (text = printSample(v, { maxChars: 40, maxItems: 4 }).text))).toBeLessThan(100);
      expect(text).toMatch(/"a+\.\.\."/);
      expect(text.length).toBeLessThanOrEqual(60);
    }
    // Whole when it fits, escaped as before.
    expect(printSample(Vec.fromArray(['a"b']), { maxChars: 40 }).text).toBe('["a\\"b"]');
  });

  it("a sample reads only the start of a long keyword's name", () => {
    // The name's form (:name or (keyword "...")) was decided by matching all of it.
    const spy = vi.spyOn(RegExp.prototype, "test");
    const k = keyword("k".repeat(LONG));
    const text = printSample(Vec.fromArray([k]), { maxChars: 40 }).text;
    const read = spy.mock.calls.reduce((n, [s]) => n + String(s).length, 0);
    expect(read).toBeLessThan(100);
    expect(text).toMatch(/^\[:k+\.\.\.\]$/);
    expect(printSample(Vec.fromArray([keyword("Order ID")]), { maxChars: 40 }).text).toBe('[(keyword "Order ID")]');
  });

  it("an error quoting a collection that holds a long string reads no more of it", async () => {
    const ctx = { s: "a".repeat(LONG) };
    const spy = vi.spyOn(String.prototype, "replace");
    const r = await evaluate("(+ {data/s 1} 1)", { ctx });
    const read = spy.mock.contexts.reduce((n: number, s) => n + String(s).length, 0);
    spy.mockRestore();
    expect(!r.ok && r.error.message).toMatch(/^\+ expects numbers, got map \{"a+\.\.\."/);
    expect(read).toBeLessThan(LONG);
  });
});
