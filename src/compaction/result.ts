// Building a CompactionResult: statistics from cached per-message token counts, and the one
// guarantee every strategy shares: a projection is never larger than the stored conversation.
import type { ChatMessage } from "../llm/types.js";
import { promptTokens } from "./tokens.js";
import { firstProblem, ownEntries, type ValueStep } from "../json/value-problem.js";
import type { CompactionContext, CompactionEvent, CompactionResult, Conversation, Json } from "./types.js";

/**
 * Where `value` is not `Json` (a strategy's state, which traces and saved states keep as JSON
 * and read back checked): `state.seen is a Map`, or null. Keys are cut in the path.
 */
export function jsonProblem(value: unknown, path = "state"): string | null {
  return firstProblem(value, path, jsonStep);
}

function jsonStep(v: unknown, path: string): ValueStep {
  if (v === null || typeof v === "string" || typeof v === "boolean") return null;
  if (typeof v === "number") return Number.isFinite(v) ? null : `${path} is ${String(v)}`;
  if (typeof v !== "object") return `${path} is ${v === undefined ? "undefined" : `a ${typeof v}`}`;
  const proto: unknown = Object.getPrototypeOf(v);
  if (!Array.isArray(v) && proto !== Object.prototype && proto !== null) return `${path} is a ${(v as { constructor?: { name?: unknown } }).constructor?.name ?? "class instance"}`;
  return ownEntries(v, path);
}

/** What a summary step spent on LLM calls. */
export interface LlmSpend {
  calls: number;
  inputTokens: number;
  outputTokens: number;
}

export const noSpend = (): LlmSpend => ({ calls: 0, inputTokens: 0, outputTokens: 0 });

export function addSpend(total: LlmSpend, more: LlmSpend): void {
  total.calls += more.calls;
  total.inputTokens += more.inputTokens;
  total.outputTokens += more.outputTokens;
}

export const clock = (context: CompactionContext): (() => number) => context.now ?? (() => performance.now());

/**
 * The result of a projection. A projection with more tokens than its input (possible only when
 * a summary or marker outweighs what it replaced) is discarded for the stored messages.
 */
export function finish<S extends Json>(
  conversation: Conversation<unknown>,
  projected: ChatMessage[],
  state: S,
  events: CompactionEvent[],
  started: number,
  context: CompactionContext,
  spend: LlmSpend = noSpend(),
  summarizer?: string,
): CompactionResult<S> {
  const tokensIn = promptTokens(conversation.messages);
  let messages = projected;
  let tokensOut = promptTokens(projected);
  let happened = events;
  if (tokensOut > tokensIn) {
    messages = conversation.messages.slice();
    tokensOut = tokensIn;
    // Nothing the strategy replaced is sent, so no compaction is reported.
    happened = events.filter((e) => e.kind !== "compacted");
    happened.push({ kind: "skipped", detail: "the projection was not smaller than the stored conversation" });
  }
  return {
    messages,
    state,
    events: happened,
    ...(summarizer === undefined ? {} : { summarizer }),
    stats: {
      messagesIn: conversation.messages.length,
      tokensIn,
      messagesOut: messages.length,
      tokensOut,
      llmCalls: spend.calls,
      llmInputTokens: spend.inputTokens,
      llmOutputTokens: spend.outputTokens,
      durationMs: clock(context)() - started,
      compressionRatio: tokensIn === 0 ? 1 : tokensOut / tokensIn,
    },
  };
}
