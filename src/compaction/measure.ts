// The one measure of prompts: tokens, the prefix shared with the previous prompt, and what a
// provider's cache serves and bills under a price model. The agent, history, harness, viewer
// and proxy all call this, so one prompt has one token count and one cost wherever it is shown.
import { cacheMarks, messageText, toolCallText } from "../llm/messages.js";
import type { ChatMessage } from "../llm/types.js";
import { modelPrice, readMultiplier, writeMultiplier, type CacheModel, type ModelPrice, type PriceTable } from "./prices.js";
import { countTokens, messageTokens, nameTokens, promptTokens, promptTokensYielding, tokenize, TOKENS_PER_MESSAGE } from "./tokens.js";
import { toolTokens, toolTokensYielding } from "./models.js";

/** A prompt as sent: its messages, the tool schemas sent with them, and (breakpoint caches) where its breakpoints sit. */
export interface Prompt {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly unknown[];
  /**
   * Indices of the messages that end with a cache breakpoint, for breakpoint caches (Anthropic's
   * `cache_control`). Default: one breakpoint at the last message. Ignored by other caches.
   */
  readonly breakpoints?: readonly number[];
}

/** A prompt or just its messages. */
export type PromptLike = Prompt | readonly ChatMessage[];

const asPrompt = (p: PromptLike): Prompt => (isMessages(p) ? { messages: p } : p);
const isMessages = (p: PromptLike): p is readonly ChatMessage[] => Array.isArray(p);

/** Input tokens of a prompt as the provider bills it: messages with their framing, tool schemas, the reply primer. */
export function inputTokens(prompt: PromptLike): number {
  const p = asPrompt(prompt);
  return promptTokens(p.messages) + toolTokens(p.tools);
}

/** inputTokens for a prompt of megabytes counted while a server serves others: the same count, with turns of the event loop between its pieces. */
export async function inputTokensYielding(prompt: PromptLike): Promise<number> {
  const p = asPrompt(prompt);
  return (await promptTokensYielding(p.messages)) + (await toolTokensYielding(p.tools));
}

/** Output tokens of a reply (its text and tool calls), as the local measure counts them when the provider reports none. */
export function outputTokens(reply: string | ChatMessage): number {
  if (typeof reply === "string") return countTokens(reply);
  const calls = toolCallText(reply);
  return countTokens(messageText(reply)) + (calls === "" ? 0 : countTokens(calls));
}

/** What two consecutive prompts have in common at the front. */
export interface SharedPrefix {
  /** Leading messages identical in role, name, content and tool calls. */
  readonly messages: number;
  /** Characters of those messages' text plus the common start of the first differing one. */
  readonly chars: number;
  /**
   * Leading tokens identical in both prompts: the tool schemas (when equal), the identical
   * messages with their framing, then the header and common leading tokens of the first
   * differing message. Never the reply primer: a following prompt puts a message there.
   */
  readonly tokens: number;
}

const NOTHING_SHARED: SharedPrefix = { messages: 0, chars: 0, tokens: 0 };

// Identity of a message for prefix comparison; messages are not mutated once built, so the key
// is computed once per message object. It holds everything the measure counts as the message's:
// a legacy function call and a refusal too (messageText, toolCallText).
const keys = new WeakMap<ChatMessage, string>();
function messageKey(m: ChatMessage): string {
  let k = keys.get(m);
  if (k === undefined) {
    const { function_call: legacy, refusal } = m as { function_call?: unknown; refusal?: unknown };
    k = JSON.stringify([m.role, m.name ?? null, m.tool_call_id ?? null, m.content ?? null, m.tool_calls ?? null, legacy ?? null, refusal ?? null]);
    keys.set(m, k);
  }
  return k;
}

const sameMessage = (a: ChatMessage, b: ChatMessage): boolean => a === b || messageKey(a) === messageKey(b);

const toolKeys = new WeakMap<readonly unknown[], string>();
function toolsKey(tools: readonly unknown[] | undefined): string {
  if (tools === undefined || tools.length === 0) return "";
  let k = toolKeys.get(tools);
  if (k === undefined) {
    k = JSON.stringify(tools);
    toolKeys.set(tools, k);
  }
  return k;
}

/**
 * The prefix `next` shares with `previous`: the one definition every part of the product uses.
 * Symmetric in its arguments; an empty previous prompt shares nothing; prompts with different
 * tool schemas share nothing (the schemas come first in what the provider caches).
 */
export function sharedPrefix(previous: PromptLike, next: PromptLike): SharedPrefix {
  const a = asPrompt(previous);
  const b = asPrompt(next);
  if (toolsKey(a.tools) !== toolsKey(b.tools)) return NOTHING_SHARED;
  let tokens = toolTokens(b.tools);
  let chars = 0;
  let i = 0;
  const n = Math.min(a.messages.length, b.messages.length);
  while (i < n && sameMessage(a.messages[i], b.messages[i])) {
    chars += messageText(b.messages[i]).length;
    tokens += messageTokens(b.messages[i]);
    i++;
  }
  if (i < n) {
    const x = a.messages[i];
    const y = b.messages[i];
    if (x.role === y.role && (x.name ?? "") === (y.name ?? "") && (x.tool_call_id ?? "") === (y.tool_call_id ?? "")) {
      // The header (start marker, role, separator, name) is shared; then the common leading tokens.
      tokens += TOKENS_PER_MESSAGE - 1 + (y.name ? nameTokens(y.name) : 0);
      const tx = messageText(x);
      const ty = messageText(y);
      if (tx === ty) {
        chars += ty.length;
        tokens += countTokens(ty) + commonTokens(toolCallText(x), toolCallText(y));
      } else {
        chars += commonChars(tx, ty);
        tokens += commonTokens(tx, ty);
      }
    }
  }
  if (i === 0 && tokens === 0) return NOTHING_SHARED;
  return { messages: i, chars, tokens };
}

function commonChars(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let c = 0;
  while (c < n && a.charCodeAt(c) === b.charCodeAt(c)) c++;
  return c;
}

/** Leading tokens equal in the encodings of `a` and `b`. */
function commonTokens(a: string, b: string): number {
  if (a.length === 0 || b.length === 0 || a.charCodeAt(0) !== b.charCodeAt(0)) return 0;
  const ta = tokenize(a);
  const tb = tokenize(b);
  let k = 0;
  while (k < ta.length && k < tb.length && ta[k] === tb[k]) k++;
  return k;
}

/**
 * Tokens a cache serves of a prompt that shares `shared` leading tokens with the previous one:
 * token-prefix caches from `minTokens` on in whole steps; breakpoint caches the whole shared
 * prefix once it reaches `minTokens` (the previous prompt's breakpoint sits at its end, where a
 * prompt that only grows meets it; `createMeter` follows breakpoints exactly); none nothing.
 */
export function servedTokens(cache: CacheModel, shared: number): number {
  if (cache.kind === "none" || shared < cache.minTokens) return 0;
  return cache.kind === "token-prefix" ? cache.minTokens + Math.floor((shared - cache.minTokens) / cache.step) * cache.step : shared;
}

/** Dollars of a prompt of `tokens` input tokens sharing `shared` leading tokens with the previous one, under `price`'s cache rules. */
export function promptCost(price: ModelPrice, tokens: number, shared: number, outputTokens = 0): number {
  return requestPrice(price, { inputTokens: tokens, cachedTokens: servedTokens(price.cache, shared), outputTokens });
}

/** Token figures of one request, measured or reported. */
export interface RequestUsage {
  readonly inputTokens: number;
  /** Input tokens served from the cache. */
  readonly cachedTokens: number;
  /** Input tokens written into the cache (billed at the write price on breakpoint caches). */
  readonly writtenTokens?: number;
  readonly outputTokens: number;
}

/** Dollars of one request: cached input at the read price, written input at the write price, the rest at the input price. */
export function requestPrice(price: ModelPrice, u: RequestUsage): number {
  const input = Math.max(0, u.inputTokens);
  const cached = Math.min(Math.max(0, u.cachedTokens), input);
  const written = Math.min(Math.max(0, u.writtenTokens ?? 0), input - cached);
  const fresh = input - cached - written;
  const c = price.cache;
  return ((cached * readMultiplier(c) + written * writeMultiplier(c) + fresh) * price.input + Math.max(0, u.outputTokens) * price.output) / 1e6;
}

/** The measure of one prompt in a session. */
export interface PromptMeasure {
  /** Input tokens (messages, tool schemas, reply primer). */
  readonly tokens: number;
  /** The prefix shared with the previous prompt of the session (nothing for the first). */
  readonly shared: SharedPrefix;
  /** Whether the previous prompt's messages are not all at the front of this one (the cache breaks early). */
  readonly cacheBreak: boolean;
  /** Tokens the cache serves under the price model's cache rules. */
  readonly cachedTokens: number;
  /** Tokens written into the cache (breakpoint caches). */
  readonly writtenTokens: number;
  readonly outputTokens: number;
  /** Dollars. */
  readonly cost: number;
}

export interface MeasureTotals {
  prompts: number;
  inputTokens: number;
  cachedTokens: number;
  writtenTokens: number;
  outputTokens: number;
  cost: number;
  /** The largest prompt. */
  peakTokens: number;
  cacheBreaks: number;
}

export const emptyTotals = (): MeasureTotals => ({ prompts: 0, inputTokens: 0, cachedTokens: 0, writtenTokens: 0, outputTokens: 0, cost: 0, peakTokens: 0, cacheBreaks: 0 });

/** Measures the prompts of one session (one conversation, in order) under one price model. */
export interface Meter {
  readonly price: ModelPrice;
  /** Measures the next prompt of the session; `outputTokens` is its reply's size (for cost). */
  add(prompt: PromptLike, outputTokens?: number): PromptMeasure;
  /** Totals over the prompts added so far (a live object: read, don't keep). */
  readonly totals: Readonly<MeasureTotals>;
}

interface TrieNode {
  readonly children: Map<string, TrieNode>;
  written: boolean;
}
const node = (): TrieNode => ({ children: new Map(), written: false });

/**
 * A meter for one session. `price` is a price, or a model name looked up in `table`.
 * Token-prefix caches serve the prefix shared with the previous prompt, from `minTokens` on in
 * whole steps. Breakpoint caches serve the longest prefix ending at a message boundary where an
 * earlier request of the session wrote an entry, found at a breakpoint of this prompt or up to
 * `lookback` boundaries before one; each breakpoint whose prefix reaches `minTokens` writes an
 * entry, and the tokens from the hit to the last new entry are billed as written. Their prefixes
 * read the system messages first, wherever they sit (Anthropic's `system`). Entries are assumed
 * not to expire within a session.
 */
export function createMeter(price: ModelPrice | string | undefined, table?: PriceTable): Meter {
  const model: ModelPrice = typeof price === "object" ? price : modelPrice(price, table);
  const totals = emptyTotals();
  const roots = new Map<string, TrieNode>();
  let previous: Prompt | undefined;

  const breakpointCache = (p: Prompt, cache: Extract<CacheModel, { kind: "breakpoint" }>): { cached: number; written: number } => {
    const order = systemFirst(p.messages);
    // Marks as positions in the order the provider caches the messages in.
    const marks = order === undefined ? breakpointsOf(p, cache.maxBreakpoints) : positionsIn(order, breakpointsOf(p, cache.maxBreakpoints));
    if (marks.length === 0) return { cached: 0, written: 0 };
    const key = toolsKey(p.tools);
    let at: TrieNode = roots.get(key) ?? node();
    roots.set(key, at);
    const last = marks[marks.length - 1];
    const nodes: TrieNode[] = [];
    const cumulative: number[] = [];
    let tokens = toolTokens(p.tools);
    for (let i = 0; i <= last; i++) {
      const m = p.messages[order === undefined ? i : order[i]];
      const k = messageKey(m);
      const child: TrieNode = at.children.get(k) ?? node();
      at.children.set(k, child);
      at = child;
      tokens += messageTokens(m);
      nodes.push(at);
      cumulative.push(tokens);
    }
    let hit = -1;
    for (const b of marks) {
      for (let k = b; k >= 0 && k >= b - cache.lookback; k--) {
        if (nodes[k].written) {
          hit = Math.max(hit, k);
          break;
        }
      }
    }
    const cached = hit < 0 ? 0 : cumulative[hit];
    let furthest = -1;
    for (const b of marks) {
      if (cumulative[b] >= cache.minTokens && !nodes[b].written) {
        nodes[b].written = true;
        furthest = b;
      }
    }
    return { cached, written: furthest > hit ? cumulative[furthest] - cached : 0 };
  };

  return {
    price: model,
    totals,
    add(prompt, outputTokens = 0) {
      const p = asPrompt(prompt);
      const tokens = inputTokens(p);
      const shared = previous === undefined ? NOTHING_SHARED : sharedPrefix(previous, p);
      const cacheBreak = previous !== undefined && shared.messages < previous.messages.length;
      const c = model.cache;
      let cached = 0;
      let written = 0;
      if (c.kind === "token-prefix") cached = servedTokens(c, shared.tokens);
      else if (c.kind === "breakpoint") ({ cached, written } = breakpointCache(p, c));
      const cost = requestPrice(model, { inputTokens: tokens, cachedTokens: cached, writtenTokens: written, outputTokens });
      previous = p;
      totals.prompts++;
      totals.inputTokens += tokens;
      totals.cachedTokens += cached;
      totals.writtenTokens += written;
      totals.outputTokens += outputTokens;
      totals.cost += cost;
      totals.peakTokens = Math.max(totals.peakTokens, tokens);
      if (cacheBreak) totals.cacheBreaks++;
      return { tokens, shared, cacheBreak, cachedTokens: cached, writtenTokens: written, outputTokens, cost };
    },
  };
}

/**
 * The message indices in the order a breakpoint cache reads them, or undefined when that is the
 * prompt's own order (the common case, nothing allocated): Anthropic's Messages API takes every
 * system message as its `system` blocks (anthropicLlm), which precede all messages in what it
 * caches, so a system message that joins mid-conversation changes the prefix of the messages
 * before it.
 */
function systemFirst(messages: readonly ChatMessage[]): number[] | undefined {
  let other = false;
  let moved = false;
  for (const m of messages) {
    if (m.role !== "system") other = true;
    else if (other) {
      moved = true;
      break;
    }
  }
  if (!moved) return undefined;
  const order: number[] = [];
  for (const [i, m] of messages.entries()) if (m.role === "system") order.push(i);
  for (const [i, m] of messages.entries()) if (m.role !== "system") order.push(i);
  return order;
}

/** Where the messages at `indices` sit in `order`, sorted. */
function positionsIn(order: readonly number[], indices: readonly number[]): number[] {
  const at = new Map(order.map((i, k) => [i, k]));
  return indices.map((i) => at.get(i) as number).sort((x, y) => x - y);
}

/**
 * A prompt as a client sends it under `price`'s cache: with a breakpoint cache, marked where the
 * client marks it (`cacheMarks`: the system prompt, the strategy's stable points `marks`, the last
 * message), the latest within the provider's allowance. The agent's run and the harness price
 * what they send with it.
 */
export function sentPrompt(messages: Prompt["messages"], marks: readonly number[] | undefined, price: ModelPrice): Prompt {
  const cache = price.cache;
  if (cache.kind !== "breakpoint" || messages.length === 0) return { messages };
  return { messages, breakpoints: [...cacheMarks({ messages, ...(marks === undefined ? {} : { cacheBreakpoints: marks }) })].slice(-cache.maxBreakpoints) };
}

/** A prompt's breakpoints, sorted and checked: whole message indices, distinct, at most `max`. */
function breakpointsOf(p: Prompt, max: number): number[] {
  const n = p.messages.length;
  if (p.breakpoints === undefined) return n === 0 ? [] : [n - 1];
  const marks = [...new Set(p.breakpoints)].sort((x, y) => x - y);
  for (const b of marks) {
    if (!Number.isInteger(b) || b < 0 || b >= n) throw new RangeError(`measure: breakpoint ${String(b)} is not the index of one of the prompt's ${n} messages`);
  }
  if (marks.length > max) throw new RangeError(`measure: ${marks.length} cache breakpoints in one prompt; the provider allows at most ${max}`);
  return marks;
}

/** One prompt of a session with the size of the reply it got. */
export type SessionPrompt = Prompt & { readonly outputTokens?: number };

export interface SessionMeasure {
  readonly prompts: readonly PromptMeasure[];
  readonly totals: Readonly<MeasureTotals>;
}

/** Measures a whole session at once: per-prompt figures and totals. */
export function measureSession(prompts: ReadonlyArray<SessionPrompt | readonly ChatMessage[]>, price: ModelPrice | string | undefined, table?: PriceTable): SessionMeasure {
  const meter = createMeter(price, table);
  const out = prompts.map((p) => meter.add(p, isMessages(p) ? 0 : (p.outputTokens ?? 0)));
  return { prompts: out, totals: { ...meter.totals } };
}
