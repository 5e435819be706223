// Running a summary the safe way, shared by every summarizing strategy: pick the summarizer
// (the LLM one when there is a model, the extractive one otherwise), validate before accepting,
// retry a bounded number of times, and open a circuit breaker after repeated failures so a
// broken summarizer costs a few calls, not one per request. The breaker lives in the
// strategy's state, so it survives a restart like everything else.
import { z } from "zod";
import { errorText, MAX_TIMER_MS } from "../../llm/errors.js";
import { addSpend, type LlmSpend } from "../result.js";
import type { CompactionContext, CompactionEvent, Summarizer, SummaryRequest } from "../types.js";
import { extractiveSummarizer } from "./extractive.js";
import { factsSummarizer } from "./facts.js";
import { isAbort, llmSummarizer } from "./llm.js";
import { summaryProblem } from "./validate.js";

/** Options every summarizing strategy accepts. */
export const summaryOptions = {
  /**
   * "auto": the LLM summarizer when `context.llm` is given, the facts one otherwise. "facts"
   * extracts the values later turns need within `summaryRatio`; "copy" (alias "extractive") is
   * the older one line per message, kept as a baseline.
   */
  summarizer: z.enum(["auto", "llm", "facts", "copy", "extractive"]).default("auto"),
  /** Summary budget as a share of the tokens of the messages it replaces (facts and LLM summaries; also capped by summaryMaxTokens). */
  summaryRatio: z.number().gt(0).max(1).default(0.2),
  /** "code" lists the known variables (from `knownNames`) and forbids any other. */
  template: z.enum(["conversation", "code"]).default("conversation"),
  summaryMaxTokens: z.number().int().min(16).default(600),
  /** Model the summarizer asks for (a cheaper one than the conversation's, typically). */
  summaryModel: z.string().min(1).optional(),
  /**
   * Most milliseconds one LLM summary call may take (the client is aborted then, and the call
   * counts as a failed summary): a client that never answers must not hold compact() for ever.
   */
  summaryTimeoutMs: z.number().int().positive().max(MAX_TIMER_MS).default(120_000),
  /** Summary calls per attempt to compact, counting the first (a retry limit, not a loop). */
  maxAttempts: z.number().int().min(1).max(5).default(2),
  /** Consecutive failed compactions that open the circuit breaker. */
  maxFailures: z.number().int().min(1).default(3),
  /** Compactions skipped while the breaker is open, before one more try. */
  cooldown: z.number().int().min(1).default(5),
};

export type SummaryOptions = z.output<z.ZodObject<typeof summaryOptions>>;

/** Below this a summary can say nothing useful; a span this small is not worth summarizing (validation then refuses it). */
const MIN_BUDGET = 16;

/**
 * Thrown by a client that refuses a summary call before making it (a virtual key's token budget
 * used up): the summarizer did not fail, so the refusal is neither retried nor counted toward the
 * breaker, which would then stay open after the budget is raised.
 */
export class SummaryRefused extends Error {
  override readonly name = "SummaryRefused";
}

/** The breaker's part of a strategy's state. */
export type BreakerState = { failures: number; skip: number };

export const closedBreaker = (): BreakerState => ({ failures: 0, skip: 0 });

export interface SummaryOutcome {
  /** The accepted summary, or undefined when none was (the caller keeps the history as it was). */
  text: string | undefined;
  breaker: BreakerState;
  /** No summary because the summarizer failed, was refused (a budget) or its breaker is open, not because the span held nothing worth keeping. */
  failed: boolean;
}

/** What a failed summary call paid, as the LLM summarizer attaches it to its error; undefined when the error cannot be read. */
function spendOf(e: unknown): LlmSpend | undefined {
  try {
    return (e as { spend?: LlmSpend } | null | undefined)?.spend;
  } catch {
    return undefined;
  }
}

export class SummaryEngine {
  private readonly llm: Summarizer;

  constructor(private readonly options: SummaryOptions) {
    this.llm = llmSummarizer({ template: options.template, timeoutMs: options.summaryTimeoutMs, ...(options.summaryModel === undefined ? {} : { model: options.summaryModel }) });
  }

  /** The summarizer a projection with this context uses. */
  pick(context: CompactionContext): Summarizer {
    const chosen = this.options.summarizer;
    if (chosen === "extractive" || chosen === "copy") return extractiveSummarizer;
    if (chosen === "facts") return factsSummarizer;
    if (context.llm !== undefined) return this.llm;
    if (chosen === "llm") throw new Error('compaction: summarizer "llm" needs an llm (pass one in the options of compact or the context)');
    return factsSummarizer;
  }

  /**
   * The token budget of a summary replacing messages of `replacedTokens` (counted as they were
   * stored, not as an earlier summary of them, so folding again does not shrink old facts away):
   * summaryRatio of them, at most summaryMaxTokens; the copy baseline keeps its fixed budget.
   */
  budget(context: CompactionContext, replacedTokens: number): number {
    if (this.pick(context) === extractiveSummarizer) return this.options.summaryMaxTokens;
    return Math.max(MIN_BUDGET, Math.min(this.options.summaryMaxTokens, Math.floor(this.options.summaryRatio * replacedTokens)));
  }

  async run(request: SummaryRequest, breaker: BreakerState, context: CompactionContext, spend: LlmSpend, events: CompactionEvent[], messageIndex: number): Promise<SummaryOutcome> {
    const skipped = skipWhileOpen(breaker, events, messageIndex);
    if (skipped !== undefined) return { text: undefined, breaker: skipped, failed: true };
    const summarizer = this.pick(context);
    for (let attempt = 1; attempt <= this.options.maxAttempts; attempt++) {
      try {
        const result = await summarizer.summarize(request, context);
        addSpend(spend, { calls: result.llmCalls, inputTokens: result.inputTokens, outputTokens: result.outputTokens });
        // A model that answers nothing has failed; a summarizer without one that keeps nothing
        // found nothing worth keeping (blank messages, pleasantries): no failure, nothing to replace.
        if (!summarizer.usesLlm && result.text.trim() === "") {
          events.push({ kind: "skipped", messageIndex, detail: `${summarizer.name} summary: nothing in the span worth keeping` });
          return { text: undefined, breaker, failed: false };
        }
        const problem = summaryProblem(result.text, request);
        if (problem === undefined) return { text: result.text, breaker: closedBreaker(), failed: false };
        events.push({ kind: "summary_failed", messageIndex, detail: `${summarizer.name} summary rejected: ${problem}` });
        // A deterministic summarizer gives the same answer again: no point retrying it.
        if (!summarizer.usesLlm) break;
      } catch (e) {
        if (isAbort(e)) throw e;
        if (e instanceof SummaryRefused) {
          events.push({ kind: "skipped", messageIndex, detail: `${summarizer.name} summary not made: ${e.message}` });
          // Not a failure for the breaker, but no summary can be made now: callers stop as on one.
          return { text: undefined, breaker, failed: true };
        }
        // A client may reject with anything (nothing at all, an object String() cannot convert, a
        // Proxy that throws when read): that is a failed summary too, not a crash.
        const paid = spendOf(e);
        if (paid) addSpend(spend, paid);
        events.push({ kind: "summary_failed", messageIndex, detail: `${summarizer.name} summary failed: ${errorText(e)}` });
      }
    }
    return { text: undefined, breaker: afterFailure(breaker, this.options, events, messageIndex), failed: true };
  }
}

/** While the breaker is open: the compaction skipped, said, and one skip fewer before the next try; undefined when it is closed. */
export function skipWhileOpen(breaker: BreakerState, events: CompactionEvent[], messageIndex: number): BreakerState | undefined {
  if (breaker.skip <= 0) return undefined;
  events.push({ kind: "circuit_open", messageIndex, detail: `summaries paused after ${breaker.failures} failures; ${breaker.skip - 1} more skipped before the next try` });
  return { failures: breaker.failures, skip: breaker.skip - 1 };
}

/** The breaker after a failed compaction: open for `cooldown` compactions once `maxFailures` failed in a row. */
export function afterFailure(breaker: BreakerState, options: Pick<SummaryOptions, "maxFailures" | "cooldown">, events: CompactionEvent[], messageIndex: number): BreakerState {
  const failures = breaker.failures + 1;
  if (failures < options.maxFailures) return { failures, skip: 0 };
  events.push({ kind: "circuit_open", messageIndex, detail: `${failures} failed compactions in a row: the next ${options.cooldown} are skipped` });
  return { failures, skip: options.cooldown };
}
