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
} from "./llm/index.js";
// Compaction (issue 10, library): strategies that project any chat history onto the prompt.
export {
  compact,
  createStrategy,
  listStrategies,
  registerStrategy,
  type CompactOptions,
  type StrategySpec,
  type StrategyInfo,
  type StrategyDefinition,
  type Json,
  type Conversation,
  type CompactionContext,
  type CompactionEvent,
  type CompactionEventKind,
  type CompactionResult,
  type CompactionStats,
  type Strategy,
  type Trigger,
  type TriggerDecision,
  type Summarizer,
  type SummaryRequest,
  type SummaryResult,
} from "./compaction/index.js";
// The agent layer: SubAgent and its tools, prompts, feedback, and traces.
export {
  SubAgent,
  type Agent,
  type AgentDefinition,
  type AsToolOptions,
  type InheritableOptions,
  type RunOptions,
  type RunScope,
  type Step,
  type OutputOf,
  type RunUsage,
  type UsageTotals,
  type CompressionUsage,
} from "./agent/subagent.js";
export { tool, isTool, type Tool, type ToolDefinition, type ToolInput, type ToolRunContext } from "./agent/tools.js";
export { AgentDefinitionError, type AgentFailure, type FailReason } from "./agent/errors.js";
export { extractProgram, sanitizeProgram, type Extraction, type ExtractionProblem } from "./agent/extract.js";
export { renderFeedback, type FeedbackInfo, type FeedbackOptions } from "./agent/feedback.js";
export { systemPrompt, staticPrompt } from "./agent/prompt/system.js";
export { languageReference } from "./agent/prompt/reference.js";
export { shapeOf, type Shape } from "./agent/prompt/shape.js";
export { traceToJson, traceFromJson, runToJson, runFromJson, TraceFormatError, TRACE_VERSION, type SavedRun } from "./agent/serialize.js";
export type { RunTrace, Turn, TurnStatus, TurnUsage, DefinitionTrace, ToolCallTrace, TraceMessage, NestedRunTrace, TraceSettings } from "./agent/trace.js";
// Saving a run and resuming it (also as SubAgent.resume).
export {
  saveRun,
  saveMemory,
  restoreMemory,
  resumeRun,
  runStateToJson,
  runStateFromJson,
  stateView,
  ResumeError,
  RUN_STATE_FORMAT,
  RUN_STATE_VERSION,
  type RunState,
  type SavedDefinition,
  type SaveOptions,
  type ResumeOptions,
} from "./agent/resume.js";
// Prompt views over the trace: full history and interpreter-aware compression, with statistics.
export {
  defaultViewOptions,
  resolveViewOptions,
  fullView,
  compressedView,
  planTurns,
  isErrored,
  renderSummary,
  definitionLine,
  definitionSample,
  toolLine,
  resultShape,
  ednValue,
  compressionReport,
  measurePrompt,
  measureView,
  totalsOf,
  cachedCost,
  CACHED_TOKEN_PRICE,
  sharedPrefix,
  countTokens,
  messageTokens,
  promptTokens,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_REPLY,
  renderComparison,
  traceSettings,
  viewOptionsSchema,
  type FullReason,
  type PromptView,
  type View,
  type ViewInput,
  type ViewOptions,
  type ViewStats,
  type TurnPlan,
  type SummaryOptions,
  type SummaryContext,
  type CompressionReport,
  type CompressionTotals,
  type PromptCompression,
  type PromptPair,
  type RunSettings,
  type SharedPrefix,
  type CompareOptions,
  type SettingsCheck,
} from "./history/index.js";
