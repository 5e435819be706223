// The LLM seam: every client (OpenAI-compatible, scripted, replayed) implements `Llm`.
import type { Role } from "../trace.js";

export interface ChatMessage {
  role: Role;
  content: string;
}

export interface LlmUsage {
  inputTokens: number;
  outputTokens: number;
  /** Prompt tokens the provider served from its prefix cache. */
  cachedTokens: number;
}

export interface LlmRequest {
  messages: ChatMessage[];
  signal?: AbortSignal;
  /** 1-based turn number, for clients that script or record by turn. */
  turn?: number;
}

export interface LlmResponse {
  content: string;
  usage?: LlmUsage;
  model?: string;
}

export interface Llm {
  readonly name: string;
  complete(request: LlmRequest): Promise<LlmResponse>;
}
