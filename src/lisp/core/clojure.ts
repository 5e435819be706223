// clojure.core functions a model reaches for that the other areas had not covered: integer
// predicates, the bit-* family, rseq, subseq, rsubseq, parse-boolean, clojure.string/escape, repeatedly and
// assert. Each behaves as its Clojure namesake (on 64-bit longs for the bit operations).
import { LispError, typeErr } from "../errors.js";
import { call1, callValue } from "../fn.js";
import { MAX_ARRAY_LENGTH } from "../limits.js";
import { builtFrom, charge, checkArrayLength, checkCollectionSize, checkStringLength, run, runMarks, shownMessage, tick } from "../runtime.js";
import { charChunks } from "../text.js";
import { Fn, isInteger, isNumber, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { countArg, describe, expectFn, strValue } from "./args.js";
import { clip } from "./exceptions.js";
import type { BuiltinDef } from "./registry.js";
import { sortOrder, subseq } from "./sorted.js";

const MAX = Number.MAX_SAFE_INTEGER;

function intArg(who: string, x: Value): bigint {
  if (!isInteger(x)) throw typeErr(`${who} expects integers, got ${describe(x)}`, "bit operations work on integers; use (long x) to truncate a float");
  return BigInt(x);
}

/** A 64-bit result back to an integer, or an overflow error past the safe integer range. */
function fromLong(who: string, r: bigint): number {
  const n = BigInt.asIntN(64, r);
  if (n > BigInt(MAX) || n < -BigInt(MAX)) throw new LispError("arithmetic_error", `integer overflow in ${who} (integers are limited to ±${MAX})`);
  return Number(n);
}

function bitIndex(who: string, x: Value): bigint {
  const n = intArg(who, x);
  if (n < 0n || n > 63n) throw new LispError("value_error", `${who} expects a bit index from 0 to 63, got ${n}`);
  return n;
}

function bitwise(name: string, op: (a: bigint, b: bigint) => bigint, example: readonly [string, string]): BuiltinDef {
  return {
    name,
    area: "arithmetic",
    arity: [2, Infinity],
    params: "[x y & more]",
    doc: `Bitwise ${name.slice(4)} of integers (as 64-bit longs).`,
    examples: [example],
    fn: (a) => {
      let acc = intArg(name, a[0]);
      for (let i = 1; i < a.length; i++) acc = BigInt.asIntN(64, op(acc, intArg(name, a[i])));
      return fromLong(name, acc);
    },
  };
}

function shift(name: string, op: (a: bigint, n: bigint) => bigint, doc: string, example: readonly [string, string]): BuiltinDef {
  return {
    name,
    area: "arithmetic",
    arity: [2, 2],
    params: "[x n]",
    doc,
    examples: [example],
    fn: (a) => fromLong(name, op(intArg(name, a[0]), bitIndex(name, a[1]))),
  };
}

function rseq(x: Value): Value {
  if (x instanceof Vec) {
    if (x.size === 0) return null;
    // A copy of every element, as reverse makes: charged as reverse is.
    charge(x.size);
    return Vec.fromArray(x.toArray().reverse());
  }
  if (sortOrder(x) !== undefined) {
    const xs: Value[] = [];
    for (const e of x as Iterable<Value | [Value, Value]>) xs.push(Array.isArray(e) ? Vec.of<Value>(e[0], e[1]) : (e as Value));
    charge(xs.length);
    return xs.length === 0 ? null : Vec.fromArray(xs.reverse());
  }
  throw typeErr(`rseq expects a vector or a sorted collection, got ${describe(x)}`, "use reverse for any other collection");
}

function parseBoolean(x: Value): Value {
  if (typeof x !== "string") throw typeErr(`parse-boolean expects a string, got ${describe(x)}`, x === true || x === false ? "it is already a boolean" : undefined);
  return x === "true" ? true : x === "false" ? false : null;
}

function escape(s: Value, cmap: Value): Value {
  if (typeof s !== "string") throw typeErr(`clojure.string/escape expects a string, got ${describe(s)}`);
  expectFn("clojure.string/escape", cmap);
  const max = run.limits.maxStringLength;
  // What a function returns, kept when the run follows hidden values: the result is built from it.
  const got: Value[] | null = cmap instanceof Fn && runMarks() !== null ? [] : null;
  // A chunk of characters at a time, each chunk's text joined once: one array (or rope) of every
  // character of a long text aborted the process or ran the heap out.
  let out = "";
  let i = 0;
  for (const chunk of charChunks(s)) {
    charge(chunk.length);
    let part = "";
    for (const c of chunk) {
      // A map as cmap is looked up without a charge: the loop checks the clock itself.
      tick(i++);
      const r = call1(cmap, c);
      if (got !== null) {
        if (got.length === MAX_ARRAY_LENGTH) checkArrayLength(got.length + 1);
        got.push(r);
      }
      const piece = r === null ? c : strValue(r);
      if (out.length + part.length + piece.length > max) checkStringLength(out.length + part.length + piece.length);
      part += piece;
    }
    out += part;
  }
  return got === null ? out : builtFrom(Vec.fromArray(got), out);
}

function repeatedly(args: Value[]): Value {
  if (args.length === 1) {
    throw typeErr("repeatedly needs a count: there are no infinite sequences", "(repeatedly n f) calls f n times; e.g. (repeatedly 3 #(tool/next-page))");
  }
  const n = Math.max(0, countArg("repeatedly", args[0], Math.ceil));
  const f = expectFn("repeatedly", args[1]);
  checkCollectionSize(n);
  charge(n);
  const out = new Array<Value>(n);
  for (let i = 0; i < n; i++) out[i] = callValue(f, []);
  return Vec.fromArray(out);
}

function assert(args: Value[]): Value {
  const x = args[0];
  if (x !== null && x !== false) return null;
  // The program's own message, bare after the prefix (one from hidden context, however short, as
  // its stand-in), cut as a thrown one is.
  const message = args.length === 2 ? `Assert failed: ${clip(shownMessage(strValue(args[1])))}` : "Assert failed";
  throw new LispError("exception", message, undefined, "an (assert ...) found its condition false; catch it with (catch AssertionError e ...) or fix the data");
}

const intPred = (name: string, test: (n: number) => boolean, doc: string, examples: ReadonlyArray<readonly [string, string]>): BuiltinDef => ({
  name,
  area: "predicates",
  arity: [1, 1],
  params: "[x]",
  doc,
  examples,
  fn: (a) => isInteger(a[0]) && test(a[0]),
  f1: (x) => isInteger(x) && test(x),
});

export const CLOJURE_EXTRAS: BuiltinDef[] = [
  {
    name: "NaN?",
    area: "predicates",
    arity: [1, 1],
    params: "[x]",
    doc: "True if the number x is NaN.",
    examples: [["(NaN? ##NaN)", "true"], ["(NaN? 1.0)", "false"]],
    fn: (a) => nanP(a[0]),
    f1: (x) => nanP(x),
  },
  intPred("pos-int?", (n) => n > 0, "True for an integer above 0.", [["(pos-int? 3)", "true"], ["(pos-int? 3.0)", "false"]]),
  intPred("neg-int?", (n) => n < 0, "True for an integer below 0.", [["(neg-int? -1)", "true"]]),
  intPred("nat-int?", (n) => n >= 0, "True for an integer of 0 or more.", [["(nat-int? 0)", "true"], ["(nat-int? -1)", "false"]]),
  bitwise("bit-and", (a, b) => a & b, ["(bit-and 12 10)", "8"]),
  bitwise("bit-or", (a, b) => a | b, ["(bit-or 12 10)", "14"]),
  bitwise("bit-xor", (a, b) => a ^ b, ["(bit-xor 12 10)", "6"]),
  bitwise("bit-and-not", (a, b) => a & ~b, ["(bit-and-not 12 10)", "4"]),
  { name: "bit-not", area: "arithmetic", arity: [1, 1], params: "[x]", doc: "Bitwise complement (as a 64-bit long).", examples: [["(bit-not 5)", "-6"]], fn: (a) => fromLong("bit-not", ~intArg("bit-not", a[0])) },
  shift("bit-shift-left", (a, n) => a << n, "x shifted left by n bits.", ["(bit-shift-left 1 10)", "1024"]),
  shift("bit-shift-right", (a, n) => a >> n, "x shifted right by n bits, keeping the sign.", ["(bit-shift-right -16 2)", "-4"]),
  shift("unsigned-bit-shift-right", (a, n) => BigInt.asUintN(64, a) >> n, "x shifted right by n bits, filling with zeros.", ["(unsigned-bit-shift-right 16 2)", "4"]),
  shift("bit-set", (a, n) => a | (1n << n), "x with bit n set.", ["(bit-set 0 3)", "8"]),
  shift("bit-clear", (a, n) => a & ~(1n << n), "x with bit n cleared.", ["(bit-clear 15 0)", "14"]),
  shift("bit-flip", (a, n) => a ^ (1n << n), "x with bit n flipped.", ["(bit-flip 8 3)", "0"]),
  { name: "bit-test", area: "arithmetic", arity: [2, 2], params: "[x n]", doc: "True if bit n of x is set.", examples: [["(bit-test 8 3)", "true"]], fn: (a) => ((intArg("bit-test", a[0]) >> bitIndex("bit-test", a[1])) & 1n) === 1n },
  { name: "rseq", area: "collections", arity: [1, 1], params: "[coll]", doc: "The elements of a vector or sorted collection in reverse, or nil when empty.", examples: [["(rseq [1 2 3])", "[3 2 1]"], ["(rseq [])", "nil"]], fn: (a) => rseq(a[0]), f1: rseq },
  {
    name: "subseq",
    area: "collections",
    arity: [3, 5],
    params: "[sc test key] [sc start-test start-key end-test end-key]",
    doc: "The elements (entries of a map) of sorted collection sc whose keys its order places as the tests say (<, <=, > or >=; start > or >=, end < or <=), or nil when none.",
    examples: [["(subseq (sorted-set 1 2 3 4) > 2)", "[3 4]"], ["(subseq (sorted-map :a 1 :b 2 :c 3) >= :b < :c)", "[[:b 2]]"]],
    fn: (a) => subseq("subseq", a),
  },
  {
    name: "rsubseq",
    area: "collections",
    arity: [3, 5],
    params: "[sc test key] [sc start-test start-key end-test end-key]",
    doc: "subseq in reverse order.",
    examples: [["(rsubseq (sorted-set 1 2 3 4) < 3)", "[2 1]"], ["(rsubseq (sorted-set 1 2 3 4) > 1 <= 3)", "[3 2]"]],
    fn: (a) => subseq("rsubseq", a),
  },
  { name: "parse-boolean", area: "strings", arity: [1, 1], params: "[s]", doc: 'true for "true", false for "false", nil for any other string.', examples: [['(parse-boolean "true")', "true"], ['(parse-boolean "yes")', "nil"]], fn: (a) => parseBoolean(a[0]), f1: parseBoolean },
  {
    name: "escape",
    area: "strings",
    arity: [2, 2],
    params: "[s cmap]",
    doc: "s with each character c replaced by (cmap c) when that is not nil.",
    ns: ["clojure.string"],
    unqualified: false,
    examples: [['(clojure.string/escape "a<b" {"<" "&lt;"})', '"a&lt;b"']],
    fn: (a) => escape(a[0], a[1]),
  },
  { name: "repeatedly", area: "functions", arity: [1, 2], params: "[n f]", doc: "A vector of n results of calling f with no arguments (the count is required).", examples: [["(repeatedly 2 (fn [] :x))", "[:x :x]"]], fn: repeatedly },
  { name: "assert", area: "functions", arity: [1, 2], params: "[x] [x message]", doc: "nil when x is truthy; otherwise raises an exception \"Assert failed: message\".", examples: [["(assert (= 1 1))", "nil"], ['(try (assert false "no") (catch e (ex-message e)))', '"Assert failed: no"']], fn: assert },
];

function nanP(x: Value): boolean {
  if (typeof x === "number") return Number.isNaN(x);
  if (isNumber(x)) return false;
  throw typeErr(`NaN? expects a number, got ${describe(x)}`);
}
