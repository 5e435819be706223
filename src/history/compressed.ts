// Interpreter-aware history compression: old successful turns are shown as summaries of
// what they defined, called and printed (built from the trace, never from the model's
// recollection); the system prompt, the task, the latest turn, recent or unfixed errored
// turns and the turns just before them stay in full. The view is a pure function of the
// trace and the options, rendered canonically, so a prompt shares as long a prefix with
// the previous one as the design allows. Compression happens here, when the next prompt is
// built; the trace keeps every program.
import type { TextMessage as ChatMessage } from "../llm/types.js";
import type { DefinitionTrace, Turn } from "../trace/trace.js";
import { renderFeedback, renderSeenPrints, renderTurnLine, seenPrints, type FeedbackInfo } from "../trace/feedback.js";
import { fullView } from "./full.js";
import { type HistoryView, type LegendMode, summaryLegend, viewSystem } from "./legend.js";
import { payback } from "../compaction/payback.js";
import { promptsLeft } from "./prompts-left.js";
import { anthropicCache, providerPrice, readMultiplier, writeMultiplier, type ModelPrice } from "../compaction/prices.js";
import { definitionLine, type Detail, holdsFunctions, isSmall, isWhole, learnedLines, noteLine, programForms, renderSummary, type RenderedSummary, type SummaryOptions, writtenOut } from "./summary.js";
import { countTokens, TOKENS_PER_MESSAGE } from "../compaction/tokens.js";
import { freeNames, showStandIns } from "../lisp/index.js";
import { resolveViewOptions, type FullReason, type PromptView, type TurnPlace, type ViewInput, type ViewOptions, type ViewStats } from "./view.js";

/** How one turn is rendered in the compressed view. */
export interface TurnPlan {
  /** Why the turn is kept in full, or null when it is summarized. */
  full: FullReason | null;
  /** The turn's println lines shown (its most recent ones). */
  printsShown: number;
  /** Names it defined that a later turn redefines (default mode only). */
  superseded: ReadonlySet<string> | undefined;
  /** Names it defined that an earlier turn defined too (their lines say so: see SummaryContext.redefines). */
  redefines: ReadonlySet<string> | undefined;
  /** Names it defined that a later program read, shown with samples once its output is dropped (default mode only; see markReads). */
  read: ReadonlySet<string> | undefined;
  /** Earlier definitions its program read that it shows with their samples (default mode only; see markReads). */
  reads: readonly DefinitionTrace[] | undefined;
  /** What it shows of data it defined without printing (see SummaryContext.teach); set as it is rendered. */
  teach?: Detail;
  /** Its summary is followed by the source of the functions it defined: one of them failed in a later turn. */
  code?: boolean;
}

/** A turn that did not succeed: its program stays visible so the model can fix it. */
export function isErrored(t: Turn): boolean {
  return t.status === "error" || t.status === "no_code" || t.status === "invalid_return";
}

/**
 * Decides, for every turn, whether it is kept full and why, how many println lines it
 * shows, and which of its definitions are superseded. Exported for statistics and tests.
 */
export function planTurns(input: ViewInput, rawOptions: ViewOptions): TurnPlan[] {
  const options = laidOut(resolveViewOptions(rawOptions));
  const turns = input.turns;
  const n = turns.length;
  const plans: TurnPlan[] = new Array(n);
  // An error stays in full inside the window: the model is still fixing it. Once it is
  // older and a later turn succeeded, the broken code is noise; its error message stays.
  // Strict-prefix mode never rewrites a turn, so there every error stays in full; so does a
  // breakpoint cache, where summarizing it would write every message after it again at the
  // write price (error-recovery: 1% dearer than full history that way, 6% cheaper kept).
  const setting = options.errorWindowTurns;
  const window = options.strictPrefix || setting <= 0 || options.cacheModel === "breakpoint" ? Infinity : setting;
  const summaryOptions = summaryOptionsOf(input, options);
  let nextSuccess = -1;
  // Per errored turn: the turns visible in the first prompt that no longer shows it in full.
  const leaves: number[] = new Array(n);
  for (let i = n - 1; i >= 0; i--) {
    const errored = isErrored(turns[i]);
    plans[i] = { full: errored && (n - i <= window || nextSuccess < 0) ? "error" : null, printsShown: seenOf(turns[i], input.maxPrintChars).lines, superseded: undefined, redefines: undefined, read: undefined, reads: undefined };
    leaves[i] = Math.max(i + window + 1, nextSuccess + 1);
    // Summarizing an error rewrites the prompt from it on: only when that pays, decided at the
    // prompt where it first could be (so every later prompt decides the same).
    if (errored && plans[i].full === null && !summaryPays(input, options, summaryOptions, plans[i], i, leaves[i])) plans[i].full = "cost";
    if (!errored) nextSuccess = i;
  }
  const defined = new Set<string>();
  for (let i = 0; i < n; i++) {
    let again: Set<string> | undefined;
    for (const d of turns[i].definitions) if (defined.has(d.name)) (again ??= new Set()).add(d.name);
    plans[i].redefines = again;
    for (const d of turns[i].definitions) defined.add(d.name);
  }
  // With the design's timing the turns before an error were summarized before it happened.
  // When the error happened inside a function such a turn defined, its summary is followed by the
  // source of its functions (the body that needs fixing): appended to the summary, it rewrites
  // nothing before it, and the turn just done showed that source there already. Once the error
  // leaves its window, the source goes, rewriting the prompt from it on: only when that pays.
  const context = Math.max(0, options.errorContextTurns);
  for (let i = 0; i < n; i++) {
    if (!isErrored(turns[i])) continue;
    const shown = plans[i].full === "error";
    const trail = options.keepLatestFull ? undefined : (turns[i].error?.trace ?? []);
    for (let j = i - 1; j >= 0 && j >= i - context; j--) {
      if (plans[j].full !== null || !(trail === undefined || definesAny(turns[j], trail))) continue;
      if (options.keepLatestFull) {
        if (shown) plans[j].full = "error-context";
        else if (!summaryPays(input, options, summaryOptions, plans[j], j, leaves[i])) plans[j].full = "cost";
      } else if (shown || !codeDropPays(input, options, j, leaves[i])) plans[j].code = true;
    }
  }
  // The reference design summarizes a successful turn as soon as the next one starts (the
  // prompt grows by appends only); `keepLatestFull` keeps it in full for one more prompt.
  if (n > 0) {
    const latest = plans[n - 1];
    if (input.maxTurns <= 1) latest.full = "single";
    else if (options.keepLatestFull) latest.full = "latest";
  }
  // Whatever else keeps them, these turns are shown as full history shows them.
  const floor = cacheFloor(input, options);
  for (let i = 0; i < floor; i++) plans[i].full = "uncached";
  const cutAt = limitPrints(input, plans, options, summaryOptions, floor);
  if (cutAt !== undefined) {
    // println lines of the turns before each one: a cut past them has dropped some of its output.
    // The floor's output is not in the stream (limitPrints).
    const before: number[] = [];
    let lines = 0;
    for (const [i, t] of turns.entries()) {
      before.push(lines);
      if (i >= floor) lines += seenOf(t, input.maxPrintChars).lines;
    }
    markReads(input, plans, { cutAt, before, floor }, options, summaryOptions);
    markSuperseded(input, plans, { cutAt, before, floor }, options, summaryOptions);
  }
  return plans;
}

/** The println stream of a prompt's turns: lines dropped in the prompt over k turns, lines before each turn, and the turns kept whole outside it (cacheFloor). */
interface Stream {
  cutAt: (k: number) => number;
  before: readonly number[];
  floor: number;
}

/** The system prompt (as full history sends it, by default) and the task. */
const openingTokens = (input: ViewInput, view: HistoryView = "full"): number => lineTokens(viewSystem(input.system, view)) + lineTokens(input.task) + 2 * TOKENS_PER_MESSAGE;

/**
 * The system prompt as the compressed view sends it: without the full view's note on `Stored:`,
 * unless the system prompt and task without it are below the cache's minimum, or the run's earlier
 * prompts were full history's (`fullTurns`). Then the view starts as full history does, note and
 * all (cacheFloor): 20 tokens shorter, it reached the minimum a prompt after full history and paid
 * that prompt uncached (a 6-turn run: 1.22x full history; a large task that reached it only with
 * the note, 2 turns: 1.65x), and it missed the system prompt a resumed run's cache held (see cacheFloor).
 */
const compressedSystem = (input: ViewInput, options: Required<ViewOptions>): string => viewSystem(input.system, openingTokens(input, "compressed") < options.cacheMinTokens || options.fullTurns > 0 ? "full" : "compressed");

/**
 * The earliest turns, shown as full history shows them (output, `Stored:` and all) because the
 * prompt needs them to reach the shortest prefix the cache serves (`cacheMinTokens`): each turn
 * whose prompt before it is still below the minimum; and the turns an earlier prompt of the run
 * sent so (`fullTurns`). Below the minimum no prompt is cached, so a
 * summary there, or a feedback shorter than full history's, kept later prompts under it, paying
 * the input price on the whole prompt where full history, past the minimum, read it cached: under
 * a 4,096-token minimum (claude-haiku-4, gemini-2.5-pro) runs of 7-11 turns cost 1.2-1.46x full
 * history. A pure function of those turns, so every later prompt keeps the same ones
 * (never-dearer.test.ts).
 */
function cacheFloor(input: ViewInput, options: Required<ViewOptions>): number {
  // The turns the run's earlier prompts sent as full history (a run saved under it, resumed with
  // compression): summarized, the first prompt after the resume wrote again what the cache held,
  // system prompt and all, and a run resumed for its last 2 of 11 turns cost 1.12x full history
  // under a token-prefix cache and 1.48x under breakpoints (never-dearer.test.ts).
  const sent = Math.min(options.fullTurns, input.turns.length);
  let size = openingTokens(input);
  if (size >= options.cacheMinTokens) return sent;
  let i = 0;
  while (i < input.turns.length && size < options.cacheMinTokens) {
    const s = sizesOf(input.turns[i++]);
    size += s.reply + s.feedback + 2 * TOKENS_PER_MESSAGE;
  }
  return Math.max(i, sent);
}

/**
 * Keeps the facts later programs used: an earlier data definition a successful program read
 * (its free names that name one: the latest definition before it) keeps its sample until it is
 * redefined, in one place, chosen so that no summary changes for a read. Only the first reader
 * counts, and only a definition whose own line shows no value (its turn printed: the value was
 * in output the println limit drops, and the line then shows a shape). If the defining turn's
 * output was still whole in the prompt that first showed the reader, the definition's own line
 * shows its sample once that output is dropped (the summary is rewritten then anyway); if it
 * was already dropped, the reader's summary shows it (`; Read: name = ...`), written once with
 * it. Once the name is redefined both go (those summaries are rewritten, as the defining turn's
 * is: see markSuperseded).
 */
function markReads(input: ViewInput, plans: TurnPlan[], { cutAt, before, floor }: Stream, options: Required<ViewOptions>, summaryOptions: SummaryOptions): void {
  const turns = input.turns;
  const latest = new Map<string, { d: DefinitionTrace; turn: number; shown: boolean }>();
  // The live functions' bodies: a function reads the globals it names when it is called.
  const bodies = new Map<string, readonly string[]>();
  const reads: Array<DefinitionTrace[] | undefined> = [];
  for (let j = 0; j < turns.length; j++) {
    const turn = turns[j];
    if (turn.status === "ok") {
      for (const name of withCalled(readsOf(turn), bodies)) {
        const def = latest.get(name);
        // A program that defines the name supersedes the earlier definition, read or not.
        if (def === undefined || def.shown || turn.definitions.some((d) => d.name === name)) continue;
        def.shown = true;
        const dropped = cutAt(j + 1);
        // All its output gone, a small collection's own summary line shows its whole value
        // (definitionShape): a `; Read:` line would show it twice.
        if (dropped >= before[def.turn] + seenOf(turns[def.turn], input.maxPrintChars).lines && isSmall(def.d) && plans[def.turn].full === null) continue;
        if (dropped > before[def.turn]) (reads[j] ??= []).push(def.d);
        else ((plans[def.turn].read ??= new Set()) as Set<string>).add(name);
      }
    }
    for (const d of turn.definitions) {
      if (d.kind === "function") {
        latest.delete(d.name);
        bodies.set(d.name, bodyReads(turn, d));
      } else {
        // A value holding functions (a table of handlers) is called through: `((:vip? checks) c)`,
        // which reads what its definition named.
        if (holdsFunctions(d)) bodies.set(d.name, bodyReads(turn, d));
        else bodies.delete(d.name);
        // Its own line shows the value whatever happens to the output, or its turn is kept whole: nothing to keep.
        latest.set(d.name, { d, turn: j, shown: turn.prints.length === 0 || isWhole(d) || writtenOut(turn, d) || j < floor });
      }
    }
  }
  // A redefined name's `; Read:` line goes as a superseded definition's does: with a rewrite
  // that happens anyway, or when dropping it pays (see markSuperseded).
  const n = turns.length;
  reads.forEach((list, j) => {
    const lines = seenOf(turns[j], input.maxPrintChars).lines;
    const live = list?.filter((d) => {
      const r = redefinedAfter(turns, d.name, j);
      if (r < 0) return true;
      return !(lines > 0 ? cutMovesInto(cutAt, before[j], lines, r + 1, n) : dropPays(input, options, summaryOptions, plans, j, r + 1, d));
    });
    if (live !== undefined && live.length > 0) plans[j].reads = live;
  });
}

/** The first turn after `j` that defines `name`, or -1. */
function redefinedAfter(turns: readonly Turn[], name: string, j: number): number {
  for (let r = j + 1; r < turns.length; r++) if (turns[r].definitions.some((d) => d.name === name)) return r;
  return -1;
}

// Per turn record and function definition: the free names of its program or source (analyzed once).
const readCache = new WeakMap<Turn | DefinitionTrace, readonly string[]>();

function readsOf(from: Turn | DefinitionTrace): readonly string[] {
  let names = readCache.get(from);
  if (names === undefined) {
    const source = "program" in from ? from.program : from.source;
    readCache.set(from, (names = source === null || source === undefined ? [] : freeNames(source)));
  }
  return names;
}

/**
 * The names a program reads, with those the functions it calls read when called, and the functions
 * those call (`bodies`: the live functions by name). A helper defined beside its data (`vip?` over
 * `vip`) and called later read the data without naming it: its values then left the prompt as
 * unused. The program's own names come back as they are when it calls none.
 */
function withCalled(names: readonly string[], bodies: ReadonlyMap<string, readonly string[]>): readonly string[] {
  if (!names.some((name) => bodies.has(name))) return names;
  const all = new Set(names);
  for (const name of all) {
    const body = bodies.get(name);
    if (body !== undefined) for (const read of body) all.add(read);
  }
  return [...all];
}

const bodyCache = new WeakMap<DefinitionTrace, readonly string[]>();

/**
 * The globals a definition's code reads when a function it made is called: the free names of its
 * top-level form, the `let` it closes over included. Its defn alone, `(let [s (set vip)] (defn vip?
 * [c] (contains? s c)))` read only `s`, so `vip` went unread however often vip? was called.
 */
function bodyReads(turn: Turn, d: DefinitionTrace): readonly string[] {
  let names = bodyCache.get(d);
  if (names === undefined) {
    const source = d.source?.trim();
    bodyCache.set(d, (names = source === undefined ? [] : freeNames(enclosingForm(turn, source))));
  }
  return names;
}

/**
 * Whether summarizing turn `i`, shown as written until then, pays in the prompt that first shows
 * `visible` turns (and every prompt after it): that prompt writes the summary and everything after
 * it again (the newest turn is new there either way), and each prompt from it on (as many as
 * promptsLeft counts) reads the summary instead of the reply. Later turns are counted at their reply's size, which bounds what they show.
 * `legend`: the share of the legend the summary owes when it is the prompt's first (legendShare),
 * as the fit in its turn counts it. Left out, a helper refined every turn, each turn kept as written
 * for its source and the first summarized later, cost 1.0026x full history under breakpoints at its
 * own budget.
 */
function summaryPays(input: ViewInput, options: Required<ViewOptions>, summaryOptions: SummaryOptions, plan: TurnPlan, i: number, visible: number, legend = 0): boolean {
  const turn = input.turns[i];
  const summarized = summarizedTokens(input, plan, summaryOptions, i) + legend;
  const written = sizesOf(turn).reply + feedbackTokens(historyFeedback(input, turn, plan, false));
  return payback(viewPrice(options), { savedTokens: written - summarized, prompts: promptsLeft(input.maxTurns, visible), rewrittenTokens: summarized + laterTokens(input.turns, i, visible) }).pays;
}

/** Whether dropping the function source after turn `i`'s summary, first in the prompt over `visible` turns, pays. */
function codeDropPays(input: ViewInput, options: Required<ViewOptions>, i: number, visible: number): boolean {
  const code = lineTokens(functionSources(input.turns[i]));
  return payback(viewPrice(options), { savedTokens: code, prompts: promptsLeft(input.maxTurns, visible), rewrittenTokens: laterTokens(input.turns, i, visible) }).pays;
}

/** Turn `i` summarized: its summary and the short feedback after it. */
function summarizedTokens(input: ViewInput, plan: TurnPlan, summaryOptions: SummaryOptions, i: number): number {
  const turn = input.turns[i];
  return summaryTokens(turn, plan, summaryOptions) + feedbackTokens(historyFeedback(input, turn, plan, true));
}

/** What a prompt over `visible` turns writes again after turn `i` (the newest turn is new there either way), at the replies' size. */
function laterTokens(turns: readonly Turn[], i: number, visible: number): number {
  let n = 0;
  for (let j = i + 1; j < visible - 1 && j < turns.length; j++) {
    const later = sizesOf(turns[j]);
    n += later.reply + later.feedback;
  }
  return n;
}

const lineCounts = new Map<string, number>();

/** Tokens of a rendered feedback or summary line (a few distinct texts per turn, so counted once each). */
function lineTokens(text: string): number {
  let n = lineCounts.get(text);
  if (n === undefined) {
    if (lineCounts.size > 4096) lineCounts.clear();
    lineCounts.set(text, (n = countTokens(text)));
  }
  return n;
}

const feedbackTokens = (text: string | undefined): number => (text === undefined ? 0 : lineTokens(text));

const summaryOptionsOf = (input: ViewInput, options: Required<ViewOptions>): SummaryOptions => ({ sampleItems: options.sampleItems, sampleChars: options.sampleChars, toolCallsPerTurn: options.toolCallsPerTurn, maxPrintChars: input.maxPrintChars });

function summaryTokens(turn: Turn, plan: TurnPlan, options: SummaryOptions): number {
  const summary = summaryOf(turn, plan, options);
  let n = summaryCounts.get(summary);
  if (n === undefined) summaryCounts.set(summary, (n = countTokens(summary.text)));
  return n;
}

const summaryCounts = new WeakMap<RenderedSummary, number>();

// Per turn record: the tokens of its summary less its output, for one set of summary options.
const restCounts = new WeakMap<Turn, { key: string; tokens: number }>();

/**
 * Tokens a turn shows besides its output, counted as the larger of its program and its summary
 * without output: what a println cut rewrites of it (tool lines with their results' shapes can be longer than
 * the program; a reply's prose pays for them). The summary is the turn's as first written
 * (nothing superseded or read yet), so every prompt replaying a cut counts the same.
 */
function restTokens(turn: Turn, bare: TurnPlan, options: SummaryOptions): number {
  const key = summaryKey(bare, options);
  const hit = restCounts.get(turn);
  if (hit !== undefined && hit.key === key) return hit.tokens;
  const tokens = Math.max(sizesOf(turn).program, countTokens(renderSummary(turn, bare, options).text));
  restCounts.set(turn, { key, tokens });
  return tokens;
}

/**
 * What turn `i` shows besides its output, which a println cut before it writes again: a turn that
 * failed, kept in full while its error is in the window, its whole reply and feedback (excerpt,
 * hint, the calls it made); any other its summary (or program, when longer) and short feedback.
 * Counting only the summary made cuts that did not pay back past errors kept in full (errors
 * between wide prints: 1.14x full history at 3x the turns used). The same in every prompt, so
 * each prompt prices the cuts of earlier ones as they did; exported for the property tests.
 */
export function shownBesidesOutput(input: ViewInput, plan: Pick<TurnPlan, "redefines">, i: number, summaryOptions: SummaryOptions): number {
  const turn = input.turns[i];
  const bare: TurnPlan = { full: null, printsShown: 0, superseded: undefined, redefines: plan.redefines, read: undefined, reads: undefined };
  if (isErrored(turn)) return sizesOf(turn).reply + feedbackTokens(historyFeedback(input, turn, bare, false));
  return restTokens(turn, bare, summaryOptions) + feedbackTokens(historyFeedback(input, turn, bare, true));
}

/**
 * What the turn just done shows after its summary for one prompt: the model's prose as a note and
 * the source of the functions it defined, each only when it fits, with the summary (less what it
 * taught of values read, as in the size rule), in the reply and feedback it stands for. The code
 * comes first: the next program builds on it, and if that program fails in one of the functions,
 * the next prompt keeps the code where it was.
 */
function tailOf(turn: Turn, summary: string, feedback: string | undefined, rewritten: ModelPrice | undefined, legend: number): string {
  const code = functionSources(turn);
  const note = noteOf(turn);
  // With the breakpoint layout the tail shares the feedback's message, which the next prompt
  // writes again without it (a write where it would have read the message cached): there the
  // tail fits only with that rewrite paid too. Unpriced, a note on every turn of a name refined
  // without printing cost 1.010x full history (never-dearer.test.ts).
  // The first summary's share of the legend is owed by the tail too (see legendShare): fitted
  // without it, a first summary on a run's last prompts sent more than the turn it replaced.
  const margin = legend + (rewritten !== undefined && feedback !== undefined ? tailRewrite(feedback, rewritten) : 0);
  for (const tail of [note === "" || code === "" ? "" : `${code}\n${note}`, code, note]) {
    if (tail !== "" && fits(`${summary}\n${tail}`, feedback, turn.reply, turn.feedback, margin)) return tail;
  }
  return "";
}

/** A feedback message written again under a breakpoint cache (`price`), in tokens at the write price: (write − read) / write of the message. */
function tailRewrite(feedback: string, price: ModelPrice): number {
  const cache = price.cache;
  const write = writeMultiplier(cache);
  return Math.ceil(((write - readMultiplier(cache)) / write) * (lineTokens(feedback) + TOKENS_PER_MESSAGE));
}

const sourceTexts = new WeakMap<Turn, string>();

/**
 * The source of the functions a turn defined, tables of functions included (`(def handlers {:fast
 * (fn ...)})`: the next program calls through them as through a defn), fenced as the model wrote
 * them ("" when it defined none); once per turn record.
 */
function functionSources(turn: Turn): string {
  let text = sourceTexts.get(turn);
  if (text === undefined) {
    const sources = new Set<string>();
    if (turn.status === "ok") for (const d of turn.definitions) if ((d.kind === "function" || holdsFunctions(d)) && d.source !== undefined) sources.add(enclosingForm(turn, d.source.trim()));
    text = sources.size === 0 ? "" : `\`\`\`clojure\n${[...sources].join("\n")}\n\`\`\``;
    sourceTexts.set(turn, text);
  }
  return text;
}

/**
 * The top-level form of `program` that holds a definition's `source`, or the source itself. A
 * function's recorded source is its defn form: one defined inside a let showed `(defn tax [x] (min
 * cap (* x rate)))`, and the rate and cap it closes over were in no line of the prompt.
 */
function enclosingForm(turn: Turn, source: string): string {
  const program = turn.program;
  const at = program?.indexOf(source) ?? -1;
  if (program === null || at < 0) return source;
  const form = programForms(turn).find((f) => f.loc.offset <= at && at + source.length <= f.loc.end);
  return form === undefined ? source : program.slice(form.loc.offset, form.loc.end);
}

function definesAny(turn: Turn, names: readonly string[]): boolean {
  return turn.definitions.some((d) => d.kind === "function" && names.includes(d.name));
}

/**
 * Marks the definitions a later turn redefines; a summary leaves their lines out, so no stale
 * value reads as live. Leaving a line out rewrites the cached prompt from that summary on, so
 * a mark is made only with a rewrite that happens anyway: from the first prompt after the
 * redefinition in which the println cut drops some more of that turn's output. A turn that
 * printed nothing is never rewritten so: there the mark is made in the prompt that first shows
 * the redefinition, if dropping the stale line pays back the rewrite in the prompts left, and
 * never otherwise. Each decision is the one that prompt made, so every later prompt agrees.
 */
function markSuperseded(input: ViewInput, plans: TurnPlan[], { cutAt, before, floor }: Stream, options: Required<ViewOptions>, summaryOptions: SummaryOptions): void {
  const turns = input.turns;
  const n = turns.length;
  // The next definition of each name after the turn being looked at.
  const next = new Map<string, number>();
  for (let i = n - 1; i >= 0; i--) {
    const turn = turns[i];
    const lines = seenOf(turn, input.maxPrintChars).lines;
    let set: Set<string> | undefined;
    // The floor stays as written (cacheFloor).
    if (i >= floor) for (const d of turn.definitions) {
      const j = next.get(d.name);
      if (j === undefined) continue;
      // The first prompt that shows turn j shows `j + 1` turns.
      const marked = lines > 0 ? cutMovesInto(cutAt, before[i], lines, j + 1, n) : dropPays(input, options, summaryOptions, plans, i, j + 1, d);
      if (marked) (set ??= new Set()).add(d.name);
    }
    plans[i].superseded = set;
    for (const d of turn.definitions) next.set(d.name, i);
  }
}

/** Whether a prompt over `from`..`to` turns dropped more of the output at lines [start, start + lines) than the prompt before it. */
function cutMovesInto(cutAt: (k: number) => number, start: number, lines: number, from: number, to: number): boolean {
  for (let k = from; k <= to; k++) {
    const was = cutAt(k - 1);
    if (cutAt(k) > was && was < start + lines && cutAt(k) > start) return true;
  }
  return false;
}

/**
 * Whether leaving out turn `i`'s line for `d` pays in the prompt over `visible` turns: it saves
 * the line in every prompt left (as promptsLeft counts them), and rewrites the turn's summary
 * without it and every turn after it but the newest (counted at their replies' size, which bounds
 * what they show). The line's `(redefined later)` stand-in, shown when it was the summary's only
 * line, is counted as staying, so neither side is overstated.
 */
function dropPays(input: ViewInput, options: Required<ViewOptions>, summaryOptions: SummaryOptions, plans: readonly TurnPlan[], i: number, visible: number, d: DefinitionTrace): boolean {
  if (visible > input.turns.length) return false;
  // The line as the summary shows it: a turn that printed nothing shows the records' keys where
  // the sample would not fit in it (taughtDetail), a line shorter than the sample.
  const detail = input.turns[i].definitions.includes(d) ? taughtDetail(input, options, summaryOptions, plans, i) : undefined;
  // A turn kept as written shows its program, not a line: leaving the name out would summarize it
  // in place of its reply, rewriting the prompt from it for a saving no line prices (a big
  // definition redefined in the next turn: 1.002x full history at three times its turns).
  if (detail === "none") return false;
  const line = lineTokens(definitionLine(d, false, detail === "shape" ? "shape" : "sample", summaryOptions));
  const marker = lineTokens(definitionLine(d, true, "sample", summaryOptions));
  const rewritten = summarizedTokens(input, plans[i], summaryOptions, i) - line + marker + laterTokens(input.turns, i, visible) + legendRewritten(plans, i, options);
  return payback(viewPrice(options), { savedTokens: line - marker, prompts: promptsLeft(input.maxTurns, visible), rewrittenTokens: rewritten }).pays;
}

/**
 * Limits the println lines shown. Default mode: the lines of every turn in the prompt are
 * one stream, counted as the model saw them (a cut output counts the head it showed); past
 * `printlnHistoryLimit` lines or `printlnHistoryTokens` tokens, the oldest turns' output is
 * dropped (see printCut). The latest turn's output is always shown whole. In strict-prefix
 * mode the limit applies per turn once it is no longer the latest (its own last N lines, where
 * that cut pays: strictCutPays) and a written summary never changes after that: size traded for
 * a prefix that only grows.
 */
function limitPrints(input: ViewInput, plans: TurnPlan[], options: Required<ViewOptions>, summaryOptions: SummaryOptions, floor: number): ((k: number) => number) | undefined {
  const turns = input.turns;
  const limit = Math.max(0, Math.floor(options.printlnHistoryLimit));
  const last = turns.length - 1;
  if (options.strictPrefix) {
    for (let i = floor; i < last; i++) {
      const seen = seenOf(turns[i], input.maxPrintChars);
      const kept = Math.min(limit, seen.lines);
      if (kept < seen.lines && (options.keepLatestFull || strictCutPays(input, plans, options, summaryOptions, i, kept))) plans[i].printsShown = kept;
    }
    return undefined;
  }
  // With keepLatestFull the latest turn's output is in its own feedback, outside the stream.
  const end = options.keepLatestFull ? last : last + 1;
  const lines: number[] = [];
  const tokens: number[] = [];
  const rest: number[] = [];
  // Under a breakpoint cache a cut from the first summary on writes the whole message again, the
  // legend heading it too; a token-prefix cache keeps the text before the first change.
  let legend = options.cacheModel === "breakpoint" ? legendSize(options) : 0;
  for (let i = 0; i < end; i++) {
    // The floor (cacheFloor) keeps its output, outside the stream; a cut from before it writes it again whole.
    if (i < floor) {
      const size = sizesOf(turns[i]);
      lines.push(0);
      tokens.push(0);
      rest.push(size.reply + size.feedback);
      continue;
    }
    const seen = seenOf(turns[i], input.maxPrintChars);
    lines.push(seen.lines);
    tokens.push(seen.tokens);
    rest.push(shownBesidesOutput(input, plans[i], i, summaryOptions) + (plans[i].full === null ? legend : 0));
    if (plans[i].full === null) legend = 0;
  }
  // The prompt whose stream holds `end` turns shows `end` turns (`end + 1` with keepLatestFull):
  // a cut's saving recurs over the prompts left from it (see prompts-left.ts).
  const shown = options.keepLatestFull ? 1 : 0;
  // A breakpoint prompt over v turns writes a cache entry at the message before its latest turn:
  // after turn v - 2 (see compressedView's breakpoints).
  const entryAfter = options.cacheModel === "breakpoint" ? (end: number) => end + shown - 2 : undefined;
  // Its lowest mark past the task is message 2v - 2 (two messages a turn after the system prompt
  // and task: turn e's entry ends at message 2e + 3), and a lookup goes back `lookback` messages
  // from a mark: an entry further back is not found (PrintRule.reach).
  const cache = viewPrice({ cacheModel: "breakpoint", cacheWrite: options.cacheWrite }).cache;
  const lookback = cache.kind === "breakpoint" ? cache.lookback : Infinity;
  const reach = entryAfter === undefined ? undefined : (end: number) => Math.ceil((2 * (end + shown) - 5 - lookback) / 2);
  const rule: PrintRule = { limit, tokens: options.printlnHistoryTokens, dropAfter: options.dropAfterTokens, price: viewPrice(options), promptsLeft: (end) => promptsLeft(input.maxTurns, end + shown), rest, ...(entryAfter === undefined ? {} : { entryAfter }), ...(reach === undefined ? {} : { reach }) };
  const cuts: number[] = [];
  const cut = printCut(lines, tokens, rule, !options.keepLatestFull, cuts);
  let offset = 0;
  for (let i = floor; i < end && offset < cut; i++) {
    plans[i].printsShown = lines[i] - Math.min(lines[i], cut - offset);
    offset += lines[i];
  }
  // The prompt over k turns had the stream of its first k (or k - 1) turns: a prefix of this one's.
  return (k) => {
    const e = options.keepLatestFull ? k - 1 : k;
    return e <= 0 ? 0 : cuts[Math.min(e, cuts.length) - 1];
  };
}

/**
 * Strict-prefix mode: whether cutting turn `i`'s output to its last `kept` lines pays. With the
 * design's timing the turn was the latest, its output whole, in the prompt before the cut, so the
 * cut rewrites it (the lines kept and what the turn shows besides them) where that prompt's cache
 * held it; it saves the dropped lines in the prompts left. Unpriced, a turn of 40 short lines cut
 * to 15 the prompt after it cost a 4-turn run 1.012x full history under breakpoints. With the
 * earlier timing the turn is summarized there anyway (paysBack prices that).
 */
function strictCutPays(input: ViewInput, plans: readonly TurnPlan[], options: Required<ViewOptions>, summaryOptions: SummaryOptions, i: number, kept: number): boolean {
  const seen = seenOf(input.turns[i], input.maxPrintChars);
  const left = partTokens(seen.lines, seen.tokens, kept);
  return payback(viewPrice(options), { savedTokens: seen.tokens - left, prompts: promptsLeft(input.maxTurns, i + 2), rewrittenTokens: left + shownBesidesOutput(input, plans[i], i, summaryOptions) }).pays;
}

const legendTokens = new Map<string, number>();

/** Tokens of the legend the view's mode sends. */
function legendSize(options: LegendMode): number {
  const legend = summaryLegend(options);
  let n = legendTokens.get(legend);
  if (n === undefined) legendTokens.set(legend, (n = countTokens(legend)));
  return n;
}

/**
 * What turn `i`'s summary shows of the data it defined without printing, before any of its lines
 * is left out: taughtSummary's choice, with the arguments the view passes it (sets `plan.teach`).
 */
function taughtDetail(input: ViewInput, options: Required<ViewOptions>, summaryOptions: SummaryOptions, plans: readonly TurnPlan[], i: number): Detail | undefined {
  const turn = input.turns[i];
  const plan = plans[i];
  if (!isSilent(turn) || plan.full !== null) return undefined;
  const first = !plans.slice(0, i).some((p) => p.full === null);
  taughtSummary(turn, plan, summaryOptions, historyFeedback(input, turn, plan, true), options.strictPrefix || options.keepLatestFull ? "" : functionSources(turn), first ? legendShare(input, options, i) : 0);
  return plan.teach;
}

/**
 * The legend a change to turn `i`'s summary writes again: under a breakpoint cache the legend
 * shares the first summary's message, which a change anywhere in it writes whole (a token-prefix
 * cache keeps the text before the change). The first summary is taken to be the first turn not
 * kept in full, as the println cut takes it.
 */
function legendRewritten(plans: readonly TurnPlan[], i: number, options: Required<ViewOptions>): number {
  if (options.cacheModel !== "breakpoint" || plans[i].full !== null) return 0;
  for (let k = 0; k < i; k++) if (plans[k].full === null) return 0;
  return legendSize(options);
}

/** The bounds of the println stream: lines, tokens, and the size below which nothing is dropped. */
export interface PrintRule {
  limit: number;
  tokens: number;
  dropAfter: number;
  /** The cache a cut is priced under (see {@link viewPrice}); absent: cuts always pay. */
  price?: ModelPrice;
  /** Prompts still to come (this one included) when the stream holds `end` turns. */
  promptsLeft?: (end: number) => number;
  /**
   * Tokens each turn shows besides its output (see restTokens). A cut rewrites them too, from
   * the first turn whose output it changes on: everything after a change is written again under
   * either cache.
   */
  rest?: readonly number[];
  /**
   * Breakpoint caches: the turn after which the prompt whose stream holds `end` turns writes a
   * cache entry. A cut there is written again from the last entry still valid before the first
   * turn it changes, not from that turn: after one cut rewrote the history, the next (which drops
   * the turns just after it) found no entry before them and wrote the whole history again
   * (facts-read-late at 1.5-5x its turns: 1.019x full history). Absent: a token-prefix cache,
   * which serves the text up to the first change.
   */
  entryAfter?: (end: number) => number;
  /**
   * Breakpoint caches: the oldest turn whose entry the prompt whose stream holds `end` turns can
   * still hit. A lookup goes back only so many message boundaries from a breakpoint; an entry
   * before that is not found, and the prompt is written again from the task (a cut priced from an
   * entry 30 messages back cost 2.0% more than keeping the output). Absent: any entry is found.
   */
  reach?: (end: number) => number;
}

const PREFIX_PRICE = providerPrice(1, 0, "openai");
const breakpointPrices = new Map<number, ModelPrice>();

/**
 * The price the view's cache stands for, per input token, as its provider's current models bill a
 * cache (prices.ts): a prefix cache reads at 0.1x and rewrites at 1x (so a rewritten token costs 9
 * cached reads more), a breakpoint cache writes at `cacheWrite` (1.25x: 11.5; an hour's cache, 2x:
 * 19). The view has no model to look up; the payback rule needs only these ratios. Every decision
 * of the view prices here.
 */
export function viewPrice(options: Pick<Required<ViewOptions>, "cacheModel" | "cacheWrite">): ModelPrice {
  if (options.cacheModel !== "breakpoint") return PREFIX_PRICE;
  let price = breakpointPrices.get(options.cacheWrite);
  if (price === undefined) breakpointPrices.set(options.cacheWrite, (price = { input: 1, output: 0, cache: anthropicCache(1024, options.cacheWrite) }));
  return price;
}

/**
 * How many of the oldest println lines are dropped, given each turn's lines and tokens
 * (oldest first; with `protectLast` the last turn's output is never cut). The cut only moves
 * forward, and only when the output shown since the last cut passes a bound: replayed over
 * the earlier prompts (each one's stream is a prefix of this one's), so the view stays a pure
 * function of the turns. Nothing is dropped while the shown output is within `dropAfter`
 * tokens, nor while it is within both the line limit and the token budget. Past them, the
 * oldest turns are dropped whole, down to the most recent whole turns holding at least half
 * the line limit unless that would pass half the token budget (the token bound wins: a turn
 * of wide lines counts as its tokens), and a turn that alone overflows the line limit keeps
 * its most recent lines up to it. So each cut leaves half a budget, the next comes only
 * after another half budget of new output, and the cut point stays put in between. A cut is
 * made only when it pays under the cache model: it rewrites the output kept after it (read
 * cached before, written again now) and saves reading the dropped tokens in every prompt
 * it can count on (`price`, `promptsLeft`); otherwise the output stays. With `cuts`,
 * the cut after each prefix of the turns (what each earlier prompt dropped) is pushed to it.
 */
export function printCut(lines: readonly number[], tokens: readonly number[], rule: PrintRule, protectLast: boolean, cuts?: number[]): number {
  let cut = 0;
  // Breakpoint caches: per turn, whether a cache entry ends after it on the prompts' current text.
  const entries: boolean[] | undefined = rule.entryAfter === undefined ? undefined : [];
  for (let end = 1; end <= lines.length; end++) {
    let shown = 0;
    let size = 0;
    let before = 0;
    for (let i = 0; i < end; i++) {
      const kept = Math.min(lines[i], Math.max(0, before + lines[i] - cut));
      before += lines[i];
      if (kept === 0) continue;
      shown += kept;
      size += partTokens(lines[i], tokens[i], kept);
    }
    if (size > rule.dropAfter && (shown > rule.limit || size > rule.tokens)) {
      const next = floorCut(lines, tokens, end, rule, protectLast);
      if (next > cut) {
        const changed = turnOfLine(lines, cut);
        let start = changed;
        if (entries !== undefined) {
          while (start > 0 && entries[start - 1] !== true) start--;
          if (start > 0 && start - 1 < (rule.reach?.(end) ?? 0)) start = 0;
        }
        if (pays(lines, tokens, end, cut, next, start, rule, protectLast)) {
          cut = next;
          // The entries after the changed turn held the text it had.
          entries?.fill(false, changed);
        }
      }
    }
    const entry = rule.entryAfter?.(end);
    if (entries !== undefined && entry !== undefined && entry >= 0) entries[entry] = true;
    cuts?.push(cut);
  }
  return cut;
}

/** Tokens of the most recent `kept` of a turn's `lines` lines of `tokens` tokens. */
const partTokens = (lines: number, tokens: number, kept: number): number => (kept >= lines ? tokens : (tokens * kept) / lines);

/** The turn holding line `line` of the stream (the first turn a cut from there changes). */
function turnOfLine(lines: readonly number[], line: number): number {
  let before = 0;
  let i = 0;
  while (i < lines.length && before + lines[i] <= line) before += lines[i++];
  return i;
}

/**
 * Whether moving the cut from `from` to `to` lines pays back within the prompts left (see
 * printCut), when it writes the prompt again from turn `start` on.
 */
function pays(lines: readonly number[], tokens: readonly number[], end: number, from: number, to: number, start: number, rule: PrintRule, protectLast: boolean): boolean {
  if (rule.price === undefined || rule.promptsLeft === undefined) return true;
  let dropped = 0;
  let rewritten = 0;
  let before = 0;
  // The protected latest turn is new in this prompt either way.
  const last = protectLast ? end - 1 : end;
  for (let i = 0; i < last; i++) {
    const old = Math.min(lines[i], Math.max(0, before + lines[i] - from));
    const now = Math.min(lines[i], Math.max(0, before + lines[i] - to));
    before += lines[i];
    dropped += partTokens(lines[i], tokens[i], old) - partTokens(lines[i], tokens[i], now);
    if (i >= start) rewritten += partTokens(lines[i], tokens[i], now) + (rule.rest?.[i] ?? 0);
  }
  return payback(rule.price, { savedTokens: dropped, prompts: rule.promptsLeft(end), rewrittenTokens: rewritten }).pays;
}

/**
 * The lines dropped to keep the most recent whole turns of `lines[0..end)` holding at least
 * half the line limit, within half the token budget.
 */
function floorCut(lines: readonly number[], tokens: readonly number[], end: number, rule: PrintRule, protectLast: boolean): number {
  let total = 0;
  for (let i = 0; i < end; i++) total += lines[i];
  const floor = Math.ceil(rule.limit / 2);
  const budget = rule.tokens / 2;
  let kept = 0;
  let size = 0;
  let i = end - 1;
  if (protectLast && end > 0) kept += lines[i--];
  while (i >= 0 && kept < floor && size + tokens[i] <= budget) {
    kept += lines[i];
    size += tokens[i--];
  }
  // Only the protected turn kept: it stays whole even past the limit.
  const onlyProtected = protectLast && i + 1 === end - 1;
  return total - (onlyProtected ? kept : Math.min(kept, rule.limit));
}

// Per turn record: the println lines its feedback showed and their tokens, per print cap.
const seenCache = new WeakMap<Turn, { chars: number | undefined; lines: number; tokens: number }>();

function seenOf(turn: Turn, maxChars: number | undefined): { lines: number; tokens: number } {
  const hit = seenCache.get(turn);
  if (hit !== undefined && hit.chars === maxChars) return hit;
  let entry = { chars: maxChars, lines: 0, tokens: 0 };
  if (turn.prints.length > 0) {
    const seen = seenPrints(turn.prints, maxChars);
    entry = { chars: maxChars, lines: seen.lines.length, tokens: countTokens(renderSeenPrints(seen)) };
  }
  seenCache.set(turn, entry);
  return entry;
}

// Per turn record: tokens of its program (a failed reply without one: the reply), reply and feedback.
const sizes = new WeakMap<Turn, { program: number; reply: number; feedback: number }>();

function sizesOf(turn: Turn): { program: number; reply: number; feedback: number } {
  let n = sizes.get(turn);
  if (n === undefined) sizes.set(turn, (n = { program: countTokens(turn.program ?? turn.reply), reply: countTokens(turn.reply), feedback: turn.feedback === undefined ? 0 : countTokens(turn.feedback) }));
  return n;
}

/**
 * The options the view lays its prompt out by: under a breakpoint cache allowing fewer marks than
 * the layout places (four: see compressedView's breakpoints), a strict prefix. The client keeps the
 * latest marks; with a single one, at the last message, which the default layout rewrites in the
 * next prompt (the tail after the turn just done), no prompt found an entry (up to 2.03x full
 * history); with two or three, the task's mark gone, a prompt after a rewrite found one only within
 * the provider's lookback (2 marks, no lookback: 2.75x; 3 marks, 5 blocks: up to 1.57x).
 */
function laidOut(options: Required<ViewOptions>): Required<ViewOptions> {
  return options.cacheModel === "breakpoint" && options.cacheMaxBreakpoints < 4 && !options.strictPrefix ? { ...options, strictPrefix: true } : options;
}

/** The compressed prompt view (with `compressHistory: false` it is the full view). */
export const compressedView: PromptView = (input, rawOptions) => {
  const options = laidOut(resolveViewOptions(rawOptions));
  if (!options.compressHistory) return fullView(input, options);
  const plans = planTurns(input, options);
  const summaryOptions = summaryOptionsOf(input, options);
  const messages: ChatMessage[] = [
    { role: "system", content: compressedSystem(input, options) },
    { role: "user", content: input.task },
  ];
  const stats: Required<ViewStats> = { turnsCompressed: 0, turnsFull: [], definitionsShown: 0, printlnShown: 0, printlnDropped: 0, toolCallsShown: 0, definitionsSuperseded: 0, toolCallsDropped: 0 };
  const places: TurnPlace[] = [];
  // Consecutive summaries share one assistant message, each appended to the one before it
  // (a blank line apart); a summarized turn's feedback that is only the turn line is left
  // out inside such a run. The next prompt then extends this one's text where it ended, so
  // the prefix cache holds, and the framing and turn lines of old turns are not paid for
  // again in every prompt. Any other feedback, and every full turn, ends the run.
  // A breakpoint cache hits only at message boundaries an earlier prompt wrote: there a
  // message whose text grows is a miss every prompt, so each summary is a message of its own.
  const ownMessages = rawOptions.cacheModel === "breakpoint";
  let run = "";
  let runFeedback: string | undefined;
  let tailed = false;
  // Whether the legend was sent: it heads the prompt's first summary line (see summaryLegend).
  let legendSent = false;
  const flush = (): void => {
    if (run === "") return;
    messages.push({ role: "assistant", content: run });
    if (runFeedback !== undefined) messages.push({ role: "user", content: runFeedback });
    run = "";
  };
  const info = feedbackInfo(input);
  const last = input.turns.length - 1;
  for (let i = 0; i <= last; i++) {
    const turn = input.turns[i];
    const plan = plans[i];
    stats.printlnShown += plan.printsShown;
    stats.printlnDropped += seenOf(turn, input.maxPrintChars).lines - plan.printsShown;
    let full = plan.full;
    if (full === null) {
      const shortFeedback = historyFeedback(input, turn, plan, true);
      // The legend heads the first summary: paid by runs that summarize, once, then cached.
      const first = !legendSent;
      const legend = first ? legendShare(input, options, i) : 0;
      const summary = taughtSummary(turn, plan, summaryOptions, shortFeedback, options.strictPrefix || options.keepLatestFull ? "" : functionSources(turn), legend);
      const latest = i === last && !options.strictPrefix;
      const tail = summary === undefined ? "" : latest ? tailOf(turn, counted(turn, summary), shortFeedback, ownMessages && promptsLeft(input.maxTurns, last + 1) > 1 ? viewPrice(options) : undefined, legend) : plan.code === true ? functionSources(turn) : "";
      // A summary never restates a program at more than the program's size (terse programs
      // stay as written, as full history shows them).
      if (summary === undefined) full = "short";
      else if (options.strictPrefix && !paysBack(summary.text, shortFeedback, turn.reply, keptFeedback(input, turn, plan, i === last, options), options.paybackPrompts, viewPrice(options), options.keepLatestFull)) full = "cost";
      // The next program builds on the functions the turn just done defined: when their source does
      // not fit after its summary, the turn stays as written for that prompt (its summary restates
      // it at more than its size), and later only until summarizing it pays. Summarized without the
      // source, a sentence and a defn left the next prompt the signature alone.
      else if (latest ? sourceLeftOut(turn, tail) : !options.strictPrefix && keptForSource(input, rawOptions, i) && !summaryPays(input, options, summaryOptions, plan, i, i + 2, legend)) full = latest ? "short" : "cost";
      else {
        stats.turnsCompressed++;
        const superseded = plan.superseded?.size ?? 0;
        stats.definitionsShown += turn.definitions.length - superseded;
        stats.definitionsSuperseded += superseded;
        stats.toolCallsShown += summary.toolCallsListed;
        stats.toolCallsDropped += turn.toolCalls.length - summary.toolCallsListed;
        if (run !== "") run += "\n\n";
        if (first) run += summaryLegend(options) + "\n";
        legendSent = true;
        // The turn just done keeps the model's prose for one prompt, and the source of the
        // functions it defined (the next program builds on them, and a summary keeps only their
        // signatures: ptc_runner's lesson from its compressed runs); a turn whose function failed
        // keeps that source while the error is in its window. That tail goes at the summary's end
        // (a later prompt extends the text before it), or with the breakpoint layout after its
        // feedback, the one message the next prompt does not keep as written. Keeping the turn as
        // written instead rewrote the prompt from it when it was summarized a prompt later: it is
        // kept so only when its source does not fit (above).
        // The records hold hidden values' stand-ins unshown (tool arguments and results): shown
        // here, so that the view is the prompt as sent wherever it is rebuilt from a trace.
        const text = showStandIns(tail === "" || ownMessages ? summary.text : `${summary.text}\n${tail}`);
        places.push({ turn: turn.number, message: messages.length, start: run.length, text });
        run += text;
        const after = tail === "" || !ownMessages ? shortFeedback : shortFeedback === undefined ? tail : `${shortFeedback}\n\n${tail}`;
        runFeedback = after === undefined ? undefined : showStandIns(after);
        if (tail !== "" && ownMessages && i === last) tailed = true;
        if (ownMessages || shortFeedback === undefined || shortFeedback !== renderTurnLine(turn.number + 1, info)) flush();
        continue;
      }
      // Kept as written after all (its functions' source, its summary's cost): it teaches nothing
      // beyond its program, as full history shows it (see taughtSummary). Samples after it were
      // bytes full history never sends, '; Defined:' lines in a prompt with no legend.
      plan.teach = "none";
    }
    flush();
    stats.turnsFull.push({ turn: turn.number, reason: full });
    let learned = full === "uncached" ? "" : learnedLines(turn, plan, summaryOptions);
    // What a turn kept in full taught is in summary lines too: the legend heads them when no summary
    // came before (keepLatestFull's latest turn, a turn before an error), else the prompt showed
    // '; Defined: rows = vector[6], sample: ...' unexplained.
    if (learned !== "" && !legendSent && turn.feedback !== undefined) {
      learned = `${summaryLegend(options)}\n${learned}`;
      legendSent = true;
    }
    const feedback = full === "uncached" ? turn.feedback : withLearned(keptFeedback(input, turn, plan, i === last, options), learned);
    places.push({ turn: turn.number, message: messages.length, start: 0, text: turn.reply });
    messages.push({ role: "assistant", content: turn.reply });
    if (feedback !== undefined) messages.push({ role: "user", content: showStandIns(feedback) });
  }
  flush();
  if (!ownMessages) return { messages, stats, turns: places };
  // After the task (the system prompt and task are read by every prompt), at the end, and before
  // what the next prompt may change: the tail in the last message, else the latest turn. Without
  // that mark, a prompt after a rewrite (a println cut) found no written prefix past the task and
  // wrote every message again (random tool-heavy runs at 3x budgets: 1.07x full history).
  // One more before the turn before the latest, whose summary the next prompt may rewrite (a
  // superseded line, a moved cut): a hit there, or within the 20 blocks a lookup goes back from
  // it, saves the history before it. Without it, a name redefined every turn cost up to 1.33x
  // full history. With four marks a client's own mark on the system prompt gives way: the task's covers it.
  const end = messages.length - 1;
  const stable = tailed ? end - 1 : (places.at(-1)?.message ?? end) - 1;
  if (end <= 1) return { messages, stats, turns: places, breakpoints: [end] };
  const breakpoints = [1];
  if (stable > 1 && stable < end) {
    if (stable - 1 > 1) breakpoints.push(stable - 1);
    breakpoints.push(stable);
  }
  breakpoints.push(end);
  return { messages, stats, turns: places, breakpoints };
};

/** The turn defined functions whose source its tail leaves out. */
const sourceLeftOut = (turn: Turn, tail: string): boolean => functionSources(turn) !== "" && !tail.startsWith("```");

// Per turn record: whether the prompt it was the turn just done in kept it as written for its functions' source.
const keptForSourceCache = new WeakMap<Turn, { key: string; kept: boolean }>();

/**
 * Whether turn `i` was kept as written in the prompt where it was the turn just done, because its
 * functions' source did not fit after its summary: that prompt, rebuilt (the view is a pure function
 * of the turns before it), once per turn record and settings.
 */
function keptForSource(input: ViewInput, rawOptions: ViewOptions, i: number): boolean {
  const turn = input.turns[i];
  if (functionSources(turn) === "") return false;
  const key = `${settingsKey(input)}/${JSON.stringify(rawOptions)}`;
  const hit = keptForSourceCache.get(turn);
  if (hit !== undefined && hit.key === key) return hit.kept;
  const kept = compressedView({ ...input, turns: input.turns.slice(0, i + 1) }, rawOptions).stats.turnsFull.some((f) => f.turn === turn.number && f.reason === "short");
  keptForSourceCache.set(turn, { key, kept });
  return kept;
}

/**
 * The feedback after an earlier turn: its notes, errors and turn line, and its println
 * lines still inside the history limit with a count of those dropped (a summarized turn
 * shows them in its summary instead). The names in memory are left out: the summaries and full programs show them,
 * and repeating them after every turn would grow the prompt quadratically.
 */
function historyFeedback(input: ViewInput, turn: Turn, plan: TurnPlan, summarized: boolean): string | undefined {
  if (turn.feedback === undefined) return undefined;
  const feedback = turn.feedback;
  const shown = summarized ? 0 : plan.printsShown;
  return rendering(turn, `${summarized}/${shown}/${settingsKey(input)}`, () => {
    const info = feedbackInfo(input);
    // A summarized error's code is gone, so its excerpt and hint would point at nothing.
    const bare = renderFeedback(turn, info, { prints: false, errorDetail: !summarized, stored: false });
    if (summarized || turn.prints.length === 0) return bare;
    // A turn kept as written counts the lines the limit dropped (`Output (12 dropped)`): without
    // them its println calls read as printing nothing, or only the lines left.
    const none = renderFeedback(turn, info, { prints: true, maxPrintChars: input.maxPrintChars, printsShown: 0, stored: false });
    if (shown === 0) return none;
    const withPrints = renderFeedback(turn, info, { prints: true, maxPrintChars: input.maxPrintChars, printsShown: shown, stored: false });
    // Feedback cuts long output, so fewer lines can render longer: then none are shown.
    return fits(withPrints, undefined, feedback, undefined) ? withPrints : none;
  });
}

/**
 * The feedback after a turn kept in full. With the design's timing it is the same text in
 * every prompt (an earlier turn's feedback), so keeping the latest turn in full rewrites
 * nothing later; with `keepLatestFull` the latest shows the loop's feedback.
 */
function keptFeedback(input: ViewInput, turn: Turn, plan: TurnPlan, latest: boolean, options: Required<ViewOptions>): string | undefined {
  return latest && options.keepLatestFull ? latestFeedback(input, turn) : historyFeedback(input, turn, plan, false);
}

/**
 * The latest turn's feedback as the loop wrote it, less its `Stored:` list: every live
 * name is already shown, in a summary or in the full program that defined it.
 */
function latestFeedback(input: ViewInput, turn: Turn): string | undefined {
  if (turn.feedback === undefined || turn.memory.length === 0) return turn.feedback;
  return rendering(turn, `latest/${settingsKey(input)}`, () => renderFeedback(turn, feedbackInfo(input), { prints: true, maxPrintChars: input.maxPrintChars, stored: false }));
}

/** A full turn's feedback with what it taught in front (samples of what it defined without printing). */
function withLearned(feedback: string | undefined, learned: string): string | undefined {
  // A turn without feedback ended the run: no prompt follows it.
  return learned === "" || feedback === undefined ? feedback : `${learned}\n\n${feedback}`;
}

const feedbackInfo = (input: ViewInput): FeedbackInfo => ({ maxTurns: input.maxTurns, toolsWithdrawn: input.toolsWithdrawn ?? false });
const settingsKey = (input: ViewInput): string => `${input.maxTurns}/${input.toolsWithdrawn ?? false}/${input.maxPrintChars}`;

// Per turn record: a few renderings at most (summarized or not, lines shown, run settings).
const feedbacks = new WeakMap<Turn, Map<string, string>>();

function rendering(turn: Turn, key: string, render: () => string): string {
  let memo = feedbacks.get(turn);
  if (memo === undefined) feedbacks.set(turn, (memo = new Map()));
  let text = memo.get(key);
  if (text === undefined) memo.set(key, (text = render()));
  return text;
}

/**
 * Whether a summary (`s` + `s2`, S tokens) pays back within `prompts` later prompts for
 * the turn it replaces (`f` + `f2`, F tokens) under the cache `price` (the view's cache model).
 * It is read cached instead of the turn, saving F − S tokens in each of `prompts` prompts.
 * When the turn was shown in full before (`shownBefore`: the earlier timing), the summary is
 * written where the turn would have been read cached: it rewrites S. Otherwise (the design's
 * timing) the summary is the turn's first appearance, new text either way, so nothing is
 * rewritten and it pays whenever it is smaller. A prefix that only grows makes this exact.
 * 0 prompts: always.
 */
export function paysBack(s: string, s2: string | undefined, f: string, f2: string | undefined, prompts: number, price: ModelPrice, shownBefore: boolean): boolean {
  if (prompts <= 0) return true;
  const S = countTokens(s) + (s2 === undefined ? 0 : countTokens(s2));
  const F = countTokens(f) + (f2 === undefined ? 0 : countTokens(f2));
  return payback(price, { savedTokens: F - S, prompts, rewrittenTokens: shownBefore ? S : 0 }).pays;
}

/** Whether `a + a2` is no larger than `b + b2`, in characters and in tokens, with `margin` tokens to spare. */
function fits(a: string, a2: string | undefined, b: string, b2: string | undefined, margin = 0): boolean {
  if (a.length + (a2?.length ?? 0) > b.length + (b2?.length ?? 0)) return false;
  return countTokens(a) + (a2 === undefined ? 0 : countTokens(a2)) + margin <= countTokens(b) + (b2 === undefined ? 0 : countTokens(b2));
}

/**
 * Tokens the first summary of a prompt must save besides fitting in its turn: its share of the
 * legend that heads it, as if every other turn of the prompts left (at most the payback horizon,
 * counted at the prompt where the turn is first summarized) saved as much. A run whose summaries
 * save less keeps its turns as written and sends no legend: short tool-heavy runs, whose
 * summaries list calls with their results' shapes, were dearer than full history that way.
 * Counting on every later turn left more of them dearer (runs of 1-8 turns at their own budget:
 * 3 of 40 under a token-prefix cache, 8 of 60 under breakpoints; now 0 and 2); counting on none
 * (the whole legend) cost the bench's round-3 sessions 6 points of history tokens.
 * Strict-prefix mode owes it too, besides its own payback rule (paysBack, which prices the summary
 * alone): without it a 2-turn run whose one summary saved less than the legend sent it all, 1.006x
 * full history under breakpoints.
 */
function legendShare(input: ViewInput, options: LegendMode, i: number): number {
  return Math.ceil(legendSize(options) / Math.max(1, Math.floor(promptsLeft(input.maxTurns, i + 1) / 2)));
}

/** What a summary teaches of data defined without printing, richest first: samples, then the keys of records. */
const TEACHING: readonly Detail[] = ["sample", "shape"];

/**
 * The turn's summary, or undefined when the turn is to stay as written: no summary fits in the
 * turn it replaces (reply and feedback as full history shows them). Data the turn defined
 * without printing shows the richest teaching that fits: samples teach the model values it
 * never saw, but a summary larger than its turn makes compression dearer than full history
 * (random agent runs of short programs that print nothing: up to 7% dearer with every one
 * sampled). A turn left as written teaches nothing beyond its program (`plan.teach` "none"),
 * exactly as full history shows it. A turn that defined functions teaches what fits beside their
 * `source` where anything does (it follows the summary for a prompt: see tailOf), decided for
 * the turn once, so every prompt shows the same summary. The first summary of a prompt must
 * save `margin` tokens more (see legendShare). Sets `plan.teach`.
 */
function taughtSummary(turn: Turn, plan: TurnPlan, options: SummaryOptions, feedback: string | undefined, source: string, margin: number): RenderedSummary | undefined {
  const silent = isSilent(turn);
  // The choice is remembered per turn record, so a build renders only the summary it shows.
  const base = summaryKey(plan, options);
  const key = `${base}/${source.length}/${margin}/${feedback ?? ""}`;
  const known = teachings.get(turn);
  if (known !== undefined && known.key === key) {
    plan.teach = known.teach;
    return known.teach === "none" ? undefined : summaryOf(turn, plan, options, base);
  }
  for (const beside of silent && source !== "" ? [`\n${source}`, ""] : [""]) {
    for (const teach of silent ? TEACHING : [undefined]) {
      plan.teach = teach;
      const summary = summaryOf(turn, plan, options, base);
      if (fits(counted(turn, summary) + beside, feedback, turn.reply, turn.feedback, margin)) {
        teachings.set(turn, { key, teach });
        return summary;
      }
    }
  }
  plan.teach = "none";
  teachings.set(turn, { key, teach: "none" });
  return undefined;
}

const teachings = new WeakMap<Turn, { key: string; teach: Detail | undefined }>();

/** A turn that defined data and printed nothing: its summary teaches what it holds. */
const isSilent = (turn: Turn): boolean => turn.prints.length === 0 && turn.definitions.length > 0;

/**
 * What of a summary is weighed against the turn it replaces: all of it for a silent turn (its
 * samples or record keys must fit), else all but what it taught of values read (the size rule).
 */
const counted = (turn: Turn, summary: RenderedSummary): string => (isSilent(turn) ? summary.text : summary.code);

// Summaries are memoized per turn record: a turn's summary is rebuilt only when what it
// depends on changes (a definition superseded, println lines dropped, other options).
const summaries = new WeakMap<Turn, { key: string; summary: RenderedSummary }>();

/**
 * What a turn's summary depends on besides the turn and its teaching. Each name is tagged with
 * its set (`s:`, `a:`, `r:`, `R:`): a name may hold a colon (`r:y`), so an untagged one could read
 * as another set's. Exported for tests.
 */
export function summaryKey(plan: TurnPlan, options: SummaryOptions): string {
  let key = `${plan.printsShown}/${options.sampleItems}/${options.sampleChars}/${options.toolCallsPerTurn}/${options.maxPrintChars}`;
  if (plan.superseded !== undefined) for (const name of plan.superseded) key += "/s:" + name;
  if (plan.redefines !== undefined) for (const name of plan.redefines) key += "/a:" + name;
  if (plan.read !== undefined) for (const name of plan.read) key += "/r:" + name;
  if (plan.reads !== undefined) for (const d of plan.reads) key += "/R:" + d.name;
  return key;
}

function summaryOf(turn: Turn, plan: TurnPlan, options: SummaryOptions, base = summaryKey(plan, options)): RenderedSummary {
  const key = plan.teach === undefined ? base : `${base}/t:${plan.teach}`;
  const hit = summaries.get(turn);
  if (hit !== undefined && hit.key === key) return hit.summary;
  const summary = renderSummary(turn, plan, options);
  summaries.set(turn, { key, summary });
  return summary;
}

const notes = new WeakMap<Turn, string>();

function noteOf(turn: Turn): string {
  let note = notes.get(turn);
  if (note === undefined) notes.set(turn, (note = noteLine(turn.reply, turn.program)));
  return note;
}
