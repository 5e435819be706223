// The host boundary. Plain JSON-like JS data becomes PTC-Lisp values (object keys become
// keywords) and back (keywords become strings, vectors arrays). Nothing else crosses:
// functions and symbols become nil, class instances are read through their own
// enumerable fields like JSON does, and depth is bounded so cycles cannot hang.
import { Map as IMap, Set as ISet } from "immutable";
import { LispError } from "./errors.js";
import { prStr } from "./printer.js";
import { Fn, Keyword, keyword, LFloat, Regex, Var, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

function tooDeep(maxDepth: number, direction: "into" | "out of"): LispError {
  return new LispError("nesting_too_deep", `data nested deeper than ${maxDepth} levels (or cyclic) cannot cross ${direction} the program`);
}

/** Converts host data to a PTC-Lisp value. */
export function toLisp(x: unknown, maxDepth = 256, depth = 0): Value {
  if (x === null || x === undefined) return null;
  switch (typeof x) {
    case "boolean":
    case "string":
      return x;
    case "number":
      return Object.is(x, -0) ? new LFloat(-0) : x;
    case "bigint":
      return Number.isSafeInteger(Number(x)) ? Number(x) : new LFloat(Number(x));
    case "function":
    case "symbol":
      return null;
  }
  if (isLispValue(x)) return x as Value;
  if (depth >= maxDepth) throw tooDeep(maxDepth, "into");
  // Array.from visits the holes of a sparse array (map skips them): they become nil.
  if (Array.isArray(x)) return Vec.fromArray(Array.from(x, (v) => toLisp(v, maxDepth, depth + 1)));
  if (x instanceof Map) {
    return IMap<Value, Value>().withMutations((m) => {
      for (const [k, v] of x) m.set(typeof k === "string" ? keyword(k) : toLisp(k, maxDepth, depth + 1), toLisp(v, maxDepth, depth + 1));
    });
  }
  if (x instanceof Set) return ISet<Value>([...x].map((v) => toLisp(v, maxDepth, depth + 1)));
  if (x instanceof Date) return Number.isNaN(x.getTime()) ? null : x.toISOString();
  const obj = x as Record<string, unknown>;
  if (typeof obj.toJSON === "function" && Object.getPrototypeOf(obj) !== Object.prototype && Object.getPrototypeOf(obj) !== null) {
    return toLisp(obj.toJSON(), maxDepth, depth + 1);
  }
  return IMap<Value, Value>().withMutations((m) => {
    for (const k of Object.keys(obj)) m.set(keyword(k), toLisp(obj[k], maxDepth, depth + 1));
  });
}

function isLispValue(x: object): boolean {
  return x instanceof Vec || isMap(x) || isSet(x) || x instanceof Keyword || x instanceof LFloat || x instanceof Fn || x instanceof Regex || x instanceof Var;
}

/** Sets a property as an own data property, so "__proto__" is just a key. */
function setOwn(o: Record<string, unknown>, k: string, v: unknown): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

function keyString(k: Value): string {
  if (typeof k === "string") return k;
  if (k instanceof Keyword) return k.name;
  return prStr(k);
}

/** Converts a PTC-Lisp value to plain JS data for the host. */
export function toHost(v: Value, maxDepth = 256, depth = 0): unknown {
  if (v === null || typeof v === "boolean" || typeof v === "number" || typeof v === "string") return v;
  if (v instanceof LFloat) return v.v;
  if (v instanceof Keyword) return v.name;
  if (depth >= maxDepth) throw tooDeep(maxDepth, "out of");
  if (v instanceof Vec) return v.toArray().map((x) => toHost(x, maxDepth, depth + 1));
  if (isSet(v)) return v.toArray().map((x) => toHost(x, maxDepth, depth + 1));
  if (isMap(v)) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of v) setOwn(o, keyString(k), toHost(x, maxDepth, depth + 1));
    return o;
  }
  return prStr(v);
}
