// The public entry of the interpreter: read, analyze and compile the whole program, then run
// it once. A program that can reach a tool is compiled in the suspendable mode
// (compile-async.ts): a tool call returns a promise, the code waiting on it goes on from where
// it stopped when the result is in, and nothing before it runs again. Fuel, loop iterations,
// call depth, output and tool calls are counted by one RunState for the whole run; the time
// limit counts evaluation, not waiting for tools; "now" is one clock. Pure programs keep the
// synchronous closures (compile.ts) and their speed.
import { Analyzer, type AnalyzeEnv } from "./analyzer/analyze.js";
import "./core/index.js";
import { compile } from "./compile.js";
import { isAbortSignal } from "./abort.js";
import { abortedError, isStackOverflow, LIMIT_KINDS, limitRecord, LispError, ours, stackOverflow, thrownMessage, toErrorInfo, toolMessage, unreadable, type ErrorInfo, type SourceLoc, ToolTimeout } from "./errors.js";
import type { AsyncCode } from "./fn.js";
import type { Form } from "./forms.js";
import { boxed, Budget, contextValue, Converted, crossedSize, HELD_CALL, isLispValue, keepValue, ranWith, readableContext, reporter, readTimeout, toHost, toLisp, UNLISTED_CONTEXT } from "./interop.js";
import { contextJsonTimeout, parseContextJson } from "./context-json.js";
import { MAX_TIMER_MS, resolveLimits, type Limits } from "./limits.js";
import { read } from "./reader.js";
import { activate, defaultClock, fuelExhausted, fuelUsed as spentBy, GlobalEnv, output, quietly, run as current, RunState, timeoutError, whileWhole, type DataHost, type ToolHost } from "./runtime.js";
import { compileArityAsync, compileAsync, usesTools } from "./compile-async.js";
import { isPending, Suspend } from "./suspend.js";
import { FailSignal, ReturnSignal } from "./signals.js";
import { Fn, Keyword, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";
import { printChecked, PrintOverflow, type SortedCall } from "./printer.js";
import { sortOrder } from "./core/sorted.js";
import { compare, compareDescending } from "./equality.js";
import { resolveIsolation, type Isolation, type ResolvedIsolation } from "./isolate/options.js";
import { evaluateIsolated } from "./isolate/run.js";
import { type HandedText, hiddenKeys, isHiddenKey, Marks, meetsHidden, type Origin, sameTexts, type SentBack } from "./marks.js";
import { firstLeaves, notePublic, sentBackSearch, valueOf } from "./sent-back.js";
import { hiddenRecords, type HiddenRecords } from "./shared-hidden.js";
import { againOptions, defineAgain, type Entry } from "./define-again.js";
import { RemoteFn } from "./wire.js";
import { anyHoldsFunction, holdsFunction } from "./holds-function.js";
import { setMaxListeners } from "node:events";

/** A host tool: receives a plain argument object, returns plain data (or a promise of it). */
export type ToolFn = (args: Record<string, unknown>, signal: AbortSignal, call?: ToolCallInfo) => unknown;

/** What a tool is told of its call beyond the arguments. */
export interface ToolCallInfo {
  /** The argument keys whose values hold hidden context (shown to models as stand-ins), or that are hidden themselves, in order. */
  readonly hidden: readonly string[];
  /**
   * Called by a tool whose result is computed from its hidden arguments (a nested agent's
   * answer): the result is then hidden as derived from them; with `parts`, only its strings,
   * numbers and keys of those texts (a replayed answer's parts its saved record hid).
   */
  hideResult(parts?: readonly string[]): void;
  /**
   * Tells the record that the host ran the tool with these arguments, not the program's (an
   * approval that edited them): the record shows them as `args` and keeps the program's as `asked`.
   */
  ranWith?(args: Record<string, unknown>): void;
  /**
   * Given to a spec that `reportsAnswer`: the spec says how it answers this call before the
   * call is reported (`onToolCall`): `live` (it runs), `replayed` (answered from a saved run's
   * record: the record says so, and nothing runs again) or `held` (the host holds it: it does not
   * run, the evaluation is about to be stopped, and the call is never reported) or `refused` (the
   * host refuses it before it runs because the run keeps no more: the record keeps no arguments
   * and no size, as calls made at once (pmap) past the bound would each keep theirs). A replayed
   * call may give the saved record's `durationMs`, which its record then keeps.
   */
  answering?(how: CallAnswer, durationMs?: number): void;
  /**
   * The arguments' size as they crossed out (the record's `size` before the result's): a host
   * bounding what its calls keep counts it as it admits the call, before anything is awaited, so
   * calls made at once (pmap) each see the others' and a call it holds, which never ends, counts too.
   */
  readonly size?: number;
}

/** How a host answers a call (`ToolCallInfo.answering`). */
export type CallAnswer = "live" | "replayed" | "held" | "refused";

export interface ToolSpec {
  run: ToolFn;
  /** Parameter names in order, so (tool/name a b) can pass positional arguments. */
  params?: readonly string[];
  /** Longest a call may take, in ms (default: the evaluation's `toolTimeoutMs`). */
  timeoutMs?: number;
  /** Calls of this tool one program may make (default: unlimited, within `maxToolCalls`). */
  maxCalls?: number;
  /** The spec tells each call's answer (`ToolCallInfo.answering`) before the call is reported; one it never tells is reported when it ends. */
  reportsAnswer?: boolean;
}

export interface MemoryEntry {
  readonly value: Value;
  readonly doc?: string;
  /** Source of the defining form. */
  readonly source?: string;
  /** Set when the value came from hidden context or was computed from it. */
  readonly hidden?: Origin;
}

/** Definitions that persist from one evaluation to the next. */
export type Memory = ReadonlyMap<string, MemoryEntry>;

export interface Definition {
  name: string;
  doc?: string;
  value: Value;
  source?: string;
}

export interface ToolCallRecord {
  name: string;
  /** The arguments the tool ran with (hidden values as stand-ins). */
  args: unknown;
  /** The program's arguments, when the host ran the tool with others (`ToolCallInfo.ranWith`). */
  asked?: unknown;
  result?: unknown;
  /** The result as the program received it: a definition holding this very value holds the whole result. Not enumerable (it holds hidden values as they are): JSON and copies of the record leave it out. */
  value?: Value;
  error?: string;
  /** The limit the result ran into (nesting_too_deep, collection_too_large, ...), when that is why the call failed. */
  errorKind?: string;
  /** That limit's hint. */
  errorHint?: string;
  /** The size of the arguments as they crossed out and of the result as it crossed in: characters of their strings plus one per value (what `maxBoundaryChars` and `maxBoundaryValues` count). */
  size?: number;
  durationMs: number;
  /** Answered from a saved run's record (`ToolCallInfo.answering`): the tool did not run again. */
  replayed?: true;
  /** Held by the host (`ToolCallInfo.answering`): the call did not run, and was not reported. */
  held?: true;
}

export interface EvaluateOptions {
  /** Context readable as data/key. Plain JSON-like data; object keys become keywords. */
  ctx?: Readonly<Record<string, unknown>>;
  /**
   * The context as JSON text of an object, instead of `ctx`: parsed as the run's first work,
   * within its time limit (in the worker mode, inside the worker, where the hard stop can end a
   * parse that takes too long). Text that is not a JSON object fails the run with `value_error`;
   * a byte order mark opening it is dropped, as when a file's bytes are decoded.
   */
  ctxJson?: string;
  /**
   * The hidden context (`_` keys) of the runs that called this one, nearest first: an agent
   * called as a tool, whose tools are often its caller's. Never readable here, but a tool's
   * result or message quoting it is hidden as one quoting this run's own hidden context is.
   */
  callerHidden?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  tools?: Readonly<Record<string, ToolFn | ToolSpec>>;
  memory?: Memory;
  limits?: Partial<Limits>;
  /** Aborting ends the evaluation with `aborted` at once, even while a tool has not answered. */
  signal?: AbortSignal;
  /** Longest a tool call may take, in ms, for tools that set none. Default: no limit. */
  toolTimeoutMs?: number;
  /**
   * The monotonic clock (ms) behind `timeoutMs` and the durations reported; default: the
   * process's high-resolution clock. A host or test that needs time limits independent of
   * machine speed passes a virtual one.
   */
  clock?: () => number;
  /**
   * Where the program runs. "none" (the default): in this thread, fastest, but a program stalls
   * the event loop while it computes and only the interpreter's own checks stop it. "worker":
   * in a pooled worker thread with a hard heap cap, ended at once by abort or a time limit
   * overrun; tools still run here. See the README's Limits section.
   */
  isolation?: Isolation;
  /**
   * What earlier evaluations of the run handed its tools of what they computed from hidden context
   * (the previous result's `handed`): a tool may keep a piece of a token and send it back now,
   * when nothing this evaluation reads holds it. Its answers are searched for these as for hidden
   * context itself. An agent's run carries them from turn to turn.
   */
  handed?: readonly HandedText[];
  /**
   * Told each line the program outputs, as it is output (for live progress), until the output
   * limit (`maxOutputChars`) cuts in; the result's `prints` stay the record. Lines show hidden
   * values as the records do (stand-ins, see marks.ts). What it throws is ignored.
   */
  onPrint?: (line: string) => void;
  /**
   * Told each tool call when it starts (`done` false: name and arguments as recorded) and when it
   * ends (`done` true: the same record with its duration and error, if any). What it throws is ignored.
   */
  onToolCall?: (call: ToolCallRecord, done: boolean) => void;
}

export type Outcome = "value" | "return" | "fail";

export interface EvalSuccess {
  ok: true;
  /** The result as plain JS data. */
  value: unknown;
  /** The result as a PTC-Lisp value (print it with `print`). */
  lisp: Value;
  /** "return" or "fail" when the program ended with (return v) or (fail reason). */
  outcome: Outcome;
  prints: string[];
  memory: Memory;
  defs: Definition[];
  toolCalls: ToolCallRecord[];
  stats: EvalStats;
  /** What this evaluation marked as hidden context, when the run has any. */
  marks?: Marks;
  /** What this and earlier evaluations handed tools of what they computed from hidden context: the next evaluation's `handed`. */
  handed?: readonly HandedText[];
}

export interface EvalFailure {
  ok: false;
  error: ErrorInfo;
  prints: string[];
  /** Memory as it was before the evaluation: a failed program changes nothing. */
  memory: Memory;
  toolCalls: ToolCallRecord[];
  stats: EvalStats;
  marks?: Marks;
  /** As `EvalSuccess.handed`: the calls a failed program made did happen. */
  handed?: readonly HandedText[];
}

export type EvalResult = EvalSuccess | EvalFailure;

export interface EvalStats {
  /** Fuel spent by the whole run, tool calls and all. */
  fuelUsed: number;
  durationMs: number;
}

const EMPTY_MEMORY: Memory = new Map();

interface CompiledForm {
  code: AsyncCode;
  frameSize: number;
  loc: SourceLoc;
}

function collectDefs(forms: Form[], into: Set<string>): void {
  for (const f of forms) {
    if (f.type === "list" && f.items.length > 1) {
      const [head, name] = f.items;
      if (head.type === "symbol" && /^(def|defn|defn-|defonce|declare)$/.test(head.name)) {
        for (const n of head.name === "declare" ? f.items.slice(1) : [name]) if (n.type === "symbol") into.add(n.name);
      }
    }
    if ("items" in f) collectDefs(f.items, into);
  }
}

/** Checks every tool spec before anything runs, so a bad one is named here, not at its first call. */
function normalizeTools(tools: EvaluateOptions["tools"]): Map<string, ToolSpec> {
  const out = new Map<string, ToolSpec>();
  if (tools === undefined) return out;
  if (typeof tools !== "object" || tools === null) throw new LispError("value_error", "tools must be an object of name → function or { run }");
  let entries: [string, ToolFn | ToolSpec][];
  try {
    entries = Object.entries(tools);
  } catch (e) {
    throw unreadable(e, "tools");
  }
  for (const [name, t] of entries) {
    try {
      out.set(name, toolSpec(name, t));
    } catch (e) {
      throw unreadable(e, `tool/${name}`);
    }
  }
  return out;
}

/** One tool of `tools`, checked. */
function toolSpec(name: string, t: ToolFn | ToolSpec): ToolSpec {
  const spec = typeof t === "function" ? { run: t } : t;
  const bad = (why: string): never => {
    throw new LispError("value_error", `tool/${name} ${why}`);
  };
  if (typeof spec !== "object" || spec === null) bad("must be a function or a { run } object");
  if (typeof spec.run !== "function") bad("has no run function");
  if (spec.params !== undefined && !(Array.isArray(spec.params) && spec.params.every((p) => typeof p === "string"))) bad("params must be an array of parameter names");
  if (spec.timeoutMs !== undefined && !(typeof spec.timeoutMs === "number" && spec.timeoutMs > 0)) bad(`timeoutMs must be a positive number, got ${String(spec.timeoutMs)}`);
  if (spec.maxCalls !== undefined && !(Number.isInteger(spec.maxCalls) && spec.maxCalls > 0)) bad(`maxCalls must be a positive integer, got ${String(spec.maxCalls)}`);
  return spec;
}

/** A budget for a walk inside the run: its fuel and clock; `commit` charges what it spent. */
function runBudget(state: RunState, deadline = state.deadline, late?: () => LispError): Budget & { commit(): void } {
  const b = new Budget(state.limits, Math.max(0, state.fuel), deadline, state.now, late);
  return Object.assign(b, { commit: () => void (state.fuel = b.fuel) });
}

/** The context as the program reads it, and as a tool's answer is searched for hidden context in. */
interface ContextHost extends DataHost {
  /**
   * The hidden texts a tool's result or message sends back (`sentBackSearch`), with their
   * origins; the keys it quotes are read now, so marked.
   */
  sentBack(result: Value | undefined, message?: string): readonly SentBack[];
  /** Marks each record of hidden context a tool's result holds (a host's client returning the `_card` object), as public context's are. */
  sharedRecords(result: Value): void;
}

const NOTHING_SENT_BACK: readonly SentBack[] = [];

function dataHost(given: EvaluateOptions["ctx"], limits: Limits, marks: Marks | null, callers: EvaluateOptions["callerHidden"]): ContextHost | null {
  // A run without context of its own whose callers' tools may still quote theirs reads an empty one.
  const ctx = given ?? (marks !== null && callers !== undefined ? {} : undefined);
  if (!ctx) return null;
  const cache = new Map<string, Value>();
  const convert = (k: string, budget: Budget): Value => (Object.hasOwn(ctx, k) ? toLisp(contextValue(ctx, k), limits.maxNestingDepth, 0, `data/${k}`, budget) : null);
  const search = marks === null ? null : sentBackSearch(ctx, limits, () => marks, cache, callers);
  // Hidden keys converted for the records they hold, before the program read them, each with the
  // host value it was converted from: kept for the program's read while the host still holds it.
  const unread = new Map<string, readonly [from: unknown, v: Value]>();
  let recordsRead: HiddenRecords | undefined;
  let firstRecords: HiddenRecords | undefined;
  // The hidden keys' host values when indexed, with their first leaves, and the tool calls made by
  // then: a tool may renew one (`_card` replaced, the public `profile` holding the new card) before
  // the next public read, or edit it in place (`card.cvv = "999"`).
  let indexed: unknown[] = [];
  let indexedLeaves: Array<readonly string[]> = [];
  let indexedAt = 0;
  // The callers' too: a host tool the runs share may renew or edit theirs.
  const sources = [ctx, ...(callers ?? [])];
  const hiddenNow = (): unknown[] => sources.flatMap((from) => Object.keys(from).filter(isHiddenKey).map((k) => valueOf(from, k)));
  const renewed = (): boolean => {
    const now = hiddenNow();
    return now.length !== indexed.length || now.some((v, i) => v !== indexed[i] || !sameTexts(firstLeaves(v), indexedLeaves[i]));
  };
  const records = (): HiddenRecords => {
    if (recordsRead !== undefined && current.toolCalls === indexedAt) return recordsRead;
    const calls = current.toolCalls;
    if (recordsRead !== undefined && !renewed()) {
      indexedAt = calls;
      return recordsRead;
    }
    indexed = hiddenNow();
    indexedLeaves = indexed.map(firstLeaves);
    indexedAt = calls;
    const now = hiddenRecords(ctx, (k, from) => {
      const v = toLisp(from, limits.maxNestingDepth, 0, `data/${k}`, new Budget(limits));
      unread.set(k, [from, v]);
      return v;
    }, callers);
    // The records the program began with stay found (the worker's copy of `profile` holds the card
    // `_card` held before a tool renewed it), as the sent-back search keeps the first texts.
    firstRecords ??= now;
    return (recordsRead = firstRecords === now ? now : firstRecords.and(now));
  };
  const host: ContextHost = {
    has: (k) => Object.hasOwn(ctx, k),
    keys: () => Object.keys(ctx),
    get(k) {
      let v = cache.get(k);
      if (v !== undefined) return v;
      const early = unread.get(k);
      // Converted before a tool renewed the key, it is read again (it gave the old card).
      if (early !== undefined && early[0] === valueOf(ctx, k)) v = early[1];
      else {
        // Read while the program runs: the conversion spends its fuel and its time.
        const budget = runBudget(current, current.deadline, () => readTimeout(k, current.limits.timeoutMs));
        try {
          v = convert(k, budget);
        } finally {
          budget.commit();
        }
      }
      // Marking it spends the run's fuel and clock too (after the commit, which sets the fuel).
      if (marks !== null) {
        if (isHiddenKey(k)) marks.hidden(k, v);
        else if (search !== null) notePublic(v, marks, search, records());
      }
      cache.set(k, v);
      return v;
    },
    sentBack: (result, message) => search?.(result, message) ?? NOTHING_SENT_BACK,
    sharedRecords(result) {
      if (marks !== null) for (const [record, key] of records().find(result)) marks.hidden(key, record);
    },
  };
  return host;
}

/** Turns (tool/x), (tool/x {:a 1}), (tool/x :a 1 :b 2) and (tool/x "q" 5) into one argument map. */
function toolArgs(name: string, args: Value, spec: ToolSpec, budget: Budget): Record<string, unknown> {
  const list: Value[] = args instanceof Vec ? args.toArray() : [args];
  // The tool gets its arguments only as host data: a key they would lose is an error here.
  const host = (v: Value): unknown => toHost(v, budget.limits.maxNestingDepth, budget, true);
  if (list.length === 0 || (list.length === 1 && list[0] === null)) return {};
  if (list.length === 1 && isMap(list[0])) return host(list[0]) as Record<string, unknown>;
  if (list.length % 2 === 0 && list.every((v, i) => i % 2 === 1 || v instanceof Keyword)) {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < list.length; i += 2) Object.defineProperty(o, (list[i] as Keyword).name, { value: host(list[i + 1]), enumerable: true, writable: true, configurable: true });
    return o;
  }
  if (list.some((v) => isMap(v))) {
    throw new LispError("type_error", `tool/${name} takes one map of arguments, got ${list.length} arguments including a map`, undefined, `merge them into one map: (tool/${name} {:a 1 :b 2})`);
  }
  const params = spec.params ?? [];
  if (list.length > params.length) {
    throw new LispError(
      "type_error",
      params.length === 0
        ? `tool/${name} takes a map of arguments, e.g. (tool/${name} {:key value})`
        : `tool/${name} takes at most ${params.length} positional argument${params.length === 1 ? "" : "s"} (${params.join(", ")}), got ${list.length}`,
    );
  }
  const o: Record<string, unknown> = {};
  list.forEach((v, i) => Object.defineProperty(o, params[i], { value: host(v), enumerable: true, writable: true, configurable: true }));
  return o;
}

const isLimit = (e: unknown): e is LispError => e instanceof LispError && (LIMIT_KINDS as readonly string[]).includes(e.kind);

/** Evaluates a PTC-Lisp program. Never throws: every failure is an `{ ok: false }` result. */
export function evaluate(source: string, options: EvaluateOptions = {}): Promise<EvalResult> {
  const refused = (error: ErrorInfo): EvalResult => ({ ok: false, error, prints: [], memory: givenMemory(options), toolCalls: [], stats: { fuelUsed: 0, durationMs: 0 } });
  // The host's own options are host code too (a getter, a Proxy, a clock or an iterator that
  // throws): what throws from them is a failed result, as every other failure is.
  const escaped = (e: unknown): EvalResult => refused(describeFailure(e, ""));
  try {
    const given = readOptions(options);
    if (typeof given === "string") return Promise.resolve(refused(toErrorInfo(new LispError("value_error", given), "")));
    const wrong = wrongInput(source, given);
    if (wrong !== null) return Promise.resolve(refused(toErrorInfo(new LispError("value_error", wrong), "")));
    const ctx = given.ctx === undefined ? undefined : readableContext(given.ctx);
    if (ctx === null) return Promise.resolve(refused(toErrorInfo(new LispError("value_error", `ctx must be an object of key → data, got ${UNLISTED_CONTEXT}`), "")));
    return evaluateWith(source, ctx === given.ctx ? given : { ...given, ctx }, null).catch(escaped);
  } catch (e) {
    return Promise.resolve(escaped(e));
  }
}

// Every option evaluate reads (the type makes the list complete).
const OPTION_NAMES = Object.keys({ ctx: 0, ctxJson: 0, callerHidden: 0, tools: 0, memory: 0, limits: 0, signal: 0, toolTimeoutMs: 0, clock: 0, isolation: 0, handed: 0, onPrint: 0, onToolCall: 0 } satisfies Record<keyof EvaluateOptions, 0>) as (keyof EvaluateOptions)[];

/**
 * The host's options as a plain object, each read once, here: a getter or a Proxy trap that
 * throws is named, without its message (host text, which may quote a secret). What is not an
 * object is returned as it is, for wrongInput to name.
 */
function readOptions(options: EvaluateOptions): EvaluateOptions | string {
  if (typeof options !== "object" || options === null) return options;
  const out: Record<string, unknown> = {};
  for (const name of OPTION_NAMES) {
    let value: unknown;
    try {
      value = options[name];
    } catch {
      return `options.${name} could not be read (reading it threw)`;
    }
    if (value !== undefined) out[name] = value;
  }
  return out as EvaluateOptions;
}

/** The memory a failed evaluation gives back: the caller's, when it can be read as one. */
function givenMemory(options: EvaluateOptions): Memory {
  try {
    return options.memory instanceof Map ? options.memory : EMPTY_MEMORY;
  } catch {
    return EMPTY_MEMORY;
  }
}

/** What is of the wrong type in a host's call (an untyped caller's), which would otherwise fail deep inside as a raw TypeError. */
function wrongInput(source: unknown, options: unknown): string | null {
  const type = (x: unknown): string => (x === null ? "null" : typeof x);
  if (typeof source !== "string") return `the source must be a string, got ${type(source)}`;
  if (typeof options !== "object" || options === null) return `the options must be an object, got ${type(options)}`;
  const { memory, clock, ctxJson, ctx, callerHidden, signal, toolTimeoutMs, handed } = options as Record<string, unknown>;
  if (ctx !== undefined) {
    const problem = notContext(ctx);
    if (problem !== null) return `ctx must be an object of key → data, got ${problem}`;
  }
  if (callerHidden !== undefined) {
    let problem: string | null | undefined;
    try {
      problem = Array.isArray(callerHidden) ? callerHidden.map(notContext).find((p) => p !== null) : type(callerHidden);
    } catch {
      // A revoked Proxy.
      problem = "one that cannot be read";
    }
    if (typeof problem === "string") return `callerHidden must be an array of objects of key → data, got ${problem}`;
  }
  if (signal !== undefined && !isAbortSignal(signal)) return "signal must be an AbortSignal";
  if (toolTimeoutMs !== undefined && !(typeof toolTimeoutMs === "number" && toolTimeoutMs > 0)) return `toolTimeoutMs must be a positive number (or Infinity), got ${String(toolTimeoutMs)}`;
  if (memory !== undefined && !(memory instanceof Map)) return `memory must be a Map of definitions (an EvalResult's memory), got ${type(memory)}`;
  if (memory !== undefined) {
    // Host data put in by hand would read as #unknown (a host function, in a worker, fail to be sent): only a value a run made is one.
    try {
      for (const [name, entry] of memory as Map<unknown, unknown>) {
        const value = typeof entry === "object" && entry !== null ? (entry as { value?: unknown }).value : undefined;
        const lisp = value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string" || (typeof value === "object" && isLispValue(value));
        if (!lisp) return `memory entry ${JSON.stringify(String(name))} is not a definition from an EvalResult's memory (or restoreMemory's)`;
      }
    } catch {
      // A Map subclass whose iterator (or an entry's getter) throws: named, without the host's text.
      return "options.memory could not be read (reading it threw)";
    }
  }
  if (clock !== undefined && typeof clock !== "function") return `clock must be a function returning milliseconds, got ${type(clock)}`;
  if (ctxJson !== undefined && typeof ctxJson !== "string") return `ctxJson must be a string of JSON, got ${type(ctxJson)}`;
  if (handed !== undefined && !isHandedList(handed)) return "handed must be what an EvalResult's handed holds (a list of [text, origin] pairs)";
  return null;
}

/** Whether a host's `handed` reads as `EvalResult.handed` does: searching for it, and marking what quotes it, then cannot fail. */
function isHandedList(x: unknown): x is HandedText[] {
  return (
    Array.isArray(x) &&
    x.every((e: unknown) => {
      if (!Array.isArray(e) || e.length !== 2 || typeof e[0] !== "string") return false;
      const o: unknown = e[1];
      return typeof o === "object" && o !== null && typeof (o as Origin).path === "string" && typeof (o as Origin).root === "string" && typeof (o as Origin).derived === "boolean";
    })
  );
}

/** What a ctx that is not an object of keys is, or null. */
function notContext(ctx: unknown): string | null {
  if (typeof ctx !== "object" || ctx === null) return ctx === null ? "null" : typeof ctx;
  try {
    return Array.isArray(ctx) ? "an array" : null;
  } catch {
    // A revoked Proxy.
    return "one that cannot be read";
  }
}

/**
 * `evaluate`, telling `sink.line` each line of output as it is written (stand-ins in place),
 * past the output limit too, in place of `options.onPrint`, and `sink.check` at each check of
 * the clock with the fuel used so far: the isolated mode's worker sends the lines to the host (in
 * batches it sends from the checks while the program computes) and shares the fuel with it, so
 * what a program printed and spent survives the worker being ended;
 * and `sink.read` once the context text (`ctxJson`) is read, so the host's hard stop can say which it ended.
 */
export async function evaluateWith(source: string, options: EvaluateOptions, sink: { line: (line: string) => void; check: (fuelUsed: number) => void; read?: () => void } | null): Promise<EvalResult> {
  if (options.isolation !== undefined && options.isolation !== "none") return isolated(source, options, options.isolation);
  const now = options.clock === undefined ? defaultClock : checkedClock(options.clock);
  const started = now();
  const given = options.memory ?? EMPTY_MEMORY;
  let memory = given;
  const toolCalls: ToolCallRecord[] = [];
  let fuelUsed = 0;
  let durationMs = 0;
  const stats = (): EvalStats => {
    try {
      durationMs = now() - started;
    } catch {
      // A clock that failed mid-run: the run's result says so; its duration is the last one read.
    }
    return { fuelUsed, durationMs };
  };
  let limits: Limits | null = null;
  // Context given as text is read first, and the time that takes is the run's.
  let ctx = options.ctx;
  let readError: unknown = null;
  let readMs = 0;
  try {
    limits = resolveLimits(options.limits);
    const { timeoutMs } = limits;
    const late = (): void => {
      if (now() - started > timeoutMs) throw contextJsonTimeout(timeoutMs);
    };
    if (options.ctxJson !== undefined) ctx = parseContextJson(options.ctxJson, ctx, limits, late);
  } catch (e) {
    readError = e;
  }
  if (options.ctxJson !== undefined) {
    readMs = now() - started;
    sink?.read?.();
  }
  const hidden = meetsHidden(ctx, given, options.callerHidden);
  // Functions compiled by a run without hidden context would not mark what they compute from it.
  if (readError === null && hidden) {
    const stale = unmarked(given);
    if (stale.size > 0) {
      try {
        const again = againOptions([...normalizeTools(options.tools)].map(([name, t]) => ({ name, params: t.params })), { ctx, limits: options.limits });
        memory = await defineAgain(entriesOf(given, stale), again, evaluate, "it was defined by a run without hidden context and could not be defined again for this one; define it again");
      } catch (e) {
        readError = e;
      }
    }
  }
  // Marking what memory holds from hidden context walks it: within the time limit, as reading
  // the source is, and its fuel is charged to the run.
  const restoring = limits === null ? undefined : new Budget(limits, limits.maxFuel, started + limits.timeoutMs, now);
  let marks: Marks | null = null;
  if (hidden) {
    marks = new Marks();
    if (options.handed !== undefined) marks.handedBefore(options.handed);
    try {
      restoreMarks(marks, memory, restoring);
    } catch (e) {
      readError ??= e;
    }
  }
  // Earlier evaluations' texts pass through a run that meets no hidden context.
  const handedAfter = (): readonly HandedText[] | undefined => {
    const all = marks === null ? options.handed : marks.handed;
    return all === undefined || all.length === 0 ? undefined : [...all];
  };
  // A failed run leaves the caller's memory as it was given.
  const failure = (e: unknown, prints: string[] = []): EvalFailure => {
    const out: EvalFailure = { ok: false, error: describeFailure(e, source), prints, memory: given, toolCalls, stats: stats() };
    const handed = handedAfter();
    if (handed !== undefined) out.handed = handed;
    if (marks !== null) {
      out.marks = marks;
      out.error.message = marks.hideText(out.error.message);
      if (out.error.hint !== undefined) out.error.hint = marks.hideText(out.error.hint);
    }
    return out;
  };

  let program: Program;
  let data: ContextHost | null;
  let tools = new Map<string, ToolSpec>();
  // What the analyzer checks tool names against; the runtime host below answers the same.
  const toolNames = { has: (n: string) => tools.has(n), names: () => [...tools.keys()] };
  try {
    if (readError !== null || limits === null) throw readError;
    tools = normalizeTools(options.tools);
    if (readMs > limits.timeoutMs) throw contextJsonTimeout(limits.timeoutMs);
    data = dataHost(ctx, limits, marks, options.callerHidden);
    const { timeoutMs } = limits;
    const checkClock = (): void => {
      if (now() - started > timeoutMs) throw timeoutError(timeoutMs);
    };
    program = prepare(source, memory, toolNames, data, limits, tools.size > 0, marks, checkClock);
  } catch (e) {
    return failure(e);
  }
  // Ends the tool calls still in flight when the evaluation ends, whatever ended it. Made with
  // the first call or wait: a program that never waits pays nothing for it.
  let halt: ReturnType<typeof makeHalt> | null = null;
  const onAbort = (): void => halt?.abort();
  const halting = (): ReturnType<typeof makeHalt> => {
    if (halt !== null) return halt;
    halt = makeHalt();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    if (options.signal?.aborted) halt.abort();
    return halt;
  };
  const callsOf = new Map<string, number>();
  const onToolCall = quietly(options.onToolCall);
  const toolHost: ToolHost = {
    ...toolNames,
    call(name, args, loc) {
      if (++state.toolCalls > limits.maxToolCalls) {
        throw new LispError("tool_limit_exceeded", `more than ${limits.maxToolCalls} tool calls in one program`, loc, "call tools for fewer items per program");
      }
      const spec = tools.get(name) as ToolSpec;
      const made = (callsOf.get(name) ?? 0) + 1;
      if (spec.maxCalls !== undefined && made > spec.maxCalls) {
        throw new LispError("tool_limit_exceeded", `tool/${name} may be called at most ${spec.maxCalls} time${spec.maxCalls === 1 ? "" : "s"} per program`, loc, "call it for fewer items, or reuse an earlier result");
      }
      // Argument shape mistakes are the program's own errors, reported where the call is.
      const out = runBudget(state);
      let hostArgs: Record<string, unknown>;
      try {
        hostArgs = toolArgs(name, args, spec, out);
      } finally {
        out.commit();
      }
      callsOf.set(name, made);
      marks?.gave(hostArgs);
      // What the trace and the model see: marked arguments as stand-ins; the tool gets the values.
      // The second walk is bounded like the first but not charged: it is the host's bookkeeping.
      const shown = marks === null || marks.isEmpty ? hostArgs : toolArgs(name, marks.hide(args), spec, runBudget(state));
      const record: ToolCallRecord = { name, args: shown, size: crossedSize(out), durationMs: 0 };
      toolCalls.push(record);
      const report = reporter(record, spec, onToolCall);
      const t0 = now();
      let resultHidden: boolean | ReadonlySet<string> = false;
      // Text the host wrote about the call (its error message, its edit of the arguments) may
      // quote a hidden argument back, however short (`cvv 737 wrong`), or hidden context it holds.
      const shownText = (text: string): string => {
        const back = data?.sentBack(undefined, text);
        return marks === null ? text : marks.hideBareIn(marks.hideEchoes(args, marks.hideText(text, true), back), hostArgs);
      };
      const call: ToolCallInfo = { hidden: shown === hostArgs ? [] : hiddenKeys(hostArgs, shown), hideResult: (parts) => void (resultHidden = parts === undefined ? true : new Set(parts)), ranWith: (given) => ranWith(record, given, shownText), size: record.size, ...(report.answering === undefined ? {} : { answering: report.answering }) };
      return settle(spec, hostArgs, call, halting(), spec.timeoutMs ?? options.toolTimeoutMs)
        .then((answer) => convertResult(state, answer.value, name, record))
        .then(
          (value) => {
            // A tool's result is not computed from its arguments by the interpreter; only a
            // string that echoes a marked one (a token sent back, in any case) is hidden.
            if (resultHidden === true) marks?.taint(value, args);
            else if (resultHidden !== false) marks?.taintParts(value, args, resultHidden);
            marks?.echoed(args, value, data?.sentBack(value));
            data?.sharedRecords(value);
            // Within the run's own limits (a host may raise them), not charged: the host's bookkeeping.
            record.result = toHost(marks === null ? value : marks.hide(value), limits.maxNestingDepth, new Budget(limits));
            keepValue(record, value);
            record.durationMs = now() - t0;
            report.end();
            return value;
          },
          (thrown: unknown) => {
            const e = ours(thrown);
            const message = e instanceof ToolTimeout ? `no answer within ${e.ms} ms` : thrownMessage(thrown);
            record.error = record.held === true ? HELD_CALL : toolMessage(shownText(message));
            if (isLimit(e)) Object.assign(record, limitRecord(e));
            record.durationMs = now() - t0;
            report.end();
            if (options.signal?.aborted) throw abortedError();
            // The host stopped the program at this call (a run pausing for approval): no try catches it.
            if (e instanceof LispError && e.kind === "aborted") throw e;
            // A result over the run's limits stops the run as any limit does.
            if (isLimit(e)) throw Object.assign(e, { loc: e.loc ?? loc });
            if (e instanceof ToolTimeout) {
              throw new LispError("tool_timeout", `tool/${name} gave no answer within ${e.ms} ms; the call was abandoned and anything it returns later is ignored`, loc, "call it with less work, or handle the timeout with try/catch");
            }
            // The recorded message: a hidden value it quotes is a stand-in, in (ex-message e) too.
            throw new LispError("tool_error", `tool/${name} failed: ${record.error}`, loc, "check the arguments, or handle the failure with try/catch");
          },
        );
    },
  };
  const state: RunState = new RunState(limits, envFrom(memory), tools.size > 0 ? toolHost : null, data, options.signal, program.suspendable ? compileArityAsync : null, now, started);
  if (restoring !== undefined) state.fuel -= limits.maxFuel - restoring.fuel;
  state.marks = marks;
  state.onLine = sink?.line ?? whileWhole(state.out, quietly(options.onPrint));
  state.onCheck = sink?.check ?? null;

  let outcome: Outcome = "value";
  let result: Value = null;
  // Where the result was made, for an error in its crossing out.
  let resultLoc: SourceLoc | undefined;
  let error: unknown = null;
  const prev = activate(state);
  try {
    for (const f of program.forms) {
      resultLoc = f.loc;
      const v = f.code(new Array(f.frameSize));
      if (!isPending(v)) {
        result = v;
        continue;
      }
      result = await waitFor(state, v, halting());
      // This function goes on a microtask after waitFor returned: another evaluation in this
      // thread may have run a stretch (and activated its state) in between.
      activate(state);
    }
  } catch (e) {
    if (e instanceof ReturnSignal) {
      outcome = "return";
      result = e.value;
      resultLoc = e.loc;
    } else if (e instanceof FailSignal) {
      outcome = "fail";
      result = e.value;
      resultLoc = e.loc;
    } else {
      error = e;
    }
  } finally {
    state.stopped = true;
    // (Set inside halting(), which the compiler's narrowing does not see.)
    const made = halt as ReturnType<typeof makeHalt> | null;
    if (made !== null) {
      options.signal?.removeEventListener("abort", onAbort);
      made.abort();
    }
    activate(prev);
    fuelUsed = spentBy(state);
  }
  if (state.pendingLine !== "") output(state, state.pendingLine, state.pendingElided);
  const prints = state.out.snapshot().lines;
  if (error !== null) return failure(options.signal?.aborted ? abortedError() : error, prints);
  try {
    const ok = success(result, outcome, state, memory, prints, toolCalls, stats(), marks);
    if (marks !== null) ok.marks = marks;
    const handed = handedAfter();
    if (handed !== undefined) ok.handed = handed;
    return ok;
  } catch (e) {
    return failure(e instanceof LispError && e.loc === undefined ? Object.assign(e, { loc: resultLoc }) : e, prints);
  }
}

/**
 * A tool's result as a value. It arrives while the run waits, so the conversion gets the time
 * the run had left when it began to wait, and the time it takes is counted against the run.
 */
function convertResult(state: RunState, raw: unknown, name: string, record: ToolCallRecord): Value {
  if (Converted.is(raw)) {
    state.fuel -= raw.steps;
    state.deadline -= raw.ms;
    if (state.fuel < 0) throw fuelExhausted(state.limits);
    return raw.value;
  }
  const t0 = performance.now();
  const budget = runBudget(state, t0 + Math.max(0, state.deadline - state.lastActive));
  try {
    const value = toLisp(raw, state.limits.maxNestingDepth, 0, `the result of tool/${name}`, budget);
    record.size = (record.size ?? 0) + crossedSize(budget);
    return value;
  } finally {
    budget.commit();
    state.deadline -= performance.now() - t0;
  }
}

async function isolated(source: string, options: EvaluateOptions, isolation: Isolation): Promise<EvalResult> {
  let mode: ResolvedIsolation;
  try {
    mode = resolveIsolation(isolation);
  } catch (e) {
    return { ok: false, error: describeFailure(e, source), prints: [], memory: options.memory ?? EMPTY_MEMORY, toolCalls: [], stats: { fuelUsed: 0, durationMs: 0 } };
  }
  // An injected clock is a caller's own (often virtual) time, which cannot drive a worker's hard
  // stop: such a run stays in process, where that clock is the only one.
  if (mode.mode === "none" || options.clock !== undefined) return evaluate(source, { ...options, isolation: "none" });
  let tools: Map<string, ToolSpec>;
  try {
    tools = normalizeTools(options.tools);
  } catch (e) {
    return { ok: false, error: describeFailure(e, source), prints: [], memory: options.memory ?? EMPTY_MEMORY, toolCalls: [], stats: { fuelUsed: 0, durationMs: 0 } };
  }
  return evaluateIsolated(source, options, tools, mode.maxHeapMb);
}

/** Waits for the rest of a top-level form, which goes on as its tool results come in. */
async function waitFor(state: RunState, p: Promise<Value>, halt: Halt): Promise<Value> {
  state.lastActive = state.now();
  try {
    return await Promise.race([p, halt.aborted]);
  } finally {
    state.deadline += state.now() - state.lastActive;
  }
}

interface Program {
  forms: CompiledForm[];
  /** Compiled to wait for tools: the program, or a function it can reach, can call one. */
  suspendable: boolean;
}

/**
 * Gives the marks of an evaluation that may meet hidden context (see meetsHidden) those of the
 * marked values in memory, each walk spending `budget`; a run that cannot meet any has no marks,
 * and builtins run unwrapped. A program that reads no hidden key is still compiled with marking
 * builtins in such a run: a function it defines may be given a hidden value in a later turn.
 */
function restoreMarks(marks: Marks, memory: Memory, budget: Budget | undefined): void {
  for (const entry of memory.values()) if (entry.hidden !== undefined) marks.restore(entry.value, entry.hidden, budget);
}

// Values defined by a run that may meet hidden context (its code compiled with marking builtins),
// or looked at and found to hold no function: what they compute is marked in any run.
const marking = new WeakSet<object>();

/**
 * The definitions in memory holding a function compiled by a run that could not meet hidden
 * context: its builtins unwrapped, it would compute from a hidden value without marking the
 * result. Each value is looked at once.
 */
function unmarked(memory: Memory): ReadonlySet<string> {
  let out: Set<string> | undefined;
  for (const [name, e] of memory) {
    const v = e.value;
    if (typeof v !== "object" || v === null || marking.has(v)) continue;
    if (holdsFunction(v, computes)) (out ??= new Set()).add(name);
    else marking.add(v);
  }
  return out ?? NONE;
}

const NONE: ReadonlySet<string> = new Set();

/** A function that computes (one left in a worker only refuses to be called). */
const computes = (f: Fn): boolean => !(f instanceof RemoteFn);

/** Memory's entries in order, those named in `again` without their value (to be made again). */
function entriesOf(memory: Memory, again: ReadonlySet<string>): Entry[] {
  const out: Entry[] = [];
  for (const [name, e] of memory) out.push(again.has(name) ? { name, doc: e.doc, source: e.source, hidden: e.hidden } : { ...e, name });
  return out;
}

function prepare(source: string, memory: Memory, tools: AnalyzeEnv["tools"], data: DataHost | null, limits: Limits, hasTools: boolean, marks: Marks | null, checkClock: () => void): Program {
  // Checked before reading, so a huge literal costs nothing to refuse.
  if (source.length > limits.maxSourceChars) {
    throw new LispError("source_too_large", `the program is ${source.length} characters long, over the limit of ${limits.maxSourceChars}`, undefined, "pass large data through the context (data/...) or a tool, not as a literal in the program", "read");
  }
  const forms = read(source, limits.maxNestingDepth, limits.maxSourceForms);
  // A program within the source limits can take a second to read: that is the run's time.
  checkClock();
  const globals = new Set<string>(memory.keys());
  collectDefs(forms, globals);
  const analyzer = new Analyzer({
    source,
    globals,
    tools,
    data,
    maxRegexPatternLength: limits.maxRegexPatternLength,
    maxNestingDepth: limits.maxNestingDepth,
    checkClock,
    ...(marks === null ? {} : { builtins: Marks.builtin }),
  });
  const analyzed = forms.map((form) => expanding(form, () => analyzer.analyzeTop(form)));
  // Pure programs keep the synchronous closures; only one that can reach a tool (directly, or
  // through a function kept in memory) is compiled to wait for one.
  const suspendable = hasTools && (analyzed.some((a, i) => expanding(forms[i], () => usesTools(a.node))) || holdsFunctions(memory));
  const forms2 = analyzed.map(({ node, scope }, i) => ({ code: expanding(forms[i], () => (suspendable ? compileAsync(node) : compile(node))), frameSize: scope.captures.length + scope.slotCount, loc: forms[i].loc }));
  checkClock();
  return { forms: forms2, suspendable };
}

/**
 * Runs a walk over a top-level form's expansion. A long ->, some->, cond or for is flat in the
 * source, within the reader's nesting limit, but nests one level per step once expanded: past
 * the host stack, that is an error at the form, not an overflow with no place.
 */
function expanding<T>(form: Form, walk: () => T): T {
  try {
    return walk();
  } catch (e) {
    if (!isStackOverflow(e)) throw e;
    throw new LispError("nesting_too_deep", "this form nests too deeply once expanded (a very long ->, some->, cond, condp, for or doseq)", form.loc, "split it into steps: bind intermediate results with let", "analysis");
  }
}

/** Whether memory holds a function anywhere (it may call a tool); past a budget, assume so. */
function holdsFunctions(memory: Memory): boolean {
  if (memory.size === 0) return false;
  return anyHoldsFunction(memoryValues(memory), undefined, { left: 10_000 });
}

function* memoryValues(memory: Memory): Iterable<Value> {
  for (const entry of memory.values()) yield entry.value;
}

function envFrom(memory: Memory): GlobalEnv {
  const env = new GlobalEnv();
  for (const [name, entry] of memory) {
    const c = env.cell(name);
    c.value = entry.value;
    c.bound = true;
    c.doc = entry.doc;
    c.source = entry.source;
  }
  return env;
}

/**
 * A tool's answer, or a rejection as soon as the evaluation ends (`halt`: aborted by the host,
 * or over) or the call takes longer than `timeoutMs`: a tool that never answers cannot hold the
 * evaluation. The tool's own signal fires too, so it can stop its work.
 */
function settle(spec: ToolSpec, args: Record<string, unknown>, call: ToolCallInfo, halt: Halt, timeoutMs: number | undefined): Promise<{ value: unknown }> {
  if (halt.signal.aborted) return Promise.reject(new Error("aborted"));
  // Only a call with a timeout of its own needs a signal of its own; the others get the
  // evaluation's, which fires when it is aborted or over (an AbortController per call costs).
  const own = timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS ? new AbortController() : null;
  return new Promise<{ value: unknown }>((resolve, reject) => {
    const stop = (why: string): void => {
      own?.abort();
      reject(new Error(why));
    };
    const onHalt = (): void => stop("aborted");
    const timer = own !== null ? setTimeout(() => (own.abort(), reject(new ToolTimeout(timeoutMs as number))), timeoutMs) : undefined;
    halt.stops.add(onHalt);
    Promise.resolve()
      .then(() => boxed(spec.run(args, own !== null ? own.signal : halt.signal, call)))
      .then(resolve, reject)
      .finally(() => {
        if (timer !== undefined) clearTimeout(timer);
        halt.stops.delete(onHalt);
      });
  });
}

/** Ends the calls in flight: one listener on the signal however many calls there are. */
interface Halt {
  signal: AbortSignal;
  stops: Set<() => void>;
  /** Never resolves; rejects with `aborted` once halted, so a wait for tools ends at once. */
  aborted: Promise<never>;
}

function makeHalt(): Halt & { abort(): void } {
  const ac = new AbortController();
  // Every call in flight may listen (a tool passing it to fetch, the worker's host call): a pmap
  // of eleven would set off Node's leak warning. They are bounded by maxToolCalls, not leaked.
  setMaxListeners(0, ac.signal);
  const stops = new Set<() => void>();
  let reject: (e: unknown) => void = () => undefined;
  const aborted = new Promise<never>((_, no) => (reject = no));
  aborted.catch(() => undefined);
  ac.signal.addEventListener("abort", () => {
    for (const stop of [...stops]) stop();
    reject(abortedError());
  });
  return { signal: ac.signal, stops, aborted, abort: () => ac.abort() };
}

function success(result: Value, outcome: Outcome, state: RunState, memory: Memory, prints: string[], toolCalls: ToolCallRecord[], stats: EvalStats, marks: Marks | null): EvalSuccess {
  const env = state.env;
  const next = new Map(memory);
  const defs: Definition[] = [];
  for (const name of env.defined) {
    const c = env.cell(name);
    const hidden = marks?.keep(c.value);
    const entry: MemoryEntry = hidden === undefined ? { value: c.value, doc: c.doc, source: c.source } : { value: c.value, doc: c.doc, source: c.source, hidden };
    // Memory keeps the order of last definition: a definition made again from its source then
    // finds what it read while it was made before it (define-again.ts).
    next.delete(name);
    next.set(name, entry);
    if (marks !== null && typeof c.value === "object" && c.value !== null) marking.add(c.value);
    defs.push({ name, doc: c.doc, value: c.value, source: c.source });
  }
  // The result crosses out within what the run had left: its fuel, its clock, the size limit.
  const value = toHost(result, state.limits.maxNestingDepth, runBudget(state));
  return { ok: true, value, lisp: result, outcome, prints, memory: next, defs, toolCalls, stats };
}

/**
 * A host's clock whose every reading is checked: one that is not a finite number (NaN, text,
 * undefined, Infinity) makes each comparison with a deadline false, which would leave the run
 * with no time limit at all; it stops the run instead (internal_error, which no try catches).
 */
function checkedClock(clock: () => number): () => number {
  return () => {
    let t: unknown;
    try {
      t = clock();
    } catch {
      // Named without its message: host text, which may quote a secret.
      throw new LispError("internal_error", "the host's clock threw: the time limit cannot be kept");
    }
    if (typeof t === "number" && Number.isFinite(t)) return t;
    const got = typeof t === "number" ? String(t) : t === null ? "null" : typeof t;
    throw new LispError("internal_error", `the host's clock returned ${got}, not a finite number of milliseconds: the time limit cannot be kept`);
  };
}

function describeFailure(e: unknown, source: string): ErrorInfo {
  if (e instanceof LispError) return toErrorInfo(e, source);
  if (isStackOverflow(e)) return toErrorInfo(stackOverflow(), source);
  const message = e instanceof Error ? e.message : e instanceof Suspend ? "a tool call was reached where the program could not wait for it" : String(e);
  return toErrorInfo(new LispError("internal_error", `internal error: ${message}`), source);
}

const sortedCall: SortedCall = (v) => {
  const order = sortOrder(v);
  const set = isSet(v);
  if (order === compare) return set ? "sorted-set" : "sorted-map";
  if (order === compareDescending) return set ? "sorted-set-by >" : "sorted-map-by >";
  return undefined;
};

// The most `print` writes: past it, a value (shared structure can unfold without end) is an error.
const PRINT_MAX_CHARS = 10_000_000;

/**
 * EDN text of a value: a PTC-Lisp value as is, plain JS data after conversion. Throws a LispError
 * past 10M characters. With `readable`, text a program reads back as the same value: a keyword
 * EDN cannot spell (`:first name`, from a JSON key) is written `(keyword "first name")`, and a
 * sorted map or set in compare's order, either way round, as the call that makes it
 * (`(sorted-set-by > 3 2)`), so it reads back sorted.
 */
export function print(value: unknown, readable = false): string {
  // A value of the language comes back from toLisp as it is; host data is converted, and what is
  // not plain data (a Buffer, a class instance) refused, at the top as inside.
  const v = toLisp(value);
  try {
    return printChecked(v, true, PRINT_MAX_CHARS, Infinity, undefined, readable ? sortedCall : undefined);
  } catch (e) {
    if (!(e instanceof PrintOverflow)) throw e;
    throw new LispError("string_too_large", `the value prints to more than ${PRINT_MAX_CHARS} characters`);
  }
}

export type { SourceLoc };
