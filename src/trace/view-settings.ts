// What the trace records about each prompt: the view options that built it and the view's
// statistics. The types live here, below the views in src/history, so turn records need
// nothing from the layers that read them, and the one schema of the view options (with their
// defaults) and the one function that merges and resolves them live here too, so a stored run
// is read without the views.
import { z } from "zod";

export interface ViewOptions {
  /** Replace old successful turns with summaries (interpreter-aware compression). */
  compressHistory: boolean;
  /** Most recent println outputs kept in the compressed view. */
  printlnHistoryLimit: number;
  /**
   * Token budget of the println output kept, beside the line limit: past either, the
   * oldest turns' output is dropped, keeping at least half the line limit within half the
   * budget (default 1000: the line limit at about 65 tokens a line, a wide row of a record).
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
   * Strict-prefix mode with the earlier timing (`keepLatestFull`): a turn shown in full is
   * summarized only if its summary pays back its one uncached write within this many later
   * prompts at the cached price of the cache model (a summary of at most 62.5% of the turn,
   * for 15 under a prefix cache); other turns stay as written. With the design's timing a
   * summary is the turn's first appearance, rewrites nothing, and is taken whenever smaller.
   * 0: whenever smaller. Default 15.
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
  /**
   * The shortest prefix the provider caches (`minTokens` of its cache in prices.ts: 1,024 for
   * OpenAI and most Claude models, 2,048 or 4,096 for others). A prompt below it is not cached at
   * all, so while the system prompt, the task and the turns so far are below it, the view shows
   * them as full history does, which reaches it soonest. Default 1,024 (the agent's system prompt
   * alone passes it and 2,048; the agent takes its client's model's minimum where it knows it).
   */
  cacheMinTokens?: number;
  /**
   * What a breakpoint cache bills a token written into it, as a multiple of the input price
   * (`write` of its cache in prices.ts: 1.25 for Anthropic's 5-minute cache, 2 for its 1-hour one).
   * Every rewrite the view makes must pay back at this price; priced at 1.25 under a cache writing
   * at 2x, a function refined every turn cost 1.0023x full history at its own budget. Default 1.25.
   */
  cacheWrite?: number;
  /**
   * How many breakpoints a breakpoint cache allows in one request (`maxBreakpoints` of its cache
   * in prices.ts: 4 for Anthropic). The default layout places four and rewrites what the last one
   * ends on (the tail after the turn just done, a println cut), relying on the marks before it; with
   * fewer the client drops the earliest, and a run cost up to 2.03x full history with one mark, 2.75x
   * with two and no lookback, so there the view keeps a strict prefix (`strictPrefix`). Default 4.
   */
  cacheMaxBreakpoints?: number;
  /**
   * The first turns an earlier prompt of the run sent as full history shows them, under its system
   * prompt: a run saved under full history and resumed with compression (`SubAgent.resume` sets it).
   * They are shown so, as the turns below the cache's minimum are, so the cache that holds them
   * still serves them; the turns after them are summarized as usual. Default 0.
   */
  fullTurns?: number;
}

/**
 * Why a turn is kept in full: the latest turn, an errored turn, a turn just before an
 * error, the only turn of a single-shot run, a program shorter than its summary, a
 * summary that would not pay back the rewrite of the cached prompt it costs, or a turn
 * the prompt needs to reach the cache's minimum (`cacheMinTokens`; shown as full history shows it).
 */
export type FullReason = "latest" | "error" | "error-context" | "single" | "short" | "cost" | "uncached";

/** Per-view statistics (compression fills these in; the full view reports zeros). */
export interface ViewStats {
  turnsCompressed: number;
  /** Turn numbers kept in full, with why. */
  turnsFull: Array<{ turn: number; reason: FullReason }>;
  definitionsShown: number;
  printlnShown: number;
  printlnDropped: number;
  toolCallsShown: number;
  /** Definitions a later turn redefines, left out of the summaries rewritten for it. */
  definitionsSuperseded?: number;
  /** Tool calls counted but not listed (past `toolCallsPerTurn`). */
  toolCallsDropped?: number;
}

const count = z.number().int().nonnegative();

/**
 * The prompt-view options: the one schema, defaults included (each field's meaning is on
 * `ViewOptions`). A stored view (a trace's settings, a saved run state) is read through it, and
 * every caller that merges options given in several places resolves them with
 * `resolveViewOptions`, so one partial set of options resolves to one object everywhere.
 */
export const viewOptionsSchema = z.object({
  compressHistory: z.boolean().default(false),
  printlnHistoryLimit: count.default(15),
  errorContextTurns: count.default(1),
  sampleItems: z.number().int().positive().default(3),
  sampleChars: z.number().int().positive().default(80),
  strictPrefix: z.boolean().default(false),
  toolCallsPerTurn: z.number().int().positive().default(10),
  paybackPrompts: count.default(15),
  errorWindowTurns: count.default(2),
  keepLatestFull: z.boolean().default(false),
  printlnHistoryTokens: count.default(1000),
  dropAfterTokens: count.default(500),
  cacheModel: z.enum(["token-prefix", "breakpoint"]).default("token-prefix"),
  cacheMinTokens: count.default(1024),
  fullTurns: count.default(0),
  cacheWrite: z.number().finite().nonnegative().default(1.25),
  cacheMaxBreakpoints: z.number().int().positive().default(4),
});

/** Every view option filled in. */
export type ResolvedViewOptions = Required<ViewOptions>;

// The schema and the documented type stay one shape: a field added to one and not the other fails to compile.
const sameShape: [ResolvedViewOptions, z.output<typeof viewOptionsSchema>] extends [z.output<typeof viewOptionsSchema>, ResolvedViewOptions] ? true : never = true;
void sameShape;

const VIEW_KEYS = Object.keys(viewOptionsSchema.shape) as Array<keyof ViewOptions>;

/** The options as given, checked but not filled in (the interpreter strategy's options; what a run records it was given). */
export const givenViewOptionsSchema = z
  .object(Object.fromEntries(VIEW_KEYS.map((k) => [k, viewOptionsSchema.shape[k].unwrap().optional()])) as { [K in keyof ViewOptions]-?: z.ZodOptional<ReturnType<(typeof viewOptionsSchema.shape)[K]["unwrap"]>> })
  .strict();

export const defaultViewOptions: Readonly<ResolvedViewOptions> = Object.freeze(viewOptionsSchema.parse({}));

/**
 * A place view options are given: the options themselves, or an agent's, a run's or a save's
 * options, where they sit in `view` beside the top-level shorthands (`compressHistory`,
 * `printlnHistoryLimit`), which win over `view`.
 */
export type ViewLayer = Partial<ViewOptions> & { readonly view?: Partial<ViewOptions> };

/** The options set in `layers` (later layers win; an undefined value sets nothing), nothing filled in. */
export function mergeViewOptions(...layers: ReadonlyArray<ViewLayer | undefined>): Partial<ViewOptions> {
  const out: Record<string, unknown> = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const k of VIEW_KEYS) {
      const v = layer[k] ?? layer.view?.[k];
      if (v !== undefined) out[k] = v;
    }
  }
  return out as Partial<ViewOptions>;
}

/**
 * The view options given in `layers`, merged (see mergeViewOptions) and filled in from the
 * schema's defaults. Throws a TypeError naming the option on an invalid value. Options already
 * resolved pass through as they are (the per-prompt build's case).
 */
export function resolveViewOptions(...layers: ReadonlyArray<ViewLayer | undefined>): ResolvedViewOptions {
  if (layers.length === 1 && layers[0] !== undefined && layers[0].view === undefined && VIEW_KEYS.every((k) => layers[0]?.[k] !== undefined)) return layers[0] as ResolvedViewOptions;
  const checked = viewOptionsSchema.safeParse(mergeViewOptions(...layers));
  if (!checked.success) throw new TypeError(viewOptionsProblem(checked.error));
  return checked.data;
}

/** What is wrong with view options as given (unknown keys included), or undefined when nothing is. */
export function checkViewOptions(given: unknown): string | undefined {
  const checked = givenViewOptionsSchema.safeParse(given);
  return checked.success ? undefined : viewOptionsProblem(checked.error);
}

function viewOptionsProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue.code === "unrecognized_keys") return `unknown view option '${issue.keys[0]}'; known: ${VIEW_KEYS.join(", ")}`;
  return `view.${issue.path.join(".")}: ${issue.message}`;
}
