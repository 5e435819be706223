// Exploration mode end to end (seed 003): over every example run with compressed history, a
// turn that defined without printing has its definitions' values in the very next prompt,
// as samples (or as values: scalars and short strings), in both timings.
import { describe, expect, it } from "vitest";
import { examples } from "../../examples/index.js";
import { runExample } from "../../examples/run.js";
import { isWhole } from "../../src/history/summary.js";

describe.each(examples.map((e) => [e.name, e] as const))("example %s, compressed", (_name, example) => {
  it.each([false, true])("samples what a turn defined without printing in the next prompt (keepLatestFull %s)", async (keepLatestFull) => {
    const step = await runExample(example, { compressHistory: true, view: { keepLatestFull } });
    expect(step.ok).toBe(true);
    step.turns.slice(0, -1).forEach((t, i) => {
      if (t.status !== "ok" || t.prints.length > 0) return;
      const next = step.turns[i + 1].messages.map((m) => (typeof m.content === "string" ? m.content : "")).join("\n");
      // No summary fits in the turn: it stays as written, as full history shows it.
      if (next.includes(t.reply)) return;
      for (const d of t.definitions) {
        if (d.kind !== "value") continue;
        const line = next.split("\n").find((l) => l.startsWith(`; Defined: ${d.name} `));
        expect(line, `${d.name} (turn ${t.number})`).toBeDefined();
        // Samples where they fit in the turn, else the keys of its records (keep.test.ts).
        expect(line).toMatch(isWhole(d) ? / = [^ ]/ : /, sample: | of \{/);
      }
    });
  });
});

describe("the restock example", () => {
  it("defines without printing on most turns, so the check above has work to do", async () => {
    const step = await runExample(examples.find((e) => e.name === "restock")!, { compressHistory: true });
    expect(step.turns.filter((t) => t.prints.length === 0 && t.definitions.length > 0).length).toBeGreaterThanOrEqual(3);
    expect(step.turns[2].messages.at(-2)?.content).toMatch(/^; Defined: reviews = vector\[6\] of \{:sku string, :rating float\}/m);
  });
});
