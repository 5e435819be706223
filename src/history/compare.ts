// The full and the compressed prompt of one turn side by side, for `ptc trace show
// FILE --compressed`: turn by turn (the compressed view shows consecutive summaries in one
// message), identical parts once, then the per-prompt compression figures of the whole run.
import type { TextMessage as ChatMessage } from "../llm/types.js";
import type { RunTrace } from "../trace/trace.js";
import { compressedView } from "./compressed.js";
import { fullView } from "./full.js";
import { compressionReport, type RunSettings } from "./stats.js";
import { lookupPrice } from "../compaction/prices.js";
import { countTokens, messageTokens, promptTokens, TOKENS_PER_MESSAGE } from "../compaction/tokens.js";
import { resolveViewOptions, type View, type ViewOptions } from "./view.js";

export interface CompareOptions {
  /** The turn whose prompt is shown (1-based); default: the prompt after the last turn. */
  turn?: number;
  /** Total width of the side-by-side layout. */
  width?: number;
  /** Lines shown of a message both views share (the system prompt, the task); default 6. */
  sharedLines?: number;
  /** Every line of every message, long ones wrapped rather than cut (`ptc trace show --full`); sharedLines is then ignored. */
  full?: boolean;
  /**
   * How a terminal will be shown the prompts' text (control characters written out as `\x1B`):
   * applied before the layout, which measures what is shown. Default: as it is.
   */
  show?: (text: string) => string;
}

const DEFAULT_WIDTH = 160;
const GUTTER = " | ";

/**
 * Renders the prompt a turn was (or would be) sent under both views, side by side, and
 * the compression figures of every prompt of the run. For `ptc trace show --compressed`.
 * `run` is the turn budget or the run settings (default: the trace's settings); `options`
 * the view options of the compressed side (default: the trace's; compression is forced on).
 */
export function renderComparison(trace: Pick<RunTrace, "system" | "task" | "turns" | "settings">, run?: number | RunSettings, options?: ViewOptions, compare: CompareOptions = {}): string {
  const view = resolveViewOptions(options ?? trace.settings?.view, { compressHistory: true });
  const base: RunSettings = trace.settings ?? { maxTurns: Math.max(1, trace.turns.length) };
  const settings: RunSettings = run === undefined ? base : typeof run === "number" ? { ...base, maxTurns: run } : run;
  const upto = compare.turn === undefined ? trace.turns.length : Math.max(0, Math.min(trace.turns.length, compare.turn - 1));
  const input = { ...settings, system: trace.system, task: trace.task, turns: trace.turns.slice(0, upto) };
  const full = fullView(input, view).messages;
  const built = compressedView(input, view);
  const width = Math.max(40, compare.width ?? DEFAULT_WIDTH);
  const col = Math.floor((width - GUTTER.length) / 2);
  const out: string[] = [];
  const ft = promptTokens(full);
  const ct = promptTokens(built.messages);
  out.push(`Prompt for turn ${upto + 1}: full ${ft} tokens, compressed ${ct} tokens (${percent(ft, ct)} fewer)`);
  const kept = new Map(built.stats.turnsFull.map((f) => [f.turn, f.reason]));
  for (const row of rows(full, built)) {
    out.push("");
    const { a, b, turn } = row;
    out.push(rule(`${row.role}${turn === undefined ? "" : ` (turn ${turn})`}${turn !== undefined && row.role === "assistant" && kept.has(turn) ? ` kept full: ${kept.get(turn)}` : ""}`, a, b, width));
    const show = compare.show ?? ((text: string) => text);
    if (a.content === b.content) {
      const lines = show(a.content).split("\n");
      const shown = turn === undefined && !compare.full ? (compare.sharedLines ?? 6) : lines.length;
      for (const line of lines.slice(0, shown)) out.push(...(compare.full ? wrap(line, width) : [clip(line, width)]));
      if (lines.length > shown) out.push(`... (${lines.length - shown} more lines, same in both views)`);
      continue;
    }
    // The system prompts differ only in each view's part on earlier turns: shown alone.
    const d = turn === undefined && !compare.full ? differingLines(show(a.content), show(b.content)) : { head: 0, tail: 0, a: show(a.content), b: show(b.content) };
    if (d.head > 0) out.push(`... (${d.head} lines, same in both views)`);
    const left = wrap(d.a, col);
    const right = b.content === "" ? ["(turn line left out between summaries)"] : wrap(d.b, col);
    for (let k = 0; k < Math.max(left.length, right.length); k++) out.push(pad(left[k] ?? "", col) + GUTTER + (right[k] ?? ""));
    if (d.tail > 0) out.push(`... (${d.tail} more lines, same in both views)`);
  }
  out.push("", figures(trace, settings, view));
  return out.join("\n");
}

/** One part of a prompt under either view: a message, or a turn's share of one. */
interface Part {
  content: string;
  tokens: number;
}

interface Row {
  role: string;
  turn: number | undefined;
  a: Part;
  b: Part;
}

const whole = (m: ChatMessage): Part => ({ content: m.content, tokens: messageTokens(m) });

/**
 * The rows of the comparison: the system prompt and the task, then each turn's program and
 * its feedback. A summary that shares its message is its text alone (the message's framing
 * and the legend heading the first summary counted with the first), and a feedback left out
 * between such summaries is empty.
 */
function rows(full: readonly ChatMessage[], built: View): Row[] {
  const out: Row[] = [0, 1].map((i) => ({ role: full[i].role, turn: undefined, a: whole(full[i]), b: whole(built.messages[i]) }));
  const places = built.turns ?? [];
  let f = 2;
  places.forEach((p, i) => {
    const shared = places[i - 1]?.message === p.message;
    // What precedes the first summary in its message (the legend) is shown with it.
    const text = shared ? p.text : built.messages[p.message].content.slice(0, p.start) + p.text;
    out.push({ role: "assistant", turn: p.turn, a: whole(full[f]), b: shared ? { content: text, tokens: countTokens("\n\n" + text) } : p.start === 0 && places[i + 1]?.message !== p.message ? whole(built.messages[p.message]) : { content: text, tokens: TOKENS_PER_MESSAGE + countTokens(text) } });
    f++;
    const feedback = full[f]?.role === "user" ? full[f] : undefined;
    if (feedback === undefined) return;
    const ends = places[i + 1]?.message !== p.message;
    const after = built.messages[p.message + 1];
    out.push({ role: "user", turn: p.turn, a: whole(feedback), b: ends && after !== undefined ? whole(after) : { content: "", tokens: 0 } });
    f++;
  });
  return out;
}

/** Two texts less the lines they start and end with in common. */
function differingLines(a: string, b: string): { head: number; tail: number; a: string; b: string } {
  const x = a.split("\n");
  const y = b.split("\n");
  let head = 0;
  while (head < x.length && head < y.length && x[head] === y[head]) head++;
  let tail = 0;
  while (tail < x.length - head && tail < y.length - head && x[x.length - 1 - tail] === y[y.length - 1 - tail]) tail++;
  return { head, tail, a: x.slice(head, x.length - tail).join("\n"), b: y.slice(head, y.length - tail).join("\n") };
}

function rule(title: string, a: Part, b: Part, width: number): string {
  const head = `-- ${title}: ${a.content === b.content ? `${a.tokens} tokens, same in both` : `full ${a.tokens} tokens | compressed ${b.tokens} tokens`} `;
  return head.padEnd(width, "-");
}

function percent(full: number, view: number): string {
  return full === 0 ? "0%" : `${Math.round((1 - view / full) * 100)}%`;
}

// Widths are a terminal's columns, not UTF-16 units: a CJK character or an emoji takes two, a
// combining mark none. Counted as units, a row of CJK text filled twice its column and pushed
// the gutter and the other view off to the right. Cuts never split a character.
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uA960-\uA97F\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}\u{20000}-\u{3FFFD}]|\p{Emoji_Presentation}/u;
const ZERO_WIDTH = /[\p{Mn}\p{Me}]|\u200B|\u200D|\u2060|\uFEFF/u;
// Plain text (ASCII and the like): its width is its length, and it is cut by length as before.
const NARROW = /^[^\u0300-\u{10FFFF}]*$/u;

function charWidth(c: string): number {
  return WIDE.test(c) ? 2 : ZERO_WIDTH.test(c) ? 0 : 1;
}

function columns(line: string): number {
  if (NARROW.test(line)) return line.length;
  let n = 0;
  for (const c of line) n += charWidth(c);
  return n;
}

/** The longest start of `line` (from `from`) that fits in `width` columns: at least one character. */
function fit(line: string, from: number, width: number): number {
  if (NARROW.test(line)) return Math.min(line.length, from + Math.max(1, width));
  let used = 0;
  let i = from;
  while (i < line.length) {
    const c = String.fromCodePoint(line.codePointAt(i) as number);
    const w = charWidth(c);
    if (used + w > width && i > from) break;
    used += w;
    i += c.length;
  }
  return i;
}

function pad(line: string, width: number): string {
  return line + " ".repeat(Math.max(0, width - columns(line)));
}

function clip(line: string, width: number): string {
  return columns(line) > width ? line.slice(0, fit(line, 0, width - 3)) + "..." : line;
}

function wrap(text: string, width: number): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (columns(line) <= width) out.push(line);
    else {
      for (let i = 0; i < line.length; ) {
        const end = fit(line, i, width);
        out.push(line.slice(i, end));
        i = end;
      }
    }
  }
  return out;
}

/** One row per prompt of the run: tokens under both views, cacheable prefix, turns kept full. */
function figures(trace: Pick<RunTrace, "system" | "task" | "turns" | "settings">, run: RunSettings, options: ViewOptions): string {
  const model = trace.settings?.model;
  const usage = compressionReport(trace, run, options, model);
  const rows = [["turn", "full", "compressed", "saved", "cached prefix", "compressed turns", "kept full", "println shown/dropped"]];
  for (const p of usage.prompts) {
    rows.push([
      String(p.turn),
      String(p.fullTokens),
      String(p.viewTokens),
      percent(p.fullTokens, p.viewTokens),
      String(p.prefixTokens),
      String(p.turnsCompressed),
      p.turnsFull.map((f) => `${f.turn}:${f.reason}`).join(" ") || "-",
      `${p.printlnShown}/${p.printlnDropped}`,
    ]);
  }
  const t = usage.totals;
  rows.push(["total", String(t.fullTokens), String(t.viewTokens), percent(t.fullTokens, t.viewTokens), "", "", "", ""]);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  const lines = rows.map((r) => r.map((cell, c) => (c === 6 || c === 7 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  ").trimEnd());
  const priced = model !== undefined && lookupPrice(model) !== undefined ? `${model} prices` : "fallback prices (model unknown)";
  lines.push(`input cost, prefix cache, ${priced}: full $${t.fullCachedCost.toFixed(4)}, compressed $${t.viewCachedCost.toFixed(4)}`);
  return ["Compression per prompt", ...lines].join("\n");
}
