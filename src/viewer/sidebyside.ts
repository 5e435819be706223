// One transcript of a compare report replayed under two of its strategies, request by
// request, as `ptc compare` replays it (compaction state carried from one request to the
// next, a recorded run's turn records given to the strategies that read them, no summarizer
// model): the prompts each strategy would send, side by side.
import { compact } from "../compaction/compact.js";
import type { StrategySpec } from "../compaction/registry.js";
import type { Json } from "../compaction/types.js";
import { messageTokens, promptTokens } from "../compaction/tokens.js";
import { messageText, toolCallText } from "../llm/messages.js";
import type { ChatMessage, TextMessage } from "../llm/types.js";
import { showHidden } from "../trace/redact.js";
import { defaultStrategies } from "../history/registry.js";
import { runsOf, type MessageRef, type ReportView, type SideBySide } from "./model.js";
import type { TextTable } from "./texts.js";

export interface ReplayTranscript {
  id: string;
  messages: ChatMessage[];
  /** A recorded run's turn records behind the prompt for message j (interpreter-summaries reads them). */
  recordsAt?: (j: number) => unknown;
}

/** The two strategies shown by default: full (the baseline) and the one that saved the most. */
export function defaultPair(report: ReportView): [string, string] {
  // Baseline rows (system + last message…) are floors, not strategies a conversation can be replayed under.
  const others = report.rows.filter((r) => r.strategy !== "full" && !r.strategy.startsWith("baseline:"));
  const best = others.reduce<ReportView["rows"][number] | undefined>((a, r) => (a === undefined || (r.reduction ?? -Infinity) > (a.reduction ?? -Infinity) ? r : a), undefined);
  return ["full", best?.strategy ?? "full"];
}

/** The transcript of `candidates` to show: the report's longest when given, else the first the report measured. */
export function pickTranscript<T extends { id: string }>(report: ReportView, candidates: readonly T[]): T | undefined {
  const measured = new Set(report.rows[0]?.perTranscript.map((p) => p.id));
  return candidates.find((t) => t.id === report.longest?.id) ?? candidates.find((t) => measured.has(t.id));
}

/** A message as text: its content, then its tool calls. */
function flatten(m: ChatMessage): { role: string; content: string } {
  const calls = toolCallText(m);
  const text = messageText(m);
  return { role: m.role, content: calls === "" ? text : text === "" ? `[tool calls]\n${calls}` : `${text}\n[tool calls]\n${calls}` };
}

/** Messages the full history's prompts hold over the transcript's requests (each reply's prompt is every message before it). */
export function replayMessages(t: ReplayTranscript): number {
  let n = 0;
  for (let j = 1; j < t.messages.length; j++) if (t.messages[j].role === "assistant") n += j;
  return n;
}

export async function replaySideBySide(t: ReplayTranscript, specs: [StrategySpec, StrategySpec], labels: [string, string], table: TextTable): Promise<SideBySide> {
  const messages: MessageRef[] = [];
  const index = new Map<string, number>();
  const refOf = (m: ChatMessage): number => {
    const flat = flatten(m);
    const key = `${flat.role}\u0000${flat.content}`;
    let i = index.get(key);
    if (i === undefined) {
      i = messages.length;
      messages.push({ role: flat.role, text: table.id(flat.content), tokens: messageTokens(m) });
      index.set(key, i);
    }
    return i;
  };
  const requests: SideBySide["requests"] = [];
  for (let j = 1; j < t.messages.length; j++) {
    if (t.messages[j].role === "assistant") requests.push({ index: requests.length + 1, prompts: [[], []], tokens: [0, 0] });
  }
  // A recorded run's turn records hold hidden values' stand-ins unshown (a failed turn's feedback
  // lists its calls' arguments); its agent sent them shown, and ptc compare measures them so.
  const shown = t.recordsAt === undefined ? (ms: ChatMessage[]) => ms : (ms: ChatMessage[]) => (ms.every((m) => typeof m.content === "string") ? showHidden(ms as TextMessage[]) : ms);
  // One strategy's requests after the other: the first numbers its messages in the order its
  // prompts meet them, so each prompt of it is a run or two (interleaved, the other strategy's
  // new messages would split every prompt into runs of one or two).
  for (const k of [0, 1] as const) {
    let state: Json | undefined;
    let r = 0;
    for (let j = 1; j < t.messages.length; j++) {
      if (t.messages[j].role !== "assistant") continue;
      const records = t.recordsAt?.(j);
      const result = await compact(t.messages.slice(0, j), specs[k], { registry: defaultStrategies, ...(state === undefined ? {} : { state }), ...(records === undefined ? {} : { records }) });
      state = result.state;
      const sent = shown(result.messages);
      requests[r].prompts[k] = runsOf(sent.map(refOf));
      requests[r].tokens[k] = promptTokens(sent);
      r++;
    }
  }
  return { transcript: t.id, strategies: labels, messages, requests };
}

/** The spec a report row was measured with: its label's name and the options the row records. */
export function specOf(label: string, options: Readonly<Record<string, unknown>> | undefined): StrategySpec {
  return { name: label.split(":")[0], options: { ...(options ?? {}) } };
}
