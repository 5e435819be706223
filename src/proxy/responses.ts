// OpenAI's POST /v1/responses, seen by the compaction machinery as chat messages and turned back
// after. `instructions` is the system prompt; each input message is one chat message; a run of
// function_call items (with the reasoning items before them) is one assistant message with those
// tool calls and each function_call_output a tool result, so a cut never separates a call from its
// output or its reasoning. Kept items go back as the
// client's own objects, the summary as one input message. A request that continues a stored
// response (`previous_response_id`) or sends a plain string has nothing here to compact.
import { messageText } from "../llm/messages.js";
import type { ChatMessage, ContentPart, ToolCall } from "../llm/types.js";
import type { ChatRequest, ParsedRequest } from "./request.js";
import { asText, mergedInto, notAnObject, parseJsonObject } from "./request.js";

type Item = { type?: unknown; role?: unknown; content?: unknown; call_id?: unknown; name?: unknown; arguments?: unknown; output?: unknown };

const partText = (c: unknown): string =>
  typeof c === "string" ? c : Array.isArray(c) ? (c as { text?: unknown; type?: unknown }[]).map((p) => (typeof p.text === "string" ? p.text : `[${asText(p.type)}]`)).join("\n") : "";

/**
 * The item's text, with its images after it as parts (the measure counts an image by its size,
 * not its "[input_image]" placeholder); the text alone when it has none.
 */
function withImages(c: unknown): string | ContentPart[] {
  const text = partText(c);
  const images = Array.isArray(c) ? (c as ContentPart[]).filter((p) => p.type === "input_image") : [];
  return images.length === 0 ? text : [{ type: "text", text }, ...images];
}

/** The index of the call that continues a run at `from` (after any reasoning items), or -1. */
function runEnd(items: Item[], from: number): number {
  let j = from;
  while (items[j]?.type === "reasoning") j++;
  return items[j]?.type === "function_call" ? j : -1;
}

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
  // Each call's message, for a call run the compaction merged text into (a new message with the run's calls).
  const byCall = new Map<ToolCall, ChatMessage>();
  const messages: ChatMessage[] = typeof b.instructions === "string" ? [{ role: "system", content: b.instructions }] : [];
  // Checked before any is read: an item can be read as part of the one before it (a call run, reasoning).
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (typeof item !== "object" || item === null) return { ok: false, error: `input[${i}] must be an object`, param: `input[${i}]` };
    const bad = Array.isArray(item.content) ? notAnObject(item.content, `input[${i}].content`) : Array.isArray(item.output) ? notAnObject(item.output, `input[${i}].output`) : undefined;
    if (bad !== undefined) return { ok: false, error: `${bad} must be a content part (an object)`, param: bad };
    // Else read as the tool "undefined" (and its call paired with any output missing its id too).
    const field = item.type === "function_call" ? (typeof item.call_id !== "string" ? "call_id" : typeof item.name !== "string" ? "name" : item.arguments !== undefined && typeof item.arguments !== "string" ? "arguments" : undefined) : item.type === "function_call_output" && typeof item.call_id !== "string" ? "call_id" : undefined;
    if (field !== undefined) return { ok: false, error: `input[${i}].${field} must be a string (a ${String(item.type)} item's)`, param: `input[${i}].${field}` };
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    let chat: ChatMessage;
    const group = [item];
    // A reasoning model's reasoning items go with the call run or reply after them: the upstream
    // refuses either without the other, so no cut may fall between them.
    let reasoning = "";
    if (item.type === "reasoning") {
      while (items[i + 1]?.type === "reasoning") group.push(items[++i]);
      reasoning = group.map((r) => JSON.stringify(r)).join("\n");
      const next = items[i + 1] as Item | undefined;
      if (next?.type === "function_call" || (next?.role === "assistant" && (next.type === undefined || next.type === "message"))) group.push(items[++i]);
    }
    const head = group[group.length - 1];
    if (head.type === "function_call") {
      // A run of calls is one assistant turn (reasoning before a later call included): its outputs follow as tool results.
      for (let next = runEnd(items, i + 1); next > i; next = runEnd(items, i + 1)) while (i < next) group.push(items[++i]);
      const calls = group.filter((c) => c.type === "function_call");
      const thought = group.filter((c) => c.type === "reasoning");
      reasoning = thought.map((r) => JSON.stringify(r)).join("\n");
      chat = { role: "assistant", content: reasoning === "" ? null : reasoning, tool_calls: calls.map((c) => ({ id: asText(c.call_id), type: "function" as const, function: { name: asText(c.name), arguments: asText(c.arguments ?? "") } })) };
    } else if (head.type !== "reasoning" && reasoning !== "") {
      chat = { role: "assistant", content: `${reasoning}\n${partText(head.content)}` };
    } else if (item.type === "function_call_output") {
      chat = { role: "tool", content: withImages(item.output), tool_call_id: asText(item.call_id) };
    } else if (item.role === "user" || item.role === "assistant" || item.role === "system" || item.role === "developer") {
      chat = { role: item.role === "developer" ? "system" : item.role, content: withImages(item.content) };
    } else {
      // Reasoning and other items: kept in place, counted as assistant text.
      chat = { role: "assistant", content: reasoning === "" ? JSON.stringify(item) : reasoning };
    }
    originals.set(chat, group);
    for (const c of chat.tool_calls ?? []) byCall.set(c, chat);
    messages.push(chat);
  }
  const restore = (out: ChatMessage[]) => {
    const input: unknown[] = [];
    for (const m of out) {
      const original = originals.get(m);
      const step = original === undefined ? mergedInto(m, byCall) : undefined;
      if (original !== undefined) input.push(...original);
      // The merged text as a message, then the run's own items (its calls answer the outputs after it).
      else if (step !== undefined) input.push({ role: "assistant", content: step.before }, ...(originals.get(step.kept) as Item[]));
      else if (m.role === "system" && input.length === 0) continue; // `instructions`, kept as they were
      // A masked tool result: still the output of its call, or the upstream refuses the call.
      else if (m.role === "tool") input.push({ type: "function_call_output", call_id: m.tool_call_id ?? "", output: messageText(m) });
      else input.push({ role: m.role === "assistant" ? "assistant" : "user", content: typeof m.content === "string" ? m.content : "" });
    }
    return { input };
  };
  const max = typeof b.max_output_tokens === "number" ? b.max_output_tokens : undefined;
  // With previous_response_id the upstream holds the history: nothing the proxy sends can shrink it.
  const compactable = typeof b.previous_response_id !== "string" && Array.isArray(b.input);
  return { ok: true, request: { body: b, messages: compactable ? messages : [], ...(compactable ? {} : { uncompacted: messages }), model: b.model, tools: Array.isArray(b.tools) ? b.tools : undefined, stream: b.stream === true, maxTokens: max, restore } };
}
