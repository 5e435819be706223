// How much of a prompt a provider's prefix cache can serve: the part identical to the
// previous prompt, measured in whole messages, characters and tokens.
import type { TextMessage as ChatMessage } from "../llm/types.js";
import { messageTokens, TOKENS_PER_MESSAGE, tokenize } from "../compaction/tokens.js";

/** Price of a cached prompt token relative to an uncached one (providers bill about a tenth). */
export const CACHED_TOKEN_PRICE = 0.1;

export interface SharedPrefix {
  /** Leading messages identical in role and content. */
  messages: number;
  /** Characters of those messages plus the common start of the first differing one. */
  chars: number;
  /** Tokens of the shared prefix, framing included (the cacheable part of the new prompt). */
  tokens: number;
}

/** The prefix `next` shares with `prev`. Pure; an empty `prev` shares nothing. */
export function sharedPrefix(prev: readonly ChatMessage[], next: readonly ChatMessage[]): SharedPrefix {
  let i = 0;
  let chars = 0;
  let tokens = 0;
  const n = Math.min(prev.length, next.length);
  while (i < n && prev[i].role === next[i].role && prev[i].content === next[i].content) {
    chars += next[i].content.length;
    tokens += messageTokens(next[i]);
    i++;
  }
  const messages = i;
  if (i < n && prev[i].role === next[i].role) {
    const a = prev[i].content;
    const b = next[i].content;
    let c = 0;
    while (c < a.length && c < b.length && a.charCodeAt(c) === b.charCodeAt(c)) c++;
    if (c > 0) {
      chars += c;
      // The message header is shared; of the content, only tokens identical in both encodings.
      tokens += TOKENS_PER_MESSAGE - 1 + commonTokens(a, b);
    }
  }
  return { messages, chars, tokens };
}

/** Leading tokens equal in the encodings of `a` and `b`. */
function commonTokens(a: string, b: string): number {
  const ta = tokenize(a);
  const tb = tokenize(b);
  let k = 0;
  while (k < ta.length && k < tb.length && ta[k] === tb[k]) k++;
  return k;
}
