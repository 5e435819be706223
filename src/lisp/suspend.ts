// How a program that calls tools runs once. Code compiled in the suspendable mode returns a
// value or, when a tool call it made has not answered yet, a promise of the value; each node
// checks its children's results and chains only on a promise, so work that never waits stays
// synchronous. Builtins are synchronous: when a function a builtin calls back waits on a tool,
// the builtin is abandoned at that point (Suspend) and run again once the result is in, with
// the results of the calls it had already made answered from a log, so every function body
// and tool call runs exactly once and the builtin's own work is charged once.
import { LispError, withLoc, type SourceLoc } from "./errors.js";
import { activate, CHECK_INTERVAL, run, type RunState } from "./runtime.js";
import type { Value } from "./values.js";

/** A value, or the promise of one from code that waits on a tool. */
export type Maybe = Value | Promise<Value>;

/**
 * Thrown through a builtin's own (synchronous) code when a function it called back is waiting
 * on a tool. Never visible to program code: the nearest suspendable call catches it.
 */
export class Suspend {
  constructor(readonly pending: Promise<Value>) {}
}

export function isPending(v: unknown): v is Promise<Value> {
  return v instanceof Promise;
}

/**
 * Goes on with `ok` (or `fail`) once `p` settles, in the dynamic context of now: the run state,
 * call depth and output capture are restored first, as each stretch of evaluation may follow
 * another evaluation's (or another pmap branch's). Time between stretches is waiting, which
 * the time limit does not count. Once the evaluation has ended, nothing more runs.
 */
export function after<T>(p: Promise<T>, ok: (v: T) => Maybe, fail?: (e: unknown) => Maybe): Promise<Value> {
  const r = run;
  const depth = r.depth;
  const captured = r.captured;
  r.lastActive = r.now();
  return p.then(
    (v) => resume(r, depth, captured, ok, v),
    fail === undefined ? undefined : (e: unknown) => resume(r, depth, captured, fail, e),
  );
}

function resume<A>(r: RunState, depth: number, captured: RunState["captured"], k: (a: A) => Maybe, a: A): Maybe {
  if (r.stopped) throw new LispError("aborted", "the evaluation has ended");
  const prev = activate(r);
  r.deadline += r.now() - r.lastActive;
  r.depth = depth;
  r.captured = captured;
  try {
    return k(a);
  } finally {
    r.lastActive = r.now();
    activate(prev);
  }
}

/** `then` for a result that may be pending: `k` at once on a value, after the promise otherwise. */
export function andThen(v: Maybe, k: (v: Value) => Maybe): Maybe {
  return isPending(v) ? after(v, k) : k(v);
}

/** Attaches `loc` to an error coming out of a pending result, as a synchronous call would. */
export function located(p: Promise<Value>, loc: SourceLoc | undefined): Promise<Value> {
  return p.catch((e: unknown) => {
    throw withLoc(e, loc);
  });
}

/**
 * Calls a function from a builtin's synchronous code in a suspendable program: answers from the
 * log when the builtin is being run again, otherwise runs `start` and logs its value, or throws
 * Suspend when it has to wait.
 */
export function fromSync(start: () => Maybe): Value {
  const r = run;
  if (r.replay !== null) return replayNext(r);
  const v = start();
  if (isPending(v)) throw new Suspend(v);
  r.log.push(v);
  return v;
}

function replayNext(r: RunState): Value {
  const rp = r.replay as Value[];
  const v = rp[r.replayAt++];
  r.log.push(v);
  if (r.replayAt === rp.length) endReplay(r);
  return v;
}

function endReplay(r: RunState): void {
  r.replay = null;
  r.fuel = r.replayFuel;
  r.loopsLeft = r.replayLoops;
  r.checkAt = Math.max(0, r.fuel - CHECK_INTERVAL);
}

/**
 * Runs a builtin (or any synchronous function value) from suspendable code: its value, or a
 * promise when a function it called back had to wait, after which it is run again from the log.
 */
export function syncCall(fn: (args: Value[]) => Value, args: Value[], loc: SourceLoc | undefined): Maybe {
  const r = run;
  const mark = r.log.length;
  const fuel = r.fuel;
  try {
    const v = fn(args);
    if (r.log.length !== mark) r.log.length = mark;
    return v;
  } catch (e) {
    if (e instanceof Suspend) return resumeCall(r, mark, fuel, e, () => fn(args), loc);
    r.log.length = mark;
    throw withLoc(e, loc);
  }
}

function resumeCall(r: RunState, mark: number, fuelAtStart: number, s: Suspend, call: () => Value, loc: SourceLoc | undefined): Promise<Value> {
  const answered = r.log.slice(mark);
  r.log.length = mark;
  // What the abandoned attempt spent on its way here, so running it again cannot run out.
  const spent = Math.max(0, fuelAtStart - r.fuel);
  return located(
    after(s.pending, (v) => {
      answered.push(v);
      // The log may have been unwound below `mark` meanwhile: this run logs from where it is now.
      const base = r.log.length;
      const fuel = r.fuel;
      r.replay = answered;
      r.replayAt = 0;
      r.replayFuel = fuel;
      r.replayLoops = r.loopsLeft;
      r.fuel = fuel + spent;
      r.checkAt = Math.max(0, r.fuel - CHECK_INTERVAL);
      try {
        const out = call();
        if (r.replay !== null) throw new LispError("internal_error", "internal error: a builtin made different calls when run again");
        r.log.length = base;
        return out;
      } catch (e) {
        if (r.replay !== null) endReplay(r);
        if (e instanceof Suspend) return resumeCall(r, base, fuel + spent, e, call, loc);
        r.log.length = base;
        throw withLoc(e, loc);
      }
    }),
    loc,
  );
}
