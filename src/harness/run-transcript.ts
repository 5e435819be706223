// A recorded PTC-Lisp run as a transcript: its full history as the messages, and behind each of
// the model's replies the turn records its prompt was built from, so interpreter-summaries (which
// summarizes from those records, not from the messages) is measured beside the other strategies.
import { fullView } from "../history/full.js";
import { traceSettings, turnBudget } from "../history/settings.js";
import { defaultViewOptions, type ViewInput } from "../history/view.js";
import type { ChatMessage } from "../llm/types.js";
import type { RunTrace } from "../trace/trace.js";
import type { Transcript } from "./transcript.js";

/** The transcript of a run; undefined when the run has no turn (nothing was asked of the model). */
export function runTranscript(id: string, trace: RunTrace, source = "PTC-Lisp run"): Transcript | undefined {
  // A trace is input from disk: settings it carries are checked before a view is built from them.
  const checked = traceSettings(trace);
  if (!checked.ok) throw new Error(`${id}: ${checked.message}`);
  const settings = checked.settings;
  const input = (turns: number): ViewInput => ({
    system: trace.system,
    task: trace.task,
    turns: trace.turns.slice(0, turns),
    maxTurns: settings?.maxTurns ?? turnBudget(trace),
    ...(settings === undefined ? {} : { toolsWithdrawn: settings.toolsWithdrawn, maxPrintChars: settings.maxPrintChars }),
  });
  const all = trace.turns.length;
  if (all === 0) return undefined;
  const full = fullView(input(all), defaultViewOptions);
  // The full view places every turn's reply; without the places there is no telling which records go with which reply.
  const places = full.turns ?? [];
  if (places.length !== all) return undefined;
  // The last turn's feedback was never sent: the history ends with the model's last reply.
  const messages: ChatMessage[] = full.messages.slice(0, places[all - 1].message + 1);
  // The prompt for turn k's reply was built from the k-1 turns before it.
  const turnAt = new Map(places.map((t, k) => [t.message, k]));
  return { id, source, messages, recordsAt: (j) => (turnAt.has(j) ? input(turnAt.get(j) as number) : undefined) };
}
