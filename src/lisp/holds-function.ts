// Whether a value holds a function somewhere: code, not data, so it cannot be written as EDN
// or sent as data, and what it computes depends on how it was compiled.
import { Fn, isMap, isSet, type Value } from "./values.js";
import { Vec } from "./vector.js";
import { sortOrder } from "./core/sorted.js";

/** The program's function each sort order made from one calls (`sorted-set-by`'s comparator). */
const orderFns = new WeakMap<object, Fn>();

/** Notes that `order` calls `fn`: a collection sorted by it holds that function, as code. */
export function noteOrderFn(order: object, fn: Fn): void {
  orderFns.set(order, fn);
}

const EVERY = (): boolean => true;

/**
 * Whether `value` holds a function that `counts` (any, by default). Shared structure is looked
 * into once. Each value visited spends one of `budget.left`; a walk that cannot finish within it
 * answers true at once, the safe guess for callers that bound it.
 */
export function holdsFunction(value: Value, counts: (f: Fn) => boolean = EVERY, budget: { left: number } = { left: Infinity }): boolean {
  return anyHoldsFunction([value], counts, budget);
}

/** The same over several values in one walk (memory's entries: one set of visited values, one stack). */
export function anyHoldsFunction(values: Iterable<Value>, counts: (f: Fn) => boolean = EVERY, budget: { left: number } = { left: Infinity }): boolean {
  const seen = new Set<object>();
  const stack: Value[] = [...values];
  if (stack.length > budget.left) return true;
  const push = (x: Value): boolean => stack.push(x) > budget.left;
  while (stack.length > 0) {
    budget.left--;
    const v = stack.pop() as Value;
    if (typeof v !== "object" || v === null || seen.has(v)) continue;
    seen.add(v);
    if (v instanceof Fn) {
      if (counts(v)) return true;
    } else if (v instanceof Vec) {
      for (const x of v) if (push(x)) return true;
    } else if (isMap(v) || isSet(v)) {
      // A collection sorted by the program's comparator holds it: restored as data it would come
      // back in another order, and run where marks are not followed it would compute unmarked.
      const order = sortOrder(v);
      const fn = order === undefined ? undefined : orderFns.get(order);
      if (fn !== undefined && push(fn)) return true;
      if (isMap(v)) {
        for (const [k, x] of v) if (push(k) || push(x)) return true;
      } else for (const x of v) if (push(x)) return true;
    }
  }
  return false;
}
