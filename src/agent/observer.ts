// What a run tells whoever watches it as it goes: the live events of `SubAgent.stream` and
// `onEvent` (events.ts) and the OpenTelemetry spans (telemetry.ts) are two observers of the
// same moments. The loop calls one observer, or none: a run nobody watches pays nothing.
import type { ErrorInfo, ToolCallRecord } from "../lisp/index.js";
import type { LlmUsage } from "../llm/types.js";
import type { TurnCompaction } from "../trace/trace.js";
import type { ViewStats } from "../trace/view-settings.js";
import type { Step, TurnEvent } from "./types.js";

/** The prompt a turn sends: its size and what the history strategy did to build it. */
export interface PromptInfo {
  readonly messages: number;
  readonly view: ViewStats;
  readonly compaction: TurnCompaction["stats"];
  /** Set in a resumed run (`TurnEvent.replayed`): the turn retells the saved run's, whole or its reply. */
  readonly replayed?: Replayed;
  /** With `replayed` "reply": the lines the saved turn printed, which its program prints again first. */
  readonly replayedPrints?: number;
}

/**
 * What of a turn a resumed run retells from the saved run: "turn", all of it (its reply stands
 * in for the LLM, its records for the tools: nothing runs again); "reply", its reply only (the
 * paused or cut turn: its program runs again, its calls that had not run now live).
 */
export type Replayed = "turn" | "reply";

export interface LlmCallInfo {
  /** The client's name (`openai:gpt-5-mini`, `anthropic:…`, `scripted`). */
  readonly llm: string;
}

export interface LlmCallEnd {
  readonly usage: LlmUsage | undefined;
  readonly model: string | undefined;
  /** Set when the call failed: the LlmError's kind (`timeout`, `rate_limit`…) or `error`. */
  readonly errorKind?: string;
}

export interface ProgramEnd {
  readonly ok: boolean;
  readonly error?: ErrorInfo;
  /** Stopped because its calls wait for the host's approval (its error is that stop, not a failure). */
  readonly paused?: true;
  readonly fuelUsed: number;
}

/** Hooks of one run, in the order they happen within a turn. Every hook is optional to call but none may throw. */
export interface RunObserver {
  runStart(maxTurns: number): void;
  turnStart(turn: number, prompt: PromptInfo): void;
  llmStart(turn: number, info: LlmCallInfo): void;
  /** A piece of the reply, as the client streams it (null when no observer wants pieces). */
  readonly text: ((turn: number, delta: string, attempt: number) => void) | null;
  llmEnd(turn: number, end: LlmCallEnd): void;
  programStart(turn: number, program: string): void;
  toolCall(turn: number, call: ToolCallRecord, done: boolean): void;
  print(turn: number, line: string): void;
  programEnd(turn: number, end: ProgramEnd): void;
  turnEnd(event: TurnEvent): void;
  runEnd(step: Step): void;
  /** What a nested run (an agent called as a tool) hangs under, for the span tree. */
  parent(): unknown;
}

/** One observer telling several, or null for none. */
export function observers(list: ReadonlyArray<RunObserver | null>): RunObserver | null {
  const all = list.filter((o): o is RunObserver => o !== null);
  if (all.length <= 1) return all[0] ?? null;
  const texts = all.map((o) => o.text).filter((t) => t !== null);
  return {
    runStart: (m) => all.forEach((o) => o.runStart(m)),
    turnStart: (t, p) => all.forEach((o) => o.turnStart(t, p)),
    llmStart: (t, i) => all.forEach((o) => o.llmStart(t, i)),
    text: texts.length === 0 ? null : (t, d, a) => texts.forEach((f) => f(t, d, a)),
    llmEnd: (t, e) => all.forEach((o) => o.llmEnd(t, e)),
    programStart: (t, p) => all.forEach((o) => o.programStart(t, p)),
    toolCall: (t, c, d) => all.forEach((o) => o.toolCall(t, c, d)),
    print: (t, l) => all.forEach((o) => o.print(t, l)),
    programEnd: (t, e) => all.forEach((o) => o.programEnd(t, e)),
    turnEnd: (e) => all.forEach((o) => o.turnEnd(e)),
    runEnd: (s) => all.forEach((o) => o.runEnd(s)),
    parent: () => all.map((o) => o.parent()).find((p) => p !== undefined),
  };
}

/**
 * What a host's callback returned, its rejection handled: an async `onEvent`, `onTurn` or
 * `onStep` is not awaited (the run never waits for the host's logging), and its rejection,
 * unheard, would end the host's process.
 */
export function unheard(result: unknown): void {
  if (typeof (result as { then?: unknown } | null)?.then === "function") Promise.resolve(result).catch(() => undefined);
}
