// `ptc compare --json` reports, read as data from disk: checked against the shape the
// harness writes (the viewer sits beside the harness, not above it, so it states the shape
// itself) and projected to the page's table and chart series.
import { z } from "zod";
import { failureLines, idleText, reportNotes } from "../compaction/figures.js";
import type { ReportRow, ReportView } from "./model.js";

const metrics = z.looseObject({
  requests: z.number(),
  inputTokens: z.number(),
  peakPrompt: z.number(),
  cost: z.number(),
  rewrites: z.number(),
  llmCalls: z.number(),
  llmTokens: z.number(),
  compactionMs: z.number(),
  probesNeeded: z.number(),
  probesKept: z.number(),
  // Written by later versions of `ptc compare`, as `kind` and `triggered` below.
  summaryFailures: z.number().optional(),
  overWindow: z.number().optional(),
});

export const compareReportSchema = z.looseObject({
  transcripts: z.number().int().nonnegative(),
  messages: z.number().int().nonnegative(),
  rows: z
    .array(
      z.looseObject({
        strategy: z.string(),
        options: z.record(z.string(), z.unknown()).optional(),
        totals: metrics,
        // Null where the row was measured on no request (its strategy failed on every transcript).
        reduction: z.number().nullable(),
        costRatio: z.number().nullable(),
        retention: z.number().nullable(),
        kind: z.string().optional(),
        triggered: z.boolean().optional(),
        perTranscript: z.array(z.looseObject({ id: z.string(), metrics, failed: z.string().optional() })),
        // Written by later versions of `ptc compare`.
        failures: z.array(z.looseObject({ id: z.string(), message: z.string() })).optional(),
      }),
    )
    .min(1),
  models: z.array(z.looseObject({ model: z.string() })).optional(),
  // Written by later versions of `ptc compare`: optional, so an older report still opens.
  contextWindow: z.number().nullable().optional(),
  dataProblems: z.array(z.looseObject({ id: z.string(), problems: z.array(z.string()) })).optional(),
  caches: z
    .looseObject({
      transcripts: z.number().int().nonnegative(),
      models: z.array(z.string()),
      rows: z.array(
        z.looseObject({
          strategy: z.string(),
          inputTokens: z.number(),
          reduction: z.number().nullable(),
          cost: z.record(z.string(), z.number()),
          costRatio: z.record(z.string(), z.number().nullable()),
          retention: z.number().nullable(),
          farRetention: z.number().nullable(),
          farNeeded: z.number(),
          fired: z.number(),
          failed: z.number(),
        }),
      ),
    })
    .optional(),
  longest: z
    .looseObject({
      id: z.string(),
      series: z.array(z.looseObject({ strategy: z.string(), points: z.array(z.looseObject({ tokens: z.number(), cacheBreak: z.boolean() })) })),
    })
    .nullable(),
});

export type CompareReportJson = z.infer<typeof compareReportSchema>;

/** True when parsed JSON looks like a compare report rather than a trace (so its errors are reported as a report's). */
export function looksLikeReport(raw: unknown): boolean {
  return typeof raw === "object" && raw !== null && "rows" in raw && "transcripts" in raw;
}

const retention = (needed: number, kept: number): number | null => (needed === 0 ? null : kept / needed);

/** A row's idle text (idleText, as the text and HTML reports show it), as a field when it has one. */
function idleOf(r: CompareReportJson["rows"][number]): { idle?: string } {
  const idle = idleText({ strategy: r.strategy, reduction: r.reduction, ...(r.kind === undefined ? {} : { kind: r.kind }), ...(r.triggered === undefined ? {} : { triggered: r.triggered }), ...(r.totals.summaryFailures === undefined ? {} : { summaryFailures: r.totals.summaryFailures }) });
  return idle === undefined ? {} : { idle };
}

export function projectReport(report: CompareReportJson, file: string, id: string): ReportView {
  const rows: ReportRow[] = report.rows.map((r) => ({
    strategy: r.strategy,
    ...idleOf(r),
    inputTokens: r.totals.inputTokens,
    reduction: r.reduction,
    peakPrompt: r.totals.peakPrompt,
    costRatio: r.costRatio,
    cost: r.totals.cost,
    cacheBreaks: r.totals.rewrites,
    retention: r.retention,
    llmCalls: r.totals.llmCalls,
    compactionMs: r.totals.compactionMs,
    perTranscript: r.perTranscript.map((p) => ({ id: p.id, inputTokens: p.metrics.inputTokens, peakPrompt: p.metrics.peakPrompt, cacheBreaks: p.metrics.rewrites, retention: retention(p.metrics.probesNeeded, p.metrics.probesKept), ...(p.failed === undefined ? {} : { failed: true as const }) })),
  }));
  const longest =
    report.longest === null
      ? null
      : {
          id: report.longest.id,
          series: report.longest.series.map((s) => ({
            strategy: s.strategy,
            tokens: s.points.map((p) => p.tokens),
            breaks: s.points.flatMap((p, i) => (p.cacheBreak ? [i] : [])),
          })),
        };
  const dataProblems = (report.dataProblems ?? []).map((p) => ({ id: p.id, problems: p.problems }));
  const caches = report.caches === undefined ? undefined : { transcripts: report.caches.transcripts, models: report.caches.models, rows: report.caches.rows.map((r) => ({ strategy: r.strategy, inputTokens: r.inputTokens, reduction: r.reduction, cost: r.cost, costRatio: r.costRatio, retention: r.retention, farRetention: r.farRetention, farNeeded: r.farNeeded, fired: r.fired, failed: r.failed })) };
  const failures = failureLines(report);
  const tableNotes = reportNotes(report);
  return { id, file, transcripts: report.transcripts, messages: report.messages, rows, longest, ...(dataProblems.length > 0 ? { dataProblems } : {}), ...(failures.length > 0 ? { failures } : {}), ...(tableNotes.length > 0 ? { tableNotes } : {}), ...(caches === undefined ? {} : { caches }) };
}
