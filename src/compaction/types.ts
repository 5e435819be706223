// The compaction seam. A strategy projects the stored conversation onto the messages sent to the
// model. It never changes the stored history: it returns new messages (reusing the stored message
// objects it keeps, so callers can forward them untouched) and a new state value that the caller
// stores, so a proxy or a resumed run continues exactly where it left off.
import type { ChatMessage, Llm } from "../llm/types.js";

/** JSON-serializable data: strategy state and options must survive a round trip through storage. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * What a strategy sees: the stored conversation and what the next request will carry with it.
 * `R` types the structured records behind the messages, for the strategies that read them (the
 * PTC-Lisp turn records for the interpreter-aware strategy); a generic chat has none.
 */
export interface Conversation<R = unknown> {
  /** Every stored message, oldest first, as the app sent them. Never mutated. */
  readonly messages: readonly ChatMessage[];
  /** The model the conversation talks to (context limit and prices are looked up by it). */
  readonly model?: string;
  /** Tool schemas sent with each request (they count against the context budget). */
  readonly tools?: readonly unknown[];
  /** Tokens reserved for the reply (max_tokens), also counted against the budget. */
  readonly reservedOutputTokens?: number;
  /** Structured records behind the messages, typed by the strategy that reads them. */
  readonly records?: R;
  /**
   * Prompt tokens the provider reported for the previous request, when known; strategies and
   * triggers use it instead of a local estimate.
   */
  readonly reportedPromptTokens?: number;
}

/**
 * The records the summarizing strategies read (`Conversation<KnownNames>`): names that exist in
 * the run's live state (e.g. PTC-Lisp interpreter variables). Summaries list exactly these and
 * may mention no other; never taken from a model's output.
 */
export interface KnownNames {
  readonly knownNames?: readonly string[];
}

/** The known names a conversation's records carry, when they are a list of strings. */
export function knownNamesOf(records: unknown): readonly string[] | undefined {
  const names = typeof records === "object" && records !== null ? (records as KnownNames).knownNames : undefined;
  return Array.isArray(names) && names.every((n) => typeof n === "string") ? names : undefined;
}

/** What a strategy may use besides the conversation. */
export interface CompactionContext {
  /** The summarizer's model client, for strategies that declare `usesLlm` (usually a cheaper model). */
  readonly llm?: Llm;
  /** Cancels an in-flight summary call. */
  readonly signal?: AbortSignal;
  /** Clock for durations and back-off (tests pass a fake). */
  readonly now?: () => number;
  /**
   * Compact now, whatever the strategy's trigger says (an operator's "compact this
   * conversation"): strategies with a trigger cut as far as their keep rules allow.
   */
  readonly force?: boolean;
}

export type CompactionEventKind =
  | "compacted" // part of the history was replaced (summary, recap, drop)
  | "skipped" // the trigger fired but the strategy decided not to rewrite (nothing old enough, no payback)
  | "summary_failed" // an LLM summary was empty, invalid or threw, or a goal detector's call failed; the history went through unsummarized
  | "circuit_open" // too many consecutive failures: summaries paused until the back-off passes
  | "goal_boundary"; // a new goal was detected at `messageIndex`

export interface CompactionEvent {
  readonly kind: CompactionEventKind;
  /** Index in the stored conversation the event is about (first replaced message, boundary...). */
  readonly messageIndex?: number;
  /** How many stored messages the event replaced. */
  readonly replaced?: number;
  readonly detail?: string;
}

export interface CompactionStats {
  /** Stored messages and their tokens (with chat framing). */
  readonly messagesIn: number;
  readonly tokensIn: number;
  /** Messages and tokens of the projection that would be sent. */
  readonly messagesOut: number;
  readonly tokensOut: number;
  /** LLM calls the compaction itself made and the tokens they used. */
  readonly llmCalls: number;
  readonly llmInputTokens: number;
  readonly llmOutputTokens: number;
  /** Wall time the projection took, including summary calls. */
  readonly durationMs: number;
  /** tokensOut / tokensIn (1 when nothing was compacted). */
  readonly compressionRatio?: number;
}

export interface CompactionResult<S extends Json = Json> {
  /** The messages to send: stored message objects where kept, new ones where compacted. */
  readonly messages: ChatMessage[];
  /** The state to store for the next request. */
  readonly state: S;
  readonly stats: CompactionStats;
  readonly events: readonly CompactionEvent[];
  /**
   * The summarizer that wrote this projection's summaries ("extractive" or "llm"), for
   * strategies that summarize; reports name a summary strategy together with it.
   */
  readonly summarizer?: string;
  /** Strategy-specific figures, recorded in traces as they are (the interpreter strategy: its view statistics). */
  readonly details?: Readonly<Record<string, Json>>;
}

/**
 * A compaction strategy. `usesLlm` declares whether it calls a model (then `project` may be async
 * and uses `context.llm`, falling back to the extractive summarizer when there is none).
 */
export interface Strategy<S extends Json = Json, R = unknown> {
  /** Registry name, e.g. "sliding-window", "recap", "rolling-summary". */
  readonly name: string;
  /** The options it runs with, resolved against its defaults; reports and traces record them. */
  readonly options: Readonly<Record<string, Json>>;
  readonly usesLlm: boolean;
  /** The state of a conversation it has never seen. */
  initialState(): S;
  project(conversation: Conversation<R>, state: S, context: CompactionContext): CompactionResult<S> | Promise<CompactionResult<S>>;
  /**
   * Whether `state` holds a compaction the next projection applies again (a stored summary), so
   * a caller can skip measuring a conversation that holds none and is far from any trigger. Optional.
   */
  compacted?(state: S): boolean;
  /**
   * Indices of messages in a projection that the next projections keep unchanged up to, where a
   * breakpoint cache (Anthropic's `cache_control`) should be marked besides the last message, so
   * the cached prefix survives when the strategy rewrites what follows. Optional.
   */
  cacheBreakpoints?(projected: readonly ChatMessage[]): number[];
}

/** When to compact, separate from how. */
export interface Trigger {
  readonly name: string;
  readonly options: Readonly<Record<string, Json>>;
  /** Whether the conversation, as it would be sent now, should be compacted. */
  shouldCompact(conversation: Conversation, promptTokens: number): TriggerDecision;
}

export interface TriggerDecision {
  readonly compact: boolean;
  /** Why, in words fit for a status page or log ("usage 0.83 of 128000 > 0.8"). */
  readonly reason: string;
}

/** Turns a run of messages into a shorter text. The extractive one needs no model. */
export interface Summarizer {
  readonly name: string;
  readonly usesLlm: boolean;
  summarize(request: SummaryRequest, context: CompactionContext): Promise<SummaryResult>;
}

export interface SummaryRequest {
  /** The messages to summarize, oldest first. */
  readonly messages: readonly ChatMessage[];
  /** A previous summary these messages continue, folded into the new one. */
  readonly previous?: string;
  /** Upper bound on the summary's tokens. */
  readonly maxTokens: number;
  /** Names that exist (e.g. interpreter variables), which a summary may mention; anything else is invented. */
  readonly knownNames?: readonly string[];
}

export interface SummaryResult {
  readonly text: string;
  readonly llmCalls: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
}
