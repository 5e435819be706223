// Reading chat messages whatever their content shape.
import { isArrayArg, isObjectArg, mustBe } from "./args.js";
import type { ChatMessage, LlmRequest } from "./types.js";

/**
 * The words of a message: its text content (text parts joined), without tool calls. A refusal
 * (OpenAI's `refusal` field or content part, the reply's text when the model declines) is sent
 * back and billed like content, so it is part of the words.
 */
export function messageText(m: ChatMessage): string {
  if (!isObjectArg(m)) throw new TypeError(mustBe("messageText: message", "a chat message", m));
  const c = m.content;
  const refusal = (m as { refusal?: unknown }).refusal;
  const declined = typeof refusal === "string" && refusal !== "";
  if (typeof c === "string" && !declined) return c;
  if (c !== null && c !== undefined && typeof c !== "string" && !isArrayArg(c)) throw new TypeError(mustBe("messageText: message.content", "a string, null or a list of content parts", c));
  let out = typeof c === "string" ? c : "";
  if (Array.isArray(c)) {
    // A part that is no object carries no words, as a part without text.
    for (const part of c as unknown[]) {
      const p = part as { type?: unknown; text?: unknown; refusal?: unknown } | null;
      const text = typeof p?.text === "string" ? p.text : p?.type === "refusal" && typeof p.refusal === "string" ? p.refusal : undefined;
      if (text !== undefined) out += (out ? "\n" : "") + text;
    }
  }
  if (declined) out += (out ? "\n" : "") + refusal;
  return out;
}

/** The tool calls' names and arguments as text, as a tokenizer or summarizer sees them. */
export function toolCallText(m: ChatMessage): string {
  if (!m.tool_calls || m.tool_calls.length === 0) return legacyCallText(m);
  let out = "";
  for (const call of m.tool_calls) out += (out ? "\n" : "") + call.function.name + " " + call.function.arguments;
  return out;
}

/** OpenAI's older function calling: the assistant message's `function_call` ({ name, arguments }) is sent, and billed, like a tool call. */
function legacyCallText(m: ChatMessage): string {
  const f = (m as { function_call?: { name?: unknown; arguments?: unknown } | null }).function_call;
  if (typeof f !== "object" || f === null) return "";
  return `${typeof f.name === "string" ? f.name : ""} ${typeof f.arguments === "string" ? f.arguments : ""}`;
}

/** The most cache breakpoints one Anthropic request may carry (`cache_control` blocks). */
const MAX_CACHE_MARKS = 4;

/**
 * The messages a client with explicit cache breakpoints marks (Anthropic's API, the AI SDK's
 * Anthropic option): the last of the leading system messages, the strategy's stable-prefix ends
 * (`cacheBreakpoints`), and the last message; the latest ones win when there are more than the
 * API allows.
 */
export function cacheMarks(request: { readonly messages: readonly ChatMessage[]; readonly cacheBreakpoints?: LlmRequest["cacheBreakpoints"] }): Set<number> {
  const msgs = request.messages;
  const last = msgs.length - 1;
  if (last < 0) return new Set();
  const marks = (request.cacheBreakpoints ?? []).filter((i) => Number.isInteger(i) && i >= 0 && i < last);
  let system = -1;
  while (system + 1 <= last && msgs[system + 1].role === "system") system++;
  if (system >= 0 && system < last) marks.push(system);
  return new Set([...new Set([...marks, last])].sort((a, b) => a - b).slice(-MAX_CACHE_MARKS));
}
