// The public entry of the interpreter: read, analyze and compile the whole program, then
// run it. Tool calls are asynchronous while evaluation is synchronous, so a program that
// calls a tool whose result is not known yet is suspended and run again from the start
// once the result is in (programs are deterministic, and earlier results are replayed).
import { Analyzer, type AnalyzeEnv } from "./analyzer/analyze.js";
import "./core/index.js";
import { compile } from "./compile.js";
import { LispError, toErrorInfo, type ErrorInfo, type SourceLoc } from "./errors.js";
import type { Code } from "./fn.js";
import type { Form } from "./forms.js";
import { toHost, toLisp } from "./interop.js";
import { resolveLimits, type Limits } from "./limits.js";
import { read } from "./reader.js";
import { activate, GlobalEnv, RunState, ToolSuspend, type DataHost, type PassBudget, type PendingToolCall, type ToolHost, REPLAY_HINT } from "./runtime.js";
import { FailSignal, ReturnSignal } from "./signals.js";
import { Keyword, type Value, isMap } from "./values.js";
import { Vec } from "./vector.js";
import { printChecked } from "./printer.js";

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
  /** Evaluation passes (1 + rounds of tool calls). */
  passes: number;
  fuelUsed: number;
  durationMs: number;
}

const EMPTY_MEMORY: Memory = new Map();

interface CompiledForm {
  code: Code;
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

type ToolOutcome = { ok: true; value: Value } | { ok: false; message: string };

function errorMessage(e: unknown): string {
  if (e instanceof LispError) return e.message;
  if (e instanceof Error) return e.message;
  return typeof e === "string" ? e : "tool failed";
}

/** Evaluates a PTC-Lisp program. Never throws: every failure is an `{ ok: false }` result. */
export async function evaluate(source: string, options: EvaluateOptions = {}): Promise<EvalResult> {
  const started = performance.now();
  const memory = options.memory ?? EMPTY_MEMORY;
  const toolCalls: ToolCallRecord[] = [];
  let passes = 0;
  let fuelUsed = 0;
  const stats = (): EvalStats => ({ passes, fuelUsed, durationMs: performance.now() - started });
  const failure = (e: unknown, prints: string[] = []): EvalFailure => ({ ok: false, error: describeFailure(e, source), prints, memory, toolCalls, stats: stats() });

  let limits: Limits;
  let program: CompiledForm[];
  let data: DataHost | null;
  const tools = normalizeTools(options.tools);
  // What the analyzer checks tool names against; the runtime host below answers the same.
  const toolNames = { has: (n: string) => tools.has(n), names: () => [...tools.keys()] };
  try {
    limits = resolveLimits(options.limits);
    data = dataHost(options.ctx, limits.maxNestingDepth);
    program = prepare(source, memory, toolNames, data, limits);
  } catch (e) {
    return failure(e);
  }
  const cache = new Map<string, ToolOutcome>();
  const callsOf = new Map<string, number>();
  // One budget for the whole evaluation: each pass spends what the earlier ones left.
  const budget: PassBudget = { fuel: limits.maxFuel, msLeft: limits.timeoutMs, clock: Date.now(), pass: 0 };
  let state: RunState;
  const toolHost: ToolHost = {
    ...toolNames,
    call(name, args, loc) {
      const key = state.nextCallKey();
      const done = cache.get(key);
      if (done !== undefined) {
        if (done.ok) return done.value;
        throw new LispError("tool_error", `tool/${name} failed: ${done.message}`, loc, "check the arguments, or handle the failure with try/catch");
      }
      if (++state.toolCalls + cache.size > limits.maxToolCalls) {
        throw new LispError("tool_limit_exceeded", `more than ${limits.maxToolCalls} tool calls in one program`, loc, "call tools for fewer items per program");
      }
      const spec = tools.get(name) as ToolSpec;
      const made = (callsOf.get(name) ?? 0) + 1;
      if (spec.maxCalls !== undefined && made > spec.maxCalls) {
        throw new LispError("tool_limit_exceeded", `tool/${name} may be called at most ${spec.maxCalls} time${spec.maxCalls === 1 ? "" : "s"} per program`, loc, "call it for fewer items, or reuse an earlier result");
      }
      // Argument shape mistakes are the program's own errors, reported where the call is.
      const call = { key, name, args: toolArgs(name, args, spec), loc };
      callsOf.set(name, made);
      throw new ToolSuspend([call]);
    },
  };

  for (;;) {
    passes++;
    budget.pass = passes;
    state = new RunState(limits, envFrom(memory), tools.size > 0 ? toolHost : null, data, options.signal, budget);
    const passStarted = performance.now();
    const prev = activate(state);
    let outcome: Outcome = "value";
    let result: Value = null;
    let suspended: PendingToolCall[] | null = null;
    let error: unknown = null;
    try {
      for (const f of program) result = f.code(new Array(f.frameSize));
    } catch (e) {
      if (e instanceof ReturnSignal) {
        outcome = "return";
        result = e.value;
      } else if (e instanceof FailSignal) {
        outcome = "fail";
        result = e.value;
      } else if (e instanceof ToolSuspend) {
        suspended = e.pending;
      } else {
        error = e;
      }
    } finally {
      activate(prev);
      budget.fuel = Math.max(0, state.fuel);
      budget.msLeft -= performance.now() - passStarted;
      fuelUsed = limits.maxFuel - budget.fuel;
    }
    if (state.pendingLine !== "") state.out.push(state.pendingLine);
    const prints = state.out.snapshot().lines;
    if (error !== null) return failure(error, prints);
    if (suspended !== null) {
      await runTools(suspended, tools, cache, toolCalls, limits.maxNestingDepth, options.signal, options.toolTimeoutMs);
      if (options.signal?.aborted) return failure(new LispError("aborted", "the evaluation was aborted by the host"), prints);
      if (budget.msLeft <= 0 || budget.fuel <= 0) return failure(budgetSpent(limits, budget), prints);
      continue;
    }
    try {
      return success(result, outcome, state, memory, prints, toolCalls, stats());
    } catch (e) {
      return failure(e, prints);
    }
  }
}

function prepare(source: string, memory: Memory, tools: AnalyzeEnv["tools"], data: DataHost | null, limits: Limits): CompiledForm[] {
  // Checked before reading, so a huge literal costs nothing to refuse.
  if (source.length > limits.maxSourceChars) {
    throw new LispError("source_too_large", `the program is ${source.length} characters long, over the limit of ${limits.maxSourceChars}`, undefined, "pass large data through the context (data/...) or a tool, not as a literal in the program");
  }
  const forms = read(source, limits.maxNestingDepth);
  const globals = new Set<string>(memory.keys());
  collectDefs(forms, globals);
  const analyzer = new Analyzer({
    source,
    globals,
    tools,
    data,
    maxRegexPatternLength: limits.maxRegexPatternLength,
  });
  return forms.map((form) => {
    const { node, scope } = analyzer.analyzeTop(form);
    const code = compile(node);
    return { code, frameSize: scope.captures.length + scope.slotCount };
  });
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

/** The limit a pass used up on its way to a tool call, as the error the next pass would raise. */
function budgetSpent(limits: Limits, budget: PassBudget): LispError {
  if (budget.fuel <= 0) return new LispError("fuel_exhausted", `the program used up its budget of ${limits.maxFuel} evaluation steps`, undefined, REPLAY_HINT);
  return new LispError("timeout", `the program ran longer than ${limits.timeoutMs} ms`, undefined, REPLAY_HINT);
}

/**
 * A tool's answer, or a rejection as soon as the evaluation is aborted (`stops` holds what the
 * one abort listener calls) or the call takes longer than `timeoutMs`: a tool that never answers
 * cannot hold the evaluation. The tool's own signal fires too, so it can stop its work.
 */
function settle(spec: ToolSpec, args: Record<string, unknown>, stops: Set<() => void>, timeoutMs: number | undefined): Promise<unknown> {
  const own = new AbortController();
  return new Promise<unknown>((resolve, reject) => {
    const stop = (why: string): void => {
      own.abort();
      reject(new Error(why));
    };
    const onAbort = (): void => stop("aborted");
    const timer = timeoutMs !== undefined && Number.isFinite(timeoutMs) ? setTimeout(() => stop(`no answer within ${timeoutMs} ms`), timeoutMs) : undefined;
    stops.add(onAbort);
    Promise.resolve()
      .then(() => spec.run(args, own.signal))
      .then(resolve, reject)
      .finally(() => {
        if (timer !== undefined) clearTimeout(timer);
        stops.delete(onAbort);
      });
  });
}

async function runTools(
  pending: PendingToolCall[],
  tools: Map<string, ToolSpec>,
  cache: Map<string, ToolOutcome>,
  records: ToolCallRecord[],
  maxDepth: number,
  signal: AbortSignal | undefined,
  toolTimeoutMs: number | undefined,
): Promise<void> {
  // One listener on the caller's signal, however many calls are in flight.
  const stops = new Set<() => void>();
  const onAbort = (): void => {
    for (const stop of [...stops]) stop();
  };
  signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const outcomes = await Promise.all(
      pending.map(async (p): Promise<ToolCallRecord> => {
        const spec = tools.get(p.name) as ToolSpec;
        const t0 = performance.now();
        const args = p.args;
        try {
          if (signal?.aborted) throw new Error("aborted");
          const raw = await settle(spec, args, stops, spec.timeoutMs ?? toolTimeoutMs);
          const value = toLisp(raw, maxDepth, 0, `the result of tool/${p.name}`);
          cache.set(p.key, { ok: true, value });
          return { name: p.name, args, result: toHost(value), value, durationMs: performance.now() - t0 };
        } catch (e) {
          const message = errorMessage(e);
          cache.set(p.key, { ok: false, message });
          return { name: p.name, args, error: message, durationMs: performance.now() - t0 };
        }
      }),
    );
    records.push(...outcomes);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
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
  const message = e instanceof Error ? e.message : String(e);
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
