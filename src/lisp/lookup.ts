// Key lookup shared by `get`, keyword and map invocation, and destructuring.
// Keyword and string keys fall back to each other (exact type first), because host data
// often arrives with string keys while programs use keywords.
import { storedKey } from "./equality.js";
import { heldKey } from "./core/sorted.js";
import { took } from "./runtime.js";
import { charAt, charCount } from "./text.js";
import { asIndex, Keyword, keyword, type Value, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

// A sentinel no program value can be, so a key present with nil is told from a missing one.
const MISSING = Symbol("missing") as unknown as Value;

export function lookup(coll: Value, key: Value, dflt: Value): Value {
  return took(coll, find(coll, key, dflt), key);
}

function find(coll: Value, key: Value, dflt: Value): Value {
  if (isMap(coll)) {
    let v = coll.get(key, MISSING);
    if (v !== MISSING) return v;
    if (key instanceof Keyword) v = coll.get(key.name, MISSING);
    else if (typeof key === "string") v = coll.get(keyword(key), MISSING);
    if (v !== MISSING) return v;
    const held = heldKey(coll, key);
    return held === undefined ? dflt : (coll.get(held) as Value);
  }
  if (coll instanceof Vec) {
    const i = asIndex(key);
    return i !== null && i >= 0 && i < coll.size ? (coll.get(i) as Value) : dflt;
  }
  if (isSet(coll)) return coll.has(key) ? (storedKey(coll, key) as Value) : (heldKey(coll, key) ?? dflt);
  if (typeof coll === "string") {
    const i = asIndex(key);
    if (i === null || i < 0) return dflt;
    return charAt(coll, i) ?? dflt;
  }
  return dflt;
}

/** Whether a key is present (with the same keyword/string fallback as lookup). */
export function hasKey(coll: Value, key: Value): boolean {
  if (isMap(coll)) {
    if (coll.has(key)) return true;
    if (key instanceof Keyword ? coll.has(key.name) : typeof key === "string" && coll.has(keyword(key))) return true;
    return heldKey(coll, key) !== undefined;
  }
  if (coll instanceof Vec || typeof coll === "string") {
    const i = asIndex(key);
    return i !== null && i >= 0 && i < (typeof coll === "string" ? charCount(coll) : coll.size);
  }
  if (isSet(coll)) return coll.has(key) || heldKey(coll, key) !== undefined;
  return false;
}
