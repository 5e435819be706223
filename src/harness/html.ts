// The comparison as one self-contained HTML page: no scripts, no network, charts drawn here as
// inline SVG. People would rather look at these than read the table.
import { NOT_MEASURED, percentText, ratioText, reportNotes } from "../compaction/figures.js";
import { cacheTableCells, FAR_MESSAGES, type CacheReport } from "./cache-models.js";
import { dataProblemLines, describeReport, failureLines, idleLabel, probeNeedsText, reportCells, type CompareReport, type StrategyRow } from "./compare.js";
import { detectorLine, type DetectorScore } from "./goals.js";

const COLORS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f", "#bab0ac"];
const W = 680;
const H = 280;
const PAD = 48;

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const pct = percentText;
const color = (i: number): string => COLORS[i % COLORS.length];

function frame(xLabel: string, yLabel: string): string {
  return (
    `<line x1="${PAD}" y1="${H - PAD}" x2="${W - PAD / 2}" y2="${H - PAD}" class="axis"/>` +
    `<line x1="${PAD}" y1="${PAD / 2}" x2="${PAD}" y2="${H - PAD}" class="axis"/>` +
    `<text x="${(W + PAD) / 2}" y="${H - 12}" text-anchor="middle">${esc(xLabel)}</text>` +
    `<text x="${PAD}" y="${PAD / 2 - 6}">${esc(yLabel)}</text>`
  );
}

function legend(rows: readonly StrategyRow[]): string {
  // Numbered like the labels in the charts, so a reader without colour can match them.
  return `<p class="legend">${rows.map((r, i) => `<span style="color:${color(i)}">■</span> ${i + 1} ${esc(r.strategy)}`).join(" &nbsp; ")}</p>`;
}

/** Input tokens summed over all requests, one bar per strategy. */
function tokensBars(rows: readonly StrategyRow[]): string {
  const max = Math.max(1, ...rows.map((r) => r.totals.inputTokens));
  const bw = (W - 1.5 * PAD) / rows.length;
  const bars = rows.map((r, i) => {
    // Measured on no request, its zero would read as the fewest tokens.
    if (r.reduction === null) return `<text class="label" x="${(PAD + i * bw + bw / 2).toFixed(1)}" y="${(H - PAD - 4).toFixed(1)}" text-anchor="middle">${i + 1} ${NOT_MEASURED}<title>${esc(r.strategy)}: failed on every transcript, nothing measured</title></text>`;
    const h = (r.totals.inputTokens / max) * (H - 1.5 * PAD);
    const x = PAD + i * bw + bw * 0.15;
    return `<rect x="${x.toFixed(1)}" y="${(H - PAD - h).toFixed(1)}" width="${(bw * 0.7).toFixed(1)}" height="${h.toFixed(1)}" fill="${color(i)}"><title>${esc(r.strategy)}: ${r.totals.inputTokens.toLocaleString("en-US")} tokens (${pct(r.reduction)} fewer than full)</title></rect><text class="label" x="${(x + bw * 0.35).toFixed(1)}" y="${(H - PAD - h - 4).toFixed(1)}" text-anchor="middle">${i + 1}</text>`;
  });
  return `<h2>Input tokens over all requests</h2><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="input tokens per strategy">${frame("strategy", `tokens (max ${max.toLocaleString("en-US")})`)}${bars.join("")}</svg>${legend(rows)}`;
}

/** Cost against full (lower is better) and retention (higher is better), one point per strategy. */
function costRetention(rows: readonly StrategyRow[]): string {
  // A row without a cost ratio (full cost nothing, it did not) has no place on the cost axis, and
  // one that never compacted none on the retention axis (its 100% measured nothing, as the table says).
  const plotted = (r: StrategyRow): r is StrategyRow & { retention: number; costRatio: number } => r.retention !== null && r.costRatio !== null && idleLabel(r) === undefined;
  const withRetention = rows.filter(plotted);
  if (withRetention.length === 0) return "<p>No probe facts in these transcripts: no retention chart.</p>";
  // A little room around the extremes, so no point sits on an axis or the frame's edge.
  const minC = Math.min(0.9, ...withRetention.map((r) => r.costRatio)) - 0.03;
  const maxC = Math.max(1.1, ...withRetention.map((r) => r.costRatio)) + 0.03;
  const minR = Math.max(0, Math.min(0.9, ...withRetention.map((r) => r.retention)) - 0.03);
  const x = (c: number): number => PAD + ((c - minC) / (maxC - minC)) * (W - 1.5 * PAD);
  const y = (v: number): number => H - PAD - ((v - minR) / (1.01 - minR)) * (H - 1.5 * PAD);
  const dots = rows.map((r, i) =>
    !plotted(r)
      ? ""
      : `<circle cx="${x(r.costRatio).toFixed(1)}" cy="${y(r.retention).toFixed(1)}" r="6" fill="${color(i)}"><title>${esc(r.strategy)}: cost ${ratioText(r.costRatio)} full, retention ${pct(r.retention)}</title></circle><text class="label" x="${(x(r.costRatio) + 8).toFixed(1)}" y="${(y(r.retention) - 6 - (i % 3) * 9).toFixed(1)}">${i + 1}</text>`,
  );
  const full = `<line x1="${x(1).toFixed(1)}" y1="${PAD / 2}" x2="${x(1).toFixed(1)}" y2="${H - PAD}" class="ref"/>`;
  return `<h2>Cost against retention</h2><p>Left of the dashed line a strategy costs less than sending everything; higher keeps more of the facts later replies need.</p><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="cost against retention">${frame(`cost vs full (${minC.toFixed(2)}x to ${maxC.toFixed(2)}x)`, `retention (${pct(minR)} to 100%)`)}${full}${dots.join("")}</svg>${legend(rows)}`;
}

/** Prompt tokens per request of the longest transcript, one line per strategy; dots where the cache breaks. */
function perRequest(report: CompareReport): string {
  const longest = report.longest;
  if (longest === null || longest.series.every((s) => s.points.length === 0)) return "";
  const n = Math.max(2, ...longest.series.map((s) => s.points.length));
  const max = Math.max(1, ...longest.series.flatMap((s) => s.points.map((p) => p.tokens)));
  const x = (i: number): number => PAD + (i / (n - 1)) * (W - 1.5 * PAD);
  const y = (v: number): number => H - PAD - (v / max) * (H - 1.5 * PAD);
  const lines = longest.series.map((s, k) => {
    const pts = s.points.map((p, i) => `${x(i).toFixed(1)},${y(p.tokens).toFixed(1)}`).join(" ");
    const breaks = s.points.map((p, i) => (p.cacheBreak ? `<circle cx="${x(i).toFixed(1)}" cy="${y(p.tokens).toFixed(1)}" r="3" fill="${color(k)}"><title>${esc(s.strategy)}: the cache breaks at request ${i + 1}</title></circle>` : "")).join("");
    return `<polyline fill="none" stroke="${color(k)}" stroke-width="1.5" points="${pts}"><title>${esc(s.strategy)}</title></polyline>${breaks}`;
  });
  return `<h2>Prompt tokens per request: ${esc(longest.id)}</h2><p>The longest transcript; dots mark where a strategy's prompt no longer starts with the previous one (the prefix cache breaks).</p><svg viewBox="0 0 ${W} ${H}" role="img" aria-label="prompt tokens per request">${frame(`request (1 to ${n})`, `prompt tokens (max ${max.toLocaleString("en-US")})`)}${lines.join("")}</svg>${legend(report.rows)}`;
}

/** What a run measured besides the strategies' table, which the page shows when given. */
export interface HtmlExtras {
  /** A goal detector's name and score against the labels (labelled corpora). */
  goalDetector?: { name: string; score: DetectorScore };
  /** The cost of every strategy under each cache model (`--caches`). */
  caches?: CacheReport;
}

function cachesSection(caches: CacheReport): string {
  const { head, rows } = cacheTableCells(caches);
  return `<h2>Cost against full under each cache model</h2><p>The one measure; far facts: last mentioned ${FAR_MESSAGES}+ messages earlier.</p><table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`;
}

/** The report as one HTML page: the table, the goal detector's score and the cache models' table when measured, then the charts. */
export function renderHtml(report: CompareReport, title = "Compaction strategies compared", extras: HtmlExtras = {}): string {
  const { head, rows: cells } = reportCells(report, false);
  const rows = cells.map((c) => `<tr>${c.map((x) => `<td>${esc(x)}</td>`).join("")}</tr>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title>
<style>
:root{color-scheme:light dark;--fg:#1d1d1f;--bg:#fff;--muted:#666;--line:#ccc}
@media (prefers-color-scheme:dark){:root{--fg:#e8e8e8;--bg:#161616;--muted:#aaa;--line:#444}}
body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:2em auto;max-width:${W + 40}px;padding:0 1em}
table{border-collapse:collapse;width:100%}td,th{padding:4px 8px;border-bottom:1px solid var(--line);text-align:right}td:first-child,th:first-child{text-align:left}
svg{width:100%;height:auto}svg text{fill:var(--fg);font-size:12px}.axis{stroke:var(--muted)}.ref{stroke:var(--muted);stroke-dasharray:4 4}
.legend,p{color:var(--muted)}
</style></head><body>
<h1>${esc(title)}</h1>
<p>${report.transcripts} transcripts, ${report.messages.toLocaleString("en-US")} messages; every request replayed under each strategy; ${esc(probeNeedsText(report))}.</p>
${describeReport(report).map((l) => `<p>${esc(l)}</p>`).join("\n")}
<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows}</tbody></table>
${failureLines(report).map((l) => (l.startsWith("  ") ? `<p><code>${esc(l.trim())}</code></p>` : `<p>${esc(l)}</p>`)).join("\n")}
${reportNotes(report).map((l) => `<p>${esc(l)}</p>`).join("\n")}
${dataProblemLines(report).map((l, i) => (i === 0 ? `<p>${esc(l)}</p>` : `<p><code>${esc(l.trim())}</code></p>`)).join("\n")}
${extras.goalDetector === undefined ? "" : `<p>${esc(detectorLine(extras.goalDetector.name, extras.goalDetector.score))}</p>`}
${extras.caches === undefined ? "" : cachesSection(extras.caches)}
${tokensBars(report.rows)}
${costRetention(report.rows)}
${perRequest(report)}
</body></html>
`;
}
