// Usage ratio (seed 002): when the prompt, its tool schemas and the reserved reply pass
// `threshold` of the model's context limit, everything but the system messages, the task and the
// last `keepLast` messages becomes one summary (folded into the previous one on later passes).
import { z } from "zod";
import type { StrategyDefinition } from "../registry-types.js";
import { summaryOptions } from "../summarizers/engine.js";
import { createTrigger } from "../triggers.js";
import { lastUnitStart, rollingStrategy } from "./rolling.js";

const schema = z
  .object({
    threshold: z.number().gt(0).max(1).default(0.8),
    keepLast: z.number().int().min(1).default(2),
    /** Overrides the model's context limit. */
    contextLimit: z.number().int().min(1).optional(),
    /** Extra or corrected entries for the context-limit table, by model-name prefix. */
    contextLimits: z.record(z.string(), z.number().int().min(1)).default({}),
    ...summaryOptions,
  })
  .strict();

export const usageRatioStrategy: StrategyDefinition<z.output<typeof schema>> = {
  name: "usage-ratio",
  description: "When prompt + tool schemas + reserved output pass threshold (0.8) of the model's context limit, summarizes everything but the system messages, the task and the last keepLast (2) messages.",
  usesLlm: true,
  schema,
  create(options) {
    const trigger = createTrigger({
      name: "usage-ratio",
      options: { threshold: options.threshold, contextLimits: options.contextLimits, ...(options.contextLimit === undefined ? {} : { contextLimit: options.contextLimit }) },
    });
    return rollingStrategy("usage-ratio", options, ({ conversation, messages, base, tokens, force }) => {
      const decision = force ? { compact: true, reason: "compaction forced" } : trigger.shouldCompact(conversation, tokens);
      if (!decision.compact) return undefined;
      const cut = lastUnitStart(messages, messages.length - options.keepLast);
      return cut > base ? cut : { skip: `${decision.reason}, but nothing older than the last ${options.keepLast} messages is left to summarize` };
    });
  },
};
