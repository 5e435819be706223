import { describe, expect, it } from "vitest";
import { evaluate, type EvaluateOptions } from "../../src/lisp/evaluate.js";

// evaluate never throws and resolves to an EvalResult: input of the wrong type is a value_error naming it, not a raw TypeError.
describe("evaluate given input of the wrong type", () => {
  it.each([
    ["a source that is not a string", 5, {}, "the source must be a string, got number"],
    ["no source", undefined, {}, "the source must be a string, got undefined"],
    ["options that are not an object", "1", null, "the options must be an object, got null"],
    ["memory that is not a Map", "1", { memory: 5 }, "memory must be a Map of definitions (an EvalResult's memory), got number"],
    ["a clock that is not a function", "1", { clock: 5 }, "clock must be a function returning milliseconds, got number"],
    ["ctxJson that is not text", "data/a", { ctxJson: 5 }, "ctxJson must be a string of JSON, got number"],
  ])("%s", async (_what, source, options, message) => {
    const result = await evaluate(source as string, options as EvaluateOptions);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ kind: "value_error", message });
  });
});
