// The baseline: every stored message, unchanged.
import { z } from "zod";
import { clock, finish } from "../result.js";
import type { StrategyDefinition } from "../registry-types.js";

export const fullStrategy: StrategyDefinition<Record<string, never>> = {
  name: "full",
  description: "Sends every stored message unchanged (the baseline).",
  usesLlm: false,
  schema: z.object({}).strict(),
  create: (options) => ({
    name: "full",
    options,
    usesLlm: false,
    initialState: () => null,
    project(conversation, state, context) {
      return finish(conversation, conversation.messages.slice(), state, [], clock(context)(), context);
    },
  }),
};
