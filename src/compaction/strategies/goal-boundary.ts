// Goal boundary (seed 004): when a user message starts a new goal, the previous goal's turns
// become a summary; the current goal stays verbatim. With `maxTokens` (the token-budget variant)
// completed goals are summarized oldest first only while the prompt is over that budget.
// Boundaries, goal summaries and the breaker live in the state, so no detector or summary call
// is ever made twice for the same messages.
import { z } from "zod";
import type { ChatMessage } from "../../llm/types.js";
import { domainGoalDetector, heuristicGoalDetector, llmGoalDetector, type GoalDetector } from "../goals.js";
import { spliceSummary, taskIndex } from "../messages.js";
import { addSpend, clock, finish, noSpend } from "../result.js";
import type { StrategyDefinition } from "../registry-types.js";
import { afterFailure, closedBreaker, skipWhileOpen, summaryOptions, SummaryEngine, type BreakerState } from "../summarizers/engine.js";
import { promptTokens } from "../tokens.js";
import { createTrigger, triggerSpecSchema } from "../triggers.js";
import { knownNamesOf, type CompactionEvent, type Json } from "../types.js";
import { fingerprint, storedSummary, summaryHeader } from "./rolling.js";

const schema = z
  .object({
    /** "auto": the LLM detector when an llm is given, the domain one otherwise; "heuristic" is the older word-overlap one. */
    detector: z.enum(["auto", "llm", "domain", "heuristic"]).default("auto"),
    /** Heuristic: a message sharing less than this share of its words with the current goal starts a new one. */
    overlap: z.number().min(0).max(1).default(0.15),
    /** Token-budget variant: summarize completed goals only while the prompt is over this many tokens (0: always). */
    maxTokens: z.number().int().min(0).default(0),
    /** Summarize completed goals only while this trigger fires (like maxTokens, for any trigger). */
    trigger: triggerSpecSchema.optional(),
    ...summaryOptions,
    summaryMaxTokens: z.number().int().min(16).default(200),
  })
  .strict();

export type GoalState = {
  /** User messages before this index have been through the detector. */
  checked: number;
  /** Indices of the user messages that start a goal after the first. */
  boundaries: number[];
  /**
   * Summaries of the first goals (after those a stored-back summary stands for), in order; the
   * n-th covers up to boundaries[n], from the end of the last goal before it with a summary of its own. "" marks a goal folded into the next
   * summary: one too small to be summarized alone (its summary would not shrink the prompt).
   */
  summaries: string[];
  /** Hash of the messages before `checked`. */
  fingerprint: string;
  /**
   * Hashes of the messages before the last boundary and up to it included ([] without one): what
   * the boundaries and summaries depend on, so an edit after them (an edited last message) keeps
   * them, and an edit of the last boundary's message keeps the ones before it.
   */
  settled: string[];
  breaker: BreakerState;
};

const initial = (): GoalState => ({ checked: 0, boundaries: [], summaries: [], fingerprint: "", settled: [], breaker: closedBreaker() });

/** Hashes of the messages before boundary `at` and up to it included. */
const settledAt = (messages: readonly ChatMessage[], at: number): string[] => [fingerprint(messages, at), fingerprint(messages, at + 1)];

/**
 * What an edit after the messages a state checked leaves of it: everything when only messages
 * after its last boundary changed; all but that boundary (and the summary of the goal it ended)
 * when its message changed; undefined when an earlier message changed.
 */
function settledPart(state: GoalState, messages: readonly ChatMessage[]): GoalState | undefined {
  const last = state.boundaries[state.boundaries.length - 1];
  if (last === undefined || !Array.isArray(state.settled) || state.settled.length !== 2 || last > messages.length) return undefined;
  if (last < messages.length) {
    const through = fingerprint(messages, last + 1);
    if (through === state.settled[1]) return { ...state, checked: last + 1, fingerprint: through };
  }
  const before = fingerprint(messages, last);
  if (before !== state.settled[0]) return undefined;
  const boundaries = state.boundaries.slice(0, -1);
  return { ...state, checked: last, boundaries, summaries: state.summaries.slice(0, boundaries.length), fingerprint: before, settled: [] };
}

function isGoalState(s: Json): s is GoalState {
  return typeof s === "object" && s !== null && !Array.isArray(s) && typeof s.checked === "number" && Array.isArray(s.boundaries) && Array.isArray(s.summaries);
}

export const goalBoundaryStrategy: StrategyDefinition<z.output<typeof schema>> = {
  name: "goal-boundary",
  description: "Summarizes each completed goal when a user message starts a new one (LLM or heuristic detector); with maxTokens, only the oldest goals and only while over budget.",
  usesLlm: true,
  schema,
  create(options) {
    const engine = new SummaryEngine(options);
    const heuristic = heuristicGoalDetector({ overlap: options.overlap });
    const domain = domainGoalDetector();
    const llmDetector = llmGoalDetector({ timeoutMs: options.summaryTimeoutMs, ...(options.summaryModel === undefined ? {} : { model: options.summaryModel }) });
    const trigger = options.trigger ? createTrigger(options.trigger) : undefined;
    return {
      name: "goal-boundary",
      options,
      usesLlm: true,
      initialState: initial,
      async project(conversation, input, context) {
        const started = clock(context)();
        const messages = conversation.messages;
        const summarizer = engine.pick(context).name;
        if (options.detector === "llm" && context.llm === undefined) throw new Error('compaction: detector "llm" needs an llm');
        const detector: GoalDetector = options.detector === "heuristic" ? heuristic : options.detector === "domain" || context.llm === undefined ? domain : llmDetector;
        const events: CompactionEvent[] = [];
        const spend = noSpend();
        let state = isGoalState(input) ? input : initial();
        if (state.checked > messages.length || (state.checked > 0 && fingerprint(messages, state.checked) !== state.fingerprint)) {
          const kept = settledPart(state, messages);
          events.push({ kind: "skipped", detail: kept === undefined ? "the stored conversation no longer starts with the messages seen before: goal state reset" : `messages from ${kept.checked} on changed: the goal from there is checked again` });
          state = kept ?? initial();
        }
        const task = taskIndex(messages);
        if (task < 0) return finish(conversation, messages.slice(), initial(), events, started, context, spend, summarizer);
        // A goal summary the app stored back stands for the goals before it, kept as written: folded
        // as one more goal, its header words became facts and its facts were lost. The goal after it
        // opens with the message after it; without one, the first goal opens with the task.
        const stored = storedSummary(messages, task, "goals");
        const carried = stored?.replaced ?? 0;
        const opening = stored === undefined ? task : stored.index + 1;
        const boundaries = [...state.boundaries];
        let goalStart = boundaries.length > 0 ? boundaries[boundaries.length - 1] : opening;
        // The LLM detector's calls are summary calls to the breaker: while it is open this compaction
        // makes none (and checks nothing), and each failed call counts as a failed compaction.
        const paused = detector === llmDetector ? skipWhileOpen(state.breaker, events, state.checked) : undefined;
        let breaker = paused ?? state.breaker;
        // Messages before `checked` have been through the detector; paused, none more are.
        let checked = paused === undefined ? messages.length : state.checked;
        for (let i = Math.max(state.checked, opening + 1); i < checked; i++) {
          if (messages[i].role !== "user") continue;
          const d = await detector.isNewGoal(messages, i, goalStart, context);
          addSpend(spend, { calls: d.llmCalls, inputTokens: d.inputTokens, outputTokens: d.outputTokens });
          // A call that failed decided nothing: said, and this message is asked about again at the
          // next compaction. Checking stops here: a model that is down (or never answers) costs one
          // call per compaction, not one, each waiting out its timeout, per unchecked message.
          if (d.failed !== undefined) {
            events.push({ kind: "summary_failed", messageIndex: i, detail: `${detector.name} goal detector failed: ${d.failed}` });
            breaker = afterFailure(breaker, options, events, i);
            checked = i;
            break;
          }
          if (d.newGoal) {
            boundaries.push(i);
            goalStart = i;
            events.push({ kind: "goal_boundary", messageIndex: i, detail: detector.name });
          }
        }
        // A last boundary the state already had lies in the messages its fingerprint just matched: its hash stands.
        const last = boundaries[boundaries.length - 1];
        const settled = last === undefined ? [] : last === state.boundaries[state.boundaries.length - 1] && Array.isArray(state.settled) && state.settled.length === 2 ? state.settled : settledAt(messages, last);
        state = { ...state, checked, boundaries, fingerprint: fingerprint(messages, checked), settled, breaker };
        const view = (s: GoalState): ChatMessage[] => {
          // Goals folded into a later summary ("") are in that summary; trailing ones are still verbatim.
          let last = s.summaries.length - 1;
          while (last >= 0 && s.summaries[last] === "") last--;
          if (last < 0) return messages.slice();
          const parts: string[] = stored === undefined ? [] : [stored.summary];
          let first = carried + 1;
          for (let n = 0; n <= last; n++) {
            if (s.summaries[n] === "") continue;
            const goal = carried + n + 1;
            parts.push(`${first === goal ? `Goal ${goal}` : `Goals ${first}-${goal}`}:\n${s.summaries[n]}`);
            first = goal + 1;
          }
          const text = parts.join("\n");
          const goals = carried + last + 1;
          return spliceSummary(messages, task, s.boundaries[last], `${summaryHeader(text, `${goals} earlier goal${goals === 1 ? "" : "s"}`)}\n${text}`);
        };
        // Completed goals not yet summarized, oldest first (the current goal is never summarized);
        // none in a compaction the breaker skips or whose detector call just failed (the same model).
        while (state.summaries.length < state.boundaries.length && paused === undefined && checked === messages.length) {
          const sent = view(state);
          const tokens = promptTokens(sent);
          if (!context.force && options.maxTokens > 0 && tokens <= options.maxTokens) break;
          // Judged on the prompt as sent, as the token budget is.
          if (!context.force && trigger !== undefined && !trigger.shouldCompact({ ...conversation, messages: sent }, tokens).compact) break;
          const n = state.summaries.length;
          // The summary covers this goal and the ones folded into it, from the last goal summarized alone.
          let first = n;
          while (first > 0 && state.summaries[first - 1] === "") first--;
          const from = first > 0 ? state.boundaries[first - 1] : stored === undefined ? task + 1 : opening;
          const to = state.boundaries[n];
          const covered = messages.slice(from, to).filter((m) => m.role !== "system");
          // A goal too small to shrink the prompt under any summary (a greeting and its reply) is
          // folded into the next one without a summary call; left verbatim, it stopped every later
          // goal from being summarized.
          const fold = (detail: string): void => {
            state = { ...state, summaries: [...state.summaries, ""] };
            events.push({ kind: "skipped", messageIndex: from, detail: `${detail}: folded into the next goal's summary` });
          };
          if (promptTokens(view({ ...state, summaries: [...state.summaries, "."] })) >= tokens) {
            fold("the goal is too small for a summary to make the prompt smaller");
            continue;
          }
          const names = knownNamesOf(conversation.records);
          const request = { messages: covered, maxTokens: engine.budget(context, promptTokens(covered)), ...(names === undefined ? {} : { knownNames: names }) };
          const outcome = await engine.run(request, state.breaker, context, spend, events, from);
          state = { ...state, breaker: outcome.breaker };
          if (outcome.text === undefined) {
            if (outcome.failed) break;
            fold("nothing in the goal worth keeping");
            continue;
          }
          const next = { ...state, summaries: [...state.summaries, outcome.text] };
          if (promptTokens(view(next)) >= tokens) {
            fold("the goal summary would not make the prompt smaller");
            continue;
          }
          state = next;
          events.push({ kind: "compacted", messageIndex: from, replaced: covered.length });
        }
        return finish(conversation, view(state), state, events, started, context, spend, summarizer);
      },
    };
  },
};
