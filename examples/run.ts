// Runs an example as an agent: the scripted transcript by default, or any other LLM.
import { SubAgent, type RunOptions, type Step } from "../src/agent/subagent.js";
import { scriptedLlm, type ScriptedLlm } from "../src/llm/scripted.js";
import type { Example } from "./types.js";

/** The example's agent, as `SubAgent.create` builds it. */
export function exampleAgent(example: Example) {
  return SubAgent.create({ prompt: example.prompt, tools: { ...example.tools }, output: example.output, maxTurns: example.maxTurns });
}

/** The example's scripted transcript as an LLM: what runs use unless given another. */
export function scriptedExampleLlm(example: Example): ScriptedLlm {
  return scriptedLlm(example.replies, { name: `scripted:${example.name}` });
}

/**
 * Runs `example` with its scripted replies (offline), unless `options.llm` is given.
 * Other run options (compressHistory, signal, limits ...) pass through.
 */
export function runExample(example: Example, options: RunOptions = {}): Promise<Step> {
  return SubAgent.run(exampleAgent(example), {
    ...options,
    llm: options.llm ?? scriptedExampleLlm(example),
    context: options.context ?? example.context,
  });
}
