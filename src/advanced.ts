// ptc-lisp/advanced: the building blocks under the public API, for tools that inspect or
// re-render prompts (benchmarks, viewers). Less stable than "ptc-lisp": names may change in a
// minor version.
export * from "./index.js";
export {
  resolveViewOptions,
  planTurns,
  isErrored,
  renderSummary,
  definitionLine,
  definitionSample,
  toolLine,
  resultShape,
  ednValue,
  measurePrompt,
  measureView,
  totalsOf,
  sharedPrefix,
  renderComparison,
  traceSettings,
  viewOptionsSchema,
  type TurnPlan,
  type SummaryOptions,
  type SummaryContext,
  type PromptPair,
  type SharedPrefix,
  type CompareOptions,
  type SettingsCheck,
} from "./history/index.js";
export { messageTokens, TOKENS_PER_MESSAGE, TOKENS_PER_REPLY } from "./compaction/tokens.js";
export { estimateTokens } from "./llm/index.js";
export { extractProgram, sanitizeProgram, type Extraction, type ExtractionProblem } from "./agent/extract.js";
export { renderFeedback, type FeedbackInfo, type FeedbackOptions } from "./trace/feedback.js";
export { staticPrompt } from "./agent/prompt/system.js";
export { shapeOf, type Shape } from "./agent/prompt/shape.js";
export { stateView, RUN_STATE_FORMAT } from "./agent/resume.js";
