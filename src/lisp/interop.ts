// The host boundary. Plain JSON-like JS data becomes PTC-Lisp values (object keys become
// keywords) and back (keywords become strings, vectors arrays). Data is read once, here, and
// only plain data crosses: holes of sparse arrays become nil, Maps, Sets and Dates convert, an
// object with toJSON converts as JSON would, and anything else (a function, a symbol, binary
// data, another class's instance, a cycle, an object whose reading throws) is refused with the
// path where it was, in our words, never the host's.
//
// Both directions are bounded walks (a Budget): every value visited costs one unit of fuel (a
// value reached twice through shared structure costs twice; coming in, a host object met again
// is not read again: what it cost the first time is charged at once and its value reused, so 30
// levels each holding the previous one twice are refused in a few hundred steps), the clock is read every 4,096
// values, and a collection's size is read and checked against maxCollectionSize before any of
// it is copied, so a sparse `new Array(1e9)` or a Proxy whose length lies is refused at once.
import { types } from "node:util";
import { Map as IMap, Set as ISet } from "ptc-immutable";
import { isStackOverflow, LispError, nestedTooDeep, ours } from "./errors.js";
import { isFieldName, isHiddenKey } from "./hidden-names.js";
import { defaultLimits, type Limits } from "./limits.js";
import { cutPoint } from "./cuts.js";
import { printChecked, printSample, PrintOverflow, quoteString } from "./printer.js";
import { defaultClock, fuelExhausted, limitError, timeoutError } from "./runtime.js";
import { Fn, Keyword, keyword, LFloat, Reduced, Regex, Var, type LMap, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";
import type { ToolCallInfo, ToolCallRecord, ToolSpec } from "./evaluate.js";

type BudgetLimits = Pick<Limits, "maxFuel" | "timeoutMs" | "maxCollectionSize" | "maxBoundaryValues" | "maxBoundaryChars" | "maxNestingDepth" | "maxStringLength">;

// The clock is read at a walk's first value, then at intervals that double up to this many
// values while reads are cheap; a stretch that took more than an eighth of the time limit (slow
// getters or Proxy traps, host code we cannot interrupt) starts the intervals over, so a walk
// overruns its limit by about a quarter of it at most, never by 4,096 slow reads.
const CLOCK_EVERY = 4096;

/** What one walk across the boundary may spend: values (maxBoundaryValues), characters of text (maxBoundaryChars), fuel and time. */
export class Budget {
  private ticks = 0;
  private every = 1;
  private lastRead: number | undefined;
  /** Values left before the data is too big to cross. */
  room: number;
  /** Characters of strings left before the data is too big to cross. */
  chars: number;
  constructor(
    readonly limits: BudgetLimits = defaultLimits,
    /** Values it may still visit; the caller charges what was spent to its run. */
    public fuel: number = limits.maxFuel,
    /** The run's clock reading past which the walk stops with `timeout`. */
    readonly deadline: number = Infinity,
    /** The run's clock (a host's injected one included), which `deadline` is on. */
    readonly now: () => number = () => performance.now(),
    /** The error the walk stops with past its deadline. */
    private readonly late: () => LispError = () => timeoutError(limits.timeoutMs),
  ) {
    this.room = limits.maxBoundaryValues;
    this.chars = limits.maxBoundaryChars;
  }

  /** A string of `length` characters crossed; `tooMuch` says so when the characters run out. */
  text(length: number, tooMuch: () => LispError): void {
    if ((this.chars -= length) < 0) throw tooMuch();
  }

  /** One value visited; `tooBig` says how big the whole is when the room runs out. */
  step(tooBig?: () => LispError): void {
    if (--this.room < 0 && tooBig !== undefined) throw tooBig();
    if (--this.fuel < 0) throw fuelExhausted(this.limits);
    this.tick();
  }

  /** A part walked before met again (shared structure): the values and characters it spent then, spent again at once. */
  again(values: number, chars: number, tooBig: () => LispError, tooMuch: () => LispError): void {
    if ((this.room -= values) < 0) throw tooBig();
    if ((this.fuel -= values) < 0) throw fuelExhausted(this.limits);
    this.text(chars, tooMuch);
    this.tick();
  }

  /** One unit of work that spends no values (printing what was already converted): the clock alone. */
  tick(): void {
    if (++this.ticks < this.every || this.deadline === Infinity) return;
    this.ticks = 0;
    const t = this.now();
    if (t > this.deadline) throw this.late();
    this.every = this.lastRead !== undefined && t - this.lastRead > this.limits.timeoutMs / 8 ? 1 : Math.min(this.every * 2, CLOCK_EVERY);
    this.lastRead = t;
  }
}

/**
 * The record of a call the host ran with other arguments than the program's (`ToolCallInfo.ranWith`):
 * they are what ran, the program's kept apart. Each string and key of them is as `shown` gives it:
 * a host may write a hidden value into its edit (`Bearer K7Z2Q9-…`), which the record must not show.
 */
export function ranWith(record: ToolCallRecord, given: Record<string, unknown>, shown: (text: string) => string): void {
  if (!Object.hasOwn(record, "asked")) record.asked = record.args;
  // The record's own copy (textsShown copies what it walks): the host's object may change after the call.
  let copy: unknown;
  try {
    copy = structuredClone(given);
  } catch {
    copy = given;
  }
  record.args = textsShown(copy, shown, 0);
}

/** Arrays and plain objects copied with each string and key as `shown` gives it; other values as they are. */
function textsShown(x: unknown, shown: (text: string) => string, depth: number): unknown {
  if (typeof x === "string") return shown(x);
  // Deeper than a record's arguments are hidden (Marks.hide): kept as it is.
  if (typeof x !== "object" || x === null || depth > 64) return x;
  if (Array.isArray(x)) return x.map((v: unknown) => textsShown(v, shown, depth + 1));
  const proto: unknown = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return x;
  // Entries, made an object at the end: assigning a key "__proto__" would set the prototype instead.
  return Object.fromEntries(Object.entries(x).map(([k, v]) => [shown(k), textsShown(v, shown, depth + 1)]));
}

/**
 * Keeps the result as the program received it on its call's record (`ToolCallRecord.value`), not
 * enumerable: it holds hidden values as they are, where the record's `result` has stand-ins, and
 * a host that logs or copies its records (`onToolCall`, `EvalResult.toolCalls`) must not write them.
 */
export function keepValue(record: ToolCallRecord, value: Value): void {
  Object.defineProperty(record, "value", { value, enumerable: false, writable: true, configurable: true });
}

/** What the record of a call the host held says (`ToolCallInfo.answering`): it never ran, so it did not fail either. */
export const HELD_CALL = "held by the host: the call waits for approval and did not run";

/** What the record of a call refused because the run keeps no more holds for its arguments (`ToolCallInfo.answering`): no program's arguments are a string. */
export const UNKEPT_ARGS = "(not kept: the run had kept more than maxToolResultSize of tool calls)";

/**
 * When a call is reported (`onToolCall`): at once, or for a spec that `reportsAnswer` once it
 * tells how it answers (at the latest when the call ends); a held call never.
 */
export function reporter(record: ToolCallRecord, spec: ToolSpec, onToolCall: ((call: ToolCallRecord, done: boolean) => void) | null | undefined): { answering?: NonNullable<ToolCallInfo["answering"]>; end(): void } {
  if (spec.reportsAnswer !== true) {
    onToolCall?.(record, false);
    return { end: () => onToolCall?.(record, true) };
  }
  let told = false;
  // A replayed call's duration is the saved run's: the replay answers at once.
  let recordedMs: number | undefined;
  const start = (): void => {
    if (told) return;
    told = true;
    onToolCall?.(record, false);
  };
  return {
    answering(how, durationMs) {
      if (told || record.held === true) return;
      // Said at once: a cut that ends the evaluation before the hold's rejection lands still finds it held.
      if (how === "held") Object.assign(record, { held: true, error: HELD_CALL });
      // Told as it fails (end).
      else if (how === "refused") Object.assign(record, { args: UNKEPT_ARGS, size: 0 });
      else {
        if (how === "replayed") {
          record.replayed = true;
          recordedMs = durationMs;
        }
        start();
      }
    },
    end() {
      if (record.held === true) return;
      if (recordedMs !== undefined) record.durationMs = recordedMs;
      start();
      onToolCall?.(record, true);
    },
  };
}

/** What a walk's data spent of its boundary limits: characters of its strings plus one per value. */
export function crossedSize(b: Budget): number {
  return b.limits.maxBoundaryValues - b.room + (b.limits.maxBoundaryChars - b.chars);
}

/**
 * A tool result already converted on the other side of a thread boundary (the isolated mode's
 * host), with what converting it cost there: the run is charged the same as for its own conversion.
 */
export class Converted {
  constructor(
    readonly value: Value,
    /** Values visited (fuel). */
    readonly steps: number,
    readonly ms: number,
  ) {}

  /** Whether `x` is one (safe on anything a tool returns, a revoked Proxy included). */
  static is(x: unknown): x is Converted {
    try {
      return x instanceof Converted;
    } catch {
      return false;
    }
  }
}

/**
 * A tool's answer in a box, so the promise machinery never reads `then` from it (a revoked
 * Proxy throws host text there): a thenable is awaited, anything else is left for conversion.
 */
export function boxed(r: unknown): { value: unknown } | Promise<{ value: unknown }> {
  let then: unknown;
  try {
    then = typeof r === "object" && r !== null ? (r as { then?: unknown }).then : undefined;
  } catch {
    return { value: r };
  }
  return typeof then === "function" ? Promise.resolve(r).then((v) => boxed(v)) : { value: r };
}

function tooDeep(maxDepth: number, direction: "into" | "out of"): LispError {
  return nestedTooDeep(maxDepth, `cross ${direction} the program`);
}

/** Something that is not plain data, and where it was. */
class Refused {
  constructor(
    readonly what: string,
    readonly path: ReadonlyArray<string | number>,
  ) {}
}

/** A place in data as JavaScript writes it; in hidden context (`data/_creds`) a key that is not a field name is written `[…]`. */
function pathText(where: string, path: ReadonlyArray<string | number>): string {
  const hidden = where.startsWith("data/") && isHiddenKey(where.slice("data/".length));
  let out = where;
  for (const p of path) out += typeof p === "number" ? `[${p}]` : hidden && !isFieldName(p) ? "[…]" : /^[A-Za-z_$][\w$-]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`;
  return out;
}

// Whether a thrown value is one of ours. A host may throw anything, including a Proxy whose
// traps throw: even `instanceof` on it must not escape.
function isOurs(e: unknown): boolean {
  try {
    return e instanceof Refused || e instanceof LispError;
  } catch {
    return false;
  }
}

// Only parts bigger than this are remembered: plain records cost no bookkeeping, and a small part
// met again is walked again, which costs at most this much each time.
const MEMO_FROM = 64;

class Inbound {
  /** Keys from the root to the value being converted, for the error's path. */
  readonly path: Array<string | number> = [];
  /** Objects from the root down: a cycle is an object met again among its own ancestors. */
  readonly ancestors: object[] = [];
  /** Objects converted whole that cost more than MEMO_FROM values, with their value, the values and characters that cost, and how many levels they nest below themselves. */
  private readonly done = new Map<object, { value: Value; values: number; chars: number; height: number }>();
  /** The deepest level an object was met at so far: a converted object's height is read from it. */
  private deepest = 0;
  constructor(
    readonly budget: Budget,
    readonly maxDepth: number,
    readonly where: string,
  ) {}

  refuse(what: string): Refused {
    return new Refused(what, this.path.slice());
  }

  tooLarge(n: number): LispError {
    const max = this.budget.limits.maxCollectionSize;
    return new LispError("collection_too_large", `${pathText(this.where, this.path)} has ${n} elements, over the limit of ${max} (maxCollectionSize)`, undefined, "give the program a smaller slice of the data, or page through it with a tool");
  }

  private readonly tooBig = (): LispError =>
    new LispError(
      "collection_too_large",
      `${this.where} holds more than ${this.budget.limits.maxBoundaryValues} values (shared parts counted each time they appear), over the limit (maxBoundaryValues)`,
      undefined,
      "give the program a smaller slice of the data, or page through it with a tool",
    );

  private readonly tooMuchText = (): LispError =>
    new LispError(
      "string_too_large",
      `${this.where} holds more than ${this.budget.limits.maxBoundaryChars} characters of text (a string counted each time it appears), over the limit (maxBoundaryChars)`,
      undefined,
      "give the program the part of the text it needs, or page through it with a tool",
    );

  convert(x: unknown, depth: number): Value {
    const budget = this.budget;
    if (typeof x === "object" && x !== null && this.done.size > 0) {
      const seen = this.done.get(x);
      if (seen !== undefined) {
        // Met again deeper than before, it nests deeper too: the depth limit holds for it as it unfolds.
        if (depth + seen.height >= this.maxDepth) throw tooDeep(this.maxDepth, "into");
        budget.again(seen.values, seen.chars, this.tooBig, this.tooMuchText);
        if (depth + seen.height > this.deepest) this.deepest = depth + seen.height;
        return seen.value;
      }
    }
    const room = budget.room;
    const chars = budget.chars;
    budget.step(this.tooBig);
    if (x === null || x === undefined) return null;
    switch (typeof x) {
      case "boolean":
        return x;
      case "string":
        this.budget.text(x.length, this.tooMuchText);
        return x;
      case "number":
        // An integer past ±2^53 was already rounded when the host made it (JSON.parse does): it
        // comes in as the float it is, as a bigint that large does, never as an exact integer.
        return Object.is(x, -0) ? new LFloat(-0) : Number.isInteger(x) && !Number.isSafeInteger(x) ? new LFloat(x) : x;
      case "bigint":
        return Number.isSafeInteger(Number(x)) ? Number(x) : new LFloat(Number(x));
      case "function":
        throw this.refuse("a function");
      case "symbol":
        throw this.refuse("a symbol");
    }
    this.ancestors[depth] = x as object;
    try {
      if (isLispValue(x as object)) return x as Value;
      if (depth >= this.maxDepth) throw this.cycleOrTooDeep();
      const above = this.deepest;
      this.deepest = depth;
      const value = this.object(x as object, depth);
      if (room - budget.room > MEMO_FROM) this.done.set(x as object, { value, values: room - budget.room, chars: chars - budget.chars, height: this.deepest - depth });
      if (above > this.deepest) this.deepest = above;
      return value;
    } catch (e) {
      if (isOurs(e)) throw e;
      // Deeper than the host's stack reads (under a raised maxNestingDepth): said as such, not as
      // the object it gave out at, whose path alone is thousands of characters.
      if (isStackOverflow(e)) throw new LispError("nesting_too_deep", `${this.where} is nested too deeply to cross into the program`, undefined, "give programs shallower data");
      // A revoked Proxy, a trap or getter that throws, a toJSON that fails: not data.
      throw this.refuse("an object that cannot be read (reading it threw)");
    } finally {
      this.ancestors.length = depth;
    }
  }

  // Data this deep is refused; when the reason is a cycle, the error names where it closes.
  private cycleOrTooDeep(): Refused | LispError {
    const a = this.ancestors;
    for (let i = 1; i < a.length; i++) {
      if (a.indexOf(a[i]) < i) return new Refused("a cycle (it contains itself)", this.path.slice(0, i));
    }
    return tooDeep(this.maxDepth, "into");
  }

  private at(key: string | number, x: unknown, depth: number): Value {
    this.path.push(key);
    const v = this.convert(x, depth + 1);
    this.path.pop();
    return v;
  }

  private object(x: object, depth: number): Value {
    if (Array.isArray(x)) {
      // The length first: a sparse or lying length is refused before anything is allocated.
      const n = x.length;
      if (!(n <= this.budget.limits.maxCollectionSize)) throw this.tooLarge(n);
      const out = new Array<Value>(n);
      // Indexing visits the holes of a sparse array (map would skip them): they become nil.
      for (let i = 0; i < n; i++) out[i] = this.at(i, x[i], depth);
      return Vec.fromArray(out);
    }
    if (x instanceof Map) {
      if (!(x.size <= this.budget.limits.maxCollectionSize)) throw this.tooLarge(x.size);
      return IMap<Value, Value>().withMutations((m) => {
        for (const [k, v] of x) {
          const key = typeof k === "string" ? this.key(k) : this.at(String(k), k, depth);
          m.set(key, this.at(typeof k === "string" ? k : String(k), v, depth));
        }
      });
    }
    if (x instanceof Set) {
      if (!(x.size <= this.budget.limits.maxCollectionSize)) throw this.tooLarge(x.size);
      const items: Value[] = [];
      let i = 0;
      for (const v of x) items.push(this.at(i++, v, depth));
      return ISet<Value>(items);
    }
    if (x instanceof Date) return Number.isNaN(x.getTime()) ? null : x.toISOString();
    if (ArrayBuffer.isView(x) || x instanceof ArrayBuffer) throw this.refuse(`binary data (${className(x)})`);
    const obj = x as Record<string, unknown>;
    const proto = Object.getPrototypeOf(obj) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      if (typeof obj.toJSON === "function") return this.convert(obj.toJSON(), depth + 1);
      throw this.refuse(`${className(obj)} instance (not plain data)`);
    }
    const keys = Object.keys(obj);
    if (keys.length > this.budget.limits.maxCollectionSize) throw this.tooLarge(keys.length);
    return IMap<Value, Value>().withMutations((m) => {
      for (const k of keys) m.set(this.key(k), this.read(obj, k, depth));
    });
  }

  private key(k: string): Keyword {
    this.budget.text(k.length, this.tooMuchText);
    return keyword(k);
  }

  /** Reads one property; a getter that throws is refused at its key. */
  private read(obj: Record<string, unknown>, k: string, depth: number): Value {
    let v: unknown;
    try {
      v = obj[k];
    } catch {
      this.path.push(k);
      throw this.refuse("a getter that throws");
    }
    return this.at(k, v, depth);
  }
}

/**
 * Converts host data to a PTC-Lisp value. `where` names the data in the error a refused value
 * gives (`data/orders`, `the result of tool/search`); `budget` bounds the walk (by default the
 * default limits, with no clock).
 */
export function toLisp(x: unknown, maxDepth = 256, depth = 0, where = "host data", budget: Budget = new Budget()): Value {
  try {
    return new Inbound(budget, maxDepth, where).convert(x, depth);
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    throw refusal(where, e);
  }
}

function refusal(where: string, e: Refused): LispError {
  return new LispError("type_error", `${pathText(where, e.path)} is ${e.what}, which cannot cross into the program`, undefined, "give programs plain data: objects, arrays, strings, numbers, booleans and null");
}

/**
 * The host value of data/key. A getter that throws is refused as one inside a value is: its
 * message, which may quote the very value (a hidden one too), reaches no program or prompt.
 */
export function contextValue(ctx: Readonly<Record<string, unknown>>, key: string): unknown {
  try {
    return ctx[key];
  } catch (e) {
    // A context of our own making (ctxJson's, read lazily) refuses its values with our errors.
    if (ours(e) !== null) throw e;
    throw refusal(`data/${key}`, new Refused("a getter that throws", []));
  }
}

/** What a context is said to be when readableContext refuses it. */
export const UNLISTED_CONTEXT = "one whose keys cannot be listed (listing them threw)";

/**
 * A context whose keys are read through host code (a Proxy's ownKeys and getOwnPropertyDescriptor
 * traps) as a plain object: its keys listed once, here, and each value still read through it when
 * data/key is. Null when listing them throws: the trap's message may quote a secret, and every
 * later reader (hidden keys, the prompt, the worker's copy) would meet the throw again. A
 * context that is not a Proxy is returned as it is.
 */
export function readableContext(ctx: object): Record<string, unknown> | null {
  if (!types.isProxy(ctx)) return ctx as Record<string, unknown>;
  try {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(ctx)) Object.defineProperty(out, k, { enumerable: true, configurable: true, get: () => (ctx as Record<string, unknown>)[k] });
    return out;
  } catch {
    return null;
  }
}

/**
 * A run's context read before its program starts (the isolated mode hands it to the worker, an
 * agent shows it in the prompt): each key within the run's size limits on its own, as a program
 * reading it would be, and all of them within one time limit from now on the run's clock.
 */
export class ContextReader {
  private readonly deadline: number;
  private readonly values = new Map<string, Value>();

  /** `shown` gives a value as a prompt shows it, when the run has hidden context (`publicShown`). */
  constructor(
    readonly limits: Limits,
    private readonly now: () => number = defaultClock,
    private readonly shown?: (v: Value) => Value,
  ) {
    this.deadline = now() + limits.timeoutMs;
  }

  /** data/key's value as the program sees it (converted once); throws the LispError reading it gives. */
  value(key: string, x: unknown): Value {
    let v = this.values.get(key);
    if (v === undefined) {
      v = toLisp(x, this.limits.maxNestingDepth, 0, `data/${key}`, this.budget(key));
      this.values.set(key, v);
    }
    return v;
  }

  /** data/key's value as a prompt shows it: as the program prints it, hidden texts it shares with hidden context as stand-ins. */
  prompted(key: string, x: unknown): Value {
    const v = this.value(key, x);
    return this.shown === undefined ? v : this.shown(v);
  }

  /** data/key as text in a prompt: a string as it is, any other value as EDN, within the string limit. */
  show(key: string, x: unknown): string {
    const v = this.prompted(key, x);
    if (typeof v === "string") return v;
    const budget = this.budget(key);
    try {
      return printChecked(v, true, this.limits.maxStringLength, this.limits.maxNestingDepth, () => budget.tick());
    } catch (e) {
      if (!(e instanceof PrintOverflow)) throw e;
      throw new LispError("string_too_large", `data/${key} prints to more than ${this.limits.maxStringLength} characters (maxStringLength)`);
    }
  }

  private budget(key: string): Budget {
    return new Budget(this.limits, this.limits.maxFuel, this.deadline, this.now, () => readTimeout(key, this.limits.timeoutMs));
  }
}

/** The time limit's error when it passes while a context value is read (in process or before the program starts). */
export function readTimeout(key: string, timeoutMs: number): LispError {
  return limitError("timeout", `reading data/${key} took longer than the time limit of ${timeoutMs} ms (timeoutMs)`, "give the run less context data, or let a tool fetch it in pages");
}

function className(x: object): string {
  const name = (Object.getPrototypeOf(x) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === "string" && name !== "" ? name : "an unknown";
}

/** Whether an object is a PTC-Lisp value (a collection, keyword, function...), not host data. */
export function isLispValue(x: object): boolean {
  return x instanceof Vec || isMap(x) || isSet(x) || x instanceof Keyword || x instanceof LFloat || x instanceof Fn || x instanceof Regex || x instanceof Var || x instanceof Reduced;
}

/** Sets a property as an own data property, so "__proto__" is just a key. */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

/**
 * How many values a walk of `v` reaches, shared ones counted each time: computed per distinct
 * node (memoized by identity), so it says how big a result is without unfolding it.
 */
export function unfoldedSize(v: Value, cap = Infinity, memo = new Map<object, number>()): number {
  if (!(v instanceof Vec || isMap(v) || isSet(v))) return 1;
  const known = memo.get(v);
  if (known !== undefined) return known;
  let n = 1;
  // Past the cap the count is only "more than cap": it stops early and is not remembered.
  if (isMap(v)) {
    for (const [k, x] of v) if ((n += unfoldedSize(k, cap, memo) + unfoldedSize(x, cap, memo)) > cap) return n;
  } else {
    for (const x of v as Iterable<Value>) if ((n += unfoldedSize(x, cap, memo)) > cap) return n;
  }
  memo.set(v, n);
  return n;
}

// A walk out that has gone this far checks the whole size first (once, memoized by identity):
// shared structure too big to cross is refused at once instead of after unfolding up to the limit.
const PRECHECK_AFTER = 4096;

class Outbound {
  constructor(
    readonly budget: Budget,
    readonly maxDepth: number,
    readonly root: Value,
    readonly oneKeyEach: boolean,
  ) {}

  private readonly tooBig = (): LispError => {
    const max = this.budget.limits.maxBoundaryValues;
    return new LispError(
      "collection_too_large",
      `the value is too big to cross out of the program: it unfolds into ${unfoldedSize(this.root)} values (shared parts counted each time they appear), over the limit of ${max} (maxBoundaryValues)`,
      undefined,
      "return or pass a summary (counts, a sample, the fields needed), not the whole structure",
    );
  };

  private readonly tooMuchText = (): LispError =>
    new LispError(
      "string_too_large",
      `the value is too big to cross out of the program: its strings hold more than ${this.budget.limits.maxBoundaryChars} characters (a string counted each time it appears), over the limit (maxBoundaryChars)`,
      undefined,
      "return or pass the part of the text needed, or a summary, not many copies of it",
    );

  private spent = 0;

  private spend(): void {
    if (++this.spent === PRECHECK_AFTER && unfoldedSize(this.root, this.budget.limits.maxBoundaryValues) > this.budget.limits.maxBoundaryValues) throw this.tooBig();
    this.budget.step(this.tooBig);
  }

  convert(v: Value, depth: number): unknown {
    if (typeof v === "string") {
      this.budget.text(v.length, this.tooMuchText);
      return v;
    }
    if (v === null || typeof v === "boolean" || typeof v === "number") return v;
    if (v instanceof LFloat) return v.v;
    if (v instanceof Keyword) {
      this.budget.text(v.name.length, this.tooMuchText);
      return v.name;
    }
    if (depth >= this.maxDepth) throw tooDeep(this.maxDepth, "out of");
    if (v instanceof Vec || isSet(v)) {
      const out: unknown[] = [];
      for (const x of v as Iterable<Value>) {
        this.spend();
        out.push(this.convert(x, depth + 1));
      }
      return out;
    }
    if (isMap(v)) {
      const o: Record<string, unknown> = {};
      for (const [k, x] of v) {
        this.spend();
        const key = this.keyString(k);
        if (this.oneKeyEach && Object.hasOwn(o, key)) throw this.sameKey(v, k, key);
        setOwn(o, key, this.convert(x, depth + 1));
      }
      return o;
    }
    return this.text(v);
  }

  // Two keys of one map that are one string for the host (:total and "total", 1 and "1"): the
  // host would keep one value and lose the other without a word.
  private sameKey(m: LMap, k: Value, key: string): LispError {
    let first: Value = key;
    for (const [j] of m) {
      if (j !== k && this.keyString(j) === key) {
        first = j;
        break;
      }
    }
    const shown = (x: Value): string => printSample(x, { maxChars: 60 }).text;
    return new LispError(
      "value_error",
      `a map crossing out of the program has the keys ${shown(first)} and ${shown(k)}, which are both ${quoteString(key.length > 60 ? key.slice(0, cutPoint(key, 60)) + "…" : key)} for the host`,
      undefined,
      "use keys of one kind in a map for the host: all keywords or all strings",
    );
  }

  private keyString(k: Value): string {
    if (typeof k !== "string" && !(k instanceof Keyword)) return this.text(k);
    const key = typeof k === "string" ? k : k.name;
    this.budget.text(key.length, this.tooMuchText);
    return key;
  }

  // A key that is a collection, or a function, crosses as its EDN text, within the string limit.
  private text(v: Value): string {
    const limits = this.budget.limits;
    try {
      const s = printChecked(v, true, limits.maxStringLength, limits.maxNestingDepth, () => this.budget.step());
      this.budget.text(s.length, this.tooMuchText);
      return s;
    } catch (e) {
      if (!(e instanceof PrintOverflow)) throw e;
      throw new LispError("string_too_large", `a map key or value printed for the host is over the limit of ${limits.maxStringLength} characters (maxStringLength)`);
    }
  }
}

/**
 * Converts a PTC-Lisp value to plain JS data for the host, within `budget`. Two keys of a map
 * that are one string for the host (:a and "a"): the last one wins, or with `oneKeyEach` (a
 * tool's arguments, which the tool gets only this way) a `value_error`.
 */
export function toHost(v: Value, maxDepth = 256, budget: Budget = new Budget(), oneKeyEach = false): unknown {
  return new Outbound(budget, maxDepth, v, oneKeyEach).convert(v, 0);
}
