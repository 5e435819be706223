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
import { abortedError, LispError, thrownMessage, toErrorInfo, type ErrorInfo, type SourceLoc } from "./errors.js";
import type { AsyncCode } from "./fn.js";
import type { Form } from "./forms.js";
import { toHost, toLisp } from "./interop.js";
import { resolveLimits, type Limits } from "./limits.js";
import { read } from "./reader.js";
import { activate, GlobalEnv, RunState, type DataHost, type ToolHost } from "./runtime.js";
import { compileAsync, usesTools } from "./compile-async.js";
import { isPending, Suspend } from "./suspend.js";
import { FailSignal, ReturnSignal } from "./signals.js";
import { Fn, Keyword, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";
import { printChecked } from "./printer.js";
import { resolveIsolation, type Isolation, type ResolvedIsolation } from "./isolate/options.js";
import { evaluateIsolated } from "./isolate/run.js";

/** A host tool: receives a plain argument object, returns plain data (or a promise of it). */
export type ToolFn = (args: Record<string, unknown>, signal: AbortSignal) => unknown;

export interface ToolSpec {
  run: ToolFn;
  /** Parameter names in order, so (tool/name a b) can pass positional arguments. */
  params?: readonly string[];
  /** Longest a call may take, in ms (default: the evaluation's `toolTimeoutMs`). */
  timeoutMs?: number;
  /** Calls of this tool one program may make (default: unlimited, within `maxToolCalls`). */
  maxCalls?: number;
}

export interface MemoryEntry {
  readonly value: Value;
  readonly doc?: string;
  /** Source of the defining form. */
  readonly source?: string;
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
  args: unknown;
  result?: unknown;
  /** The result as the program received it: a definition holding this very value holds the whole result. */
  value?: Value;
  error?: string;
  durationMs: number;
}

export interface EvaluateOptions {
  /** Context readable as data/key. Plain JSON-like data; object keys become keywords. */
  ctx?: Readonly<Record<string, unknown>>;
  tools?: Readonly<Record<string, ToolFn | ToolSpec>>;
  memory?: Memory;
  limits?: Partial<Limits>;
  /** Aborting ends the evaluation with `aborted` at once, even while a tool has not answered. */
  signal?: AbortSignal;
  /** Longest a tool call may take, in ms, for tools that set none. Default: no limit. */
  toolTimeoutMs?: number;
  /**
   * Where the program runs. "none" (the default): in this thread, fastest, but a program stalls
   * the event loop while it computes and only the interpreter's own checks stop it. "worker":
   * in a pooled worker thread with a hard heap cap, ended at once by abort or a time limit
   * overrun; tools still run here. See the README's Limits section.
   */
  isolation?: Isolation;
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
}

export interface EvalFailure {
  ok: false;
  error: ErrorInfo;
  prints: string[];
  /** Memory as it was before the evaluation: a failed program changes nothing. */
  memory: Memory;
  toolCalls: ToolCallRecord[];
  stats: EvalStats;
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

function normalizeTools(tools: EvaluateOptions["tools"]): Map<string, ToolSpec> {
  const out = new Map<string, ToolSpec>();
  for (const [name, t] of Object.entries(tools ?? {})) out.set(name, typeof t === "function" ? { run: t } : t);
  return out;
}

function dataHost(ctx: EvaluateOptions["ctx"], maxDepth: number): DataHost | null {
  if (!ctx) return null;
  const cache = new Map<string, Value>();
  return {
    has: (k) => Object.hasOwn(ctx, k),
    keys: () => Object.keys(ctx),
    get(k) {
      let v = cache.get(k);
      if (v === undefined) {
        v = Object.hasOwn(ctx, k) ? toLisp(ctx[k], maxDepth, 0, `data/${k}`) : null;
        cache.set(k, v);
      }
      return v;
    },
  };
}

/** Turns (tool/x), (tool/x {:a 1}), (tool/x :a 1 :b 2) and (tool/x "q" 5) into one argument map. */
function toolArgs(name: string, args: Value, spec: ToolSpec): Record<string, unknown> {
  const list: Value[] = args instanceof Vec ? args.toArray() : [args];
  if (list.length === 0 || (list.length === 1 && list[0] === null)) return {};
  if (list.length === 1 && isMap(list[0])) return toHost(list[0]) as Record<string, unknown>;
  if (list.length % 2 === 0 && list.every((v, i) => i % 2 === 1 || v instanceof Keyword)) {
    const o: Record<string, unknown> = {};
    for (let i = 0; i < list.length; i += 2) Object.defineProperty(o, (list[i] as Keyword).name, { value: toHost(list[i + 1]), enumerable: true, writable: true, configurable: true });
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
  list.forEach((v, i) => Object.defineProperty(o, params[i], { value: toHost(v), enumerable: true, writable: true, configurable: true }));
  return o;
}


/** Evaluates a PTC-Lisp program. Never throws: every failure is an `{ ok: false }` result. */
export async function evaluate(source: string, options: EvaluateOptions = {}): Promise<EvalResult> {
  if (options.isolation !== undefined && options.isolation !== "none") return isolated(source, options, options.isolation);
  const started = performance.now();
  const memory = options.memory ?? EMPTY_MEMORY;
  const toolCalls: ToolCallRecord[] = [];
  let fuelUsed = 0;
  const stats = (): EvalStats => ({ fuelUsed, durationMs: performance.now() - started });
  const failure = (e: unknown, prints: string[] = []): EvalFailure => ({ ok: false, error: describeFailure(e, source), prints, memory, toolCalls, stats: stats() });

  let limits: Limits;
  let program: Program;
  let data: DataHost | null;
  const tools = normalizeTools(options.tools);
  // What the analyzer checks tool names against; the runtime host below answers the same.
  const toolNames = { has: (n: string) => tools.has(n), names: () => [...tools.keys()] };
  try {
    limits = resolveLimits(options.limits);
    data = dataHost(options.ctx, limits.maxNestingDepth);
    program = prepare(source, memory, toolNames, data, limits, tools.size > 0);
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
      const hostArgs = toolArgs(name, args, spec);
      callsOf.set(name, made);
      const record: ToolCallRecord = { name, args: hostArgs, durationMs: 0 };
      toolCalls.push(record);
      const t0 = performance.now();
      return settle(spec, hostArgs, halting(), spec.timeoutMs ?? options.toolTimeoutMs)
        .then((raw) => toLisp(raw, limits.maxNestingDepth, 0, `the result of tool/${name}`))
        .then(
          (value) => {
            record.result = toHost(value);
            record.value = value;
            record.durationMs = performance.now() - t0;
            return value;
          },
          (e: unknown) => {
            const message = thrownMessage(e);
            record.error = message;
            record.durationMs = performance.now() - t0;
            if (options.signal?.aborted) throw abortedError();
            throw new LispError("tool_error", `tool/${name} failed: ${message}`, loc, "check the arguments, or handle the failure with try/catch");
          },
        );
    },
  };
  const state: RunState = new RunState(limits, envFrom(memory), tools.size > 0 ? toolHost : null, data, options.signal, program.suspendable);

  let outcome: Outcome = "value";
  let result: Value = null;
  let error: unknown = null;
  const prev = activate(state);
  try {
    for (const f of program.forms) {
      const v = f.code(new Array(f.frameSize));
      result = isPending(v) ? await waitFor(state, v, halting()) : v;
    }
  } catch (e) {
    if (e instanceof ReturnSignal) {
      outcome = "return";
      result = e.value;
    } else if (e instanceof FailSignal) {
      outcome = "fail";
      result = e.value;
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
    fuelUsed = limits.maxFuel - Math.max(0, state.fuel);
  }
  if (state.pendingLine !== "") state.out.push(state.pendingLine);
  const prints = state.out.snapshot().lines;
  if (error !== null) return failure(options.signal?.aborted ? abortedError() : error, prints);
  try {
    return success(result, outcome, state, memory, prints, toolCalls, stats());
  } catch (e) {
    return failure(e, prints);
  }
}

async function isolated(source: string, options: EvaluateOptions, isolation: Isolation): Promise<EvalResult> {
  let mode: ResolvedIsolation;
  try {
    mode = resolveIsolation(isolation);
  } catch (e) {
    return { ok: false, error: describeFailure(e, source), prints: [], memory: options.memory ?? EMPTY_MEMORY, toolCalls: [], stats: { fuelUsed: 0, durationMs: 0 } };
  }
  if (mode.mode === "none") return evaluate(source, { ...options, isolation: "none" });
  return evaluateIsolated(source, options, normalizeTools(options.tools), mode.maxHeapMb);
}

/** Waits for the rest of a top-level form, which goes on as its tool results come in. */
async function waitFor(state: RunState, p: Promise<Value>, halt: Halt): Promise<Value> {
  state.lastActive = performance.now();
  try {
    return await Promise.race([p, halt.aborted]);
  } finally {
    activate(state);
    state.deadline += performance.now() - state.lastActive;
  }
}

interface Program {
  forms: CompiledForm[];
  /** Compiled to wait for tools: the program, or a function it can reach, can call one. */
  suspendable: boolean;
}

function prepare(source: string, memory: Memory, tools: AnalyzeEnv["tools"], data: DataHost | null, limits: Limits, hasTools: boolean): Program {
  // Checked before reading, so a huge literal costs nothing to refuse.
  if (source.length > limits.maxSourceChars) {
    throw new LispError("source_too_large", `the program is ${source.length} characters long, over the limit of ${limits.maxSourceChars}`, undefined, "pass large data through the context (data/...) or a tool, not as a literal in the program");
  }
  const forms = read(source, limits.maxNestingDepth, limits.maxSourceForms);
  const globals = new Set<string>(memory.keys());
  collectDefs(forms, globals);
  const analyzer = new Analyzer({
    source,
    globals,
    tools,
    data,
    maxRegexPatternLength: limits.maxRegexPatternLength,
  });
  const analyzed = forms.map((form) => analyzer.analyzeTop(form));
  // Pure programs keep the synchronous closures; only one that can reach a tool (directly, or
  // through a function kept in memory) is compiled to wait for one.
  const suspendable = hasTools && (analyzed.some((a) => usesTools(a.node)) || holdsFunctions(memory));
  const forms2 = analyzed.map(({ node, scope }) => ({ code: suspendable ? compileAsync(node) : compile(node), frameSize: scope.captures.length + scope.slotCount }));
  return { forms: forms2, suspendable };
}

/** Whether memory holds a function anywhere (it may call a tool); past a budget, assume so. */
function holdsFunctions(memory: Memory): boolean {
  let budget = 10_000;
  const walk = (v: Value): boolean => {
    if (--budget < 0) return true;
    if (v instanceof Fn) return true;
    if (v instanceof Vec) return v.toArray().some(walk);
    if (isMap(v)) {
      for (const [k, x] of v) if (walk(k) || walk(x)) return true;
    } else if (isSet(v)) {
      for (const x of v) if (walk(x)) return true;
    }
    return false;
  };
  for (const entry of memory.values()) if (walk(entry.value)) return true;
  return false;
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
function settle(spec: ToolSpec, args: Record<string, unknown>, halt: Halt, timeoutMs: number | undefined): Promise<unknown> {
  if (halt.signal.aborted) return Promise.reject(new Error("aborted"));
  // Only a call with a timeout of its own needs a signal of its own; the others get the
  // evaluation's, which fires when it is aborted or over (an AbortController per call costs).
  const own = timeoutMs !== undefined && Number.isFinite(timeoutMs) ? new AbortController() : null;
  return new Promise<unknown>((resolve, reject) => {
    const stop = (why: string): void => {
      own?.abort();
      reject(new Error(why));
    };
    const onHalt = (): void => stop("aborted");
    const timer = own !== null ? setTimeout(() => stop(`no answer within ${timeoutMs} ms`), timeoutMs) : undefined;
    halt.stops.add(onHalt);
    Promise.resolve()
      .then(() => spec.run(args, own !== null ? own.signal : halt.signal))
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

function success(result: Value, outcome: Outcome, state: RunState, memory: Memory, prints: string[], toolCalls: ToolCallRecord[], stats: EvalStats): EvalSuccess {
  const env = state.env;
  const next = new Map(memory);
  const defs: Definition[] = [];
  for (const name of env.defined) {
    const c = env.cell(name);
    const entry: MemoryEntry = { value: c.value, doc: c.doc, source: c.source };
    next.set(name, entry);
    defs.push({ name, doc: c.doc, value: c.value, source: c.source });
  }
  return { ok: true, value: toHost(result, state.limits.maxNestingDepth), lisp: result, outcome, prints, memory: next, defs, toolCalls, stats };
}

function describeFailure(e: unknown, source: string): ErrorInfo {
  if (e instanceof LispError) return toErrorInfo(e, source);
  if (e instanceof RangeError && /call stack/i.test(e.message)) {
    return toErrorInfo(new LispError("depth_exceeded", "the program nested too deeply (recursion or deeply nested data)", undefined, "use loop/recur instead of deep recursion, and keep data shallow"), source);
  }
  const message = e instanceof Error ? e.message : e instanceof Suspend ? "a tool call was reached where the program could not wait for it" : String(e);
  return toErrorInfo(new LispError("internal_error", `internal error: ${message}`), source);
}

/** EDN text of a value: a PTC-Lisp value as is, plain JS data after conversion. */
export function print(value: unknown): string {
  const v = isValue(value) ? value : toLisp(value);
  return printChecked(v, true, Infinity, Infinity);
}

// Host data is arrays, plain objects, Maps, Sets and Dates; anything else is already a value.
function isValue(x: unknown): x is Value {
  if (x === null || typeof x !== "object") return typeof x !== "undefined" && typeof x !== "function" && typeof x !== "bigint" && typeof x !== "symbol";
  const proto = Object.getPrototypeOf(x);
  return !(Array.isArray(x) || proto === Object.prototype || proto === null || x instanceof Map || x instanceof Set || x instanceof Date);
}

export type { SourceLoc };
