// Compaction for any chat history: the strategy interface, token counting, and (as they land)
// strategies, triggers, summarizers and goal detectors.
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
