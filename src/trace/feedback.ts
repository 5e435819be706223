// The user message after a turn: what the program printed (bounded), what went wrong
// (line:column, caret excerpt, hint), the names now in memory, and where the run stands.
// Pure, so prompt views can re-render it (the compressed view leaves the prints out).
import { cutPoint, type ErrorInfo } from "../lisp/index.js";
import type { ToolCallTrace, Turn } from "./trace.js";

export interface FeedbackInfo {
  maxTurns: number;
  /** The run withdraws its tools on the final turn (it has tools and more than one turn). */
  toolsWithdrawn?: boolean;
}

export interface FeedbackOptions {
  /** Include the println output. Views that show output elsewhere pass false. */
  prints: boolean;
  /** Characters of println output shown before it is cut (default 4000). */
  maxPrintChars?: number;
  /** Show only the most recent this many of the lines the model saw (a view dropped the older ones: counted, see renderOutput), with the cut note. */
  printsShown?: number;
  /** Show an error's excerpt, call trail and hint (default true); false keeps its first line. */
  errorDetail?: boolean;
  /** List the names in memory (default true). Views whose history shows every live name pass false. */
  stored?: boolean;
}

export const DEFAULT_MAX_PRINT_CHARS = 4000;
const MAX_STORED_NAMES = 60;

/** The println lines the model was shown: the head that fits `maxChars`, and the note when the rest was cut. */
export interface SeenPrints {
  lines: readonly string[];
  /** `[output cut: ...]` when the output was cut, else undefined. */
  cut: string | undefined;
}

/**
 * The head of a turn's println output that fits `maxChars` (cut at a line break when one is
 * past half of it), as whole lines plus a last partial one: what the feedback shows, so
 * every later view can show the same lines.
 */
export function seenPrints(prints: readonly string[], maxChars: number = DEFAULT_MAX_PRINT_CHARS): SeenPrints {
  const text = prints.join("\n");
  const total = text.length;
  if (total <= maxChars) return { lines: prints, cut: undefined };
  const at = text.lastIndexOf("\n", maxChars);
  const shown = at > maxChars / 2 ? at : cutPoint(text, maxChars);
  const lines: string[] = [];
  let offset = 0;
  for (const p of prints) {
    if (offset >= shown) break;
    lines.push(offset + p.length <= shown ? p : p.slice(0, shown - offset));
    offset += p.length + 1;
  }
  return { lines, cut: `[output cut: showing ${shown} of ${total} characters; print less, e.g. counts, (take 3 xs) or selected keys]` };
}

/** The most recent `shown` of the lines the model saw, then the cut note if its output was cut. */
export function renderSeenPrints(seen: SeenPrints, shown: number = seen.lines.length): string {
  const lines = shown >= seen.lines.length ? seen.lines : seen.lines.slice(seen.lines.length - Math.max(0, shown));
  return seen.cut === undefined ? lines.join("\n") : [...lines, seen.cut].join("\n");
}

/**
 * The println section of the lines the model saw: `Output:` and the lines, or `Output (N dropped):`
 * and the most recent `shown` when a view dropped the oldest N, `Output (N dropped)` when it dropped
 * them all, so a program's println calls never read as printing nothing, or only the lines left.
 */
export function renderOutput(seen: SeenPrints, shown: number = seen.lines.length): string {
  const dropped = seen.lines.length - Math.max(0, Math.min(shown, seen.lines.length));
  if (dropped === 0) return `Output:\n${renderSeenPrints(seen)}`;
  if (dropped === seen.lines.length) return `Output (${dropped} dropped)`;
  return `Output (${dropped} dropped):\n${renderSeenPrints(seen, shown)}`;
}

/** The println section: `Output:` and the lines, cut at `maxChars` with a note saying so. */
export function renderPrints(prints: readonly string[], maxChars: number = DEFAULT_MAX_PRINT_CHARS): string {
  return `Output:\n${renderSeenPrints(seenPrints(prints, maxChars))}`;
}

/** An error as the LLM reads it: position, kind and message, caret excerpt, call trail, hint. */
export function renderError(e: ErrorInfo, detail = true): string {
  const where = e.line !== undefined ? ` at line ${e.line}, column ${e.column ?? 1}` : "";
  const lines = [`Error${where}: ${e.kind}: ${e.message}`];
  if (!detail) return lines[0];
  if (e.excerpt) lines.push(e.excerpt);
  if (e.trace && e.trace.length > 0) lines.push(`in: ${e.trace.join(" <- ")}`);
  if (e.hint) lines.push(`Hint: ${e.hint}`);
  return lines.join("\n");
}

/**
 * Where a paused turn's program stopped: its error is the stop the approval gate made (an abort
 * the host never asked for), not a failure, and reads as such in `ptc trace show` and the viewer.
 */
export function renderPause(e: ErrorInfo, detail = true): string {
  const where = e.line !== undefined ? ` at line ${e.line}, column ${e.column ?? 1}` : "";
  const head = `Paused${where}, waiting for the host's approval`;
  return detail && e.excerpt ? `${head}\n${e.excerpt}` : head;
}

/** `Stored: a, b, c`: every name in memory after the turn, sorted. */
export function renderStored(names: readonly string[]): string {
  const sorted = [...names].sort();
  const shown = sorted.slice(0, MAX_STORED_NAMES).join(", ");
  return `Stored: ${shown}${sorted.length > MAX_STORED_NAMES ? `, ... (${sorted.length - MAX_STORED_NAMES} more)` : ""}`;
}

/** `Turn N of M.` for the coming turn, with the warning before the last turn and the final-turn notice. */
export function renderTurnLine(next: number, info: FeedbackInfo): string {
  const line = `Turn ${next} of ${info.maxTurns}.`;
  if (next === info.maxTurns) {
    return info.toolsWithdrawn
      ? `${line} This is your LAST turn and tools are now withdrawn (tool calls fail): finish with (return value) or (fail "why") using what you already have.`
      : `${line} This is your LAST turn: finish with (return value) or (fail "why").`;
  }
  if (next === info.maxTurns - 1) {
    return info.toolsWithdrawn
      ? `${line} Next turn is your last and tools will be withdrawn then: make the tool calls you still need now.`
      : `${line} Next turn is your last: get ready to (return ...).`;
  }
  return line;
}

const MAX_CALLS_LISTED = 10;
const MAX_ARGS_CHARS = 120;

/**
 * JSON.stringify(v), or its first `max` + 1 characters or more when it is longer: the writer
 * stops once past `max`, so arguments of millions of characters cost what the line shows.
 * Undefined where JSON.stringify gives undefined.
 */
function jsonPrefix(v: unknown, max: number): string | undefined {
  let out = "";
  // Whether x writes nothing (an object's member is then left out; an array's is null).
  const absent = (x: unknown): boolean => x === undefined || typeof x === "function" || typeof x === "symbol";
  const write = (x: unknown): void => {
    // Past max, what follows is never shown: the caller only learns the text is longer.
    if (out.length > max) return;
    if (typeof x === "string") {
      // A long string is quoted as far as is needed (each character is one or more of the
      // text), never splitting a surrogate pair, which would be escaped.
      const need = max + 2 - out.length;
      out += JSON.stringify(x.length > need ? x.slice(0, cutPoint(x, need)) : x);
      return;
    }
    if (typeof x !== "object" || x === null || typeof (x as { toJSON?: unknown }).toJSON === "function") {
      out += JSON.stringify(x) ?? "null";
      return;
    }
    const proto: unknown = Object.getPrototypeOf(x);
    if (Array.isArray(x)) {
      out += "[";
      for (let i = 0; i < x.length && out.length <= max; i++) {
        if (i > 0) out += ",";
        const item: unknown = x[i];
        if (absent(item)) out += "null";
        else write(item);
      }
      out += "]";
    } else if (proto === Object.prototype || proto === null) {
      out += "{";
      let first = true;
      for (const key of Object.keys(x)) {
        if (out.length > max) break;
        const value: unknown = (x as Record<string, unknown>)[key];
        if (absent(value)) continue;
        if (!first) out += ",";
        first = false;
        write(key);
        out += ":";
        write(value);
      }
      out += "}";
    } else {
      out += JSON.stringify(x) ?? "null";
    }
  };
  if (absent(v)) return undefined;
  write(v);
  return out;
}

/**
 * The tool calls a failed program made before its error: their effects (an email sent, a
 * record written) happened, so a retry must not repeat them blindly.
 */
export function renderCompletedCalls(turn: Turn): string {
  const done = turn.toolCalls.filter((c) => c.error === undefined);
  if (done.length === 0) return "";
  return `These tool calls completed before the error (their effects are not undone; do not repeat them unless you mean to):\n${callLines(done)}`;
}

/** The calls the host approved with edited arguments: the program's result came from these, not from the calls as written. */
function renderEditedCalls(turn: Turn): string {
  const edited = turn.toolCalls.filter((c) => Object.hasOwn(c, "asked"));
  if (edited.length === 0) return "";
  return `Note: the host approved ${edited.length === 1 ? "this tool call" : "these tool calls"} with other arguments than your program gave, and ${edited.length === 1 ? "it" : "they"} ran with these:\n${callLines(edited)}`;
}

/** One line per call, `tool/name {args}`, each cut to MAX_ARGS_CHARS, at most MAX_CALLS_LISTED. */
function callLines(calls: readonly ToolCallTrace[]): string {
  const lines = calls.slice(0, MAX_CALLS_LISTED).map((c) => {
    const args = jsonPrefix(c.args ?? {}, MAX_ARGS_CHARS) ?? "{}";
    return `  tool/${c.name} ${args.length > MAX_ARGS_CHARS ? args.slice(0, cutPoint(args, MAX_ARGS_CHARS - 1)) + "…" : args}`;
  });
  if (calls.length > MAX_CALLS_LISTED) lines.push(`  … and ${calls.length - MAX_CALLS_LISTED} more`);
  return lines.join("\n");
}

/** The feedback message after `turn`. */
export function renderFeedback(turn: Turn, info: FeedbackInfo, opts: FeedbackOptions): string {
  const parts: string[] = [];
  // Else the model reads the cut as its own syntax error ("add the missing ')'") and writes as much again.
  if (turn.truncated === true) parts.push("Note: your reply was cut off at the output limit (max tokens), so only what came before the cut was read. Write a shorter reply: less in one program, and little prose.");
  if (turn.notes && turn.notes.length > 0) parts.push(`Note: your program was repaired before it ran: ${turn.notes.join("; ")}.`);
  const edited = renderEditedCalls(turn);
  if (edited !== "") parts.push(edited);
  if (opts.prints) {
    if (turn.prints.length > 0) parts.push(renderOutput(seenPrints(turn.prints, opts.maxPrintChars), opts.printsShown));
    else if (turn.status === "ok") parts.push("No output: only println output is shown to you, not the program's value.");
  }
  if (turn.error !== undefined) {
    parts.push(renderError(turn.error, opts.errorDetail ?? true));
    if (turn.status === "error") {
      parts.push("Nothing from this program was stored.");
      const done = renderCompletedCalls(turn);
      if (done !== "") parts.push(done);
    }
  }
  if (turn.memory.length > 0 && (opts.stored ?? true)) parts.push(renderStored(turn.memory.map((d) => d.name)));
  if (turn.number < info.maxTurns) parts.push(renderTurnLine(turn.number + 1, info));
  return parts.join("\n\n");
}
