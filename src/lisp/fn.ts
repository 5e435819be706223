// Function values and the call protocol. A user function is a Closure over a compiled
// template: its arities' bodies are closures over a flat frame (captured values first,
// then parameters, then locals), so calling one allocates exactly one array.
import { storedKey } from "./equality.js";
import type { FnArityNode } from "./analyzer/nodes.js";
import { heldKey } from "./core/sorted.js";
import { clipped } from "./cuts.js";
import { LispError, typeErr, type SourceLoc } from "./errors.js";
import { chargeLoop, depthExceeded, returned, run, slowCheck, took } from "./runtime.js";
import { after, fromSync, isPending, syncCall, type Maybe } from "./suspend.js";
import { lookup } from "./lookup.js";
import { prStr } from "./printer.js";
import { asIndex, Fn, isNumber, Keyword, typeName, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

export type Frame = Value[];
export type Code = (frame: Frame) => Value;

/** Returned (never thrown) by `recur`; loops and recurring functions spin on it. */
export const RECUR = Object.freeze({ recur: true }) as unknown as Value;

export interface Arity {
  /** Fixed parameters. */
  readonly required: number;
  /** Whether a `& rest` parameter follows. */
  readonly variadic: boolean;
  readonly frameSize: number;
  readonly body: Code;
  /** True when the body recurs to this function (the call then loops). */
  readonly loops: boolean;
  /** Parameter vector as written, for printing. */
  readonly params: string;
  /** The body compiled in the suspendable mode, made the first time a suspendable program calls it. */
  asyncBody: AsyncCode | null;
  /** The analyzed arity, which the run's suspendable compiler compiles again when needed. */
  readonly node: FnArityNode;
}

/** Code compiled in the suspendable mode: a value, or a promise while a tool call is pending. */
export type AsyncCode = (frame: Frame) => Maybe;

export interface FnTemplate {
  readonly name: string | null;
  /** Fixed arities indexed by parameter count. */
  readonly fixed: ReadonlyArray<Arity | undefined>;
  readonly variadic: Arity | null;
  /** Number of captured values copied to the front of every frame. */
  readonly captures: number;
  /** Index of the function itself among its captures (named fns), or -1. */
  readonly selfIndex: number;
  readonly loc: SourceLoc | undefined;
}

export class Closure extends Fn {
  constructor(
    readonly t: FnTemplate,
    readonly env: Value[],
  ) {
    super();
  }

  get name(): string {
    return this.t.name ?? "fn";
  }

  override paramLists(): string {
    const lists: string[] = [];
    for (const a of this.t.fixed) if (a !== undefined) lists.push(a.params);
    if (this.t.variadic) lists.push(this.t.variadic.params);
    return lists.join(" ");
  }

  override label(): string {
    const a = this.t.fixed.find((x) => x !== undefined) ?? this.t.variadic;
    const params = a ? a.params.replace(/^\[|\]$/g, "") : "";
    return this.t.name ? this.t.name : params;
  }

  private arityError(n: number): LispError {
    const counts: string[] = [];
    this.t.fixed.forEach((a, i) => a && counts.push(String(i)));
    if (this.t.variadic) counts.push(`${this.t.variadic.required}+`);
    return new LispError(
      "arity_error",
      `${this.t.name ?? "anonymous fn"} expects ${counts.join(" or ")} argument${counts.length === 1 && counts[0] === "1" ? "" : "s"}, got ${n}`,
    );
  }

  /** A new frame for arity `a` with the captured values in place. */
  frameFor(a: Arity): Frame {
    const f: Frame = new Array(a.frameSize);
    const env = this.env;
    for (let i = 0; i < env.length; i++) f[i] = env[i];
    return f;
  }

  /** The arity that takes `n` arguments. */
  arityFor(n: number): Arity {
    const a = this.t.fixed[n] ?? this.t.variadic ?? undefined;
    if (a === undefined || n < a.required) throw this.arityError(n);
    return a;
  }

  /** A frame for arity `a` with the captured values and `args` in place (the rest as a vector). */
  frameWith(a: Arity, args: Value[]): Frame {
    const f = this.frameFor(a);
    const k = this.t.captures;
    const n = args.length;
    if (a.variadic) {
      for (let i = 0; i < a.required; i++) f[k + i] = args[i];
      f[k + a.required] = n > a.required ? Vec.fromArray(args.slice(a.required)) : null;
    } else {
      for (let i = 0; i < n; i++) f[k + i] = args[i];
    }
    return f;
  }

  call(args: Value[]): Value {
    const a = this.arityFor(args.length);
    return invoke(this, a, this.frameWith(a, args));
  }

  override call1(x: Value): Value {
    const a = this.t.fixed[1];
    if (a === undefined) return this.call([x]);
    const f = this.frameFor(a);
    f[this.t.captures] = x;
    return invoke(this, a, f);
  }

  override call2(x: Value, y: Value): Value {
    const a = this.t.fixed[2];
    if (a === undefined) return this.call([x, y]);
    const f = this.frameFor(a);
    const k = this.t.captures;
    f[k] = x;
    f[k + 1] = y;
    return invoke(this, a, f);
  }
}

/**
 * Calls a function of one or two arguments from suspendable code without an argument array:
 * closures run their suspendable body, anything else goes through callAsync.
 */
export function callAsync1(f: Value, x: Value): Maybe {
  if (f instanceof Closure) {
    const a = f.t.fixed[1];
    if (a !== undefined) {
      const fr = f.frameFor(a);
      fr[f.t.captures] = x;
      return invokeAsync(f, a, fr);
    }
  }
  return callAsync(f, [x], undefined);
}

export function callAsync2(f: Value, x: Value, y: Value): Maybe {
  if (f instanceof Closure) {
    const a = f.t.fixed[2];
    if (a !== undefined) {
      const fr = f.frameFor(a);
      const k = f.t.captures;
      fr[k] = x;
      fr[k + 1] = y;
      return invokeAsync(f, a, fr);
    }
  }
  return callAsync(f, [x, y], undefined);
}

function invoke(c: Closure, a: Arity, f: Frame): Value {
  const r = run;
  // Called back by a builtin in a program that can wait on tools.
  if (r.suspendable) return invokeFromSync(c, a, f);
  if (++r.depth > r.limits.maxCallDepth) throw depthExceeded();
  if (--r.fuel < r.checkAt) slowCheck(r);
  let v: Value;
  try {
    v = a.body(f);
    if (a.loops) {
      while (v === RECUR) {
        chargeLoop(c.t.loc);
        v = a.body(f);
      }
    }
  } catch (e) {
    if (e instanceof LispError && e.fnTrace.length < 16) e.fnTrace.push(c.name);
    throw e;
  }
  r.depth--;
  return v;
}

// Apart from invoke, so the closure it makes costs nothing on the synchronous path.
function invokeFromSync(c: Closure, a: Arity, f: Frame): Value {
  return fromSync(() => invokeAsync(c, a, f));
}

/** Runs a closure's suspendable body: its value, or a promise of it while a tool call is pending. */
function invokeAsync(c: Closure, a: Arity, f: Frame): Maybe {
  const r = run;
  if (++r.depth > r.limits.maxCallDepth) throw depthExceeded();
  if (--r.fuel < r.checkAt) slowCheck(r);
  const body = a.asyncBody ?? (a.asyncBody = r.compileArity!(a.node));
  let v: Maybe;
  try {
    v = body(f);
  } catch (e) {
    throw traced(e, c);
  }
  v = spin(c, a, f, body, v);
  // A frame that waits leaves the stack now; its continuation gets its depth back (after()).
  r.depth--;
  return v;
}

/** Runs the body again while it recurs, and chains on it when it waits. */
function spin(c: Closure, a: Arity, f: Frame, body: AsyncCode, v: Maybe): Maybe {
  try {
    while (v === RECUR && a.loops) {
      chargeLoop(c.t.loc);
      v = body(f);
    }
  } catch (e) {
    throw traced(e, c);
  }
  return isPending(v) ? finishLater(c, a, f, body, v) : v;
}

function finishLater(c: Closure, a: Arity, f: Frame, body: AsyncCode, p: Promise<Value>): Promise<Value> {
  return after(
    p,
    (v) => {
      const x = spin(c, a, f, body, v);
      run.depth--;
      return x;
    },
    (e) => {
      throw traced(e, c);
    },
  );
}

function traced(e: unknown, c: Closure): unknown {
  if (e instanceof LispError && e.fnTrace.length < 16) e.fnTrace.push(c.name);
  return e;
}

/**
 * Calls any callable value from suspendable code: closures run their suspendable body, tools
 * are called, and everything else (builtins, keywords, composed functions) runs synchronously.
 */
export function callAsync(f: Value, args: Value[], loc: SourceLoc | undefined): Maybe {
  if (f instanceof Closure) {
    const a = f.arityFor(args.length);
    return invokeAsync(f, a, f.frameWith(a, args));
  }
  if (f instanceof NativeFn && f.start !== undefined) return f.start(args);
  return syncCall((xs) => callValue(f, xs), args, loc);
}

/** A function made by a builtin (partial, comp, juxt, ...), or a tool passed as a value. */
export class NativeFn extends Fn {
  constructor(
    readonly name: string,
    private readonly impl: (args: Value[]) => Value,
    /** For tools: the call as suspendable code makes it, a promise of the result. */
    readonly start?: (args: Value[]) => Maybe,
    /** Whether `impl` tells the marks what each result holds itself (memoize's cache keeps each answer's mark). */
    private readonly tells = false,
  ) {
    super();
  }
  call(args: Value[]): Value {
    if (this.start !== undefined && run.suspendable) return startFromSync(this.start, args);
    // What it holds (a bound argument, a constant) is out of the marks' sight: its result is told apart by the function's own mark.
    return this.tells ? this.impl(args) : returned(this, this.impl(args));
  }
}

function notCallable(f: Value): LispError {
  const t = typeName(f);
  const article = /^[aeiou]/.test(t) ? "an" : "a";
  const shown = typeof f === "string" ? ` ${JSON.stringify(clipped(f, 20))}` : typeof f === "number" || typeof f === "boolean" ? ` ${String(f)}` : "";
  return new LispError(
    "not_callable",
    `${article} ${t}${shown} is not a function and cannot be called`,
    undefined,
    f === null || typeof f === "number" || typeof f === "string" || typeof f === "boolean"
      ? "the first element of a list is called as a function: check the parentheses, and use a vector [..] for data"
      : undefined,
  );
}

/** Calls any callable value: functions, keywords, maps, sets and vectors. */
export function callValue(f: Value, args: Value[]): Value {
  if (f instanceof Fn) return f.call(args);
  const n = args.length;
  if (f instanceof Keyword) {
    if (n === 1 || n === 2) return lookup(args[0], f, n === 2 ? args[1] : null);
    throw new LispError("arity_error", `keyword :${clipped(f.name, 40)} used as a function expects 1 or 2 arguments (a map and an optional default), got ${n}`);
  }
  if (isMap(f)) {
    if (n === 1 || n === 2) return lookup(f, args[0], n === 2 ? args[1] : null);
    throw new LispError("arity_error", `a map used as a function expects 1 or 2 arguments, got ${n}`);
  }
  if (isSet(f)) {
    if (n === 1) return f.has(args[0]) ? (storedKey(f, args[0]) as Value) : (heldKey(f, args[0]) ?? null);
    throw new LispError("arity_error", `a set used as a function expects 1 argument, got ${n}`);
  }
  if (f instanceof Vec) {
    if (n === 1) {
      const i = asIndex(args[0]);
      if (i === null) throw typeErr(`a vector used as a function expects an integer index, got ${describeIndex(args[0])}`, "vectors are indexed by position; use a map for named keys");
      if (i >= 0 && i < f.size) return took(f, f.get(i) as Value, args[0]);
      throw new LispError("index_out_of_bounds", `index ${i} is out of bounds for a vector of ${f.size}`);
    }
    throw new LispError("arity_error", `a vector used as a function expects 1 argument, got ${n}`);
  }
  throw notCallable(f);
}

// A number is shown (it is the program's own index); anything else only by its type.
const describeIndex = (x: Value): string => (isNumber(x) ? `${typeName(x)} ${prStr(x)}` : typeName(x));

export function call1(f: Value, a: Value): Value {
  return f instanceof Fn ? f.call1(a) : callValue(f, [a]);
}

export function call2(f: Value, a: Value, b: Value): Value {
  return f instanceof Fn ? f.call2(a, b) : callValue(f, [a, b]);
}

function startFromSync(start: (args: Value[]) => Maybe, args: Value[]): Value {
  return fromSync(() => start(args));
}
