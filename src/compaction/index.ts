// Compaction for any chat history: the strategy interface, the registry and its strategies,
// triggers, summarizers, goal detectors, token counting and the cost model.
export type {
  Json,
  Conversation,
  CompactionContext,
  CompactionEvent,
  CompactionEventKind,
  CompactionResult,
  CompactionStats,
  Strategy,
  Trigger,
  TriggerDecision,
  Summarizer,
  SummaryRequest,
  SummaryResult,
} from "./types.js";
export { countTokens, messageTokens, promptTokens, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from "./tokens.js";
export { compact, checkMessages, type CompactOptions } from "./compact.js";
export { createStrategy, listStrategies, registerStrategy, type StrategySpec, type StrategyInfo } from "./registry.js";
export type { StrategyDefinition } from "./registry-types.js";
export { taskIndex, isUnitStart, turnStarts, spliceSummary, roleOrderProblems, transcript, isAnswered, mergeRuns, type TurnUnit } from "./messages.js";
export { finish, type LlmSpend } from "./result.js";
