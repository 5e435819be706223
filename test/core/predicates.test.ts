// Type predicates over every kind of value, plus type, distinct?, identical? and any?.
import { describe, expect, it } from "vitest";
import { edn as ok, errorOf as fails } from "../support/run.js";

// One sample of each kind of value, in a fixed order.
const SAMPLES: ReadonlyArray<readonly [string, string]> = [
  ["nil", "nil"],
  ["false", "false"],
  ["true", "true"],
  ["int", "0"],
  ["float", "1.5"],
  ["whole float", "2.0"],
  ["char", "\\a"],
  ["1-char string", '"x"'],
  ["emoji char", '"👍"'],
  ["string", '"ab"'],
  ["empty string", '""'],
  ["keyword", ":k"],
  ["vector", "[1]"],
  ["empty vector", "[]"],
  ["map", "{:a 1}"],
  ["set", "#{1}"],
  ["fn", "(fn [x] x)"],
  ["builtin", "inc"],
];

// The samples (by label) for which each predicate is true.
const TRUE_FOR: Readonly<Record<string, readonly string[]>> = {
  "nil?": ["nil"],
  "some?": SAMPLES.map(([l]) => l).filter((l) => l !== "nil"),
  "true?": ["true"],
  "false?": ["false"],
  "boolean?": ["false", "true"],
  "number?": ["int", "float", "whole float"],
  "integer?": ["int"],
  "int?": ["int"],
  "float?": ["float", "whole float"],
  "double?": ["float", "whole float"],
  "string?": ["char", "1-char string", "emoji char", "string", "empty string"],
  "char?": ["char", "1-char string", "emoji char"],
  "keyword?": ["keyword"],
  "vector?": ["vector", "empty vector"],
  "map?": ["map"],
  "set?": ["set"],
  "coll?": ["vector", "empty vector", "map", "set"],
  "sequential?": ["vector", "empty vector"],
  "seq?": ["vector", "empty vector"],
  "fn?": ["fn", "builtin"],
  "ifn?": ["keyword", "vector", "empty vector", "map", "set", "fn", "builtin"],
  "any?": SAMPLES.map(([l]) => l),
};

describe("type predicates", () => {
  for (const [name, trueFor] of Object.entries(TRUE_FOR)) {
    it(`${name} over every kind of value`, async () => {
      const src = `[${SAMPLES.map(([, s]) => `(${name} ${s})`).join(" ")}]`;
      const expected = `[${SAMPLES.map(([label]) => String(trueFor.includes(label))).join(" ")}]`;
      expect(await ok(src)).toBe(expected);
    });
  }

  it("char? counts graphemes, not code units", async () => {
    expect(await ok('(char? "e\u0301")')).toBe("true");
    expect(await ok('(char? "e\u0301e")')).toBe("false");
  });

  it("a predicate called with the wrong number of arguments is an arity error naming it", async () => {
    const e = await fails("(nil? 1 2)");
    expect(e.kind).toBe("arity_error");
    expect(e.message).toContain("nil?");
  });

  it("predicates work as function values", async () => {
    expect(await ok("((comp nil? :a) {})")).toBe("true");
    expect(await ok("(apply string? [1])")).toBe("false");
  });
});

describe("type", () => {
  it("names the kind of each value with a keyword, nil for nil", async () => {
    expect(await ok('[(type 1) (type 1.5) (type 2.0) (type "s") (type :k) (type true) (type [1]) (type {}) (type #{}) (type inc) (type (fn [] 1))]')).toBe(
      "[:integer :float :float :string :keyword :boolean :vector :map :set :function :function]",
    );
    expect(await ok("(type nil)")).toBe("nil");
  });

  it("compares with =", async () => {
    expect(await ok("(= (type [1]) (type []))")).toBe("true");
  });
});

describe("distinct?", () => {
  it("is true when no two arguments are equal", async () => {
    expect(await ok("(distinct? 1)")).toBe("true");
    expect(await ok("(distinct? 1 2 3)")).toBe("true");
    expect(await ok("(distinct? 1 2 1)")).toBe("false");
    expect(await ok("(distinct? :a :b)")).toBe("true");
  });

  it("uses value equality: collections by content, 1 equals 1.0", async () => {
    expect(await ok("(distinct? [1 {:a 2}] [1 {:a 2}])")).toBe("false");
    expect(await ok("(distinct? 3 [1] 1.0 1)")).toBe("false");
    expect(await ok("(apply distinct? [1 2 3 4])")).toBe("true");
  });
});

describe("identical?", () => {
  it("is true for the same primitive values and keywords", async () => {
    expect(await ok('[(identical? 1 1) (identical? "a" "a") (identical? :a :a) (identical? nil nil)]')).toBe("[true true true true]");
  });

  it("compares collections by reference", async () => {
    expect(await ok("(identical? [1] [1])")).toBe("false");
    expect(await ok("(let [v [1]] (identical? v v))")).toBe("true");
    expect(await ok("(identical? 1 2)")).toBe("false");
  });
});
