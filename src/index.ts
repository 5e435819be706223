// ptc-lisp: the public API.
export { evaluate, print } from "./lisp/evaluate.js";
export type { EvaluateOptions, EvalResult, EvalSuccess, EvalFailure, Memory, MemoryEntry, Definition, ToolFn, ToolSpec, ToolCallRecord, Outcome } from "./lisp/evaluate.js";
export { defaultLimits, type Limits } from "./lisp/limits.js";
export { formatError, type ErrorInfo, type ErrorKind } from "./lisp/errors.js";
