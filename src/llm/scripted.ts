// A deterministic, offline `Llm` that serves a fixed list of replies in order: the default
// for tests and examples. It estimates token use so offline runs still report usage, and
// simulates a provider's prefix cache so cached-token figures behave like a real server's.
import { abortError, LlmError, sleep } from "./errors.js";
import { messageText } from "./messages.js";
import { streamWhole } from "./stream.js";
import type { ChatMessage, TextMessage, Llm, LlmRequest, LlmResponse, LlmUsage } from "./types.js";

/** A reply: its text, a full response, or a function of the request (for tests that react). */
export type ScriptedReply = string | LlmResponse | ((request: LlmRequest) => string | LlmResponse | Promise<string | LlmResponse>);

export interface ScriptedLlmOptions {
  name?: string;
  /**
   * Usage reported when a reply carries none: "estimate" (about 4 characters a token; cached
   * tokens = the prefix shared with the previous request) or "none". Default "estimate".
   */
  usage?: "estimate" | "none";
  /** Simulated latency of every reply (abortable). Default 0. */
  delayMs?: number;
}

export interface ScriptedLlm extends Llm {
  /** The requests served so far, in order (messages copied with their text content, signal dropped). */
  readonly requests: ReadonlyArray<{ turn?: number; messages: TextMessage[] }>;
  /** Replies not served yet. */
  readonly remaining: number;
}

/** Rough token count: about four characters a token, as common BPE vocabularies average on code and English. */
export const estimateTokens = (chars: number): number => Math.ceil(chars / 4);

/** Serves `replies` in order; fails with an `exhausted` LlmError once they run out. */
export function scriptedLlm(replies: readonly ScriptedReply[], options: ScriptedLlmOptions = {}): ScriptedLlm {
  const name = options.name ?? "scripted";
  const requests: Array<{ turn?: number; messages: TextMessage[] }> = [];
  let previous: readonly ChatMessage[] = [];

  return {
    name,
    get requests() {
      return requests;
    },
    get remaining() {
      return Math.max(0, replies.length - requests.length);
    },
    async complete(request) {
      if (request.signal?.aborted) throw abortError(request.signal, name);
      const index = requests.length;
      if (index >= replies.length) {
        throw new LlmError("exhausted", `${name}: no reply scripted for request ${index + 1} (the script has ${replies.length})`);
      }
      requests.push({ ...(request.turn === undefined ? {} : { turn: request.turn }), messages: request.messages.map((m) => ({ ...m, content: messageText(m) })) });
      if (options.delayMs) await sleep(options.delayMs, request.signal, name);
      const scripted = replies[index];
      const produced = typeof scripted === "function" ? await scripted(request) : scripted;
      const response: LlmResponse = typeof produced === "string" ? { content: produced } : produced;
      const usage = response.usage ?? (options.usage === "none" ? undefined : estimateUsage(request.messages, previous, response.content));
      previous = request.messages;
      streamWhole(response.content, request.onText);
      return { content: response.content, model: response.model ?? name, ...(usage ? { usage } : {}) };
    },
  };
}

/** Estimated usage, with the characters shared with the previous prompt counted as cached. */
function estimateUsage(messages: readonly ChatMessage[], previous: readonly ChatMessage[], reply: string): LlmUsage {
  let chars = 0;
  let shared = 0;
  let diverged = false;
  for (let i = 0; i < messages.length; i++) {
    const m = messageText(messages[i]);
    chars += m.length;
    if (diverged) continue;
    const p = previous[i];
    if (p === undefined || p.role !== messages[i].role) {
      diverged = true;
      continue;
    }
    const pt = messageText(p);
    const common = commonPrefix(pt, m);
    shared += common;
    if (common < m.length || common < pt.length) diverged = true;
  }
  return { inputTokens: estimateTokens(chars), outputTokens: estimateTokens(reply.length), cachedTokens: Math.floor(shared / 4) };
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
