// A run: its header (task, outcome, totals), the charts, a strip of turns, and the selected
// turn in detail (program, error, output, tool calls, definitions, value, prompt).
import { dollarsText } from "../../compaction/figures.js";
import type { PageData, RunView, ToolCallView, TurnView } from "../model.js";
import { outputChart, promptChart, selectChartTurn } from "./charts.js";
import { baseName, block, fmt, h, ms } from "./dom.js";
import { highlight } from "./lisp.js";
import { promptSection, type PromptLayout } from "./prompt.js";

export interface RunContext {
  data: PageData;
  layout: PromptLayout;
  setLayout: (l: PromptLayout) => void;
  go: (hash: string) => void;
}

/** Where a turn's figures come from: a scripted or replayed model is no provider, so its runs are measured locally. */
const SOURCE: Record<"provider" | "local" | "recorded", string> = { provider: "reported by the provider", local: "measured locally", recorded: "source not recorded" };

const STATUS: Record<TurnView["status"], string> = {
  ok: "ok",
  error: "error",
  no_code: "no program",
  invalid_return: "return rejected",
  returned: "returned",
  failed: "failed",
  paused: "paused",
};

function stat(label: string, value: string): HTMLElement {
  return h("div", { class: "stat" }, h("div", { class: "stat-value" }, value), h("div", { class: "stat-label" }, label));
}

function header(run: RunView, ctx: RunContext): HTMLElement {
  const t = run.totals;
  const outcome = run.outcome.paused ? "paused" : run.outcome.ok === true ? "ok" : run.outcome.ok === false ? "failed" : "unknown";
  return h(
    "header",
    { class: "run-head" },
    h("h2", null, run.parent ? "Nested run " : "Run ", h("code", null, run.id), h("span", { class: "muted", title: run.file }, ` ${baseName(run.file)}`)),
    run.parent ? h("p", { class: "parent" }, "Called by ", h("a", { href: `#${run.parent.run}/${run.parent.turn}`, onclick: (e: Event) => (e.preventDefault(), ctx.go(`${run.parent?.run}/${run.parent?.turn}`)) }, `turn ${run.parent.turn} of ${run.parent.run}`), ` as tool ${run.parent.tool}`) : null,
    h("div", { class: `outcome outcome-${outcome}`, "data-outcome": outcome }, run.outcome.text),
    h("div", { class: "stats" }, [
      stat("turns", String(t.turns)),
      stat("input tokens", fmt(t.inputTokens)),
      stat("cached", fmt(t.cachedTokens)),
      stat("output tokens", fmt(t.outputTokens)),
      t.cost !== null ? stat(`cost (${run.priceModel ?? "?"} list prices)`, dollarsText(t.cost)) : stat("cost", run.priceModel === null ? "unknown: the trace records no model" : `unknown: no price for model ${run.priceModel}`),
      stat("tool calls", t.heldCalls > 0 ? `${t.toolCalls} (${t.heldCalls} held)` : String(t.toolCalls)),
      stat("model time", ms(t.llmMs)),
      stat("program time", ms(t.execMs)),
      t.durationMs !== undefined ? stat("duration", ms(t.durationMs)) : null,
      stat("prompts", run.promptMode),
    ]),
    h("details", { class: "task" }, h("summary", null, `Task (${fmt(run.task.length)} characters)`), h("pre", null, run.task)),
    run.notice ? h("p", { class: "notice" }, run.notice) : null,
  );
}

function strip(run: RunView, selected: number, ctx: RunContext): HTMLElement {
  return h(
    "nav",
    { class: "turn-strip", "aria-label": "turns" },
    run.turns.map((t) =>
      h(
        "a",
        { href: `#${run.id}/${t.number}`, class: `turn-pill status-${t.status}${t.failed ? " failed" : ""}${t.number === selected ? " selected" : ""}`, "data-turn": t.number, "aria-current": t.number === selected ? "true" : undefined, title: STATUS[t.status], onclick: (e: Event) => (e.preventDefault(), ctx.go(`${run.id}/${t.number}`)) },
        `${t.number}`,
        h("small", null, STATUS[t.status]),
      ),
    ),
  );
}

function toolCall(c: ToolCallView, i: number, ctx: RunContext): HTMLElement {
  return h(
    "div",
    { class: `tool-call${c.held ? " held" : c.error !== undefined ? " failed" : ""}`, "data-call": i },
    h(
      "div",
      { class: "tool-head" },
      h("code", { class: "t-tool" }, `tool/${c.name}`),
      h("span", { class: "shape" }, c.held ? c.shape : c.error !== undefined ? `error: ${c.error}` : `→ ${c.shape}`),
      h("span", { class: "muted" }, ms(c.durationMs)),
      c.nested ? h("a", { class: "nested-link", href: `#${c.nested.run}`, onclick: (e: Event) => (e.preventDefault(), ctx.go(c.nested?.run ?? "")) }, `open nested run ${c.nested.run} (${c.nested.ok ? "answered" : "no answer"})`) : null,
    ),
    h(
      "div",
      { class: "tool-io" },
      h("div", null, h("h5", null, c.asked === undefined ? "arguments" : "arguments (edited by the host)"), block(c.args, "arguments")),
      c.asked !== undefined ? h("div", null, h("h5", null, "the program asked"), block(c.asked, "the program's arguments")) : null,
      c.result !== undefined ? h("div", null, h("h5", null, "result"), block(c.result, "result")) : null,
    ),
  );
}

function errorBox(t: TurnView): HTMLElement | null {
  const e = t.error;
  if (t.pausedAt !== undefined) return h("section", { class: "pause-box", id: "paused" }, h("h3", null, t.pausedAt.heading), t.pausedAt.excerpt ? h("pre", { class: "excerpt" }, t.pausedAt.excerpt) : null);
  if (e === undefined) return null;
  const where = e.line !== undefined ? ` at line ${e.line}, column ${e.column ?? 1}` : "";
  return h(
    "section",
    { class: "error-box", id: "error" },
    h("h3", null, `Error${where}: ${e.kind}`, h("span", { class: "muted" }, ` (${e.phase})`)),
    h("p", { class: "error-message" }, e.message),
    e.excerpt ? h("pre", { class: "excerpt" }, e.excerpt) : null,
    e.trail ? h("p", { class: "muted" }, `called through: ${e.trail.join(" ← ")}`) : null,
    e.hint ? h("p", { class: "hint" }, h("strong", null, "Hint: "), e.hint) : null,
  );
}

function turnDetail(run: RunView, t: TurnView, ctx: RunContext): HTMLElement {
  const u = t.usage;
  return h(
    "article",
    { class: `turn${t.failed ? " failed" : ""}`, id: "turn", "data-turn": t.number },
    h("h3", { class: "turn-title" }, `Turn ${t.number} of ${run.turns.length}: `, h("span", { class: `status status-${t.status}` }, STATUS[t.status]), h("span", { class: "muted" }, ` · ${fmt(u.inputTokens)} in (${fmt(u.cachedTokens)} cached) / ${fmt(u.outputTokens)} out${u.cost === undefined ? "" : ` · ${dollarsText(u.cost)}`} (${SOURCE[u.source ?? "recorded"]}) · model ${ms(u.llmMs)} · program ${ms(u.execMs)}`)),
    t.notes.length > 0 ? h("p", { class: "muted" }, `Repaired before running: ${t.notes.join("; ")}`) : null,
    errorBox(t),
    t.program !== null ? h("section", null, h("h4", null, "Program"), block(t.program, "program", (p) => highlight(p, t.error?.line))) : h("section", null, h("h4", null, "Reply (no program found)"), block(t.reply ?? "", "reply")),
    t.toolCalls.length > 0 ? h("section", null, h("h4", null, `Tool calls (${t.toolCalls.length})`), t.toolCalls.map((c, i) => toolCall(c, i, ctx))) : null,
    t.output !== "" ? h("section", null, h("h4", null, "Output"), block(t.output, "output")) : null,
    t.definitions.length > 0
      ? h(
          "section",
          null,
          h("h4", null, `Defined (${t.definitions.length})`),
          h("table", { class: "defs" }, h("tbody", null, t.definitions.map((d) => h("tr", null, h("td", null, h("code", null, d.kind === "function" ? d.signature : d.name)), h("td", null, d.kind === "function" ? "function" : d.signature), h("td", null, h("code", null, d.kind === "function" ? (d.doc ?? "") : d.sample)))))),
        )
      : null,
    t.value !== undefined ? h("section", null, h("h4", null, t.status === "failed" ? "Failed with" : t.status === "returned" ? "Returned" : "Value"), block(t.value, "value")) : null,
    t.feedback !== undefined ? h("details", { class: "feedback" }, h("summary", null, "Feedback sent back to the model"), h("pre", null, t.feedback)) : null,
    promptSection(ctx.data.texts, ctx.data.messages, t.prompt, ctx.layout, ctx.setLayout),
  );
}

/** The selected turn in detail, or a note when the run has none. */
const detail = (run: RunView, selected: number, ctx: RunContext): HTMLElement => {
  const turn = run.turns.find((t) => t.number === selected);
  return turn ? turnDetail(run, turn, ctx) : h("p", { id: "turn" }, "This run has no turns.");
};

/**
 * Shows turn `selected` in `view` (what renderRun drew for `run`): the turn's detail is built
 * again, the header, charts and strip are kept with the selection moved. Rebuilt at every step,
 * they were most of the page (a 700-turn run's 24,000 elements, ~1.4 s a key press).
 */
export function selectTurn(view: HTMLElement, run: RunView, selected: number, ctx: RunContext): void {
  for (const pill of view.querySelectorAll(".turn-strip .turn-pill.selected")) {
    pill.classList.remove("selected");
    pill.removeAttribute("aria-current");
  }
  const pill = view.querySelector(`.turn-strip .turn-pill[data-turn="${selected}"]`);
  pill?.classList.add("selected");
  pill?.setAttribute("aria-current", "true");
  selectChartTurn(view, run.chart, selected);
  view.querySelector("#turn")?.replaceWith(detail(run, selected, ctx));
}

export function renderRun(run: RunView, selected: number, ctx: RunContext): HTMLElement {
  const pick = (n: number) => ctx.go(`${run.id}/${n}`);
  return h(
    "div",
    { class: "run", "data-run": run.id },
    header(run, ctx),
    run.chart.length > 0 ? h("div", { class: "charts" }, promptChart(run.chart, pick, selected), outputChart(run.chart, pick)) : null,
    strip(run, selected, ctx),
    h("p", { class: "keys muted" }, "Keys: j / k or the left and right arrows for the next and previous turn, e for the first error, f to switch the prompt view."),
    detail(run, selected, ctx),
  );
}
