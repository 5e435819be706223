// A PTC-Lisp run measured by the harness is priced as the agent sent it: the turn records hold
// hidden values' stand-ins unshown (a failed turn's feedback lists its completed calls' arguments),
// and the agent shows them in every prompt, so the harness must too, under every strategy.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { measure, type SentPrompt } from "../../src/harness/measure.js";
import { runTranscript } from "../../src/harness/run-transcript.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const lookup = tool({ description: "Looks a customer up.", input: z.object({ token: z.string() }), run: async ({ token }) => ({ found: token.length > 0 }) });
const code = (body: string) => "```clojure\n" + body + "\n```";

async function hiddenRun(compressHistory: boolean) {
  const programs = ["(tool/lookup {:token data/_token})\n(+ 1 data/_token)", "(println (tool/lookup {:token data/_token}))", "(return :done)"];
  const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: 3, compressHistory });
  return SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _token: "sk-live-7f3a9c2e11" } });
}

describe("the harness on a run with hidden context", () => {
  for (const [strategy, compressHistory] of [["full", false], ["interpreter-summaries", true]] as const) {
    it(`prices ${strategy} on the prompts the agent sent, stand-ins shown`, async () => {
      const step = await hiddenRun(compressHistory);
      const t = runTranscript("hidden", step.trace);
      if (t === undefined) throw new Error("no transcript");
      const sent: SentPrompt[] = [];
      await measure(t, strategy, { models: ["gpt-4o"], onPrompt: (p) => sent.push(p) });
      expect(sent.map((p) => p.messages.map((m) => m.content))).toEqual(step.trace.turns.map((turn) => turn.messages.map((m) => m.content)));
      expect(JSON.stringify(sent)).toContain("<hidden string from data/_token>");
    });
  }
});
