// ptc-lisp: the public API.
export { evaluate, print } from "./lisp/evaluate.js";
export type { EvaluateOptions, EvalResult, EvalSuccess, EvalFailure, Memory, MemoryEntry, Definition, ToolFn, ToolSpec, ToolCallRecord, Outcome } from "./lisp/evaluate.js";
export { defaultLimits, type Limits } from "./lisp/limits.js";
export { formatError, type ErrorInfo, type ErrorKind } from "./lisp/errors.js";
export {
  openaiLlm,
  scriptedLlm,
  recordingLlm,
  replayLlm,
  loadRecording,
  estimateTokens,
  LlmError,
  type Llm,
  type LlmRequest,
  type LlmResponse,
  type LlmUsage,
  type ChatMessage,
  type LlmErrorKind,
  type LlmErrorDetails,
  type OpenAiLlmOptions,
  type RetryInfo,
  type ScriptedLlm,
  type ScriptedLlmOptions,
  type ScriptedReply,
  type RecordedCall,
  type RecordingOptions,
  type ReplayLlm,
  type ReplayOptions,
} from "./agent/llm/index.js";
