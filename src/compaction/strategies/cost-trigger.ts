// Cost trigger: summarize everything but the system messages, the task and the last keepLast
// messages only when the expected saving over the remaining turns pays for the summary call and
// for writing the changed prefix to the provider's cache again (see payback.ts).
import { z } from "zod";
import type { StrategyDefinition } from "../registry-types.js";
import { summaryOptions } from "../summarizers/engine.js";
import { fixedPriceSchema } from "../prices.js";
import { createTrigger } from "../triggers.js";
import { lastUnitStart, rollingStrategy } from "./rolling.js";

const schema = z
  .object({
    keepLast: z.number().int().min(1).default(2),
    remainingTurns: z.union([z.number().int().min(0), z.literal("auto")]).default("auto"),
    /** List prices in dollars per million tokens; by default looked up by the conversation's model. */
    price: fixedPriceSchema.optional(),
    ...summaryOptions,
  })
  .strict();

export const costTriggerStrategy: StrategyDefinition<z.output<typeof schema>> = {
  name: "cost-trigger",
  description: "Summarizes all but the system messages, the task and the last keepLast messages only when the saving over the remaining turns pays for the summary call and the cache rewrite.",
  usesLlm: true,
  schema,
  create(options) {
    const trigger = createTrigger({
      name: "cost-payback",
      options: {
        keepLast: options.keepLast,
        remainingTurns: options.remainingTurns,
        summaryTokens: options.summaryMaxTokens,
        // The summary is paid at its own model's prices, and not at all by an offline summarizer.
        summaryCall: !["facts", "copy", "extractive"].includes(options.summarizer),
        ...(options.summaryModel === undefined ? {} : { summaryModel: options.summaryModel }),
        ...(options.price === undefined ? {} : { price: options.price }),
      },
    });
    return rollingStrategy("cost-trigger", options, ({ conversation, messages, base, tokens, force }) => {
      const decision = force ? { compact: true, reason: "compaction forced" } : trigger.shouldCompact(conversation, tokens);
      if (!decision.compact) return undefined;
      const cut = lastUnitStart(messages, messages.length - options.keepLast);
      return cut > base ? cut : { skip: decision.reason };
    });
  },
};
