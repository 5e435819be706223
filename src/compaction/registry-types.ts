// What a registered strategy declares: its name, what it does, whether it calls a model, and
// its options as a zod schema whose defaults are the seed's parameters.
import type { z } from "zod";
import type { Json, Strategy } from "./types.js";

export interface StrategyDefinition<O extends Record<string, Json>, R = unknown> {
  readonly name: string;
  readonly description: string;
  /** Whether it calls a model when one is given (it falls back to the extractive summarizer without one). */
  readonly usesLlm: boolean;
  readonly schema: z.ZodType<O>;
  create(options: O): Strategy<Json, R>;
}
