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
export { createStrategy, listStrategies, StrategyRegistry, compactionStrategies, type StrategySpec, type StrategyInfo } from "./registry.js";
export type { StrategyDefinition } from "./registry-types.js";
export { taskIndex, isUnitStart, turnStarts, spliceSummary, roleOrderProblems, toolPairingProblems, transcript, isAnswered, mergeRuns, type TurnUnit } from "./messages.js";
export { finish, type LlmSpend } from "./result.js";
export { estimatePromptTokens, budgetUsage, contextLimit, toolTokens, CONTEXT_LIMITS, FALLBACK_CONTEXT_LIMIT, type BudgetUsage } from "./models.js";
export { payback, type PaybackInput, type Payback } from "./payback.js";
export { modelPrice, providerPrice, PROVIDER_CACHES, type ModelPrice, type CacheModel } from "./prices.js";
export { pureStrategy, type PureStrategy } from "./strategies/pure.js";
export { createTrigger, listTriggers, type TriggerSpec, type TriggerName } from "./triggers.js";
export { extractiveSummarizer, extractiveSummary } from "./summarizers/extractive.js";
export { llmSummarizer, SummaryRejected, type LlmSummarizerOptions, type SummaryTemplate } from "./summarizers/llm.js";
export { summaryProblem } from "./summarizers/validate.js";
export { SummaryRefused } from "./summarizers/engine.js";
export { heuristicGoalDetector, llmGoalDetector, type GoalDetector, type GoalDecision, type HeuristicOptions, type LlmDetectorOptions } from "./goals.js";
export { recapOptionsFromEnv, type RecapOptions } from "./strategies/recap.js";
