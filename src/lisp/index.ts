// The interpreter as the layers above it see it: run a program, build and print values, read
// source, the sandbox's limits and errors, and what the prompt reference lists. Nothing outside
// src/lisp imports another module of this folder (test/architecture.test.ts checks it), so the
// interpreter's files can move and split without touching the agent.
export { evaluate, print } from "./evaluate.js";
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
  CallAnswer,
  ToolCallInfo,
  ToolSpec,
  ToolCallRecord,
  Outcome,
} from "./evaluate.js";
export { Fn, isMap, isSet, keyword, Keyword, LFloat, LMap, LSet, typeName, type Value } from "./values.js";
export { holdsFunction } from "./holds-function.js";
export { againOptions } from "./define-again.js";
export { Vec } from "./vector.js";
export { equals } from "./equality.js";
export { boxed, Budget, ContextReader, contextValue, HELD_CALL, readableContext, toHost, toLisp, UNLISTED_CONTEXT } from "./interop.js";
export { contextJsonProblem, parseContextJson } from "./context-json.js";
export { cutPoint, shownName, tailPoint, wellFormed } from "./cuts.js";
export { ABORTED, isAbortSignal, unlessAborted } from "./abort.js";
export { read, isSymbolName } from "./reader.js";
export { freeNames } from "./reads.js";
export { isFieldName } from "./hidden-names.js";
export { formText, type Form } from "./forms.js";
export { keywordText, printSample, prStr, quoteString } from "./printer.js";
export { eachHostPart, holdsStandIn, holdsStandInIn, isHiddenKey, Marks, readableStandIns, showStandIns, showStandInsIn, standInType, type HandedText, type Origin } from "./marks.js";
export { publicShown, sentBackSearch, valueOf } from "./sent-back.js";
export { defaultLimits, MAX_TIMER_MS, resolveLimits, type Limits } from "./limits.js";
export { abortedError, excerpt, formatError, IN_EARLIER_PROGRAM, limitThrown, ours, recordedLimit, relocate, ToolTimeout, type ErrorInfo, type ErrorKind } from "./errors.js";
export { resolveIsolation, type Isolation } from "./isolate/options.js";
export { allBuiltins, type Area, type BuiltinDef, type Namespace } from "./core/registry.js";
export { STANDARD_CLOJURE, STANDARD_FORMS } from "./core/standard.js";
export { DOCUMENTED_SPECIAL_FORMS } from "./analyzer/specials/index.js";
