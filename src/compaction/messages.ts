// Shared structure of a chat history, as every strategy sees it: the task, indivisible units
// (an assistant tool-call message with its results), turns (rounds or steps), where a cut may
// fall, how a summary is spliced in without breaking a strict provider's role order.
import { messageText, toolCallText } from "../llm/messages.js";
import type { ChatMessage, ContentPart } from "../llm/types.js";

/** How history is divided into turns: a round starts at each user message; a step also at each assistant reply that follows a tool result or another reply. */
export type TurnUnit = "round" | "step";

// Null is what the SDKs write for a reply without calls (compact accepts it): no calls.
const hasToolCalls = (m: ChatMessage): boolean => (m.tool_calls?.length ?? 0) > 0;

/** Index of the task (the first user message), or -1 when there is none. */
export function taskIndex(messages: readonly ChatMessage[]): number {
  return messages.findIndex((m) => m.role === "user");
}

/**
 * Whether a cut may fall before message `i`: never between an assistant's tool calls and
 * their results, nor between two results of one call batch. System messages are looked past:
 * a cut keeps them (spliceSummary), so one between a call and its result must not open a cut there.
 */
export function isUnitStart(messages: readonly ChatMessage[], i: number): boolean {
  if (i <= 0 || i >= messages.length) return true;
  const next = nextNonSystem(messages, i);
  if (next === undefined || next.role !== "tool") return true;
  const prev = previousNonSystem(messages, i);
  return !(prev !== undefined && (prev.role === "tool" || (prev.role === "assistant" && hasToolCalls(prev))));
}

/** Start indices of the turns after `from` (exclusive), oldest first. */
export function turnStarts(messages: readonly ChatMessage[], unit: TurnUnit, from: number): number[] {
  const starts: number[] = [];
  for (let i = from + 1; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === "user") starts.push(i);
    else if (unit === "step" && m.role === "assistant" && isUnitStart(messages, i)) {
      const prev = previousNonSystem(messages, i);
      if (prev !== undefined && prev.role !== "user") starts.push(i);
    }
  }
  return starts;
}

function previousNonSystem(messages: readonly ChatMessage[], i: number): ChatMessage | undefined {
  for (let j = i - 1; j >= 0; j--) if (messages[j].role !== "system") return messages[j];
  return undefined;
}

function nextNonSystem(messages: readonly ChatMessage[], i: number): ChatMessage | undefined {
  for (let j = i; j < messages.length; j++) if (messages[j].role !== "system") return messages[j];
  return undefined;
}

/** How many messages spliceSummary replaces between `task` and `cut`: the span's system messages stay. */
export function replacedCount(messages: readonly ChatMessage[], task: number, cut: number): number {
  let n = 0;
  for (let i = task + 1; i < cut; i++) if (messages[i].role !== "system") n++;
  return n;
}

/**
 * The projection that replaces messages `(task, cut)` by one summary message: everything up to
 * and including the task, the system messages of the replaced span (they are kept, in order),
 * the summary, then everything from `cut`. The summary is an assistant message when a user
 * message follows (so user and assistant keep alternating), a system message otherwise.
 */
export function spliceSummary(messages: readonly ChatMessage[], task: number, cut: number, text: string): ChatMessage[] {
  const out = messages.slice(0, task + 1);
  for (let i = task + 1; i < cut; i++) if (messages[i].role === "system") out.push(messages[i]);
  const next = nextNonSystem(messages, cut);
  out.push({ role: next === undefined || next.role === "user" ? "assistant" : "system", content: text });
  for (let i = cut; i < messages.length; i++) out.push(messages[i]);
  return out;
}

/**
 * Role-order problems a strict provider would reject: a first turn not from the user, two user
 * or two assistant messages in a row (system messages aside), a tool result without its call or
 * given twice, two calls of a message with one id, tool calls left without results before the next message.
 */
export function roleOrderProblems(messages: readonly ChatMessage[]): string[] {
  return orderProblems(messages).map((p) => p.text);
}

/**
 * The tool pairing problems among roleOrderProblems (a result without its call or given twice,
 * an id two calls share, calls left without results), with the index of the message each is found at: a recorded conversation that has one
 * is rejected whole by OpenAI's and Anthropic's APIs, whatever a strategy does with the rest.
 */
export function toolPairingProblems(messages: readonly ChatMessage[]): Array<{ index: number; text: string }> {
  return orderProblems(messages).filter((p) => p.tool);
}

function orderProblems(messages: readonly ChatMessage[]): Array<{ index: number; text: string; tool: boolean }> {
  const problems: Array<{ index: number; text: string; tool: boolean }> = [];
  const add = (index: number, text: string, tool: boolean): void => void problems.push({ index, text: `message ${index}: ${text}`, tool });
  let prev: ChatMessage["role"] | null = null;
  // The ids of the last message's calls not answered yet, and those answered: a result given
  // twice, or an id two calls share, is said as such, not as a result without its call.
  let pending = new Map<string, number>();
  let answered = new Set<string>();
  messages.forEach((m, i) => {
    if (m.role === "system") return;
    if (m.role === "tool") {
      // Only a string id pairs a result with its call (the APIs' rule): null or 5 on both sides is no pairing.
      const id = typeof m.tool_call_id === "string" ? m.tool_call_id : undefined;
      const left = id === undefined ? undefined : pending.get(id);
      if (id === undefined || left === undefined) add(i, id !== undefined && answered.has(id) ? `a second result for the tool call ${JSON.stringify(id)}` : "tool result without its call", true);
      else {
        if (left > 1) pending.set(id, left - 1);
        else pending.delete(id);
        answered.add(id);
      }
      prev = "tool";
      return;
    }
    if (pending.size > 0) add(i, "tool calls of an earlier message have no results", true);
    if (prev === null && m.role !== "user") add(i, "the first turn is not a user message", false);
    if (prev === m.role) add(i, `two ${m.role} messages in a row`, false);
    prev = m.role;
    pending = new Map();
    answered = new Set();
    for (const c of m.tool_calls ?? []) {
      const given = pending.get(c.id) ?? 0;
      if (given === 1) add(i, `two tool calls have the id ${JSON.stringify(c.id)}`, true);
      pending.set(c.id, given + 1);
    }
  });
  return problems;
}

const isHigh = (c: number): boolean => (c & 0xfc00) === 0xd800;
const isLow = (c: number): boolean => (c & 0xfc00) === 0xdc00;

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });
// A code point that belongs to the character before it: a combining mark, a joiner, a variation
// selector, a skin tone, a regional indicator (flags are pairs), a tag (subdivision flags).
const JOINS = /^[\p{M}\u200d\p{Emoji_Modifier}\p{Regional_Indicator}\u{E0020}-\u{E007F}]/u;
// Code units read on each side of a cut to find the character it falls in (longer ones are cut at the window).
const CHARACTER_WINDOW = 64;

/**
 * The character boundary nearest to `i` (a code point boundary) on one side: `i` itself unless
 * a character of several code points spans it (an accent cut from its letter reads as another
 * letter, a family emoji cut after a joiner as other people). Only such a cut asks the segmenter.
 */
function characterBoundary(text: string, i: number, side: "before" | "after"): number {
  if (i <= 0 || i >= text.length || (!JOINS.test(text.slice(i, i + 2)) && text.charCodeAt(i - 1) !== 0x200d)) return i;
  const from = Math.max(0, i - CHARACTER_WINDOW);
  let before = from;
  for (const { index } of graphemes.segment(text.slice(from, Math.min(text.length, i + CHARACTER_WINDOW)))) {
    if (from + index >= i) return side === "after" || from + index === i ? from + index : before;
    before = from + index;
  }
  return side === "after" ? Math.min(text.length, i + CHARACTER_WINDOW) : before;
}

/** The first `n` code units of a text, fewer where the cut would split a character (half a surrogate pair makes a request body some APIs refuse). */
export function headOf(text: string, n: number): string {
  const end = Math.max(0, Math.floor(n));
  return text.slice(0, characterBoundary(text, end > 0 && end < text.length && isHigh(text.charCodeAt(end - 1)) ? end - 1 : end, "before"));
}

/** The last `n` code units of a text, fewer where the cut would split a character. */
export function tailOf(text: string, n: number): string {
  const start = Math.max(0, text.length - Math.floor(n));
  return text.slice(characterBoundary(text, start > 0 && start < text.length && isLow(text.charCodeAt(start)) ? start + 1 : start, "after"));
}

/** One line of at most `max` characters: the first non-empty line of a text. */
export function firstLine(text: string, max: number): string {
  const line = text.split("\n").find((l) => l.trim() !== "")?.trim() ?? "";
  return line.length <= max ? line : headOf(line, max - 1) + "…";
}

/** A text cut in the middle to about `max` characters. */
export function cutMiddle(text: string, max: number): string {
  return text.length > max ? `${headOf(text, max / 2)}\n[… ${text.length - max} characters omitted …]\n${tailOf(text, max / 2)}` : text;
}

/**
 * The messages as a plain transcript for a summarizer: one block per message, long contents and
 * call arguments cut in the middle so a huge tool output cannot crowd out the rest, and at most
 * about `maxTotal` characters in all: past it, messages are left out from the middle of the span
 * (its oldest and newest stay). User requests that an assistant already answered are marked done,
 * so a summary cannot bring them back as open work.
 */
export function transcript(messages: readonly ChatMessage[], maxChars = 2000, maxTotal = Infinity): string {
  const blocks: string[] = [];
  let total = 0;
  messages.forEach((m, i) => {
    const text = cutMiddle(messageText(m), maxChars);
    const calls = cutMiddle(toolCallText(m), maxChars);
    const label = m.role === "user" ? (isAnswered(messages, i) ? "user (done)" : "user") : m.role;
    const block = `[${label}] ${text}${calls ? `\n[tool calls] ${calls}` : ""}`;
    total += block.length + 2;
    blocks.push(block);
  });
  if (total <= maxTotal) return blocks.join("\n\n");
  // Taken from both ends in turn, so the oldest messages (the far facts) and the newest both stay.
  const head: string[] = [];
  const tail: string[] = [];
  let used = 0;
  let i = 0;
  let j = blocks.length - 1;
  while (i <= j) {
    const fromHead = head.length <= tail.length;
    const block = blocks[fromHead ? i : j];
    if (used + block.length + 2 > maxTotal) break;
    used += block.length + 2;
    if (fromHead) head.push(blocks[i++]);
    else tail.push(blocks[j--]);
  }
  return [...head, `[… ${j - i + 1} messages omitted …]`, ...tail.reverse()].join("\n\n");
}

/**
 * Whether a user message was already answered: an assistant reply without tool calls follows it,
 * or a user message after the assistant has acted. Tool calls alone are work still in progress:
 * a request marked done there would tell the model not to finish it.
 */
export function isAnswered(messages: readonly ChatMessage[], i: number): boolean {
  let acted = false;
  for (let j = i + 1; j < messages.length; j++) {
    const m = messages[j];
    if (m.role === "assistant") {
      if (!hasToolCalls(m)) return true;
      acted = true;
    } else if (m.role === "user" && acted) return true;
  }
  return false;
}

const refusalOf = (m: ChatMessage): string | undefined => {
  const r = (m as { refusal?: unknown }).refusal;
  return typeof r === "string" && r !== "" ? r : undefined;
};

/** The content of a message as parts (for joining it to one that has parts). */
const partsOf = (c: ChatMessage["content"]): ContentPart[] => (Array.isArray(c) ? c : typeof c === "string" && c !== "" ? [{ type: "text", text: c }] : []);

/**
 * Two messages of one role as one: the fields of both (the later one's where both have one: its
 * name, its audio, its calls), the earlier one's content then the later one's. A refusal stays in
 * its field (messageText reads it from there: copied into the content too, it was shown twice);
 * when both have one, the earlier one's goes into the content.
 */
function joinMessages(first: ChatMessage, second: ChatMessage): ChatMessage {
  const refusal = refusalOf(second) ?? refusalOf(first);
  const a = refusalOf(first) !== undefined && refusalOf(second) !== undefined ? messageText(first) : first.content;
  const b = second.content;
  let content: ChatMessage["content"];
  if (Array.isArray(a) || Array.isArray(b)) content = [...partsOf(a), ...partsOf(b)];
  else content = [a ?? "", b ?? ""].filter((t) => t !== "").join("\n");
  return { ...first, ...second, content, ...(refusal === undefined ? {} : { refusal }) } as ChatMessage;
}

/**
 * Merges runs of messages of one role into one where either is `mergeable`, so compacted runs
 * keep the alternation. The later message may carry tool calls (its results follow it, so the
 * merged message keeps them); the earlier one may not, since its results would be cut off.
 * System messages do not break a run (roles alternate around them): those between the two come
 * before the merged message, so none lands between its tool calls and their results.
 */
export function mergeRuns(messages: readonly ChatMessage[], mergeable: (m: ChatMessage) => boolean): ChatMessage[] {
  const out: ChatMessage[] = [];
  const merged = new Set<ChatMessage>();
  const canMerge = (m: ChatMessage): boolean => merged.has(m) || mergeable(m);
  for (const m of messages) {
    let k = out.length - 1;
    if (m.role !== "system") while (k >= 0 && out[k].role === "system") k--;
    const last = k >= 0 ? out[k] : undefined;
    if (last !== undefined && last.role === m.role && (m.role === "user" || m.role === "assistant") && !hasToolCalls(last) && (canMerge(last) || canMerge(m))) {
      const joined = joinMessages(last, m);
      merged.add(joined);
      out.splice(k, 1);
      out.push(joined);
    } else out.push(m);
  }
  return out;
}
