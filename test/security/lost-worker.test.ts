// Agents whose worker is gone between turns. The isolated mode keeps an agent's memory in the
// worker that ran its last turn, but the pool keeps only a few idle workers: a host running more
// agents at once than that (or a turn whose worker was ended) sends the next turn to a worker
// without that memory, which rebuilds each function from its source. Rebuilt functions must
// work as the originals did (read data/, call tools) and mark what they compute from hidden
// context, or a derived secret reaches the prompt. A barrier holds every agent's first program
// until all of them run (one worker each), and its next reply until every first turn has ended
// (all workers released at once), so the pool has to retire some: the loss is forced, not timed.
import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { Llm } from "../../src/llm/types.js";
import { fragments, leaks } from "../support/hidden.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

/** Per round, a wait that ends once `n` callers are waiting in that round. */
function barrier(n: number): (round: number) => Promise<void> {
  const rounds = new Map<number, { arrived: number; open: () => void; opened: Promise<void> }>();
  return (round) => {
    let r = rounds.get(round);
    if (r === undefined) {
      let open = (): void => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      rounds.set(round, (r = { arrived: 0, open, opened }));
    }
    if (++r.arrived === n) r.open();
    return r.opened;
  };
}

/** The scripted replies, the second one given only once every agent has asked for it. */
function heldLlm(replies: string[], wait: (round: number) => Promise<void>): Llm {
  const llm = scriptedLlm(replies);
  let calls = 0;
  return { name: llm.name, complete: async (request) => (++calls === 2 && (await wait(2)), llm.complete(request)) };
}

const fetch = tool({ description: "Fetches.", input: z.object({ n: z.number() }), run: async ({ n }) => n * 10 });

describe("agents whose worker is lost between turns", () => {
  it("functions rebuilt in another worker read data/, call tools, and hide what they derive from hidden context", async () => {
    // More agents than the pool keeps idle workers: some turns must land on a worker without their memory.
    const n = Math.max(2, availableParallelism()) + 3;
    const wait = barrier(n);
    const meet = tool({ description: "Waits for the other agents.", input: z.object({}), run: async () => (await wait(1), null) });
    const programs = [
      "(tool/meet)\n(defn up [s] (clojure.string/upper-case s))\n(defn total [] (reduce + data/xs))\n(defn fetch10 [k] (tool/fetch {:n k}))\n(println \"defined\")",
      "(println (up data/_token) (subs (up data/_token) 3))\n(println (total) (fetch10 4))",
      "(return (total))",
    ];
    const tokens = Array.from({ length: n }, (_, i) => `sk-live-${i}-7f3a9c21e4b8d6`);
    const steps = await Promise.all(
      tokens.map((tok, i) => {
        const agent = SubAgent.create({ prompt: "Sum the numbers.", tools: { meet, fetch }, maxTurns: 3 });
        return SubAgent.run(agent, { llm: heldLlm(programs.map(code), wait), context: { xs: [1, 2, i], _token: tok } });
      }),
    );
    steps.forEach((step, i) => {
      const frags = fragments([tokens[i]]);
      for (const prompt of step.messages) for (const m of prompt) expect(leaks(m.content, frags), m.content).toEqual([]);
      expect(leaks(JSON.stringify(step.trace), frags)).toEqual([]);
      expect(step.fail?.message, `agent ${i}`).toBeUndefined();
      expect(step.ok && step.value).toBe(3 + i);
      expect(step.turns[1].prints).toEqual(["<hidden string derived from data/_token> <hidden string derived from data/_token>", `${3 + i} 40`]);
    });
  });
});
