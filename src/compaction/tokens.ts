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

/** Tokens of a text. */
export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  let n = cache.get(text);
  if (n === undefined) {
    n = bpeCount(text, AS_TEXT);
    if (cache.size >= CACHE_LIMIT) cache.clear();
    cache.set(text, n);
  }
  return n;
}

/** Token ids of a text (for measuring shared prefixes token by token). */
export function tokenize(text: string): number[] {
  return encode(text, AS_TEXT);
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
