// What an example scenario is: an agent definition (mission, tools, output schema, turn
// budget), the context it runs on, a scripted LLM transcript that solves it step by step,
// and the answer it must reach. Everything is plain data and pure tools, so the same module
// serves the demo, the tests, and the history-compression benchmark.
import type { z } from "zod";
import type { Tool } from "../src/agent/tools.js";

export interface Example {
  /** Short id, as in `ptc demo <name>`. */
  readonly name: string;
  readonly title: string;
  /** One or two sentences: what the scenario shows. */
  readonly summary: string;
  /** The mission; `{{key}}` placeholders are filled from `context`. */
  readonly prompt: string;
  readonly tools: Readonly<Record<string, Tool>>;
  /** What (return ...) must satisfy. */
  readonly output: z.ZodType;
  readonly maxTurns: number;
  /** Readable as data/key by the programs. */
  readonly context: Readonly<Record<string, unknown>>;
  /** The scripted LLM replies, one per turn, as a model would write them. */
  readonly replies: readonly string[];
  /** The value the run must return, computed from the data in TypeScript, independently of the transcript. */
  readonly expected: unknown;
}

/** Identity with a type check: keeps each example module's literal readable. */
export const defineExample = (example: Example): Example => Object.freeze(example);
