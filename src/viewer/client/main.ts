// The viewer's client: reads the page's embedded data, routes on the location hash
// (`#run`, `#run/turn`, `#report`), draws the navigation and the selected view, and handles
// the keys (j/k and left/right arrows between turns, e to the first error, f for the prompt view).
import { PAGE_DATA_VERSION, type PageData, type ReportView, type RunView } from "../model.js";
import { baseName, h } from "./dom.js";
import type { PromptLayout } from "./prompt.js";
import { renderReport, selectRequest } from "./report.js";
import { renderRun, selectTurn, type RunContext } from "./run.js";

const LAYOUTS: PromptLayout[] = ["split", "sent", "full"];

function readData(): PageData | string {
  const el = document.getElementById("ptc-data");
  if (el === null) return "the page holds no data";
  try {
    const data = JSON.parse(el.textContent ?? "") as PageData;
    return data.version === PAGE_DATA_VERSION ? data : `this page's data is version ${String(data.version)}; the viewer reads version ${PAGE_DATA_VERSION}`;
  } catch (e) {
    return `the page's data cannot be read (${(e as Error).message})`;
  }
}

interface Route {
  id: string;
  turn?: number;
}

/** The hash percent-decoded, or as it is when it holds a malformed escape (a cut or mistyped link: `#%`), which then names nothing. */
function decodeHash(hash: string): string {
  try {
    return decodeURIComponent(hash);
  } catch {
    return hash;
  }
}

function parseHash(hash: string): Route | null {
  const m = /^#?([A-Za-z0-9.]+)(?:\/(\d+))?$/.exec(decodeHash(hash));
  if (m === null) return null;
  return m[2] === undefined ? { id: m[1] } : { id: m[1], turn: Number(m[2]) };
}

function start(): void {
  const app = document.getElementById("app") as HTMLElement;
  const read = readData();
  if (typeof read === "string") {
    app.replaceChildren(h("p", { class: "notice" }, `Cannot show this page: ${read}.`));
    return;
  }
  // Narrowed once here: render, a hoisted function declaration, would not see the narrowing.
  const data: PageData = read;
  let layout: PromptLayout = "split";
  const runs = new Map(data.runs.map((r) => [r.id, r]));
  const reports = new Map(data.reports.map((r) => [r.id, r]));

  // Set by keyboard moves: the next render brings the turn into view.
  let scrollToTurn = false;
  const go = (hash: string, scroll = false) => {
    scrollToTurn = scroll;
    if (location.hash === `#${hash}`) render();
    else location.hash = hash;
  };

  const current = (): Route => {
    const r = parseHash(location.hash);
    if (r !== null && (runs.has(r.id) || reports.has(r.id))) return r;
    return { id: data.files[0]?.id ?? "" };
  };

  const nav = (active: string): HTMLElement => {
    const runItem = (run: RunView, depth: number): HTMLElement[] => {
      const children = data.runs.filter((r) => r.parent?.run === run.id);
      const failed = run.turns.some((t) => t.failed);
      return [
        h("li", { class: `depth-${Math.min(depth, 3)}` }, h("a", { href: `#${run.id}`, class: run.id === active ? "active" : undefined }, depth > 0 ? `↳ ${run.parent?.tool} (${run.id})` : baseName(run.file), failed ? h("span", { class: "dot-failed", title: "has failed turns" }, " ●") : null)),
        ...children.flatMap((c) => runItem(c, depth + 1)),
      ];
    };
    return h(
      "nav",
      { class: "files", "aria-label": "files" },
      h("h1", null, data.title),
      h(
        "ul",
        null,
        data.files.flatMap((f) => {
          if (f.kind === "report") return [h("li", null, h("a", { href: `#${f.id}`, class: f.id === active ? "active" : undefined }, `${baseName(f.name)} (report)`))];
          const run = runs.get(f.id);
          return run ? runItem(run, 0) : [];
        }),
      ),
    );
  };

  // The run or report on the page: another turn of it (a step, a layout switch) replaces the
  // turn only, another request of a report its side-by-side prompts.
  let shown: { of: RunView | ReportView; view: HTMLElement } | undefined;

  function render(): void {
    const route = current();
    const run = runs.get(route.id);
    const report = reports.get(route.id);
    const scrollY = window.scrollY;
    // The turn or request on show when the link names one (a missing one is replaced by the first).
    let shownTurn = route.turn;
    let missing: string | undefined;
    if (run !== undefined) {
      const turn = route.turn !== undefined && run.turns.some((t) => t.number === route.turn) ? route.turn : (run.turns[0]?.number ?? 0);
      if (route.turn !== undefined && turn !== route.turn) {
        shownTurn = run.turns.length === 0 ? undefined : turn;
        const turns = run.turns.length === 0 ? "it has no turns" : `turns ${run.turns[0].number} to ${run.turns[run.turns.length - 1].number}`;
        missing = `There is no turn ${route.turn} in ${run.id} (${turns})${shownTurn === undefined ? "" : `: showing turn ${shownTurn}`}.`;
      }
      const ctx: RunContext = {
        data,
        layout,
        setLayout: (l) => {
          layout = l;
          render();
        },
        go,
      };
      if (shown?.of === run) selectTurn(shown.view, run, turn, ctx);
      else {
        shown = { of: run, view: renderRun(run, turn, ctx) };
        show(route.id, shown.view);
      }
    } else if (report !== undefined) {
      const requests = report.sideBySide?.requests.length;
      if (route.turn !== undefined && requests !== undefined && (route.turn < 1 || route.turn > requests)) {
        shownTurn = Math.min(Math.max(1, route.turn), requests);
        missing = `There is no request ${route.turn} in ${report.id} (requests 1 to ${requests}): showing request ${shownTurn}.`;
      }
      if (shown?.of === report) selectRequest(shown.view, report, data.texts, route.turn ?? 1, go);
      else {
        shown = { of: report, view: renderReport(report, data.texts, route.turn ?? 1, go) };
        show(route.id, shown.view);
      }
    } else {
      shown = undefined;
      show(route.id, h("p", null, "No files to show."));
    }
    const main = document.getElementById("main");
    // A link to what the page does not hold (an old or mistyped turn or run) says so above what it shows instead.
    const asked = parseHash(location.hash);
    if (missing === undefined && asked !== null && asked.id !== route.id) missing = `There is nothing called ${asked.id} on this page${route.id === "" ? "" : `: showing ${route.id}`}.`;
    main?.querySelector(":scope > .missing")?.remove();
    if (missing !== undefined) main?.prepend(h("p", { class: "notice missing" }, missing));
    // data-hash says which location the content is for (tests wait on it after a hash change).
    main?.setAttribute("data-hash", location.hash);
    // The strip of turns stays above the turn, a quarter of the window at most (a long run's
    // would cover it whole), and scrolls on its own: bring the selected turn's pill into it.
    const strip = app.querySelector<HTMLElement>(".turn-strip");
    const pill = strip?.querySelector<HTMLElement>(".turn-pill.selected");
    if (strip && pill) strip.scrollTop = pill.offsetTop - (strip.clientHeight - pill.offsetHeight) / 2;
    const turn = document.getElementById("turn");
    if (scrollToTurn && turn) {
      // Below the strip, which stays over the top of the window.
      turn.style.scrollMarginTop = `${strip?.offsetHeight ?? 0}px`;
      turn.scrollIntoView();
    }
    else window.scrollTo(0, scrollY);
    scrollToTurn = false;
    document.title = `${route.id}${shownTurn ? ` turn ${shownTurn}` : ""} · ${data.title}`;
  }

  /** Draws the page: the navigation with `id` active, and `view`. */
  function show(id: string, view: HTMLElement): void {
    app.replaceChildren(h("div", { class: "layout" }, nav(id), h("main", { id: "main" }, view)));
  }

  const step = (delta: number) => {
    const route = current();
    const sbs = reports.get(route.id)?.sideBySide;
    if (sbs) {
      const at = Math.min(sbs.requests.length, Math.max(1, (route.turn ?? 1) + delta));
      go(`${route.id}/${at}`);
      return;
    }
    const run = runs.get(route.id);
    if (!run || run.turns.length === 0) return;
    const i = Math.max(0, run.turns.findIndex((t) => t.number === (route.turn ?? run.turns[0].number)));
    const next = run.turns[Math.min(run.turns.length - 1, Math.max(0, i + delta))];
    go(`${run.id}/${next.number}`, true);
  };

  document.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const target = e.target as HTMLElement | null;
    if (target && /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName)) return;
    const route = current();
    const run = runs.get(route.id);
    if (e.key === "j" || e.key === "ArrowRight") step(1);
    else if (e.key === "k" || e.key === "ArrowLeft") step(-1);
    else if (e.key === "e" && run) {
      const first = run.turns.find((t) => t.failed);
      if (first) go(`${run.id}/${first.number}`, true);
    } else if (e.key === "f" && run) {
      layout = LAYOUTS[(LAYOUTS.indexOf(layout) + 1) % LAYOUTS.length];
      render();
    } else return;
    e.preventDefault();
  });
  window.addEventListener("hashchange", render);
  render();
}

start();
