// ptc-lisp: the public API. Everything here is documented in docs/api.md and pinned by
// test/api.test.ts, so a change to the surface is deliberate. Building blocks for tools that go
// deeper (prompt renderers, token accounting details) are in "ptc-lisp/advanced".

// The interpreter: run a program, print a value, the sandbox's limits and errors.
export { evaluate, print } from "./lisp/index.js";
export type {
  EvaluateOptions,
  EvalResult,
  EvalSuccess,
  EvalFailure,
  EvalStats,
  Memory,
  MemoryEntry,
  Definition,
  ToolFn,
  ToolSpec,
  ToolCallRecord,
  Outcome,
} from "./lisp/index.js";
export type { Value } from "./lisp/index.js";
export { defaultLimits, type Limits } from "./lisp/index.js";
export { formatError, type ErrorInfo, type ErrorKind } from "./lisp/index.js";

// LLM clients: any OpenAI-compatible server, Anthropic, any AI SDK model, scripted and replayed ones for offline runs.
export {
  openaiLlm,
  anthropicLlm,
  aiSdkLlm,
  scriptedLlm,
  recordingLlm,
  replayLlm,
  loadRecording,
  messageText,
  LlmError,
  type Llm,
  type LlmRequest,
  type LlmResponse,
  type LlmUsage,
  type ChatMessage,
  type TextMessage,
  type ContentPart,
  type ToolCall,
  type Role,
  type LlmErrorKind,
  type LlmErrorDetails,
  type OpenAiLlmOptions,
  type AnthropicLlmOptions,
  type AiSdkLlmOptions,
  type RetryInfo,
  type ScriptedLlm,
  type ScriptedLlmOptions,
  type ScriptedReply,
  type RecordedCall,
  type RecordingOptions,
  type ReplayLlm,
  type ReplayOptions,
} from "./llm/index.js";

// Compaction of any chat history: the strategy interface, the strategies, triggers, token
// counting and prices (docs/compaction.md).
export {
  countTokens,
  promptTokens,
  compact,
  createStrategy,
  listStrategies,
  StrategyRegistry,
  createTrigger,
  estimatePromptTokens,
  contextLimit,
  priceModel,
  priceFor,
  requestCost,
  payback,
  recapOptionsFromEnv,
  heuristicGoalDetector,
  llmGoalDetector,
  finish,
  spliceSummary,
  taskIndex,
  turnStarts,
  isUnitStart,
  roleOrderProblems,
  type GoalDetector,
  type PriceModel,
  type TriggerSpec,
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

// The agent: SubAgent, its tools, and how a run ends.
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
  type TurnEvent,
} from "./agent/subagent.js";
export { tool, isTool, type Tool, type ToolDefinition, type ToolInput, type ToolResult, type ToolRunContext } from "./agent/tools.js";
export { AgentDefinitionError, type AgentFailure, type FailReason } from "./agent/errors.js";
export { systemPrompt } from "./agent/prompt/system.js";
export { languageReference } from "./agent/prompt/reference.js";

// Traces: every turn of a run, saved and read back.
export { traceToJson, traceFromJson, TraceFormatError, TRACE_VERSION } from "./trace/serialize.js";
export { runToJson, runFromJson, type SavedRun } from "./agent/saved-run.js";
export type { RunTrace, Turn, TurnStatus, TurnUsage, DefinitionTrace, ToolCallTrace, TraceMessage, NestedRunTrace, TraceSettings } from "./trace/trace.js";

// Saving a run and resuming it (also as SubAgent.resume).
export {
  saveRun,
  saveMemory,
  restoreMemory,
  resumeRun,
  runStateToJson,
  runStateFromJson,
  ResumeError,
  RUN_STATE_VERSION,
  type RunState,
  type SavedDefinition,
  type SaveOptions,
  type ResumeOptions,
} from "./agent/resume.js";

// Prompt views over a trace: the full history and interpreter-aware compression, with figures.
export {
  defaultViewOptions,
  fullView,
  compressedView,
  compressionReport,
  defaultStrategies,
  type PromptView,
  type View,
  type ViewInput,
  type ViewOptions,
  type ViewStats,
  type FullReason,
  type CompressionReport,
  type CompressionTotals,
  type PromptCompression,
  type RunSettings,
} from "./history/index.js";
