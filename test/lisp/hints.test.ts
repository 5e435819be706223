// Error messages and hints that point the model (or a person) the right way.
import { describe, expect, it } from "vitest";
import { excerpt, formatError } from "../../src/lisp/errors.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { contextLines } from "../../src/agent/prompt/context.js";
import { ContextReader } from "../../src/lisp/interop.js";
import { resolveLimits } from "../../src/lisp/limits.js";

describe("the caret", () => {
  it("keeps the tabs before the column, so it lines up under tab-indented code", () => {
    expect(excerpt('(let [x 1]\n\t\t(+ x "a"))', 2, 3)).toBe('2 | \t\t(+ x "a"))\n  | \t\t^');
    expect(excerpt("  (+ 1 :a)", 1, 3)).toBe("1 |   (+ 1 :a)\n  |   ^");
  });

  it("windows a long line without splitting an emoji (a lone surrogate is invalid text on the wire)", () => {
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    const line = "xx\"" + "😀".repeat(700) + "\" (+ 1 :a)";
    for (const column of [1, 600, 1404]) {
      const shown = excerpt(line, 1, column) as string;
      expect(shown).not.toMatch(lone);
      // The caret still points at the character in the column.
      const [text, caret] = shown.split("\n");
      expect(text.slice(4).slice(caret.length - 5).codePointAt(0)).toBe(line.codePointAt(column - 1));
    }
  });

  it("is placed that way in a real error", async () => {
    const r = await evaluate('(let [x 1]\n\t(+ x "a"))');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(formatError(r.error).split("\n").slice(1, 3)).toEqual(['2 | \t(+ x "a"))', "  | \t^"]);
  });
});

describe("data crossing the host boundary", () => {
  it("says which way it was going when it is nested too deep", async () => {
    const deep: unknown[] = [];
    let at = deep;
    for (let i = 0; i < 20; i++) at = (at[0] = []) as unknown[];
    const into = await evaluate("data/x", { ctx: { x: deep }, limits: { maxNestingDepth: 10 } });
    expect(!into.ok && into.error.message).toMatch(/cannot cross into the program/);
    const out = await evaluate("(reduce (fn [acc _] [acc]) [] (range 30))", { limits: { maxNestingDepth: 10 } });
    expect(!out.ok && out.error.message).toMatch(/cannot cross out of the program$/);
  });
});

describe("context keys that are not names", () => {
  it("are not offered as data/... in hints, and are named as unreadable", async () => {
    const r = await evaluate("data/a", { ctx: { "a b": 1, x: 2 } });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.hint).toContain("available: data/x");
      expect(r.error.hint).not.toContain("data/a b");
      expect(r.error.hint).toContain('keys no program can name (the host must rename them): "a b"');
    }
  });

  // The hint goes into the model's feedback: a context of a 1,000,000-character key, or of
  // thousands of keys, made a hint of 2,000,089 characters (every key whole, twice).
  it("are listed within bounds however long or many they are", async () => {
    const big = "k".repeat(1_000_000);
    const ctx: Record<string, number> = { [big]: 1, [big + "2"]: 2, [big + " x"]: 3 };
    for (let i = 0; i < 1000; i++) ctx[`key${i}`] = i;
    const r = await evaluate("data/key10000", { ctx, isolation: "none" });
    expect(!r.ok && r.error.kind).toBe("unbound_var");
    const hint = (!r.ok && r.error.hint) || "";
    expect(hint.length).toBeLessThan(2000);
    expect(hint).toContain("did you mean data/key100? ");
    expect(hint).toContain(`available: data/${"k".repeat(40)}… (1000000 characters), data/${"k".repeat(40)}… (1000001 characters), data/key0, data/key1,`);
    expect(hint).toContain("(+972 more)");
    expect(hint).toContain(`keys no program can name (the host must rename them): "${"k".repeat(40)}…" (1000002 characters)`);
  });

  it("lists tools within bounds however many there are", async () => {
    const tools = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`t${i}-${"x".repeat(100)}`, () => i]));
    const r = await evaluate("(tool/nope)", { tools, isolation: "none" });
    const hint = (!r.ok && r.error.hint) || "";
    expect(hint.startsWith(`available tools: tool/t0-${"x".repeat(37)}… (103 characters), `)).toBe(true);
    expect(hint).toContain("(+470 more)");
    expect(hint.length).toBeLessThan(2000);
  });

  // Edit distance over two names of 99,990 characters that differ in their last one was a
  // full table of 10^10 cells, in the analyzer, before the program's time limit runs (16 s
  // measured for 40,000 characters): the suggestion needs only the cells near the diagonal.
  it("suggests a near name of any length without comparing it whole against the other", async () => {
    const a = "k".repeat(99_990);
    const b = "k".repeat(99_989) + "j";
    const r = await evaluate(`(let [${a} 1] ${b})`, { isolation: "none" });
    expect(!r.ok && r.error.kind).toBe("unbound_var");
    expect(!r.ok && r.error.hint?.startsWith("did you mean `k")).toBe(true);
  }, 60_000);

  it("are described as unreadable in the task message", () => {
    const lines = contextLines({ "a b": 1, ok: 2 }, { sampleItems: 3, sampleChars: 80 }, new ContextReader(resolveLimits({ maxNestingDepth: 64 })));
    expect(lines[0]).toBe('; context key "a b" cannot be read: it is not a valid name after data/');
    expect(lines[1]).toMatch(/^data\/ok ; /);
  });
});
