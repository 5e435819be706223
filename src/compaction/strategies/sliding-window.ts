// The last N turns after the system messages and the task; what falls out of the window is
// replaced by a one-line marker, so the model knows something is missing and roles alternate.
import { z } from "zod";
import { spliceSummary, taskIndex, turnStarts } from "../messages.js";
import { clock, finish } from "../result.js";
import type { StrategyDefinition } from "../registry-types.js";

const schema = z
  .object({
    /** Turns kept after the task. */
    turns: z.number().int().min(1).default(10),
    /** What a turn is: a round (from one user message to the next) or a step (also each assistant reply in a tool loop). */
    unit: z.enum(["round", "step"]).default("round"),
  })
  .strict();

export const slidingWindowStrategy: StrategyDefinition<z.output<typeof schema>> = {
  name: "sliding-window",
  description: "Keeps the system messages, the task and the last N turns; older turns are dropped behind a one-line marker.",
  usesLlm: false,
  schema,
  create: (options) => ({
    name: "sliding-window",
    options,
    usesLlm: false,
    initialState: () => null,
    project(conversation, state, context) {
      const started = clock(context)();
      const messages = conversation.messages;
      const task = taskIndex(messages);
      const starts = task < 0 ? [] : turnStarts(messages, options.unit, task);
      if (starts.length <= options.turns) return finish(conversation, messages.slice(), state, [], started, context);
      const cut = starts[starts.length - options.turns];
      const dropped = cut - task - 1;
      const projected = spliceSummary(messages, task, cut, `[${dropped} earlier messages omitted]`);
      return finish(conversation, projected, state, [{ kind: "compacted", messageIndex: task + 1, replaced: dropped }], started, context);
    },
  }),
};
