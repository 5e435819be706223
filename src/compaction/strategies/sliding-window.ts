// The last N turns after the system messages and the task; what falls out of the window is
// replaced by a one-line marker, so the model knows something is missing and roles alternate.
import { z } from "zod";
import { replacedCount, spliceSummary, taskIndex, turnStarts } from "../messages.js";
import { pureStrategy } from "./pure.js";

const schema = z
  .object({
    /** Turns kept after the task. */
    turns: z.number().int().min(1).default(10),
    /** What a turn is: a round (from one user message to the next) or a step (also each assistant reply in a tool loop). */
    unit: z.enum(["round", "step"]).default("round"),
  })
  .strict();

export const slidingWindowStrategy = pureStrategy<z.output<typeof schema>>({
  name: "sliding-window",
  description: "Keeps the system messages, the task and the last N turns; older turns are dropped behind a one-line marker.",
  schema,
  rewrite(messages, options) {
    const task = taskIndex(messages);
    const starts = task < 0 ? [] : turnStarts(messages, options.unit, task);
    if (starts.length <= options.turns) return null;
    const cut = starts[starts.length - options.turns];
    const dropped = replacedCount(messages, task, cut);
    return { messages: spliceSummary(messages, task, cut, `[${dropped} earlier messages omitted]`), events: [{ kind: "compacted", messageIndex: task + 1, replaced: dropped }] };
  },
});
