// ptc-lisp: the public API. Everything here is documented in docs/api.md and pinned by
// test/api.test.ts (at most 100 names with "ptc-lisp/advanced"), so a change to the surface is
// deliberate. A type not exported by name is reached through the one that holds it
// (`EvalResult`'s `toolCalls`, `Parameters<typeof openaiLlm>[0]`).

// The interpreter: run a program, print a value, the sandbox's limits and errors.
export { evaluate, print, defaultLimits, formatError } from "./lisp/index.js";
export type { EvaluateOptions, EvalResult, EvalStats, Memory, ToolSpec, Value, Limits, ErrorInfo } from "./lisp/index.js";

// LLM clients: any OpenAI-compatible server, Anthropic, any AI SDK model; scripted, recorded and replayed ones for offline runs.
export { openaiLlm, anthropicLlm, aiSdkLlm, scriptedLlm, recordingLlm, replayLlm, messageText, LlmError, type Llm, type LlmRequest, type LlmResponse, type ChatMessage } from "./llm/index.js";

// Compaction of any chat history (docs/compaction.md): the strategy interface, a registry of
// your own, token counts and prices.
export {
  compact,
  pureStrategy,
  StrategyRegistry,
  countTokens,
  promptTokens,
  modelPrice,
  type CompactOptions,
  type Strategy,
  type StrategyDefinition,
  type StrategySpec,
  type Conversation,
  type CompactionContext,
  type CompactionResult,
  type CompactionEvent,
  type ModelPrice,
  type Json,
} from "./compaction/index.js";
export { defaultStrategies, compressionReport, type CompressionReport, type ViewOptions } from "./history/index.js";

// The agent: SubAgent, its tools, and how a run ends.
export { SubAgent, type Agent, type AgentDefinition, type AgentEvent, type RunOptions, type Step, type TurnEvent } from "./agent/subagent.js";
export { tool, type Tool } from "./agent/tools.js";
export { AgentDefinitionError, type AgentFailure } from "./agent/errors.js";
export { systemPrompt } from "./agent/prompt/system.js";
export { languageReference } from "./agent/prompt/reference.js";

// Traces: every turn of a run, saved and read back.
export { traceToJson, traceFromJson, TraceFormatError } from "./trace/serialize.js";
export type { RunTrace, Turn } from "./trace/trace.js";
export { runToJson, runFromJson, type SavedRun } from "./agent/saved-run.js";

// Saving a run's state and resuming it (SubAgent.resume).
export { saveRun, saveMemory, restoreMemory } from "./agent/resume.js";
export { runStateToJson, runStateFromJson, ResumeError, type RunState } from "./trace/run-state.js";

// The harness: compaction strategies compared on recorded conversations (`ptc compare`).
export { compareStrategies, renderTable, type CompareReport } from "./harness/compare.js";
export { loadTranscripts, type Transcript } from "./harness/transcript.js";

// The compaction proxy: an OpenAI-compatible server that compacts each conversation (`ptc proxy`).
export { startProxy, ProxyStartError, type ProxyOptions, type RunningProxy } from "./proxy/index.js";
