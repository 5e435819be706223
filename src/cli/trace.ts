// `ptc trace show FILE`: a run, turn by turn (program, tool calls, output, definitions,
// errors, tokens); `--turn N` for one turn with the model's raw reply, `--messages` for
// exactly what the LLM was sent. The renderers are pure and also print the demo's turns.
import { quoteString } from "../lisp/index.js";
import { jsonSyntaxError } from "../json/json-error.js";
import { renderError, renderPause } from "../trace/feedback.js";
import { prettyJson, type RunSource } from "../viewer/run.js";
import { inputLimit, runSourceOf } from "../viewer/input.js";
import { findHiddenValues, scrubber } from "../viewer/scrub.js";
import { ResumeError } from "../trace/run-state.js";
import { fileKind, whatReads, type FileKind } from "./file-kind.js";
import { readText, TextInputError } from "../json/text-input.js";
import { forTerminal } from "./output.js";
import { parseOptions, wholeNumber, type Io } from "./eval.js";
import type { SavedRunFile } from "../trace/saved-run.js";
import { TraceFormatError } from "../trace/serialize.js";
import { HELD_SHOWN, isHeld, pausedOutcome, runTotals } from "../trace/totals.js";
import type { DefinitionTrace, RunTrace, ToolCallTrace, Turn } from "../trace/trace.js";
import { renderComparison } from "../history/compare.js";
import { traceSettings, turnBudget } from "../history/settings.js";
import type { RunSettings } from "../history/stats.js";
import { resolveViewOptions, type ResolvedViewOptions } from "../history/view.js";

export interface RenderOptions {
  /** Show every output line and tool call instead of the first few. */
  full?: boolean;
  /** Show the task message in the run's header. Default true. */
  task?: boolean;
}

const MAX_PRINT_LINES = 30;
const MAX_TOOL_CALLS = 12;
const MAX_INLINE = 120;

const USAGE = `usage: ptc trace show FILE [--turn N] [--messages | --compressed [--max-turns N]] [--full]

  FILE            a saved run or a bare trace as JSON (ptc demo --trace-out FILE writes one),
                  at most 64 MB (as for ptc view)
  --turn N        only turn N, with the model's raw reply
  --messages      with --turn: the messages the LLM was sent for that turn
  --compressed    the full and the compressed prompt side by side (of turn N with --turn,
                  else of the turn after the last), then the compression figures per prompt
  --max-turns N   the run's turn budget for --compressed (default: the trace's recorded
                  settings, else read from the task message)
  --full          every output line and tool call, uncut (with --compressed: every line
                  of every message, long lines wrapped)
`;

const fmt = (n: number): string => n.toLocaleString("en-US");
const indent = (text: string, pad = "  "): string => text.replace(/^/gm, pad);
const cut = (s: string, max = MAX_INLINE): string => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

const json = (v: unknown): string => prettyJson(v, 0);
/**
 * How a run's renderings are printed: hidden values as stand-ins, those an older trace kept
 * replaced by their place as the viewer shows them (scrubber), and the file's text (a model's
 * reply, a tool's output) safe for a terminal.
 */
const shownFor = (trace: RunTrace): ((text: string) => string) => {
  const scrub = scrubber(findHiddenValues(trace));
  return (text) => forTerminal(scrub(text));
};

/** `12,345 in (8,000 cached) / 456 out`. */
export function renderTokens(u: { inputTokens: number; outputTokens: number; cachedTokens: number }): string {
  return `${fmt(u.inputTokens)} in (${fmt(u.cachedTokens)} cached) / ${fmt(u.outputTokens)} out`;
}

function renderToolCall(c: ToolCallTrace): string {
  const outcome = isHeld(c) ? HELD_SHOWN : c.error !== undefined ? `error: ${c.error}` : `→ ${json(c.result)}`;
  // A call the host approved with edited arguments ran with `args`; the program's are shown beside them.
  const edited = Object.hasOwn(c, "asked") ? ` (edited by the host; the program asked ${cut(json(c.asked), MAX_INLINE)})` : "";
  return `${c.name} ${cut(json(c.args), MAX_INLINE)}${edited} ${cut(outcome, MAX_INLINE)} (${Math.round(c.durationMs)} ms)`;
}

function renderDefinition(d: DefinitionTrace): string {
  // Quoted as the program would write it, so a quote inside the docstring cannot end it early.
  const doc = d.doc ? ` ${quoteString(cut(d.doc, 80))}` : "";
  if (d.kind === "function") return `(${d.name}${d.params ? ` ${d.params}` : ""})${doc}`;
  const size = d.size === undefined ? "" : `[${d.size}]`;
  // The sample printer already bounds the sample (and says what it cut).
  return `${d.name}${doc} = ${d.type}${size} ${d.sample}`;
}

const STATUS: Record<Turn["status"], string> = {
  ok: "ok",
  error: "error",
  no_code: "no program in the reply",
  invalid_return: "return rejected by the output schema",
  returned: "returned",
  failed: "failed",
  paused: "paused for the host's approval",
};

/** One turn: status and usage, then program, tool calls, output, definitions, error, value. */
export function renderTurn(turn: Turn, options: RenderOptions = {}): string {
  const u = turn.usage;
  const out = [`── Turn ${turn.number}: ${STATUS[turn.status] ?? turn.status} · ${renderTokens(u)} · llm ${fmt(Math.round(u.llmMs))} ms · run ${fmt(Math.round(u.execMs))} ms`];
  if (turn.notes && turn.notes.length > 0) out.push(`Repaired before running: ${turn.notes.join("; ")}`);
  if (turn.program !== null) out.push("Program:", indent(turn.program.trimEnd()));
  else out.push("Reply (no program found):", indent(cut(turn.reply.trim(), 400)));
  const calls = turn.toolCalls;
  if (calls.length > 0) {
    const shown = options.full ? calls : calls.slice(0, MAX_TOOL_CALLS);
    out.push(`Tool calls (${calls.length}):`, ...shown.map((c) => indent(renderToolCall(c))));
    if (shown.length < calls.length) out.push(`  … ${calls.length - shown.length} more (--full)`);
  }
  // Nested agents (called as tools) ran inside this turn: their turns, indented.
  for (const n of turn.nested ?? []) {
    out.push(`Nested agent ${n.tool} (${n.ok ? "answered" : "no answer"}):`, indent(renderRun(n.trace, { ...options, task: false }), "  │ "));
  }
  const prints = turn.prints;
  if (prints.length > 0) {
    const lines = prints.join("\n").split("\n");
    const shown = options.full ? lines : lines.slice(0, MAX_PRINT_LINES);
    out.push("Output:", indent(shown.join("\n")));
    if (shown.length < lines.length) out.push(`  … ${lines.length - shown.length} more lines (--full)`);
  }
  const defs = turn.definitions;
  if (defs.length > 0) out.push("Defined:", ...defs.map((d) => indent(renderDefinition(d))));
  if (turn.error) out.push(turn.status === "paused" ? renderPause(turn.error) : renderError(turn.error));
  if (turn.status === "returned" && turn.value !== undefined) out.push(`Returned: ${turn.value}`);
  if (turn.status === "failed" && turn.value !== undefined) out.push(`Failed: ${turn.value}`);
  return out.join("\n");
}

/** How the run ended: from the saved outcome when there is one, else from the last turn. */
export function runOutcome(trace: RunTrace, saved?: Pick<SavedRunFile, "ok" | "fail">): string {
  const paused = pausedOutcome(trace, saved?.fail);
  if (paused !== undefined) return cut(paused, 300);
  if (saved && !saved.ok && saved.fail) return `no answer: ${saved.fail.reason}: ${cut(saved.fail.message, 300)}`;
  const last = trace.turns.at(-1);
  if (!last) return "no turns";
  if (last.status === "returned") return `returned ${cut(last.value ?? "nil", 300)}`;
  if (last.status === "failed") return `failed: ${cut(last.value ?? "", 300)}`;
  return `ended after turn ${last.number} without a return (${STATUS[last.status] ?? last.status})`;
}

/** A run's header: the task (unless `task: false`), outcome and totals. */
export function renderRunHead(trace: RunTrace, options: RenderOptions = {}, saved?: Pick<SavedRunFile, "ok" | "fail">): string {
  const t = runTotals(trace);
  return [
    ...(options.task === false ? [] : ["Task:", indent(trace.task.trim())]),
    `Turns: ${trace.turns.length} · ${runOutcome(trace, saved)}`,
    `Tokens: ${renderTokens(t)} · tool calls: ${t.toolCalls}${t.heldCalls > 0 ? ` (${t.heldCalls} held for the host's approval)` : ""} · llm ${fmt(Math.round(t.llmMs))} ms · run ${fmt(Math.round(t.execMs))} ms`,
  ].join("\n");
}

/** The whole run: a header with the task, outcome and totals, then every turn. */
export function renderRun(trace: RunTrace, options: RenderOptions = {}, saved?: Pick<SavedRunFile, "ok" | "fail">): string {
  return [renderRunHead(trace, options, saved), ...trace.turns.map((turn) => renderTurn(turn, options))].join("\n\n");
}

/** Exactly what the LLM was sent for one turn, message by message. */
export function renderMessages(turn: Turn): string {
  const n = turn.messages.length;
  return turn.messages.map((m, i) => `=== message ${i + 1} of ${n}: ${m.role} (${fmt(m.content.length)} chars) ===\n${m.content}`).join("\n\n");
}

export class TraceFileError extends Error {
  override readonly name = "TraceFileError";
}

/** Reads a saved run (`runToJson`, what `ptc demo --trace-out` writes), a run state or a bare trace (`traceToJson`). */
export function loadRun(file: string): RunSource {
  let text: string;
  try {
    text = readText(file, file, inputLimit("show"));
  } catch (e) {
    if (e instanceof TextInputError) throw new TraceFileError(e.message);
    throw new TraceFileError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseRun(text, file);
}

/** A saved run, a run state or a bare trace from the text of `file` (named in errors); `kind` when the caller already read it. */
export function parseRun(text: string, file: string, kind: FileKind = fileKind(text)): RunSource {
  if (kind === "report" || kind === "experiment" || kind === "transcripts") throw new TraceFileError(`${whatReads(kind, file)}, not ptc trace show`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new TraceFileError(`${file} is not valid JSON (${jsonSyntaxError(text, e)})`);
  }
  try {
    return runSourceOf(text, raw);
  } catch (e) {
    if (e instanceof TraceFormatError || e instanceof ResumeError) throw new TraceFileError(`${file}: ${e.message}`);
    throw e;
  }
}

/** A flag's positive integer; undefined when absent, null (after saying why) when malformed. */
function positiveInt(raw: string | undefined, flag: string, io: Pick<Io, "stderr">): number | undefined | null {
  if (raw === undefined) return undefined;
  const n = wholeNumber(raw);
  if (Number.isSafeInteger(n) && n >= 1) return n;
  if (n > Number.MAX_SAFE_INTEGER) io.stderr.write(`ptc trace show: ${flag} ${raw} is too large (at most ${Number.MAX_SAFE_INTEGER})\n`);
  else io.stderr.write(forTerminal(`ptc trace show: ${flag} expects a positive whole number, got "${raw}"\n`));
  return null;
}


/** Where the compressed view's settings came from, and the ones that shape it. */
function settingsLine(run: RunSettings, view: ResolvedViewOptions, recorded: boolean, budgetGiven: boolean): string {
  const source = recorded ? "recorded in the trace" : `defaults (the trace records none${budgetGiven ? "" : "; turn budget read from the task message"})`;
  const strict = view.strictPrefix ? `, strict prefix (payback within ${view.paybackPrompts} prompts)` : "";
  const timing = view.keepLatestFull ? ", latest turn kept in full (keepLatestFull)" : "";
  const budget = `${run.maxTurns} turn${run.maxTurns === 1 ? "" : "s"}${budgetGiven ? " (from --max-turns)" : ""}`;
  return `Settings ${source}: ${budget}${timing}, printlnHistoryLimit ${view.printlnHistoryLimit} / ${view.printlnHistoryTokens} tokens (dropped past ${view.dropAfterTokens}), errorContextTurns ${view.errorContextTurns}, errorWindowTurns ${view.errorWindowTurns}, samples ${view.sampleItems} items / ${view.sampleChars} chars${strict}`;
}

/** `ptc trace show FILE [--turn N] [--messages | --compressed] [--max-turns N] [--full]`. Returns the exit code. */
export async function runTraceCommand(args: string[], io: Io): Promise<number> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === "--help" || sub === "-h" || sub === "help") {
    (sub === undefined ? io.stderr : io.stdout).write(USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== "show") {
    io.stderr.write(`${forTerminal(`ptc trace: unknown command "${sub}"`)}\n${USAGE}`);
    return 2;
  }
  let parsed;
  try {
    parsed = parseOptions({
      args: rest,
      allowPositionals: true,
      options: {
        turn: { type: "string" },
        messages: { type: "boolean" },
        compressed: { type: "boolean" },
        "max-turns": { type: "string" },
        full: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    io.stderr.write(`ptc trace show: ${forTerminal((e as Error).message)}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    io.stderr.write(`ptc trace show: expected one trace file, got ${positionals.length}\n${USAGE}`);
    return 2;
  }
  const turnNumber = positiveInt(values.turn, "--turn", io);
  const maxTurns = positiveInt(values["max-turns"], "--max-turns", io);
  if (turnNumber === null || maxTurns === null) return 2;
  if (values.messages && turnNumber === undefined) {
    io.stderr.write("ptc trace show: --messages needs --turn N (the turn whose messages to print)\n");
    return 2;
  }
  if (maxTurns !== undefined && !values.compressed) {
    io.stderr.write("ptc trace show: --max-turns applies to --compressed (the turn budget the compressed prompt is built for)\n");
    return 2;
  }
  if (values.messages && values.compressed) {
    io.stderr.write("ptc trace show: --messages and --compressed exclude each other (--compressed shows both prompts)\n");
    return 2;
  }
  let loaded: RunSource;
  try {
    loaded = loadRun(positionals[0]);
  } catch (e) {
    if (!(e instanceof TraceFileError)) throw e;
    // A file that cannot be read or parsed is bad input, as for `ptc eval`: exit 2.
    io.stderr.write(forTerminal(`ptc trace show: ${e.message}\n`));
    return 2;
  }
  const { trace, saved } = loaded;
  const shown = shownFor(trace);
  if (values.compressed) {
    if (turnNumber !== undefined && turnNumber > trace.turns.length + 1) {
      io.stderr.write(`ptc trace show: no prompt for turn ${turnNumber} (the run has ${trace.turns.length} turn${trace.turns.length === 1 ? "" : "s"})\n`);
      return 2;
    }
    if (maxTurns !== undefined && maxTurns < trace.turns.length) {
      io.stderr.write(`ptc trace show: --max-turns ${maxTurns} is fewer than the ${trace.turns.length} turns the run took\n`);
      return 2;
    }
    const checked = traceSettings(trace);
    if (!checked.ok) {
      io.stderr.write(forTerminal(`ptc trace show: ${positionals[0]}: ${checked.message}\n`));
      return 2;
    }
    const { settings } = checked;
    const run: RunSettings = settings === undefined ? { maxTurns: maxTurns ?? turnBudget(trace) } : { maxTurns: maxTurns ?? settings.maxTurns, toolsWithdrawn: settings.toolsWithdrawn, maxPrintChars: settings.maxPrintChars };
    const view = resolveViewOptions(settings?.view);
    // The prompts' text is shown as the layout measures it; the rest is the layout's own.
    const comparison = renderComparison(trace, run, view, { ...(turnNumber === undefined ? {} : { turn: turnNumber }), full: values.full ?? false, show: shown });
    io.stdout.write(`${shown(settingsLine(run, view, settings !== undefined, maxTurns !== undefined))}\n${comparison}\n`);
    return 0;
  }
  const options: RenderOptions = { full: values.full ?? false };
  if (turnNumber === undefined) {
    io.stdout.write(shown(`${renderRun(trace, options, saved)}\n`));
    return 0;
  }
  const turn = trace.turns.find((t) => t.number === turnNumber);
  if (!turn) {
    io.stderr.write(`ptc trace show: no turn ${turnNumber} (the run has ${trace.turns.length} turn${trace.turns.length === 1 ? "" : "s"})\n`);
    return 2;
  }
  if (values.messages) {
    io.stdout.write(shown(`${renderMessages(turn)}\n`));
    return 0;
  }
  io.stdout.write(shown(`${renderTurn(turn, { full: true })}\n\nReply:\n${indent(turn.reply.trimEnd())}\n${turn.feedback ? `\nFeedback:\n${indent(turn.feedback)}\n` : ""}`));
  return 0;
}
