// Strategies side by side over a set of transcripts: totals per strategy, with the reduction
// against sending every message (the `full` baseline, always measured) and the share of probe
// facts still in the prompts that need them.
import { costRatio, costRatioText, dataProblemLines, failedText, failureLines, idleText, NOT_MEASURED, percentText, reductionOf, reportNotes } from "../compaction/figures.js";
import { knownContextLimit } from "../compaction/models.js";
import { modelPrice, type ModelPrice, type PriceTable } from "../compaction/prices.js";
import type { StrategyRegistry, StrategySpec } from "../compaction/registry.js";
import { defaultStrategies } from "../history/registry.js";
import { isArrayArg, isObjectArg, mustBe } from "../llm/args.js";
import type { Llm } from "../llm/types.js";
import { messageProblem } from "../compaction/compact.js";
import { boundedCall } from "../compaction/summarizers/llm.js";
import { addMetrics, BASELINES, checkTimeout, emptyMetrics, isBaseline, measure, STRATEGY_TIMEOUT_MS, StrategyFailure, type Baseline, type Metrics, type RequestPoint } from "./measure.js";
import { nextReply, type Transcript } from "./transcript.js";

export { dataProblemLines, failureLines };

export interface StrategyRow {
  strategy: string;
  options: Record<string, unknown>;
  totals: Metrics;
  /**
   * 1 - inputTokens / full inputTokens; null when the row was measured on no request (its
   * strategy failed on every transcript): its figures are none, not "no saving".
   */
  reduction: number | null;
  /** Cost relative to full under the first price model (1 = the same); null when full cost nothing and this did not, or as the reduction is. */
  costRatio: number | null;
  /** The same under each price model of the report, in order. */
  costRatios: Array<number | null>;
  /** "baseline" rows are the floor (system + last message, system + task + last message), not strategies. */
  kind: "strategy" | "baseline";
  /** Whether the strategy ever sent less than the whole conversation; a row that never did measures nothing. */
  triggered: boolean;
  /** probesKept / probesNeeded (values of 3+ characters the task does not state), or null without probes. */
  retention: number | null;
  /** The same by distance of the value's last mention: ≤ 6, 7–20, > 20 and > 6 messages back. */
  retentionByDistance: { near: number | null; mid: number | null; far: number | null; beyond6: number | null };
  /** Retention of 1–2 character values, apart. */
  shortRetention: number | null;
  /**
   * The transcripts on which the strategy failed (threw, or gave no result within `timeoutMs`),
   * each with the request and what it threw. Its figures leave them out, and so do full's it is
   * compared with; the other strategies are measured on every transcript.
   */
  failures: Array<{ id: string; message: string }>;
  /** The same figures per transcript; a failed one has none (empty metrics) and says why. */
  perTranscript: Array<{ id: string; metrics: Metrics; failed?: string }>;
}

/** What a report measured, so it stands alone. */
export interface ReportMeta {
  /** The transcript files (or set names). */
  corpus: string[];
  /** The strategies' summarizer when they summarize ("facts", "copy", "llm:<model>"). */
  summarizer: string;
  /** ISO date and time of the run, the package version, and how long the run took. */
  date: string;
  version: string;
  runMs: number;
}

export interface CompareReport {
  /** The price models costs are given under, in order (the first is the conversation's model). */
  models: Array<{ model: string; price: ModelPrice }>;
  meta?: ReportMeta;
  transcripts: number;
  messages: number;
  rows: StrategyRow[];
  /**
   * The transcripts measured as recorded though a strict provider would reject them (a tool
   * result without its call, calls left without results: `Transcript.problems`), so a report
   * read on its own says which of its conversations no API would have taken.
   */
  dataProblems: Array<{ id: string; problems: string[] }>;
  /** The first model's context window when the context table knows it (each row's `overWindow` counts prompts past it), else null. */
  contextWindow: number | null;
  /** Every strategy's requests on the longest transcript (the charts' line plot). */
  longest: { id: string; series: Array<{ strategy: string; points: RequestPoint[] }> } | null;
}

export interface CompareOptions {
  /** Price models by name; the first is the conversations' model (context limits, `cost`). */
  models: readonly string[];
  prices?: PriceTable;
  llm?: Llm;
  /** The model the LLM summarizer calls, when not the conversations' (prices its spend). */
  summaryModel?: string;
  /** Called after each transcript of each strategy (progress). */
  onProgress?: (done: number, total: number) => void;
  /** Where strategies given by name are found (default: every shipped strategy). */
  registry?: StrategyRegistry;
  /** Most milliseconds one compaction call may take (default STRATEGY_TIMEOUT_MS); past it that strategy fails on that transcript. */
  timeoutMs?: number;
}

type Measured = StrategySpec | string | Baseline;

const nameOf = (s: Measured): string => (typeof s === "string" ? s : isBaseline(s) ? `baseline:${s.baseline}` : s.name);

const ratio = (kept: number, needed: number): number | null => (needed === 0 ? null : kept / needed);

/** A strategy as the tables name it: its name, and the options it was given (`sliding-window:turns=3`). */
export function specLabel(s: Measured): string {
  if (typeof s === "string" || isBaseline(s)) return nameOf(s);
  const opts = Object.entries(s.options ?? {}).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`);
  return opts.length === 0 ? s.name : `${s.name}:${opts.join(",")}`;
}
/**
 * What a strategy measures, however it was written: its name and options, keys in order at every
 * depth (`turns=3,unit=step` and `unit=step,turns=3`, `turns=3` and `turns=3.0`, `name` and `name:`
 * are one strategy, which measured twice would make two rows of one name).
 */
export function strategyKey(s: StrategySpec | string): string {
  const sorted = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sorted);
    if (typeof v !== "object" || v === null) return v;
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
  };
  return typeof s === "string" ? JSON.stringify([s, {}]) : JSON.stringify([s.name, sorted(s.options ?? {})]);
}
const optionsOf = (s: Measured): Record<string, unknown> => (typeof s === "string" || isBaseline(s) ? {} : { ...(s.options ?? {}) });

/** Refuses an `options.registry` that is no StrategyRegistry, for the entry `who`; read by its methods, not instanceof: a registry from another copy of the package is one too. */
export function checkRegistry(registry: unknown, who: string): void {
  if (registry !== undefined && !(isObjectArg(registry) && typeof (registry as StrategyRegistry).create === "function" && typeof (registry as StrategyRegistry).list === "function")) {
    throw new TypeError(mustBe(`${who}: options.registry`, "a StrategyRegistry (defaultStrategies.with(...) adds yours)", registry));
  }
}

/**
 * Refuses a strategy the run cannot serve before any is measured: an unknown name, a bad option,
 * or a summarizer or goal detector "llm" when the run has no model (each strategy projects one
 * message without it, which makes no call and fails only there). Found when its turn came, the
 * strategies before it had run over every transcript, a summarizer's model paid.
 */
export async function checkStrategies(strategies: ReadonlyArray<StrategySpec | string>, llm: Llm | undefined, registry: StrategyRegistry = defaultStrategies, timeoutMs = STRATEGY_TIMEOUT_MS): Promise<void> {
  // Checked here, before the first bounded call, for every entry that compares (compareStrategies, compareUnderCaches).
  checkTimeout(timeoutMs);
  // Measured twice, one strategy made two rows of one name, which the viewer finds rows by.
  const seen = new Map<string, StrategySpec | string>();
  for (const s of strategies) {
    const built = registry.create(s);
    const key = strategyKey(s);
    const first = seen.get(key);
    if (first !== undefined) throw new Error(`compaction: strategy ${specLabel(s)} is given twice${specLabel(first) === specLabel(s) ? "" : ` (as ${specLabel(first)})`}: it would be measured twice`);
    seen.set(key, s);
    // Bounded as every call the replay makes is: a strategy that never settles must not hold the run here either.
    if (llm === undefined) await boundedCall(async (signal) => built.project({ messages: [{ role: "user", content: "?" }] }, built.initialState(), { signal }), timeoutMs, undefined, `strategy ${built.name}`).catch(needsWhatRunLacks);
  }
}

/**
 * Rethrows what a probe found the run cannot serve (the compaction's own "compaction: ..." errors:
 * a summarizer or detector "llm" without one). Anything else the strategy throws is its failure,
 * which the replay names per transcript, as it does when the run has a model: let out here, it
 * ended the run with the strategy's bare error, no strategy or transcript named.
 */
function needsWhatRunLacks(e: unknown): void {
  if (e instanceof Error && e.message.startsWith("compaction:")) throw e;
}

/**
 * Transcripts as the replay needs them (what loadTranscripts checks of a file's lines): objects
 * with an id of their own and messages compact() takes. Unchecked, a bad one failed deep inside a
 * strategy or the measure with the engine's words, and an id given twice counted twice.
 */
function checkTranscripts(transcripts: readonly unknown[]): void {
  const seen = new Map<string, number>();
  transcripts.forEach((t: unknown, i) => {
    const at = `compareStrategies: transcripts[${i}]`;
    if (!isObjectArg(t) || Array.isArray(t)) throw new TypeError(mustBe(at, "a transcript ({ id, messages })", t));
    const { id, messages } = t as { id?: unknown; messages?: unknown };
    if (typeof id !== "string") throw new TypeError(mustBe(`${at}.id`, "a string", id));
    const first = seen.get(id);
    if (first !== undefined) throw new TypeError(`${at}.id ${JSON.stringify(id)} is also the id of transcripts[${first}]: give each conversation its own id`);
    seen.set(id, i);
    if (!isArrayArg(messages)) throw new TypeError(mustBe(`${at}.messages`, "an array of chat messages", messages));
    messages.forEach((m: unknown, k) => {
      const p = messageProblem(m);
      if (p !== undefined) throw new TypeError(`${at}.messages[${k}] ${p.problem}`);
    });
  });
}

/**
 * Refuses transcripts none of which holds a request (an assistant reply after its first message,
 * the prompts a strategy is measured on): nothing would be replayed, and every row would read
 * 0% reduction and cost 1x, "no saving", of a comparison that measured nothing.
 */
export function checkMeasurable(transcripts: readonly Transcript[], who: string): void {
  if (!transcripts.some((t) => nextReply(t.messages, 1) >= 0)) {
    throw new Error(`${who}: nothing to compare: none of the ${transcripts.length} transcripts has an assistant reply after its first message (the requests a strategy is measured on)`);
  }
}

/** The price models as the report needs them: at least one (the conversations' model), each a name. */
function checkModels(models: unknown): void {
  if (!isArrayArg(models)) throw new TypeError(mustBe("compareStrategies: options.models", "a non-empty array of model names", models));
  if (models.length === 0) throw new TypeError("compareStrategies: options.models must be a non-empty array of model names, got an empty array");
  models.forEach((m: unknown, i) => {
    if (typeof m !== "string") throw new TypeError(mustBe(`compareStrategies: options.models[${i}]`, "a model name", m));
  });
}

export async function compareStrategies(transcripts: readonly Transcript[], strategies: ReadonlyArray<StrategySpec | string>, options: CompareOptions): Promise<CompareReport> {
  if (!isArrayArg(transcripts)) throw new TypeError(mustBe("compareStrategies: transcripts", "an array of transcripts (loadTranscripts' result)", transcripts));
  if (!isArrayArg(strategies)) throw new TypeError(mustBe("compareStrategies: strategies", "an array of strategy names or specs", strategies));
  if (!isObjectArg(options)) throw new TypeError(mustBe("compareStrategies: options", "an object of options ({ models })", options));
  checkTranscripts(transcripts);
  checkModels(options.models);
  checkMeasurable(transcripts, "compareStrategies");
  checkRegistry(options.registry, "compareStrategies");
  if (options.onProgress !== undefined && typeof options.onProgress !== "function") throw new TypeError(mustBe("compareStrategies: options.onProgress", "a function", options.onProgress));
  await checkStrategies(strategies, options.llm, options.registry, options.timeoutMs);
  const specs: Measured[] = [...(strategies.some((s) => nameOf(s) === "full") ? [] : ["full"]), ...strategies, ...BASELINES];
  const total = specs.length * transcripts.length;
  let done = 0;
  const each: Array<Array<{ id: string; metrics: Metrics; failed?: string }>> = [];
  const longest = transcripts.reduce<Transcript | null>((a, t) => (a === null || t.messages.length > a.messages.length ? t : a), null);
  const series: Array<{ strategy: string; points: RequestPoint[] }> = [];
  for (const spec of specs) {
    let points: RequestPoint[] = [];
    const per: Array<{ id: string; metrics: Metrics; failed?: string }> = [];
    for (const t of transcripts) {
      const onRequest = t === longest ? (p: RequestPoint) => void points.push(p) : undefined;
      try {
        per.push({
          id: t.id,
          metrics: await measure(t, spec, {
            models: options.models,
            model: options.models[0],
            ...(options.prices === undefined ? {} : { prices: options.prices }),
            ...(options.summaryModel === undefined ? {} : { summaryModel: options.summaryModel }),
            ...(options.llm === undefined ? {} : { llm: options.llm }),
            ...(options.registry === undefined ? {} : { registry: options.registry }),
            ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
            ...(onRequest ? { onRequest } : {}),
          }),
        });
      } catch (e) {
        // One strategy failing on one conversation ends that cell, not the run: the rest (summaries paid for) is kept.
        if (!(e instanceof StrategyFailure)) throw e;
        per.push({ id: t.id, metrics: { ...emptyMetrics(), costs: options.models.map(() => 0) }, failed: e.message });
        if (t === longest) points = [];
      }
      options.onProgress?.(++done, total);
    }
    each.push(per);
    series.push({ strategy: specLabel(spec), points });
  }
  const fullAt = specs.findIndex((s) => nameOf(s) === "full");
  const fullFailed = new Set(each[fullAt].flatMap((p) => (p.failed === undefined ? [] : [p.id])));
  // Each row over the transcripts it and full were measured on, and full over the same ones: a
  // ratio to full's figures on other conversations would say nothing.
  const sums = each.map((per) => {
    const row = emptyMetrics();
    const full = emptyMetrics();
    per.forEach((p, k) => {
      if (p.failed !== undefined || fullFailed.has(p.id)) return;
      addMetrics(row, p.metrics);
      addMetrics(full, each[fullAt][k].metrics);
    });
    return { row, full };
  });
  return {
    models: options.models.map((model) => ({ model, price: modelPrice(model, options.prices) })),
    transcripts: transcripts.length,
    messages: transcripts.reduce((n, t) => n + t.messages.length, 0),
    rows: specs.map((spec, i) => {
      const { row: totals, full } = sums[i];
      const reduction = reductionOf(totals.inputTokens, full.inputTokens);
      const costAt = (k: number): number | null => (reduction === null ? null : costRatio(totals.costs[k] ?? 0, full.costs[k] ?? 0));
      return {
        strategy: specLabel(spec),
        options: optionsOf(spec),
        kind: isBaseline(spec) ? "baseline" : "strategy",
        triggered: totals.compacted > 0,
        totals,
        reduction,
        costRatio: costAt(0),
        // One per price model, whether or not a request was measured (a transcript may hold none).
        costRatios: options.models.map((_, k) => costAt(k)),
        retention: ratio(totals.probesKept, totals.probesNeeded),
        retentionByDistance: {
          near: ratio(totals.nearKept, totals.nearNeeded),
          mid: ratio(totals.midKept, totals.midNeeded),
          far: ratio(totals.farKept, totals.farNeeded),
          beyond6: ratio(totals.midKept + totals.farKept, totals.midNeeded + totals.farNeeded),
        },
        shortRetention: ratio(totals.shortKept, totals.shortNeeded),
        failures: each[i].flatMap((p) => (p.failed === undefined ? [] : [{ id: p.id, message: p.failed }])),
        perTranscript: each[i],
      };
    }),
    dataProblems: transcripts.flatMap((t) => (t.problems !== undefined && t.problems.length > 0 ? [{ id: t.id, problems: [...t.problems] }] : [])),
    contextWindow: knownContextLimit(options.models[0]) ?? null,
    longest: longest === null ? null : { id: longest.id, series },
  };
}

const pct = percentText;
const pctOr = (x: number | null): string => (x === null ? "-" : pct(x));

/** What a strategy row that never sent less than everything shows instead of its retention (idleText). */
export function idleLabel(row: StrategyRow): string | undefined {
  return idleText({ strategy: row.strategy, kind: row.kind, triggered: row.triggered, summaryFailures: row.totals.summaryFailures, reduction: row.reduction });
}

/**
 * The strategies' table as cells, a header and a row per strategy: the terminal's and the HTML
 * page's (`time`: the compaction's milliseconds too). Where a strategy or its summaries failed on
 * some transcripts a failed column says on how many; a row measured on none reads NOT_MEASURED throughout.
 */
export function reportCells(r: CompareReport, time: boolean): { head: string[]; rows: string[][] } {
  const failedOf = (row: StrategyRow): string => failedText(row.failures.length, row.perTranscript.filter((p) => p.metrics.summaryFailures > 0).length, r.transcripts);
  const failing = r.rows.some((row) => failedOf(row) !== "");
  const head = ["strategy", ...(failing ? ["failed"] : []), "input tokens", "reduction", "peak prompt", ...r.models.map((m) => `cost ${m.model}`), "cache breaks", "retention", "≤6 back", "7-20", ">20", ">6", "short", "llm calls", ...(time ? ["ms"] : [])];
  const rows = r.rows.map((row) => {
    const named = [row.strategy, ...(failing ? [failedOf(row)] : [])];
    if (row.reduction === null) return [...named, ...Array<string>(head.length - named.length).fill(NOT_MEASURED)];
    // A strategy that never sent less than everything measured nothing: say so instead of 100%.
    const idle = idleLabel(row);
    const d = row.retentionByDistance;
    return [
      ...named,
      row.totals.inputTokens.toLocaleString("en-US"),
      pct(row.reduction),
      row.totals.peakPrompt.toLocaleString("en-US"),
      ...row.costRatios.map((x, k) => costRatioText(x, row.totals.costs[k] ?? 0)),
      String(row.totals.rewrites),
      idle ?? pctOr(row.retention),
      ...(idle === undefined ? [d.near, d.mid, d.far, d.beyond6, row.shortRetention].map(pctOr) : ["", "", "", "", ""]),
      String(row.totals.llmCalls),
      ...(time ? [row.totals.compactionMs.toFixed(0)] : []),
    ];
  });
  return { head, rows };
}

/** A price model in words: list prices and cache rules. */
export function describePrice(model: string, p: ModelPrice): string {
  const c = p.cache;
  const cache =
    c.kind === "none"
      ? "no cache"
      : c.kind === "token-prefix"
        ? `token-prefix cache (reads ${c.read}x, from ${c.minTokens} tokens in steps of ${c.step})`
        : `breakpoint cache at message boundaries (reads ${c.read}x, writes ${c.write}x, from ${c.minTokens} tokens)`;
  return `${model}: $${p.input}/$${p.output} per M input/output tokens, ${cache}`;
}

/** The lines that say what a report measured. */
export function describeReport(r: CompareReport): string[] {
  const lines = r.models.map((m) => `price model ${describePrice(m.model, m.price)}`);
  const meta = r.meta;
  if (meta !== undefined) {
    lines.unshift(`corpus: ${meta.corpus.join(", ")}; summarizer: ${meta.summarizer}`);
    lines.push(`ptc-lisp ${meta.version}, ${meta.date}, run time ${(meta.runMs / 1000).toFixed(1)} s`);
  }
  return lines;
}

/** What the retention columns counted (full's probe needs, which every row shares), for the text and the HTML. */
export function probeNeedsText(r: CompareReport): string {
  // Full's row wherever it is listed: a strategy listed before it may have failed on some transcripts, and counted fewer needs.
  const f = (r.rows.find((row) => row.strategy === "full") ?? r.rows[0]).totals;
  return f.probesNeeded + f.shortNeeded + f.taskStated === 0
    ? "no probe facts"
    : `probe needs: ${f.probesNeeded} counted (≤6 back ${f.nearNeeded}, 7-20 ${f.midNeeded}, >20 ${f.farNeeded}), ${f.shortNeeded} short values apart, ${f.taskStated} left out because the task states them; a value counts only outside the system prompt`;
}

/** The report as a terminal table. */
export function renderTable(r: CompareReport): string {
  if (!isObjectArg(r)) throw new TypeError(mustBe("renderTable: report", "a CompareReport (compareStrategies' result)", r));
  if (!isArrayArg(r.models) || !isArrayArg(r.rows)) throw new TypeError(mustBe("renderTable: report", "a CompareReport (compareStrategies' result)", r) + " without models and rows");
  const { head, rows } = reportCells(r, true);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [...describeReport(r), `${r.transcripts} transcripts, ${r.messages.toLocaleString("en-US")} messages; ${probeNeedsText(r)}`, line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line), ...failureLines(r), ...reportNotes(r), ...dataProblemLines(r)].join("\n");
}
