// A run's context given as JSON text (`ctxJson`, what `ptc eval --ctx` passes). It is read
// where the program runs, as the run's first work: in the worker mode inside the worker.
//
// JSON.parse is one native call that nothing interrupts (a worker's terminate waits for it to
// finish: seconds for a 30 MB text), so the text is first scanned in JavaScript, which the
// clock and a terminate can stop: the scan counts the elements of every array and object and
// stops counting one at maxCollectionSize + 1. A top-level value holding a collection over the
// limit is cut out of the text before it is parsed, and reading that data/ key fails with
// `collection_too_large`, as it would in process; only text within the limits is parsed.
import { LispError } from "./errors.js";
import { jsonSyntaxError, overflowingNumber } from "../json/json-error.js";
import type { Limits } from "./limits.js";
import { limitError } from "./runtime.js";

// Every message about the text itself starts with this, so a caller that got the text from
// somewhere else (a command-line flag) can say where it came from instead.
const SUBJECT = "ctxJson";

// The scan calls its clock check every this many characters.
const CHECK_EVERY = 1 << 16;

/** A top-level value the scan refused: where it is in the text, and the error reading it gives. */
interface Cut {
  key: string;
  start: number;
  end: number;
  error: LispError;
}

/**
 * The context the text holds: a JSON object, or a `value_error` saying why not. `check` is
 * called as the scan goes (it throws to stop it, at the time limit).
 */
export function parseContextJson(text: string, ctx: object | undefined, limits: Pick<Limits, "maxCollectionSize">, check: () => void): Record<string, unknown> {
  if (ctx !== undefined) throw new LispError("value_error", "give either ctx or ctxJson, not both");
  // A byte order mark opens text saved by some editors; JSON read from a file drops it when the
  // bytes are decoded (src/json/text-input.ts), and text given as a string is read the same.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const cuts = scan(text, limits.maxCollectionSize, check);
  let kept = text;
  if (cuts.length > 0) {
    kept = "";
    let from = 0;
    for (const c of cuts) {
      kept += text.slice(from, c.start) + "null";
      from = c.end;
    }
    kept += text.slice(from);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(kept);
  } catch (e) {
    // JSON.parse says where the text went wrong; a text with cuts is parsed again whole for
    // the place in the caller's text.
    if (cuts.length > 0) return parseContextJson(text, undefined, { maxCollectionSize: Infinity }, check);
    throw new LispError("value_error", `${SUBJECT} is not valid JSON: ${jsonSyntaxError(kept, e)}`);
  }
  const overflow = overflowingNumber(text);
  if (overflow !== undefined) throw new LispError("value_error", `${SUBJECT} is not valid JSON: ${overflow}`);
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    const got = Array.isArray(parsed) ? "an array" : JSON.stringify(parsed).slice(0, 80);
    throw new LispError("value_error", `${SUBJECT} must be a JSON object such as {"orders": [...]}, got ${got}`);
  }
  for (const c of cuts) {
    Object.defineProperty(parsed, c.key, {
      enumerable: true,
      get: () => {
        throw c.error;
      },
    });
  }
  return parsed as Record<string, unknown>;
}

/**
 * The top-level values of a JSON object text that hold a collection of more than `max`
 * elements. Text that is not an object, or not JSON, gives what it can: JSON.parse has the
 * last word on the syntax.
 */
function scan(text: string, max: number, check: () => void): Cut[] {
  const cuts: Cut[] = [];
  if (max === Infinity) return cuts;
  let i = 0;
  const n = text.length;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== 123 /* { */) return cuts;
  // Elements counted so far in each open collection, outermost first (a comma adds one, the first value makes it one).
  const counts: number[] = [];
  let key = "";
  let keyNext = true;
  let valueStart = -1;
  let over = false;
  let nextCheck = CHECK_EVERY;
  while (i < n) {
    if (i >= nextCheck) {
      check();
      nextCheck = i + CHECK_EVERY;
    }
    const c = text.charCodeAt(i);
    const depth = counts.length;
    if (c === 34 /* " */) {
      const end = stringEnd(text, i);
      if (end < 0) return cuts;
      if (depth === 1 && keyNext) {
        try {
          key = JSON.parse(text.slice(i, end)) as string;
        } catch {
          return cuts;
        }
      }
      if (depth > 0 && counts[depth - 1] === 0) counts[depth - 1] = 1;
      i = end;
      continue;
    }
    if (c === 123 || c === 91 /* { [ */) {
      if (depth > 0 && counts[depth - 1] === 0) counts[depth - 1] = 1;
      if (depth === 1) valueStart = i;
      counts.push(0);
    } else if (c === 125 || c === 93 /* } ] */) {
      counts.pop();
      if (counts.length === 1 && valueStart >= 0) {
        if (over) cuts.push({ key, start: valueStart, end: i + 1, error: tooLarge(key, max) });
        over = false;
        valueStart = -1;
      }
      if (counts.length === 0) return cuts;
    } else if (c === 44 /* , */) {
      if (depth === 1) keyNext = true;
      else if (++counts[depth - 1] > max) over = true;
    } else if (c === 58 /* : */) {
      if (depth === 1) keyNext = false;
    } else if (!isSpace(c) && depth > 0 && counts[depth - 1] === 0) {
      counts[depth - 1] = 1;
    }
    i++;
  }
  return cuts;
}

/** Just past the string opening at `i` (its closing quote not escaped), or -1 when it never closes. */
function stringEnd(text: string, i: number): number {
  let from = i + 1;
  for (;;) {
    const q = text.indexOf('"', from);
    if (q < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(q - 1 - slashes) === 92 /* \ */) slashes++;
    if (slashes % 2 === 0) return q + 1;
    from = q + 1;
  }
}

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;

function tooLarge(key: string, max: number): LispError {
  return new LispError("collection_too_large", `data/${key} holds a collection of more than ${max} elements, over the limit of ${max} (maxCollectionSize)`, undefined, "give the program a smaller slice of the data, or page through it with a tool");
}

/**
 * What is wrong with the text, after its subject (" is not valid JSON: ..."), when that is why a
 * run failed (`error` a run's error, or what parseContextJson threw); null otherwise.
 */
export function contextJsonProblem(error: unknown): string | null {
  const e = error as { kind?: unknown; message?: unknown } | null;
  if (typeof e !== "object" || e === null || e.kind !== "value_error" || typeof e.message !== "string") return null;
  return e.message.startsWith(`${SUBJECT} `) ? e.message.slice(SUBJECT.length) : null;
}

/** The time limit's error when reading the text took all of it. */
export function contextJsonTimeout(timeoutMs: number): LispError {
  return limitError("timeout", `reading the context (ctxJson) took longer than the time limit of ${timeoutMs} ms (timeoutMs)`, "give the run less context data, or let a tool fetch it in pages");
}
