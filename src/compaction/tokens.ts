// Token counts with a real BPE tokenizer (o200k_base, the GPT-4o/GPT-5 family encoding),
// so compression statistics and the benchmark report tokens, not characters/4. Chat
// framing follows OpenAI's accounting: a few tokens per message, a few to prime the reply.
import { countTokens as bpeCount, encode } from "gpt-tokenizer";
import { messageText, toolCallText } from "../llm/messages.js";
import type { ChatMessage } from "../llm/types.js";

/** Framing tokens of one chat message: start marker, role, separator, end marker. */
export const TOKENS_PER_MESSAGE = 4;
/** Tokens that prime the assistant's reply after the last message. */
export const TOKENS_PER_REPLY = 3;

// Special-token text in prompts (e.g. a tool result containing "<|endoftext|>") is counted
// as ordinary text instead of throwing: the prompt is data here, not a control channel.
const AS_TEXT = { disallowedSpecial: new Set<string>() };

// Prompts repeat most messages from one turn to the next; counting each distinct text once
// makes per-turn statistics incremental. Bounded: cleared wholesale when full.
const CACHE_LIMIT = 4096;
const cache = new Map<string, number>();

// The tokenizer merges each piece its pre-tokenizer splits off in time quadratic in the piece's
// length, and a run without a break is one piece: 100,000 dashes took 6 s, a megabyte minutes,
// enough for one request to stall the proxy. A run this long is cut into slices counted apart
// (a few tokens off at each cut, against a count that would never finish).
const LONG_RUN = 512;
const SLICE = 256;

const isSpace = (c: number): boolean => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2028 || c === 0x2029 || c === 0xfeff || c === 0x3000 || (c >= 0x2000 && c <= 0x200a);

/**
 * The parts a text is counted in: as it is, unless it holds a run of LONG_RUN or more characters
 * that are all space or all not, which is cut into slices of SLICE (never between the halves of
 * a surrogate pair); null when it holds none. One pass over the text. Exported for tests.
 */
export function countedParts(text: string): string[] | null {
  if (text.length < LONG_RUN) return null;
  let out: string[] | null = null;
  let from = 0;
  let run = 0;
  while (run < text.length) {
    // The run of one kind (space or not) starting at `run`.
    const space = isSpace(text.charCodeAt(run));
    let end = run + 1;
    while (end < text.length && isSpace(text.charCodeAt(end)) === space) end++;
    if (end - run >= LONG_RUN) {
      out ??= [];
      if (run > from) out.push(text.slice(from, run));
      for (let i = run; i < end; ) {
        let j = Math.min(end, i + SLICE);
        if (j < end && (text.charCodeAt(j - 1) & 0xfc00) === 0xd800) j++;
        out.push(text.slice(i, j));
        i = j;
      }
      from = end;
    }
    run = end;
  }
  if (out !== null && from < text.length) out.push(text.slice(from));
  return out;
}

/** Tokens of a text. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  let n = cache.get(text);
  if (n === undefined) {
    const split = countedParts(text);
    if (split === null) n = bpeCount(text, AS_TEXT);
    else {
      n = 0;
      for (const p of split) n += bpeCount(p, AS_TEXT);
    }
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(text, n);
  }
  return n;
}

/** Token ids of a text (for measuring shared prefixes token by token), cut as countTokens cuts it. */
export function tokenize(text: string): number[] {
  const split = countedParts(text);
  if (split === null) return encode(text, AS_TEXT);
  const out: number[] = [];
  for (const p of split) for (const t of encode(p, AS_TEXT)) out.push(t);
  return out;
}

// Messages are never mutated once built, so a count is kept per message object: a request that
// repeats 300 stored messages recounts none of them.
const perMessage = new WeakMap<ChatMessage, number>();

/** Tokens of one message including its framing, tool calls and name. */
export function messageTokens(m: ChatMessage): number {
  let n = perMessage.get(m);
  if (n === undefined) {
    n = TOKENS_PER_MESSAGE + countTokens(typeof m.content === "string" ? m.content : messageText(m));
    if (m.tool_calls) n += countTokens(toolCallText(m));
    if (m.name) n += 1;
    perMessage.set(m, n);
  }
  return n;
}

/** Tokens of a whole prompt as the provider bills it. */
export function promptTokens(messages: readonly ChatMessage[]): number {
  let n = TOKENS_PER_REPLY;
  for (const m of messages) n += messageTokens(m);
  return n;
}
