// A consumer of the packed package, as a separate TypeScript project sees it: the names it
// imports resolve and the output types are checked (test/api.test.ts compiles this file
// against the built declarations through the package's exports).
import { z } from "zod";
import { evaluate, print, SubAgent, tool, scriptedLlm, type EvalResult, type EvalStats, type Step, type TurnEvent, type Value } from "ptc-lisp";
import { planTurns } from "ptc-lisp/advanced";

export async function consume(): Promise<string> {
  const r: EvalResult = await evaluate("(+ 1 2)");
  const stats: EvalStats = r.stats;
  const lisp: Value | undefined = r.ok ? r.lisp : undefined;
  const agent = SubAgent.create({ prompt: "Count.", output: z.array(z.number()) });
  const seen: TurnEvent[] = [];
  const step: Step<number[]> = await SubAgent.run(agent, { llm: scriptedLlm(["(return [1])"]), onTurn: (e) => seen.push(e) });
  // @ts-expect-error the agent's output is number[], not string[]
  const wrong: Step<string[]> = step;
  // @ts-expect-error a run returning strings does not satisfy an output of numbers
  tool({ description: "Numbers.", output: z.array(z.number()), run: () => ["a"] });
  void wrong;
  void planTurns;
  return `${stats.fuelUsed} ${lisp === undefined ? "" : print(lisp)} ${seen.length}`;
}
