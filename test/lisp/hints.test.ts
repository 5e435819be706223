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

  it("are described as unreadable in the task message", () => {
    const lines = contextLines({ "a b": 1, ok: 2 }, { sampleItems: 3, sampleChars: 80 }, new ContextReader(resolveLimits({ maxNestingDepth: 64 })));
    expect(lines[0]).toBe('; context key "a b" cannot be read: it is not a valid name after data/');
    expect(lines[1]).toMatch(/^data\/ok ; /);
  });
});
