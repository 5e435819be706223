// The charts, drawn as inline SVG: prompt tokens per turn (full history against what was
// sent, the sent prompt split into cached and uncached parts, compaction events marked),
// output tokens per turn, and the compare report's bars, scatter and per-request lines.
import type { ChartPoint, ReportRow, ReportView } from "../model.js";
import { percentText, ratioText } from "../../compaction/figures.js";
import { fmt, h, s } from "./dom.js";

const W = 720;
const H = 250;
const L = 60;
const R = 16;
const T = 18;
const B = 34;
const plotW = W - L - R;
const plotH = H - T - B;

export const PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#9c755f", "#bab0ac"];
const color = (i: number): string => PALETTE[i % PALETTE.length];

/** A bar's length: a trace records whatever count its provider reported, and SVG refuses a negative height. */
const bar = (v: number): number => Math.max(0, v);

/** A nice round maximum for the y axis. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function axes(max: number, yLabel: string, xLabels: string[], xAt: (i: number) => number): SVGElement[] {
  const y = (v: number) => T + plotH - (v / max) * plotH;
  const out: SVGElement[] = [];
  for (const f of [0, 0.25, 0.5, 0.75, 1]) {
    const v = max * f;
    out.push(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: f === 0 ? "axis" : "grid" }));
    out.push(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "tick" }, fmt(v)));
  }
  const every = Math.ceil(xLabels.length / 24);
  xLabels.forEach((label, i) => {
    if (i % every === 0) out.push(s("text", { x: xAt(i), y: H - B + 16, "text-anchor": "middle", class: "tick" }, label));
  });
  out.push(s("text", { x: 4, y: 12, class: "label" }, yLabel));
  return out;
}

function svgRoot(label: string, children: SVGElement[]): SVGElement {
  return s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "chart" }, children);
}

const legend = (items: Array<[string, string]>): HTMLElement => h("p", { class: "legend" }, items.map(([cls, text]) => h("span", null, h("i", { class: `swatch ${cls}` }), text)));

/** Prompt tokens per turn: lines for the full history and the sent prompt, bars for the sent prompt's cached and uncached parts. */
export function promptChart(points: readonly ChartPoint[], onPick: (turn: number) => void, selected?: number): HTMLElement {
  const n = points.length;
  const max = niceMax(Math.max(1, ...points.map((p) => Math.max(p.fullTokens, p.sentTokens))));
  const step = plotW / Math.max(1, n);
  const xAt = (i: number) => L + step * (i + 0.5);
  const y = (v: number) => T + plotH - (v / max) * plotH;
  const els: SVGElement[] = axes(max, "prompt tokens", points.map((p) => String(p.turn)), xAt);
  const bw = Math.min(36, step * 0.6);
  points.forEach((p, i) => {
    const cached = bar(Math.min(p.cachedTokens, p.sentTokens));
    const x = xAt(i) - bw / 2;
    els.push(s("rect", { x, y: y(p.sentTokens), width: bw, height: y(cached) - y(p.sentTokens), class: "bar-uncached" }, s("title", null, `turn ${p.turn}: ${fmt(p.sentTokens - cached)} uncached`)));
    els.push(s("rect", { x, y: y(cached), width: bw, height: y(0) - y(cached), class: "bar-cached" }, s("title", null, `turn ${p.turn}: ${fmt(cached)} cached (${p.cachedSource})`)));
    if (p.compaction !== undefined) {
      const cx = xAt(i) - step / 2;
      els.push(s("line", { x1: cx, x2: cx, y1: T, y2: T + plotH, class: "compaction" }, s("title", null, `before turn ${p.turn}: ${p.compaction}`)));
      els.push(s("text", { x: cx + 3, y: T + 10, class: "compaction-label" }, "compaction"));
    }
    if (p.failed) els.push(s("circle", { cx: xAt(i), cy: T + plotH + 6, r: 4, class: "fail-dot" }, s("title", null, `turn ${p.turn} failed`)));
  });
  // One band, moved by selectChartTurn when another turn is shown (the chart itself is kept).
  const band = s("rect", { y: T, width: step, height: plotH, class: "selected-band" });
  placeBand(band, points, selected);
  els.push(band);
  for (const [key, cls] of [["fullTokens", "line-full"], ["sentTokens", "line-sent"]] as const) {
    els.push(s("polyline", { points: points.map((p, i) => `${xAt(i).toFixed(1)},${y(p[key]).toFixed(1)}`).join(" "), class: cls, "data-series": key }));
    points.forEach((p, i) => els.push(s("circle", { cx: xAt(i), cy: y(p[key]), r: 3, class: `dot ${cls}` }, s("title", null, `turn ${p.turn}: ${fmt(p[key])} tokens (${key === "fullTokens" ? "full history" : "as sent"})`))));
  }
  // Whole-height hit areas: a click on a turn's column opens the turn.
  points.forEach((p, i) => els.push(s("rect", { x: xAt(i) - step / 2, y: T, width: step, height: plotH, class: "hit", "data-turn": p.turn, onclick: () => onPick(p.turn) })));
  const sources = new Set(points.map((p) => p.cachedSource));
  const src = [...sources].map((k) => (k === "provider" ? "reported by the provider" : k === "local" ? "measured locally" : "as the trace recorded it")).join(", ");
  return h(
    "figure",
    { class: "chart-box", "data-chart": "prompt" },
    svgRoot("prompt tokens per turn", els),
    legend([
      ["line-full", "full history"],
      ["line-sent", "as sent"],
      ["bar-cached", `cached (${src})`],
      ["bar-uncached", "uncached"],
      ["compaction", "compaction event"],
    ]),
  );
}

/** Puts the selected-turn band over `turn`'s column, or hides it when the chart has no such turn. */
function placeBand(band: SVGElement, points: readonly ChartPoint[], turn: number | undefined): void {
  const i = points.findIndex((p) => p.turn === turn);
  band.setAttribute("x", String(L + (plotW / Math.max(1, points.length)) * Math.max(0, i)));
  band.setAttribute("visibility", i < 0 ? "hidden" : "visible");
}

/** Moves the prompt chart's band (in `root`) to `turn`. */
export function selectChartTurn(root: ParentNode, points: readonly ChartPoint[], turn: number): void {
  const band = root.querySelector<SVGElement>("[data-chart=prompt] .selected-band");
  if (band !== null) placeBand(band, points, turn);
}

/** Output tokens per turn, as bars. */
export function outputChart(points: readonly ChartPoint[], onPick: (turn: number) => void): HTMLElement {
  const max = niceMax(Math.max(1, ...points.map((p) => p.outputTokens)));
  const step = plotW / Math.max(1, points.length);
  const xAt = (i: number) => L + step * (i + 0.5);
  const y = (v: number) => T + plotH - (v / max) * plotH;
  const bw = Math.min(36, step * 0.6);
  const els = axes(max, "output tokens", points.map((p) => String(p.turn)), xAt);
  points.forEach((p, i) =>
    els.push(s("rect", { x: xAt(i) - bw / 2, y: y(bar(p.outputTokens)), width: bw, height: y(0) - y(bar(p.outputTokens)), class: p.failed ? "bar-output failed" : "bar-output", "data-turn": p.turn, onclick: () => onPick(p.turn) }, s("title", null, `turn ${p.turn}: ${fmt(p.outputTokens)} output tokens`))),
  );
  return h("figure", { class: "chart-box small", "data-chart": "output" }, svgRoot("output tokens per turn", els));
}

/** Input tokens summed over all requests, one bar per strategy. */
export function strategyBars(rows: readonly ReportRow[]): HTMLElement {
  const max = niceMax(Math.max(1, ...rows.map((r) => r.inputTokens)));
  const step = plotW / rows.length;
  const xAt = (i: number) => L + step * (i + 0.5);
  const y = (v: number) => T + plotH - (v / max) * plotH;
  const els = axes(max, "input tokens, all requests", rows.map((_, i) => String(i + 1)), xAt);
  rows.forEach((r, i) => els.push(s("rect", { x: xAt(i) - step * 0.3, y: y(bar(r.inputTokens)), width: step * 0.6, height: y(0) - y(bar(r.inputTokens)), fill: color(i), class: "bar" }, s("title", null, r.reduction === null ? `${r.strategy}: failed on every transcript, nothing measured` : `${r.strategy}: ${fmt(r.inputTokens)} tokens, ${percentText(r.reduction)} fewer than full`))));
  return h("figure", { class: "chart-box", "data-chart": "strategy-bars" }, svgRoot("input tokens per strategy", els), strategyLegend(rows.map((r) => r.strategy), true));
}

function strategyLegend(names: readonly string[], numbered = false): HTMLElement {
  return h(
    "p",
    { class: "legend" },
    names.map((name, i) => {
      // Set through the CSSOM: the policy allows no inline style attributes.
      const swatch = h("i", { class: "swatch" });
      swatch.style.background = color(i);
      return h("span", null, swatch, numbered ? `${i + 1} ${name}` : name);
    }),
  );
}

/** Cost against full (x) and probe retention (y), one point per strategy. */
export function costRetention(rows: readonly ReportRow[]): HTMLElement | null {
  // A row without a cost ratio (full cost nothing, it did not) has no place on the cost axis, and
  // one that never compacted none on the retention axis (its 100% measured nothing, as the table says).
  const plotted = (r: ReportRow): r is ReportRow & { retention: number; costRatio: number } => r.retention !== null && r.costRatio !== null && r.idle === undefined;
  const withR = rows.filter(plotted);
  if (withR.length === 0) return null;
  const minC = Math.min(0.9, ...withR.map((r) => r.costRatio)) - 0.05;
  const maxC = Math.max(1.1, ...withR.map((r) => r.costRatio)) + 0.05;
  const minR = Math.max(0, Math.min(0.9, ...withR.map((r) => r.retention)) - 0.05);
  const x = (c: number) => L + ((c - minC) / (maxC - minC)) * plotW;
  const y = (v: number) => T + plotH - ((v - minR) / (1.02 - minR)) * plotH;
  const els: SVGElement[] = [
    s("line", { x1: L, x2: W - R, y1: T + plotH, y2: T + plotH, class: "axis" }),
    s("line", { x1: L, x2: L, y1: T, y2: T + plotH, class: "axis" }),
    s("line", { x1: x(1), x2: x(1), y1: T, y2: T + plotH, class: "compaction" }),
    s("text", { x: x(1) + 4, y: T + 10, class: "tick" }, "cost of full"),
    s("text", { x: W - R, y: H - 8, "text-anchor": "end", class: "label" }, `cost vs full (${minC.toFixed(2)}x to ${maxC.toFixed(2)}x)`),
    s("text", { x: 4, y: 12, class: "label" }, `retention (${(minR * 100).toFixed(0)}% to 100%)`),
  ];
  rows.forEach((r, i) => {
    if (plotted(r)) els.push(s("circle", { cx: x(r.costRatio), cy: y(r.retention), r: 6, fill: color(i), class: "point" }, s("title", null, `${r.strategy}: cost ${ratioText(r.costRatio)}, retention ${percentText(r.retention)}`)));
  });
  return h("figure", { class: "chart-box", "data-chart": "cost-retention" }, svgRoot("cost against retention", els), strategyLegend(rows.map((r) => r.strategy)));
}

/** Prompt tokens per request of the longest transcript, a line per strategy, dots where the cache broke. */
export function requestLines(longest: NonNullable<ReportView["longest"]>): HTMLElement {
  const n = Math.max(2, ...longest.series.map((s) => s.tokens.length));
  const max = niceMax(Math.max(1, ...longest.series.flatMap((s) => s.tokens)));
  const xAt = (i: number) => L + (i / (n - 1)) * plotW;
  const y = (v: number) => T + plotH - (v / max) * plotH;
  const els = axes(max, "prompt tokens per request", Array.from({ length: n }, (_, i) => String(i + 1)), xAt);
  longest.series.forEach((series, k) => {
    els.push(s("polyline", { points: series.tokens.map((t, i) => `${xAt(i).toFixed(1)},${y(t).toFixed(1)}`).join(" "), stroke: color(k), class: "series" }, s("title", null, series.strategy)));
    for (const i of series.breaks) els.push(s("circle", { cx: xAt(i), cy: y(series.tokens[i]), r: 3, fill: color(k), class: "break" }, s("title", null, `${series.strategy}: the cache breaks at request ${i + 1}`)));
  });
  return h("figure", { class: "chart-box", "data-chart": "requests" }, svgRoot("prompt tokens per request", els), strategyLegend(longest.series.map((x) => x.strategy)));
}
