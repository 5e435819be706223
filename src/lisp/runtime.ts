// The state of one evaluation: budgets, output, globals, and the host's tools and data.
// Closures and builtins reach it through the module-level `run`, which `activate` swaps:
// each stretch of evaluation between tool results is synchronous and activates its own
// state first (suspend.ts), so two evaluations never interleave inside one stretch.
import { abortedError, LispError, withLoc, type LimitKind, type SourceLoc } from "./errors.js";
import type { FnArityNode } from "./analyzer/nodes.js";
import type { AsyncCode } from "./fn.js";
import { MAX_ARRAY_LENGTH, STACK_SAFE_DEPTH, type Limits } from "./limits.js";
import type { Origin } from "./marks.js";
import { OutputBuffer } from "./output.js";
import type { Value } from "./values.js";

/** A global definition: what `def` binds and what memory carries between evaluations. */
export class Cell {
  value: Value = null;
  bound = false;
  doc: string | undefined;
  /** Source text of the defining form, kept so functions can be shown and re-created. */
  source: string | undefined;
  constructor(readonly name: string) {}
}

export class GlobalEnv {
  readonly cells = new Map<string, Cell>();
  /** Names defined by the current program, in order (re-definitions move to the end). */
  readonly defined: string[] = [];

  cell(name: string): Cell {
    let c = this.cells.get(name);
    if (c === undefined) {
      c = new Cell(name);
      this.cells.set(name, c);
    }
    return c;
  }

  define(name: string, value: Value, doc: string | undefined, source: string | undefined): Cell {
    const c = this.cell(name);
    c.value = value;
    c.bound = true;
    c.doc = doc;
    c.source = source;
    const i = this.defined.indexOf(name);
    if (i >= 0) this.defined.splice(i, 1);
    this.defined.push(name);
    return c;
  }
}

/**
 * How the interpreter reaches the host's tools. A call returns a promise of the result (or
 * throws at once when the call itself is refused, e.g. over a cap): code compiled in the
 * suspendable mode waits for it where the call is and goes on from there.
 */
export interface ToolHost {
  has(name: string): boolean;
  names(): string[];
  call(name: string, args: Value, loc: SourceLoc | undefined): Promise<Value>;
}

/** How the interpreter reads `data/key` context. */
export interface DataHost {
  has(key: string): boolean;
  get(key: string): Value;
  keys(): string[];
}

/** The clock of an evaluation that brings none. */
export const defaultClock = (): number => performance.now();

// How often (in fuel units) the slow path looks at the clock and the abort signal.
export const CHECK_INTERVAL = 10_000;

/**
 * What a run's provenance marks (marks.ts) hear of values a program takes out of others without a
 * builtin (a key's value, an element a loop or a pattern binds, a character).
 */
export interface Taking {
  /** `key`: what `part` was looked up by, when it was (a value kept under a hidden key tells that key). */
  took(from: Value, part: Value, key?: Value): void;
  /** What a function made by a builtin (partial, constantly, memoize, ...) returned: computed from it when it holds hidden values. */
  returned(f: Value, r: Value): void;
  /** `part` kept inside `holder` (memoize's cache): the holder then holds a mark `part` holds, which is returned for the holder to keep with it. */
  stored(holder: Value, part: Value): Origin | undefined;
  /** `part`, kept inside `holder` with the mark `stored` returned, read back: in a later evaluation too, whose marks never saw it kept. */
  recalled(holder: Value, part: Value, mark: Origin): void;
  /** Text the interpreter wrote with the hidden values it quotes shown as stand-ins. */
  hideText(text: string): string;
  /** `whole`, which a builtin computed from `parts` (what a function it was given returned): computed from them when they hold hidden values. */
  builtFrom(parts: Value, whole: Value): void;
  /** `whole`, which a builtin ordered by `keys`: computed from them when one was computed from hidden context. */
  orderedBy(keys: readonly Value[], whole: Value): void;
}

/** What (with-out-str ...) has captured: the text, and a value printed into it that holds hidden context (the marks tell it). */
export interface Captured {
  text: string;
  hidden: Value;
}

/** Output captured by (with-out-str ...) made a string: marked as computed from the hidden values printed into it. */
export function capturedText(c: Captured): string {
  return c.hidden === null ? c.text : (builtFrom(c.hidden, c.text) as string);
}

/** The state of one evaluation, from its first step to its last, across every tool call. */
export class RunState {
  /** The evaluation's "now" (ms since the epoch), fixed for the whole run. */
  readonly clock = Date.now();
  fuel: number;
  checkAt: number;
  /** now() past which the program has run too long; moved on by time spent waiting for tools. */
  deadline: number;
  depth = 0;
  loopsLeft: number;
  toolCalls = 0;
  readonly out: OutputBuffer;
  /** Text written by `print` that no newline has ended yet (its end, when it is longer than the output limit). */
  pendingLine = "";
  /** Characters cut from the start of `pendingLine`. */
  pendingElided = 0;
  /**
   * Told each line as it is output: the host's `EvaluateOptions.onPrint` (see `whileWhole`), or
   * the isolated mode's worker, which sends every line to the host.
   */
  onLine: ((line: string) => void) | null = null;
  /**
   * Told at each check of the clock, with the fuel used so far (the isolated mode's worker: lines
   * it holds for a batch go to the host there, since its timers cannot fire while the program
   * computes, and the fuel is where the host reads it if it ends the worker).
   */
  onCheck: ((fuelUsed: number) => void) | null = null;
  /** Where println writes inside (with-out-str ...) instead of the output, innermost first. */
  captured: Captured | null = null;
  /** Whether the program was compiled in the suspendable mode (it can reach a tool). */
  readonly suspendable: boolean;
  /** The run's provenance marks, when it may meet hidden context. */
  marks: Taking | null = null;
  /** Set when the evaluation has ended: continuations still waiting on tools then stop. */
  stopped = false;
  /** When the last stretch of evaluation ended (now()); the gap to the next one is waiting. */
  lastActive = 0;
  /**
   * Results of the functions a builtin called back, in order, while the builtin runs inside a
   * suspendable program: if one of them waits on a tool, the builtin is run again once the
   * result is in, and these answer its calls up to that point (see suspend.ts).
   */
  readonly log: Value[] = [];
  replay: Value[] | null = null;
  replayAt = 0;
  /** Fuel and loop budget to restore when a replay has answered its last call: a builtin's own work counts once. */
  replayFuel = 0;
  replayLoops = 0;

  constructor(
    readonly limits: Limits,
    readonly env: GlobalEnv,
    readonly tools: ToolHost | null,
    readonly data: DataHost | null,
    readonly signal: AbortSignal | undefined,
    /**
     * The suspendable compiler, when the program was compiled in that mode: a function made by
     * the synchronous compiler (in this run or one before, kept in memory) gets its suspendable
     * body from it the first time such a program calls it.
     */
    readonly compileArity: ((a: FnArityNode) => AsyncCode) | null = null,
    /** The monotonic clock (ms) the time limit reads. */
    readonly now: () => number = defaultClock,
    /** When the run started (read from `now`): reading and compiling the program count towards its time. */
    started: number = now(),
  ) {
    this.fuel = limits.maxFuel;
    this.checkAt = Math.max(0, limits.maxFuel - CHECK_INTERVAL);
    this.deadline = started + limits.timeoutMs;
    this.loopsLeft = limits.maxLoopIterations;
    this.out = new OutputBuffer(limits.maxOutputChars);
    this.suspendable = compileArity !== null;
  }
}

/** Adds a line to the output and tells the run's listener, if any. */
export function output(r: RunState, line: string, elided = 0): void {
  r.out.push(line, elided);
  r.onLine?.(line);
}

/**
 * A host's print listener as it hears lines added to `out`: while the output is whole, so it
 * hears what the result's `prints` hold before the output limit cuts in (in process and on the
 * host side of a worker alike).
 */
export function whileWhole(out: OutputBuffer, listener: ((line: string) => void) | null): ((line: string) => void) | null {
  return listener === null ? null : (line) => void (out.truncated || listener(line));
}

/** A host listener that cannot disturb the program: what it throws is dropped. */
export function quietly<A extends unknown[]>(f: ((...args: A) => void) | undefined): ((...args: A) => void) | null {
  if (f === undefined) return null;
  return (...args: A) => {
    try {
      f(...args);
    } catch {
      // A progress listener's failure is the host's, not the program's.
    }
  };
}

export let run: RunState;

/** The provenance marks of the run in progress, if any (none outside a run). */
export function runMarks(): Taking | null {
  return (run as RunState | undefined)?.marks ?? null;
}

/** `part`, taken out of `from` by the program (looked up by `key`), told to the run's marks (when a run with marks is in progress). */
export function took(from: Value, part: Value, key?: Value): Value {
  runMarks()?.took(from, part, key);
  return part;
}

/** `r`, returned by `f`, told to the run's marks (`Taking.returned`). */
export function returned(f: Value, r: Value): Value {
  runMarks()?.returned(f, r);
  return r;
}

/** `whole`, computed by a builtin from `parts`, told to the run's marks (`Taking.builtFrom`). */
export function builtFrom(parts: Value, whole: Value): Value {
  runMarks()?.builtFrom(parts, whole);
  return whole;
}

/** `whole`, ordered by a builtin by `keys`, told to the run's marks (`Taking.orderedBy`). */
export function orderedBy(keys: readonly Value[], whole: Value): Value {
  runMarks()?.orderedBy(keys, whole);
  return whole;
}

/** `part`, kept inside `holder`, told to the run's marks (`Taking.stored`): the mark to keep with it, if it holds one. */
export function stored(holder: Value, part: Value): Origin | undefined {
  return runMarks()?.stored(holder, part);
}

/** `part`, read back from `holder` where it was kept with `mark`, told to the run's marks (`Taking.recalled`). */
export function recalled(holder: Value, part: Value, mark: Origin): Value {
  runMarks()?.recalled(holder, part, mark);
  return part;
}

/** An error message as a program may read it (a caught error): hidden values it quotes as stand-ins. */
export function shownMessage(text: string): string {
  return runMarks()?.hideText(text) ?? text;
}

/** The fuel a run has used so far (its count may dip below zero just before the limit fires). */
export function fuelUsed(r: RunState): number {
  return r.limits.maxFuel - Math.max(0, r.fuel);
}

/** Makes `s` the current state and returns the previous one (to restore afterwards). */
export function activate(s: RunState): RunState {
  const prev = run;
  run = s;
  return prev;
}

export function limitError(kind: LimitKind, message: string, hint?: string): LispError {
  return new LispError(kind, message, undefined, hint);
}

/** Charges `n` evaluation steps. */
export function charge(n: number): void {
  const r = run;
  r.fuel -= n;
  if (r.fuel < r.checkAt) slowCheck(r);
}

/**
 * Charges a value walk (equality, hashing keys, printing, conversion) to the run in progress, if
 * any: the same walk outside a run (a host comparing or printing values) is bounded by its caller.
 */
/**
 * A native read of `length` characters (a scan, a hash, a compare) in a run, from `from` characters
 * on: one unit per 64, the rate string builtins pay, so a loop of such reads reaches the clock.
 */
export function chargeRead(length: number, from = 64): void {
  if (length >= from) chargeIfRunning(length >>> 6);
}

export function chargeIfRunning(n: number): void {
  const r = run as RunState | undefined;
  if (r === undefined || r.stopped) return;
  r.fuel -= n;
  if (r.fuel < r.checkAt) slowCheck(r);
}

/** The checks behind a fuel checkpoint: budget, clock, abort signal. */
export function slowCheck(r: RunState): void {
  if (r.fuel < 0) throw fuelExhausted(r.limits);
  checkClock(r);
  // Never below zero: running out of fuel must always reach this check.
  r.checkAt = Math.max(0, r.fuel - CHECK_INTERVAL);
}

/**
 * For a builtin's long loop whose fuel was charged up front: every 4,096 elements it checks the
 * clock and the abort signal, so a limit fires on time inside one big frequencies or into.
 */
export function tick(i: number): void {
  if ((i & 4095) === 4095) checkClock(run);
}

let operations = 0;

/**
 * One lookup or change of a map or set, in a run or not: every 4,096 of them the run in progress
 * checks its clock, so a builtin that charged a big input up front and then hands it to immutable
 * element by element (a set operation, a set built from a vector) stops on time inside that work.
 */
export function tickIfRunning(): void {
  if ((++operations & 4095) !== 0) return;
  const r = run as RunState | undefined;
  if (r !== undefined && !r.stopped) checkClock(r);
}

export function fuelExhausted(limits: Pick<Limits, "maxFuel">): LispError {
  return limitError(
    "fuel_exhausted",
    `the program used up its budget of ${limits.maxFuel} evaluation steps`,
    "do less work per program: narrow the data first, and use a map lookup or group-by instead of nested scans",
  );
}

/** The clock and abort checks of the run in progress now, if there is one: for a native loop whose steps cost more than a tick's. */
export function checkClockIfRunning(): void {
  const r = run as RunState | undefined;
  if (r !== undefined && !r.stopped) checkClock(r);
}

function checkClock(r: RunState): void {
  if (r.now() > r.deadline) throw timeoutError(r.limits.timeoutMs);
  if (r.signal?.aborted) throw abortedError();
  r.onCheck?.(fuelUsed(r));
}

/** The time limit's error, however it was noticed (here, or by the host ending a worker). */
export function timeoutError(timeoutMs: number): LispError {
  return limitError("timeout", `the program ran longer than ${timeoutMs} ms`, "look for a loop that never ends, or process less data per program");
}

/** One loop iteration (recur, dotimes, doseq, for); `loc` is the loop's, for the error. */
export function chargeLoop(loc: SourceLoc | undefined): void {
  const r = run;
  if (--r.loopsLeft < 0) {
    throw withLoc(limitError("loop_limit_exceeded", `more than ${r.limits.maxLoopIterations} loop iterations`, "make sure every loop moves toward its exit condition"), loc);
  }
  r.fuel -= 1;
  if (r.fuel < r.checkAt) {
    try {
      slowCheck(r);
    } catch (e) {
      throw withLoc(e, loc);
    }
  }
}

export function depthExceeded(): LispError {
  return limitError(
    "depth_exceeded",
    `function calls nested deeper than ${run.limits.maxCallDepth}`,
    "use loop/recur (or reduce) instead of deep recursion",
  );
}

/** How deep a walk of a value (comparing, hashing) may nest: the run's maxNestingDepth, never past what the host stack takes. */
export function nestingLimit(): number {
  const r = run as RunState | undefined;
  return r === undefined || r.stopped ? STACK_SAFE_DEPTH : Math.min(r.limits.maxNestingDepth, STACK_SAFE_DEPTH);
}

export function checkCollectionSize(n: number): void {
  if (n > run.limits.maxCollectionSize) {
    throw limitError(
      "collection_too_large",
      `a collection of ${n} elements exceeds the limit of ${run.limits.maxCollectionSize}`,
      "work on a smaller slice of the data (take, filter first)",
    );
  }
}

/**
 * n elements of an array a builtin is about to make for its own use (the characters of a text it
 * walks), checked before it is made: past MAX_ARRAY_LENGTH the engine would abort the process.
 */
export function checkArrayLength(n: number): void {
  if (n > MAX_ARRAY_LENGTH) {
    throw limitError("collection_too_large", `a collection of ${n} elements exceeds the most one array holds, ${MAX_ARRAY_LENGTH}`, "work on a smaller slice of the text (subs first)");
  }
}

/**
 * `a + b`, a string a program builds, checked before it is joined: past the engine's longest
 * string the join itself throws a RangeError, with no position, before any check after it.
 */
export function joinChecked(a: string, b: string): string {
  if (a.length + b.length > run.limits.maxStringLength) checkStringLength(a.length + b.length);
  return a + b;
}

export function checkStringLength(n: number): void {
  if (n > run.limits.maxStringLength) {
    throw limitError(
      "string_too_large",
      `a string of ${n} characters exceeds the limit of ${run.limits.maxStringLength}`,
      "build smaller strings; print a summary instead of the whole data",
    );
  }
}
