// Numbers: integers and floats are distinct kinds. Integer operations stay integers
// (and fail loudly past ±2^53 instead of losing precision); anything touching a float
// is a float; `/` always gives a float.
import { LispError, typeErr } from "../errors.js";
import { isSet, LFloat, mkFloat, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { describe, expectNumber } from "./args.js";
import type { BuiltinDef } from "./registry.js";

const MAX = Number.MAX_SAFE_INTEGER;

export function overflow(op: string): LispError {
  return new LispError("arithmetic_error", `integer overflow in ${op} (integers are limited to ±${MAX})`, undefined, "use floats for very large numbers, e.g. (* 1.0 x y)");
}

function notNumber(op: string, a: Value, b?: Value): LispError {
  const bad = (typeof a === "number" || a instanceof LFloat ? b : a) as Value;
  return typeErr(`${op} expects numbers, got ${describe(bad)}`, numberHint(op, bad));
}

function numberHint(op: string, bad: Value): string | undefined {
  if (bad === null) return "a nil usually means a missing key or an empty result; check it with (if x ...) or use (or x 0)";
  if (typeof bad !== "string") return undefined;
  // "$1,897.83" or "42": text that holds a number needs parsing, not string joining.
  if (/^\s*[-+]?\d+\s*$/.test(bad)) return "parse it first: (parse-long s)";
  if (/^\s*[-+]?\d*\.\d+\s*$/.test(bad)) return "parse it first: (parse-double s)";
  if (/^\s*[-+$€£]?\s*[\d,]*\.?\d+\s*%?\s*$/.test(bad)) return 'parse it first: (parse-double (str/replace s #"[^0-9.-]" ""))';
  return op === "+" ? "use (str a b) to join strings" : undefined;
}

/** The float or integer value, and whether it is a float. Throws for non-numbers. */
function numOf(op: string, x: Value, other?: Value): number {
  if (typeof x === "number") return x;
  if (x instanceof LFloat) return x.v;
  throw notNumber(op, x, other);
}

const isF = (x: Value): boolean => x instanceof LFloat || (typeof x === "number" && !Number.isInteger(x));

// An integer has no sign of zero, but JS arithmetic makes -0 ((* -1 0), (quot -1 3)), which
// a float made from it would keep: adding 0 turns -0 into 0 and leaves every other number as is.
function intResult(op: string, r: number): number {
  if (r > MAX || r < -MAX) throw overflow(op);
  return r + 0;
}

function add(a: Value, b: Value): Value {
  if (typeof a === "number" && typeof b === "number") {
    const r = a + b;
    if (Number.isInteger(r)) return Number.isInteger(a) && Number.isInteger(b) ? intResult("+", r) : new LFloat(r);
    return r;
  }
  const x = numOf("+", a, b);
  const y = numOf("+", b, a);
  return isF(a) || isF(b) ? mkFloat(x + y) : intResult("+", x + y);
}

function sub(a: Value, b: Value): Value {
  if (typeof a === "number" && typeof b === "number") {
    const r = a - b;
    if (Number.isInteger(r)) return Number.isInteger(a) && Number.isInteger(b) ? intResult("-", r) : new LFloat(r);
    return r;
  }
  const x = numOf("-", a, b);
  const y = numOf("-", b, a);
  return isF(a) || isF(b) ? mkFloat(x - y) : intResult("-", x - y);
}

function mul(a: Value, b: Value): Value {
  const x = numOf("*", a, b);
  const y = numOf("*", b, a);
  const r = x * y;
  return isF(a) || isF(b) ? mkFloat(r) : intResult("*", r);
}

function div(a: Value, b: Value): Value {
  const x = numOf("/", a, b);
  const y = numOf("/", b, a);
  if (y === 0 && !isF(a) && !isF(b)) throw new LispError("arithmetic_error", "division by zero", undefined, "check the divisor first, e.g. (if (zero? n) 0 (/ total n))");
  return mkFloat(x / y);
}

function fold(op: string, f: (a: Value, b: Value) => Value, identity: Value) {
  return (args: Value[]): Value => {
    if (args.length === 0) return identity;
    let acc = args[0];
    if (args.length === 1) {
      // Clojure's one-argument + and * return their argument unchecked when it is nil.
      if (acc === null && (op === "+" || op === "*")) return null;
      numOf(op, acc);
      return acc;
    }
    for (let i = 1; i < args.length; i++) acc = f(acc, args[i]);
    return acc;
  };
}

function negate(a: Value): Value {
  if (typeof a === "number") return Number.isInteger(a) ? 0 - a : -a;
  if (a instanceof LFloat) return new LFloat(-a.v);
  throw notNumber("-", a);
}

function divZero(): LispError {
  return new LispError("arithmetic_error", "division by zero", undefined, "check the divisor first, e.g. (if (zero? n) ... )");
}

/** Integer-style division helpers: results are integers when both inputs are integers. */
function intOp(name: string, f: (x: number, y: number) => number) {
  return (a: Value, b: Value): Value => {
    const x = numOf(name, a, b);
    const y = numOf(name, b, a);
    if (y === 0) throw divZero();
    const r = f(x, y);
    if (isF(a) || isF(b)) return mkFloat(r);
    return r + 0;
  };
}

// A float argument makes a float result, as everywhere in Clojure's arithmetic: (quot 10.0 3) is 3.0.
const quot = intOp("quot", (x, y) => (Number.isFinite(x) && Number.isFinite(y) ? Math.trunc(x / y) : NaN));
const rem = intOp("rem", (x, y) => x % y);
const mod = intOp("mod", (x, y) => {
  const m = x % y;
  return m !== 0 && m < 0 !== y < 0 ? m + y : m;
});

/** Hint for a conversion given text: reading a number from text is a separate function. */
function parseHint(x: Value, parser: string): string | undefined {
  return typeof x === "string" ? `to read a number from text use (${parser} s)` : undefined;
}

function toInt(name: string) {
  return (x: Value): Value => {
    const n = expectNumber(name, x, parseHint(x, "parse-long"));
    if (!Number.isFinite(n)) throw new LispError("arithmetic_error", `cannot convert ${Number.isNaN(n) ? "NaN" : n > 0 ? "Infinity" : "-Infinity"} to integer`);
    return rounding(name, n);
  };
}

function rounding(name: string, n: number): number {
  let r: number;
  switch (name) {
    case "floor":
      r = Math.floor(n);
      break;
    case "ceil":
      r = Math.ceil(n);
      break;
    case "round":
      r = Math.sign(n) * Math.round(Math.abs(n));
      break;
    case "Math/round":
      // Java's Math.round (clojure.math/round), which JS's is: a half goes toward +infinity.
      r = Math.round(n);
      break;
    default:
      r = Math.trunc(n);
  }
  if (r > MAX || r < -MAX) throw overflow(name);
  return r === 0 ? 0 : r;
}

/** One doc for the four rounding functions: the reference lists them on one line. */
const ROUNDING_DOC = "To an integer: floor down, ceil up, round to nearest (halves away from zero), trunc toward zero.";

function roundingFn(name: "floor" | "ceil" | "round" | "Math/round" | "trunc") {
  return (x: Value): Value => {
    const n = expectNumber(name, x);
    // Java's Math.round, which Math/round promises, gives 0 for NaN and Long/MAX_VALUE (past our
    // integers: an overflow, as for 1e20) for an infinity; the others keep a non-finite value.
    if (name === "Math/round") return Number.isNaN(n) ? 0 : rounding(name, n);
    if (!Number.isFinite(n)) return x;
    return rounding(name, n);
  };
}

function toFloat(name: string) {
  return (x: Value): Value => mkFloat(expectNumber(name, x, parseHint(x, "parse-double")));
}

function extremum(name: "max" | "min") {
  return (args: Value[]): Value => {
    // No arguments almost always means (apply max xs) or (reduce max xs) over an empty result;
    // the arity is [0, Infinity] so this message, not the generic one, explains it.
    if (args.length === 0) {
      throw new LispError("arity_error", `${name} expects at least 1 argument, got 0`, undefined, `(apply ${name} xs) fails when xs is empty: check first, e.g. (if (seq xs) (apply ${name} xs) 0)`);
    }
    let best = args[0];
    let bv = extremumArg(name, best);
    for (let i = 1; i < args.length; i++) {
      const v = extremumArg(name, args[i]);
      // Of equal numbers the later one wins, as in Clojure: (max 2 2.0) is 2.0.
      if (Number.isNaN(v) || (name === "max" ? v >= bv : v <= bv)) {
        best = args[i];
        bv = v;
      }
    }
    return best;
  };
}

function extremumArg(name: "max" | "min", x: Value): number {
  if (typeof x === "number") return x;
  if (x instanceof LFloat) return x.v;
  if (x instanceof Vec || isSet(x)) throw typeErr(`${name} expects numbers, got ${describe(x)}`, `for the ${name === "max" ? "largest" : "smallest"} element of a collection use (apply ${name} coll), or (${name}-by f coll) for maps`);
  throw notNumber(name, x);
}

function math1(name: string, f: (x: number) => number) {
  return (x: Value): Value => mkFloat(f(expectNumber(name, x)));
}

/** inc and dec do their arithmetic through + and -, but name themselves in type and overflow errors. */
function step(name: "inc" | "dec", f: (a: Value, b: Value) => Value) {
  const by = name === "inc" ? 1 : -1;
  return (x: Value): Value => {
    if (typeof x === "number" && Number.isInteger(x)) return intResult(name, x + by);
    if (typeof x !== "number" && !(x instanceof LFloat)) throw typeErr(`${name} expects a number, got ${describe(x)}`, numberHint(name, x));
    return f(x, 1);
  };
}

const inc = step("inc", add);
const dec = step("dec", sub);
const abs = (x: Value): Value => {
  if (typeof x === "number") return Math.abs(x);
  if (x instanceof LFloat) return new LFloat(Math.abs(x.v));
  throw notNumber("abs", x);
};

function numPred(name: string, f: (n: number) => boolean) {
  return (x: Value): Value => f(expectNumber(name, x));
}

function parity(name: "even?" | "odd?") {
  return (x: Value): Value => {
    if (typeof x === "number" && Number.isInteger(x)) return name === "even?" ? x % 2 === 0 : x % 2 !== 0;
    throw typeErr(`${name} expects an integer, got ${describe(x)}`);
  };
}

const pow = (a: Value, b: Value): Value => mkFloat(Math.pow(expectNumber("pow", a), expectNumber("pow", b)));

export const ARITHMETIC: BuiltinDef[] = [
  { name: "+", area: "arithmetic", arity: [0, Infinity], params: "[& nums]", doc: "Sum of the numbers; (+) is 0.", examples: [["(+ 1 2 3)", "6"], ["(+ 1 2.5)", "3.5"]], fn: fold("+", add, 0), f2: add },
  {
    name: "-",
    area: "arithmetic",
    arity: [1, Infinity],
    params: "[x & nums]",
    doc: "Subtracts the rest from x; (- x) negates.",
    examples: [["(- 10 3 2)", "5"], ["(- 5)", "-5"]],
    fn: (args) => (args.length === 1 ? negate(args[0]) : fold("-", sub, 0)(args)),
    f1: negate,
    f2: sub,
  },
  { name: "*", area: "arithmetic", arity: [0, Infinity], params: "[& nums]", doc: "Product of the numbers; (*) is 1.", examples: [["(* 2 3 4)", "24"]], fn: fold("*", mul, 1), f2: mul },
  {
    name: "/",
    area: "arithmetic",
    arity: [1, Infinity],
    params: "[x & nums]",
    doc: "Always a float; (/ x) is 1/x.",
    examples: [["(/ 10 2)", "5.0"], ["(/ 10 4)", "2.5"]],
    fn: (args) => (args.length === 1 ? div(1, args[0]) : fold("/", div, 1)(args)),
    f2: div,
  },
  { name: "quot", area: "arithmetic", arity: [2, 2], params: "[n d]", doc: "Integer quotient, rounded toward zero.", examples: [["(quot 7 2)", "3"]], fn: (a) => quot(a[0], a[1]), f2: quot },
  { name: "rem", area: "arithmetic", arity: [2, 2], params: "[n d]", doc: "Remainder of n / d with the sign of n.", examples: [["(rem -10 3)", "-1"]], fn: (a) => rem(a[0], a[1]), f2: rem },
  { name: "mod", area: "arithmetic", arity: [2, 2], params: "[n d]", doc: "Modulus of n / d with the sign of d.", examples: [["(mod -10 3)", "2"]], fn: (a) => mod(a[0], a[1]), f2: mod },
  { name: "inc", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "x + 1.", examples: [["(inc 1)", "2"]], fn: (a) => inc(a[0]), f1: inc },
  { name: "dec", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "x - 1.", examples: [["(dec 1)", "0"]], fn: (a) => dec(a[0]), f1: dec },
  { name: "abs", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "Absolute value.", examples: [["(abs -5)", "5"]], ns: ["Math"], fn: (a) => abs(a[0]), f1: abs },
  { name: "max", area: "arithmetic", arity: [0, Infinity], params: "[x & more]", doc: "The largest number.", examples: [["(max 1 5 3)", "5"]], ns: ["Math"], fn: extremum("max") },
  { name: "min", area: "arithmetic", arity: [0, Infinity], params: "[x & more]", doc: "The smallest number.", examples: [["(min 1 5 3)", "1"]], ns: ["Math"], fn: extremum("min") },
  { name: "floor", area: "arithmetic", arity: [1, 1], params: "[x]", doc: ROUNDING_DOC, examples: [["(floor 3.7)", "3"]], fn: (a) => roundingFn("floor")(a[0]), f1: roundingFn("floor") },
  { name: "ceil", area: "arithmetic", arity: [1, 1], params: "[x]", doc: ROUNDING_DOC, examples: [["(ceil 3.2)", "4"]], fn: (a) => roundingFn("ceil")(a[0]), f1: roundingFn("ceil") },
  // Java's Math.floor and Math.ceil give a double, as a program writing Math/ expects.
  { name: "floor", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "Java's Math.floor: a float.", examples: [["(Math/floor 3.7)", "3.0"]], ns: ["Math"], unqualified: false, fn: (a) => math1("Math/floor", Math.floor)(a[0]) },
  { name: "ceil", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "Java's Math.ceil: a float.", examples: [["(Math/ceil 3.2)", "4.0"]], ns: ["Math"], unqualified: false, fn: (a) => math1("Math/ceil", Math.ceil)(a[0]) },
  { name: "round", area: "arithmetic", arity: [1, 1], params: "[x]", doc: ROUNDING_DOC, examples: [["(round 3.5)", "4"]], fn: (a) => roundingFn("round")(a[0]), f1: roundingFn("round") },
  { name: "trunc", area: "arithmetic", arity: [1, 1], params: "[x]", doc: ROUNDING_DOC, examples: [["(trunc -3.7)", "-3"]], fn: (a) => roundingFn("trunc")(a[0]), f1: roundingFn("trunc") },
  {
    name: "round",
    area: "arithmetic",
    arity: [1, 1],
    params: "[x]",
    doc: "Java's Math.round: to the nearest integer, a half toward positive infinity.",
    examples: [["(Math/round -2.5)", "-2"]],
    ns: ["Math"],
    unqualified: false,
    fn: (a) => roundingFn("Math/round")(a[0]),
    f1: roundingFn("Math/round"),
  },
  { name: "int", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "x truncated to an integer.", examples: [["(int 3.7)", "3"]], fn: (a) => toInt("int")(a[0]), f1: toInt("int") },
  // Its own entry, not an alias of int, so its errors name what the program wrote.
  { name: "long", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "x truncated to an integer.", examples: [["(long -3.7)", "-3"]], fn: (a) => toInt("long")(a[0]), f1: toInt("long") },
  { name: "double", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "x as a float.", examples: [["(double 5)", "5.0"]], fn: (a) => toFloat("double")(a[0]), f1: toFloat("double") },
  { name: "float", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "x as a float.", examples: [["(float 5)", "5.0"]], fn: (a) => toFloat("float")(a[0]), f1: toFloat("float") },
  { name: "sqrt", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "Square root, a float.", examples: [["(sqrt 16)", "4.0"]], ns: ["Math"], fn: (a) => math1("sqrt", Math.sqrt)(a[0]) },
  { name: "pow", area: "arithmetic", arity: [2, 2], params: "[x y]", doc: "x to the power y, a float.", examples: [["(pow 2 3)", "8.0"]], ns: ["Math"], fn: (a) => pow(a[0], a[1]), f2: pow },
  { name: "exp", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "e to the power x.", examples: [["(Math/exp 0)", "1.0"]], ns: ["Math"], unqualified: false, fn: (a) => math1("exp", Math.exp)(a[0]) },
  { name: "log", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "Natural logarithm.", examples: [["(Math/log 1)", "0.0"]], ns: ["Math"], unqualified: false, fn: (a) => math1("log", Math.log)(a[0]) },
  { name: "log10", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "Base-10 logarithm.", examples: [["(Math/log10 1000)", "3.0"]], ns: ["Math"], unqualified: false, fn: (a) => math1("log10", Math.log10)(a[0]) },
  { name: "zero?", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "True if x is 0.", examples: [["(zero? 0.0)", "true"]], fn: (a) => numPred("zero?", (n) => n === 0)(a[0]), f1: numPred("zero?", (n) => n === 0) },
  { name: "pos?", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "True if x > 0.", examples: [["(pos? 3)", "true"]], fn: (a) => numPred("pos?", (n) => n > 0)(a[0]), f1: numPred("pos?", (n) => n > 0) },
  { name: "neg?", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "True if x < 0.", examples: [["(neg? -1)", "true"]], fn: (a) => numPred("neg?", (n) => n < 0)(a[0]), f1: numPred("neg?", (n) => n < 0) },
  { name: "even?", area: "arithmetic", arity: [1, 1], params: "[n]", doc: "True if the integer n is even.", examples: [["(even? 4)", "true"]], fn: (a) => parity("even?")(a[0]), f1: parity("even?") },
  { name: "odd?", area: "arithmetic", arity: [1, 1], params: "[n]", doc: "True if the integer n is odd.", examples: [["(odd? 3)", "true"]], fn: (a) => parity("odd?")(a[0]), f1: parity("odd?") },
];
