// Anthropic's POST /v1/messages (what the Anthropic SDKs and Claude Code send to a base URL),
// seen by the compaction machinery as chat messages and turned back after. Each Anthropic
// message becomes one chat message whose text is its blocks rendered (for the token estimate and
// the summarizer); an assistant turn's tool_use blocks become its tool calls, and a user turn of
// tool_result blocks becomes a tool message (followed by a user message of its other blocks), so
// a cut never separates a call from its result.
// Kept messages go back as the client's own objects; the summary goes in as a text block that
// carries a cache_control breakpoint, so the prefix up to it is cached until the next compaction.
import { messageText } from "../llm/messages.js";
import type { ChatMessage, ContentPart, ToolCall } from "../llm/types.js";
import type { ChatRequest, ParsedRequest } from "./request.js";
import { asText, mergedInto, notAnObject, parseJsonObject } from "./request.js";

type Block = { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown; tool_use_id?: unknown; content?: unknown; cache_control?: unknown; source?: { type?: unknown; data?: unknown; content?: unknown } | null };
type AnthropicMessage = { role: "user" | "assistant"; content: string | Block[] };

// Anthropic accepts at most 4 cache breakpoints per request.
const MAX_BREAKPOINTS = 4;

function blockText(b: Block): string {
  // A document's blocks are not checked as a message's are.
  if (typeof b !== "object" || b === null) return "";
  if (b.type === "text" && typeof b.text === "string") return b.text;
  if (b.type === "tool_use") return `[tool call ${asText(b.name)}] ${JSON.stringify(b.input ?? {})}`;
  if (b.type === "tool_result") return typeof b.content === "string" ? b.content : Array.isArray(b.content) ? (b.content as Block[]).map(blockText).join("\n") : "";
  // A plain-text document is its text (a PDF's cost is not known without reading it whole).
  if (b.type === "document" && b.source?.type === "text" && typeof b.source.data === "string") return b.source.data;
  if (b.type === "document" && b.source?.type === "content" && Array.isArray(b.source.content)) return (b.source.content as Block[]).map(blockText).join("\n");
  return `[${asText(b.type)}]`;
}

/**
 * Why the blocks cannot be read, by the path at fault: a block (or a block inside a tool result)
 * that is not an object, or a tool block without its tool's name or ids as strings, which would
 * become the tool "undefined" in the compaction's calls and summary.
 */
function badBlock(blocks: unknown[], path: string): { param: string; error: string } | undefined {
  const bad = notAnObject(blocks, path);
  if (bad !== undefined) return { param: bad, error: `${bad} must be a content block (an object)` };
  for (let j = 0; j < blocks.length; j++) {
    const b = blocks[j] as Block;
    const inner = b.content;
    const nested = Array.isArray(inner) ? notAnObject(inner, `${path}[${j}].content`) : undefined;
    if (nested !== undefined) return { param: nested, error: `${nested} must be a content block (an object)` };
    const field = b.type === "tool_use" ? (typeof b.id !== "string" ? "id" : typeof b.name !== "string" ? "name" : undefined) : b.type === "tool_result" && typeof b.tool_use_id !== "string" ? "tool_use_id" : undefined;
    if (field !== undefined) return { param: `${path}[${j}].${field}`, error: `${path}[${j}].${field} must be a string (a ${String(b.type)} block's)` };
  }
  return undefined;
}

/**
 * The message's text, with its images and files (a PDF document) after it as parts: the measure
 * counts them by its rules for media, not as their "[image]" or "[document]" placeholders. The
 * text alone when it has none. A text document is in the text already.
 */
function withImages(text: string, blocks: Block[]): string | ContentPart[] {
  let images: ContentPart[] | undefined;
  for (const b of blocks) {
    if (isMedia(b)) (images ??= []).push(b as ContentPart);
    else if (b.type === "tool_result" && Array.isArray(b.content)) for (const inner of b.content as Block[]) if (isMedia(inner)) (images ??= []).push(inner as ContentPart);
  }
  return images === undefined ? text : [{ type: "text", text }, ...images];
}

const isMedia = (b: Block): boolean => b.type === "image" || (b.type === "document" && b.source?.type !== "text" && b.source?.type !== "content");

/**
 * The message as chat messages: one, or for a user turn of tool results with more blocks (what
 * the person typed while a tool ran, a reminder) a tool message of the results and a user message
 * of the rest after it, so masking a result never takes the person's words with it.
 */
function toChat(m: AnthropicMessage): ChatMessage[] {
  if (typeof m.content === "string") return [{ role: m.role, content: m.content }];
  const uses = m.content.filter((b) => b.type === "tool_use");
  if (m.role === "assistant" && uses.length > 0) {
    // The calls' input is in tool_calls, where the measure and the summarizers read it: not again in the text.
    const text = m.content.filter((b) => b.type !== "tool_use").map(blockText).join("\n");
    return [{ role: "assistant", content: withImages(text, m.content), tool_calls: uses.map((b) => ({ id: asText(b.id), type: "function" as const, function: { name: asText(b.name), arguments: JSON.stringify(b.input ?? {}) } })) }];
  }
  const results = m.role === "user" ? m.content.filter((b) => b.type === "tool_result") : [];
  if (results.length === 0) return [{ role: m.role, content: withImages(m.content.map(blockText).join("\n"), m.content) }];
  const tool: ChatMessage = { role: "tool", content: withImages(results.map(blockText).join("\n"), results), tool_call_id: asText(results[0].tool_use_id) };
  const rest = m.content.filter((b) => b.type !== "tool_result");
  return rest.length === 0 ? [tool] : [tool, { role: "user", content: withImages(rest.map(blockText).join("\n"), rest) }];
}

/** The ids of an assistant message's tool_use blocks; none for anything else. */
function toolUseIds(m: unknown): string[] {
  const content = (m as Partial<AnthropicMessage> | undefined)?.content;
  if ((m as Partial<AnthropicMessage> | undefined)?.role !== "assistant" || !Array.isArray(content)) return [];
  const ids: string[] = [];
  for (const b of content) if (b.type === "tool_use") ids.push(asText(b.id));
  return ids;
}

const anHour = (c: unknown): boolean => (c as { ttl?: unknown } | null | undefined)?.ttl === "1h";

/** Whether a message has a block (or a block of a tool result) with a 1-hour breakpoint. */
function cachedForAnHour(m: AnthropicMessage | undefined): boolean {
  if (m === undefined || typeof m.content === "string") return false;
  return m.content.some((b) => anHour(b.cache_control) || (Array.isArray(b.content) && (b.content as Block[]).some((c) => anHour(c.cache_control))));
}

export interface AnthropicRequest extends ChatRequest {
  /** The chat messages back as Anthropic messages: the client's own objects, the summary as a cached text block. */
  readonly restore: (messages: ChatMessage[]) => { system: unknown; messages: unknown[] };
}

export function parseMessagesRequest(raw: Buffer): ParsedRequest & ({ ok: false } | { ok: true; request: AnthropicRequest }) {
  const parsed = parseJsonObject(raw);
  if (!parsed.ok) return parsed;
  const b = parsed.body;
  if (!Array.isArray(b.messages) || b.messages.length === 0) return { ok: false, error: "'messages' must be a non-empty array", param: "messages" };
  const originals = new Map<ChatMessage, AnthropicMessage>();
  // Each tool call's message, for a step the compaction merged text into (a new message with the step's calls).
  const byCall = new Map<ToolCall, ChatMessage>();
  // The two chat messages of a user turn of tool results and more: which turn, and which half.
  const halves = new Map<ChatMessage, { whole: AnthropicMessage; results: boolean }>();
  const messages: ChatMessage[] = [];
  const badSystem = Array.isArray(b.system) ? badBlock(b.system, "system") : undefined;
  if (badSystem !== undefined) return { ok: false, ...badSystem };
  if (typeof b.system === "string" || Array.isArray(b.system)) {
    messages.push({ role: "system", content: typeof b.system === "string" ? b.system : (b.system as Block[]).map(blockText).join("\n") });
  }
  for (let i = 0; i < b.messages.length; i++) {
    const m = b.messages[i] as Partial<AnthropicMessage> | null;
    if (typeof m !== "object" || m === null || (m.role !== "user" && m.role !== "assistant")) return { ok: false, error: `messages[${i}].role must be user or assistant`, param: `messages[${i}].role` };
    if (!(typeof m.content === "string" || Array.isArray(m.content))) return { ok: false, error: `messages[${i}].content must be a string or an array of blocks`, param: `messages[${i}].content` };
    const bad = Array.isArray(m.content) ? badBlock(m.content, `messages[${i}].content`) : undefined;
    if (bad !== undefined) return { ok: false, ...bad };
    const chats = toChat(m as AnthropicMessage);
    if (chats.length === 2) {
      halves.set(chats[0], { whole: m as AnthropicMessage, results: true });
      halves.set(chats[1], { whole: m as AnthropicMessage, results: false });
    } else originals.set(chats[0], m as AnthropicMessage);
    for (const c of chats[0].tool_calls ?? []) byCall.set(c, chats[0]);
    messages.push(...chats);
  }
  if (typeof b.model !== "string") return { ok: false, error: "'model' must be a string", param: "model" };
  const breakpoints = (JSON.stringify(b).match(/"cache_control"/g) ?? []).length;
  const hourAfter = (out: ChatMessage[], i: number) => out.slice(i + 1).some((m) => cachedForAnHour(originals.get(m) ?? halves.get(m)?.whole));
  const restore = (out: ChatMessage[]) => {
    const restored: unknown[] = [];
    let written: { block: Record<string, unknown>; at: number } | undefined;
    // Masked results written here, which the rest of their turn joins (the person's words after them).
    const results = new Set<unknown>();
    for (let i = 0; i < out.length; i++) {
      const m = out[i];
      const original = originals.get(m);
      const step = original === undefined ? mergedInto(m, byCall) : undefined;
      const half = original === undefined ? halves.get(m) : undefined;
      if (original !== undefined) restored.push(original);
      else if (half !== undefined) {
        const blocks = (half.whole.content as Block[]).filter((b) => (b.type === "tool_result") === half.results);
        const last = restored.at(-1) as { role?: unknown; content?: unknown } | undefined;
        if (half.results && halves.get(out[i + 1])?.whole === half.whole) {
          // Both halves kept: the client's own message.
          restored.push(half.whole);
          i++;
        } else if (!half.results && last !== undefined && results.has(last)) (last.content as Block[]).push(...blocks);
        else restored.push({ role: "user", content: blocks });
      } else if (step !== undefined) {
        // The step's own blocks (its tool_use blocks answer the results after it), the merged text before them, after any thinking (which must come first).
        const blocks = (originals.get(step.kept) as AnthropicMessage).content as Block[];
        const lead = blocks.findIndex((b) => b.type !== "thinking" && b.type !== "redacted_thinking");
        restored.push({ role: "assistant", content: [...blocks.slice(0, lead), { type: "text", text: step.before }, ...blocks.slice(lead)] });
      } else if (m.role === "system" && restored.length === 0) continue; // the client's own system prompt, kept in `system`
      else if (m.role === "tool") {
        // A masked tool result: still the result of every tool_use of the turn before (a user message
        // answers parallel calls together, and the chat form keeps one id), or the upstream refuses them.
        const text = messageText(m);
        const ids = toolUseIds(restored.at(-1));
        const masked = { role: "user", content: (ids.length > 0 ? ids : [m.tool_call_id ?? ""]).map((id) => ({ type: "tool_result", tool_use_id: id, content: text })) };
        results.add(masked);
        restored.push(masked);
      } else {
        // A message the compaction wrote (a summary, a marker, a recap line): a text block.
        const block: Record<string, unknown> = { type: "text", text: typeof m.content === "string" ? m.content : "" };
        restored.push({ role: m.role === "assistant" ? "assistant" : "user", content: [block] });
        written = { block, at: i };
      }
    }
    // One breakpoint (when the request has one to spare) at the last message the compaction wrote,
    // which ends the prefix that stays until the next compaction (recap writes one per old reply, and
    // Anthropic refuses more than 4); of an hour when one after it is: Anthropic refuses a 1-hour
    // breakpoint after a 5-minute one.
    if (written !== undefined && breakpoints < MAX_BREAKPOINTS) written.block.cache_control = hourAfter(out, written.at) ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" };
    return { system: b.system, messages: restored };
  };
  const max = typeof b.max_tokens === "number" ? b.max_tokens : undefined;
  return { ok: true, request: { body: b, messages, model: b.model, tools: Array.isArray(b.tools) ? b.tools : undefined, stream: b.stream === true, maxTokens: max, restore } };
}

/** Usage of a non-streaming Messages (or Responses) reply: every input token the prompt cost, cached or not. */
export function messagesUsage(parsed: unknown): { promptTokens: number; completionTokens: number } | undefined {
  const u = (parsed as { usage?: Record<string, unknown> | null }).usage;
  if (typeof u !== "object" || u === null || typeof u.input_tokens !== "number") return undefined;
  const n = (v: unknown) => (typeof v === "number" ? v : 0);
  return { promptTokens: u.input_tokens + n(u.cache_read_input_tokens) + n(u.cache_creation_input_tokens), completionTokens: n(u.output_tokens) };
}
