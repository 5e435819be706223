// A run's live events, for `SubAgent.stream` and the `onEvent` option. The shapes follow what
// agent builders already read: typed events with a `type` tag, as the AI SDK's `fullStream`
// parts and the Agents SDK's stream events are, and the run's result apart from the stream
// (its `step` promise, like the AI SDK's result promises and the Agents SDK's `completed`).
// Hidden context never appears: printed lines, tool arguments and errors show hidden values as
// the prompts do, as stand-ins (`<hidden string from data/_creds :token>`).
import { showStandIns, showStandInsIn, type ToolCallRecord } from "../lisp/index.js";
import { unheard, type Replayed, type RunObserver } from "./observer.js";
import type { Step, TurnEvent } from "./types.js";

/** What a run reports as it goes, in order. Every event but the last names its turn. */
export type AgentEvent =
  /** A turn began: its prompt is built and goes to the model. */
  | { type: "turn-start"; turn: number; replayed?: true }
  /**
   * A piece of the model's reply. `attempt` counts the client's retries from 1: a piece of a
   * higher attempt starts the reply over. Clients that cannot stream give the reply in one piece.
   */
  | { type: "text-delta"; turn: number; delta: string; attempt: number; replayed?: true }
  /** The reply held a program, about to run. */
  | { type: "program"; turn: number; program: string; replayed?: true }
  /** The program called a tool (arguments as the trace records them). `id` pairs it with its result. */
  | { type: "tool-call"; turn: number; id: number; name: string; args: unknown; replayed?: true }
  /** A tool call ended: its duration, and its error if it failed. */
  | { type: "tool-result"; turn: number; id: number; name: string; args: unknown; durationMs: number; error?: string; replayed?: true }
  /** A line the program printed, as it printed it (until the output limit cuts in). */
  | { type: "print"; turn: number; line: string; replayed?: true }
  /** A turn ended: its record as the trace keeps it, with the run's totals so far. */
  | ({ type: "turn-finish" } & TurnEvent)
  /** The run ended: the same Step `SubAgent.run` resolves to. */
  | { type: "run-finish"; step: Step };

/** The events of one run as an observer; `listener` receives them in order (what it throws is ignored). */
export function eventObserver(listener: (event: AgentEvent) => void): RunObserver {
  const emit = (event: AgentEvent): void => {
    try {
      unheard(listener(event));
    } catch {
      // A progress listener's failure is the host's; the run goes on.
    }
  };
  const ids = new WeakMap<ToolCallRecord, number>();
  let next = 0;
  // What of the current turn retells the saved run (a resumed run): its reply, or all of it.
  let replayed: Replayed | undefined;
  // Lines of a resumed paused or cut turn still to come that the saved run printed (and told) already.
  let printedBefore = 0;
  const reply = (): { replayed?: true } => (replayed === undefined ? {} : { replayed: true });
  const program = (): { replayed?: true } => (replayed === "turn" ? { replayed: true } : {});
  // A call of a resumed turn answered from the saved run's record did not run again.
  const again = (c: ToolCallRecord): { replayed?: true } => (replayed === "turn" || c.replayed === true ? { replayed: true } : {});
  return {
    runStart: () => undefined,
    turnStart: (turn, prompt) => {
      replayed = prompt.replayed;
      printedBefore = prompt.replayedPrints ?? 0;
      emit({ type: "turn-start", turn, ...reply() });
    },
    llmStart: () => undefined,
    text: (turn, delta, attempt) => emit({ type: "text-delta", turn, delta, attempt, ...reply() }),
    llmEnd: () => undefined,
    programStart: (turn, text) => emit({ type: "program", turn, program: text, ...program() }),
    toolCall(turn, call, done) {
      // The reader's own copy: the call's record (the trace's, which resume matches calls against) is not its to edit.
      const args = structuredClone(showStandInsIn(call.args));
      if (!done) {
        const id = ++next;
        ids.set(call, id);
        emit({ type: "tool-call", turn, id, name: call.name, args, ...again(call) });
        return;
      }
      const end: AgentEvent = { type: "tool-result", turn, id: ids.get(call) ?? 0, name: call.name, args, durationMs: call.durationMs, ...again(call) };
      if (call.error !== undefined) end.error = showStandIns(call.error);
      emit(end);
    },
    print: (turn, line) => emit({ type: "print", turn, line: showStandIns(line), ...(printedBefore-- > 0 ? { replayed: true as const } : program()) }),
    programEnd: () => undefined,
    turnEnd: (event) => emit({ type: "turn-finish", ...event }),
    runEnd: (step) => emit({ type: "run-finish", step }),
    parent: () => undefined,
  };
}

/** A run's events as an async iterable, with its result apart. */
export interface AgentStream<S = Step> extends AsyncIterable<AgentEvent> {
  /** The run's result, the same as `SubAgent.run` gives; resolves whether or not the events are read. */
  readonly step: Promise<S>;
}

/**
 * Events queued as they come and handed to the reader at its pace. The run never waits for
 * the reader; one reader at a time (a second iteration starts where the first stopped).
 */
export function eventQueue(): { push(e: AgentEvent): void; end(): void; fail(e: unknown): void; iterable: AsyncIterable<AgentEvent> } {
  const queue: AgentEvent[] = [];
  let done = false;
  let error: { e: unknown } | null = null;
  let wake: (() => void) | null = null;
  let reading = false;
  const poke = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  return {
    push(e) {
      queue.push(e);
      poke();
    },
    end() {
      done = true;
      poke();
    },
    fail(e) {
      error = { e };
      done = true;
      poke();
    },
    iterable: {
      async *[Symbol.asyncIterator]() {
        // One wake slot: a second reader at the same time would take it and leave the first
        // waiting forever, so it is refused (as a locked ReadableStream refuses a second reader).
        if (reading) throw new Error("SubAgent.stream: the stream has one reader at a time; it is being read by another loop");
        reading = true;
        try {
          for (;;) {
            while (queue.length > 0) yield queue.shift() as AgentEvent;
            if (done) {
              if (error !== null) throw error.e;
              return;
            }
            await new Promise<void>((resolve) => (wake = resolve));
          }
        } finally {
          reading = false;
        }
      },
    },
  };
}
