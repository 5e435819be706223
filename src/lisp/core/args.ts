// Argument checks shared by builtins: each failure is a type_error that names the builtin,
// what it expected and what it got (with a short rendering of the value).
import { typeErr, type LispError } from "../errors.js";
import { builtFrom, charge, checkCollectionSize, checkStringLength, run, tick } from "../runtime.js";
import { entries, isSeqable } from "../seq.js";
import { clipped } from "../cuts.js";
import { chars } from "../text.js";
import { Fn, Keyword, LFloat, Regex, type Value, typeName, isMap, isSet } from "../values.js";
import { Vec } from "../vector.js";
import { formatFloat, printChecked, PrintOverflow, printSample, prStr } from "../printer.js";

/** `integer 42`, `string "abc"`, `vector [1 2 ...]`: a value as an error message shows it. */
export function describe(v: Value): string {
  const t = typeName(v);
  if (v === null) return "nil";
  if (typeof v === "string") return `string ${JSON.stringify(clipped(v, 24))}`;
  // A keyword is as long as the text it was made from: a long name by its start.
  if (v instanceof Keyword) return `${t} :${clipped(v.name, 40)}`;
  if (typeof v === "number" || typeof v === "boolean" || v instanceof LFloat) return `${t} ${prStr(v)}`;
  // A bounded preview: describing a huge collection must not print all of it.
  if (v instanceof Vec || isMap(v) || isSet(v)) return `${t} ${printSample(v, { maxItems: 4, maxChars: 40 }).text}`;
  return t;
}

export function expectNumber(who: string, x: Value, hint?: string): number {
  if (typeof x === "number") return x;
  if (x instanceof LFloat) return x.v;
  throw typeErr(`${who} expects a number, got ${describe(x)}`, hint);
}

/** Whether callValue can call x: functions, keywords, maps, sets and vectors. */
export function isCallable(x: Value): boolean {
  return x instanceof Fn || x instanceof Keyword || isMap(x) || isSet(x) || x instanceof Vec;
}

export function expectFn(who: string, x: Value): Value {
  if (isCallable(x)) return x;
  throw typeErr(`${who} expects a function, got ${describe(x)}`, isSeqable(x) ? "check the argument order: the function comes first, e.g. (map f coll)" : undefined);
}

export const ARG_ORDER_HINT = "check the argument order: the function comes first and the collection last, e.g. (map f coll)";

export function notColl(who: string, x: Value): LispError {
  return typeErr(`${who} expects a collection, got ${describe(x)}`, notCollHint(x));
}

function notCollHint(x: Value): string | undefined {
  // A function in the collection's place usually comes from (-> coll (filter f)), which threads
  // the collection in first.
  if (x instanceof Fn) return `${ARG_ORDER_HINT}; in a -> pipeline, sequence functions need ->>`;
  if (x instanceof Keyword) return `a keyword is a function here: check the argument order, e.g. (map :${x.name} coll)`;
  return typeof x === "number" || x instanceof LFloat ? "check the argument order: the collection comes last; in a -> pipeline, sequence functions need ->>" : undefined;
}

/**
 * The elements of any seqable value as a fresh array the caller may reuse: vectors, sets,
 * maps (as [k v] entries), strings (as characters), nil (empty). A type error naming `who` otherwise.
 */
export function items(who: string, x: Value): Value[] {
  if (x instanceof Vec) return x.toArray();
  if (x === null) return [];
  if (typeof x === "string") {
    const cs = chars(x);
    checkCollectionSize(cs.length);
    return cs;
  }
  if (isMap(x)) return entries(x);
  if (isSet(x)) return x.toArray();
  throw notColl(who, x);
}

/**
 * Like `items`, for functions whose result depends on element positions. As in Clojure, a set
 * gives its elements in its own order (sorted for a sorted set): any one element for first.
 */
export function ordered(who: string, x: Value): Value[] {
  const xs = items(who, x);
  // The copy is of every element, however few the caller keeps ((last s), (take 1 s),
  // take-while that stops at once): charged here, so a loop of such calls reaches the clock.
  charge(xs.length);
  return xs;
}

/** A count or index argument: a finite number, rounded with `round` (take/drop round up, like Clojure). */
export function countArg(who: string, x: Value, round: (n: number) => number = Math.trunc): number {
  const n = typeof x === "number" ? x : x instanceof LFloat ? x.v : NaN;
  if (Number.isNaN(n)) {
    const coll = x instanceof Vec || isMap(x) || isSet(x);
    throw typeErr(`${who} expects a number for its count or index, got ${describe(x)}`, coll ? "check the argument order; in a -> pipeline, sequence functions need ->>" : x !== null && typeof x === "object" ? "check the argument order" : undefined);
  }
  const r = round(n);
  // Rounded from a hidden float, it is computed from it: a message quoting it shows a stand-in.
  return r === x ? r : (builtFrom(x, r) as number);
}

// ---------------------------------------------------------------------------------------
// str of one value: shared by the builtins that show a value as text (str, format, replace, escape, assert)

/** A top-level value as str shows it: nil is "", strings raw, everything else printed. */
export function strPart(v: Value, room: number): string {
  if (typeof v === "string") return v;
  if (v === null) return "";
  if (typeof v === "number") return Number.isInteger(v) ? String(v) : floatText(v);
  if (v instanceof LFloat) return floatText(v.v);
  if (typeof v === "boolean") return v ? "true" : "false";
  const limits = run.limits;
  if (v instanceof Keyword) {
    // The colon makes a name at the limit one character longer than any string may be.
    if (v.name.length >= room) checkStringLength(limits.maxStringLength - room + v.name.length + 1);
    return ":" + v.name;
  }
  if (v instanceof Regex) return v.source;
  return printCharged(v, false, room);
}

/**
 * A collection printed whole within `room` characters (str, pr-str, println and the builtins that
 * show a value as text), charged for each element it printed and each 16 characters it wrote:
 * charged by text alone, (vec (repeat n [])) paid for one element in five.
 */
export function printCharged(v: Value, readably: boolean, room: number): string {
  const limits = run.limits;
  let items = 0;
  try {
    const s = printChecked(v, readably, Math.max(0, room), limits.maxNestingDepth, (i) => {
      items = i + 1;
      tick(i);
    });
    charge(Math.max(items, s.length >>> 4));
    return s;
  } catch (e) {
    if (e instanceof PrintOverflow) {
      charge(items);
      checkStringLength(limits.maxStringLength - room + e.length);
    }
    throw e;
  }
}

// Clojure's str shows the IEEE specials as Java does; inside collections they stay EDN.
function floatText(x: number): string {
  if (Number.isNaN(x)) return "NaN";
  if (x === Infinity) return "Infinity";
  if (x === -Infinity) return "-Infinity";
  return formatFloat(x);
}

/** str semantics for one value, within the string limit: what a builtin shows of a value a function gave it. */
export function strValue(v: Value): string {
  return strPart(v, run.limits.maxStringLength);
}
