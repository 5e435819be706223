// Report figures as the harness's tables, its HTML page and the viewer print them. A figure is
// never rounded onto parity, all or none when it is not there: a cost ratio of 0.9995 printed as
// "1.000x" told a reader a strategy saved nothing, and 1.0004 that it lost nothing. No imports:
// the viewer's browser bundle takes this file as it is.

/**
 * `x` with `digits` decimals, or more where those would round it onto one of `edges` it is not
 * (a figure that differs from parity or from all/none must read as differing), up to 9.
 */
function decimals(x: number, digits: number, edges: readonly number[]): string {
  let text = x.toFixed(digits);
  for (let d = digits + 1; d <= 9 && !edges.includes(x) && edges.includes(Number(text)); d++) text = x.toFixed(d);
  return text;
}

/** A ratio to full as a report prints it: "0.962x"; 0.9995 reads "0.9995x" (a saving), 1.0004 "1.0004x" (a loss), never "1.000x". */
export const ratioText = (x: number): string => `${decimals(x, 3, [1])}x`;

/** A share as a report prints it: "42.3%"; 2,499 of 2,500 reads "99.96%" and a saving of 0.004% reads so, never "100.0%" or "0.0%". */
export const percentText = (x: number): string => `${decimals(x * 100, 1, [0, 100])}%`;


/** Dollars as a report prints them: "$0.0123"; a non-zero cost never reads "$0.0000" ($0.00004 reads "$0.00004"). */
export const dollarsText = (x: number): string => `$${decimals(x, 4, [0])}`;

/**
 * A cost against full's: 1 when both are nothing, null when full cost nothing and this did not
 * (a free conversation model with paid summary calls), which no ratio can say.
 */
export const costRatio = (cost: number, fullCost: number): number | null => (fullCost === 0 ? (cost === 0 ? 1 : null) : cost / fullCost);

/** A cost ratio as a report prints it, or where there is none the cost itself: "$0.0059 vs $0", never "1.000x". */
export const costRatioText = (ratio: number | null, cost: number): string => (ratio === null ? `${dollarsText(cost)} vs $0` : ratioText(ratio));

/**
 * What a report prints for every figure of a row measured on no request: its strategy failed on
 * each transcript. Its sums of nothing against nothing read "0.0%" saved at "1.000x", no effect
 * where it had failed.
 */
export const NOT_MEASURED = "n/a";

/** 1 - tokens / full's over the requests both were measured on; null without one (the strategy failed on every transcript). */
export const reductionOf = (tokens: number, fullTokens: number): number | null => (fullTokens === 0 ? null : 1 - tokens / fullTokens);

/**
 * A row's failures as its table cell: the transcripts its strategy failed on ("2 of 3", left out of
 * its figures) and those where a summary failed ("summary in 1 of 3", sent without it, in its
 * figures); nothing when none failed.
 */
export function failedText(failed: number, summaryFailed: number, transcripts: number): string {
  return [failed === 0 ? "" : `${failed} of ${transcripts}`, summaryFailed === 0 ? "" : `summary in ${summaryFailed} of ${transcripts}`].filter((x) => x !== "").join(", ");
}

/**
 * What a compare row that never sent less than everything shows instead of its retention (which
 * would read 100%, measuring nothing), or undefined for a row that did, full and the floors: its
 * trigger never fired, or it fired and every summary failed; NOT_MEASURED when it was measured on
 * no request (a null reduction). A row without `triggered` (a report written before it) gets none.
 */
export function idleText(row: { readonly strategy: string; readonly kind?: string; readonly triggered?: boolean; readonly summaryFailures?: number; readonly reduction?: number | null }): string | undefined {
  if (row.reduction === null) return NOT_MEASURED;
  if (row.kind !== "strategy" || row.triggered !== false || row.strategy === "full") return undefined;
  return (row.summaryFailures ?? 0) > 0 ? "summaries failed" : "never triggered";
}

/**
 * A probe is a far fact at a request when its last mention before that request is at least this
 * many messages back (about five agent steps): only a strategy that keeps old messages' content
 * can answer it. A minimal stand-in for the harness's per-distance retention (issue 21), which
 * replaces it when it lands.
 */
export const FAR_MESSAGES = 10;

/** The cost of every strategy under each cache model (`ptc compare --caches`), as its table reads it. */
export interface CacheTable {
  transcripts: number;
  models: readonly string[];
  rows: ReadonlyArray<{
    strategy: string;
    inputTokens: number;
    /** Null when measured on no request (the strategy failed on every transcript). */
    reduction: number | null;
    cost: Readonly<Record<string, number>>;
    costRatio: Readonly<Record<string, number | null>>;
    retention: number | null;
    farRetention: number | null;
    farNeeded: number;
    fired: number;
    failed: number;
    /** Transcripts the strategy itself failed on (absent in reports written before it). */
    failures?: ReadonlyArray<{ id: string; message: string }>;
  }>;
}

const pctOrNone = (x: number | null): string => (x === null ? "-" : percentText(x));

/** The cache models' table as cells, a header and a row per strategy: the terminal's, the HTML page's and the viewer's. */
export function cacheTableCells(r: CacheTable): { head: string[]; rows: string[][] } {
  const head = ["strategy", "input tokens", "reduction", ...r.models.map((m) => `cost ${m}`), "retention", "far facts", "fired"];
  const rows = r.rows.map((row) => {
    const failed = (row.failures?.length ?? 0) > 0 ? `failed on ${row.failures?.length}/${r.transcripts} (left out)` : "";
    if (row.reduction === null) return [row.strategy, ...Array<string>(head.length - 2).fill(NOT_MEASURED), failed || NOT_MEASURED];
    return [
      row.strategy,
      row.inputTokens.toLocaleString("en-US"),
      percentText(row.reduction),
      ...r.models.map((m) => costRatioText(row.costRatio[m] === undefined ? 1 : row.costRatio[m], row.cost[m] ?? 0)),
      pctOrNone(row.retention),
      `${pctOrNone(row.farRetention)} of ${row.farNeeded}`,
      [row.strategy === "full" ? "-" : row.fired === 0 ? "never" : `${row.fired}/${r.transcripts}`, row.failed > 0 ? `summaries failed in ${row.failed}/${r.transcripts}` : "", failed].filter((x) => x !== "").join(", "),
    ];
  });
  return { head, rows };
}

/** A report's data problems, a count line then one indented line each; none when it has none. */
export function dataProblemLines(r: { transcripts: number; dataProblems?: ReadonlyArray<{ problems: readonly string[] }> }): string[] {
  const problems = r.dataProblems ?? [];
  if (problems.length === 0) return [];
  return [`data problems in ${problems.length} of ${r.transcripts} transcripts (compared as recorded):`, ...problems.flatMap((t) => t.problems.map((p) => `  ${p}`))];
}

type NotedRow = { strategy: string; totals: { requests: number; summaryFailures?: number; overWindow?: number }; perTranscript: ReadonlyArray<{ metrics: { summaryFailures?: number } }> };

/**
 * The lines under a report's table, a strategy each: where its summaries failed (at how many
 * requests, in how many transcripts), and where it sent prompts larger than the conversations'
 * model's context window (`contextWindow`, the first model's when the context table knows it),
 * whose cost stands for requests no app could have made. A report written before a figure has
 * no line for it.
 */
export function reportNotes(r: { transcripts: number; models?: ReadonlyArray<{ model: string }>; contextWindow?: number | null; rows: ReadonlyArray<NotedRow> }): string[] {
  const failed = r.rows.flatMap((row) => {
    const n = row.totals.summaryFailures ?? 0;
    return n === 0 ? [] : [`${row.strategy}: a summary failed at ${n} requests in ${row.perTranscript.filter((p) => (p.metrics.summaryFailures ?? 0) > 0).length} of ${r.transcripts} transcripts; those prompts went out without it`];
  });
  const model = r.models?.[0]?.model;
  const window = r.contextWindow ?? undefined;
  if (model === undefined || window === undefined) return failed;
  const over = r.rows.flatMap((row) => {
    const n = row.totals.overWindow ?? 0;
    return n === 0 ? [] : [`${row.strategy}: ${n} of ${row.totals.requests} requests have a prompt larger than ${model}'s context window (${window.toLocaleString("en-US")} tokens); no app could have sent them, and they are priced as if sent`];
  });
  return [...failed, ...over];
}

/**
 * A report's strategies that failed on some transcripts, a line each then one indented line per
 * failure (which request, what it threw); none when none failed. A report written before
 * `failures` has none.
 */
export function failureLines(r: { transcripts: number; rows: ReadonlyArray<{ strategy: string; failures?: ReadonlyArray<{ message: string }> }> }): string[] {
  return r.rows.flatMap((row) => {
    const failures = row.failures ?? [];
    return failures.length === 0 ? [] : [`${row.strategy} failed on ${failures.length} of ${r.transcripts} transcripts (its figures, and full's they are compared with, leave them out):`, ...failures.map((f) => `  ${f.message}`)];
  });
}
