// `ptc repl`: an interactive loop. An entry may span several lines: input is collected until
// its delimiters balance. Definitions persist from one entry to the next through the same
// `memory` the agent runtime uses, so the REPL behaves like successive agent turns.
import { createInterface } from "node:readline";
import { defaultLimits, evaluate, excerpt, IN_EARLIER_PROGRAM, relocate, type ErrorInfo, type Memory } from "../lisp/index.js";
import { textLines, TextInputError } from "../json/text-input.js";
import { forStream } from "./output.js";
import { loadCtx, parseIsolation, parseLimits, parseOptions, processIo, programLimit, report, SANDBOX_OPTIONS, usageFailure, type Io } from "./eval.js";

export const REPL_USAGE = `Usage: ptc repl [--ctx JSON | --ctx-file FILE] [--limit NAME=N ...] [--isolation worker|none]

An interactive PTC-Lisp session. Definitions (def, defn) persist between entries;
an entry may span several lines until its brackets balance.

Exit status: 0; with input that is not a terminal (a script piped in), 1 when an entry
failed (error or (fail ...)), as ptc eval exits; 2 on a usage error, or when the script
is not UTF-8 text (nothing from its bad line on runs).
`;

const REPL_HELP = `Type a PTC-Lisp expression, e.g. (+ 1 2) or (defn sq [x] (* x x)).
An entry can span several lines; it runs once its brackets balance.
Definitions stay available for later entries; a failed entry changes nothing.
Commands:
  :help    show this help
  :defs    list the definitions made so far
  :quit    leave (Ctrl-D works too; Ctrl-C stops a running entry or clears a half-typed one)
`;

// A result is cut for the screen as agent feedback is: enough to see its shape, with a note.
const RESULT_PREVIEW = { maxItems: 100, maxChars: 4_000 };

const COMMANDS = new Set([":help", ":defs", ":quit", ":q", ":exit"]);

/**
 * Whether `text` still needs more lines: an unclosed (, [ or { or an unterminated string.
 * A stray closer counts as complete so that the reader reports it.
 */
export function needsMore(text: string): boolean {
  let depth = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i];
    if (c === ";") {
      while (i < n && text[i] !== "\n") i++;
    } else if (c === "\\") {
      i++; // a character literal such as \( is data, not a delimiter
    } else if (c === '"') {
      i++;
      while (i < n && text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
      if (i >= n) return true;
    } else if (c === "(" || c === "[" || c === "{") {
      depth++;
    } else if (c === ")" || c === "]" || c === "}") {
      if (--depth < 0) return false;
    }
  }
  return depth > 0;
}

// The entries that ran, by their text, with the session line each started on: an error in a
// function one of them defined is located in its text. Kept up to a total size, newest first.
const REMEMBERED_CHARS = 8_000_000;

/**
 * Where an entry's errors are: the session's (or script's) lines, not the entry's, so line 12
 * of a script is reported as line 12. An error in a function an earlier entry defined is in
 * that entry's text: found by its excerpt among the entries remembered, else left as it is.
 */
class Lines {
  private readonly entries = new Map<string, number>();
  private chars = 0;

  remember(source: string, firstLine: number): void {
    if (this.entries.delete(source)) this.chars -= source.length;
    this.entries.set(source, firstLine);
    this.chars += source.length;
    for (const [text] of this.entries) {
      if (this.chars <= REMEMBERED_CHARS) break;
      this.entries.delete(text);
      this.chars -= text.length;
    }
  }

  locate(error: ErrorInfo, source: string, firstLine: number): ErrorInfo {
    if (error.line === undefined) return error;
    if (!error.message.endsWith(IN_EARLIER_PROGRAM)) return relocate(error, source, firstLine);
    const texts = [...this.entries].reverse();
    const found = texts.find(([text]) => excerpt(text, error.line as number, error.column ?? 1) === error.excerpt);
    return found === undefined ? error : relocate(error, found[0], found[1]);
  }
}

/** True when the text holds no form at all (only whitespace, commas and comments). */
function isBlank(text: string): boolean {
  return text.replace(/;[^\n]*/g, "").replace(/[\s,]+/g, "") === "";
}

export async function runReplCommand(args: string[], io: Io = processIo()): Promise<number> {
  let ctx: Record<string, unknown> | undefined;
  let limits;
  let isolation: "none" | "worker";
  let maxSourceChars: number;
  try {
    const { values } = parseOptions({ args, options: { help: { type: "boolean", short: "h" }, ...SANDBOX_OPTIONS } });
    if (values.help) {
      io.stdout.write(REPL_USAGE);
      return 0;
    }
    limits = parseLimits(values.limit);
    maxSourceChars = limits.maxSourceChars ?? defaultLimits.maxSourceChars;
    isolation = parseIsolation(values.isolation);
    ctx = loadCtx(values.ctx, values["ctx-file"]);
  } catch (e) {
    return usageFailure("repl", e, io, REPL_USAGE);
  }

  // Prompts only make sense for a person at a terminal; piped input gets just the results.
  const interactive = (io.stdin as { isTTY?: boolean }).isTTY === true;
  // A script piped in is read as ptc eval reads a file: strictly UTF-8, never with characters replaced.
  const rl = interactive ? createInterface({ input: io.stdin, output: io.stdout as NodeJS.WritableStream, terminal: true }) : undefined;
  // A line longer than a program may be can never run (as for ptc eval -).
  const lines = rl ?? textLines(io.stdin as AsyncIterable<Buffer | string>, "standard input", programLimit(limits));
  let memory: Memory = new Map();
  let buffer = "";
  const prompt = (): void => {
    if (rl === undefined) return;
    rl.setPrompt(buffer === "" ? "ptc> " : "...> ");
    rl.prompt();
  };
  // The entry being run, which Ctrl-C stops (as in any REPL) instead of leaving it to its time limit.
  let running: AbortController | undefined;
  rl?.on("SIGINT", () => {
    if (running !== undefined) {
      running.abort();
      return;
    }
    if (buffer !== "") {
      buffer = "";
      io.stdout.write("\n(entry cleared)\n");
    } else {
      io.stdout.write("\n(type :quit or press Ctrl-D to leave)\n");
    }
    prompt();
  });

  // A script piped in that hit an error ends with exit 1, so `ptc repl < setup.clj && next` stops.
  let failed = false;
  const located = new Lines();
  // The session's lines read so far, and the one the entry being gathered started on.
  let lineNumber = 0;
  let entryLine = 1;
  const run = async (source: string): Promise<void> => {
    running = new AbortController();
    const r = await evaluate(source, { ctx, limits, memory, isolation, signal: running.signal });
    running = undefined;
    if (report(r.ok ? r : { ...r, error: located.locate(r.error, source, entryLine) }, io, false, RESULT_PREVIEW) !== 0) failed = true;
    if (r.ok) located.remember(source, entryLine);
    memory = r.memory;
  };

  if (interactive) io.stdout.write("PTC-Lisp REPL. Type :help for help, :quit to leave.\n");
  prompt();
  try {
    for await (const line of lines) {
      lineNumber++;
      const command = line.trim();
      if (buffer === "" && COMMANDS.has(command)) {
        if (command === ":help") io.stdout.write(REPL_HELP);
        // A docstring is the program's text: at a terminal its controls are written out, as println output is.
        else if (command === ":defs") io.stdout.write(forStream(io.stdout, listDefs(memory)));
        else break;
        prompt();
        continue;
      }
      if (buffer === "") entryLine = lineNumber;
      buffer = buffer === "" ? line : buffer + "\n" + line;
      if (!needsMore(buffer)) {
        const source = buffer;
        buffer = "";
        if (!isBlank(source)) await run(source);
      } else if (buffer.length > maxSourceChars) {
        // An entry still open past the longest program that may run can never run: an unclosed
        // ( near the top of a script otherwise gathered all the rest, rescanned at every line,
        // until the input ended (yes '(' | ptc repl never did). Run it to be told so.
        const source = buffer;
        buffer = "";
        await run(source);
        // Where a piped script's next entry starts is unknown: nothing after it runs.
        if (!interactive) {
          io.stderr.write(`ptc repl: the entry was still open after ${source.length} characters; the rest of the input is not run\n`);
          return 1;
        }
      }
      prompt();
    }
  } catch (e) {
    if (!(e instanceof TextInputError)) throw e;
    // Nothing from the bad line on runs: its entry would read other characters than were written.
    io.stderr.write(`ptc repl: ${e.message}\n`);
    return 2;
  }
  rl?.close();
  // Input ended halfway through an entry: run it anyway so the reader explains what is missing.
  if (!isBlank(buffer)) await run(buffer);
  if (interactive) io.stdout.write("\n");
  return failed && !interactive ? 1 : 0;
}

function listDefs(memory: Memory): string {
  if (memory.size === 0) return "(no definitions yet)\n";
  let out = "";
  for (const [name, entry] of memory) out += entry.doc ? `${name} — ${entry.doc}\n` : `${name}\n`;
  return out;
}
