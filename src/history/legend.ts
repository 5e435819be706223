// The part of the system prompt that says how earlier turns are shown, which depends on the
// prompt view: the full view ends each feedback with the names in memory (`Stored:`); the
// compressed view shows old turns as summary lines and leaves `Stored:` out. Each view sends
// its own part, so a trace replayed under the other view (comparisons, reports, the viewer,
// the benchmark) sends what that view would have sent. Single-turn prompts carry neither.
import { template } from "../llm/templates.js";

/** Which history view a system prompt is written for. */
export type HistoryView = "full" | "compressed";

const TEMPLATES = { full: "history-full", compressed: "history-compressed" } as const;

/** The view's part of the system prompt. */
export function historySection(view: HistoryView): string {
  return template(TEMPLATES[view]);
}

const OTHER: Readonly<Record<HistoryView, HistoryView>> = { full: "compressed", compressed: "full" };

// One entry per view: a run rebuilds every prompt from the same system prompt.
const swapped: Partial<Record<HistoryView, { from: string; to: string }>> = {};

/**
 * The system prompt as `view` sends it: the other view's part (a paragraph of its own,
 * between blank lines) replaced by this view's. A prompt already written for the view, a
 * single-turn prompt and a prompt without either part (a custom or older one) are returned
 * as they are. Pure: the same prompt and view always give the same bytes.
 */
export function viewSystem(system: string, view: HistoryView): string {
  const hit = swapped[view];
  if (hit !== undefined && hit.from === system) return hit.to;
  const other = `\n\n${historySection(OTHER[view])}\n\n`;
  const at = system.indexOf(other);
  const to = at < 0 ? system : `${system.slice(0, at)}\n\n${historySection(view)}\n\n${system.slice(at + other.length)}`;
  swapped[view] = { from: system, to };
  return to;
}
