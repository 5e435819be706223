// Runs a session through SubAgent.run with its scripted replies and measures every prompt
// of the run under the full view, the compressed view, and the strict-prefix compressed
// view: tokens, prefix-cached cost and where the cache breaks; and checks that compression
// lost nothing live.
import { scriptedLlm } from "../../src/llm/scripted.js";
import { SubAgent, type Step } from "../../src/agent/subagent.js";
import { typeLabel } from "../../src/trace/record.js";
import type { RunTrace } from "../../src/trace/trace.js";
import type { TextMessage as ChatMessage } from "../../src/llm/types.js";
import { compressedView, isErrored, planTurns } from "../../src/history/compressed.js";
import { definitionSample, isWhole } from "../../src/history/summary.js";
import { type LegendMode, summaryLegend } from "../../src/history/legend.js";
import { freeNames } from "../../src/lisp/index.js";
import type { DefinitionTrace } from "../../src/trace/trace.js";
import { renderSeenPrints, seenPrints } from "../../src/trace/feedback.js";
import { servedTokens, sharedPrefix } from "../../src/compaction/measure.js";
import { compressionReport, type CompressionTotals, type RunSettings } from "../../src/history/stats.js";
import { countTokens, promptTokens, TOKENS_PER_REPLY } from "../../src/compaction/tokens.js";
import { defaultViewOptions, type TurnPlace, type View, type ViewInput, type ViewOptions } from "../../src/history/view.js";
import type { Session } from "./session.js";
import { createMeter } from "../../src/compaction/measure.js";
import { DEFAULT_PRICES, PROVIDER_CACHES, readMultiplier, type ModelPrice } from "../../src/compaction/prices.js";

/**
 * Where a view's prompt cost goes under the token-prefix cache the tables price (CACHE_MODELS),
 * summed over a run's prompts: uncached tokens split by what they are — the newest turn and the
 * first prompt (which every view pays), the turn before it rewritten into its summary, older
 * messages rewritten (a superseded definition, println lines dropped), and tokens shared with the
 * previous prompt that the cache does not serve (below its minimum, past its last whole step) —
 * and the tokens read from the cache.
 */
export interface CacheBreakdown {
  newTokens: number;
  previousRewritten: number;
  olderRewritten: number;
  /** Shared with the previous prompt but not served: the cache serves from its minimum on, in whole steps. */
  sharedUnserved: number;
  cachedRead: number;
  /** Prompts whose shared prefix ends before the previous prompt's latest turn (of the prompts after the second: the first two have no earlier turn to break before). */
  earlyBreaks: number;
  /** newTokens + previousRewritten + olderRewritten + sharedUnserved + cachedRead × the cached price: the token-prefix cost the tables report. */
  cost: number;
}

export interface SessionResult {
  name: string;
  kind: Session["kind"];
  turns: number;
  ok: boolean;
  /** Mean tokens of the model's replies. */
  replyTokens: number;
  /** Totals under the compressed view (default mode), the earlier timing (keepLatestFull) and the strict-prefix mode; each carries the full view's figures. */
  compressed: CompressionTotals;
  previous: CompressionTotals;
  strict: CompressionTotals;
  /** Input tokens of the history alone (everything after the task message), summed over prompts. */
  history: { full: number; compressed: number; previous: number; strict: number };
  cache: { full: CacheBreakdown; compressed: CacheBreakdown; previous: CacheBreakdown; strict: CacheBreakdown };
  /**
   * Cost in token-equivalents under the project's measure, per cache model: full vs compressed
   * (default and strict mode), and two references no view of the whole run can beat by much:
   * the full view cut to its latest turn (everything earlier forgotten) and to the system
   * prompt and task alone.
   */
  priced: Record<CacheName, { full: number; compressed: number; strict: number; latestOnly: number; noHistory: number }>;
  /** Cost per cache model with a 4,096-token minimum (MIN_4096), full vs compressed told the minimum. */
  minimum: Record<CacheName, { full: number; compressed: number }>;
  /** Problems found by the no-loss check (empty when nothing live was lost). */
  lost: string[];
  /** The same replies run with a turn budget of BUDGET_FACTORS times the turns they use: cost per cache model, full vs compressed. */
  budgets: Array<{ factor: number; priced: Record<CacheName, { full: number; compressed: number }> }>;
}

/**
 * Turn budgets larger than the turns a run uses (multiples of them): a run that stops early must
 * not have paid for rewrites made on the bet that the rest of its budget would come.
 */
export const BUDGET_FACTORS = [1.5, 2, 3, 5] as const;

/** The two cache models every table reports: OpenAI-style token prefix and Anthropic-style breakpoints. */
export const CACHE_MODELS = {
  "token-prefix": { input: 1, output: 0, cache: PROVIDER_CACHES.openai },
  breakpoint: { input: 1, output: 0, cache: PROVIDER_CACHES.anthropic },
} as const satisfies Record<string, ModelPrice>;
export type CacheName = keyof typeof CACHE_MODELS;

/** Each cache model from 4,096 tokens on, above the agent's system prompt: gemini-2.5-pro's and claude-haiku-4's. */
export const MIN_4096 = {
  "token-prefix": { ...DEFAULT_PRICES["gemini-2.5-pro"], input: 1, output: 0 },
  breakpoint: { ...DEFAULT_PRICES["claude-haiku-4"], input: 1, output: 0 },
} as const satisfies Record<CacheName, ModelPrice>;

/** The token-prefix model with an input token at one "dollar": costs read as token-equivalents (an uncached input token = 1). */
const TOKEN_EQUIVALENTS: ModelPrice = { ...CACHE_MODELS["token-prefix"], input: 1e6 };

type Cut = (messages: readonly ChatMessage[]) => readonly ChatMessage[];

/**
 * Cost of every prompt of the run under one cache model, in token-equivalents (an uncached input
 * token = 1): the view as sent, then each of `cuts` (reference views keeping part of each
 * prompt), all priced from one build of each prompt.
 */
function pricedRun(trace: RunTrace, run: RunSettings, opts: ViewOptions, price: ModelPrice, cuts: readonly Cut[] = []): number[] {
  const meters = [createMeter(price), ...cuts.map(() => createMeter(price))];
  for (let k = 0; k < trace.turns.length; k++) {
    const view = compressedView({ ...run, system: trace.system, task: trace.task, turns: trace.turns.slice(0, k) }, opts);
    meters[0].add({ messages: view.messages, ...(view.breakpoints === undefined ? {} : { breakpoints: view.breakpoints }) });
    cuts.forEach((cut, c) => meters[c + 1].add({ messages: cut(view.messages) }));
  }
  return meters.map((m) => m.totals.cost * 1e6);
}

/** The system prompt and task, then the latest reply and its feedback (the full view's last two messages). */
const latestOnly = (messages: readonly ChatMessage[]): readonly ChatMessage[] => (messages.length <= 2 ? messages : [...messages.slice(0, 2), ...messages.slice(-2)]);
const noHistory = (messages: readonly ChatMessage[]): readonly ChatMessage[] => messages.slice(0, 2);

const options = (strictPrefix: boolean, keepLatestFull = false): ViewOptions => ({ ...defaultViewOptions, compressHistory: true, strictPrefix, keepLatestFull });

/** A hidden context value every session gets (one passes it to a tool): no prompt may show it. */
const HIDDEN: Readonly<Record<string, string>> = { _token: "sk-live-bench-7f3a9c21e4b8d6" };

/** Runs the session (with a turn budget of `maxTurns`, by default the turns it uses); throws when the transcript does not run as written. */
export async function runSession(session: Session, maxTurns = session.replies.length): Promise<Step> {
  const agent = SubAgent.create({
    prompt: session.prompt,
    tools: { ...session.tools },
    maxTurns,
    ...(session.output !== undefined ? { output: session.output } : {}),
  });
  // Run with compression on, so the trace's messages are the prompts as sent (scrubbed of hidden values).
  const step = await SubAgent.run(agent, { llm: scriptedLlm(session.replies), context: { ...session.context, ...HIDDEN }, compressHistory: true });
  const failing = new Set(session.failingTurns ?? []);
  for (const t of step.turns) {
    const failed = isErrored(t);
    if (failed !== failing.has(t.number)) throw new Error(`${session.name}: turn ${t.number} ${failed ? `failed unexpectedly: ${t.error?.message}` : "was meant to fail but succeeded"}`);
  }
  if (!step.ok) throw new Error(`${session.name}: the run did not return: ${step.fail.reason}: ${step.fail.message}`);
  return step;
}

export async function measureSession(session: Session): Promise<SessionResult> {
  const step = await runSession(session);
  const trace = step.trace;
  const run: RunSettings = { maxTurns: session.replies.length, toolsWithdrawn: Object.keys(session.tools).length > 0 && session.replies.length > 1 };
  const compressed = compressionReport(trace, run, options(false), TOKEN_EQUIVALENTS);
  const previous = compressionReport(trace, run, options(false, true), TOKEN_EQUIVALENTS);
  const strict = compressionReport(trace, run, options(true), TOKEN_EQUIVALENTS);
  return {
    name: session.name,
    kind: session.kind,
    turns: trace.turns.length,
    ok: step.ok,
    replyTokens: trace.turns.reduce((s, t) => s + countTokens(t.reply), 0) / trace.turns.length,
    compressed: compressed.totals,
    previous: previous.totals,
    strict: strict.totals,
    history: historyTokens(trace, run),
    cache: { full: breakdown(trace, run, { ...options(false), compressHistory: false }), compressed: breakdown(trace, run, options(false)), previous: breakdown(trace, run, options(false, true)), strict: breakdown(trace, run, options(true)) },
    priced: Object.fromEntries(
      Object.entries(CACHE_MODELS).map(([name, price]) => {
        const cacheModel = name as CacheName;
        const [full, latest, none] = pricedRun(trace, run, { ...options(false), compressHistory: false }, price, [latestOnly, noHistory]);
        return [
          name,
          {
            full,
            compressed: pricedRun(trace, run, { ...options(false), cacheModel }, price)[0],
            strict: pricedRun(trace, run, { ...options(true), cacheModel }, price)[0],
            latestOnly: latest,
            noHistory: none,
          },
        ];
      }),
    ) as SessionResult["priced"],
    minimum: Object.fromEntries(
      Object.entries(MIN_4096).map(([name, price]) => [name, { full: pricedRun(trace, run, { ...options(false), compressHistory: false }, price)[0], compressed: pricedRun(trace, run, { ...options(false), cacheModel: name as CacheName, cacheMinTokens: 4096 }, price)[0] }]),
    ) as SessionResult["minimum"],
    lost: [...lostLive(trace, run, options(false)), ...lostLive(trace, run, options(true)), ...everyPrompt(trace, run, options(false))],
    budgets: await budgets(session),
  };
}

/** The session run again with each larger budget (its feedback then says "Turn 3 of 28"), priced under both cache models. */
async function budgets(session: Session): Promise<SessionResult["budgets"]> {
  const out: SessionResult["budgets"] = [];
  for (const factor of BUDGET_FACTORS) {
    const maxTurns = Math.round(session.replies.length * factor);
    const trace = (await runSession(session, maxTurns)).trace;
    const run: RunSettings = { maxTurns, toolsWithdrawn: Object.keys(session.tools).length > 0 && maxTurns > 1 };
    const priced = Object.fromEntries(
      Object.entries(CACHE_MODELS).map(([name, price]) => [name, { full: pricedRun(trace, run, { ...options(false), compressHistory: false }, price)[0], compressed: pricedRun(trace, run, { ...options(false), cacheModel: name as CacheName }, price)[0] }]),
    ) as SessionResult["budgets"][number]["priced"];
    out.push({ factor, priced });
  }
  return out;
}

/** Cost of a session, full and compressed with each println token budget, under both cache models (the budget sweep). */
export interface BudgetSweep {
  name: string;
  full: Record<CacheName, number>;
  compressed: Array<{ tokens: number; priced: Record<CacheName, number> }>;
}

/** Runs the session once and prices its prompts with each `printlnHistoryTokens` in `budgets`. */
export async function sweepPrintBudget(session: Session, budgets: readonly number[]): Promise<BudgetSweep> {
  const trace = (await runSession(session)).trace;
  const run: RunSettings = { maxTurns: session.replies.length, toolsWithdrawn: Object.keys(session.tools).length > 0 && session.replies.length > 1 };
  const each = <T>(f: (name: CacheName, price: ModelPrice) => T): Record<CacheName, T> => Object.fromEntries(Object.entries(CACHE_MODELS).map(([name, price]) => [name, f(name as CacheName, price)])) as Record<CacheName, T>;
  return {
    name: session.name,
    full: each((_, price) => pricedRun(trace, run, { ...options(false), compressHistory: false }, price)[0]),
    compressed: budgets.map((tokens) => ({ tokens, priced: each((cacheModel, price) => pricedRun(trace, run, { ...options(false), cacheModel, printlnHistoryTokens: tokens }, price)[0]) })),
  };
}

/** Tokens after the system prompt and the task (each view's own), summed over every prompt of the run. */
function historyTokens(trace: RunTrace, run: RunSettings): SessionResult["history"] {
  const out = { full: 0, compressed: 0, previous: 0, strict: 0 };
  // The compressed view's legend heads its first summary line (a summary, or what a turn kept in
  // full taught, in its feedback), where the full view's note on `Stored:` sits in its system
  // prompt: each view's fixed explanation is left out of its history alike.
  // Each mode sends its own legend (summaryLegend).
  const after = (messages: readonly ChatMessage[], opts: LegendMode = {}): number => {
    const legend = summaryLegend(opts);
    return promptTokens(messages) - promptTokens(messages.slice(0, 2)) - (messages.slice(2).some((m) => m.content.startsWith(legend)) ? countTokens(legend + "\n") : 0);
  };
  for (let k = 0; k < trace.turns.length; k++) {
    const input: ViewInput = { ...run, system: trace.system, task: trace.task, turns: trace.turns.slice(0, k) };
    out.full += after(compressedView(input, { ...options(false), compressHistory: false }).messages);
    out.compressed += after(compressedView(input, options(false)).messages, options(false));
    out.previous += after(compressedView(input, options(false, true)).messages, options(false, true));
    out.strict += after(compressedView(input, options(true)).messages, options(true));
  }
  return out;
}

/** Characters before each turn's text in the prompt (its messages' contents laid end to end). */
function turnStarts(view: View): number[] {
  const before: number[] = [];
  let total = 0;
  for (const m of view.messages) {
    before.push(total);
    total += m.content.length;
  }
  return (view.turns ?? []).map((p) => before[p.message] + p.start);
}

/**
 * Splits each prompt's uncached tokens by the turn they belong to (see CacheBreakdown):
 * the uncached part is exact; the tokens of the text rewritten before the newest turn are
 * counted from where the shared prefix ends (in characters) to the newest turn's start.
 */
export function breakdown(trace: RunTrace, run: RunSettings, opts: ViewOptions): CacheBreakdown {
  const cache = CACHE_MODELS["token-prefix"].cache;
  const b: CacheBreakdown = { newTokens: 0, previousRewritten: 0, olderRewritten: 0, sharedUnserved: 0, cachedRead: 0, earlyBreaks: 0, cost: 0 };
  let previous: ChatMessage[] | undefined;
  for (let k = 0; k < trace.turns.length; k++) {
    const view = compressedView({ ...run, system: trace.system, task: trace.task, turns: trace.turns.slice(0, k) }, opts);
    const messages = view.messages;
    const shared = previous === undefined ? { messages: 0, chars: 0, tokens: 0 } : sharedPrefix(previous, messages);
    const uncached = promptTokens(messages) - TOKENS_PER_REPLY - shared.tokens;
    // Priced as the tables price it: every shared token at the read price made this table's costs
    // 7% below theirs (terse, full history, 10+ turns: 108,264 against 116,587).
    const served = servedTokens(cache, shared.tokens);
    b.sharedUnserved += shared.tokens - served;
    b.cachedRead += served;
    const text = messages.map((m) => m.content).join("");
    const starts = turnStarts(view);
    const latest = k >= 1 ? starts[k - 1] : text.length;
    // The previous prompt's newest turn may have moved (appended to the summaries before
    // it): what was there before it is what ended with the turn before it.
    const places = view.turns ?? [];
    const before = k >= 3 ? starts[k - 3] + places[k - 3].text.length : k === 2 ? starts[0] : latest;
    const older = k >= 2 && shared.chars < before ? countTokens(text.slice(shared.chars, before)) : 0;
    const prev = k >= 2 && shared.chars < latest ? countTokens(text.slice(Math.max(shared.chars, before), latest)) : 0;
    b.olderRewritten += Math.min(older, uncached);
    b.previousRewritten += Math.min(prev, Math.max(0, uncached - older));
    b.newTokens += Math.max(0, uncached - older - prev) + TOKENS_PER_REPLY;
    if (previous !== undefined && k >= 2 && shared.chars < before) b.earlyBreaks++;
    previous = messages;
  }
  b.cost = b.newTokens + b.previousRewritten + b.olderRewritten + b.sharedUnserved + b.cachedRead * readMultiplier(cache);
  return b;
}

/**
 * The last prompt a further turn would get: every live name must be shown with its latest
 * type (in a summary, or in the full program that defined it) and the most recent println
 * lines of history must be in it.
 */
function lostLive(trace: RunTrace, run: RunSettings, opts: ViewOptions): string[] {
  const turns = trace.turns;
  const view = compressedView({ ...run, system: trace.system, task: trace.task, turns }, opts);
  const problems: string[] = [];
  const assistant = (i: number): string => (view.turns as TurnPlace[])[i].text;
  for (const d of turns.at(-1)?.memory ?? []) {
    const i = turns.findLastIndex((t) => t.definitions.some((x) => x.name === d.name));
    const text = assistant(i);
    const shown = text === turns[i].reply || text.includes(d.kind === "function" ? `; Function: ${d.name}` : `; Defined: ${d.name}`);
    const line = text.split("\n").find((l) => l.startsWith(`; Defined: ${d.name} `));
    // Scalars and short strings show their value instead of their type.
    const typed = d.kind === "function" || text === turns[i].reply || (line !== undefined && (isWhole(d) ? line.includes(" = ") && !line.endsWith(`= ${typeLabel(d)}`) : line.includes(`= ${typeLabel(d)}`)));
    if (!shown || !typed) problems.push(`${opts.strictPrefix ? "strict" : "default"}: ${d.name} (turn ${i + 1}) not shown with its latest type`);
  }
  const text = view.messages.map((m) => m.content).join("\n");
  // The limit drops whole turns' output but always leaves the most recent lines of the
  // last earlier turn that printed (at least half the limit of them), when they fit in half
  // the token budget.
  const printed = turns.slice(0, -1).findLast((t) => t.prints.length > 0);
  const fits = printed !== undefined && countTokens(renderSeenPrints(seenPrints(printed.prints))) <= (opts.printlnHistoryTokens ?? Infinity) / 2;
  const recent = printed === undefined || !fits ? [] : printed.prints.slice(printed.prints.length - Math.ceil(opts.printlnHistoryLimit / 2));
  for (const line of recent) if (!text.includes(line.slice(0, 200))) problems.push(`println line missing: ${line.slice(0, 60)}`);
  return problems;
}

/**
 * The fewest println lines a prompt over `turns` shows: the latest turn's, then the most
 * recent whole earlier turns up to half the line limit, as long as they fit in half the
 * token budget (the token bound wins over the line floor).
 */
function printFloor(turns: readonly RunTrace["turns"][number][], opts: ViewOptions): number {
  const floor = Math.ceil(opts.printlnHistoryLimit / 2);
  const budget = (opts.printlnHistoryTokens ?? Infinity) / 2;
  let i = turns.length - 1;
  let lines = i >= 0 ? turns[i--].prints.length : 0;
  let tokens = 0;
  for (; i >= 0 && lines < floor; i--) {
    const t = turns[i].prints.length === 0 ? 0 : countTokens(renderSeenPrints(seenPrints(turns[i].prints)));
    if (tokens + t > budget) break;
    lines += turns[i].prints.length;
    tokens += t;
  }
  return Math.min(lines, Math.max(floor, turns.at(-1)?.prints.length ?? 0));
}

/**
 * A data definition a later successful program read (and that no turn redefined since) shows
 * its sample in the prompt once its turn's output is no longer whole (checked independently of
 * the view's placement rule: anywhere in the prompt).
 */
function factsInUse(turns: readonly RunTrace["turns"][number][], plans: ReturnType<typeof planTurns>, view: View, opts: ViewOptions): string[] {
  const latest = new Map<string, { d: DefinitionTrace; turn: number }>();
  const read = new Set<DefinitionTrace>();
  for (const t of turns) {
    if (t.status === "ok" && t.program !== null) {
      // A function called reads what its body names, when it is called.
      const names = new Set(freeNames(t.program));
      for (const name of names) {
        const def = latest.get(name);
        if (def?.d.kind === "function" && def.d.source !== undefined) for (const n of freeNames(def.d.source)) names.add(n);
        else if (def !== undefined && !t.definitions.some((d) => d.name === name)) read.add(def.d);
      }
    }
    for (const d of t.definitions) latest.set(d.name, { d, turn: t.number - 1 });
  }
  const text = view.messages.map((m) => m.content).join("\n");
  const options = { sampleItems: opts.sampleItems ?? 3, sampleChars: opts.sampleChars ?? 80, toolCallsPerTurn: opts.toolCallsPerTurn ?? 10 };
  const problems: string[] = [];
  for (const { d, turn } of latest.values()) {
    if (!read.has(d) || d.kind === "function" || isWhole(d) || turns[turn].prints.length === 0) continue;
    if (plans[turn].printsShown >= seenPrints(turns[turn].prints).lines.length) continue;
    if (!text.includes(definitionSample(d, options))) problems.push(`${d.name} (turn ${turn + 1}, read later) shown without its sample`);
  }
  return problems;
}

/**
 * The checks on every prompt of the run (default mode): no hidden value in any message as
 * sent; no bare live value (a scalar or short string without its value, or a collection
 * whose turn's output is gone without a sample or shape); every definition of a turn that
 * printed nothing shown in the very next prompt (or the turn left as written); at least half the println limit of
 * earlier lines when that many exist.
 */
function everyPrompt(trace: RunTrace, run: RunSettings, opts: ViewOptions): string[] {
  const problems: string[] = [];
  const turns = trace.turns;
  for (const t of turns) {
    const sent = t.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n");
    for (const [key, secret] of Object.entries(HIDDEN)) if (sent.includes(secret)) problems.push(`hidden value data/${key} in the prompt for turn ${t.number}`);
  }
  for (let k = 1; k <= turns.length; k++) {
    const input: ViewInput = { ...run, system: trace.system, task: trace.task, turns: turns.slice(0, k) };
    const view = compressedView(input, opts);
    const plans = planTurns(input, opts);
    for (let i = 0; i < k; i++) {
      const text = (view.turns as TurnPlace[])[i].text;
      if (text === turns[i].reply) continue;
      const dropped = turns[i].prints.length === 0 || plans[i].printsShown === 0;
      for (const d of turns[i].definitions) {
        if (d.kind === "function") continue;
        const line = text.split("\n").find((l) => l.startsWith(`; Defined: ${d.name} `) || l === `; Defined: ${d.name}`);
        if (line === undefined || line.endsWith("(redefined later)")) continue;
        const bare = isWhole(d) ? line.endsWith(` = ${typeLabel(d)}`) : dropped && (d.size ?? 0) > 0 && d.type !== "string" && !/, sample: | of |\{/.test(line);
        if (bare) problems.push(`bare value in the prompt for turn ${k + 1}: ${line}`);
      }
    }
    // The turn just done printed nothing: its definitions must show their values now.
    const last = turns[k - 1];
    const place = (view.turns as TurnPlace[])[k - 1];
    // Left as written, its program says what it defined (no summary with samples fitted in it).
    if (k < turns.length && last.status === "ok" && last.prints.length === 0 && place.text !== last.reply) {
      const shown = [view.messages[place.message].content.slice(place.start), ...view.messages.slice(place.message + 1).map((m) => m.content)].join("\n");
      for (const d of last.definitions) if (d.kind === "value" && !shown.includes(`; Defined: ${d.name}`)) problems.push(`${d.name} (turn ${k}, no println) not sampled in the next prompt`);
    }
    for (const problem of factsInUse(turns.slice(0, k), plans, view, opts)) problems.push(`prompt for turn ${k + 1}: ${problem}`);
    const least = printFloor(turns.slice(0, k), opts);
    if (view.stats.printlnShown < least) problems.push(`prompt for turn ${k + 1}: ${view.stats.printlnShown} println lines shown (at least ${least})`);
  }
  return problems;
}
