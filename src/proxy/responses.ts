// OpenAI's POST /v1/responses, seen by the compaction machinery as chat messages and turned back
// after. `instructions` is the system prompt; each input message is one chat message; a run of
// function_call items is one assistant message with those tool calls and each function_call_output
// a tool result, so a cut never separates a call from its output. Kept items go back as the
// client's own objects, the summary as one input message. A request that continues a stored
// response (`previous_response_id`) or sends a plain string has nothing here to compact.
import type { ChatMessage } from "../llm/types.js";
import type { ChatRequest, ParsedRequest } from "./request.js";
import { parseJsonObject } from "./request.js";

type Item = { type?: unknown; role?: unknown; content?: unknown; call_id?: unknown; name?: unknown; arguments?: unknown; output?: unknown };

const partText = (c: unknown): string =>
  typeof c === "string" ? c : Array.isArray(c) ? (c as { text?: unknown; type?: unknown }[]).map((p) => (typeof p.text === "string" ? p.text : `[${String(p.type)}]`)).join("\n") : "";

export interface ResponsesRequest extends ChatRequest {
  readonly restore: (messages: ChatMessage[]) => { input: unknown[] };
}

export function parseResponsesRequest(raw: Buffer): ParsedRequest & ({ ok: false } | { ok: true; request: ResponsesRequest }) {
  const parsed = parseJsonObject(raw);
  if (!parsed.ok) return parsed;
  const b = parsed.body;
  if (typeof b.model !== "string") return { ok: false, error: "'model' must be a string", param: "model" };
  const items: Item[] = typeof b.input === "string" ? [{ role: "user", content: b.input }] : Array.isArray(b.input) ? (b.input as Item[]) : [];
  if (items.length === 0) return { ok: false, error: "'input' must be a string or a non-empty array of items", param: "input" };
  const originals = new Map<ChatMessage, Item[]>();
  const messages: ChatMessage[] = typeof b.instructions === "string" ? [{ role: "system", content: b.instructions }] : [];
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "object" || item === null) return { ok: false, error: `input[${i}] must be an object`, param: `input[${i}]` };
    let chat: ChatMessage;
    const group = [item];
    if (item.type === "function_call") {
      // A run of calls is one assistant turn: its outputs follow as tool results.
      while (items[i + 1]?.type === "function_call") group.push(items[++i]);
      chat = { role: "assistant", content: null, tool_calls: group.map((c) => ({ id: String(c.call_id), type: "function" as const, function: { name: String(c.name), arguments: String(c.arguments ?? "") } })) };
    } else if (item.type === "function_call_output") {
      chat = { role: "tool", content: partText(item.output), tool_call_id: String(item.call_id) };
    } else if (item.role === "user" || item.role === "assistant" || item.role === "system" || item.role === "developer") {
      chat = { role: item.role === "developer" ? "system" : item.role, content: partText(item.content) };
    } else {
      // Reasoning and other items: kept in place, counted as assistant text.
      chat = { role: "assistant", content: JSON.stringify(item) };
    }
    originals.set(chat, group);
    messages.push(chat);
  }
  const restore = (out: ChatMessage[]) => {
    const input: unknown[] = [];
    for (const m of out) {
      const original = originals.get(m);
      if (original !== undefined) input.push(...original);
      else if (m.role === "system" && input.length === 0) continue; // `instructions`, kept as they were
      else input.push({ role: m.role === "assistant" ? "assistant" : "user", content: typeof m.content === "string" ? m.content : "" });
    }
    return { input };
  };
  const max = typeof b.max_output_tokens === "number" ? b.max_output_tokens : undefined;
  // With previous_response_id the upstream holds the history: nothing the proxy sends can shrink it.
  const compactable = typeof b.previous_response_id !== "string" && Array.isArray(b.input);
  return { ok: true, request: { body: b, messages: compactable ? messages : [], model: b.model, tools: Array.isArray(b.tools) ? b.tools : undefined, stream: b.stream === true, maxTokens: max, restore } };
}
