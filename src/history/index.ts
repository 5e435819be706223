// Prompt views over the run trace: the full history and interpreter-aware compression,
// with their statistics, token counts and the side-by-side comparison for the CLI.
export { defaultViewOptions, resolveViewOptions, type FullReason, type PromptView, type View, type ViewInput, type ViewOptions, type ViewStats } from "./view.js";
export { fullView } from "./full.js";
export { compressedView, planTurns, isErrored, type TurnPlan } from "./compressed.js";
export { renderSummary, definitionLine, definitionSample, toolLine, resultShape, ednValue, type SummaryOptions, type SummaryContext } from "./summary.js";
export { compressionReport, measurePrompt, measureView, totalsOf, type CompressionReport, type CompressionTotals, type PromptCompression, type PromptPair, type RunSettings, type SentPrompts } from "./stats.js";
export { sharedPrefix, type SharedPrefix } from "../compaction/measure.js";
export { countTokens, messageTokens, promptTokens, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from "../compaction/tokens.js";
export { renderComparison, type CompareOptions } from "./compare.js";
export { traceSettings, type SettingsCheck } from "./settings.js";
export { viewOptionsSchema } from "../trace/view-settings.js";
export { interpreterStrategy, INTERPRETER_STRATEGY } from "./strategy.js";
export { defaultStrategies } from "./registry.js";
