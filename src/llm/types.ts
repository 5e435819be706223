// The LLM seam: every client (OpenAI-compatible, scripted, replayed) implements `Llm`, and every
// layer above (compaction, history views, the agent, the proxy) speaks `ChatMessage`.

export type Role = "system" | "user" | "assistant" | "tool";

/** A function call requested by an assistant message (OpenAI's `tool_calls` entry). */
export interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/**
 * One chat message in the OpenAI shape. `content` is a string for everything this project
 * builds; apps behind the proxy may send null (a tool-calling assistant) or content parts,
 * which `messageText` flattens for counting and summarizing.
 */
export interface ChatMessage {
  role: Role;
  content: string | null | ContentPart[];
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
}

/** A message whose content is plain text: every message this project builds itself. */
export type TextMessage = ChatMessage & { content: string };

/** A part of a multi-part message (text, image, audio...). Only text parts carry words. */
export interface ContentPart {
  type: string;
  text?: string;
  [key: string]: unknown;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens the provider served from its prefix cache. */
  cachedTokens: number;
  /** Prompt tokens written to the prefix cache, where the provider reports them (Anthropic). */
  cacheWriteTokens?: number;
}

export interface LlmRequest {
  messages: ChatMessage[];
  signal?: AbortSignal;
  /** 1-based turn number, for clients that script or record by turn. */
  turn?: number;
  /** Model override for clients that can address several (e.g. a cheaper summarizer model). */
  model?: string;
  /** Upper bound on the reply's tokens, where the client supports it. */
  maxOutputTokens?: number;
  /**
   * Indices of messages after which the prompt stays stable for the next requests (the history
   * strategy's `cacheBreakpoints`), for clients with explicit cache breakpoints (Anthropic).
   */
  cacheBreakpoints?: readonly number[];
  /**
   * Told each piece of the reply's text as it arrives, for clients that stream (the OpenAI,
   * Anthropic and AI SDK clients, and the offline ones piece by piece). `attempt` counts from 1;
   * a piece of a higher attempt means a retry started the reply over, so what came before is void.
   * The response's `content` is the whole reply either way.
   */
  onText?: (delta: string, attempt: number) => void;
}

export interface LlmResponse {
  content: string;
  usage?: LlmUsage;
  model?: string;
  /** The reply stopped at the output token limit (OpenAI's finish_reason "length", Anthropic's stop_reason "max_tokens" or "model_context_window_exceeded"): it is cut, not finished. */
  truncated?: boolean;
}

export interface Llm {
  readonly name: string;
  /**
   * How the provider behind the client caches prompts, when the client knows: `breakpoint` when
   * it marks cache breakpoints (Anthropic's `cache_control`), `token-prefix` when the provider
   * caches the prefix shared with an earlier request by itself (OpenAI). A compressed history
   * view lays its summaries out for it unless `view.cacheModel` says otherwise.
   */
  readonly cacheModel?: "token-prefix" | "breakpoint";
  /**
   * The name of the client this one answers for, when it is not its own: a replay's recorded client
   * (`anthropic:claude-haiku-4-5`). A compressed history takes the cache minimum of the model this
   * name gives, as it would the recorded client's, so the replay sends the recorded prompts.
   */
  readonly standsFor?: string;
  complete(request: LlmRequest): Promise<LlmResponse>;
}
