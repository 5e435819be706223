// Compression statistics for a run: for every prompt sent, what the compressed view
// kept and dropped, its size against the full view in real tokens, and how much of it
// a prefix cache could serve (the part identical to the previous prompt). Pure: they
// are rebuilt from the trace, so a stored run reports the same figures later.
import { isArrayArg, isObjectArg, mustBe } from "../llm/args.js";
import type { TextMessage as ChatMessage } from "../llm/types.js";
import type { RunTrace, Turn } from "../trace/trace.js";
import { compressedView } from "./compressed.js";
import { fullView } from "./full.js";
import { createMeter, sharedPrefix, type Prompt } from "../compaction/measure.js";
import { modelPrice, type ModelPrice } from "../compaction/prices.js";
import { promptTokens } from "../compaction/tokens.js";
import { defaultViewOptions, type View, type ViewInput, type ViewOptions, type ViewStats } from "./view.js";

/** One prompt: the view's statistics and its token figures. */
export interface PromptCompression extends ViewStats {
  /** The turn this prompt was sent for (1-based). */
  turn: number;
  /** Tokens of the full-history prompt for the same turn. */
  fullTokens: number;
  /** Tokens of the prompt as built with the run's options. */
  viewTokens: number;
  /** Tokens of `viewTokens` identical to the previous prompt's start (cacheable). */
  prefixTokens: number;
  /** The same for the full-history prompt. */
  fullPrefixTokens: number;
}

export interface CompressionTotals {
  prompts: number;
  /** Input tokens summed over all prompts. */
  fullTokens: number;
  viewTokens: number;
  /** The largest single prompt. */
  fullPeak: number;
  viewPeak: number;
  /** Dollars of the prompts' input under the price model's cache rules (src/compaction/measure.ts). */
  fullCachedCost: number;
  viewCachedCost: number;
  /** 1 - view/full over summed input tokens. */
  saved: number;
}

/** Compression figures of a run (for `step.usage.compression`): the options in force, one entry per prompt, and totals. */
export interface CompressionReport {
  enabled: boolean;
  strictPrefix: boolean;
  printlnHistoryLimit: number;
  errorContextTurns: number;
  prompts: PromptCompression[];
  totals: CompressionTotals;
}

/**
 * One turn's prompt as each view sends it, the compressed view's with its cache breakpoints: what
 * the totals price, prompt after prompt, with the one meter (a breakpoint cache hits only where an
 * earlier prompt wrote an entry, and bills writes).
 */
export interface SentPrompts {
  view: Prompt;
  full: Prompt;
}

/** The prompts sent for one turn under both views: what the next prompt's shared prefix is measured against. */
export interface PromptPair {
  view: readonly ChatMessage[];
  full: readonly ChatMessage[];
}

/**
 * Measures a prompt already built by a view for the turn after `input.turns`, against the
 * prompts sent for the turn before (none for the first turn). Returns the figures and the
 * pair to pass for the next turn. Texts are counted once (token counts are cached by
 * text) and prompts share their message strings, so a turn costs about the tokenizing of
 * its new messages. `full` is the full-history prompt for the same turn, when the caller built it already.
 */
export function measureView(input: ViewInput, built: View, previous?: PromptPair, full: readonly ChatMessage[] = fullView(input, defaultViewOptions).messages): { stats: PromptCompression; prompts: PromptPair } {
  const stats: PromptCompression = {
    ...built.stats,
    turn: input.turns.length + 1,
    fullTokens: promptTokens(full),
    viewTokens: promptTokens(built.messages),
    prefixTokens: previous === undefined ? 0 : sharedPrefix(previous.view, built.messages).tokens,
    fullPrefixTokens: previous === undefined ? 0 : sharedPrefix(previous.full, full).tokens,
  };
  return { stats, prompts: { view: built.messages, full } };
}

/**
 * Measures the prompt for the turn after `input.turns`, given the prompts sent for the
 * turn before (both views), or none for the first turn.
 */
export function measurePrompt(input: ViewInput, options: ViewOptions, previous?: PromptPair): { stats: PromptCompression; view: ChatMessage[]; full: ChatMessage[] } {
  const built = compressedView(input, options); // the full view when compression is off
  const { stats, prompts } = measureView(input, built, previous);
  return { stats, view: built.messages, full: prompts.full as ChatMessage[] };
}

/** The run settings prompts depend on besides the trace (as the loop passes them to the view). */
export type RunSettings = Pick<ViewInput, "maxTurns" | "toolsWithdrawn" | "maxPrintChars">;

/**
 * Statistics of every prompt of a run, rebuilt from its trace; costs under `price` (a price or
 * a model name; default: the price of a model no table knows).
 */
export function compressionReport(trace: Pick<RunTrace, "system" | "task" | "turns">, run: RunSettings, options: ViewOptions, price?: ModelPrice | string): CompressionReport {
  const who = "compressionReport";
  if (!isObjectArg(trace)) throw new TypeError(mustBe(`${who}: trace`, "a RunTrace (a Step's trace)", trace));
  if (!isArrayArg(trace.turns)) throw new TypeError(mustBe(`${who}: trace.turns`, "an array of turns", trace.turns));
  if (!isObjectArg(run)) throw new TypeError(mustBe(`${who}: run`, "the run's settings ({ maxTurns })", run));
  if (!isObjectArg(options)) throw new TypeError(mustBe(`${who}: options`, "an object of view options", options));
  if (price !== undefined && typeof price !== "string" && !isObjectArg(price)) throw new TypeError(mustBe(`${who}: price`, "a ModelPrice or a model name", price));
  const prompts: PromptCompression[] = [];
  const sent: SentPrompts[] = [];
  let previous: PromptPair | undefined;
  for (let k = 0; k < trace.turns.length; k++) {
    const turns: readonly Turn[] = trace.turns.slice(0, k);
    const input: ViewInput = { ...run, system: trace.system, task: trace.task, turns };
    const built = compressedView(input, options); // the full view when compression is off
    const m = measureView(input, built, previous);
    prompts.push(m.stats);
    sent.push({ view: { messages: built.messages, ...(built.breakpoints === undefined ? {} : { breakpoints: built.breakpoints }) }, full: { messages: m.prompts.full } });
    previous = m.prompts;
  }
  return {
    enabled: options.compressHistory,
    strictPrefix: options.strictPrefix,
    printlnHistoryLimit: options.printlnHistoryLimit,
    errorContextTurns: options.errorContextTurns,
    prompts,
    totals: totalsOf(prompts, sent, typeof price === "object" ? price : modelPrice(price)),
  };
}

/**
 * Sums per-prompt figures, pricing the input of each view's prompts as sent (`sent`, in order)
 * under `price` with the one meter. Priced from the shared prefixes alone, a breakpoint cache
 * served every shared prefix and wrote nothing: a compressed run's cuts and rewrites looked free
 * (wide-lines-30 on claude-sonnet-4: 28% below full history reported, 19% billed).
 */
export function totalsOf(prompts: readonly PromptCompression[], sent: readonly SentPrompts[], price: ModelPrice = modelPrice(undefined)): CompressionTotals {
  const t: CompressionTotals = { prompts: prompts.length, fullTokens: 0, viewTokens: 0, fullPeak: 0, viewPeak: 0, fullCachedCost: 0, viewCachedCost: 0, saved: 0 };
  for (const p of prompts) {
    t.fullTokens += p.fullTokens;
    t.viewTokens += p.viewTokens;
    t.fullPeak = Math.max(t.fullPeak, p.fullTokens);
    t.viewPeak = Math.max(t.viewPeak, p.viewTokens);
  }
  const full = createMeter(price);
  const view = createMeter(price);
  for (const s of sent) {
    full.add(s.full);
    view.add(s.view);
  }
  t.fullCachedCost = full.totals.cost;
  t.viewCachedCost = view.totals.cost;
  t.saved = t.fullTokens === 0 ? 0 : 1 - t.viewTokens / t.fullTokens;
  return t;
}
