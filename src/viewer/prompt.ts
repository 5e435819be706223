// Each turn's prompt as sent (the trace's record of it) beside the full history for the same
// turn, what changed since the previous turn's prompt, and where the prefix cache broke; and
// the per-turn series the run's charts draw.
import { showHidden } from "../trace/redact.js";
import { inputTokens, sharedPrefix } from "../compaction/measure.js";
import { fullView } from "../history/full.js";
import { defaultViewOptions } from "../history/view.js";
import type { TextMessage } from "../llm/types.js";
import type { RunTrace, Turn } from "../trace/trace.js";
import type { ChartPoint, MessageChange, PromptView } from "./model.js";
import type { TextTable } from "./texts.js";

/**
 * How each sent message after the cached prefix relates to the previous prompt, given the
 * prefix's length (the messages before it are all cached, and not listed: a long run would
 * list its whole history again on every turn).
 */
export function messageChanges(previous: readonly TextMessage[] | null, sent: readonly TextMessage[], prefixMessages: number, prefixChars: number): MessageChange[] {
  if (previous === null) return sent.map(() => "new");
  const before = new Set(previous.map((m) => m.content));
  let cachedChars = 0;
  for (let i = 0; i < prefixMessages; i++) cachedChars += sent[i].content.length;
  return sent.slice(prefixMessages).map((m, k) => {
    if (k === 0 && prefixChars > cachedChars) return "changed";
    return before.has(m.content) ? "same" : "new";
  });
}

/** The prompt views of a run's turns, and one chart point per turn. */
export function runPrompts(trace: Pick<RunTrace, "system" | "task" | "turns">, table: TextTable): { prompts: PromptView[]; chart: ChartPoint[] } {
  const prompts: PromptView[] = [];
  const chart: ChartPoint[] = [];
  // Older traces do not say where their figures came from: a run that recorded none is measured here.
  const recorded = trace.turns.some((t) => t.usage.inputTokens > 0);
  let previous: Turn | null = null;
  trace.turns.forEach((turn, k) => {
    const sent = turn.messages;
    // The turns hold stand-ins unshown (a failed turn's feedback lists its completed calls' arguments): shown, as the agent sent them.
    const full = showHidden(fullView({ system: trace.system, task: trace.task, turns: trace.turns.slice(0, k), maxTurns: Math.max(1, trace.turns.length) }, defaultViewOptions).messages);
    const prev = previous?.messages ?? null;
    const prefix = prev === null ? null : sharedPrefix(prev, sent);
    const sentSet = new Set(sent.map((m) => m.content));
    const dropped = prev === null ? [] : prev.filter((m) => !sentSet.has(m.content));
    const sentTokens = inputTokens(sent);
    const fullTokens = inputTokens(full);
    prompts.push({
      sent: table.runs(sent),
      full: table.runs(full),
      sentTokens,
      fullTokens,
      changes: messageChanges(prev, sent, prefix?.messages ?? 0, prefix?.chars ?? 0),
      prefix,
      dropped: table.runs(dropped),
      keptFull: (turn.view?.turnsFull ?? []).map((f) => ({ turn: f.turn, reason: f.reason })),
      summarized: turn.view?.turnsCompressed ?? 0,
    });
    const point: ChartPoint = {
      turn: turn.number,
      fullTokens,
      sentTokens,
      cachedTokens: turn.usage.source !== undefined || recorded ? turn.usage.cachedTokens : (prefix?.tokens ?? 0),
      cachedSource: turn.usage.source ?? (recorded ? "recorded" : "local"),
      outputTokens: turn.usage.outputTokens,
      failed: isFailed(turn),
    };
    const event = compactionEvent(previous, turn, prefix?.messages ?? 0);
    if (event !== undefined) point.compaction = event;
    chart.push(point);
    previous = turn;
  });
  return { prompts, chart };
}

/** What compaction did to this turn's prompt, when it did something: summarized turns, or rewrote what was sent before. */
function compactionEvent(previous: Turn | null, turn: Turn, prefixMessages: number): string | undefined {
  if (previous === null) return undefined;
  const before = previous.view?.turnsCompressed ?? 0;
  const now = turn.view?.turnsCompressed ?? 0;
  if (now > before) return `${now - before} more turn${now - before === 1 ? "" : "s"} summarized (${now} in all)`;
  if (prefixMessages < previous.messages.length) return `earlier prompt rewritten from message ${prefixMessages + 1}`;
  return undefined;
}

export function isFailed(turn: Pick<Turn, "status">): boolean {
  return turn.status === "error" || turn.status === "no_code" || turn.status === "invalid_return" || turn.status === "failed";
}
