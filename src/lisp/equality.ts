// Value equality (`=`), hashing and ordering (`compare`, `sort`).
// Numbers compare by value across int and float: (= 1 1.0) is true.
import { hash as ihash } from "immutable";
import { typeErr } from "./errors.js";
import { charge } from "./runtime.js";
import { Keyword, LFloat, type Value, typeName, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

export function equals(a: Value, b: Value): boolean {
  if (a === b) return true;
  if (typeof a === "number") return b instanceof LFloat && b.v === a;
  if (a === null || typeof a !== "object") return false;
  if (a instanceof LFloat) return typeof b === "number" ? a.v === b : b instanceof LFloat && a.v === b.v;
  if (a instanceof Keyword) return b instanceof Keyword && a.name === b.name;
  if (a instanceof Vec) {
    if (!(b instanceof Vec) || a.size !== b.size) return false;
    // Comparing two big collections is work a loop could repeat at one step per iteration.
    charge(a.size);
    const xs = a.toArray();
    const ys = b.toArray();
    for (let i = 0; i < xs.length; i++) if (!equals(xs[i], ys[i])) return false;
    return true;
  }
  if (isMap(a)) {
    if (!isMap(b) || a.size !== b.size) return false;
    charge(a.size);
    for (const [k, v] of a) {
      if (isNaNValue(k) || !b.has(k)) return false;
      if (!equals(v, b.get(k) as Value)) return false;
    }
    return true;
  }
  if (isSet(a)) {
    if (!isSet(b) || a.size !== b.size) return false;
    charge(a.size);
    // The hash set finds NaN by identity; as an element NaN still equals nothing, as in Clojure.
    for (const x of a) if (isNaNValue(x) || !b.has(x)) return false;
    return true;
  }
  return false;
}

const isNaNValue = (x: Value): boolean => typeof x === "number" && Number.isNaN(x);

export function hashValue(v: Value): number {
  return ihash(v);
}

// Clojure's ordering of types when compare meets mixed kinds that it can order.
function rank(v: Value): number {
  if (v === null) return 0;
  if (typeof v === "boolean") return 1;
  if (typeof v === "number" || v instanceof LFloat) return 2;
  if (typeof v === "string") return 3;
  if (v instanceof Keyword) return 4;
  if (v instanceof Vec) return 5;
  return -1;
}

/** Total order for sort/compare: nil < booleans < numbers < strings < keywords < vectors. */
export function compare(a: Value, b: Value): number {
  if (typeof a === "number" && typeof b === "number") return a < b ? -1 : a > b ? 1 : a === b ? 0 : compareNaN(a, b);
  const ra = rank(a);
  const rb = rank(b);
  if (ra < 0 || rb < 0) throw typeErr(`cannot compare ${typeName(a)} with ${typeName(b)}`);
  if (ra !== rb) {
    if (ra === 0 || rb === 0) return ra - rb;
    throw typeErr(`cannot compare ${typeName(a)} with ${typeName(b)}`, "sort values of one type, or give sort-by a key function");
  }
  switch (ra) {
    case 0:
      return 0;
    case 1:
      return a === b ? 0 : a ? 1 : -1;
    case 2: {
      const x = typeof a === "number" ? a : (a as LFloat).v;
      const y = typeof b === "number" ? b : (b as LFloat).v;
      return x < y ? -1 : x > y ? 1 : x === y ? 0 : compareNaN(x, y);
    }
    case 3:
      return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
    case 4: {
      const x = (a as Keyword).name;
      const y = (b as Keyword).name;
      return x < y ? -1 : x > y ? 1 : 0;
    }
    default: {
      const x = a as Vec<Value>;
      const y = b as Vec<Value>;
      if (x.size !== y.size) return x.size - y.size;
      charge(x.size);
      const xs = x.toArray();
      const ys = y.toArray();
      for (let i = 0; i < xs.length; i++) {
        const c = compare(xs[i], ys[i]);
        if (c !== 0) return c;
      }
      return 0;
    }
  }
}

// NaN sorts after every number so sorting stays a total order.
function compareNaN(a: number, b: number): number {
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  return an && bn ? 0 : an ? 1 : -1;
}
