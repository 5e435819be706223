// A host's long-lived signal (a server's shutdown signal, say) given to every run: each run must
// take back what it hung on it. A listener left behind keeps its run's closures (memory, printed
// lines, tool state) alive for as long as the signal lives, and Node warns past ten.
import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { z } from "zod";

const listeners = (s: AbortSignal): number => getEventListeners(s, "abort").length;
const tools = { t: { run: async () => ({ ok: 1 }) } };

describe("a shared signal after many runs", () => {
  for (const isolation of ["none", "worker"] as const) {
    it(`evaluate (${isolation}): no listener left, whatever the program did`, async () => {
      const shared = new AbortController();
      const programs = ["(+ 1 2)", "(tool/t {})", "(pmap (fn [i] (tool/t {:i i})) (range 3))", '(fail "no")', "(/ 1 0)", "(loop [i 0] (if (< i 100) (recur (inc i)) i))"];
      for (let round = 0; round < 4; round++) {
        for (const source of programs) {
          await evaluate(source, { tools, isolation, signal: shared.signal });
          expect(listeners(shared.signal), `${isolation}: after ${source}`).toBe(0);
        }
      }
    });
  }

  // In process only: a worker's warnings go to the worker's own process object. Both modes build the signal the same way.
  for (const isolation of ["none"] as const) {
    it(`evaluate (${isolation}): twenty tool calls in flight, each listening to its signal, set off no leak warning`, async () => {
      const warnings: string[] = [];
      const onWarning = (w: Error): void => void warnings.push(w.name);
      process.on("warning", onWarning);
      const listening = { t: { run: (_: unknown, signal?: AbortSignal) => new Promise((resolve) => { signal?.addEventListener("abort", () => resolve(0)); setTimeout(() => resolve(1), 20); }) } };
      const r = await evaluate("(sum (pmap (fn [i] (tool/t {:i i})) (range 20)))", { tools: listening, isolation });
      await new Promise((done) => setImmediate(done));
      process.off("warning", onWarning);
      expect(r.ok && r.value).toBe(20);
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    });
  }

  it("SubAgent.run: a 12-turn run with tool calls leaves no listener on the host's signal", async () => {
    const shared = new AbortController();
    // The run's own signal is not the host's: listeners left on it per turn show as Node's warning past ten.
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on("warning", onWarning);
    const code = (s: string) => "```clojure\n" + s + "\n```";
    const replies = [...Array.from({ length: 11 }, (_, i) => code(`(def r${i} (tool/t {:i ${i}}))\n(println ${i})`)), code("(return 1)")];
    const agent = SubAgent.create({ prompt: "Go.", maxTurns: 12, tools: { t: tool({ description: "t", input: z.object({ i: z.number() }), run: async () => ({ ok: 1 }) }) } });
    for (let round = 0; round < 2; round++) {
      const step = await SubAgent.run(agent, { llm: scriptedLlm(replies), signal: shared.signal });
      expect(step.ok).toBe(true);
      expect(listeners(shared.signal)).toBe(0);
    }
    // Warnings are emitted on the next tick.
    await new Promise((r) => setImmediate(r));
    process.off("warning", onWarning);
    expect(warnings).not.toContain("MaxListenersExceededWarning");
  });
});
