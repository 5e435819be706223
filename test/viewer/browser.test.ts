// The viewer in real headless Chromium (Debian's chromium driven by playwright-core; no
// browser download): a recorded run and a compaction report opened, turns clicked through,
// the prompt views toggled, deep links and keys followed, the charts checked for points.
// Skipped, saying why, when the browser is not installed. PTC_VIEWER_SCREENSHOTS=DIR also
// saves the screenshots docs/ shows.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runViewCommand } from "../../src/cli/view.js";
import { compareStrategies } from "../../src/harness/compare.js";
import { withFragile } from "../support/strategies.js";
import { chats, chatsJsonl, compareReportJson, emojiRewriteTraceJson, hostileTraceJson, longRunTraceJson, pausedRunJson, savedExample, wideRunJson } from "./fixtures.js";

const CHROMIUM = process.env.PTC_CHROMIUM ?? "/usr/bin/chromium";
const missing = !existsSync(CHROMIUM);
if (missing) console.warn(`viewer browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set PTC_CHROMIUM)`);
const SHOTS = process.env.PTC_VIEWER_SCREENSHOTS;

const silent = { stdin: process.stdin, stdout: { write: () => true }, stderr: { write: (s: string) => process.stderr.write(s) } };

describe.skipIf(missing)("ptc view in Chromium", () => {
  const dir = mkdtempSync(join(tmpdir(), "ptc-view-e2e-"));
  let browser: Browser;
  let url = "";
  let reportFile = "";
  let wideFile = "";
  let negativeFile = "";
  let emojiFile = "";
  let longFile = "";
  let hostileFile = "";
  let stop: () => void = () => {};
  let served: Promise<number>;
  /** Console errors and failed checks (a CSP violation is one) of every page opened. */
  const problems: string[] = [];

  let shared: Page | undefined;

  /** The one tab, loaded afresh at `base#hash` for each test. */
  async function open(hash: string, base = url): Promise<Page> {
    if (shared === undefined) {
      shared = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      shared.on("console", (m) => void (m.type() === "error" && problems.push(m.text())));
      shared.on("pageerror", (e) => void problems.push(e.message));
    }
    await shared.goto("about:blank");
    await shared.goto(`${base}#${hash}`);
    await hashIs(shared, `#${hash}`);
    return shared;
  }

  // The page renders on hashchange, after the hash has changed: wait until <main> says it
  // holds the content for the hash, so what a test reads next is the new view, not the one it
  // replaces. Predicates are functions: a string one is eval'd while polling, which the page's CSP refuses.
  interface PageGlobals {
    document: { querySelector(selector: string): { getAttribute(name: string): string | null } | null };
  }
  const hashMatches = (page: Page, re: RegExp) =>
    page.waitForFunction(
      ({ source, flags }) => new RegExp(source, flags).test((globalThis as unknown as PageGlobals).document.querySelector("main")?.getAttribute("data-hash") ?? ""),
      { source: re.source, flags: re.flags },
    );
  const hashIs = (page: Page, hash: string) => hashMatches(page, new RegExp(`^${hash.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}$`));

  const shot = async (page: Page, name: string) => {
    if (SHOTS) await page.screenshot({ path: join(SHOTS, name) });
  };

  beforeAll(async () => {
    const files: Record<string, string> = {
      "recovery.json": await savedExample("recovery"),
      "budget-alert.json": await savedExample("budget-alert"),
      "exploration.json": await savedExample("exploration", { compressHistory: true }),
      "report.json": await compareReportJson(),
      "chats.jsonl": chatsJsonl(),
      "paused.json": await pausedRunJson(),
      "wide.json": await wideRunJson(),
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const paths = Object.keys(files).map((n) => join(dir, n));
    reportFile = join(dir, "report.html");
    expect(await runViewCommand([paths[3], paths[4], "--out", reportFile], silent)).toBe(0);
    wideFile = join(dir, "wide.html");
    expect(await runViewCommand([paths[6], "--out", wideFile], silent)).toBe(0);
    // A provider (or a host's Llm) may report any number: the agent records what it was told.
    const negative = JSON.parse(files["recovery.json"]) as { trace: { turns: Array<{ usage: Record<string, number> }> } };
    negative.trace.turns[1].usage.outputTokens = -50;
    negative.trace.turns[2].usage.cachedTokens = -100;
    writeFileSync(join(dir, "negative.json"), JSON.stringify(negative));
    negativeFile = join(dir, "negative.html");
    expect(await runViewCommand([join(dir, "negative.json"), "--out", negativeFile], silent)).toBe(0);
    writeFileSync(join(dir, "emoji.json"), emojiRewriteTraceJson());
    emojiFile = join(dir, "emoji.html");
    expect(await runViewCommand([join(dir, "emoji.json"), "--out", emojiFile], silent)).toBe(0);
    writeFileSync(join(dir, "long.json"), longRunTraceJson(300));
    longFile = join(dir, "long.html");
    expect(await runViewCommand([join(dir, "long.json"), "--out", longFile], silent)).toBe(0);
    writeFileSync(join(dir, "hostile.json"), hostileTraceJson());
    hostileFile = join(dir, "hostile.html");
    expect(await runViewCommand([join(dir, "hostile.json"), "--out", hostileFile], silent)).toBe(0);
    let out = "";
    const io = { ...silent, stdout: { write: (s: string) => (out += s) } };
    served = runViewCommand([...paths.slice(0, 3), paths[5], "--port", "0"], io, () => new Promise<void>((resolve) => (stop = resolve)));
    while (!out.includes("http://")) await new Promise((r) => setTimeout(r, 10));
    url = /(http:\/\/\S+\/)/.exec(out)?.[1] ?? "";
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync"] });
    // Runs, a report and a browser start: more than the default hook time on a busy two-core machine.
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    stop();
    await served;
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows a run: outcome, turns with the error turn marked, and charts with a point per turn", async () => {
    const page = await open("r1");
    expect(await page.locator(".outcome").getAttribute("data-outcome")).toBe("ok");
    expect(await page.locator(".outcome").textContent()).toMatch(/^returned \{/);
    expect(await page.locator(".turn-pill").count()).toBe(4);
    expect(await page.locator(".turn-pill.failed").getAttribute("data-turn")).toBe("2");
    for (const series of ["fullTokens", "sentTokens"]) {
      const points = await page.locator(`[data-chart=prompt] polyline[data-series=${series}]`).getAttribute("points");
      expect(points?.trim().split(/\s+/)).toHaveLength(4);
    }
    expect(await page.locator("[data-chart=prompt] rect.bar-cached").count()).toBe(4);
    const heights = await page.locator("[data-chart=output] rect.bar-output").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))));
    expect(heights).toHaveLength(4);
    expect(heights.every((h) => h > 0)).toBe(true);
    expect(await page.locator("[data-chart=prompt] .fail-dot").count()).toBe(1);
    await shot(page, "viewer-run.png");
    if (SHOTS) {
      await page.emulateMedia({ colorScheme: "dark" });
      await page.locator(".turn-pill[data-turn='2']").click();
      await shot(page, "viewer-run-dark.png");
      await page.emulateMedia({ colorScheme: "light" });
    }
  });

  it("clicks through turns and follows the keys: j, k, and e to the first error", async () => {
    const page = await open("r1");
    await page.locator(".turn-pill[data-turn='2']").click();
    await hashIs(page, "#r1/2");
    expect(await page.locator(".error-box h3").textContent()).toContain("type_error");
    expect(await page.locator(".error-box .excerpt").textContent()).toMatch(/\^/);
    expect(await page.locator(".error-box .hint").textContent()).toContain("Hint:");
    expect(await page.locator(".code .error-line").textContent()).toContain("reduce +");
    await page.keyboard.press("j");
    await hashIs(page, "#r1/3");
    expect(await page.locator(".turn-pill[aria-current=true]").getAttribute("data-turn")).toBe("3");
    await page.keyboard.press("k");
    await page.keyboard.press("k");
    await hashIs(page, "#r1/1");
    await page.keyboard.press("e");
    await hashIs(page, "#r1/2");
    expect(await page.locator("article.turn").getAttribute("data-turn")).toBe("2");
  });

  it("toggles the prompt between as sent, full history and side by side, with the cache break marked", async () => {
    const page = await open("r3/4");
    const sent = page.locator("[data-view=sent]");
    const full = page.locator("[data-view=full]");
    expect(await sent.count()).toBe(1);
    expect(await full.count()).toBe(1);
    // A compressed prompt: fewer tokens sent than the full history holds, and a rewritten prefix.
    const tokens = async (col: typeof sent) => Number(((await col.locator("h4").textContent()) ?? "").replace(/,/g, "").match(/(\d+) tokens/)?.[1]);
    expect(await tokens(sent)).toBeLessThan(await tokens(full));
    expect(await sent.locator(".cache-break").textContent()).toMatch(/prefix cache breaks here: [\d,]+ tokens/);
    expect(await sent.locator(".msg.new").count()).toBeGreaterThan(0);
    expect(await page.locator("[data-chart=prompt] line.compaction").count()).toBeGreaterThan(0);
    await page.evaluate('document.getElementById("prompt").scrollIntoView()');
    await shot(page, "viewer-prompt.png");
    await page.locator("button[data-layout=full]").click();
    expect(await page.locator("[data-view=sent]").count()).toBe(0);
    expect(await full.locator(".msg").count()).toBe(8);
    await page.locator("button[data-layout=sent]").click();
    expect(await page.locator("[data-view=full]").count()).toBe(0);
    expect(await page.locator("[data-view=sent]").count()).toBe(1);
    await page.keyboard.press("f");
    expect(await page.locator("[data-view=full]").count()).toBe(1);
    expect(await page.locator("[data-view=sent]").count()).toBe(0);
  });

  it("opens a deep link to a turn, and a nested agent's run from its tool call and back", async () => {
    const page = await open("r1/3");
    expect(await page.locator("article.turn").getAttribute("data-turn")).toBe("3");
    expect(await page.locator(".turn-pill[aria-current=true]").getAttribute("data-turn")).toBe("3");
    await page.goto(`${url}#r2`);
    await page.reload();
    await hashIs(page, "#r2");
    const link = page.locator(".nested-link").first();
    const turns = await page.locator(".turn-pill").count();
    // From #r2 (turn 1 shown), j moves to turn 2, 3, ...: each move waits for its turn's page.
    for (let n = 2; n <= turns && (await link.count()) === 0; n++) {
      await page.keyboard.press("j");
      await hashIs(page, `#r2/${n}`);
    }
    await link.click();
    await hashMatches(page, /^#r2\.t\d+\.n1$/);
    expect(await page.locator(".run-head h2").textContent()).toMatch(/^Nested run r2\.t\d+\.n1/);
    await page.locator(".parent a").click();
    await hashMatches(page, /^#r2\/\d+$/);
    expect(await page.locator(".nested-link").count()).toBeGreaterThan(0);
  });

  it("says a deep link's turn or run is not on the page, and titles the page by what it shows instead", async () => {
    const page = await open("r1/999");
    expect(await page.locator("article.turn").getAttribute("data-turn")).toBe("1");
    expect(await page.locator("main .missing").textContent()).toMatch(/^There is no turn 999 in r1 \(turns 1 to \d+\): showing turn 1\.$/);
    expect(await page.title()).toMatch(/^r1 turn 1 · /);
    // Stepping on from there shows the turn stepped to, without the note.
    await page.keyboard.press("j");
    await hashIs(page, "#r1/2");
    expect(await page.locator("main .missing").count()).toBe(0);
    expect(await page.title()).toMatch(/^r1 turn 2 · /);
    const gone = await open("r9/3");
    expect(await gone.locator("main .missing").textContent()).toBe("There is nothing called r9 on this page: showing r1.");
    expect(await gone.title()).toMatch(/^r1 · /);
  });

  it("names the status of a run's paused turn (waiting for a tool call's approval)", async () => {
    const page = await open("r4/2");
    expect(await page.locator(".turn-pill[data-turn='2'] small").textContent()).toBe("paused");
    expect(await page.locator("article.turn .status").textContent()).toBe("paused");
    // Its held call did not run: not styled or counted as one that failed.
    expect(await page.locator(".tool-call").getAttribute("class")).toBe("tool-call held");
    expect(await page.locator(".tool-call .shape").textContent()).toBe("held for the host's approval: it did not run");
    expect(await page.locator(".stat", { hasText: "tool calls" }).locator(".stat-value").textContent()).toBe("0 (1 held)");
    expect(await page.locator(".pause-box h3").textContent()).toBe("Paused at line 1, column 9, waiting for the host's approval");
    expect(await page.locator(".error-box").count()).toBe(0);
    expect(await page.locator(".outcome").getAttribute("data-outcome")).toBe("paused");
  });

  it("shows the first file for a link whose hash is no valid percent-encoding (a cut or mistyped link)", async () => {
    for (const hash of ["%", "r1%E0"]) {
      const page = await open(hash);
      expect(await page.locator(".run-head h2").textContent()).toMatch(/recovery\.json/);
    }
  });

  it("opens a compaction report as a self-contained file: the table and its charts", async () => {
    const page = await open("c1", pathToFileURL(reportFile).href);
    // full, the two strategies, and the two baselines.
    expect(await page.locator("table.strategies tbody tr").count()).toBe(5);
    expect(await page.locator("table.strategies tbody tr td:first-child").allTextContents()).toEqual(["full", "sliding-window:turns=2", "rolling-summary", "baseline:system+last", "baseline:system+task+last"]);
    // Never rounded onto parity: a 0.9995 ratio is a saving.
    expect(await page.locator("table.strategies tbody tr:nth-child(3) td:nth-child(5)").textContent()).toBe("0.9995x");
    // Never rounded onto zero: $0.00004 is a cost.
    expect(await page.locator("table.strategies tbody tr:nth-child(4) td:nth-child(6)").textContent()).toBe("$0.00004");
    expect(await page.locator("[data-chart=strategy-bars] rect.bar").count()).toBe(5);
    expect(await page.locator("[data-chart=cost-retention] circle.point").count()).toBe(5);
    const lines = await page.locator("[data-chart=requests] polyline.series").evaluateAll((ps) => ps.map((p) => (p.getAttribute("points") ?? "").trim().split(/\s+/).length));
    expect(lines).toEqual([14, 14, 14, 14, 14]);
    // The transcripts no API would have taken, and the cost under each cache model (--caches).
    expect(await page.locator(".data-problems").textContent()).toMatch(/^data problems in 1 of 3 transcripts \(compared as recorded\):.*chats\.jsonl:2: message 3: a tool result without its call/);
    expect(await page.locator("table.caches thead th").allTextContents()).toEqual(["strategy", "input tokens", "reduction", "cost token-prefix", "cost breakpoint", "cost none", "retention", "far facts", "fired"]);
    expect(await page.locator("table.caches tbody tr td:first-child").allTextContents()).toEqual(["full", "sliding-window:turns=2", "rolling-summary"]);
    expect(await page.locator("table.caches tbody tr:first-child td:nth-child(4)").textContent()).toBe("1.000x");
    await shot(page, "viewer-report.png");
  });

  it("says never triggered in the retention column of a strategy that never compacted, as the text and HTML reports do, not 100.0%", async () => {
    writeFileSync(join(dir, "idle.json"), JSON.stringify(await compareStrategies(chats(), ["recap"], { models: ["gpt-4o"] })));
    const idleFile = join(dir, "idle.html");
    expect(await runViewCommand([join(dir, "idle.json"), "--out", idleFile], silent)).toBe(0);
    const page = await open("c1", pathToFileURL(idleFile).href);
    const recap = page.locator("table.strategies tbody tr:nth-child(2) td");
    expect(await recap.first().textContent()).toBe("recap");
    expect(await recap.nth(7).textContent()).toBe("never triggered");
    // Nor is it plotted at 100% retention.
    const points = await page.locator("[data-chart=cost-retention] circle.point title").allTextContents();
    expect(points.some((p) => p.startsWith("full: "))).toBe(true);
    expect(points.filter((p) => p.startsWith("recap: "))).toEqual([]);
  });

  it("says under the table which strategies sent prompts past the model's context window, as the text report does", async () => {
    // One conversation of 12 long turns: full history passes a 128,000-token window at its last 4 requests.
    const words = (i: number): string => Array.from({ length: 5_000 }, (_, k) => `w${(k * 7919 + i) % 10_007}`).join(" ");
    const long = { id: "long", messages: [{ role: "system" as const, content: "You read logs." }, ...Array.from({ length: 12 }, (_, i) => [{ role: "user" as const, content: words(i) }, { role: "assistant" as const, content: `Part ${i} read.` }]).flat()] };
    writeFileSync(join(dir, "window.json"), JSON.stringify(await compareStrategies([long], [{ name: "sliding-window", options: { turns: 2 } }], { models: ["gpt-4o"] })));
    const windowFile = join(dir, "window.html");
    expect(await runViewCommand([join(dir, "window.json"), "--out", windowFile], silent)).toBe(0);
    const page = await open("long", pathToFileURL(windowFile).href);
    const notes = await page.locator(".report-notes p").allTextContents();
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/^full: \d+ of 12 requests have a prompt larger than gpt-4o's context window \(128,000 tokens\)/);
  });

  it("shows a strategy that failed on every transcript as n/a, not 0.0% saved at 1.000x, and draws it nowhere", async () => {
    const registry = withFragile((stored) => {
      if (stored.length > 1) throw new TypeError("boom");
      return null;
    });
    writeFileSync(join(dir, "failed.json"), JSON.stringify(await compareStrategies(chats(), ["fragile"], { models: ["gpt-4o"], registry })));
    const failedFile = join(dir, "failed.html");
    expect(await runViewCommand([join(dir, "failed.json"), "--out", failedFile], silent)).toBe(0);
    const page = await open("c1", pathToFileURL(failedFile).href);
    const cells = await page.locator("table.strategies tbody tr:nth-child(2) td").allTextContents();
    expect(cells).toEqual(["fragile", ...Array<string>(9).fill("n/a")]);
    expect(await page.locator(".strategy-failures").textContent()).toMatch(/^fragile failed on 3 of 3 transcripts/);
    const bars = await page.locator("[data-chart=strategy-bars] rect.bar title").allTextContents();
    expect(bars.filter((b) => b.startsWith("fragile: "))).toEqual(["fragile: failed on every transcript, nothing measured"]);
    const points = await page.locator("[data-chart=cost-retention] circle.point title").allTextContents();
    expect(points.filter((p) => p.startsWith("fragile: "))).toEqual([]);
  });

  it("shows one transcript under two strategies side by side, request by request", async () => {
    const page = await open("c1/14", pathToFileURL(reportFile).href);
    const box = page.locator("#side-by-side");
    expect(await box.getAttribute("data-request")).toBe("14");
    expect(await box.locator("h4 code").allTextContents()).toEqual(["full", "sliding-window:turns=2"]);
    const counts = async () => [await box.locator("[data-strategy='0'] .msg").count(), await box.locator("[data-strategy='1'] .msg").count()];
    const [full, window] = await counts();
    expect(full).toBe(28);
    expect(window).toBeLessThan(full);
    // Messages only one prompt has are marked: the rest are shared, so the marks differ by the length difference.
    const only = [await box.locator("[data-strategy='0'] .msg.new").count(), await box.locator("[data-strategy='1'] .msg.new").count()];
    expect(only[0]).toBeGreaterThan(0);
    expect(only[0] - only[1]).toBe(full - window);
    // A step redraws the two prompts only: the tables and charts above stay (a large corpus's per-transcript table is thousands of cells).
    await page.evaluate('document.querySelector("table.per-transcript").__kept = true');
    await page.keyboard.press("k");
    await hashIs(page, "#c1/13");
    expect((await counts())[0]).toBe(26);
    expect(await page.evaluate('document.querySelector("table.per-transcript").__kept === true')).toBe(true);
    expect(await page.locator("#side-by-side").getAttribute("data-request")).toBe("13");
    await page.locator("button[data-step=next]").click();
    await hashIs(page, "#c1/14");
    await page.evaluate('document.getElementById("side-by-side").scrollIntoView()');
    await shot(page, "viewer-side-by-side.png");
  });

  it("wraps a line 1,500 characters wide with no space in it (an error naming a long URL, a docstring) inside the page", async () => {
    for (const turn of [1, 2, 3]) {
      const page = await open(`r1/${turn}`, pathToFileURL(wideFile).href);
      expect(await page.locator("article.turn").getAttribute("data-turn")).toBe(String(turn));
      const [scrolled, shown] = (await page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")) as number[];
      expect(scrolled, `turn ${turn}`).toBe(shown);
    }
  });

  it("keeps a report's tables inside the page in a narrow window, the per-transcript table opened too", async () => {
    const page = await open("c1", pathToFileURL(reportFile).href);
    try {
      await page.locator(".per-transcript-box summary").click();
      expect(await page.locator("table.per-transcript").isVisible()).toBe(true);
      // Beside the navigation, and below it (under 900 pixels).
      for (const width of [950, 800]) {
        await page.setViewportSize({ width, height: 1000 });
        const [scrolled, shown] = (await page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")) as number[];
        expect(scrolled, `${width} pixels`).toBe(shown);
      }
    } finally {
      await page.setViewportSize({ width: 1400, height: 1000 });
    }
  });

  it("marks a cache break inside a message without splitting a character written as two UTF-16 units (an emoji)", async () => {
    const page = await open("r1/2", pathToFileURL(emojiFile).href);
    const changed = page.locator(".msg.changed pre");
    expect(await changed.locator("mark.break-mark").count()).toBe(1);
    expect(await changed.textContent()).toBe("Mood: ▼🙂 today");
  });

  it("leaves a long run's turn readable below the strip of turns, with the selected turn's pill in view", async () => {
    const page = await open("r1/250", pathToFileURL(longFile).href);
    expect(await page.locator(".turn-pill").count()).toBe(300);
    await page.evaluate('document.getElementById("prompt").scrollIntoView()');
    // What the middle of the window shows once the turn's prompt is scrolled to: the turn, not the strip stuck over it.
    const middle = await page.evaluate('document.elementFromPoint(800, 600)?.closest("#turn, .turn-strip")?.className ?? null');
    expect(middle).toBe("turn");
    const inView = await page.evaluate(`(() => {
      const strip = document.querySelector(".turn-strip").getBoundingClientRect();
      const pill = document.querySelector(".turn-pill.selected").getBoundingClientRect();
      return pill.top >= strip.top && pill.bottom <= strip.bottom;
    })()`);
    expect(inView).toBe(true);
    // A key moves to the next turn and brings it into view: its heading below the strip, not under it.
    await page.keyboard.press("j");
    await hashIs(page, "#r1/251");
    const [title, stripBottom] = (await page.evaluate('[document.querySelector(".turn-title").getBoundingClientRect().top, document.querySelector(".turn-strip").getBoundingClientRect().bottom]')) as number[];
    expect(title).toBeGreaterThanOrEqual(stripBottom);
  });

  it("steps through a long run's turns building the turn, not the whole page: the elements a key press creates do not grow with the run", async () => {
    // A 700-turn run took ~1.4 s a key press: each one rebuilt the charts, the strip of turns
    // and every message of the turn's prompt (24,000 elements at turn 690). Counted, not timed.
    const page = await open("r1/250", pathToFileURL(longFile).href);
    const created = async (key: string, hash: string): Promise<number> => {
      await page.evaluate(`(() => {
        const count = (n) => (n.nodeType === 1 ? 1 + n.getElementsByTagName("*").length : 0);
        window.__created = 0;
        window.__observer = new MutationObserver((records) => { for (const r of records) for (const n of r.addedNodes) window.__created += count(n); });
        window.__observer.observe(document.getElementById("app"), { childList: true, subtree: true });
        document.querySelector(".turn-strip").__kept = true;
      })()`);
      await page.keyboard.press(key);
      await hashIs(page, hash);
      return (await page.evaluate(`(() => {
        for (const r of window.__observer.takeRecords()) for (const n of r.addedNodes) window.__created += n.nodeType === 1 ? 1 + n.getElementsByTagName("*").length : 0;
        window.__observer.disconnect();
        return document.querySelector(".turn-strip").__kept === true ? window.__created : -1;
      })()`)) as number;
    };
    const all = Number(await page.evaluate("document.getElementsByTagName('*').length"));
    const forward = await created("j", "#r1/251");
    const back = await created("k", "#r1/250");
    // The strip of turns is kept (not -1), and a step builds a small part of what the page holds.
    for (const n of [forward, back]) {
      expect(n).toBeGreaterThan(0);
      expect(n).toBeLessThan(1000);
    }
    expect(all).toBeGreaterThan(3000);
    // The selection moved with the step: the pill, the chart's band and the turn shown.
    expect(await page.locator(".turn-pill[aria-current=true]").getAttribute("data-turn")).toBe("250");
    expect(await page.locator(".turn-pill.selected").count()).toBe(1);
    const band = Number(await page.locator("[data-chart=prompt] .selected-band").getAttribute("x"));
    expect(band).toBeCloseTo(Number(await page.locator("[data-chart=prompt] rect.hit[data-turn='250']").getAttribute("x")), 6);
    expect(await page.locator("article.turn").getAttribute("data-turn")).toBe("250");
    // The prompt's long history shows its first and latest messages; the rest opens on demand, all of it.
    const full = page.locator("[data-view=full]");
    const shown = await full.locator(".msg").count();
    expect(shown).toBeLessThan(100);
    expect(await full.locator(".msg").first().getAttribute("data-index")).toBe("0");
    expect(await full.locator(".msg").last().getAttribute("data-index")).toBe(String(2 * 249 + 1));
    // Find in page sees the messages not opened yet (the browser opens a closed details where it finds a match).
    expect(await page.evaluate(`window.find('(println "step 17")')`)).toBe(true);
    expect(await page.evaluate(`window.find('step 30"')`)).toBe(true);
    expect(shown).toBe(await full.locator(".msg").count());
    await full.locator("details.earlier > summary").click();
    await expect.poll(() => full.locator(".msg").count()).toBe(2 + 2 * 249);
    // Once built, the messages stand in for the plain text that was there for find: once each.
    expect((await full.locator("details.earlier").textContent())?.split('(println "step 17")').length).toBe(2);
    const order = await full.locator(".msg").evaluateAll((ms) => ms.map((m) => Number(m.getAttribute("data-index"))));
    expect(order).toEqual(Array.from({ length: 2 + 2 * 249 }, (_, i) => i));
  });

  it("shows a trace's markup as text, and its invisible characters (a bidi override, zero-width ones, an escape) as marked codes, not acted on", async () => {
    const before = problems.length;
    const page = await open("r1/1", pathToFileURL(hostileFile).href);
    await page.locator("details.task > summary").click();
    // Markup is text: no element made from it, no script run (a console error or dialog would show).
    expect(await page.locator("#app img, #app script").count()).toBe(0);
    expect(await page.locator("article.turn").textContent()).toContain('<img src=x onerror="alert(1)"><script>alert(2)</script>');
    // The override would show "exif.exe" as "exe.fixe" and spill over what follows on its line: shown as a code instead, in every place.
    const text = (await page.locator("#app").textContent()) ?? "";
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u202A-\u202E\u2066-\u2069\u200B\u001B]/);
    const codes = await page.locator("#app .ctl").allTextContents();
    for (const code of ["U+202E", "U+202C", "U+2066", "U+2069", "U+200B", "U+001B"]) expect(codes, code).toContain(code);
    // Program, output, task and the prompt's messages each show them.
    for (const where of [".code.lisp", "[data-view=sent] .msg", "details.task pre"]) expect(await page.locator(`${where} .ctl`).count(), where).toBeGreaterThan(0);
    // 100,000 of them in one text: the first are marked, the rest written as codes in the text, not one element each.
    expect(await page.locator("#app .ctl").count()).toBeLessThan(2000);
    expect(text).toContain("[U+200B][U+200B]");
    expect(problems.slice(before)).toEqual([]);
  });

  it("draws a run whose trace records negative token counts with no negative bar", async () => {
    const before = problems.length;
    const page = await open("r1", pathToFileURL(negativeFile).href);
    const heights = await page.locator("[data-chart] rect").evaluateAll((rs) => rs.map((r) => Number(r.getAttribute("height"))));
    expect(heights.length).toBeGreaterThan(0);
    expect(heights.filter((h) => !(h >= 0))).toEqual([]);
    // The recorded figures stay readable in the bars' titles.
    expect(await page.locator("[data-chart=output] rect.bar-output[data-turn='2'] title").textContent()).toBe("turn 2: -50 output tokens");
    expect(problems.slice(before)).toEqual([]);
  });

  it("ran with no console error or policy violation", () => {
    expect(problems).toEqual([]);
  });
});
