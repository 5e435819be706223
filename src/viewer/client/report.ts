// A `ptc compare` report: the per-strategy table, its charts, and the per-transcript figures.
import type { ReportView } from "../model.js";
import { costRetention, requestLines, strategyBars } from "./charts.js";
import { fmt, h } from "./dom.js";

const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

function table(head: string[], rows: Array<Array<string | HTMLElement>>, cls: string): HTMLElement {
  return h("table", { class: `grid ${cls}` }, h("thead", null, h("tr", null, head.map((c) => h("th", null, c)))), h("tbody", null, rows.map((r) => h("tr", null, r.map((c) => h("td", null, c))))));
}

export function renderReport(r: ReportView): HTMLElement {
  const main = table(
    ["strategy", "input tokens", "reduction", "peak prompt", "cost vs full", "cost", "cache breaks", "retention", "llm calls", "ms"],
    r.rows.map((row) => [h("code", null, row.strategy), fmt(row.inputTokens), pct(row.reduction), fmt(row.peakPrompt), `${row.costRatio.toFixed(3)}x`, `$${row.cost.toFixed(4)}`, String(row.cacheBreaks), row.retention === null ? "-" : pct(row.retention), String(row.llmCalls), fmt(row.compactionMs)]),
    "strategies",
  );
  const ids = r.rows[0]?.perTranscript.map((p) => p.id) ?? [];
  const perTranscript = table(
    ["transcript", ...r.rows.map((row) => row.strategy)],
    ids.map((id, i) => [id, ...r.rows.map((row) => {
      const p = row.perTranscript[i];
      return p === undefined ? "-" : `${fmt(p.inputTokens)}${p.retention === null ? "" : ` · ${pct(p.retention)}`}`;
    })]),
    "per-transcript",
  );
  return h(
    "div",
    { class: "report", "data-report": r.id },
    h("header", { class: "run-head" }, h("h2", null, "Compaction report ", h("code", null, r.id), h("span", { class: "muted" }, ` ${r.file}`)), h("p", { class: "muted" }, `${r.transcripts} transcripts, ${fmt(r.messages)} messages; every request replayed under each strategy.`)),
    main,
    h("div", { class: "charts" }, h("h3", null, "Input tokens over all requests"), strategyBars(r.rows), costRetention(r.rows) ? h("h3", null, "Cost against retention") : null, costRetention(r.rows), r.longest ? h("h3", null, `Prompt tokens per request: ${r.longest.id}`) : null, r.longest ? requestLines(r.longest) : null),
    h("details", { class: "per-transcript-box" }, h("summary", null, `Input tokens per transcript (${ids.length}), with retention where the transcript has probes`), perTranscript),
  );
}
