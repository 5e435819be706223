// Saved runs are written and read as structured data: whatever a run returned or stored (a
// value shaped like {:trace nil} included) comes back exactly.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/agent/subagent.js";
import { saveRun } from "../../src/agent/resume.js";
import { runStateFromJson, runStateToJson, type RunState } from "../../src/trace/run-state.js";
import { runFromJson, runToJson } from "../../src/agent/saved-run.js";
import { traceFromJson, traceToJson } from "../../src/trace/serialize.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

async function savedState(): Promise<RunState> {
  const agent = SubAgent.create({ prompt: "Return the data." });
  const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(def trace nil)\n(return {:trace nil :note \"trace\\\": null\"})")]) });
  expect(step.ok).toBe(true);
  return saveRun(step, agent);
}

// JSON values with keys that collide with the state's own fields.
const key = fc.constantFrom("trace", "memory", "version", "format", "turns", "a", "b c", '"trace": null');
const json = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)),
    fc.string(),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(key, tie("value"), { maxKeys: 4 }),
  ),
})).value;

describe("saved run states", () => {
  it("round-trip a run that returned {:trace nil}", async () => {
    const state = await savedState();
    expect(state.outcome).toEqual({ ok: true, value: { trace: null, note: 'trace": null' } });
    const back = runStateFromJson(runStateToJson(state, 2));
    expect(back).toEqual(state);
  });

  it("round-trip any outcome value and tool result (property)", async () => {
    const state = await savedState();
    fc.assert(
      fc.property(json, json, fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }), (value, result, indent) => {
        const odd: RunState = structuredClone(state);
        odd.outcome = { ok: true, value };
        odd.trace.turns[0].toolCalls = [{ name: "t", args: { trace: null }, result, durationMs: 1 }];
        expect(runStateFromJson(runStateToJson(odd, indent))).toEqual(odd);
      }),
      { numRuns: 200 },
    );
  });

  it("round-trip data shaped like the file's own number tags, as data", async () => {
    const state = await savedState();
    // Objects with the one key the file writes a BigInt, NaN or -0 as (and those escaped once), beside the numbers themselves.
    const tagged = [{ "$ptc:bigint": "5" }, { "$ptc:number": "NaN" }, { "$ptc:number": "-0" }, { "$$ptc:bigint": "7" }, { "$$$ptc:number": "x" }, { "$ptc:reuse": 1 }, { "$ptc:set": [1] }, { "$ptc:map": [[1, 2]] }, { "$$ptc:set": [] }, NaN, -0, 12n];
    const odd: RunState = structuredClone(state);
    odd.outcome = { ok: true, value: { tagged } };
    // A result's exact form holds JS Sets and Maps (ToolCallTrace.exact), which the file tags too.
    odd.trace.turns[0].toolCalls = [{ name: "t", args: { tagged }, result: tagged, exact: [new Set([1, tagged]), new Map<unknown, unknown>([[7, new Set(["x"])]])], durationMs: 1 }];
    expect(runStateFromJson(runStateToJson(odd, 2))).toEqual(odd);
    expect(traceFromJson(traceToJson(odd.trace))).toEqual(odd.trace);
    const agent = SubAgent.create({ prompt: "Return the data." });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]) });
    step.trace.turns[0].toolCalls = [{ name: "t", args: {}, result: tagged, durationMs: 1 }];
    expect(runFromJson(runToJson(step)).trace.turns[0].toolCalls[0].result).toEqual(tagged);
  });
});
