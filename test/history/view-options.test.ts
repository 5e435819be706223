// One schema for the prompt-view options, resolved by one function: the same partial options
// given through each entry point (the agent's run options, the interpreter strategy's options, a
// saved run, a stored trace's settings, the CLI's side-by-side comparison) resolve to the object
// the schema gives, and a value the schema rejects is rejected by each of them.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { saveRun } from "../../src/agent/resume.js";
import { compressedView } from "../../src/history/compressed.js";
import { renderComparison } from "../../src/history/compare.js";
import { defaultStrategies } from "../../src/history/registry.js";
import { traceSettings } from "../../src/history/settings.js";
import { resolveViewOptions, viewOptionsSchema } from "../../src/trace/view-settings.js";
import type { ViewOptions } from "../../src/history/view.js";

const clj = (code: string): string => `Next.\n\n\`\`\`clojure\n${code}\n\`\`\``;
const replies = [
  clj(`(def xs "Numbers" (range 40))\n(println "sum" (reduce + xs))`),
  clj(`(def ys "Squares" (mapv (fn [x] (* x x)) xs))\n(println (take 30 ys))`),
  clj(`(println (count zs))`),
  clj(`(def big "Over 100" (filterv (fn [y] (> y 100)) ys))\n(println (count big) "big")`),
  clj(`(return (count big))`),
];
const agent = SubAgent.create({ prompt: "How many squares under 40 pass 100?", output: z.number(), maxTurns: 6 });

const PARTIALS: ReadonlyArray<Partial<ViewOptions>> = [
  {},
  { strictPrefix: true, paybackPrompts: 3 },
  { cacheModel: "breakpoint", printlnHistoryLimit: 2, sampleItems: 1 },
  { keepLatestFull: true, errorWindowTurns: 0, errorContextTurns: 0, toolCallsPerTurn: 1 },
  { printlnHistoryTokens: 40, dropAfterTokens: 0, sampleChars: 12 },
];

describe("view options", () => {
  it.each(PARTIALS.map((p) => [JSON.stringify(p), p] as const))("%s resolve to the schema's object through every entry point", async (_, partial) => {
    const expected = viewOptionsSchema.parse({ ...partial, compressHistory: true });
    expect(resolveViewOptions(partial, { compressHistory: true })).toEqual(expected);

    // The agent: run options (the printlnHistoryLimit shorthand beside view), recorded in the trace's settings.
    const { printlnHistoryLimit, ...view } = partial;
    const step = await SubAgent.run(agent, { llm: scriptedLlm(replies), compressHistory: true, printlnHistoryLimit, view });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.trace.settings?.view).toEqual(expected);

    // A saved run, its options given again when saving.
    expect(saveRun(step, agent, { compressHistory: true, printlnHistoryLimit, view }).view).toEqual(expected);
    expect(saveRun(step, agent).view).toEqual(expected);

    // A stored trace whose settings carry only the partial options.
    const stored = { settings: { maxTurns: 6, toolsWithdrawn: false, maxPrintChars: 2000, view: { ...partial, compressHistory: true } as ViewOptions } };
    const checked = traceSettings(stored);
    expect(checked.ok && checked.settings?.view).toEqual(expected);

    // The interpreter strategy, given the partial options, sends the view the resolved options build.
    const input = { system: step.trace.system, task: step.trace.task, turns: step.trace.turns, maxTurns: 6 };
    const strategy = defaultStrategies.create({ name: "interpreter-summaries", options: partial });
    const projected = await strategy.project({ messages: [], records: input }, strategy.initialState(), {});
    expect(projected.messages).toEqual(compressedView(input, expected).messages);

    // The CLI's side-by-side comparison.
    const trace = { ...step.trace, settings: undefined };
    expect(renderComparison(trace, 6, partial as ViewOptions)).toBe(renderComparison(trace, 6, expected));
  });

  it("an option the schema rejects is rejected by every entry point, with its name", async () => {
    const bad = { sampleItems: 0 };
    expect(viewOptionsSchema.safeParse(bad).success).toBe(false);
    expect(() => resolveViewOptions(bad)).toThrow(/view\.sampleItems/);
    const step = await SubAgent.run(agent, { llm: scriptedLlm(replies), compressHistory: true, view: bad });
    expect(step.ok).toBe(false);
    expect(step.fail?.reason).toBe("invalid_input");
    expect(step.fail?.message).toContain("view.sampleItems");
    expect(() => defaultStrategies.create({ name: "interpreter-summaries", options: bad })).toThrow(/sampleItems/);
    const checked = traceSettings({ settings: { maxTurns: 6, toolsWithdrawn: false, maxPrintChars: 2000, view: { ...bad, compressHistory: true } as ViewOptions } });
    expect(checked.ok).toBe(false);
  });
});
