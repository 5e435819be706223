// How each history view explains earlier turns. The full view's part sits in the system prompt,
// after the turn rules: each feedback ends with the names in memory (`Stored:`). The compressed
// view sends no part there: its legend heads the first summary line of a prompt (a summary's, or
// what a turn kept in full taught, before its feedback), so a run that never
// summarizes (one that returns on its first turn, or keeps every turn as written) pays nothing
// for it, and one that does pays it once, cached from then on like the summaries after it. Each
// view sends its own system prompt, so a trace replayed under the other view (comparisons,
// reports, the viewer, the benchmark) sends what that view would have sent. Single-turn prompts
// carry neither.
import { fill, template } from "../llm/templates.js";

/** Which history view a system prompt is written for. */
export type HistoryView = "full" | "compressed";

/** The view's part of the system prompt: the full view's `Stored:` note; none for the compressed view. */
export function historySection(view: HistoryView): string {
  return view === "full" ? template("history-full") : "";
}

/** The view options that decide which summary lines a compressed view sends. */
export interface LegendMode {
  strictPrefix?: boolean;
  keepLatestFull?: boolean;
}

const legends = new Map<string, string>();

/**
 * The compressed view's legend of summary lines, the line before the first summary line in a
 * prompt, for the lines `mode` sends: strict-prefix mode sends no `; Read:` line (it never rewrites a
 * summary for a later read) and neither it nor keepLatestFull a `; Note:` (the turn just done is
 * kept as written, or not followed by its prose). Before, every mode's legend explained both.
 */
export function summaryLegend(mode: LegendMode = {}): string {
  const strict = mode.strictPrefix === true;
  const notes = !strict && mode.keepLatestFull !== true;
  const key = `${strict}/${notes}`;
  let text = legends.get(key);
  if (text === undefined) legends.set(key, (text = fill(template("history-compressed"), { read: strict ? "" : "`; Read:` a value used, ", note: notes ? ", `; Note:` your words" : "" })));
  return text;
}

// One entry per view: a run rebuilds every prompt from the same system prompt.
const swapped: Partial<Record<HistoryView, { from: string; to: string }>> = {};

/**
 * The system prompt as `view` sends it: the full view's part (a paragraph right after the turn
 * rules) added or taken out. A prompt already written for the view, a single-turn prompt and a
 * prompt without the turn rules (a custom one) are returned as they are. Pure: the same prompt
 * and view always give the same bytes.
 */
export function viewSystem(system: string, view: HistoryView): string {
  const hit = swapped[view];
  if (hit !== undefined && hit.from === system) return hit.to;
  const rules = template("multi-turn");
  const part = `\n\n${historySection("full")}`;
  const at = system.indexOf(rules);
  let to = system;
  if (at >= 0) {
    const end = at + rules.length;
    const has = system.startsWith(part, end);
    if (view === "full" && !has) to = system.slice(0, end) + part + system.slice(end);
    else if (view === "compressed" && has) to = system.slice(0, end) + system.slice(end + part.length);
  }
  swapped[view] = { from: system, to };
  return to;
}
