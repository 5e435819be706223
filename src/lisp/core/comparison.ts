// Equality, ordering and boolean logic.
import { compare, equals } from "../equality.js";
import { typeErr } from "../errors.js";
import { LFloat, truthy, type Value } from "../values.js";
import { describe } from "./args.js";
import type { BuiltinDef } from "./registry.js";

function orderNum(op: string, x: Value): number {
  if (typeof x === "number") return x;
  if (x instanceof LFloat) return x.v;
  throw typeErr(`${op} compares numbers, got ${describe(x)}`, typeof x === "string" ? "use (compare a b) to order strings" : x === null ? "a nil usually means a missing key; check it first" : undefined);
}

function ordering(op: "<" | ">" | "<=" | ">=") {
  const test = {
    "<": (a: number, b: number) => a < b,
    ">": (a: number, b: number) => a > b,
    "<=": (a: number, b: number) => a <= b,
    ">=": (a: number, b: number) => a >= b,
  }[op];
  const f2 = (a: Value, b: Value): Value => {
    if (typeof a === "number" && typeof b === "number") return test(a, b);
    return test(orderNum(op, a), orderNum(op, b));
  };
  const fn = (args: Value[]): Value => {
    for (let i = 0; i < args.length; i++) orderNum(op, args[i]);
    for (let i = 0; i + 1 < args.length; i++) if (!f2(args[i], args[i + 1])) return false;
    return true;
  };
  return { f2, fn };
}

const eq2 = (a: Value, b: Value): Value => equals(a, b);

function allEqual(args: Value[]): boolean {
  for (let i = 0; i + 1 < args.length; i++) if (!equals(args[i], args[i + 1])) return false;
  return true;
}

const lt = ordering("<");
const gt = ordering(">");
const le = ordering("<=");
const ge = ordering(">=");

export const COMPARISON: BuiltinDef[] = [
  { name: "=", area: "comparison", arity: [1, Infinity], params: "[x & more]", doc: "Value equality; numbers compare by value, so (= 1 1.0) is true.", examples: [["(= [1 2] [1 2])", "true"], ["(= 1 1.0)", "true"]], fn: allEqual, f2: eq2 },
  { name: "not=", area: "comparison", arity: [1, Infinity], params: "[x & more]", doc: "(not (= x ...)).", examples: [["(not= 1 2)", "true"]], fn: (a) => !allEqual(a), f2: (a, b) => !equals(a, b) },
  { name: "==", area: "comparison", arity: [1, Infinity], params: "[x & more]", doc: "Numeric equality.", examples: [["(== 1 1.0)", "true"]], fn: (a) => a.every((x) => orderNum("==", x) === orderNum("==", a[0])) },
  { name: "<", area: "comparison", arity: [1, Infinity], params: "[x y & more]", doc: "True if the numbers increase strictly; (< 0 x 10) checks a range.", examples: [["(< 1 2 3)", "true"]], fn: lt.fn, f2: lt.f2 },
  { name: ">", area: "comparison", arity: [1, Infinity], params: "[x y & more]", doc: "True if the numbers decrease strictly.", examples: [["(> 3 2)", "true"]], fn: gt.fn, f2: gt.f2 },
  { name: "<=", area: "comparison", arity: [1, Infinity], params: "[x y & more]", doc: "True if the numbers never decrease.", examples: [["(<= 1 1 2)", "true"]], fn: le.fn, f2: le.f2 },
  { name: ">=", area: "comparison", arity: [1, Infinity], params: "[x y & more]", doc: "True if the numbers never increase.", examples: [["(>= 2 2 1)", "true"]], fn: ge.fn, f2: ge.f2 },
  {
    name: "compare",
    area: "comparison",
    arity: [2, 2],
    params: "[a b]",
    doc: "-1, 0 or 1: orders numbers, strings, keywords and vectors (nil first).",
    examples: [['(compare "a" "b")', "-1"]],
    fn: (a) => Math.sign(compare(a[0], a[1])),
    f2: (a, b) => Math.sign(compare(a, b)),
  },
  { name: "not", area: "logic", arity: [1, 1], params: "[x]", doc: "True if x is nil or false.", examples: [["(not nil)", "true"]], fn: (a) => !truthy(a[0]), f1: (x) => !truthy(x) },
  { name: "boolean", area: "logic", arity: [1, 1], params: "[x]", doc: "false for nil and false, true otherwise.", examples: [["(boolean 0)", "true"]], fn: (a) => truthy(a[0]), f1: (x) => truthy(x) },
];
