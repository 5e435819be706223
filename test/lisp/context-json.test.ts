// A context given as JSON text (`ctxJson`, `ptc eval --ctx`) is read by the run, where its
// limits hold: scanned before it is parsed, so a collection over maxCollectionSize is refused
// without building it, the clock can stop the read, and in the worker mode the host only
// posts the text. None of these depends on the machine's speed: sizes, an injected clock, and
// which thread parses.
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runEvalCommand } from "../../src/cli/eval.js";
import { contextJsonProblem, parseContextJson } from "../../src/lisp/context-json.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { rng } from "../support/rng.js";

const keys = (n: number): Record<string, number> => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

afterEach(() => {
  vi.restoreAllMocks();
});

describe("ctxJson", () => {
  it("reads as the same context as ctx: key order, escapes, __proto__, collections at the limit", async () => {
    const ctx = { b: 1, a: { "q\"uote\\d": [1, 2, 3], __proto__x: null }, list: [[1], [2, [3]]], s: "x,y:[{", full: keys(10) };
    const text = JSON.stringify(ctx).replace('"b":1', '"b":1,"__proto__":{"p":1}');
    const source = "[(keys data/a) data/list data/s (count data/full) (keys data/__proto__) (vec (keys data/full))]";
    const fromText = await evaluate(source, { ctxJson: text, limits: { maxCollectionSize: 10 } });
    const fromObject = await evaluate(source, { ctx: JSON.parse(text) as Record<string, unknown>, limits: { maxCollectionSize: 10 } });
    expect(fromText.ok && fromObject.ok).toBe(true);
    expect(fromText.ok && fromText.value).toEqual(fromObject.ok && fromObject.value);
  });

  it("refuses a collection over maxCollectionSize without parsing it, where the program reads it", async () => {
    const text = JSON.stringify({ x: { deep: [keys(3), Array.from({ length: 11 }, (_, i) => i)] }, y: [1, 2], z: keys(10) });
    const parse = vi.spyOn(JSON, "parse");
    const ctx = parseContextJson(text, undefined, { maxCollectionSize: 10 }, () => undefined);
    // The text JSON.parse saw had data/x cut out: the 11 elements were never built.
    expect(parse.mock.calls.some(([t]) => typeof t === "string" && t.includes("10]"))).toBe(false);
    expect(Object.keys(ctx)).toEqual(["x", "y", "z"]);
    const limits = { maxCollectionSize: 10 };
    const other = await evaluate("[data/y (count data/z)]", { ctxJson: text, limits });
    expect(other.ok && other.value).toEqual([[1, 2], 10]);
    const read = await evaluate("(count data/x)", { ctxJson: text, limits });
    expect(read.ok).toBe(false);
    if (!read.ok) {
      expect(read.error.kind).toBe("collection_too_large");
      expect(read.error.message).toBe("data/x holds a collection of more than 10 elements, over the limit of 10 (maxCollectionSize)");
    }
  });

  it("cuts exactly the top-level values holding a collection over the limit (2,000 generated texts)", () => {
    const next = rng(19);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
    // Strings full of what the scan must not take for structure: quotes, escapes, brackets, commas, colons.
    const str = (): string => Array.from({ length: Math.floor(next() * 6) }, () => pick(['"', "\\", "\\\"", "[", "]", "{", "}", ",", ":", "a", " ", "\u00e9"])).join("");
    const value = (depth: number): unknown => {
      const r = next();
      if (depth > 3 || r < 0.4) return pick([1, -2.5e3, true, false, null, str()]);
      const n = Math.floor(next() * 7);
      if (r < 0.7) return Array.from({ length: n }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: n }, (_, i) => [str() + i, value(depth + 1)]));
    };
    const over = (v: unknown, max: number): boolean => {
      if (v === null || typeof v !== "object") return false;
      const items = Array.isArray(v) ? v : Object.values(v);
      return items.length > max || items.some((x) => over(x, max));
    };
    let cut = 0;
    for (let i = 0; i < 2000; i++) {
      const obj = Object.fromEntries(Array.from({ length: 1 + Math.floor(next() * 4) }, (_, k) => [str() + k, value(0)]));
      const text = i % 2 === 0 ? JSON.stringify(obj) : JSON.stringify(obj, null, 2);
      const max = 1 + Math.floor(next() * 5);
      const ctx = parseContextJson(text, undefined, { maxCollectionSize: max }, () => undefined);
      expect(Object.keys(ctx)).toEqual(Object.keys(obj));
      for (const [k, v] of Object.entries(obj)) {
        if (over(v, max)) {
          cut++;
          expect(() => ctx[k], `${text} key ${k} max ${max}`).toThrow(/more than/);
        } else expect(ctx[k], `${text} key ${k} max ${max}`).toEqual(v);
      }
    }
    // Both sides of the limit are met often.
    expect(cut).toBeGreaterThan(300);
    expect(cut).toBeLessThan(4000);
  });

  it("stops the read at the time limit on the run's clock, before parsing", async () => {
    const text = JSON.stringify({ x: Array.from({ length: 40_000 }, (_, i) => i) });
    let t = 0;
    // Every reading of the clock is a second later: the scan's first check is past the limit.
    const clock = (): number => (t += 1000);
    const parse = vi.spyOn(JSON, "parse");
    const r = await evaluate("(count data/x)", { ctxJson: text, clock, limits: { timeoutMs: 1500 } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.kind).toBe("timeout");
      expect(r.error.message).toMatch(/^reading the context \(ctxJson\) took longer than the time limit of 1500 ms/);
    }
    expect(parse.mock.calls.some(([s]) => s === text)).toBe(false);
  });

  it("says what is wrong with text that is not a JSON object, and where: line and column", async () => {
    const bad = await evaluate("1", { ctxJson: "{oops" });
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.error.kind).toBe("value_error");
      expect(bad.error.message).toBe("ctxJson is not valid JSON: Expected property name or '}' at line 1, column 2");
      expect(contextJsonProblem(bad.error)).toMatch(/^ is not valid JSON: /);
    }
    const arr = await evaluate("1", { ctxJson: "[1]", isolation: "worker" });
    expect(!arr.ok && arr.error.message).toBe('ctxJson must be a JSON object such as {"orders": [...]}, got an array');
    const both = await evaluate("1", { ctx: {}, ctxJson: "{}" });
    expect(!both.ok && both.error.message).toBe("give either ctx or ctxJson, not both");
    expect(contextJsonProblem({ kind: "value_error", message: "count takes a collection" })).toBeNull();
  });

  // JSON has no infinity: a number past the largest double read as ##Inf, silently (1e999, or 400 digits).
  it("refuses a number too large for a double, and says where, in process, in a worker and from ptc eval", async () => {
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("data/x", { ctxJson: '{"s": "1e999 in a string", "ok": [1e308, 1e-999, 12e-400],\n "x": [1, -1e999]}', isolation });
      expect([isolation, !r.ok && r.error.kind, !r.ok && r.error.message]).toEqual([isolation, "value_error", "ctxJson is not valid JSON: a number too large for a double (JSON has no infinity) at line 2, column 11"]);
    }
    const digits = await evaluate("data/x", { ctxJson: `{"x": ${"9".repeat(400)}}` });
    expect(!digits.ok && digits.error.message).toBe("ctxJson is not valid JSON: a number too large for a double (JSON has no infinity) at line 1, column 7");
    const fine = await evaluate("[data/a data/b]", { ctxJson: '{"a": 1.7976931348623157e308, "b": 1e-999}' });
    expect(fine.ok && fine.value).toEqual([1.7976931348623157e308, 0]);
    let stderr = "";
    const code = await runEvalCommand(["--ctx", '{"x": 1e999}', "-e", "data/x"], { stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: (s: string) => (stderr += s) } });
    expect([code, stderr.split("\n")[0]]).toEqual([2, "ptc eval: --ctx is not valid JSON: a number too large for a double (JSON has no infinity) at line 1, column 7"]);
  });

  // Text opening with a byte order mark (a file saved by some editors, read by the host as a
  // string) failed with V8's own words and no place: "Unexpected token '\ufeff'". The mark is
  // dropped as it is when a file's bytes are decoded; anywhere else U+FEFF is a character.
  it("reads text that opens with a byte order mark, in process and in a worker", async () => {
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate("[data/a (count data/big)]", { ctxJson: '\ufeff{"a": 1, "big": [1, 2, 3]}', isolation, limits: { maxCollectionSize: 3 } });
      expect(r.ok && r.value).toEqual([1, 3]);
      const over = await evaluate("data/a", { ctxJson: '\ufeff{"a": 1, "big": [1, 2, 3, 4]}', isolation, limits: { maxCollectionSize: 3 } });
      expect(over.ok && over.value).toBe(1);
    }
    const late = await evaluate("1", { ctxJson: `{"padding": "${"p".repeat(30)}",\n"a": \ufeff1, "more": "${"m".repeat(30)}"}` });
    expect(!late.ok && late.error.message).toMatch(/^ctxJson is not valid JSON: .* at line 2, column 6$/);
  });

  it("in the worker mode the host posts the text and the worker parses it; ptc eval passes it so", async () => {
    const text = JSON.stringify({ order: { id: 7, items: [1, 2, 3] }, _token: "hidden-value-1234" });
    const parse = vi.spyOn(JSON, "parse");
    const r = await evaluate("[(:id data/order) (count (:items data/order))]", { ctxJson: text, isolation: "worker" });
    expect(r.ok && r.value).toEqual([7, 3]);
    let out = "";
    let err = "";
    const code = await runEvalCommand(["-e", "(count (:items data/order))", "--ctx", text], { stdin: new PassThrough(), stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
    expect([code, out, err]).toEqual([0, "3\n", ""]);
    expect(parse.mock.calls.some(([s]) => s === text)).toBe(false);
  });
});
