// Type predicates and value tests. PTC-Lisp has one sequence type, the vector, so it answers
// seq?, sequential? and coll? the way the reference does: vectors are sequences, maps and
// sets are collections, strings are neither. A char is a one-character string.
import { hashValue, equals } from "../equality.js";
import { charge } from "../runtime.js";
import { chars, isSimpleText } from "../text.js";
import { Fn, isColl, isFloat, isInteger, isMap, isNumber, isSet, keyword, Keyword, typeName, type Value } from "../values.js";
import { Vec } from "../vector.js";
import { isCallable } from "./args.js";
import type { BuiltinDef } from "./registry.js";

type Pred = (x: Value) => boolean;

function isChar(x: Value): boolean {
  if (typeof x !== "string" || x.length === 0) return false;
  if (x.length === 1) return true;
  return !isSimpleText(x) && chars(x).length === 1;
}

/** One-argument predicate builtin; f1 is the fast path the compiler uses. */
function pred(name: string, test: Pred, doc: string, examples: ReadonlyArray<readonly [string, string]>, aliases?: string[]): BuiltinDef {
  return { name, area: "predicates", arity: [1, 1], params: "[x]", doc, examples, aliases, fn: (a) => test(a[0]), f1: test };
}

// Clojure's `type` answers with a class; we answer with a keyword naming the kind of value,
// which prints readably and compares with =. nil has no type, as in Clojure.
function typeOf(x: Value): Value {
  return x === null ? null : keyword(typeName(x));
}

function distinct(args: Value[]): boolean {
  charge(args.length);
  if (args.length === 2) return !equals(args[0], args[1]);
  const seen = new Map<number, Value[]>();
  for (const x of args) {
    const h = hashValue(x);
    const bucket = seen.get(h);
    if (bucket === undefined) seen.set(h, [x]);
    else if (bucket.some((y) => equals(x, y))) return false;
    else bucket.push(x);
  }
  return true;
}

// Value identity: primitives by value, keywords by name (they are interned, as in Clojure),
// collections and functions by reference.
function identical(a: Value, b: Value): boolean {
  if (a === b) return true;
  return a instanceof Keyword && b instanceof Keyword && a.name === b.name;
}

export const PREDICATES: BuiltinDef[] = [
  pred("nil?", (x) => x === null, "True if x is nil.", [["(nil? nil)", "true"], ["(nil? false)", "false"]]),
  pred("some?", (x) => x !== null, "True if x is not nil (false counts as some).", [["(some? false)", "true"], ["(some? nil)", "false"]]),
  pred("true?", (x) => x === true, "True only for the value true.", [["(true? 1)", "false"]]),
  pred("false?", (x) => x === false, "True only for the value false.", [["(false? nil)", "false"]]),
  pred("boolean?", (x) => typeof x === "boolean", "True for true and false.", [["(boolean? false)", "true"]]),
  pred("number?", isNumber, "True for integers and floats.", [["(number? 1.5)", "true"], ['(number? "1")', "false"]]),
  pred("integer?", isInteger, "True for integers (not for floats such as 2.0).", [["(integer? 2)", "true"], ["(integer? 2.0)", "false"]], ["int?"]),
  pred("float?", isFloat, "True for floats, including whole ones such as 2.0.", [["(float? 2.0)", "true"], ["(float? 2)", "false"]], ["double?"]),
  pred("string?", (x) => typeof x === "string", "True for strings (a char is a one-character string).", [['(string? "a")', "true"]]),
  pred("char?", isChar, "True for a one-character string (chars are strings).", [["(char? \\a)", "true"], ['(char? "ab")', "false"]]),
  pred("keyword?", (x) => x instanceof Keyword, "True for keywords.", [["(keyword? :a)", "true"], ['(keyword? "a")', "false"]]),
  pred("simple-keyword?", (x) => x instanceof Keyword && x.nsEnd() < 0, "True for keywords without a namespace.", [["(simple-keyword? :a)", "true"], ["(simple-keyword? :a/b)", "false"]]),
  pred("qualified-keyword?", (x) => x instanceof Keyword && x.nsEnd() >= 0, "True for keywords with a namespace.", [["(qualified-keyword? :a/b)", "true"], ["(qualified-keyword? :a)", "false"]]),
  pred("vector?", (x) => x instanceof Vec, "True for vectors.", [["(vector? [1])", "true"]]),
  pred("map?", isMap, "True for maps.", [["(map? {:a 1})", "true"], ["(map? [])", "false"]]),
  pred("set?", isSet, "True for sets.", [["(set? #{1})", "true"]]),
  pred("coll?", isColl, "True for vectors, maps and sets (not strings or nil).", [["(coll? {})", "true"], ['(coll? "ab")', "false"]]),
  pred("sequential?", (x) => x instanceof Vec, "True for vectors, the only ordered sequence type.", [["(sequential? [1])", "true"], ["(sequential? #{1})", "false"]]),
  pred("seq?", (x) => x instanceof Vec, "True for vectors (they stand in for seqs).", [["(seq? [1 2])", "true"], ["(seq? {:a 1})", "false"]]),
  pred("fn?", (x) => x instanceof Fn, "True for functions (builtins, fn and defn values).", [["(fn? inc)", "true"], ["(fn? :a)", "false"]]),
  pred("ifn?", isCallable, "True for anything callable: functions, keywords, maps, sets and vectors.", [["(ifn? :a)", "true"], ["(ifn? 1)", "false"]]),
  pred("any?", () => true, "Always true, whatever x is.", [["(any? nil)", "true"]]),
  {
    name: "type",
    area: "predicates",
    arity: [1, 1],
    params: "[x]",
    doc: "x's kind as a keyword (:integer :float :string :keyword :boolean :vector :map :set :function :regex); nil for nil.",
    examples: [
      ["(type 1)", ":integer"],
      ['(type {"a" 1})', ":map"],
      ["(type nil)", "nil"],
    ],
    fn: (a) => typeOf(a[0]),
    f1: typeOf,
  },
  {
    name: "distinct?",
    area: "predicates",
    arity: [1, Infinity],
    params: "[x & more]",
    doc: "True if no two arguments are equal; (apply distinct? coll) checks a collection.",
    examples: [
      ["(distinct? 1 2 3)", "true"],
      ["(distinct? 1 2 1)", "false"],
    ],
    fn: distinct,
    f2: (a, b) => !equals(a, b),
  },
  {
    name: "identical?",
    area: "predicates",
    arity: [2, 2],
    params: "[x y]",
    doc: "True if x and y are the same value object (numbers, strings and keywords by value; collections by reference). Usually you want =.",
    examples: [
      ["(identical? :a :a)", "true"],
      ["(let [v [1]] (identical? v v))", "true"],
    ],
    fn: (a) => identical(a[0], a[1]),
    f2: identical,
  },
];
