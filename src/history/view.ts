// The seam between the trace and the next prompt: a prompt view is a pure function from
// the turns so far (and options) to the messages sent to the LLM. Same input, same bytes.
import type { ChatMessage } from "../agent/llm/types.js";
import type { Turn } from "../agent/trace.js";

export interface ViewInput {
  /** The system prompt (static, byte-stable). */
  system: string;
  /** The first user message: the task. */
  task: string;
  /** Completed turns, oldest first. */
  turns: readonly Turn[];
  /** Turn budget of the run (for turn lines such as "Turn 3 of 5"). */
  maxTurns: number;
}

export interface ViewOptions {
  /** Replace old successful turns with summaries (interpreter-aware compression). */
  compressHistory: boolean;
  /** Most recent println outputs kept in the compressed view. */
  printlnHistoryLimit: number;
  /** Turns of full code kept before an errored turn. */
  errorContextTurns: number;
  /** Items and characters of data samples in summaries. */
  sampleItems: number;
  sampleChars: number;
  /** Never rewrite an earlier summary, even when a definition it shows is superseded. */
  strictPrefix: boolean;
}

export const defaultViewOptions: Readonly<ViewOptions> = Object.freeze({
  compressHistory: false,
  printlnHistoryLimit: 15,
  errorContextTurns: 1,
  sampleItems: 3,
  sampleChars: 80,
  strictPrefix: false,
});

/** Per-view statistics (compression fills these in; the full view reports zeros). */
export interface ViewStats {
  turnsCompressed: number;
  /** Turn numbers kept in full, with why: latest, error, error-context. */
  turnsFull: Array<{ turn: number; reason: "latest" | "error" | "error-context" | "single" }>;
  definitionsShown: number;
  printlnShown: number;
  printlnDropped: number;
  toolCallsShown: number;
}

export interface View {
  messages: ChatMessage[];
  stats: ViewStats;
}

export type PromptView = (input: ViewInput, options: ViewOptions) => View;
