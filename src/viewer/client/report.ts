// A `ptc compare` report: the per-strategy table, its charts, and the per-transcript figures.
import { cacheTableCells, costRatioText, dataProblemLines, dollarsText, FAR_MESSAGES, NOT_MEASURED, percentText, type CacheTable } from "../../compaction/figures.js";
import { expandRuns, type ReportView, type SideBySide } from "../model.js";
import { costRetention, requestLines, strategyBars } from "./charts.js";
import { baseName, block, fmt, h } from "./dom.js";

const pct = percentText;

/** A table in a box that scrolls sideways: a column per strategy can be wider than the window, which would otherwise widen the page. */
function table(head: string[], rows: Array<Array<string | HTMLElement>>, cls: string): HTMLElement {
  return h("div", { class: "table-box" }, h("table", { class: `grid ${cls}` }, h("thead", null, h("tr", null, head.map((c) => h("th", null, c)))), h("tbody", null, rows.map((r) => h("tr", null, r.map((c) => h("td", null, c)))))));
}

/** One request of the transcript: each strategy's prompt in a column; messages the other prompt lacks are marked. */
function sideBySide(r: ReportView, sbs: SideBySide, texts: readonly string[], request: number, go: (hash: string) => void): HTMLElement {
  const n = sbs.requests.length;
  const at = Math.min(Math.max(1, request), n);
  const req = sbs.requests[at - 1];
  const prompts = [expandRuns(req.prompts[0]), expandRuns(req.prompts[1])];
  const column = (k: 0 | 1) => {
    const other = new Set(prompts[1 - k]);
    return h(
      "section",
      { class: "prompt-col", "data-strategy": k },
      h("h4", null, h("code", null, sbs.strategies[k]), `: ${fmt(req.tokens[k])} tokens, ${prompts[k].length} messages`),
      prompts[k].map((i, pos) => {
        const m = sbs.messages[i];
        const only = !other.has(i);
        return h("div", { class: `msg msg-${m.role}${only ? " new" : ""}` }, h("div", { class: "msg-head" }, h("span", { class: `role role-${m.role}` }, m.role), ` #${pos + 1} · ${fmt(m.tokens)} tokens`, only ? h("span", { class: "change change-new" }, "only here") : null), block(texts[m.text] ?? "", `${m.role} message`));
      }),
    );
  };
  const to = (k: number) => go(`${r.id}/${Math.min(Math.max(1, k), n)}`);
  const range = h("input", { type: "range", min: 1, max: n, value: at, "aria-label": "request", class: "request-range" });
  range.addEventListener("change", () => to(Number(range.value)));
  return h(
    "section",
    { class: "side-by-side", id: "side-by-side", "data-request": at },
    h("h3", null, `Transcript ${sbs.transcript} under two strategies`),
    h("div", { class: "toggles" }, h("button", { class: "toggle", "data-step": "prev", onclick: () => to(at - 1) }, "← previous"), h("span", { class: "request-label" }, `request ${at} of ${n}`), h("button", { class: "toggle", "data-step": "next", onclick: () => to(at + 1) }, "next →"), range, h("span", { class: "muted" }, " (keys j / k)")),
    h("div", { class: "prompt-cols layout-split" }, column(0), column(1)),
  );
}

/** Shows request `request` in `view` (what renderReport drew for `r`): the side-by-side prompts only are built again, the tables and charts kept. */
export function selectRequest(view: HTMLElement, r: ReportView, texts: readonly string[], request: number, go: (hash: string) => void): void {
  if (r.sideBySide) view.querySelector("#side-by-side")?.replaceWith(sideBySide(r, r.sideBySide, texts, request, go));
}

/** The cost of every strategy under each cache model (`ptc compare --caches`), as the harness's page shows it. */
function cachesSection(caches: CacheTable): HTMLElement {
  const { head, rows } = cacheTableCells(caches);
  return h("section", { class: "caches-box" }, h("h3", null, "Cost against full under each cache model"), h("p", { class: "muted" }, `The one measure; far facts: last mentioned ${FAR_MESSAGES}+ messages earlier.`), table(head, rows.map(([strategy, ...cells]) => [h("code", null, strategy), ...cells]), "caches"));
}

export function renderReport(r: ReportView, texts: readonly string[] = [], request = 1, go: (hash: string) => void = () => {}): HTMLElement {
  const head = ["strategy", "input tokens", "reduction", "peak prompt", "cost vs full", "cost", "cache breaks", "retention", "llm calls", "ms"];
  const main = table(
    head,
    // A row measured on no request (its strategy failed everywhere) has no figure at all.
    r.rows.map((row) => [h("code", null, row.strategy), ...(row.reduction === null ? Array<string>(head.length - 1).fill(NOT_MEASURED) : [fmt(row.inputTokens), pct(row.reduction), fmt(row.peakPrompt), costRatioText(row.costRatio, row.cost), dollarsText(row.cost), String(row.cacheBreaks), row.idle ?? (row.retention === null ? "-" : pct(row.retention)), String(row.llmCalls), fmt(row.compactionMs)])]),
    "strategies",
  );
  const problems = dataProblemLines(r);
  const ids = r.rows[0]?.perTranscript.map((p) => p.id) ?? [];
  const perTranscript = table(
    ["transcript", ...r.rows.map((row) => row.strategy)],
    ids.map((id, i) => [id, ...r.rows.map((row) => {
      const p = row.perTranscript[i];
      return p === undefined ? "-" : p.failed === true ? "failed" : `${fmt(p.inputTokens)}${p.retention === null ? "" : ` · ${pct(p.retention)}`}`;
    })]),
    "per-transcript",
  );
  return h(
    "div",
    { class: "report", "data-report": r.id },
    h("header", { class: "run-head" }, h("h2", null, "Compaction report ", h("code", null, r.id), h("span", { class: "muted", title: r.file }, ` ${baseName(r.file)}`)), h("p", { class: "muted" }, `${r.transcripts} transcripts, ${fmt(r.messages)} messages; every request replayed under each strategy.`)),
    main,
    r.failures ? h("div", { class: "notice strategy-failures" }, r.failures.map((l) => (l.startsWith("  ") ? h("p", null, h("code", null, l.trim())) : h("p", null, l)))) : null,
    r.tableNotes ? h("div", { class: "notice report-notes" }, r.tableNotes.map((l) => h("p", null, l))) : null,
    problems.length > 0 ? h("div", { class: "notice data-problems" }, h("p", null, problems[0]), problems.slice(1).map((l) => h("p", null, h("code", null, l.trim())))) : null,
    r.caches ? cachesSection(r.caches) : null,
    h("div", { class: "charts" }, h("h3", null, "Input tokens over all requests"), strategyBars(r.rows), costRetention(r.rows) ? h("h3", null, "Cost against retention") : null, costRetention(r.rows), r.longest ? h("h3", null, `Prompt tokens per request: ${r.longest.id}`) : null, r.longest ? requestLines(r.longest) : null),
    r.sideBySide ? sideBySide(r, r.sideBySide, texts, request, go) : null,
    r.note ? h("p", { class: "notice" }, r.note) : null,
    h("details", { class: "per-transcript-box" }, h("summary", null, `Input tokens per transcript (${ids.length}), with retention where the transcript has probes`), perTranscript),
  );
}
