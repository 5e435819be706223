// The sandbox's resource limits. Every limit is enforced inside the interpreter,
// deterministically (except the wall clock), and each has its own error kind.
import { constants } from "node:buffer";
import { LispError, unreadable } from "./errors.js";

export interface Limits {
  /** Wall-clock budget for evaluating one program (tool waits excluded), in ms. */
  timeoutMs: number;
  /** Evaluation steps: one per function call and loop iteration, plus one per element a builtin touches (at most 2^53-1). */
  maxFuel: number;
  /** Total `recur` iterations (loop, fn recursion through recur, dotimes/doseq/for steps; at most 2^53-1). */
  maxLoopIterations: number;
  /** Nested function calls (our own counter; the host stack is never the limit). */
  maxCallDepth: number;
  /** Elements in any one collection a program builds (at most 2^24, the most entries a JS Map or Set holds). */
  maxCollectionSize: number;
  /**
   * Values in one piece of data crossing the host boundary (a ctx entry, a tool's result or
   * arguments, the program's result), a value reached twice through shared structure counted twice.
   */
  maxBoundaryValues: number;
  /**
   * Characters of the strings (map keys included) in one piece of data crossing the host
   * boundary, a string reached twice counted twice: a copy across a thread or into JSON writes
   * every occurrence.
   */
  maxBoundaryChars: number;
  /** Characters in any one string a program builds (at most the engine's longest string, 2^29-24 in V8). */
  maxStringLength: number;
  /** Total characters of `println` output kept (head and tail, with a marker between; an empty line counts one). */
  maxOutputChars: number;
  /** Characters in a regex pattern. */
  maxRegexPatternLength: number;
  /** Characters of input a regex may scan. */
  maxRegexInputLength: number;
  /** Nesting depth of source forms (reader) and of data that is printed, compared or converted. */
  maxNestingDepth: number;
  /** Tool calls one program may make. */
  maxToolCalls: number;
  /** Characters of program source, checked before it is read. */
  maxSourceChars: number;
  /** Forms in the program source (collections, strings and atoms), counted before it is parsed. */
  maxSourceForms: number;
}

export const defaultLimits: Readonly<Limits> = Object.freeze({
  timeoutMs: 1_000,
  maxFuel: 20_000_000,
  maxLoopIterations: 1_000_000,
  maxCallDepth: 1_000,
  maxCollectionSize: 1_000_000,
  maxBoundaryValues: 2_000_000,
  maxBoundaryChars: 20_000_000,
  maxStringLength: 1_000_000,
  maxOutputChars: 20_000,
  maxRegexPatternLength: 1_000,
  maxRegexInputLength: 1_000_000,
  maxNestingDepth: 256,
  maxToolCalls: 200,
  maxSourceChars: 200_000,
  maxSourceForms: 100_000,
});

/**
 * Deeper than this, a walk of a value on the host's stack (printing, comparing, hashing) could
 * overflow it: walks stop here whatever maxNestingDepth says, and outside a run too. Comparing
 * maps keyed by maps, the deepest walk per level, overflowed the main thread's stack near 1,000.
 */
export const STACK_SAFE_DEPTH = 500;

/**
 * The most elements any array a builtin makes may hold: V8 aborts the whole process, past any
 * catching, on an array of 2^27-2 elements ((split s "") of a 2^28-character string). Half that,
 * so a builtin's working copy of a collection at the limit fits too.
 */
export const MAX_ARRAY_LENGTH = 2 ** 26;

/** Pieces a builder handles at a time (charChunks, replace, quoting): arrays and joins of this size stay small whatever the text. */
export const CHUNK = 8192;

/**
 * The most elements a collection may hold: builtins index a collection's elements in a JS Map or
 * Set (frequencies, distinct, group-by), which holds at most 2^24 entries and past that throws
 * (frequencies of 2^24+1 distinct numbers failed with internal_error "Map maximum size exceeded").
 */
export const MAX_COLLECTION_SIZE = 2 ** 24;

/**
 * Budgets counted down one step at a time: past 2^53 a double no longer changes by one, so the
 * count would never reach the checkpoint that reads the clock and the abort signal (Infinity and
 * 1e17 ran an endless loop with no time limit). Capped there: years of steps, still a budget.
 */
const COUNTED: ReadonlySet<string> = new Set(["maxFuel", "maxLoopIterations"]);

/**
 * The most a limit may be: past these the engine, not the limit, would stop the program (a
 * walk overflowing the stack, a string longer than V8 makes: a RangeError with no position; an
 * array longer than it makes: the process aborted).
 */
function ceiling(key: string): number {
  if (key === "maxNestingDepth") return STACK_SAFE_DEPTH;
  if (key === "maxStringLength") return constants.MAX_STRING_LENGTH;
  if (key === "maxCollectionSize") return MAX_COLLECTION_SIZE;
  return COUNTED.has(key) ? Number.MAX_SAFE_INTEGER : Infinity;
}

/** Merges overrides onto the defaults, rejecting anything that is not a positive number, each at most its `ceiling`. */
export function resolveLimits(overrides?: Partial<Limits>): Limits {
  const out: Limits = { ...defaultLimits };
  if (!overrides) return out;
  let entries: [string, unknown][];
  try {
    entries = Object.entries(overrides);
  } catch (e) {
    throw unreadable(e, "limits");
  }
  for (const [key, value] of entries) {
    if (!Object.prototype.hasOwnProperty.call(defaultLimits, key)) {
      throw new LispError("value_error", `unknown limit '${key}'; known limits: ${Object.keys(defaultLimits).join(", ")}`);
    }
    if (value === undefined) continue;
    if (typeof value !== "number" || !(value > 0)) {
      throw new LispError("value_error", `limit '${key}' must be a positive number, got ${String(value)}`);
    }
    out[key as keyof Limits] = Math.min(value, ceiling(key));
  }
  return out;
}

/** setTimeout fires at once for delays past 2^31-1 ms (about 24.8 days): longer limits set no timer. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
