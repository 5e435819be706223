// Hostile source text: deep nesting, huge literals, unterminated input. The reader rejects
// it with a position instead of recursing into the host stack.
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { edn, failure, virtualClock } from "../support/run.js";

describe("limits: source text", () => {
  it("100k nested vectors in source are rejected by the nesting limit", async () => {
    const src = "[".repeat(100_000) + "]".repeat(100_000);
    const e = await failure(src);
    expect(e.error.kind).toBe("nesting_too_deep");
    expect(e.error.line).toBe(1);
  });

  it("deeply nested calls are rejected too", async () => {
    const e = await failure("(inc ".repeat(5_000) + "0" + ")".repeat(5_000));
    expect(e.error.kind).toBe("nesting_too_deep");
  });

  it("nesting within the limit is fine", async () => {
    const e = await failure("[".repeat(300) + "]".repeat(300), { limits: { maxNestingDepth: 100 } });
    expect(e.error.kind).toBe("nesting_too_deep");
  });

  it("a chain of #_ discards is bounded by the nesting limit, with its position", async () => {
    const e = await failure("1\n" + "#_ ".repeat(20_000) + "1 ".repeat(20_000) + "2");
    expect(e.error).toMatchObject({ kind: "nesting_too_deep", phase: "read", line: 2, column: 3 * 256 + 1 });
  });

  it("a #! comment line is a comment to the delimiter scan too, quotes and parentheses and all", async () => {
    expect(await edn('#!/usr/bin/env -S ptc eval --ctx "data.json" (x\n(+ 1 2)')).toBe("3");
    // Inside a name it is part of the name.
    expect(await edn("(let [a#!b 1] (inc a#!b))")).toBe("2");
  });

  it("unbalanced input reports the unclosed opener", async () => {
    const e = await failure("(defn f [x]\n  (+ x 1)");
    expect(e.error.kind).toBe("parse_error");
    expect(e.error.message).toMatch(/1 unclosed '\('/);
    expect(e.error.line).toBe(1);
    expect(e.error.hint).toMatch(/\)/);
  });

  it("a stray closer is reported where it is", async () => {
    const e = await failure("(+ 1 2))");
    expect(e.error.kind).toBe("parse_error");
    expect(e.error.column).toBe(8);
  });

  it("mismatched delimiters name both sides", async () => {
    const e = await failure("(let [x 1) x)");
    expect(e.error.message).toMatch(/'\[' opened at line 1, column 6 is closed by '\)'/);
  });

  it("a megabyte of source parses or fails without hanging", async () => {
    const src = "[" + "1 ".repeat(500_000) + "]";
    // (vitest's test timeout catches a hang)
    const r = await failure("(count " + src + " extra)");
    // Refused before it is read: a fault of the source, as the reader's own limits are.
    expect(r.error).toMatchObject({ kind: "source_too_large", phase: "read" });
  });
});

describe("limits: code that nests deeply only once expanded", () => {
  // A thread or cond of thousands of steps is nested that deep once expanded, though its
  // source is flat: the reader's nesting limit does not see it.
  const cases: Array<[string, string]> = [
    ["a long -> thread", "(-> 1 " + "inc ".repeat(20_000) + ")"],
    ["a long some-> thread", "(some-> 1 " + "inc ".repeat(20_000) + ")"],
    ["a long cond", "(cond " + "false 1 ".repeat(15_000) + ":else 2)"],
  ];
  it("a for of more clauses than the nesting limit is refused at its bindings, in both modes", async () => {
    // Each clause runs nested in the one before: 30,000 of them overflowed the host stack when run.
    for (const isolation of ["none", "worker"] as const) {
      const e = await failure("(def x 1)\n(for [" + "_ [1] ".repeat(30_000) + "] 1)", { isolation });
      expect(e.error, isolation).toMatchObject({ kind: "nesting_too_deep", phase: "analysis", line: 2, column: 6 });
    }
    const ok = await failure("(doseq [" + "_ [1] ".repeat(300) + "] (/ 1 0))", { limits: { maxNestingDepth: 300 } });
    expect(ok.error.kind).toBe("arithmetic_error");
  });

  for (const [what, form] of cases) {
    it(`${what} is refused with the form's position, not the host stack's overflow`, async () => {
      const e = await failure("(def x 1)\n  " + form);
      expect(e.error).toMatchObject({ kind: "nesting_too_deep", phase: "analysis", line: 2, column: 3 });
      expect(e.error.hint).toMatch(/let/);
    });
  }
});

describe("limits: regex literals", () => {
  // Each literal compiles while the program is analyzed, before it runs: 13 characters of
  // (?:a?){999} are 2,000 instructions, and a 200 KB program of 1,000-character literals took
  // minutes and gigabytes there, with no clock read. Each compile is a clock tick of 100 ms here.
  it("the time limit holds while the literals compile, at the literal where it passes", async () => {
    const pattern = "(?:a?){999}".repeat(8);
    const src = "[" + Array.from({ length: 40 }, (_, i) => `\n#"${"x".repeat(i)}${pattern}"`).join(" ") + "]";
    const clock = virtualClock(100);
    const r = await evaluate(src, { clock: clock.now, limits: { timeoutMs: 1_000 } });
    expect(r.ok || r.error).toMatchObject({ kind: "timeout", phase: "analysis" });
    expect(!r.ok && r.error.line).toBeLessThan(15);
    expect(await edn(`(count [#"${pattern}" #"${pattern}b"])`)).toBe("2");
  });
});

// Reading, analysing and compiling a program within maxSourceChars took 0.5-1.4 s on the loaded
// project machine ([1 1 1 ...], 99,000 numbers): in process that time was outside timeoutMs (a
// run of timeoutMs 20 ended ok after a second), while the worker mode's hard stop, which counts
// from the start, ended the same run with timeout. A clock that has moved on by the time the
// source is read stands for such a read.
describe("time spent reading a program", () => {
  const afterRead = (ms: number): (() => number) => {
    let first = true;
    return () => {
      if (!first) return ms;
      first = false;
      return 0;
    };
  };
  it.each(["[1 2 3]", "(+ 1 2)", "(loop [i 0] (if (< i 100) (recur (inc i)) i))"])("counts towards timeoutMs: %s", async (source) => {
    const slow = await evaluate(source, { clock: afterRead(500), limits: { timeoutMs: 100 } });
    expect(slow.ok ? "ok" : slow.error.kind).toBe("timeout");
    const quick = await evaluate(source, { clock: afterRead(50), limits: { timeoutMs: 100 } });
    expect(quick.ok ? "ok" : quick.error.kind).toBe("ok");
  });
});
