// The host boundary. Plain JSON-like JS data becomes PTC-Lisp values (object keys become
// keywords) and back (keywords become strings, vectors arrays). Data is read once, here, and
// only plain data crosses: holes of sparse arrays become nil, Maps, Sets and Dates convert, an
// object with toJSON converts as JSON would, and anything else (a function, a symbol, binary
// data, another class's instance, a getter that throws) is refused with the path where it was.
// Depth is bounded so cycles cannot hang.
import { Map as IMap, Set as ISet } from "immutable";
import { LispError } from "./errors.js";
import { prStr } from "./printer.js";
import { Fn, Keyword, keyword, LFloat, Regex, Var, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

function tooDeep(maxDepth: number, direction: "into" | "out of"): LispError {
  return new LispError("nesting_too_deep", `data nested deeper than ${maxDepth} levels (or cyclic) cannot cross ${direction} the program`);
}

/** Something that is not plain data, and where it was (filled in on the way out). */
class Refused {
  readonly path: Array<string | number> = [];
  constructor(readonly what: string) {}
}

function pathText(path: ReadonlyArray<string | number>): string {
  let out = "";
  for (const p of path) out += typeof p === "number" ? `[${p}]` : /^[A-Za-z_$][\w$-]*$/.test(p) ? `.${p}` : `[${JSON.stringify(p)}]`;
  return out;
}

/**
 * Converts host data to a PTC-Lisp value. `where` names the data in the error a refused value
 * gives (`data/orders`, `the result of tool/search`).
 */
export function toLisp(x: unknown, maxDepth = 256, depth = 0, where = "host data"): Value {
  try {
    return convert(x, maxDepth, depth);
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    throw new LispError("type_error", `${where}${pathText(e.path)} is ${e.what}, which cannot cross into the program`, undefined, "give programs plain data: objects, arrays, strings, numbers, booleans and null");
  }
}

function className(x: object): string {
  const name = (Object.getPrototypeOf(x) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === "string" && name !== "" ? name : "an unknown";
}

function convert(x: unknown, maxDepth: number, depth: number): Value {
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
      throw new Refused("a function");
    case "symbol":
      throw new Refused("a symbol");
  }
  if (isLispValue(x as object)) return x as Value;
  if (depth >= maxDepth) throw tooDeep(maxDepth, "into");
  if (Array.isArray(x)) {
    // Indexing visits the holes of a sparse array (map would skip them): they become nil.
    const out = new Array<Value>(x.length);
    let i = 0;
    try {
      for (; i < x.length; i++) out[i] = convert(x[i], maxDepth, depth + 1);
    } catch (e) {
      if (e instanceof Refused) e.path.unshift(i);
      throw e;
    }
    return Vec.fromArray(out);
  }
  if (x instanceof Map) {
    let at = "";
    try {
      return IMap<Value, Value>().withMutations((m) => {
        for (const [k, v] of x) {
          at = typeof k === "string" ? k : String(k);
          m.set(typeof k === "string" ? keyword(k) : convert(k, maxDepth, depth + 1), convert(v, maxDepth, depth + 1));
        }
      });
    } catch (e) {
      if (e instanceof Refused) e.path.unshift(at);
      throw e;
    }
  }
  if (x instanceof Set) return ISet<Value>([...x].map((v) => convert(v, maxDepth, depth + 1)));
  if (x instanceof Date) return Number.isNaN(x.getTime()) ? null : x.toISOString();
  if (ArrayBuffer.isView(x) || x instanceof ArrayBuffer) throw new Refused(`binary data (${className(x)})`);
  const obj = x as Record<string, unknown>;
  const proto = Object.getPrototypeOf(obj) as unknown;
  if (proto !== Object.prototype && proto !== null) {
    if (typeof obj.toJSON === "function") return convert(obj.toJSON(), maxDepth, depth + 1);
    throw new Refused(`${className(obj)} instance (not plain data)`);
  }
  let at = "";
  try {
    return IMap<Value, Value>().withMutations((m) => {
      for (const k of Object.keys(obj)) {
        at = k;
        m.set(keyword(k), read(obj, k, maxDepth, depth + 1));
      }
    });
  } catch (e) {
    if (e instanceof Refused) e.path.unshift(at);
    throw e;
  }
}

/** Reads one property; a getter that throws is refused at its key. */
function read(obj: Record<string, unknown>, k: string, maxDepth: number, depth: number): Value {
  let v: unknown;
  try {
    v = obj[k];
  } catch {
    throw new Refused("a getter that throws");
  }
  return convert(v, maxDepth, depth);
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
