// Rolling summary (seed 001, TaskWeaver's RoundCompressor): once the unsummarized rounds reach
// roundsToCompress + roundsToRetain, all but the last roundsToRetain are folded into the
// summary together with the previous one. Rounds already folded are never summarized again.
// With `maxPromptTokens` (the seed's token-based trigger) or a `trigger`, the fold also happens
// when the prompt is too large, whatever the round count.
import { z } from "zod";
import { turnStarts } from "../messages.js";
import type { StrategyDefinition } from "../registry-types.js";
import { summaryOptions } from "../summarizers/engine.js";
import { createTrigger, triggerSpecSchema } from "../triggers.js";
import { rollingStrategy } from "./rolling.js";

const schema = z
  .object({
    roundsToCompress: z.number().int().min(1).default(2),
    roundsToRetain: z.number().int().min(1).default(3),
    unit: z.enum(["round", "step"]).default("round"),
    /** Also fold when the prompt exceeds this many tokens (0: rounds only). */
    maxPromptTokens: z.number().int().min(0).default(0),
    trigger: triggerSpecSchema.optional(),
    ...summaryOptions,
  })
  .strict();

export const rollingSummaryStrategy: StrategyDefinition<z.output<typeof schema>> = {
  name: "rolling-summary",
  description: "Folds the oldest rounds into one rolling summary once roundsToCompress + roundsToRetain rounds are unsummarized (or the prompt passes maxPromptTokens); keeps the last roundsToRetain rounds verbatim.",
  usesLlm: true,
  schema,
  create(options) {
    const trigger = options.trigger ? createTrigger(options.trigger) : undefined;
    return rollingStrategy("rolling-summary", options, ({ conversation, messages, base, sent, tokens, force }) => {
      const starts = turnStarts(messages, options.unit, base - 1);
      const segments = starts[0] === base ? starts : [base, ...starts].filter((i) => i < messages.length);
      const n = segments.length;
      if (n <= options.roundsToRetain) return undefined;
      const byRounds = n >= options.roundsToCompress + options.roundsToRetain;
      const byTokens = options.maxPromptTokens > 0 && tokens > options.maxPromptTokens;
      // Judged on the prompt as sent: on the stored messages a message count, once passed, fired on every request after.
      const byTrigger = trigger !== undefined && trigger.shouldCompact({ ...conversation, messages: sent }, tokens).compact;
      return force || byRounds || byTokens || byTrigger ? segments[n - options.roundsToRetain] : undefined;
    });
  },
};
