// ptc-lisp/advanced: everything in "ptc-lisp" and a few building blocks under it, for tools that
// inspect or re-render an agent's prompts from its trace. Less stable than "ptc-lisp": names
// may change in a minor version.
export * from "./index.js";
export { fullView, compressedView, planTurns, renderSummary, type PromptView, type View } from "./history/index.js";
export { extractProgram } from "./agent/extract.js";
export { renderFeedback } from "./trace/feedback.js";
export { staticPrompt } from "./agent/prompt/system.js";
export { stateView } from "./agent/resume.js";
