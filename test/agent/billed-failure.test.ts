// A billed LLM failure (LlmError details.usage) counts in the run's totals and its budget.
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { LlmError } from "../../src/llm/errors.js";
import type { Llm } from "../../src/llm/types.js";
import { runTotals } from "../../src/trace/totals.js";
import { saveRun } from "../../src/agent/resume.js";
import { runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { traceFromJson, traceToJson } from "../../src/trace/serialize.js";
import { projectRun } from "../../src/viewer/run.js";
import { TextTable } from "../../src/viewer/texts.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

/** First reply a program, then a billed reply with no text. */
function billedLlm(): Llm {
  let n = 0;
  return {
    name: "scripted",
    async complete() {
      n++;
      if (n === 1) return { content: code("(println 1)"), usage: { inputTokens: 100, outputTokens: 10, cachedTokens: 0 } };
      throw new LlmError("malformed", "the reply has no text content", { usage: { inputTokens: 1000, outputTokens: 4000, cachedTokens: 0 } });
    },
  };
}

describe("billed LLM failures", () => {
  it("count the tokens the provider reported in the step's totals", async () => {
    const step = await SubAgent.run(SubAgent.create({ prompt: "x", maxTurns: 3 }), { llm: billedLlm() });
    expect(step.ok ? null : step.fail.reason).toBe("llm_error");
    expect([step.usage.inputTokens, step.usage.outputTokens, step.usage.totalTokens, step.usage.llmRequests]).toEqual([1100, 4010, 5110, 2]);
  });

  // The step counted the failed request's 1000/4000 tokens, but the trace kept no record of it:
  // `ptc trace show` and the viewer, which sum the trace, said 100 in / 10 out.
  it("are in the trace, so its totals (ptc trace show, the viewer) match the step's", async () => {
    const step = await SubAgent.run(SubAgent.create({ prompt: "x", maxTurns: 3 }), { llm: billedLlm() });
    expect(step.trace.failedRequests).toEqual([{ turn: 2, inputTokens: 1000, outputTokens: 4000, cachedTokens: 0, error: "malformed" }]);
    const trace = traceFromJson(traceToJson(step.trace));
    const shown = runTotals(trace);
    expect([shown.inputTokens, shown.outputTokens]).toEqual([step.usage.inputTokens, step.usage.outputTokens]);
    const viewed = projectRun({ trace }, "run.json", "r1", new TextTable(), []).totals;
    expect([viewed.inputTokens, viewed.outputTokens]).toEqual([1100, 4010]);
  });

  // Resumed, the run reported 200 in / 20 out over 2 requests: the saved run's billed failure (1000/4000) was gone from its usage and trace.
  it("stay counted, and in the trace, when the run is resumed", async () => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 3 });
    const step = await SubAgent.run(agent, { llm: billedLlm() });
    const live = scriptedLlm([{ content: code("(return 2)"), usage: { inputTokens: 100, outputTokens: 10, cachedTokens: 0 } }]);
    const done = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(step, agent))), { llm: live });
    expect(done.value).toBe(2);
    expect([done.usage.inputTokens, done.usage.outputTokens, done.usage.llmRequests]).toEqual([1200, 4020, 3]);
    expect(done.trace.failedRequests).toEqual(step.trace.failedRequests);
    const shown = runTotals(done.trace);
    expect([shown.inputTokens, shown.outputTokens]).toEqual([1200, 4020]);
  });

  it("are charged to a calling run's nested totals", async () => {
    const inner = SubAgent.create({ prompt: "inner", maxTurns: 3, llm: billedLlm() });
    let n = 0;
    const outerLlm: Llm = {
      name: "scripted",
      async complete() {
        n++;
        return { content: code(n === 1 ? "(def r (tool/inner {}))" : "(return 1)"), usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 } };
      },
    };
    const outer = SubAgent.create({ prompt: "outer", maxTurns: 3, tools: { inner: SubAgent.asTool(inner, { description: "inner" }) } });
    const step = await SubAgent.run(outer, { llm: outerLlm });
    expect([step.usage.nested.inputTokens, step.usage.nested.outputTokens]).toEqual([1100, 4010]);
  });
});
