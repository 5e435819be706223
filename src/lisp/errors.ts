// Every failure a program can meet is a LispError: our own record with a kind, a message
// written for an LLM reader, a source position and an optional hint. It deliberately does
// not extend Error, so no host stack trace is ever captured or shown.
import { cutPoint, tailPoint } from "./cuts.js";

export type Phase = "read" | "analysis" | "runtime";

/** Limit kinds: the sandbox stopped the program. Program code can neither catch nor raise these. */
export const LIMIT_KINDS = [
  "timeout",
  "fuel_exhausted",
  "loop_limit_exceeded",
  "depth_exceeded",
  "collection_too_large",
  "string_too_large",
  "regex_limit_exceeded",
  "nesting_too_deep",
  "tool_limit_exceeded",
  "source_too_large",
  "memory_exceeded",
] as const;
export type LimitKind = (typeof LIMIT_KINDS)[number];

export type ErrorKind =
  | "parse_error"
  | "invalid_form"
  | "arity_error"
  | "type_error"
  | "unbound_var"
  | "not_callable"
  | "arithmetic_error"
  | "destructure_error"
  | "cannot_shadow_builtin"
  | "index_out_of_bounds"
  | "unknown_tool"
  | "tool_error"
  | "tool_timeout"
  | "regex_error"
  | "value_error"
  | "exception"
  | "aborted"
  | "internal_error"
  | LimitKind;

const limitKinds: ReadonlySet<string> = new Set(LIMIT_KINDS);
export const isLimitKind = (k: string): k is LimitKind => limitKinds.has(k);

/**
 * The error a tool call's record stands for when the call's result ran into a limit (resume
 * replays it): the limit again, so the replayed program stops as the saved one did, not with
 * tool_error. Null for a kind that is not a limit.
 */
export function recordedLimit(kind: string | undefined, message: string, hint?: string): LispError | null {
  return kind !== undefined && isLimitKind(kind) ? new LispError(kind, message, undefined, hint) : null;
}

/** The fields a call's record keeps of the limit its result ran into (see recordedLimit). */
export function limitRecord(e: { kind: string; hint?: string }): { errorKind: string; errorHint?: string } {
  return e.hint === undefined ? { errorKind: e.kind } : { errorKind: e.kind, errorHint: e.hint };
}

/** A limit error a tool's call threw (a replayed one, see recordedLimit), else null. */
export function limitThrown(e: unknown): LispError | null {
  const own = ours(e);
  return own instanceof LispError && isLimitKind(own.kind) ? own : null;
}

export interface SourceLoc {
  /** 1-based line. */
  line: number;
  /** 1-based column. */
  column: number;
  /** 0-based offset of the first character. */
  offset: number;
  /** 0-based offset just past the form. */
  end: number;
  /** The program text the position refers to. */
  source?: string;
}

export class LispError {
  loc: SourceLoc | undefined;
  /** Names of the user functions the error passed through, innermost first. */
  readonly fnTrace: string[] = [];
  /** The value given to (throw ...), or ex-info data. */
  data: unknown = null;

  constructor(
    readonly kind: ErrorKind,
    readonly message: string,
    loc?: SourceLoc,
    readonly hint?: string,
    public phase: Phase = "runtime",
  ) {
    this.loc = loc;
  }

  get isLimit(): boolean {
    return isLimitKind(this.kind);
  }
}

/**
 * What host code (a getter, a Proxy trap) threw while the host's input `what` was read: our own
 * error as it is, anything else named without its message, which is host text that may quote a
 * secret.
 */
export function unreadable(e: unknown, what: string): LispError {
  return e instanceof LispError ? e : new LispError("value_error", `${what} could not be read (reading it threw)`);
}

export function abortedError(): LispError {
  return new LispError("aborted", "the evaluation was aborted by the host");
}

/** What a call that outlives its timeout rejects with (settle's timer, or a host's own, as the agent's tool session). */
export class ToolTimeout {
  constructor(readonly ms: number) {}
}

/** What a thrown tool failure says (a value that is not an Error says only that the tool failed). */
export function thrownMessage(e: unknown): string {
  // A tool may throw anything: an Error whose message getter throws, a Proxy whose traps do.
  // Only a message that reads cleanly as a string is passed on.
  try {
    const m: unknown = e instanceof LispError || e instanceof Error ? e.message : e;
    return typeof m === "string" ? m : "tool failed";
  } catch {
    return "tool failed (its error could not be read)";
  }
}

// A tool's message is host text, and a host may throw megabytes (an HTTP body quoted whole): it
// is cut as a thrown message is (core/exceptions.ts), once what it echoes of hidden values is hidden.
const MAX_TOOL_MESSAGE = 1000;

/** A tool's failure message as the program and the record keep it: cut past 1,000 characters (cutting again leaves it as it is). */
export function toolMessage(text: string): string {
  return text.length <= MAX_TOOL_MESSAGE + 1 ? text : text.slice(0, cutPoint(text, MAX_TOOL_MESSAGE)) + "…";
}

/** Attaches a position to an error that does not have one yet (the innermost position wins). */
export function withLoc<E>(e: E, loc: SourceLoc | undefined): E | LispError {
  // The host stack overflowing (hashing, comparing or walking data nested deeper than it) is
  // named here, at the innermost call of the program it happened in, so the error has a place.
  const own = e instanceof LispError ? e : isStackOverflow(e) ? stackOverflow() : null;
  if (own === null) return e;
  own.loc ??= loc;
  return own;
}

const MAX_SOURCE_MESSAGE = 300;

/**
 * A message about the program's source, its middle cut out past 300 characters: one quoting a
 * name or literal from the source (an unquoted 100 KB token read as a symbol) would repeat all
 * of it to the model. The head and the tail (what the message says of it) stay.
 */
export function aboutSource(message: string): string {
  if (message.length <= MAX_SOURCE_MESSAGE) return message;
  const head = message.slice(0, cutPoint(message, MAX_SOURCE_MESSAGE - 100));
  return head + "…" + message.slice(tailPoint(message, message.length - 99));
}

/** Data past a nesting bound: what a walk of it (printing, comparing, crossing) `cannot` do at `limit` levels. */
export function nestedTooDeep(limit: number, cannot: string, hint?: string): LispError {
  return new LispError("nesting_too_deep", `data nested deeper than ${limit} levels cannot ${cannot}`, undefined, hint);
}

/**
 * V8's "Maximum call stack size exceeded". Asked where the stack has just run out, so no
 * regular expression: compiling one there (on its first use, or when V8 tiers it up) fails with
 * a SyntaxError of its own, which hid the overflow as an internal_error.
 */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && e.message.includes("call stack");
}

export function stackOverflow(): LispError {
  return new LispError("depth_exceeded", "the program nested too deeply (recursion or deeply nested data)", undefined, "use loop/recur instead of deep recursion, and keep data shallow");
}

export function typeErr(message: string, hint?: string): LispError {
  return new LispError("type_error", message, undefined, hint);
}

/** The public, JSON-friendly shape of an error. */
export interface ErrorInfo {
  kind: ErrorKind;
  message: string;
  phase: Phase;
  line?: number;
  column?: number;
  hint?: string;
  /** The offending source line with a caret under the column. */
  excerpt?: string;
  /** User functions the error passed through, innermost first. */
  trace?: string[];
}

/** Said of an error located in a function an earlier program (an earlier REPL entry, agent turn) defined: its line is counted in that program. */
export const IN_EARLIER_PROGRAM = " (in code defined by an earlier program)";

export function toErrorInfo(e: LispError, source?: string): ErrorInfo {
  const info: ErrorInfo = { kind: e.kind, message: e.message, phase: e.phase };
  if (e.loc) {
    info.line = e.loc.line;
    info.column = e.loc.column;
    const text = e.loc.source ?? source;
    if (text !== undefined) info.excerpt = excerpt(text, e.loc.line, e.loc.column);
    if (source !== undefined && e.loc.source !== undefined && e.loc.source !== source) info.message += IN_EARLIER_PROGRAM;
  }
  if (e.hint) info.hint = e.hint;
  if (e.fnTrace.length > 0) info.trace = collapse(e.fnTrace);
  return info;
}

// Recursion repeats one name many times: `f` ×12 reads better than twelve `f`s.
function collapse(names: readonly string[]): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < names.length && out.length < 8) {
    let j = i;
    while (j < names.length && names[j] === names[i]) j++;
    out.push(j - i > 1 ? `${names[i]} ×${j - i}` : names[i]);
    i = j;
  }
  return out;
}

const MAX_EXCERPT_LINE = 160;

/**
 * `  3 | (+ "a" 1)` and a caret line under the column. Long lines are windowed around the column.
 * `firstLine` is the number of the source's first line where it is part of a longer text.
 */
export function excerpt(source: string, line: number, column: number, firstLine = 1): string | undefined {
  const lines = source.split("\n");
  let text = lines[line - 1];
  if (text === undefined) return undefined;
  let col = Math.max(1, column);
  if (text.length > MAX_EXCERPT_LINE) {
    // The window's edges never split an emoji: half of one is a lone surrogate, invalid text on the wire.
    const start = tailPoint(text, Math.max(0, col - 1 - MAX_EXCERPT_LINE / 2));
    const end = cutPoint(text, start + MAX_EXCERPT_LINE);
    text = (start > 0 ? "…" : "") + text.slice(start, end) + (end < text.length ? "…" : "");
    col = col - start + (start > 0 ? 1 : 0);
  }
  const gutter = String(line + firstLine - 1);
  const pad = " ".repeat(gutter.length);
  // Tabs before the column stay tabs, so the caret lines up however wide the terminal draws them.
  const lead = text.slice(0, col - 1).replace(/[^\t]/g, " ");
  return `${gutter} | ${text}\n${pad} | ${lead}${" ".repeat(Math.max(0, col - 1 - lead.length))}^`;
}

/** Renders an error the way the CLI and the agent feedback show it. */
export function formatError(info: ErrorInfo): string {
  // Public: a host may pass an ok result's error (undefined) or anything else.
  if (typeof info !== "object" || info === null || typeof info.kind !== "string" || typeof info.message !== "string") {
    const got = info === null ? "null" : typeof info === "object" ? "an object without them" : typeof info;
    throw new TypeError(`formatError: error must be an EvalResult's error (with kind and message), got ${got}`);
  }
  const where = info.line !== undefined ? ` (line ${info.line}, column ${info.column})` : "";
  let out = `${info.kind}: ${info.message}${where}`;
  if (info.excerpt) out += "\n" + info.excerpt;
  if (info.trace && info.trace.length > 0) out += `\nin: ${info.trace.join(" <- ")}`;
  if (info.hint) out += `\nhint: ${info.hint}`;
  return out;
}

/**
 * `info`, located in `source`, for a source that is part of a longer text from its line
 * `firstLine` on (an entry of a REPL session): its line, the excerpt's gutter and the lines its
 * message cites (a delimiter "opened at line N") counted from the start of that text.
 */
export function relocate(info: ErrorInfo, source: string, firstLine: number): ErrorInfo {
  if (info.line === undefined || firstLine === 1) return info;
  const shift = firstLine - 1;
  // Only the reader's delimiter errors cite a line; a program's own message (ex-info) is its text.
  const message = info.kind === "parse_error" ? info.message.replace(/\bopened at line (\d+)/g, (_, n: string) => `opened at line ${Number(n) + shift}`) : info.message;
  const out: ErrorInfo = { ...info, line: info.line + shift, message };
  const text = excerpt(source, info.line, info.column ?? 1, firstLine);
  if (text !== undefined) out.excerpt = text;
  return out;
}

/** The thrown value when it is one of ours; null for anything a tool threw (even a hostile Proxy). */
export function ours(e: unknown): LispError | ToolTimeout | null {
  try {
    return e instanceof LispError || e instanceof ToolTimeout ? e : null;
  } catch {
    return null;
  }
}
