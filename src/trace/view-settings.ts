// What the trace records about each prompt: the view options that built it and the view's
// statistics. The types live here, below the views in src/history, so turn records need
// nothing from the layers that read them.

export interface ViewOptions {
  /** Replace old successful turns with summaries (interpreter-aware compression). */
  compressHistory: boolean;
  /** Most recent println outputs kept in the compressed view. */
  printlnHistoryLimit: number;
  /**
   * Token budget of the println output kept, beside the line limit: past either, the
   * oldest turns' output is dropped, keeping at least half the line limit (default 2000).
   */
  printlnHistoryTokens?: number;
  /**
   * Println output is dropped only once it passes this many tokens (default 500): dropping
   * less rewrites the cached prompt from the dropped turn on for a saving that never pays
   * that back, so below it compression costs nothing extra.
   */
  dropAfterTokens?: number;
  /** Turns of full code kept before an errored turn. */
  errorContextTurns: number;
  /**
   * An errored turn keeps its full code while it is one of this many most recent turns,
   * or while no later turn has succeeded; after that its program is summarized and its
   * feedback keeps the error's first line (default 2: the error and the turn after it).
   * 0 keeps every error in full.
   */
  errorWindowTurns?: number;
  /** Items and characters of data samples in summaries. */
  sampleItems: number;
  sampleChars: number;
  /**
   * Never rewrite a summary once written: a superseded definition stays as it was shown,
   * and the println limit applies per turn when the turn is summarized (its last N
   * lines) instead of over the whole history. A larger prompt, a prefix that only grows.
   */
  strictPrefix: boolean;
  /** Tool calls listed one per line in a summary; the rest are counted by tool (default 10). */
  toolCallsPerTurn?: number;
  /**
   * Strict-prefix mode only: a turn is summarized only if its summary pays back its one
   * uncached write within this many later prompts at the cached price (a summary of at
   * most 62.5% of the turn, for 15); other turns stay as written. 0: whenever smaller.
   * Default 15.
   */
  paybackPrompts?: number;
  /**
   * Keep the latest turn's program in full for one more prompt (the behaviour before
   * round 2). Default false: as in the reference design, a successful turn is summarized
   * as soon as the next turn starts (its output stays whole); errored turns stay in full.
   */
  keepLatestFull?: boolean;
  /**
   * The provider's prompt cache. "token-prefix" (OpenAI style, default): consecutive
   * summaries share one assistant message, extended where the previous prompt ended.
   * "breakpoint" (Anthropic style: a hit needs a message boundary an earlier request wrote):
   * each summary is its own message, appended once, and the view marks breakpoints after
   * the task and at the last message.
   */
  cacheModel?: "token-prefix" | "breakpoint";
}

/**
 * Why a turn is kept in full: the latest turn, an errored turn, a turn just before an
 * error, the only turn of a single-shot run, a program shorter than its summary, or (in
 * strict-prefix mode) a summary that would not pay back its cache write.
 */
export type FullReason = "latest" | "error" | "error-context" | "single" | "short" | "cost";

/** Per-view statistics (compression fills these in; the full view reports zeros). */
export interface ViewStats {
  turnsCompressed: number;
  /** Turn numbers kept in full, with why. */
  turnsFull: Array<{ turn: number; reason: FullReason }>;
  definitionsShown: number;
  printlnShown: number;
  printlnDropped: number;
  toolCallsShown: number;
  /** Definitions shown only as "redefined later" markers. */
  definitionsSuperseded?: number;
  /** Tool calls counted but not listed (past `toolCallsPerTurn`). */
  toolCallsDropped?: number;
}
