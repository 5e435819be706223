// Tool approvals. A tool that needs approval does not run when a program calls it: the call is
// held, and once every branch of the program waits on held calls the program is stopped (an
// uncatchable `aborted`, so no `try` swallows the pause) and the run ends paused, saved like
// any other run. Resuming replays the saved turns; the paused turn's program is evaluated again
// from its start, its calls that had run answered from their records and the held ones run
// live under the host's decisions. Only pure computation runs twice: no tool call, no LLM call.
import { abortedError, type ToolCallRecord } from "../lisp/index.js";
import type { FailedRequest, ToolCallTrace } from "../trace/trace.js";
import type { ApprovalDecision, Paused, RunState } from "../trace/run-state.js";
import { claimRecord, type ToolInput } from "./tools.js";
import type { Step, UsageTotals } from "./types.js";

export type { ApprovalDecision };

/** Whether a call needs approval: always, never, or by its validated arguments. */
export type NeedsApproval<A> = boolean | ((args: A) => boolean | Promise<boolean>);

/** A paused run's step: where it paused, and the run saved there (for runStateToJson and SubAgent.resume). */
export interface PausedStep extends Paused {
  state: RunState;
}

/** What a top-level run knows about approvals: how a paused run is saved; when resumed, the decisions, the turns replayed whole (and their nested runs' spending), and the paused turn's records. */
export interface ApprovalSetup {
  save: (step: Step) => RunState;
  decisions: ReadonlyMap<string, ApprovalDecision>;
  replayedTurns: number;
  /** What the saved turns' nested runs spent (resume), and the size of the tool calls they kept: they ran, so the resumed run counts them against its limits and reports them, as the saved run did. */
  replayedNested?: Readonly<UsageTotals & { runs: number; kept: number }>;
  paused?: { turn: number; calls: readonly ToolCallTrace[]; held: ReadonlySet<number> };
  /**
   * What of the saved turns a replay retells (resume): their timings (a replayed turn's record
   * keeps the saved run's model wait, and, replayed whole, its program's time) and how many lines
   * each printed (a paused or cut turn prints those again).
   */
  savedTurns?: ReadonlyArray<{ llmMs: number; execMs: number; prints: number }>;
  /** The saved run's billed LLM requests that failed (resume; RunTrace.failedRequests). */
  failedRequests?: readonly FailedRequest[];
  /** The turn an abort or the deadline cut (resume): its calls that had finished ran already, approved or cleared then, and are answered from their records. */
  cut?: { turn: number; calls: readonly ToolCallTrace[]; finished: ReadonlySet<number> };
}

/** A request's id: its turn and its call's place among the turn's calls. */
export const approvalId = (turn: number, index: number): string => `turn-${turn}-call-${index + 1}`;

/** What the tool session does with one call. */
export type Verdict =
  | { kind: "run"; args?: Record<string, unknown>; shown?: unknown }
  | { kind: "reject"; message: string }
  | { kind: "recorded"; call: ToolCallTrace }
  | { kind: "hold"; until: Promise<never> };

const REFUSED = "needs the host's approval, which only a top-level run can ask for (not an agent called as a tool)";

/**
 * One run's approvals: numbers each tool call of a turn in the order the program makes them
 * (the order of the turn's trace records), decides each call, holds the ones awaiting a
 * decision, and stops the program once nothing else is in flight.
 */
export class ApprovalGate {
  private turn = 0;
  private next = 0;
  private live = 0;
  private released = false;
  private readonly held = new Map<number, () => void>();
  private readonly waiting: number[] = [];
  /** The paused turn's records answered or decided so far (resume). */
  private readonly claimed = new Set<number>();
  /** Whether a held call of the paused turn met its decision: from then on the program may make calls the saved run did not. */
  private decided = false;
  /** In the paused turn, resumed: the saved run's place of each call that claimed a record, by its place in this evaluation. */
  private readonly places = new Map<number, number>();
  /** Each call's place in the turn's record, by its place in the evaluation (`arrange`); null: the same. */
  private placeOf: number[] | null = null;

  /** `setup` null: a nested run, whose calls that need approval are refused. */
  constructor(private readonly setup: ApprovalSetup | null) {}

  beginTurn(n: number): void {
    this.turn = n;
    this.next = 0;
    this.live = 0;
    this.released = false;
    this.held.clear();
    this.waiting.length = 0;
    this.claimed.clear();
    this.decided = false;
    this.places.clear();
    this.placeOf = null;
  }

  /** A call begins: its place in the turn. Every call the tool session sees must leave. */
  enter(): number {
    this.live++;
    return this.next++;
  }

  leave(index: number): void {
    if (!this.held.has(index)) this.live--;
    this.maybeStop();
  }

  async verdict(index: number, needs: NeedsApproval<Record<string, unknown>> | undefined, args: Record<string, unknown>, call: { name: string; input: ToolInput; hidden: readonly string[] }): Promise<Verdict> {
    const setup = this.setup;
    // A nested run cannot pause, so a call that needs approval is refused; one its check clears runs.
    if (setup === null) return (await needsApproval(needs, args)) ? { kind: "reject", message: REFUSED } : { kind: "run" };
    // Turns replayed whole answer from their records (resume's Replay), as they ran when saved.
    if (this.turn <= setup.replayedTurns) return { kind: "run" };
    // A call of the cut turn that had finished is not asked about again: approved once, it ran; asked again, a yes ran it twice.
    const cut = setup.cut;
    if (cut !== undefined && this.turn === cut.turn) {
      const { index: at } = await claimRecord(cut.calls, this.claimed, call.name, call.input, args, call.hidden);
      if (at !== undefined && cut.finished.has(at)) return { kind: "run" };
    }
    // The request a decision answers: the call's place in the turn, or in the paused turn the
    // place of its record (by tool and arguments, as the replay matches: parallel branches
    // may call in another order); a call the saved run did not make has no decision yet.
    let request: number | undefined = index;
    const paused = setup.paused;
    if (paused !== undefined && this.turn === paused.turn) {
      const { index: at, differs } = await claimRecord(paused.calls, this.claimed, call.name, call.input, args, call.hidden);
      if (at !== undefined) this.places.set(index, at);
      if (at !== undefined && !paused.held.has(at)) return { kind: "recorded", call: paused.calls[at] };
      // Until a decision lets the program go on, every call is one the saved run made.
      if (at === undefined && !this.decided) {
        const what = differs === undefined ? "is not a call the saved run made" : `has a different :${differs} than in the saved run`;
        return { kind: "reject", message: `resume: call ${index + 1} of this turn, tool/${call.name}, ${what} (a different context?)` };
      }
      request = at;
    }
    if (this.released) return this.hold(index);
    const decision = request === undefined ? undefined : setup.decisions.get(approvalId(this.turn, request));
    // A decided request is not asked again: the check may answer otherwise by now (it reads the
    // world, or the tool changed), and the host's no must still stop the call, its edit still apply.
    if (decision === undefined) {
      if (!(await needsApproval(needs, args))) return { kind: "run" };
      this.waiting.push(index);
      return this.hold(index);
    }
    this.decided = true;
    if (!decision.approved) return { kind: "reject", message: `rejected by the host${decision.reason === undefined || decision.reason === "" ? "" : `: ${decision.reason}`}` };
    // The arguments the request showed, which an edit may give back where it left one as it was.
    const shown = paused !== undefined && request !== undefined ? paused.calls[request]?.args : undefined;
    return decision.args === undefined ? { kind: "run" } : { kind: "run", args: decision.args, shown };
  }

  private hold(index: number): Verdict {
    this.live--;
    const until = new Promise<never>((_, reject) => this.held.set(index, () => reject(abortedError())));
    if (this.released) this.held.get(index)?.();
    else this.maybeStop();
    return { kind: "hold", until };
  }

  // Stopped after the current macrotask, so results just delivered reach the program (and their
  // trace records) and branches that can still go on make their calls first.
  private maybeStop(): void {
    if (this.waiting.length === 0 || this.live > 0 || this.released) return;
    setImmediate(() => {
      if (this.live > 0 || this.released) return;
      this.released = true;
      for (const stop of this.held.values()) stop();
    });
  }

  /**
   * After a resumed paused turn's evaluation: puts its calls (`records`, in the order they were
   * made) in the saved run's order, each at the place of the record it claimed, the others in the
   * places left, in order. Its parallel branches may call in another order than the saved run's;
   * a request's id is its call's place, so without this a request left undecided came back under
   * the id of another, perhaps one the host had approved.
   */
  arrange<T>(records: T[]): void {
    if (this.places.size === 0) return;
    const taken = new Set(this.places.values());
    const wanted: number[] = [];
    let free = 0;
    for (let i = 0; i < records.length; i++) {
      let at = this.places.get(i);
      if (at === undefined) {
        while (taken.has(free)) free++;
        at = free++;
      }
      wanted.push(at);
    }
    // Ranked, so a saved call the evaluation did not make again leaves no gap.
    const order = records.map((_, i) => i).sort((a, b) => wanted[a] - wanted[b]);
    const placeOf = new Array<number>(records.length);
    order.forEach((i, place) => (placeOf[i] = place));
    const made = [...records];
    order.forEach((i, place) => (records[place] = made[i]));
    this.placeOf = placeOf;
  }

  /** After the turn's evaluation: whether calls of it wait for the host (it paused, unless the run was stopped). */
  get holding(): boolean {
    return this.waiting.length > 0;
  }

  /** After the turn's evaluation (and `arrange`): where it paused (null if it did not), with the requests as the trace shows them. */
  pausedAt(records: readonly ToolCallRecord[]): Paused | null {
    if (this.waiting.length === 0) return null;
    const placeOf = this.placeOf;
    const place = (i: number): number => (placeOf === null ? i : placeOf[i]);
    const approvals = this.waiting.map((i) => {
      const at = place(i);
      // The host's own copy: the record is the saved run's, which resume matches the calls against.
      return { id: approvalId(this.turn, at), turn: this.turn, tool: records[at]?.name ?? "?", args: structuredClone(records[at]?.args ?? null) };
    });
    const paused: Paused = { approvals, held: [...this.held.keys()].map(place).sort((a, b) => a - b) };
    // A decided call held because the turn paused before it reached the gate (a parallel branch
    // still computing) keeps its decision for the next resume: the host was asked once.
    const decisions = this.setup?.decisions;
    for (const i of this.held.keys()) {
      const at = this.places.get(i);
      const decision = at === undefined ? undefined : decisions?.get(approvalId(this.turn, at));
      if (decision !== undefined) (paused.decided ??= {})[approvalId(this.turn, place(i))] = decision;
    }
    return paused;
  }
}

async function needsApproval(needs: NeedsApproval<Record<string, unknown>> | undefined, args: Record<string, unknown>): Promise<boolean> {
  if (typeof needs !== "function") return needs === true;
  // A check that fails cannot clear a call: the host is asked.
  try {
    return (await needs(args)) !== false;
  } catch {
    return true;
  }
}
