import { describe, expect, it } from "vitest";
import { cutPoint } from "../../src/lisp/index.js";
import { renderCompletedCalls } from "../../src/trace/feedback.js";
import type { Turn } from "../../src/trace/trace.js";

const turnOf = (args: unknown[]): Turn => ({ toolCalls: args.map((a, i) => ({ name: `t${i}`, args: a, durationMs: 0 })) }) as unknown as Turn;

// What the line showed when each call's arguments were written whole first.
const wholeLine = (args: unknown): string => {
  const text = JSON.stringify(args ?? {}) ?? "{}";
  return text.length > 120 ? text.slice(0, cutPoint(text, 119)) + "…" : text;
};

describe("renderCompletedCalls", () => {
  it("shows each call's arguments as JSON text, cut at 120 characters, the same as writing them whole", () => {
    const emoji = "😀".repeat(100);
    const cases: unknown[] = [
      {},
      { q: "short", n: 3, ok: true, none: null },
      { q: "x".repeat(118) + "😀tail" },
      { q: "x".repeat(117) + "😀tail" },
      { q: emoji },
      { q: 'quote " and \\ and \n and \u0001'.repeat(10) },
      { [`k${"y".repeat(200)}`]: 1 },
      { list: [1, undefined, () => 1, "s", [2, [3, { deep: "d".repeat(150) }]]] },
      { skipped: undefined, f: () => 1, kept: Infinity, nan: NaN },
      { when: new Date(0), big: Array.from({ length: 100 }, (_, i) => i) },
      { withToJSON: { toJSON: () => "custom".repeat(30) } },
      "a bare string",
      [1, 2, 3],
      { lone: "\ud800".repeat(50) },
    ];
    for (const args of cases) {
      expect(renderCompletedCalls(turnOf([args]))).toBe(`These tool calls completed before the error (their effects are not undone; do not repeat them unless you mean to):\n  tool/t0 ${wholeLine(args)}`);
    }
  });

  // Every argument was converted to JSON whole to show 120 characters of it: ten calls of 20M
  // characters each took about 0.9 s per feedback message; 100,000 members were all read.
  it("reads only as much of the arguments as the line shows", () => {
    let reads = 0;
    const wide: Record<string, unknown> = {};
    for (let i = 0; i < 100_000; i++) Object.defineProperty(wide, `key${i}`, { enumerable: true, get: () => (reads++, i) });
    const line = renderCompletedCalls(turnOf([wide]));
    expect(line).toContain(`tool/t0 ${wholeLine(wide).slice(0, 40)}`);
    reads = 0;
    renderCompletedCalls(turnOf([wide]));
    expect(reads).toBeLessThan(20);
  });
});
