// The seam between the trace and the next prompt: a prompt view is a pure function from
// the turns so far (and options) to the messages sent to the LLM. Same input, same bytes.
import type { TextMessage as ChatMessage } from "../llm/types.js";
import type { Turn } from "../trace/trace.js";
import type { FullReason, ViewOptions, ViewStats } from "../trace/view-settings.js";

export type { FullReason, ViewOptions, ViewStats };

export interface ViewInput {
  /** The system prompt (static, byte-stable). */
  system: string;
  /** The first user message: the task. */
  task: string;
  /** Completed turns, oldest first. */
  turns: readonly Turn[];
  /** Turn budget of the run (for turn lines such as "Turn 3 of 5"). */
  maxTurns: number;
  /** The run withdraws its tools on the final turn (re-rendered feedback says so, as the loop's did). */
  toolsWithdrawn?: boolean;
  /** Characters of println output the loop's feedback shows (default: the feedback's own). */
  maxPrintChars?: number;
}

export { defaultViewOptions, resolveViewOptions, type ResolvedViewOptions } from "../trace/view-settings.js";

export interface View {
  messages: ChatMessage[];
  stats: ViewStats;
  /** Where each turn is shown, oldest first (several summaries can share a message). */
  turns?: TurnPlace[];
  /** Messages that end with a cache breakpoint, for breakpoint caches (Anthropic's `cache_control`); absent: the last one. */
  breakpoints?: number[];
}

/** A turn's text in a view: its summary or its reply, at `start` in the content of message `message`. */
export interface TurnPlace {
  turn: number;
  message: number;
  start: number;
  text: string;
}

export type PromptView = (input: ViewInput, options: ViewOptions) => View;
