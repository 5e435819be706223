// A strategy without state or model calls, written as the one thing such strategies differ in:
// how the stored messages become the projected ones. The Strategy object around it, the clock,
// and the statistics and never-larger guarantee of `finish` are written here once.
import type { z } from "zod";
import type { ChatMessage } from "../../llm/types.js";
import type { StrategyDefinition } from "../registry-types.js";
import { clock, finish } from "../result.js";
import type { CompactionContext, CompactionEvent, Json } from "../types.js";
import { isObjectArg, mustBe } from "../../llm/args.js";

export interface PureStrategy<O extends Record<string, Json>> {
  readonly name: string;
  readonly description: string;
  /** Its options, with their defaults. */
  readonly schema: z.ZodType<O>;
  /**
   * The projection: new messages (reusing the stored message objects it keeps) and what was
   * done, or null when the messages go out as stored. `messages` must not be modified.
   */
  rewrite(messages: readonly ChatMessage[], options: O, context: CompactionContext): { messages: ChatMessage[]; events?: CompactionEvent[] } | null;
  /** As Strategy.cacheBreakpoints, given the options. */
  cacheBreakpoints?(projected: readonly ChatMessage[], options: O): number[];
}

/** A registrable strategy from its rewrite; it keeps no state and calls no model. */
export function pureStrategy<O extends Record<string, Json>>(def: PureStrategy<O>): StrategyDefinition<O> {
  if (!isObjectArg(def)) throw new TypeError(mustBe("pureStrategy: definition", "an object with name, schema and project", def));
  const breakpoints = def.cacheBreakpoints;
  return {
    name: def.name,
    description: def.description,
    usesLlm: false,
    schema: def.schema,
    create: (options) => ({
      name: def.name,
      options,
      usesLlm: false,
      initialState: () => null,
      ...(breakpoints === undefined ? {} : { cacheBreakpoints: (projected: readonly ChatMessage[]) => breakpoints(projected, options) }),
      project(conversation, state, context) {
        const started = clock(context)();
        const r = def.rewrite(conversation.messages, options, context);
        return finish(conversation, r === null ? conversation.messages.slice() : r.messages, state, r?.events ?? [], started, context);
      },
    }),
  };
}
