// Helpers for tests of LLM clients.
import { expect } from "vitest";
import { LlmError } from "../../src/llm/errors.js";

/** The LlmError a call must fail with. */
export async function llmFailure(p: Promise<unknown>): Promise<LlmError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(LlmError);
    return e as LlmError;
  }
  throw new Error("expected the call to fail");
}
