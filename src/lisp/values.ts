// Runtime values of PTC-Lisp. Everything a program can hold is one of these;
// no host object ever appears here (the interop boundary converts plain data only).
import { Map as IMap, Set as ISet } from "ptc-immutable";
import { Vec } from "./vector.js";

export { Vec };
export type LMap = IMap<Value, Value>;
export type LSet = ISet<Value>;
export const LMap = IMap;
export const LSet = ISet;

/**
 * nil is `null`; booleans and strings are JS primitives (a char is a 1-char string);
 * integers are integral JS numbers; floats are non-integral JS numbers (including
 * ±Infinity and NaN) or, when their value is integral, an `LFloat` box so `5.0` stays a float.
 */
export type Value =
  | null
  | boolean
  | number
  | string
  | LFloat
  | Keyword
  | Vec<Value>
  | LMap
  | LSet
  | Fn
  | Regex
  | Var
  | Reduced;

/** A float whose value happens to be integral (`5.0`, `-0.0`). */
export class LFloat {
  constructor(readonly v: number) {}
  valueOf(): number {
    return this.v;
  }
}

const rotl = (x: number, b: number): number => (x << b) | (x >>> (32 - b));

/**
 * A keyword's hash: HalfSipHash-1-3 of its name's UTF-16 units under a fixed key. Immutable's
 * string hash (Java's, h*31 + c) lets anyone make names that all hash alike ("Aa" and "BB",
 * and every string of such pairs), and keys of one hash are searched one by one: a context map
 * of 16,384 such keys took 4.5 s to read (282 ms for as many ordinary ones). Making one collision
 * here takes a search of about 2^32 names.
 */
export function keywordHash(name: string): number {
  let v0 = 0x736f6d65 ^ 0x70746331;
  let v1 = 0x646f7261 ^ 0x6b657977;
  let v2 = 0x6c796765 ^ 0x70746331;
  let v3 = 0x74656462 ^ 0x6b657977;
  const round = (): void => {
    v0 = (v0 + v1) | 0;
    v1 = rotl(v1, 5) ^ v0;
    v0 = rotl(v0, 16);
    v2 = (v2 + v3) | 0;
    v3 = rotl(v3, 8) ^ v2;
    v0 = (v0 + v3) | 0;
    v3 = rotl(v3, 7) ^ v0;
    v2 = (v2 + v1) | 0;
    v1 = rotl(v1, 13) ^ v2;
    v2 = rotl(v2, 16);
  };
  const n = name.length;
  for (let i = 0; i + 1 < n; i += 2) {
    const m = name.charCodeAt(i) | (name.charCodeAt(i + 1) << 16);
    v3 ^= m;
    round();
    v0 ^= m;
  }
  const last = (n << 24) | (n & 1 ? name.charCodeAt(n - 1) : 0);
  v3 ^= last;
  round();
  v0 ^= last;
  v2 ^= 0xff;
  round();
  round();
  round();
  return (v1 ^ v3) | 0;
}

/** Keywords compare by name; literal keywords are interned so most comparisons are identity. */
export class Keyword {
  private readonly h: number;
  constructor(readonly name: string) {
    this.h = keywordHash(name);
  }
  hashCode(): number {
    return this.h;
  }
  equals(o: unknown): boolean {
    return o === this || (o instanceof Keyword && o.name === this.name);
  }
  toString(): string {
    return ":" + this.name;
  }
  /** Where the namespace of a qualified keyword ends (:ns/name), or -1. A lone "/" is a name. */
  nsEnd(): number {
    return this.name.length > 1 ? this.name.indexOf("/") : -1;
  }
}

// The table outlives every run (the host's process, a pooled worker): it keeps short names only,
// so what programs and host keys leave in it is bounded by count and length (about 6.4M
// characters), not by up to 100,000 names of a million characters each.
const KEYWORD_INTERN_CAP = 100_000;
const KEYWORD_INTERN_MAX_NAME = 64;
const keywords = new Map<string, Keyword>();

export function keyword(name: string): Keyword {
  if (name.length > KEYWORD_INTERN_MAX_NAME) return new Keyword(name);
  let k = keywords.get(name);
  if (k === undefined) {
    k = new Keyword(name);
    // Past the cap keywords are still correct (equality is by name), just not shared.
    if (keywords.size < KEYWORD_INTERN_CAP) keywords.set(name, k);
  }
  return k;
}

/** Anything callable from PTC-Lisp: builtins, user closures, and composed functions. */
export abstract class Fn {
  abstract readonly name: string;
  abstract call(args: Value[]): Value;
  call1(a: Value): Value {
    return this.call([a]);
  }
  call2(a: Value, b: Value): Value {
    return this.call([a, b]);
  }
  /** How the printer shows the function: `#fn[label]`. */
  label(): string {
    return this.name;
  }
  /** Its parameter lists as written (`[x] [x y]`), for summaries; undefined when unknown. */
  paramLists(): string | undefined {
    return undefined;
  }
}

/** A compiled regular expression (RE2 semantics: linear time, no backreferences). */
export class Regex {
  constructor(
    readonly source: string,
    readonly compiled: unknown,
  ) {}
}

/** A value wrapped by `reduced`: reduce and the transducing functions stop when a step returns one. */
export class Reduced {
  constructor(readonly value: Value) {}
}

/** What `def` returns: `#'name`. */
export class Var {
  constructor(readonly name: string) {}
}

export function isNumber(x: Value): x is number | LFloat {
  return typeof x === "number" || x instanceof LFloat;
}

export function isInteger(x: Value): x is number {
  return typeof x === "number" && Number.isInteger(x);
}

export function isFloat(x: Value): boolean {
  return x instanceof LFloat || (typeof x === "number" && !Number.isInteger(x));
}

/**
 * The position a number names in a vector or string, or null: an integer, or a float with an
 * integral value, because `/` always makes a float where Clojure's (/ 4 2) is the integer 2.
 */
export function asIndex(x: Value): number | null {
  if (typeof x === "number") return Number.isInteger(x) ? x : null;
  return x instanceof LFloat && Number.isInteger(x.v) ? x.v : null;
}

/** The numeric value of a number (int or float). */
export function num(x: number | LFloat): number {
  return typeof x === "number" ? x : x.v;
}

/** Wraps a JS number as a PTC-Lisp float. */
export function mkFloat(n: number): number | LFloat {
  return Number.isInteger(n) ? new LFloat(n) : n;
}

export const isMap = (x: unknown): x is LMap => x instanceof IMap;
export const isSet = (x: unknown): x is LSet => x instanceof ISet;
export const isColl = (x: unknown): x is Vec<Value> | LMap | LSet => x instanceof Vec || x instanceof IMap || x instanceof ISet;

export function truthy(x: Value): boolean {
  return x !== null && x !== false;
}

/** Type names as the LLM reads them in errors and summaries. */
export function typeName(x: Value): string {
  if (x === null) return "nil";
  switch (typeof x) {
    case "boolean":
      return "boolean";
    case "number":
      return Number.isInteger(x) ? "integer" : "float";
    case "string":
      return "string";
  }
  if (x instanceof LFloat) return "float";
  if (x instanceof Keyword) return "keyword";
  if (x instanceof Vec) return "vector";
  if (x instanceof IMap) return "map";
  if (x instanceof ISet) return "set";
  if (x instanceof Fn) return "function";
  if (x instanceof Regex) return "regex";
  if (x instanceof Var) return "var";
  if (x instanceof Reduced) return "reduced";
  return "unknown";
}

export const EMPTY_VEC: Vec<Value> = Vec.empty<Value>();
export const EMPTY_MAP: LMap = IMap<Value, Value>();
export const EMPTY_SET: LSet = ISet<Value>();
