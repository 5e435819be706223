// Argument checks shared by builtins: each failure is a type_error that names the builtin,
// what it expected and what it got (with a short rendering of the value).
import { typeErr } from "../errors.js";
import { isSeqable } from "../seq.js";
import { Fn, Keyword, LFloat, type Value, typeName, isMap, isSet } from "../values.js";
import { Vec } from "../vector.js";
import { printSample, prStr } from "../printer.js";

/** `integer 42`, `string "abc"`, `vector [1 2 ...]`: a value as an error message shows it. */
export function describe(v: Value): string {
  const t = typeName(v);
  if (v === null) return "nil";
  if (typeof v === "string") return `string ${JSON.stringify(v.length > 24 ? v.slice(0, 24) + "…" : v)}`;
  if (typeof v === "number" || typeof v === "boolean" || v instanceof LFloat || v instanceof Keyword) return `${t} ${prStr(v)}`;
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
