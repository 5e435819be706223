// Turning any seqable value into an array of elements: vectors, sets, maps (as [k v]
// entries), strings (as characters) and nil (empty). Collection builtins share this.
import type { Map as IMap } from "ptc-immutable";
import { typeErr } from "./errors.js";
import { chars } from "./text.js";
import { type Value, typeName, isMap, isSet } from "./values.js";
import { Vec } from "./vector.js";

export function isSeqable(x: Value): boolean {
  return x === null || typeof x === "string" || x instanceof Vec || isMap(x) || isSet(x);
}

/** Map entries as [k v] vectors, in the map's order. */
export function entries(m: IMap<Value, Value>): Value[] {
  const out = new Array<Value>(m.size);
  let i = 0;
  for (const [k, v] of m) out[i++] = Vec.fromArray<Value>([k, v]);
  return out;
}

/** The elements of a seqable value as a fresh array; a type error naming `who` otherwise. */
export function seqArray(x: Value, who: string): Value[] {
  if (x instanceof Vec) return x.toArray();
  if (x === null) return [];
  if (typeof x === "string") return chars(x);
  if (isMap(x)) return entries(x);
  if (isSet(x)) return x.toArray();
  throw typeErr(`${who} expects a collection, got ${typeName(x)}${typeof x === "number" ? " " + String(x) : ""}`);
}
