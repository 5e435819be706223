// Reading chat messages whatever their content shape.
import type { ChatMessage } from "./types.js";

/** The words of a message: its text content (text parts joined), without tool calls. */
export function messageText(m: ChatMessage): string {
  const c = m.content;
  if (typeof c === "string") return c;
  if (c === null || c === undefined) return "";
  let out = "";
  for (const part of c) if (typeof part.text === "string") out += (out ? "\n" : "") + part.text;
  return out;
}

/** The tool calls' names and arguments as text, as a tokenizer or summarizer sees them. */
export function toolCallText(m: ChatMessage): string {
  if (!m.tool_calls || m.tool_calls.length === 0) return "";
  let out = "";
  for (const call of m.tool_calls) out += (out ? "\n" : "") + call.function.name + " " + call.function.arguments;
  return out;
}
