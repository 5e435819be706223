// The one-call entry for any app: project a plain ChatMessage[] through a strategy.
import type { ChatMessage, Llm, ToolCall } from "../llm/types.js";
import { resolveStrategy, type StrategyRegistry, type StrategySpec } from "./registry.js";
import type { CompactionResult, Conversation, Json, Strategy } from "./types.js";
import { isArrayArg, mustBe } from "../llm/args.js";

export interface CompactOptions<R = unknown> {
  /** The state a previous call returned; omitted for a conversation the strategy has not seen. */
  readonly state?: Json;
  /** The summarizer's model client (usually cheaper than the conversation's model). */
  readonly llm?: Llm;
  /** The conversation's model, for context limits and prices. */
  readonly model?: string;
  readonly tools?: readonly unknown[];
  readonly reservedOutputTokens?: number;
  readonly reportedPromptTokens?: number;
  /** The records behind the messages, for a strategy that reads them (the summarizing ones: `{ knownNames }`). */
  readonly records?: R;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
  /** Compact now, whatever the strategy's trigger says. */
  readonly force?: boolean;
  /** Where a strategy given by name is looked up (default: the generic compaction strategies). */
  readonly registry?: StrategyRegistry;
}

// OpenAI's `developer` (newer models' system prompt) and legacy `function` results are taken
// too: forCompaction shows them to the strategies as system messages.
const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

/** What is wrong with one message's shape: the field (a path inside the message, "" for the message itself) and why; undefined when compact() takes it. */
export function messageProblem(m: unknown): { field: string; problem: string } | undefined {
  if (typeof m !== "object" || m === null || Array.isArray(m)) return { field: "", problem: "is not an object" };
  const { role, content, name, tool_calls: calls } = m as { role?: unknown; content?: unknown; name?: unknown; tool_calls?: unknown };
  if (typeof role !== "string" || !ROLES.has(role)) return { field: "role", problem: `has role ${JSON.stringify(role)} (expected system, developer, user, assistant, tool or function)` };
  if (!(typeof content === "string" || content === null || content === undefined || Array.isArray(content))) {
    return { field: "content", problem: `has content of type ${typeof content} (expected a string, null or content parts)` };
  }
  if (Array.isArray(content)) {
    const bad = content.findIndex((p: unknown) => typeof p !== "object" || p === null);
    if (bad >= 0) return { field: `content.${bad}`, problem: `has a content part (${bad}) that is not an object` };
    // Anthropic's tool blocks: a call or a result no strategy counts, summarizes or keeps beside its pair.
    const block = content.findIndex((p: { type?: unknown }) => p.type === "tool_use" || p.type === "tool_result");
    if (block >= 0) return { field: `content.${block}`, problem: `has an Anthropic ${String((content[block] as { type: string }).type)} block (content part ${block}): give tool calls as the message's tool_calls and results as tool messages` };
  }
  // A name is counted as text: one of another type failed deep in the tokenizer.
  if (!(name === undefined || name === null || typeof name === "string")) return { field: "name", problem: `has name of type ${typeof name} (expected a string)` };
  // Null is what the SDKs write for a message without tool calls.
  if (calls === undefined || calls === null) return undefined;
  if (!Array.isArray(calls)) return { field: "tool_calls", problem: `has tool_calls of type ${typeof calls} (expected an array)` };
  const bad = calls.findIndex((c: unknown) => {
    const { function: f, custom } = (c ?? {}) as { function?: { name?: unknown; arguments?: unknown } | null; custom?: { name?: unknown } | null };
    // OpenAI's custom (freeform) tool calls carry `custom` (name, input) instead of `function`.
    if (f === undefined && typeof custom === "object" && custom !== null) return typeof custom.name !== "string";
    return typeof f !== "object" || f === null || typeof f.name !== "string" || typeof f.arguments !== "string";
  });
  return bad >= 0 ? { field: `tool_calls.${bad}`, problem: `has a tool call (${bad}) without a function name and arguments string` } : undefined;
}

/** Checks the shape of the messages, so bad input fails with a clear message instead of deep inside a strategy. */
export function checkMessages(messages: unknown): asserts messages is ChatMessage[] {
  if (!isArrayArg(messages)) throw new TypeError(mustBe("compaction: messages", "an array of chat messages", messages));
  messages.forEach((m: unknown, i) => {
    const p = messageProblem(m);
    if (p !== undefined) throw new TypeError(`compaction: message ${i} ${p.problem}`);
  });
}

/**
 * Projects `messages` through a strategy (an instance, a registry name, or `{ name, options }`).
 * The messages are not changed; store `result.state` and pass it back with the next call.
 */
export async function compact<R = unknown>(messages: readonly ChatMessage[], strategy: Strategy<Json, R> | StrategySpec | string, options: CompactOptions<R> = {}): Promise<CompactionResult> {
  checkMessages(messages);
  const s = resolveStrategy(strategy as Strategy, options.registry) as unknown as Strategy<Json, R>;
  const view = forCompaction(messages);
  const conversation: Conversation<R> = {
    messages: view.messages,
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.tools === undefined ? {} : { tools: options.tools }),
    ...(options.reservedOutputTokens === undefined ? {} : { reservedOutputTokens: options.reservedOutputTokens }),
    ...(options.reportedPromptTokens === undefined ? {} : { reportedPromptTokens: options.reportedPromptTokens }),
    ...(options.records === undefined ? {} : { records: options.records }),
  };
  const state = options.state === undefined ? s.initialState() : options.state;
  const result = await s.project(conversation, state, {
    ...(options.llm === undefined ? {} : { llm: options.llm }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.force === undefined ? {} : { force: options.force }),
  });
  return view.messages === messages ? result : { ...result, messages: view.restore(result.messages) };
}

/** A tool call as the library knows it: OpenAI's custom (freeform) calls carry `custom` (name, input) instead of `function`. */
function asFunctionCall(call: ToolCall): ToolCall {
  const c = call as Partial<ToolCall> & { custom?: { name?: unknown; input?: unknown } | null };
  if (typeof c.function === "object" && c.function !== null) return call;
  const input = c.custom?.input;
  return { id: String(c.id), type: "function", function: { name: String(c.custom?.name ?? c.type), arguments: typeof input === "string" ? input : JSON.stringify(input ?? null) } };
}

const same = (out: ChatMessage[]): ChatMessage[] => out;
const oddRole = (m: ChatMessage): boolean => (m.role as string) === "developer" || (m.role as string) === "function";
const oddCalls = (m: ChatMessage): boolean => m.tool_calls?.some((c) => typeof (c as Partial<ToolCall>).function !== "object" || (c as Partial<ToolCall>).function === null) === true;

type LegacyCall = { name?: unknown; arguments?: unknown };
/** OpenAI's older function calling: an assistant message's `function_call`, when it carries no tool calls. */
function legacyCall(m: ChatMessage): LegacyCall | undefined {
  if (m.role !== "assistant" || (m.tool_calls?.length ?? 0) > 0) return undefined;
  const f = (m as { function_call?: LegacyCall | null }).function_call;
  return typeof f === "object" && f !== null ? f : undefined;
}

/**
 * The messages as the strategies see them (and count them): roles they do not know (developer)
 * become system messages, tool calls without a `function` take that shape, a legacy
 * `function_call` and the `function` result that answers it become a tool call and its result
 * (so a cut, a mask or a summary treats them as a pair; a `function` message that answers no
 * call stays a system message), and `restore` maps a projection back to the client's own objects.
 */
export function forCompaction(messages: readonly ChatMessage[]): { messages: readonly ChatMessage[]; restore: (out: ChatMessage[]) => ChatMessage[] } {
  // The common case (every request through the proxy counts and compacts): nothing to show otherwise, nothing allocated.
  if (!messages.some((m) => oddRole(m) || oddCalls(m) || legacyCall(m) !== undefined)) return { messages, restore: same };
  const originals = new Map<ChatMessage, ChatMessage>();
  // Converted calls, for a new message that carries them (recap merges text into a tool step's message).
  const callOriginals = new Map<ToolCall, ToolCall>();
  // Legacy calls shown as tool calls, and the ids their results are shown with.
  const legacyCalls = new Map<ToolCall, LegacyCall>();
  const legacyResults = new Map<string, string | undefined>();
  // The legacy call still waiting for its result (system messages may come between).
  let open: ToolCall | undefined;
  const mapped = messages.map((m, i) => {
    const role = m.role as string;
    const legacy = legacyCall(m);
    if (legacy !== undefined) {
      const call: ToolCall = { id: `legacy_function_call_${i}`, type: "function", function: { name: typeof legacy.name === "string" ? legacy.name : "", arguments: typeof legacy.arguments === "string" ? legacy.arguments : "" } };
      legacyCalls.set(call, legacy);
      open = call;
      const copy: ChatMessage = { ...m, tool_calls: [call] };
      originals.set(copy, m);
      return copy;
    }
    if (role === "function" && open !== undefined) {
      const copy: ChatMessage = { ...m, role: "tool", tool_call_id: open.id };
      legacyResults.set(open.id, m.name);
      open = undefined;
      originals.set(copy, m);
      return copy;
    }
    if (role !== "system" && role !== "developer") open = undefined;
    const odd = oddRole(m);
    const calls = oddCalls(m);
    if (!odd && !calls) return m;
    const converted = calls ? m.tool_calls?.map((c) => {
      const f = asFunctionCall(c);
      if (f !== c) callOriginals.set(f, c);
      return f;
    }) : undefined;
    const copy: ChatMessage = { ...m, ...(odd ? { role: "system" } : {}), ...(converted === undefined ? {} : { tool_calls: converted }) };
    originals.set(copy, m);
    return copy;
  });
  // A new message a strategy made from a shown one goes back to the shape the client wrote.
  const restoreNew = (m: ChatMessage): ChatMessage => {
    if (m.role === "tool" && m.tool_call_id !== undefined && legacyResults.has(m.tool_call_id)) {
      const { tool_call_id: _id, ...rest } = m;
      const name = legacyResults.get(m.tool_call_id);
      return { ...rest, role: "function" as ChatMessage["role"], ...(name === undefined ? {} : { name }) };
    }
    const legacy = m.tool_calls?.length === 1 ? legacyCalls.get(m.tool_calls[0]) : undefined;
    if (legacy !== undefined) {
      const { tool_calls: _calls, ...rest } = m;
      return { ...rest, function_call: legacy } as ChatMessage;
    }
    return m.tool_calls?.some((c) => callOriginals.has(c)) === true ? { ...m, tool_calls: m.tool_calls.map((c) => callOriginals.get(c) ?? c) } : m;
  };
  return { messages: mapped, restore: (out) => out.map((m) => originals.get(m) ?? restoreNew(m)) };
}
