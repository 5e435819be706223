// Inline fast paths for the arithmetic and comparison builtins that dominate loops:
// when both operands are plain integers (or any JS numbers, for comparisons) the
// closure computes the result directly; every other case goes through the builtin,
// which handles floats, overflow and type errors. Only builtins, never user code, land here.
import { withLoc, type SourceLoc } from "./errors.js";
import type { Code } from "./fn.js";
import type { Value } from "./values.js";

const MAX = Number.MAX_SAFE_INTEGER;

function slow2(f: (a: Value, b: Value) => Value, a: Value, b: Value, loc: SourceLoc): Value {
  try {
    return f(a, b);
  } catch (e) {
    throw withLoc(e, loc);
  }
}

function slow1(f: (a: Value) => Value, a: Value, loc: SourceLoc): Value {
  try {
    return f(a);
  } catch (e) {
    throw withLoc(e, loc);
  }
}

/** A specialized closure for a 2-argument call of builtin `name`, or null if it has none. */
export function intrinsic2(name: string, a: Code, b: Code, f: (a: Value, b: Value) => Value, loc: SourceLoc): Code | null {
  switch (name) {
    case "+":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        if (typeof x === "number" && typeof y === "number" && Number.isInteger(x) && Number.isInteger(y)) {
          const r = x + y;
          if (r <= MAX && r >= -MAX) return r;
        }
        return slow2(f, x, y, loc);
      };
    case "-":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        if (typeof x === "number" && typeof y === "number" && Number.isInteger(x) && Number.isInteger(y)) {
          const r = x - y;
          if (r <= MAX && r >= -MAX) return r;
        }
        return slow2(f, x, y, loc);
      };
    case "*":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        if (typeof x === "number" && typeof y === "number" && Number.isInteger(x) && Number.isInteger(y)) {
          const r = x * y;
          if (r <= MAX && r >= -MAX) return r === 0 ? 0 : r;
        }
        return slow2(f, x, y, loc);
      };
    case "<":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        return typeof x === "number" && typeof y === "number" ? x < y : slow2(f, x, y, loc);
      };
    case ">":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        return typeof x === "number" && typeof y === "number" ? x > y : slow2(f, x, y, loc);
      };
    case "<=":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        return typeof x === "number" && typeof y === "number" ? x <= y : slow2(f, x, y, loc);
      };
    case ">=":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        return typeof x === "number" && typeof y === "number" ? x >= y : slow2(f, x, y, loc);
      };
    case "=":
      return (fr) => {
        const x = a(fr);
        const y = b(fr);
        return typeof x === "number" && typeof y === "number" ? x === y : slow2(f, x, y, loc);
      };
    default:
      return null;
  }
}

/** A specialized closure for a 1-argument call of builtin `name`, or null. */
export function intrinsic1(name: string, a: Code, f: (a: Value) => Value, loc: SourceLoc): Code | null {
  switch (name) {
    case "inc":
      return (fr) => {
        const x = a(fr);
        return typeof x === "number" && Number.isInteger(x) && x < MAX ? x + 1 : slow1(f, x, loc);
      };
    case "dec":
      return (fr) => {
        const x = a(fr);
        return typeof x === "number" && Number.isInteger(x) && x > -MAX ? x - 1 : slow1(f, x, loc);
      };
    case "zero?":
      return (fr) => {
        const x = a(fr);
        return typeof x === "number" ? x === 0 : slow1(f, x, loc);
      };
    default:
      return null;
  }
}
