// The page's data: what the server projects from traces and compare reports and the client
// draws. Plain JSON. Message texts live once in `texts` and messages once in `messages`
// (consecutive prompts repeat most of their messages, the system prompt above all); prompts
// list their messages as runs of message numbers, so a run's page grows with its turns, not
// with their square.
import type { CacheTable } from "../compaction/figures.js";
import type { RunTotals } from "../trace/totals.js";
import type { TurnStatus } from "../trace/trace.js";

export const PAGE_DATA_VERSION = 2;

export interface PageData {
  version: typeof PAGE_DATA_VERSION;
  title: string;
  /** Every message text, once. */
  texts: string[];
  /** Every distinct message (role and text) of the runs' prompts, once, numbered in the order first met. */
  messages: MessageRef[];
  /** The files given, in order: what the navigation lists. */
  files: FileEntry[];
  /** Every run, nested agents' runs included (they link to their parent). */
  runs: RunView[];
  reports: ReportView[];
}

export interface FileEntry {
  name: string;
  kind: "run" | "report";
  /** The run's or the report's id. */
  id: string;
}

/** The run's totals as `ptc trace show` reports them, with what only the viewer shows. */
export interface Totals extends RunTotals {
  turns: number;
  /** Wall time of the run, when the file is a saved run. */
  durationMs?: number;
  /** Dollars at `priceModel`'s list prices (the turns' recorded costs); null when no price is known for the run's model. */
  cost: number | null;
}

export interface RunView {
  /** `r1`, and `r1.t2.n1` for the first nested run of turn 2 of r1: the deep link's first part. */
  id: string;
  file: string;
  task: string;
  /** Set on a nested agent's run: the turn and tool call that started it. */
  parent?: { run: string; turn: number; call: number; tool: string };
  /** `paused` when the run waits for the host's approval (then `ok` is null: it has not ended either way). */
  outcome: { ok: boolean | null; paused?: true; text: string };
  totals: Totals;
  /** The model the run's replies came from, as its trace records it (null in traces that record none). */
  priceModel: string | null;
  /** How prompts were built: "full history", "compressed history", or a strategy with options. */
  promptMode: string;
  turns: TurnView[];
  chart: ChartPoint[];
  /** Why hidden values could not all be found, when the scrub may be incomplete; else absent. */
  notice?: string;
}

export interface ErrorView {
  kind: string;
  phase: string;
  message: string;
  line?: number;
  column?: number;
  excerpt?: string;
  hint?: string;
  trail?: string[];
}

export interface ToolCallView {
  name: string;
  /** Pretty JSON of the arguments (the call ran with). */
  args: string;
  /** Pretty JSON of the program's arguments, when the host approved the call with edited ones (`args`). */
  asked?: string;
  /** The result's shape (`vector[3] of map{id, name}`), "error", or what a held call's outcome reads. */
  shape: string;
  /** The call waits for the host's approval: it did not run (a paused run's). */
  held?: true;
  /** Pretty JSON of the result, when the call succeeded. */
  result?: string;
  error?: string;
  durationMs: number;
  /** The run this call started, when the tool was a nested agent. */
  nested?: { run: string; ok: boolean };
}

export interface DefinitionView {
  name: string;
  kind: "function" | "value";
  /** `(name [x y])` for a function, `vector[5]` for a value. */
  signature: string;
  sample: string;
  doc?: string;
}

export interface MessageRef {
  role: string;
  /** Index into PageData.texts. */
  text: number;
  tokens: number;
}

/**
 * Message numbers (indexes into PageData.messages) as runs of consecutive numbers, flattened:
 * `[first, count, first, count, ...]`. Messages are numbered in the order first met, so a
 * prompt that repeats the previous one and adds a turn is a run or two, however long.
 */
export type MessageRuns = number[];

/** Message numbers as runs (see MessageRuns). */
export function runsOf(ids: readonly number[]): MessageRuns {
  const out: MessageRuns = [];
  for (const i of ids) {
    const n = out.length;
    if (n > 0 && out[n - 2] + out[n - 1] === i) out[n - 1]++;
    else out.push(i, 1);
  }
  return out;
}

/** The message numbers `runs` lists, in order. */
export function expandRuns(runs: MessageRuns): number[] {
  const out: number[] = [];
  for (let i = 0; i + 1 < runs.length; i += 2) for (let k = 0; k < runs[i + 1]; k++) out.push(runs[i] + k);
  return out;
}

/** How a message of this turn's prompt relates to the previous turn's prompt. */
export type MessageChange = "cached" | "changed" | "same" | "new";

export interface PromptView {
  /** The prompt as sent (the trace's record of it). */
  sent: MessageRuns;
  /** The full history for the same turn (rebuilt from the turns before). */
  full: MessageRuns;
  sentTokens: number;
  fullTokens: number;
  /** Per sent message after the cached prefix (those in it are "cached"): the message where the prefix breaks, elsewhere in the previous prompt, or new. */
  changes: MessageChange[];
  /** The prefix shared with the previous prompt; null on the first turn. */
  prefix: { messages: number; chars: number; tokens: number } | null;
  /** Messages of the previous prompt that this one no longer has. */
  dropped: MessageRuns;
  /** Turns the view kept in full and why, and how many it summarized. */
  keptFull: Array<{ turn: number; reason: string }>;
  summarized: number;
}

export interface TurnView {
  number: number;
  status: TurnStatus;
  /** Turns that went wrong (error, no program, rejected return, fail). */
  failed: boolean;
  program: string | null;
  /** The model's raw reply when it held no program. */
  reply?: string;
  value?: string;
  output: string;
  toolCalls: ToolCallView[];
  definitions: DefinitionView[];
  error?: ErrorView;
  /** Where a paused turn's program stopped for the host's approval (its recorded error, which is no failure). */
  pausedAt?: { heading: string; excerpt?: string };
  notes: string[];
  feedback?: string;
  usage: { inputTokens: number; outputTokens: number; cachedTokens: number; llmMs: number; execMs: number; source?: "provider" | "local"; cost?: number };
  prompt: PromptView;
}

export interface ChartPoint {
  turn: number;
  fullTokens: number;
  sentTokens: number;
  /** The sent prompt's part a prefix cache serves, as the turn recorded it (measured here for old traces that recorded none). */
  cachedTokens: number;
  /** "provider": reported by the provider; "local": measured locally; "recorded": an older trace that does not say which. */
  cachedSource: "provider" | "local" | "recorded";
  outputTokens: number;
  failed: boolean;
  /** What compaction did before this turn's prompt, when it did something. */
  compaction?: string;
}

// ---- compare reports (`ptc compare --json`) ----

export interface ReportRow {
  strategy: string;
  inputTokens: number;
  /** Null where the row was measured on no request (its strategy failed on every transcript). */
  reduction: number | null;
  peakPrompt: number;
  /** Null when full cost nothing and this row did not. */
  costRatio: number | null;
  cost: number;
  cacheBreaks: number;
  retention: number | null;
  /** Shown instead of the retention of a strategy that never sent less than everything ("never triggered", "summaries failed", "n/a": measured on no request). */
  idle?: string;
  llmCalls: number;
  compactionMs: number;
  /** `failed` where the strategy failed on the transcript (its figures there are none). */
  perTranscript: Array<{ id: string; inputTokens: number; peakPrompt: number; cacheBreaks: number; retention: number | null; failed?: true }>;
}

export interface ReportView {
  id: string;
  file: string;
  transcripts: number;
  messages: number;
  rows: ReportRow[];
  longest: { id: string; series: Array<{ strategy: string; tokens: number[]; breaks: number[] }> } | null;
  /** The transcripts compared as recorded though a strict provider would reject them. */
  dataProblems?: Array<{ id: string; problems: string[] }>;
  /** The strategies that failed on some transcripts, as the text report lists them (failureLines). */
  failures?: string[];
  /** The lines under the text report's table (reportNotes): summaries that failed, prompts past the model's context window. */
  tableNotes?: string[];
  /** The cost of every strategy under each cache model (`ptc compare --caches`). */
  caches?: CacheTable;
  /** One transcript's prompts under two strategies, when the report came with its transcripts. */
  sideBySide?: SideBySide;
  /** Why transcripts given with the report are not shown side by side. */
  note?: string;
}

export interface SideBySide {
  transcript: string;
  strategies: [string, string];
  /** Every distinct message of either strategy's prompts, numbered in the order first met; prompts list runs of these numbers. */
  messages: MessageRef[];
  /** Per request (the transcript's assistant replies, in order): each strategy's prompt and its tokens. */
  requests: Array<{ index: number; prompts: [MessageRuns, MessageRuns]; tokens: [number, number] }>;
}
