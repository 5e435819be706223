// Host tools for agents: `tool()` declares one with zod input (and optional output) schemas;
// a ToolSession adapts a run's tools to the interpreter, adding argument validation that
// names the failing field, per-call timeouts, per-run call caps, abort, and withdrawal.
import { isDeepStrictEqual } from "node:util";
import { z } from "zod";
import { boxed, type CallAnswer, limitThrown, MAX_TIMER_MS, ours, recordedLimit, type ToolCallInfo, type ToolSpec, ToolTimeout } from "../lisp/index.js";
import { maskSecrets } from "../llm/retry.js";
import { isObjectArg, kindOf } from "../llm/args.js";
import type { ApprovalGate, NeedsApproval } from "./approval.js";
import { AgentDefinitionError, describeIssues } from "./errors.js";
import { errorText } from "../llm/errors.js";
import { unwritable } from "./prompt/shape.js";
import type { RunScope } from "./types.js";
import type { ToolCallTrace } from "../trace/trace.js";
import { askedArgs, replayAnswer } from "../trace/record.js";

/** The zod object a tool's argument map is validated with. */
export type ToolInput = z.ZodObject;

/** A call made without call information (a host calling the spec directly): nothing hidden. */
const NO_CALL_INFO: ToolCallInfo = { hidden: [], hideResult: () => undefined };

/** What a tool's `run` receives besides its arguments. Plain tools ignore it. */
export interface ToolRunContext {
  /** The name the program called the tool by. */
  readonly name: string;
  /** The calling run, so nested agents (SubAgent.asTool) inherit its options. */
  readonly scope: RunScope;
  /**
   * The argument keys whose values hold hidden context (they came from `_` context keys, or were
   * computed from them), or that are hidden context themselves (a key made of a token): a tool
   * that hands its arguments to a model, as a nested agent does, keeps these from it.
   */
  readonly hidden: readonly string[];
  /** Says the result is computed from the hidden arguments (a nested agent's answer): the caller then hides it as derived from them. */
  hideResult(): void;
  /** The runtime's (a replayed call that had run with the host's edited arguments says so again): a tool does not call it. */
  ranWith?(args: Record<string, unknown>): void;
  /** The runtime's, for a tool that answers its calls itself (`answersItself`: resume's replay): how it answers this one. A tool does not call it. */
  answering?(how: CallAnswer, durationMs?: number): void;
}

// Tools that say how they answer each call (ToolRunContext.answering): resume's replay, which
// answers a saved call from its record. The session says `live` for the others as they run.
const selfAnswering = new WeakSet<Tool>();

/** Marks `t` as answering its calls itself, telling each one's answer through `ctx.answering`. */
export function answersItself<T extends Tool>(t: T): T {
  selfAnswering.add(t);
  return t;
}

export interface ToolDefinition<I extends ToolInput = ToolInput, O extends z.ZodType | undefined = z.ZodType | undefined> {
  /** One or two sentences for the prompt: what the tool does and when to use it. */
  description: string;
  /** The argument map. Its keys, in order, are also the positional parameters: (tool/x a b). */
  input?: I;
  /** The result's shape, shown in the prompt and (unless `checkOutput` is false) checked after each call. */
  output?: O;
  /** Check results against `output` (default true). Off for a run that returns already-validated values, such as a nested agent. */
  checkOutput?: boolean;
  /**
   * Receives the validated arguments and an AbortSignal that fires on timeout or abort. With an
   * `output` schema its return type is checked against the schema at compile time as well.
   */
  run: (args: z.output<I>, signal: AbortSignal, ctx: ToolRunContext) => ToolResult<O>;
  /** Per-call timeout in ms (default: the run's `toolTimeoutMs`), shared by the call's checks and its run. `Infinity` for none. */
  timeoutMs?: number;
  /** Calls allowed per run (all turns together). Default: unlimited. */
  maxCalls?: number;
  /**
   * Pause the run for the host's approval before each call (`true`), or when this function of
   * the validated arguments says so. See docs/agent.md, "Tool approvals".
   */
  needsApproval?: NeedsApproval<z.output<I>>;
}

/** What a tool's run may return: the output schema's input type (or a promise of it), else anything. */
export type ToolResult<O extends z.ZodType | undefined> = O extends z.ZodType ? z.input<O> | Promise<z.input<O>> : unknown;

const TOOL = Symbol("ptc-lisp.tool");

export interface Tool<I extends ToolInput = ToolInput, O extends z.ZodType | undefined = z.ZodType | undefined> extends Readonly<ToolDefinition<I, O>> {
  readonly input: I;
  readonly [TOOL]: true;
}

export function isTool(x: unknown): x is Tool {
  return typeof x === "object" && x !== null && (x as Partial<Tool>)[TOOL] === true;
}

function positive(name: string, v: number | undefined, allowInfinity: boolean): void {
  if (v === undefined) return;
  if (typeof v !== "number" || !(v > 0) || (!allowInfinity && !Number.isFinite(v))) {
    throw new AgentDefinitionError(`${name} must be a positive number${allowInfinity ? " (or Infinity)" : ""}, got ${String(v)}`);
  }
}

/** Declares a tool. Its result crosses into the program as plain data (maps get keyword keys). */
export function tool<I extends ToolInput = z.ZodObject<Record<never, never>>, O extends z.ZodType | undefined = undefined>(def: ToolDefinition<I, O>): Tool<I, O> {
  if (!isObjectArg(def)) throw new AgentDefinitionError(`tool() expects a definition object, got ${kindOf(def)}`);
  if (typeof def.description !== "string" || def.description.trim() === "") throw new AgentDefinitionError("a tool needs a description (what it does, for the prompt)");
  if (typeof def.run !== "function") throw new AgentDefinitionError("a tool needs a run(args, signal) function");
  if (def.input !== undefined && !(def.input instanceof z.ZodObject)) throw new AgentDefinitionError("a tool's input must be a z.object({...}) schema");
  if (def.output !== undefined && !(def.output instanceof z.ZodType)) throw new AgentDefinitionError("a tool's output must be a zod schema");
  const unfit = def.input && unwritable(def.input);
  if (unfit) throw new AgentDefinitionError(`a tool's input schema: ${unfit}, so the tool could never be called`);
  positive("timeoutMs", def.timeoutMs, true);
  if (def.maxCalls !== undefined && !(Number.isInteger(def.maxCalls) && def.maxCalls > 0)) throw new AgentDefinitionError(`maxCalls must be a positive integer, got ${String(def.maxCalls)}`);
  if (def.needsApproval !== undefined && typeof def.needsApproval !== "boolean" && typeof def.needsApproval !== "function") throw new AgentDefinitionError("needsApproval must be a boolean or a function of the arguments");
  return Object.freeze({ ...def, input: (def.input ?? z.object({})) as I, [TOOL]: true as const });
}

/** Tool names are read as `tool/<name>` symbols, so they must be symbol-shaped. */
export const TOOL_NAME = /^[a-zA-Z][a-zA-Z0-9_\-?!]*$/;

export interface ToolSessionOptions {
  /** Per-call timeout for tools that do not set their own. */
  defaultTimeoutMs: number;
  scope: RunScope;
  /** The run's approvals, when any tool may need one. */
  gate?: ApprovalGate;
}

/** A call's time limit: its timeout, and when it passes (Date.now, the clock of the run's deadline; Infinity for none). */
interface CallLimit {
  readonly timeoutMs: number;
  readonly due: number;
}

// A failure the program sees as `tool/x failed: <message>`.
class ToolFailure extends Error {}

// A call the host refused (its approval rejected, its edited arguments invalid): it never ran,
// so it gives its place under maxCalls back.
class Refusal extends ToolFailure {}

/**
 * A value checked by a zod schema (a program's argument map or returned value, a host's edit)
 * with each plain object in it, at any depth, read as one without its prototype: zod reads each
 * key of an object schema from it, and an optional `constructor` or `toString` left out read as
 * Object.prototype's function, failing the check. The parsed data holds plain objects again.
 * A schema that passes values through (`z.any`, a loose object, a record of unknowns) gives
 * back what it was given: it is given a copy, so what the tool does to its arguments leaves the
 * caller's (the call's record) alone.
 */
export async function parseOwn<S extends z.ZodType>(schema: S, value: unknown): Promise<z.ZodSafeParseResult<z.output<S>>> {
  const needs = copyNeeded(schema);
  // Most schemas build their output and name no such key: the copy (and restoring prototypes after) cost 0.9 s on 100,000 rows.
  if (needs === 0) return schema.safeParseAsync(value);
  if ((needs & READS_PROTO_KEY) === 0) return schema.safeParseAsync(copyData(value, new Map(), 0, false));
  const copies = new Map<object, object>();
  const checked = copyData(value, copies, 0, true);
  const parsed = await schema.safeParseAsync(checked);
  if (parsed.success && copies.size > 0) parsed.data = withPrototypes(parsed.data, new Set(copies.values()), new Set(), 0) as z.output<S>;
  return parsed;
}

/** The names an object without them reads from Object.prototype (`constructor`, `toString`, `__proto__`). */
const PROTO_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** What a schema needs of the value it checks (copyData): keys read as own, values of its own to pass through. */
const READS_PROTO_KEY = 1;
const PASSES_VALUES = 2;
/** Schema kinds whose output is (or may be, through the host's function) the very value given. */
const PASSING_KINDS: ReadonlySet<unknown> = new Set(["any", "unknown", "custom", "transform"]);

const copyNeeds = new WeakMap<object, number>();

/**
 * What a zod schema needs, somewhere, of the value it checks: READS_PROTO_KEY where it may read
 * a key named like an Object.prototype member (an object shape's key, an enum's or literal's
 * value (a record's keys), a discriminator), PASSES_VALUES where it passes a value through. A
 * schema of a kind this does not know (no zod def) counts as both. Asked once per schema.
 */
function copyNeeded(schema: object): number {
  let known = copyNeeds.get(schema);
  if (known === undefined) {
    known = defNeeds(schema, new Set());
    copyNeeds.set(schema, known);
  }
  return known;
}

function defNeeds(schema: unknown, seen: Set<object>): number {
  if (typeof schema !== "object" || schema === null || seen.has(schema)) return 0;
  seen.add(schema);
  const def = (schema as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
  if (typeof def !== "object" || def === null) return READS_PROTO_KEY | PASSES_VALUES;
  const names = (xs: unknown): boolean => Array.isArray(xs) && xs.some((x) => typeof x === "string" && PROTO_KEYS.has(x));
  let needs = PASSING_KINDS.has(def.type) ? PASSES_VALUES : 0;
  if (typeof def.discriminator === "string" && PROTO_KEYS.has(def.discriminator)) needs |= READS_PROTO_KEY;
  if (names(def.values) || (typeof def.entries === "object" && def.entries !== null && names(Object.values(def.entries)))) needs |= READS_PROTO_KEY;
  const inner: unknown[] = [];
  if (def.type === "lazy" && typeof def.getter === "function") inner.push((def.getter as () => unknown)());
  if (typeof def.shape === "object" && def.shape !== null && Object.keys(def.shape).some((k) => PROTO_KEYS.has(k))) needs |= READS_PROTO_KEY;
  for (const v of Object.values(def)) {
    if (Array.isArray(v)) inner.push(...v);
    else if (v === def.shape && typeof v === "object" && v !== null) inner.push(...Object.values(v));
    else inner.push(v);
  }
  for (const x of inner) {
    if (needs === (READS_PROTO_KEY | PASSES_VALUES)) break;
    if (typeof x === "object" && x !== null && "_zod" in x) needs |= defNeeds(x, seen);
  }
  return needs;
}

/**
 * The size of plain data as the run counts what crosses into a record: characters of its strings
 * and keys plus one per value, a shared part counted where it is reached (as JSON writes it) and
 * worked out once.
 */
function plainSize(x: unknown, memo: Map<object, number>, depth: number): number {
  if (typeof x === "string") return 1 + x.length;
  if (typeof x !== "object" || x === null || depth > MAX_OWN_DEPTH) return 1;
  const known = memo.get(x);
  if (known !== undefined) return known;
  // A cycle (JSON has none; structuredClone keeps one) counts once.
  memo.set(x, 1);
  let n = 1;
  if (Array.isArray(x)) for (const v of x) n += plainSize(v, memo, depth + 1);
  else for (const k of Object.keys(x)) n += k.length + plainSize((x as Record<string, unknown>)[k], memo, depth + 1);
  memo.set(x, n);
  return n;
}

/** Deeper than any value a program can make (its maxNestingDepth); a host's edit deeper still is checked as it is there. */
const MAX_OWN_DEPTH = 512;

/**
 * A copy of the arrays and plain objects in `x`, shared ones copied once: objects without a
 * prototype (`bare`: for a schema that reads prototype-named keys) or plain ones (for a schema
 * that passes values through, so the tool gets its own).
 */
function copyData(x: unknown, copies: Map<object, object>, depth: number, bare: boolean): unknown {
  if (typeof x !== "object" || x === null || depth > MAX_OWN_DEPTH) return x;
  const known = copies.get(x);
  if (known !== undefined) return known;
  if (Array.isArray(x)) {
    const out: unknown[] = new Array<unknown>(x.length);
    copies.set(x, out);
    for (let i = 0; i < x.length; i++) out[i] = copyData(x[i], copies, depth + 1, bare);
    return out;
  }
  if (Object.getPrototypeOf(x) !== Object.prototype) return x;
  const out: Record<string, unknown> = bare ? (Object.create(null) as Record<string, unknown>) : {};
  copies.set(x, out);
  for (const k of Object.keys(x)) {
    const v = copyData((x as Record<string, unknown>)[k], copies, depth + 1, bare);
    // Assigned on a plain object, an own `__proto__` key (a JSON key) would set the copy's prototype.
    if (k === "__proto__" && !bare) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out;
}

/** Gives the prototype back to the copies (`copyData`, bare) a schema passed through into its data. */
function withPrototypes(x: unknown, copies: ReadonlySet<object>, seen: Set<object>, depth: number): unknown {
  if (typeof x !== "object" || x === null || depth > MAX_OWN_DEPTH || seen.has(x)) return x;
  seen.add(x);
  const proto: unknown = Object.getPrototypeOf(x);
  if (proto !== null && proto !== Object.prototype && proto !== Array.prototype) return x;
  if (copies.has(x) && proto === null) Object.setPrototypeOf(x, Object.prototype);
  for (const v of Object.values(x)) withPrototypes(v, copies, seen, depth + 1);
  return x;
}

/** The messages of refusals, as a trace records them: a replayed refusal must give its place back too. */
const REFUSAL = /^(rejected by the host|invalid arguments from the host)(:|$)/;

/** Whether `e` is a refusal (asked safely: a tool may throw a Proxy whose getPrototypeOf throws). */
function isRefusal(e: unknown): boolean {
  try {
    return e instanceof Refusal;
  } catch {
    return false;
  }
}

const NO_KEYS: readonly string[] = [];

// A tool may throw anything, an Error whose message getter throws or a Proxy included. Its
// message, and the checks' below, are cut by the interpreter after it hides what they quote of
// hidden context (toolMessage): cut here first, a quote of it the cut left 4-7 characters of was
// no quote any more, and showed.
function messageOf(e: unknown): string {
  // What a client library's error quotes may hold a credential the tool never meant to show
  // (fetch refuses a URL with a password by quoting it): masked as an LLM client's errors are.
  return maskSecrets(errorText(e, "the tool failed"), NO_KEYS);
}

/**
 * One run's view of its tools: call counts persist across turns; `specs(withdrawn)` gives
 * the interpreter's ToolSpecs for a turn. Withdrawn tools stay known to the analyzer (so
 * the program compiles) but every call fails with a message saying why.
 */
export class ToolSession {
  private readonly calls = new Map<string, number>();
  private readonly open: Record<string, ToolSpec>;
  private readonly closed: Record<string, ToolSpec>;

  constructor(
    private readonly tools: Readonly<Record<string, Tool>>,
    private readonly options: ToolSessionOptions,
  ) {
    this.open = {};
    this.closed = {};
    for (const [name, t] of Object.entries(tools)) {
      const params = Object.keys(t.input.shape);
      // Each call is reported once the session knows how it is answered: a call answered from a
      // saved record is told as replayed, and one held for approval is not told (it did not run).
      this.open[name] = { params, reportsAnswer: true, run: (args, signal, call) => this.call(name, t, args, signal, call ?? NO_CALL_INFO) };
      this.closed[name] = {
        params,
        run: (_args, _signal, call) => {
          this.admit(call ?? NO_CALL_INFO);
          throw new ToolFailure("tools are withdrawn on the final turn; finish with (return ...) or (fail ...) using what you already have");
        },
      };
    }
  }

  get size(): number {
    return Object.keys(this.tools).length;
  }

  specs(withdrawn: boolean): Record<string, ToolSpec> {
    return withdrawn ? this.closed : this.open;
  }

  /** Calls made to `name` so far in this run. */
  callCount(name: string): number {
    return this.calls.get(name) ?? 0;
  }

  // Without approvals the call is `checked` itself, adding no promise of its own.
  private call(name: string, t: Tool, raw: Record<string, unknown>, signal: AbortSignal, call: ToolCallInfo): Promise<unknown> {
    const gate = this.options.gate;
    return gate === undefined ? this.checked(name, t, raw, signal, call, undefined, 0) : this.gated(gate, name, t, raw, signal, call);
  }

  private async gated(gate: ApprovalGate, name: string, t: Tool, raw: Record<string, unknown>, signal: AbortSignal, call: ToolCallInfo): Promise<unknown> {
    const index = gate.enter();
    try {
      return await this.checked(name, t, raw, signal, call, gate, index);
    } catch (e) {
      // Only gated calls can be refused: a refusal is counted as the call passes its cap, then given back.
      if (isRefusal(e)) this.calls.set(name, this.callCount(name) - 1);
      throw e;
    } finally {
      gate.leave(index);
    }
  }

  private async checked(name: string, t: Tool, raw: Record<string, unknown>, signal: AbortSignal, call: ToolCallInfo, gate: ApprovalGate | undefined, index: number): Promise<unknown> {
    this.admit(call);
    if (signal.aborted) throw new ToolFailure("aborted");
    // One time limit for the whole call: its checks and its run share it.
    const timeoutMs = t.timeoutMs ?? this.options.defaultTimeoutMs;
    const limit: CallLimit = { timeoutMs, due: timeoutMs <= MAX_TIMER_MS ? Date.now() + timeoutMs : Infinity };
    const parsed = await this.bounded(limit, () => parseOwn(t.input, raw), signal);
    if (!parsed.success) throw new ToolFailure(`invalid arguments: ${describeIssues(parsed.error, raw).join("; ")}`);
    // Counted after the check's await, with nothing awaited between reading and counting: calls
    // made at once (pmap) each see the others'.
    const used = this.callCount(name);
    if (t.maxCalls !== undefined && used >= t.maxCalls) {
      throw new ToolFailure(`call limit reached: tool/${name} may be called at most ${t.maxCalls} time${t.maxCalls === 1 ? "" : "s"} per run; use the results you already have`);
    }
    this.calls.set(name, used + 1);
    let args = parsed.data;
    if (gate !== undefined) {
      const needs = t.needsApproval as NeedsApproval<Record<string, unknown>> | undefined;
      const ask = typeof needs === "function" ? (a: Record<string, unknown>) => this.bounded(limit, () => needs(a), signal) : needs;
      const verdict = await gate.verdict(index, ask, args, { name, input: t.input, hidden: call.hidden });
      if (verdict.kind === "hold") {
        call.answering?.("held");
        return verdict.until;
      }
      if (verdict.kind === "reject") throw new Refusal(verdict.message);
      if (verdict.kind === "recorded") {
        call.answering?.("replayed", verdict.call.durationMs);
        // A call that ran with the host's edit replays it: the edit is kept again, and counted again
        // (else each resume could add one more edit up to the bound).
        if (Object.hasOwn(verdict.call, "asked")) this.options.scope.keepToolResult?.(plainSize(verdict.call.args, new Map(), 0));
        if (verdict.call.error !== undefined) throw recordedFailure(verdict.call.error, verdict.call.errorKind, verdict.call.errorHint);
        return replayAnswer(verdict.call, call);
      }
      if (verdict.args !== undefined) {
        const given = swapHidden(verdict.args, verdict.shown, raw, call.hidden);
        const edited = await this.bounded(limit, () => parseOwn(t.input, given), signal);
        if (!edited.success) throw new Refusal(`invalid arguments from the host: ${describeIssues(edited.error, verdict.args).join("; ")}`);
        args = edited.data;
        // The record shows what ran (the edit less what the schema dropped), hidden values as the
        // stand-ins the host was shown (whichever it gave back).
        const ran = swapHidden(received(verdict.args, edited.data, 0) as Record<string, unknown>, raw, verdict.shown, call.hidden);
        this.keepEdit(call, ran);
        call.ranWith?.(ran);
      }
    }
    const answering = selfAnswering.has(t) ? call.answering : undefined;
    if (answering === undefined) call.answering?.("live");
    const ctx: ToolRunContext = { name, scope: this.options.scope, hidden: call.hidden, hideResult: call.hideResult, ranWith: call.ranWith, ...(answering === undefined ? {} : { answering }) };
    const { value: result } = await this.withTimeout(limit, (s) => boxed(t.run(args, s, ctx)), signal);
    // Returned from here it is resolved as a promise's value, which reads its `then`: a result
    // that cannot be read (a revoked Proxy) fails here in our words, not the host's.
    if (!readable(result)) throw new ToolFailure("the tool returned an object that cannot be read (reading it threw)");
    if (t.output === undefined || t.checkOutput === false) return result;
    const output = t.output;
    const checked = await this.bounded(limit, () => output.safeParseAsync(result), signal);
    if (!checked.success) throw new ToolFailure(`the tool returned a result that does not match its declared output: ${describeIssues(checked.error, result).join("; ")}`);
    return checked.data;
  }

  /**
   * Counts the arguments of a call as it arrives, before anything is awaited: the trace keeps
   * them whatever answers the call, and calls made at once (pmap) each see the others', a held
   * call (which never ends) included. Past the run's bound, the program stops (a limit, which no
   * try catches), so a program catching the refusal cannot keep adding refused calls' arguments.
   */
  private admit(call: ToolCallInfo): void {
    this.refuseWhenFull(call);
    this.options.scope.keepToolResult?.(call.size ?? 0);
  }

  /** Refuses the call, the program stopping (a limit, which no try catches), when the run keeps no more tool results. */
  private refuseWhenFull(call: ToolCallInfo): void {
    const full = this.options.scope.toolResultsFull?.();
    if (full === undefined) return;
    call.answering?.("refused");
    throw recordedLimit("tool_limit_exceeded", full, "return or fail with the results you already have") ?? new ToolFailure(full);
  }

  /**
   * Counts a host's edited arguments, which the record keeps as what ran, as admit counts the
   * program's: past the run's bound the edited call is refused (the program stops), so no
   * approval step keeps more than maxToolResultSize however many calls it edits, or how big.
   */
  private keepEdit(call: ToolCallInfo, ran: Record<string, unknown>): void {
    this.options.scope.keepToolResult?.(plainSize(ran, new Map(), 0));
    this.refuseWhenFull(call);
  }

  // The host's own checks of a call (an async refinement of its arguments or result, an approval
  // predicate) are bounded by the call's timeout and the run's signal too: one that never settles
  // cannot hold the run.
  private async bounded<T>(limit: CallLimit, check: () => T | Promise<T>, signal: AbortSignal): Promise<T> {
    return (await this.withTimeout(limit, async () => ({ value: await check() }), signal)).value as T;
  }

  // Races the call against its timeout and the run's signal, so a tool that ignores its
  // signal can never hold the run; the tool's own signal fires in both cases.
  private withTimeout(limit: CallLimit, run: (signal: AbortSignal) => { value: unknown } | Promise<{ value: unknown }>, outer: AbortSignal): Promise<{ value: unknown }> {
    // The run may have been aborted while the call's arguments or approval were checked: it must not start then.
    if (outer.aborted) return Promise.reject(new ToolFailure("aborted"));
    const { timeoutMs, due } = limit;
    const ac = new AbortController();
    return new Promise<{ value: unknown }>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const finish = (): void => {
        if (timer !== undefined) clearTimeout(timer);
        unsubscribe();
      };
      const unsubscribe = onAbort(outer, () => {
        finish();
        ac.abort();
        reject(new ToolFailure("aborted"));
      });
      if (due !== Infinity) {
        timer = setTimeout(() => {
          finish();
          ac.abort();
          // The program sees tool_timeout; the call is abandoned and a late result ignored.
          reject(new ToolTimeout(timeoutMs));
        }, Math.max(0, due - Date.now()));
      }
      Promise.resolve()
        .then(() => run(ac.signal))
        .then(
          (v) => {
            finish();
            resolve(v);
          },
          (e: unknown) => {
            finish();
            // A timeout replayed from a record (resume) stays a timeout: the program sees tool_timeout again.
            // `ours` asks safely: a tool may throw a Proxy whose getPrototypeOf throws.
            const own = ours(e);
            // A refusal replayed from a record stays one (it does not count against maxCalls).
            // So does a limit the result ran into (see recordedFailure).
            reject(own instanceof ToolTimeout ? own : isRefusal(e) ? (e as Refusal) : (limitThrown(e) ?? new ToolFailure(messageOf(e))));
          },
        );
    });
  }
}

/**
 * The host's edited arguments with every value that `from` holds where `to` differs (a hidden
 * value and its stand-in) given as `to` has it, wherever in the edit it stands: the host may
 * change a field beside it in a nested map, or move it to another argument. From the request's
 * stand-ins to the call's own values: a form that sends every argument back, one of them changed,
 * must not hand the tool the stand-in text. From the call's own values to the stand-ins: a host
 * that put the real hidden value back must not put it in the trace, the events or the model's
 * feedback.
 */
function swapHidden(edited: Record<string, unknown>, from: unknown, to: unknown, hidden: readonly string[]): Record<string, unknown> {
  if (hidden.length === 0) return edited;
  const pairs: Array<[unknown, unknown]> = [];
  differing(from, to, pairs, 0);
  return pairs.length === 0 ? edited : (swapped(edited, pairs, 0) as Record<string, unknown>);
}

/**
 * The host's `edit` without the keys its parse (`parsed`, what the tool got) left out, at any
 * depth: the values stay the host's, so hidden ones are still as it was shown them.
 */
function received(edit: unknown, parsed: unknown, depth: number): unknown {
  if (edit === parsed || depth >= MAX_SWAP_DEPTH || !isPlainData(edit) || !isPlainData(parsed) || Array.isArray(edit) !== Array.isArray(parsed)) return edit;
  const got = parsed as Record<string, unknown>;
  if (Array.isArray(edit)) return edit.map((v: unknown, i) => received(v, got[i], depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(edit)) if (Object.hasOwn(got, k)) out[k] = received(v, got[k], depth + 1);
  return out;
}

/** Deeper than hiding goes (Marks.hide): a value there is compared whole. */
const MAX_SWAP_DEPTH = 64;

/** The places where `a` and `b`, the same arguments as two sides hold them, differ: [a's, b's] each. */
function differing(a: unknown, b: unknown, out: Array<[unknown, unknown]>, depth: number): void {
  if (Object.is(a, b)) return;
  if (depth < MAX_SWAP_DEPTH && isPlainData(a) && isPlainData(b) && Array.isArray(a) === Array.isArray(b)) {
    for (const k of Object.keys(b)) if (Object.hasOwn(a, k)) differing((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], out, depth + 1);
    return;
  }
  if (!isDeepStrictEqual(a, b)) out.push([a, b]);
}

/** `v` with each value equal to a pair's first given as its second; what holds none is returned as it is. */
function swapped(v: unknown, pairs: ReadonlyArray<[unknown, unknown]>, depth: number): unknown {
  for (const [a, b] of pairs) if (isDeepStrictEqual(v, a)) return b;
  if (depth >= MAX_SWAP_DEPTH || !isPlainData(v)) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | null = null;
    v.forEach((x: unknown, i) => {
      const y = swapped(x, pairs, depth + 1);
      if (y !== x) (out ??= v.slice())[i] = y;
    });
    return out ?? v;
  }
  // Entries, made an object at the end: assigning a key "__proto__" would set the prototype instead.
  const entries = Object.entries(v);
  let changed = false;
  for (const e of entries) {
    const y = swapped(e[1], pairs, depth + 1);
    if (y !== e[1]) [e[1], changed] = [y, true];
  }
  return changed ? Object.fromEntries(entries) : v;
}

/** An array or a plain object (what arguments are made of), not a class instance. */
function isPlainData(v: unknown): v is object {
  if (typeof v !== "object" || v === null) return false;
  if (Array.isArray(v)) return true;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** How the interpreter records a call that timed out (src/lisp/evaluate.ts, src/lisp/isolate/run.ts). */
const RECORDED_TIMEOUT = /^no answer within (\d+) ms$/;

/**
 * What to throw again for a recorded call that failed (resume's replay): a recorded timeout as
 * the interpreter's ToolTimeout, so the replayed program meets tool_timeout as the saved one
 * did (a plain error would be tool_error, and the replay check would fail); a recorded refusal
 * as a refusal, which does not count against maxCalls; a result that ran into a limit as that
 * limit (`kind`); else the error.
 */
export function recordedFailure(error: string, kind?: string, hint?: string): ToolTimeout | Error | NonNullable<ReturnType<typeof recordedLimit>> {
  const limit = recordedLimit(kind, error, hint);
  if (limit !== null) return limit;
  const ms = recordedTimeoutMs(error);
  if (ms !== undefined) return new ToolTimeout(ms);
  return REFUSAL.test(error) ? new Refusal(error) : new ToolFailure(error);
}

/** The time limit a recorded call's error says it ran out of, or undefined for any other error. */
export function recordedTimeoutMs(error: string): number | undefined {
  const timeout = RECORDED_TIMEOUT.exec(error);
  return timeout === null ? undefined : Number(timeout[1]);
}

/**
 * The first argument (its key) in which a call differs from a recorded call of the same tool,
 * both as the tool receives them (parsed), or undefined: resume answers a call from its record
 * only when it is the call the saved run made. Keys holding hidden context are stand-ins in the
 * record, and keys the recorded call left out take the schema's default, which may differ on
 * every parse (a fresh id or date), so neither is compared.
 */
export async function differingArgument(input: ToolInput, recorded: unknown, args: Readonly<Record<string, unknown>>, hidden: readonly string[]): Promise<string | undefined> {
  const was = typeof recorded === "object" && recorded !== null ? (recorded as Record<string, unknown>) : {};
  for (const [key, schema] of Object.entries(input.shape)) {
    if (hidden.includes(key) || !Object.hasOwn(was, key)) continue;
    const parsed = await parseOwn(schema as z.ZodType, was[key]);
    if (!parsed.success || !isDeepStrictEqual(parsed.data, args[key])) return key;
  }
  return undefined;
}

/**
 * Which of a turn's recorded calls a call of `name` with these arguments is (resume): the first
 * not claimed yet whose arguments equal the call's, claimed here (`index`); else the first
 * argument in which an unclaimed record of the tool differs (`differs`); else neither (no
 * record of the tool is left). Matched by arguments, not by place: pmap branches make their
 * later calls in the order their earlier ones answered, which a resumed run need not repeat.
 */
export async function claimRecord(
  calls: readonly ToolCallTrace[],
  claimed: Set<number>,
  name: string,
  input: ToolInput,
  args: Readonly<Record<string, unknown>>,
  hidden: readonly string[],
): Promise<{ index?: number; differs?: string }> {
  // Tried in recorded order, stopping at the first match: a turn replayed in the order it ran
  // checks one record per call, not every record of the tool (a map over 2,000 items).
  let differs: string | undefined;
  for (let i = 0; i < calls.length; i++) {
    if (calls[i].name !== name || claimed.has(i)) continue;
    const d = await differingArgument(input, askedArgs(calls[i]), args, hidden);
    // Claimed with nothing awaited after the check, so calls made at once never share a record.
    if (d === undefined && !claimed.has(i)) {
      claimed.add(i);
      return { index: i };
    }
    differs ??= d;
  }
  return differs === undefined ? {} : { differs };
}

/** Whether resolving a promise with `x` can read its `then` without throwing. */
function readable(x: unknown): boolean {
  if (typeof x !== "object" || x === null) return true;
  try {
    void (x as { then?: unknown }).then;
    return true;
  } catch {
    return false;
  }
}

// Calls in flight per signal. A fan-out (pmap over many items) runs its calls under one
// signal; one listener per signal serves them all, so Node never warns of a listener leak
// however wide the fan-out.
const waiting = new WeakMap<AbortSignal, { callbacks: Set<() => void>; listener: () => void }>();

/** Calls `f` once when `signal` aborts; returns the unsubscribe. The signal must not have aborted yet. */
function onAbort(signal: AbortSignal, f: () => void): () => void {
  let entry = waiting.get(signal);
  if (entry === undefined) {
    const callbacks = new Set<() => void>();
    const listener = (): void => {
      waiting.delete(signal);
      for (const g of callbacks) g();
    };
    waiting.set(signal, (entry = { callbacks, listener }));
    signal.addEventListener("abort", listener, { once: true });
  }
  const current = entry;
  const { callbacks, listener } = current;
  callbacks.add(f);
  return () => {
    if (!callbacks.delete(f) || callbacks.size > 0 || waiting.get(signal) !== current) return;
    waiting.delete(signal);
    signal.removeEventListener("abort", listener);
  };
}
