// Transcripts for the harness: one conversation per JSONL line (messages, optional goal labels
// and probe facts), in the format of ../shared/corpora (see its README). Every line is checked;
// a bad one is reported with its line number.
import { z } from "zod";
import { traceFromJson, TraceFormatError } from "../trace/serialize.js";
import type { ChatMessage } from "../llm/types.js";
import type { RunTrace } from "../trace/trace.js";
import { runTranscript } from "./run-transcript.js";
import { jsonSyntaxProblem } from "../json/json-error.js";
import { readText, TextInputError } from "../json/text-input.js";
import { MAX_JSON_DEPTH, nestedDeeperThan, tooDeepAt } from "../json/depth.js";
import { messageProblem } from "../compaction/compact.js";
import { toolPairingProblems } from "../compaction/messages.js";
import { mustBe } from "../llm/args.js";

// A message is what compact() takes (its one check, messageProblem); exported conversations
// carry more (audio, annotations...), which is kept and never counted; a refusal is the reply's
// text (messageText).
const message = z.unknown().superRefine((m, ctx) => {
  const p = messageProblem(m);
  if (p !== undefined) ctx.addIssue({ code: "custom", message: p.problem, path: p.field === "" ? [] : p.field.split(".") });
});

const probe = z.looseObject({
  fact: z.string(),
  value: z.string().min(1),
  introduced_at: z.number().int().nonnegative(),
  needed_at: z.array(z.number().int().nonnegative()),
  /** Every message that contains the value (the corpora list them), for retention by distance. */
  mentions: z.array(z.number().int().nonnegative()).optional(),
});

const transcript = z.looseObject({
  id: z.string(),
  source: z.string().optional(),
  /** Absent when the line carries a PTC-Lisp run's trace instead (the messages are its full history). */
  messages: z.array(message).min(1).optional(),
  trace: z.unknown().optional(),
  goals: z.array(z.looseObject({ start: z.number().int().nonnegative(), label: z.string() })).optional(),
  probes: z.array(probe).optional(),
});

export type Probe = z.infer<typeof probe>;
export interface Transcript {
  id: string;
  source?: string;
  messages: ChatMessage[];
  goals?: Array<{ start: number; label: string }>;
  probes?: Probe[];
  /** Structured records behind the prompt for message j (PTC-Lisp turn records), for strategies that read them. */
  recordsAt?: (j: number) => unknown;
  /**
   * Data problems found on reading, each as "file:line: message i: ...": a tool result without its
   * call, or calls left without results. The conversation is kept as recorded (full is what was
   * sent), but OpenAI's and Anthropic's APIs would reject such a prompt.
   */
  problems?: string[];
}

export class TranscriptError extends Error {
  override readonly name = "TranscriptError";
}

/** Parses JSONL text; `limit` keeps the first N conversations. */
export function parseTranscripts(text: string, where: string, limit = Infinity): Transcript[] {
  const out: Transcript[] = [];
  // Conversation id -> its line: one given twice counted twice in every total, and the report's
  // per-transcript rows and the viewer (which finds a report's transcript by id) could not tell them apart.
  const lineOf = new Map<string, number>();
  const lines = text.split("\n");
  for (let i = 0; i < lines.length && out.length < limit; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      // file:line:column, the column counted in the line as written (before its indent was trimmed).
      const p = jsonSyntaxProblem(line, e);
      const column = p.column === undefined ? "" : `:${p.column + lines[i].length - lines[i].trimStart().length}`;
      throw new TranscriptError(`${where}:${i + 1}${column}: not valid JSON (${p.reason})`);
    }
    // Located in the text only when the value is too deep: the walk is the cheaper question.
    const deep = nestedDeeperThan(raw) ? tooDeepAt(line) : -1;
    if (deep >= 0) throw new TranscriptError(`${where}:${i + 1}:${deep + 1 + lines[i].length - lines[i].trimStart().length}: nested deeper than ${MAX_JSON_DEPTH} levels`);
    const checked = transcript.safeParse(raw);
    if (!checked.success) {
      const issue = checked.error.issues[0];
      throw new TranscriptError(`${where}:${i + 1}: at ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
    }
    const first = lineOf.get(checked.data.id);
    if (first !== undefined) throw new TranscriptError(`${where}:${i + 1}: at id: ${JSON.stringify(checked.data.id)} is also the id of line ${first}: give each conversation its own id`);
    lineOf.set(checked.data.id, i + 1);
    const t = withTrace(checked.data, `${where}:${i + 1}`);
    const problem = annotationProblem(t);
    if (problem !== undefined) throw new TranscriptError(`${where}:${i + 1}: ${problem}`);
    const pairing = toolPairingProblems(t.messages);
    out.push(pairing.length === 0 ? t : { ...t, problems: pairing.map((p) => `${where}:${i + 1}: ${p.text}: OpenAI's and Anthropic's APIs reject a prompt with it (compared as recorded)`) });
  }
  return out;
}

/**
 * Why a transcript's goals or probes do not fit its messages (the corpora's own check,
 * check.mjs): an index past the end, a goal start that is no user message, or a need with no
 * reply at or after it would never be scored, and a need before the value is said would be scored as lost by every strategy, full
 * included.
 */
/**
 * The first assistant message at or after `from`, or -1. Only replies' prompts are replayed: a
 * need at a user or tool message (check.mjs only warns of one) is scored at the next reply, the
 * first the model writes knowing that message.
 */
export function nextReply(messages: readonly ChatMessage[], from: number): number {
  for (let j = from; j < messages.length; j++) if (messages[j].role === "assistant") return j;
  return -1;
}

function annotationProblem(t: Transcript): string | undefined {
  const n = t.messages.length;
  const outside = (path: string, i: number): string | undefined => (i < n ? undefined : `at ${path}: ${i} is not the index of one of the ${n} messages`);
  for (const [k, g] of (t.goals ?? []).entries()) {
    const path = `goals.${k}.start`;
    const problem =
      outside(path, g.start) ??
      (k > 0 && g.start <= (t.goals as Array<{ start: number }>)[k - 1].start ? `at ${path}: goals start in order (after ${(t.goals as Array<{ start: number }>)[k - 1].start})` : undefined) ??
      (t.messages[g.start].role === "user" ? undefined : `at ${path}: message ${g.start} (${t.messages[g.start].role}) is not the user message that opens a goal`);
    if (problem !== undefined) return problem;
  }
  for (const [k, p] of (t.probes ?? []).entries()) {
    const problem =
      outside(`probes.${k}.introduced_at`, p.introduced_at) ??
      p.needed_at
        .map(
          (j, x) =>
            outside(`probes.${k}.needed_at.${x}`, j) ??
            (j > p.introduced_at ? undefined : `at probes.${k}.needed_at.${x}: a value is needed only after it is introduced (at ${p.introduced_at})`) ??
            (nextReply(t.messages, j) >= 0 ? undefined : `at probes.${k}.needed_at.${x}: no assistant message at or after message ${j}, so no prompt would measure it`),
        )
        .find((e) => e !== undefined) ??
      (p.mentions ?? []).map((j, x) => outside(`probes.${k}.mentions.${x}`, j)).find((e) => e !== undefined);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * A line's transcript. With a `trace` (a PTC-Lisp run's, as `traceToJson` writes it) the messages
 * are the run's full history and each reply's turn records come along (interpreter-summaries
 * reads them); messages given beside a trace must be that history.
 */
function withTrace(line: z.output<typeof transcript>, where: string): Transcript {
  const { trace: raw, ...rest } = line;
  if (raw === undefined) {
    if (rest.messages === undefined) throw new TranscriptError(`${where}: at messages: a transcript needs messages or a trace`);
    return { ...(rest as unknown as Transcript), messages: rest.messages.map(asChatMessage) };
  }
  let trace: RunTrace;
  try {
    trace = traceFromJson(JSON.stringify(raw));
  } catch (e) {
    throw new TranscriptError(`${where}: at trace: ${e instanceof TraceFormatError ? e.message : String(e)}`);
  }
  const run = runTranscript(rest.id, trace, rest.source ?? "PTC-Lisp run");
  if (run === undefined) throw new TranscriptError(`${where}: at trace: the run has no turns`);
  if (rest.messages !== undefined && JSON.stringify(rest.messages) !== JSON.stringify(run.messages)) throw new TranscriptError(`${where}: at messages: they are not the trace's full history (leave them out, or write them from the trace)`);
  return { ...(rest as unknown as Transcript), ...run };
}

/**
 * A checked message as ChatMessage types it: the SDKs' `tool_calls: null` and `name: null` mean
 * none (the reader's users test `tool_calls !== undefined`), and absent content is null.
 */
function asChatMessage(raw: unknown): ChatMessage {
  const m = raw as ChatMessage & { tool_calls?: unknown; name?: unknown };
  if (m.tool_calls !== null && m.name !== null && m.content !== undefined) return m;
  const { tool_calls: calls, name, ...rest } = m;
  return { ...rest, content: rest.content ?? null, ...(calls === null || calls === undefined ? {} : { tool_calls: calls as ChatMessage["tool_calls"] }), ...(name === null || name === undefined ? {} : { name: name as string }) };
}

export function loadTranscripts(file: string, limit = Infinity): Transcript[] {
  // A number is a file descriptor to readFileSync: 0 would read standard input, and wait for it.
  if (typeof file !== "string") throw new TypeError(mustBe("loadTranscripts: file", "a file name", file));
  let text: string;
  try {
    // Decoded strictly, as ptc compare reads it: "utf8" put U+FFFD in place of each bad byte, measured unseen.
    text = readText(file, file);
  } catch (e) {
    if (e instanceof TextInputError) throw new TranscriptError(e.message);
    throw new TranscriptError(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseTranscripts(text, file, limit);
}
