// Compaction on the request path: picks the conversation's strategy, projects the request's
// messages through it with the stored state, and records what happened. One compaction at a time
// per conversation (a later request waits and then reuses the summary); a failed summary sends
// the messages as they are and leaves the conversation flagged. Budgets count the messages, the
// tool schemas and the reserved output, calibrated by what the upstream reported before.
// No request waits longer than the deadline: past it, the request goes out with the last good
// summary (or none) and the compaction finishes in the background for the next request. Each
// compaction makes at most `maxSummaryCalls` summary calls, retries included.
import { compact } from "../compaction/compact.js";
import { contextLimit, toolTokens } from "../compaction/models.js";
import { messagesMediaTokens } from "../compaction/tokens.js";
import { lookupPrice } from "../compaction/prices.js";
import { defaultStrategies } from "../history/registry.js";
import type { CompactionResult, Json, Strategy } from "../compaction/types.js";
import type { ChatMessage, Llm } from "../llm/types.js";
import type { ProxyConfig } from "./config.js";
import type { Logger } from "./log.js";
import type { Metrics } from "./metrics.js";
import { clientPromptTokensYielding } from "./request.js";
import type { ConversationRecord, ConversationStore } from "./store.js";
import { errorText } from "../llm/errors.js";

export interface CompactionInput {
  readonly messages: ChatMessage[];
  readonly model: string | undefined;
  readonly tools: readonly unknown[] | undefined;
  readonly maxTokens: number | undefined;
  /** Size of the request body: a bound on its tokens that needs no tokenizer. */
  readonly bodyBytes: number;
}

export interface CompactionOutcome {
  /** The messages to send (the client's own when nothing changed). */
  readonly messages: ChatMessage[];
  readonly changed: boolean;
  /** Local estimate of the prompt as sent (0 when the cheap bound showed it was far from any limit). */
  readonly estimatedTokens: number;
  readonly result?: CompactionResult;
  /**
   * Set when the compaction goes on past the deadline: settles once it no longer holds the
   * request's messages (it ended, or gave way to a newer request's before it started).
   */
  readonly background?: Promise<void>;
  /** The request's deadline passed before the compaction ended: nothing of it is left for another. */
  readonly deadlinePassed?: true;
}

type Spec = { name: string; options: Record<string, Json> };

export interface RunOptions {
  /** Compact whatever the trigger says (a context-length error, or the admin `compact`). */
  readonly force?: boolean;
  /** Wait for the compaction however long it takes (the admin `compact`, which has no user waiting). */
  readonly noDeadline?: boolean;
  /** A preview: counted and logged apart from real compactions (its record is a copy the caller drops). */
  readonly dryRun?: boolean;
  /** What is left of the request's deadline (compaction.deadlineMs by default): a second compaction of one request waits no longer. */
  readonly deadlineMs?: number;
}

/** The strategies that summarize, and so take a summaryModel. */
const SUMMARIZING = new Set(defaultStrategies.list().filter((s) => "summarizer" in s.defaults).map((s) => s.name));

/**
 * The spec with the configured summarizer model as its summaryModel (unless it names one): cost-trigger
 * prices its summary call by it, and without it decided as if the request's model summarized. A
 * model no price table knows (a local one) is left out: priced at the mid-range fallback, a free
 * local summary weighed more than the request's own model's.
 */
function withSummaryModel(spec: Spec, model: string | undefined): Spec {
  if (model === undefined || !SUMMARIZING.has(spec.name) || spec.options.summaryModel !== undefined || lookupPrice(model) === undefined) return spec;
  return { name: spec.name, options: { ...spec.options, summaryModel: model } };
}

/** Refuses every call: a projection with it shows the stored summary and makes no new one. */
const refusing: Llm = { name: "none", complete: () => Promise.reject(new Error("no summary calls past the deadline")) };

/** At most `max` calls to the summarizer per compaction. */
function capped(llm: Llm | undefined, max: number): Llm | undefined {
  if (llm === undefined) return undefined;
  let calls = 0;
  return { name: llm.name, complete: (request) => (++calls > max ? Promise.reject(new Error(`at most ${max} summary calls per compaction`)) : llm.complete(request)) };
}

/** A compaction waiting for its conversation's lock. */
interface Waiting {
  /** Dropped when it is skipped, with the summarizer (whose closure may hold the whole request). */
  input: CompactionInput | undefined;
  llm: (() => Llm | undefined) | undefined;
  /** Its request went out past the deadline. */
  gone: boolean;
  /** It has started: its closure holds the request's messages until it ends. */
  started: boolean;
  /** Settles `background` when it is dropped before it started. */
  freed?: () => void;
}

/** The outcome that sends the client's messages as they came. */
const unchanged = (messages: ChatMessage[]): CompactionOutcome => ({ messages, changed: false, estimatedTokens: 0 });

function drop(job: Waiting): void {
  job.input = undefined;
  job.llm = undefined;
  job.freed?.();
}

export class Compactor {
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Per conversation, the newest compaction not started yet. */
  private readonly waiting = new Map<string, Waiting>();
  // Built strategies by spec: options are validated once, and the summarizer's cache of accepted
  // summaries is shared by every request (a retry after a failed upstream call costs no new summary).
  private readonly strategies = new Map<string, Strategy>();
  // Cut when the proxy closes: a background compaction's summary call would otherwise keep the
  // process alive past its drain timeout, for as long as the summarizer's own timeout.
  private readonly closing = new AbortController();

  constructor(
    private readonly metrics: Metrics,
    private readonly log: Logger,
    /** Holds the cross-process lock and the latest state; a compaction's result is written before the lock is let go. */
    private readonly store: ConversationStore,
    private readonly wait: (ms: number, signal: AbortSignal) => Promise<void>,
  ) {}

  /** The strategy a conversation runs with now, with its learned window and calibration applied. */
  spec(config: ProxyConfig, record: ConversationRecord, model: string | undefined, reserved: number): Spec {
    const settings = config.conversations[record.conversation];
    const base = withSummaryModel(settings?.strategy ?? config.compaction.strategy, config.compaction.summarizer.model);
    if (base.name !== "usage-ratio") return { name: base.name, options: base.options };
    const options: Record<string, Json> = { ...base.options, contextLimits: { ...config.compaction.contextLimits, ...(base.options.contextLimits as Record<string, Json> | undefined) } };
    if (settings?.threshold !== undefined) options.threshold = settings.threshold;
    // Back-off: each time the breaker reopens, it stays open twice as many requests (up to 64x).
    // The limits as the strategy resolved them, so its schema's defaults hold here too.
    const resolved = this.strategy(base).options;
    const maxFailures = resolved.maxFailures as number;
    const cooldown = resolved.cooldown as number;
    if (record.failures >= maxFailures) options.cooldown = cooldown * 2 ** Math.min(6, record.failures - maxFailures + 1);
    const window = this.window(config, record, model, reserved, options);
    // A tokenizer that counts fewer tokens than the upstream would compact late: shrink the window instead.
    options.contextLimit = Math.max(1, Math.floor(window / record.calibration));
    return { name: "usage-ratio", options };
  }

  /**
   * The context window of the conversation's model: configured or from the table, or learned from
   * the upstream. A learned window is what the prompt alone may take, so the reserved output of
   * the request at hand is added to it: counting it in would leave no room and summarize on every request.
   */
  window(config: ProxyConfig, record: ConversationRecord, model: string | undefined, reserved: number, options?: Record<string, Json>): number {
    const configured = typeof options?.contextLimit === "number" ? options.contextLimit : contextLimit(model, { ...config.compaction.contextLimits, ...(options?.contextLimits as Record<string, number> | undefined) });
    return record.learnedLimit === undefined ? configured : Math.min(configured, record.learnedLimit + reserved);
  }

  /**
   * Projects the request's messages. `force` compacts whatever the trigger says (a context-length
   * error, or the admin `compact`). Resolves with the client's messages when anything fails.
   */
  async run(config: ProxyConfig, record: ConversationRecord, input: CompactionInput, llm: () => Llm | undefined, options: RunOptions = {}): Promise<CompactionOutcome> {
    const force = options.force === true;
    const settings = config.conversations[record.conversation];
    if (!config.compaction.enabled || settings?.disabled === true) return unchanged(input.messages);
    const reserved = input.maxTokens ?? config.compaction.reserveOutputTokens;
    const spec = this.spec(config, record, input.model, reserved);
    // A token of text is at least one byte of the body, and an image is what its part says it
    // costs (a URL of 40 bytes can be 765 tokens): far below the threshold, no tokenizer is needed.
    // Checked with the strategy as configured (built once, where the spec's learned window would
    // build one per conversation): it knows the threshold's default and whether a state holds a summary.
    if (!force && spec.name === "usage-ratio" && !record.flagged) {
      const configured = this.strategy(config.conversations[record.conversation]?.strategy ?? config.compaction.strategy);
      const state = this.stateOf(record, spec);
      const holds = state !== null && configured.compacted?.(state) === true;
      const threshold = (spec.options.threshold ?? configured.options.threshold) as number;
      if (!holds && input.bodyBytes + messagesMediaTokens(input.messages) + reserved < threshold * (spec.options.contextLimit as number)) return unchanged(input.messages);
    }
    // The strategy counts the messages in one go: counted first with turns of the event loop
    // between pieces (the counts are kept per message), a body of megabytes holds up no other request.
    await clientPromptTokensYielding(input.messages, input.tools);
    const max = config.compaction.maxSummaryCalls;
    // A dry run's record is a copy, and a request with no conversation (source "none") keeps nothing.
    const kept = options.dryRun !== true && record.source !== "none";
    // A preview supersedes nothing: only real compactions take the conversation's waiting place.
    const job: Waiting = { input, llm, gone: false, started: false };
    if (options.dryRun !== true) {
      const before = this.waiting.get(record.id);
      if (before?.gone === true) drop(before);
      this.waiting.set(record.id, job);
    }
    const work = this.locked(record.id, (): Promise<CompactionOutcome | undefined> => {
      if (this.waiting.get(record.id) === job) this.waiting.delete(record.id);
      const mine = job.input;
      const summarizer = job.llm;
      // Its request went out past the deadline, and a newer request's compaction waits behind
      // it: that one compacts newer messages, and this one would only add a summary call.
      if (mine === undefined || summarizer === undefined) return Promise.resolve(undefined);
      job.started = true;
      return this.store
        .locked(record.id, async () => {
          // Another replica may have compacted while this one waited: start from its summary.
          if (kept) await this.store.refresh(record);
          const outcome = await this.project(record, mine, spec, reserved, capped(summarizer(), max), options.dryRun === true, force);
          if (kept) await this.store.put(record);
          return outcome;
        })
        .catch((e: unknown): CompactionOutcome => {
          // The store failed (the database is unreachable): the request goes out as the client sent it.
          this.log({ event: "store_error", conversation: record.conversation, tenant: record.tenant, error: errorText(e) });
          return unchanged(mine.messages);
        });
    });
    // Only a compaction whose request went out (below) is ever skipped.
    if (options.noDeadline === true) return (await work) ?? unchanged(input.messages);
    const settled = new AbortController();
    const deadlineMs = options.deadlineMs ?? config.compaction.deadlineMs;
    const first = await Promise.race([work, this.wait(deadlineMs, settled.signal).then(() => undefined)]);
    settled.abort();
    if (first !== undefined) return first;
    // Nobody waits for this compaction now: a newer one waiting behind it replaces it, and until
    // its turn it holds none of the request's messages (a hanging summarizer queues one per request).
    // (One already started keeps what it needs in its own closure: dropping it then frees nothing and harms nothing.)
    job.gone = true;
    // What still holds the request's messages, for the caller to count (its body budget): the
    // compaction until it ends, or, while it waits its turn, until it ends or gives way.
    let background: Promise<void> | undefined;
    if (this.waiting.get(record.id) === job) {
      background = new Promise<void>((resolve) => {
        job.freed = resolve;
        void work.then(() => resolve());
      });
    } else {
      if (job.started) background = work.then(() => undefined);
      drop(job);
    }
    this.metrics.inc("ptc_proxy_compaction_deadline_total");
    this.log({ event: "compaction_deadline", conversation: record.conversation, tenant: record.tenant, deadlineMs });
    const outcome = await this.lastGood(record, input, spec, reserved);
    return { ...outcome, deadlinePassed: true, ...(background === undefined ? {} : { background }) };
  }

  /** The messages with the stored summary applied and no new summary made (the state it returns is not kept). */
  private async lastGood(record: ConversationRecord, input: CompactionInput, spec: Spec, reserved: number): Promise<CompactionOutcome> {
    const state = this.stateOf(record, spec);
    if (state === null) return unchanged(input.messages);
    try {
      const result = await compact(input.messages, this.strategy(spec), { state, llm: refusing, ...(input.model === undefined ? {} : { model: input.model }), ...(input.tools === undefined ? {} : { tools: input.tools }), reservedOutputTokens: reserved });
      const changed = result.messages.length !== input.messages.length || result.messages.some((m, i) => m !== input.messages[i]);
      return { messages: changed ? result.messages : input.messages, changed, estimatedTokens: 0 };
    } catch {
      return unchanged(input.messages);
    }
  }

  private async project(record: ConversationRecord, input: CompactionInput, spec: Spec, reserved: number, summarizer: Llm | undefined, dryRun: boolean, force: boolean): Promise<CompactionOutcome> {
    const state = this.stateOf(record, spec);
    let result: CompactionResult;
    try {
      result = await compact(input.messages, this.strategy(spec), {
        ...(state === null ? {} : { state }),
        ...(summarizer === undefined ? {} : { llm: summarizer }),
        ...(input.model === undefined ? {} : { model: input.model }),
        ...(input.tools === undefined ? {} : { tools: input.tools }),
        reservedOutputTokens: reserved,
        ...(force ? { force } : {}),
        signal: this.closing.signal,
      });
    } catch (e) {
      // A strategy that cannot run on these messages: send them as they are and say why.
      record.flagged = true;
      record.lastError = `compaction failed: ${errorText(e)}`;
      this.metrics.inc("ptc_proxy_compactions_total", 'outcome="failed"');
      this.log({ event: "compaction_error", conversation: record.conversation, tenant: record.tenant, strategy: spec.name, error: record.lastError });
      return unchanged(input.messages);
    }
    record.state = result.state;
    record.strategy = spec.name;
    const estimatedTokens = result.stats.tokensOut + toolTokens(input.tools);
    if (dryRun) {
      this.metrics.inc("ptc_proxy_dry_runs_total");
      this.log({ event: "compaction_dry_run", conversation: record.conversation, tenant: record.tenant, strategy: spec.name, tokensBefore: result.stats.tokensIn, tokensAfter: result.stats.tokensOut });
    } else this.account(record, spec.name, result);
    const changed = result.messages.length !== input.messages.length || result.messages.some((m, i) => m !== input.messages[i]);
    return { messages: changed ? result.messages : input.messages, changed, estimatedTokens, result };
  }

  /** Records events on the conversation, in the metrics and in the log. */
  private account(record: ConversationRecord, strategy: string, result: CompactionResult): void {
    const kinds = new Set(result.events.map((e) => e.kind));
    const compacted = kinds.has("compacted");
    const failed = kinds.has("summary_failed");
    // An open breaker skips the summary: the conversation stays flagged, with the breaker's reason.
    const paused = kinds.has("circuit_open");
    const skipped = paused || kinds.has("skipped");
    if (!compacted && !failed && !skipped) return;
    this.metrics.inc("ptc_proxy_compactions_total", 'outcome="triggered"');
    const { tokensIn, tokensOut, durationMs } = result.stats;
    this.metrics.observe("ptc_proxy_compaction_seconds", durationMs);
    if (compacted) {
      record.compactions++;
      record.failures = 0;
      record.flagged = false;
      record.lastError = undefined;
      record.lastTokensBefore = tokensIn;
      record.lastTokensAfter = tokensOut;
      this.metrics.inc("ptc_proxy_compactions_total", 'outcome="succeeded"');
      this.metrics.inc("ptc_proxy_compaction_tokens_before_total", "", tokensIn);
      this.metrics.inc("ptc_proxy_compaction_tokens_after_total", "", tokensOut);
    } else if (failed || paused) {
      if (failed) record.failures++;
      record.flagged = true;
      record.lastError = result.events.filter((e) => e.kind === "summary_failed" || e.kind === "circuit_open").map((e) => e.detail ?? e.kind).join("; ");
      this.metrics.inc("ptc_proxy_compactions_total", failed ? 'outcome="failed"' : 'outcome="skipped"');
    } else {
      this.metrics.inc("ptc_proxy_compactions_total", 'outcome="skipped"');
    }
    this.log({
      event: "compaction",
      conversation: record.conversation,
      tenant: record.tenant,
      strategy,
      outcome: compacted ? "succeeded" : failed ? "failed" : paused ? "paused" : "skipped",
      summarizer: result.summarizer,
      tokensBefore: tokensIn,
      tokensAfter: tokensOut,
      durationMs: Math.round(result.stats.durationMs * 10) / 10,
      llmCalls: result.stats.llmCalls,
    });
  }

  /**
   * The stored state when it belongs to the strategy: saved under its name, or under "rolling"
   * (how records written before strategies kept their own name stored every rolling summary)
   * when the strategy recognizes it as a summary it holds.
   */
  private stateOf(record: ConversationRecord, spec: Spec): Json | null {
    if (record.state === null) return null;
    if (record.strategy === spec.name) return record.state;
    return record.strategy === "rolling" && this.strategy(spec).compacted?.(record.state) === true ? record.state : null;
  }

  private strategy(spec: Spec): Strategy {
    const key = JSON.stringify(spec);
    let s = this.strategies.get(key);
    if (s === undefined) {
      if (this.strategies.size >= 256) this.strategies.clear();
      s = defaultStrategies.create(spec);
      this.strategies.set(key, s);
    }
    return s;
  }

  /** Cuts the summary calls in flight: the proxy is closing, and nothing they produce would be kept. */
  close(): void {
    this.closing.abort();
  }

  /** Resolves when no compaction is running (background ones included). */
  async idle(): Promise<void> {
    while (this.locks.size > 0) await Promise.all(this.locks.values());
  }

  /** Runs `fn` when no other compaction of the same conversation is in flight. */
  private async locked<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const before = this.locks.get(id) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.locks.set(id, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(id) === tail) this.locks.delete(id);
    }
  }
}
