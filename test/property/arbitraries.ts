// fast-check generators for PTC-Lisp values and program text.
import fc from "fast-check";
import { keyword, LFloat, LMap, LSet, Vec, type Value } from "../../src/lisp/values.js";

const name = fc.stringMatching(/^[a-z][a-z0-9\-?!*]{0,8}$/);

const float = fc.double({ noDefaultInfinity: false }).map((d): Value => (Number.isInteger(d) ? new LFloat(d) : d));

const scalar: fc.Arbitrary<Value> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -1e15, max: 1e15 }),
  fc.maxSafeInteger(),
  float,
  fc.string({ unit: "binary", maxLength: 12 }),
  fc.constantFrom("__proto__", "constructor", "a\"b", "back\\slash", "tab\there", "line\nbreak", "é", "🙂"),
  name.map((n) => keyword(n)),
);

/** Readable values: everything the printer prints as EDN the reader accepts. */
export const value: fc.Arbitrary<Value> = fc.letrec((tie) => ({
  node: fc.oneof({ depthSize: "small", withCrossShrink: true }, scalar, tie("vec"), tie("map"), tie("set")),
  vec: fc.array(tie("node"), { maxLength: 5 }).map((xs) => Vec.fromArray(xs as Value[]) as Value),
  map: fc.array(fc.tuple(tie("node"), tie("node")), { maxLength: 4 }).map((kvs) => LMap<Value, Value>(kvs as Array<[Value, Value]>) as Value),
  set: fc.array(tie("node"), { maxLength: 4 }).map((xs) => LSet<Value>(xs as Value[]) as Value),
})).node as fc.Arbitrary<Value>;

const atoms = [
  "1", "-2", "3.5", "1e3", "##NaN", "nil", "true", '"s"', ":k", "x", "xs", "m", "%", "&", "_",
  "+", "-", "*", "/", "=", "<", "inc", "map", "filter", "reduce", "count", "get", "assoc", "str", "range", "first", "conj",
  "into", "sort", "apply", "keys", "vals", "merge", "update", "println", "nth", "take", "repeat", "concat", "partition",
  "def", "defn", "fn", "let", "loop", "recur", "if", "when", "cond", "case", "for", "doseq", "->", "->>", "and", "or",
  "try", "catch", "return", "fail", "where", "data/x", "tool/t", "@", "'", "#", "#_", "^", "\\", "\\a",
];

/** Arbitrary token soup: mostly well-formed-looking, often malformed. */
export const program: fc.Arbitrary<string> = fc
  .array(fc.oneof(fc.constantFrom(...atoms), fc.constantFrom("(", ")", "[", "]", "{", "}", "#{", "#("), fc.integer({ min: -5, max: 50 }).map(String)), {
    maxLength: 40,
  })
  .map((tokens) => tokens.join(" "));

/** Well-formed nested calls built from a few builtins, always balanced. */
export const form: fc.Arbitrary<string> = fc.letrec((tie) => ({
  expr: fc.oneof(
    { depthSize: "small" },
    fc.integer({ min: -3, max: 20 }).map(String),
    fc.constantFrom("nil", "[1 2 3]", "{:a 1 :b 2}", '"ab"', ":a", "#{1 2}", "xs"),
    fc.tuple(fc.constantFrom("inc", "count", "first", "rest", "vec", "str", "keys", "reverse", "sort", "set", "seq", "empty?"), tie("expr")).map(([f, a]) => `(${f} ${a})`),
    fc.tuple(fc.constantFrom("+", "conj", "get", "take", "drop", "nth", "concat", "into", "map inc", "filter odd?", "range", "repeat", "partition"), tie("expr"), tie("expr")).map(([f, a, b]) => `(${f} ${a} ${b})`),
    fc.tuple(tie("expr"), tie("expr")).map(([a, b]) => `(let [xs ${a}] ${b})`),
  ),
})).expr as fc.Arbitrary<string>;
