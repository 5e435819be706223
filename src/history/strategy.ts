// The interpreter-aware compressed view as one compaction strategy among the others. Its
// stored conversation is the full history; the turn records (`Conversation.records`, the view's
// input) are what it summarizes from, so its messages are exactly compressedView's.
import { z } from "zod";
import type { StrategyDefinition } from "../compaction/registry-types.js";
import type { StrategySpec } from "../compaction/registry.js";
import { clock, finish } from "../compaction/result.js";
import { promptTokens } from "../compaction/tokens.js";
import type { Json } from "../compaction/types.js";
import { compressedView } from "./compressed.js";
import { givenViewOptionsSchema, resolveViewOptions } from "../trace/view-settings.js";
import type { ViewInput, ViewOptions } from "./view.js";

export const INTERPRETER_STRATEGY = "interpreter-summaries";

/**
 * The spec as a client with this cache runs it: the interpreter strategy lays its summaries out
 * for the client's cache (`Llm.cacheModel`), its minimum and its write price, when known, unless
 * the spec names them, and the breakpoints it allows (`marks`); any other spec as it is. The agent and the harness both ask here. Laid out for a
 * token-prefix cache and sent to a breakpoint one, its growing summary message missed on every
 * prompt (1.24x full history); told no minimum, the bench's sessions priced under
 * claude-haiku-4's 4,096 tokens cost up to 1.67x full history (code-search).
 */
export function forClientCache(spec: StrategySpec | string, cache: "token-prefix" | "breakpoint" | undefined, minTokens?: number, write?: number, marks?: number): StrategySpec | string {
  const s: StrategySpec = typeof spec === "string" ? { name: spec } : spec;
  if (s.name !== INTERPRETER_STRATEGY) return spec;
  const layout = cache !== undefined && s.options?.cacheModel === undefined;
  const minimum = minTokens !== undefined && s.options?.cacheMinTokens === undefined;
  const writes = write !== undefined && s.options?.cacheWrite === undefined;
  const allowed = marks !== undefined && s.options?.cacheMaxBreakpoints === undefined;
  if (!layout && !minimum && !writes && !allowed) return spec;
  return { name: s.name, options: { ...s.options, ...(layout ? { cacheModel: cache } : {}), ...(minimum ? { cacheMinTokens: minTokens } : {}), ...(writes ? { cacheWrite: write } : {}), ...(allowed ? { cacheMaxBreakpoints: marks } : {}) } };
}

type Options = Partial<Omit<ViewOptions, "compressHistory">> & Record<string, Json>;

const schema = givenViewOptionsSchema.omit({ compressHistory: true }) as unknown as z.ZodType<Options>;

function isViewInput(x: unknown): x is ViewInput {
  const r = x as Partial<ViewInput> | null;
  return typeof r === "object" && r !== null && typeof r.system === "string" && typeof r.task === "string" && Array.isArray(r.turns) && typeof r.maxTurns === "number";
}

export const interpreterStrategy: StrategyDefinition<Options, ViewInput> = {
  name: INTERPRETER_STRATEGY,
  description: "PTC-Lisp runs only: earlier turns become summaries of what they defined, called and printed (seed 003); needs the turn records.",
  usesLlm: false,
  schema,
  create: (options) => {
    const view = resolveViewOptions(options, { compressHistory: true });
    // The breakpoints of the view last built, for the client asked right after (the loop
    // passes the projection it sent, hidden values shown: same messages, other objects).
    let marked: { count: number; breakpoints: number[] } | undefined;
    return {
      name: INTERPRETER_STRATEGY,
      options,
      usesLlm: false,
      initialState: () => null,
      project(conversation, state, context) {
        const started = clock(context)();
        // Without the turn records (any other app's chat) there is nothing to summarize from.
        if (!isViewInput(conversation.records)) {
          return finish(conversation, conversation.messages.slice(), state, [{ kind: "skipped", detail: "no PTC-Lisp turn records to summarize" }], started, context);
        }
        const built = compressedView(conversation.records, view);
        marked = { count: built.messages.length, breakpoints: built.breakpoints ?? (built.messages.length > 2 ? [1] : []) };
        const events = built.stats.turnsCompressed > 0 ? [{ kind: "compacted" as const, replaced: built.stats.turnsCompressed, detail: `${built.stats.turnsCompressed} turns summarized` }] : [];
        // Not through finish's never-larger guard: the view may add samples of what a turn
        // defined without printing (seed 003), which makes an early prompt larger on purpose.
        const tokensIn = promptTokens(conversation.messages);
        const tokensOut = promptTokens(built.messages);
        const stats = { messagesIn: conversation.messages.length, tokensIn, messagesOut: built.messages.length, tokensOut, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0, durationMs: clock(context)() - started, compressionRatio: tokensIn === 0 ? 1 : tokensOut / tokensIn };
        return { messages: built.messages, state, events, stats, details: built.stats as unknown as Record<string, Json> };
      },
      // After the task (every prompt reads the system prompt and the task) and, with the
      // breakpoint layout, at the last message, whose summaries later prompts keep as they are.
      cacheBreakpoints(projected) {
        if (marked !== undefined && marked.count === projected.length) return marked.breakpoints;
        return projected.length > 2 ? [1] : [];
      },
    };
  },
};
