// The hybrid of "The Complexity Trap" (2025): mask old observations first; summarize only when
// the masked prompt still fires a trigger (by default, passes a token budget). Composed from
// the observation-masking strategy, any trigger, and the rolling-summary machinery: the summary
// folds the turns before the masking boundary, which no longer change as the conversation
// grows, so the summary's fingerprint holds and the tail the masking keeps whole stays whole.
import { z } from "zod";
import { addSpend, clock, finish, noSpend } from "../result.js";
import type { StrategyDefinition } from "../registry-types.js";
import { summaryOptions } from "../summarizers/engine.js";
import { createTrigger, triggerSpecSchema } from "../triggers.js";
import { maskBoundary, maskingShape, observationMaskingStrategy, overridesAgree, overridesMessage } from "./observation-masking.js";
import { rollingStrategy, SUMMARY_HEADER, type RollingState } from "./rolling.js";
import { taskIndex } from "../messages.js";

const schema = z
  .object({
    ...maskingShape,
    /** When to summarize the masked prompt. */
    trigger: triggerSpecSchema.default({ name: "token-threshold", options: { maxTokens: 32_000 } }),
    ...summaryOptions,
  })
  .strict()
  .refine(overridesAgree, overridesMessage);

export type MaskThenSummarizeOptions = z.output<typeof schema>;

export const maskThenSummarizeStrategy: StrategyDefinition<MaskThenSummarizeOptions> = {
  name: "mask-then-summarize",
  description: "Observation masking first; when the masked prompt still fires the trigger (token-threshold 32000), the turns before the masking boundary are folded into a rolling summary.",
  usesLlm: true,
  schema,
  create(options) {
    const { turns, polling, neverMask, alwaysMask, userReplies, firstLineChars } = options;
    const masking = observationMaskingStrategy.create({ turns, polling, neverMask, alwaysMask, userReplies, firstLineChars });
    const trigger = createTrigger(options.trigger);
    const summary = rollingStrategy("mask-then-summarize", options, ({ conversation, messages, base, sent, tokens, force }) => {
      const decision = force ? { compact: true, reason: "compaction forced" } : trigger.shouldCompact({ ...conversation, messages: sent }, tokens);
      if (!decision.compact) return undefined;
      const cut = maskBoundary(messages, options);
      return cut > base ? cut : { skip: `${decision.reason}, but no masked turn is left to summarize` };
    });
    return {
      name: "mask-then-summarize",
      options,
      usesLlm: true,
      initialState: summary.initialState,
      // Before the first summary, the masking's boundaries; after it, the summary, which stays
      // until the next fold (the masked tail behind it is below the budget).
      cacheBreakpoints(projected) {
        const task = taskIndex(projected);
        const at = task < 0 ? -1 : projected.findIndex((m, i) => i > task && typeof m.content === "string" && m.content.startsWith(SUMMARY_HEADER));
        return at < 0 ? (masking.cacheBreakpoints?.(projected) ?? []) : [at];
      },
      async project(conversation, state, context) {
        const started = clock(context)();
        const first = await masking.project(conversation, null, context);
        const second = await summary.project({ ...conversation, messages: first.messages }, state as RollingState, context);
        const spend = noSpend();
        addSpend(spend, { calls: second.stats.llmCalls, inputTokens: second.stats.llmInputTokens, outputTokens: second.stats.llmOutputTokens });
        return finish(conversation, second.messages, second.state, [...first.events, ...second.events], started, context, spend, second.summarizer);
      },
    };
  },
};
