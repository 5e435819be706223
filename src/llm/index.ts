// The LLM clients: three real (any OpenAI-compatible server, Anthropic, any AI SDK model), two offline ones (scripted, replayed),
// and a recorder that wraps any client.
export type { ChatMessage, TextMessage, ContentPart, Llm, LlmRequest, LlmResponse, LlmUsage, Role, ToolCall } from "./types.js";
export { messageText, toolCallText } from "./messages.js";
export { LlmError, type LlmErrorKind, type LlmErrorDetails } from "./errors.js";
export { openaiLlm, type OpenAiLlmOptions, type RetryInfo } from "./openai.js";
export { anthropicLlm, type AnthropicLlmOptions } from "./anthropic.js";
export { aiSdkLlm, type AiSdkLlmOptions } from "./ai-sdk.js";
export { scriptedLlm, type ScriptedLlm, type ScriptedLlmOptions, type ScriptedReply } from "./scripted.js";
export { recordingLlm, type RecordedCall, type RecordedClient, type RecordingOptions } from "./recorder.js";
export { replayLlm, loadRecording, parseRecording, type ReplayLlm, type ReplayOptions } from "./replay.js";
