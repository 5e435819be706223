// Strict structural equality for tests: unlike `=`, an integer never equals a float,
// NaN equals NaN, and maps and sets compare without regard to order.
import { isFloat, isMap, isSet, Keyword, LFloat, Vec, type Value } from "../../src/lisp/values.js";

function numberOf(x: Value): number | null {
  if (typeof x === "number") return x;
  if (x instanceof LFloat) return x.v;
  return null;
}

export function strictEqual(a: Value, b: Value): boolean {
  const na = numberOf(a);
  const nb = numberOf(b);
  if (na !== null || nb !== null) {
    if (na === null || nb === null) return false;
    if (isFloat(a) !== isFloat(b)) return false;
    return na === nb || (Number.isNaN(na) && Number.isNaN(nb));
  }
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return a === b;
  if (a instanceof Keyword) return b instanceof Keyword && a.name === b.name;
  if (a instanceof Vec) {
    if (!(b instanceof Vec) || a.size !== b.size) return false;
    const xs = a.toArray();
    const ys = b.toArray();
    return xs.every((x, i) => strictEqual(x, ys[i]));
  }
  if (isMap(a)) {
    if (!isMap(b) || a.size !== b.size) return false;
    const rest = [...b];
    for (const [k, v] of a) {
      const i = rest.findIndex(([k2]) => strictEqual(k, k2));
      if (i < 0 || !strictEqual(v, rest[i][1])) return false;
      rest.splice(i, 1);
    }
    return true;
  }
  if (isSet(a)) {
    if (!isSet(b) || a.size !== b.size) return false;
    const rest = [...b];
    for (const x of a) {
      const i = rest.findIndex((y) => strictEqual(x, y));
      if (i < 0) return false;
      rest.splice(i, 1);
    }
    return true;
  }
  return a === b;
}
