// The machinery shared by strategies that keep one rolling summary of the oldest part of the
// conversation (rolling-summary, usage-ratio, cost-trigger): the state (summary, how far it
// covers, a fingerprint of what it covers, the circuit breaker), folding more messages into
// the summary, and the projection [head, task, summary, the rest].
import { createHash } from "node:crypto";
import type { ChatMessage } from "../../llm/types.js";
import { isUnitStart, replacedCount, spliceSummary, taskIndex } from "../messages.js";
import { clock, finish, noSpend } from "../result.js";
import { closedBreaker, SummaryEngine, type BreakerState, type SummaryOptions } from "../summarizers/engine.js";
import { countTokens, messageTokens, promptTokens } from "../tokens.js";
import { knownNamesOf, type CompactionContext, type CompactionEvent, type CompactionResult, type Conversation, type Json, type Strategy } from "../types.js";

export type RollingState = {
  /** The summary text (without its header). */
  summary: string;
  /** Stored messages before this index (after the task) are covered by the summary; 0 when there is none. */
  covered: number;
  /** Hash of the covered messages, so a conversation edited behind our back resets the state instead of misplacing it. */
  fingerprint: string;
  breaker: BreakerState;
};

export const initialRolling = (): RollingState => ({ summary: "", covered: 0, fingerprint: "", breaker: closedBreaker() });

/**
 * A hash of `messages[0..end)`. A system message counts by its place only: no summary reads one
 * (each projection keeps the current ones), and apps rewrite theirs on every request (the time,
 * retrieved context), which would otherwise reset the state and summarize everything again.
 */
export function fingerprint(messages: readonly ChatMessage[], end: number): string {
  const h = createHash("sha256");
  for (let i = 0; i < end; i++) h.update(messages[i].role === "system" ? "system" : JSON.stringify(messages[i])).update("\n");
  return h.digest("hex").slice(0, 32);
}

/** How every rolling summary as sent begins. */
export const SUMMARY_HEADER = "[Summary of ";

/**
 * A summary's header: what it covers, and, when the summary marks requests [done] (the LLM and
 * copy summaries do), that those are finished. The facts summary marks open requests instead, and
 * on short dialogues the longer header alone would cost a tenth of the prompt.
 */
export function summaryHeader(summary: string, covers: string): string {
  return summary.includes("[done]") ? `${SUMMARY_HEADER}${covers}. Requests marked [done] were already carried out; do not repeat them.]` : `${SUMMARY_HEADER}${covers}]`;
}

/** The summary as sent, under its header. */
export function summaryText(summary: string, replaced: number): string {
  return `${summaryHeader(summary, `${replaced} earlier messages`)}\n${summary}`;
}

// A summary under summaryHeader, as summaryText writes it ("N earlier messages") or goal-boundary
// ("N earlier goal(s)"), with either ending; N a count it could write (no leading 0, under a
// billion), so a reply that copies the header with another number is a message, not ours.
const STORED_SUMMARY = /^\[Summary of ([1-9]\d{0,8}) earlier (messages|goals?)(?:\. Requests marked \[done\] were already carried out; do not repeat them\.)?\]\n/;

/** A summary of ours that the app stored back in its history (it keeps what it was sent): where it is, its text, how many messages (or goals) it stands for. */
export interface StoredSummary {
  readonly index: number;
  readonly summary: string;
  readonly replaced: number;
}

/**
 * The summary of ours right after the task (past the system messages spliceSummary keeps before
 * it), if the stored history holds one of `unit`: the rolling strategies' (messages) or
 * goal-boundary's (goals).
 */
export function storedSummary(messages: readonly ChatMessage[], task: number, unit: "messages" | "goals" = "messages"): StoredSummary | undefined {
  for (let i = task + 1; i < messages.length; i++) {
    const m = messages[i];
    const text = typeof m.content === "string" && (m.role === "assistant" || m.role === "system") && (m.tool_calls?.length ?? 0) === 0 ? m.content : "";
    const match = STORED_SUMMARY.exec(text);
    if (match !== null) return (match[2] === "messages") === (unit === "messages") ? { index: i, summary: text.slice(match[0].length), replaced: Number(match[1]) } : undefined;
    if (m.role !== "system") return undefined;
  }
  return undefined;
}

function isRollingState(s: Json): s is RollingState {
  return typeof s === "object" && s !== null && !Array.isArray(s) && typeof s.summary === "string" && typeof s.covered === "number" && typeof s.fingerprint === "string" && typeof s.breaker === "object";
}

/** What a strategy's rule sees when deciding whether (and where) to cut. */
export interface CutInput {
  readonly conversation: Conversation;
  readonly messages: readonly ChatMessage[];
  readonly task: number;
  /** First stored message not yet covered by the summary. */
  readonly base: number;
  /** The projection as it stands (with the current summary), and its tokens: what a trigger judges. */
  readonly sent: readonly ChatMessage[];
  readonly tokens: number;
  /** The caller asked to compact now, whatever the trigger says. */
  readonly force: boolean;
}

/** Returns the index before which the next summary ends, or a reason for not cutting. */
export type CutRule = (input: CutInput) => number | { skip: string } | undefined;

/** The last cut point at or before `index` (so the last `messages.length - index` messages stay). */
export function lastUnitStart(messages: readonly ChatMessage[], index: number): number {
  let i = Math.min(index, messages.length);
  while (i > 0 && !isUnitStart(messages, i)) i--;
  return i;
}

export function rollingStrategy(name: string, options: SummaryOptions & Record<string, Json>, rule: CutRule): Strategy<RollingState> {
  const engine = new SummaryEngine(options);
  return {
    name,
    options,
    usesLlm: true,
    initialState: initialRolling,
    compacted: (state) => isRollingState(state) && state.covered > 0,
    async project(conversation: Conversation, input: RollingState, context: CompactionContext): Promise<CompactionResult<RollingState>> {
      const started = clock(context)();
      const messages = conversation.messages;
      const summarizer = engine.pick(context).name;
      const events: CompactionEvent[] = [];
      const spend = noSpend();
      let state = isRollingState(input) ? input : initialRolling();
      if (state.covered > messages.length || (state.covered > 0 && fingerprint(messages, state.covered) !== state.fingerprint)) {
        events.push({ kind: "skipped", detail: "the stored conversation no longer starts with the summarized messages: summary state reset" });
        state = initialRolling();
      }
      const task = taskIndex(messages);
      if (task < 0 || (state.covered > 0 && state.covered <= task)) return finish(conversation, messages.slice(), initialRolling(), events, started, context, spend, summarizer);
      // A summary the app stored back is the previous summary, not a message to summarize again:
      // folded as a message, each pass kept a fifth of it, and its header words became facts.
      const stored = storedSummary(messages, task);
      if (stored !== undefined && state.covered === 0) state = { ...state, summary: stored.summary, covered: stored.index + 1, fingerprint: fingerprint(messages, stored.index + 1) };
      // It stands for more messages and tokens than its own: the header counts them, and the budget is of what the summary replaced, at least its tokens / summaryRatio.
      const carried = (end: number): { messages: number; tokens: number } =>
        stored === undefined || end <= stored.index ? { messages: 0, tokens: 0 } : { messages: stored.replaced - 1, tokens: Math.ceil(countTokens(stored.summary) / options.summaryRatio) - messageTokens(messages[stored.index]) };
      const view = (s: RollingState): ChatMessage[] => (s.covered > 0 ? spliceSummary(messages, task, s.covered, summaryText(s.summary, replacedCount(messages, task, s.covered) + carried(s.covered).messages)) : messages.slice());
      const base = state.covered > 0 ? state.covered : task + 1;
      const sent = view(state);
      const decision = rule({ conversation, messages, task, base, sent, tokens: promptTokens(sent), force: context.force === true });
      if (typeof decision === "object") events.push({ kind: "skipped", detail: decision.skip });
      else if (decision !== undefined && decision > base) {
        const covered = messages.slice(base, decision).filter((m) => m.role !== "system");
        const names = knownNamesOf(conversation.records);
        const request = {
          messages: covered,
          ...(state.summary ? { previous: state.summary } : {}),
          maxTokens: engine.budget(context, promptTokens(messages.slice(task + 1, decision)) + carried(decision).tokens),
          ...(names === undefined ? {} : { knownNames: names }),
        };
        // A span no summary could shrink (a few short messages, against the summary's header) is
        // not sent to the summarizer: the call would be paid for nothing, and its rejection
        // counted toward the breaker, so a few small spans paused the summaries of large ones.
        const hopeless = covered.length === 0 || promptTokens(view({ ...state, summary: ".", covered: decision })) >= promptTokens(sent);
        if (hopeless && covered.length > 0) events.push({ kind: "skipped", messageIndex: base, detail: "the span is too small for a summary to make the prompt smaller" });
        const outcome = hopeless ? { text: undefined, breaker: state.breaker } : await engine.run(request, state.breaker, context, spend, events, base);
        const next: RollingState | undefined = outcome.text === undefined ? undefined : { summary: outcome.text, covered: decision, fingerprint: fingerprint(messages, decision), breaker: outcome.breaker };
        // The summary shrank what it covers, but with its header it must also shrink the prompt.
        if (next !== undefined && promptTokens(view(next)) < promptTokens(view(state))) {
          state = next;
          events.push({ kind: "compacted", messageIndex: base, replaced: decision - base });
        } else {
          if (next !== undefined) events.push({ kind: "skipped", messageIndex: base, detail: "the summary with its header would not make the prompt smaller" });
          state = { ...state, breaker: outcome.breaker };
        }
      }
      return finish(conversation, view(state), state, events, started, context, spend, summarizer);
    },
  };
}
