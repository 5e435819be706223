// Java-style interop builtins: string methods with Java conventions (-1, index errors,
// String.split dropping trailing empties) counted in characters, and dates as ISO strings.
import { describe, expect, it } from "vitest";
import { edn as value, errorOf as failure, cases } from "../support/run.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { parseDate } from "../../src/lisp/core/methods.js";

describe("string methods", () => {
  cases([
    ['(.indexOf "hello" "ll")', "2"],
    ['(.indexOf "hello" "x")', "-1"],
    ['(.indexOf "hello" "l" 3)', "3"],
    ['(.indexOf "hello" "l" 4)', "-1"],
    ['(.indexOf "hello" "h" -5)', "0"],
    ['(.indexOf "abc" "" 10)', "3"],
    ['(.indexOf "🍎🍊🍋fruit" "fruit")', "3"],
    ['(.indexOf "🍎a🍎a" "a" 2)', "3"],
    ['(.lastIndexOf "hello" "l")', "3"],
    ['(.lastIndexOf "hello" "x")', "-1"],
    ['(.lastIndexOf "hello" "")', "5"],
    ['(.lastIndexOf "" "")', "0"],
    ['(.lastIndexOf "alt🍎alt" "alt")', "4"],
    ['(.lastIndexOf "hello" "l" 2)', "2"],
    ['(.lastIndexOf "hello" "l" -1)', "-1"],
    ['(let [s "🍎x🍊x"] (subs s (.lastIndexOf s "x")))', '"x"'],
    ['(.toUpperCase "abc")', '"ABC"'],
    ['(.toLowerCase "ABC")', '"abc"'],
    ['(.trim " a ")', '"a"'],
    ['(.startsWith "hello" "he")', "true"],
    ['(.endsWith "hello" "he")', "false"],
    ['(.contains "hello" "ell")', "true"],
    ['(.length "")', "0"],
    ['(.length "a🍎b")', "3"],
    ['(.substring "hello" 1 3)', '"el"'],
    ['(.substring "hello" 5)', '""'],
    ['(.substring "a🍎b" 1 2)', '"🍎"'],
    ['(.charAt "hello" 1)', '"e"'],
    ['(.charAt "a🍎b" 1)', '"🍎"'],
    ['(.split "a,b,,c,," ",")', '["a" "b" "" "c"]'],
    ['(.split "a1b22c" "\\\\d+")', '["a" "b" "c"]'],
    ['(.split "a,b,c" "," 2)', '["a" "b,c"]'],
    ['(.split "a,b,," "," -1)', '["a" "b" "" ""]'],
    ['(.split "" ",")', '[""]'],
    ['(.split "," ",")', "[]"],
    ['(.split "abc" "")', '["a" "b" "c"]'],
  ]);

  it("keeps a string that grows in case within the string limit, as upper-case does", async () => {
    // ß upper-cases to SS, and ΐ to three characters.
    const limits = { maxStringLength: 1000 };
    for (const src of ['(.toUpperCase (apply str (repeat 600 "ß")))', '(.toUpperCase (apply str (repeat 400 "ΐ")))', '(.toLowerCase (apply str (repeat 600 "İ")))']) {
      expect((await failure(src, { limits })).kind, src).toBe("string_too_large");
    }
    expect(await value('(count (.toUpperCase (apply str (repeat 500 "ß"))))', { limits })).toBe("1000");
  });

  it("fails for out-of-range indices like Java", async () => {
    for (const src of ['(.substring "hello" 3 10)', '(.substring "hello" -1)', '(.substring "hello" 3 2)', '(.charAt "abc" 3)', '(.charAt "a🍎" -1)']) {
      const e = await failure(src);
      expect(e.kind, src).toBe("index_out_of_bounds");
      expect(e.message, src).toMatch(/^\.(substring|charAt)/);
    }
  });

  it("rejects non-string targets, naming the method", async () => {
    for (const [src, who] of [
      ['(.indexOf 123 "x")', ".indexOf"],
      ['(.lastIndexOf {} "x")', ".lastIndexOf"],
      ["(.length nil)", ".length"],
      ['(.contains "a" 1)', ".contains"],
      ['(.substring "abc" "1")', ".substring"],
      ["(.split :a \",\")", ".split"],
    ] as const) {
      const e = await failure(src);
      expect(e.kind, src).toBe("type_error");
      expect(e.message.startsWith(who), src).toBe(true);
    }
    expect((await failure("(.length [1 2])")).hint).toContain("count");
  });

  it("lists the supported methods for an unknown one", async () => {
    const e = await failure('(.toString "x")');
    expect(e.kind).toBe("unbound_var");
    expect(e.hint).toContain(".indexOf");
    expect(e.hint).toContain("java.util.Date.");
  });
});

describe("dates", () => {
  cases([
    ["(java.util.Date. 0)", '"1970-01-01T00:00:00.000Z"'],
    ["(java.util.Date. 1705314600000)", '"2024-01-15T10:30:00.000Z"'],
    ['(java.util.Date. "2024-01-15")', '"2024-01-15T00:00:00.000Z"'],
    ['(java.util.Date. "2024-01-15T10:30:00")', '"2024-01-15T10:30:00.000Z"'],
    ['(java.util.Date. "2024-01-15T10:30:00.5Z")', '"2024-01-15T10:30:00.500Z"'],
    ['(java.util.Date. "2024-01-15 10:30")', '"2024-01-15T10:30:00.000Z"'],
    ['(java.util.Date. "2024-01-15T10:30:00+02:00")', '"2024-01-15T08:30:00.000Z"'],
    ['(java.util.Date. "2024-01-15T10:30:00-0130")', '"2024-01-15T12:00:00.000Z"'],
    ['(java.util.Date. "Wed, 8 Jan 2026 14:30:00 +0000")', '"2026-01-08T14:30:00.000Z"'],
    ['(java.util.Date. "8 Jan 2026 14:30:00")', '"2026-01-08T14:30:00.000Z"'],
    ['(.getTime (java.util.Date. "2024-01-15T00:00:00Z"))', "1705276800000"],
    ['(.getTime "1970-01-01T00:00:01Z")', "1000"],
    ['(- (.getTime "2024-03-01") (.getTime "2024-02-28"))', String(2 * 86_400_000)],
    ["(.getTime (java.util.Date. -1000))", "-1000"],
  ]);

  it("rejects unreadable dates and values", async () => {
    for (const src of ['(java.util.Date. "2024-02-30")', '(java.util.Date. "2024-13-01")', '(java.util.Date. "yesterday")', '(.getTime "2024-01-15T25:00")', "(java.util.Date. 1e300)"]) {
      const e = await failure(src);
      expect(e.kind, src).toBe("value_error");
    }
    expect((await failure("(java.util.Date. nil)")).kind).toBe("type_error");
    const g = await failure("(.getTime 5)");
    expect(g.kind).toBe("type_error");
    expect(g.message).toMatch(/^\.getTime/);
    expect(g.hint).toContain("java.util.Date.");
  });

  it("reads the clock once per run", async () => {
    const before = Date.now();
    // The real clock is what this reads, so the time limit is raised instead: 100,000 steps can outlast 1 s on a loaded machine.
    const r = await evaluate("[(System/currentTimeMillis) (do (dotimes [_ 100000] nil) (System/currentTimeMillis)) (.getTime (java.util.Date.))]", { limits: { timeoutMs: 600_000 } });
    const after = Date.now();
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const [a, b, c] = r.value as number[];
    expect(a).toBe(b);
    expect(a).toBe(c);
    expect(a).toBeGreaterThanOrEqual(before);
    expect(a).toBeLessThanOrEqual(after);
  });

  it("prints now as an ISO-8601 UTC string", async () => {
    expect(await value("(java.util.Date.)")).toMatch(/^"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"$/);
  });

  it("keeps System/currentTimeMillis qualified", async () => {
    expect((await failure("(currentTimeMillis)")).kind).toBe("unbound_var");
  });

  it("parses ISO-8601 and RFC 2822, and nothing else", () => {
    expect(parseDate("2024-02-29")).toBe(Date.UTC(2024, 1, 29));
    expect(parseDate("0050-06-01")).toBe(new Date("0050-06-01T00:00:00Z").getTime());
    expect(parseDate("Mon, 1 Jan 2024 00:00:00 GMT")).toBe(Date.UTC(2024, 0, 1));
    expect(parseDate("2023-02-29")).toBeNaN();
    expect(parseDate("1 Foo 2024 00:00:00")).toBeNaN();
    expect(parseDate("01/02/2024")).toBeNaN();
  });
});
