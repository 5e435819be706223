// sum, avg, median, the *-by aggregators, max-key/min-key and distinct-by: empty and nil
// inputs, key forms, nil skipping, error messages and budgets.
import { describe, expect, it } from "vitest";
import { edn as ok, errorOf as fails } from "../support/run.js";

describe("sum and avg", () => {
  it("sum keeps integers exact and turns float when any element is a float", async () => {
    expect(await ok("(sum [1 2 3])")).toBe("6");
    expect(await ok("(sum [1.5 1.5])")).toBe("3.0");
    expect(await ok("(sum [1 2.0])")).toBe("3.0");
  });

  it("sum of nothing is 0; nils are skipped", async () => {
    expect(await ok("[(sum []) (sum nil) (sum #{}) (sum [nil])]")).toBe("[0 0 0 0]");
    expect(await ok("(sum [1 nil 2])")).toBe("3");
    expect(await ok("(sum #{1 2})")).toBe("3");
  });

  it("avg is always a float, nil when there is nothing to average", async () => {
    expect(await ok("(avg [2 2])")).toBe("2.0");
    expect(await ok("(avg [1 2])")).toBe("1.5");
    expect(await ok("[(avg []) (avg nil) (avg [nil nil])]")).toBe("[nil nil nil]");
    expect(await ok("(avg [10 nil 20])")).toBe("15.0");
  });

  it("avg of large integers is their float mean, not an integer overflow of the running sum", async () => {
    // Microsecond timestamps: ten of them add up past the integer range, their mean does not.
    expect(await ok("(avg (repeat 10 1700000000000000))")).toBe("1.7E15");
    expect(await ok("(avg-by :t (repeat 10 {:t 1700000000000000}))")).toBe("1.7E15");
    expect((await fails("(sum (repeat 10 1700000000000000))")).kind).toBe("arithmetic_error");
  });

  it("rejects non-numbers, naming the function", async () => {
    const e = await fails('(sum [1 "2"])');
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("sum");
    expect(e.message).toContain('"2"');
    expect(e.hint).toContain("parse");
  });

  it("explains that a map is a sequence of entries", async () => {
    const e = await fails("(avg {:a 1})");
    expect(e.message).toContain("avg");
    expect(e.message).toContain("vals");
  });

  it("points to + when given a number instead of a collection", async () => {
    const e = await fails("(sum 5)");
    expect(e.kind).toBe("type_error");
    expect(e.hint).toContain("+");
  });

  it("fails loudly on integer overflow instead of losing precision", async () => {
    const e = await fails("(sum [9007199254740991 1])");
    expect(e.kind).toBe("arithmetic_error");
    expect(e.message).toContain("sum");
  });

  it("charges fuel per element", async () => {
    const xs = Array.from({ length: 100_000 }, (_, i) => i);
    const e = await fails("(sum data/xs)", { ctx: { xs }, limits: { maxFuel: 10_000 } });
    expect(e.kind).toBe("fuel_exhausted");
  });
});

describe("median", () => {
  it("is the middle value, or the mean of the two middle values", async () => {
    expect(await ok("(median [5 1 3])")).toBe("3");
    expect(await ok("(median [4 1 3 2])")).toBe("2.5");
    expect(await ok("(median [1 3])")).toBe("2.0");
    expect(await ok("(median [1 2.0 3])")).toBe("2.0");
  });

  it("is nil for nothing and skips nils", async () => {
    expect(await ok("[(median []) (median nil)]")).toBe("[nil nil]");
    expect(await ok("(median [nil 7])")).toBe("7");
  });

  it("rejects non-numbers", async () => {
    const e = await fails("(median [1 :a])");
    expect(e.message).toContain("median");
  });
});

describe("sum-by and avg-by", () => {
  it("accept keyword, string, path and function keys", async () => {
    expect(await ok("(sum-by :a [{:a 1} {:a 2}])")).toBe("3");
    expect(await ok('(sum-by "a" [{:a 1} {"a" 2}])')).toBe("3");
    expect(await ok("(sum-by [:p :net] [{:p {:net 2}} {:p nil} {:p {:net 3}}])")).toBe("5");
    expect(await ok("(sum-by (fn [x] (* 2 (:a x))) [{:a 1} {:a 2}])")).toBe("6");
  });

  it("fall back between keyword and string keys", async () => {
    expect(await ok("(sum-by :amount data/rows)", { ctx: { rows: [{ amount: 1 }, { amount: 2.5 }] } })).toBe("3.5");
    expect(await ok('(sum-by :a [{"a" 4}])')).toBe("4");
  });

  it("skip nil values and missing keys", async () => {
    expect(await ok("(sum-by :amount [{:amount 10} {:amount nil} {:other 5}])")).toBe("10");
    expect(await ok("(avg-by :amount [{:amount 10} {:amount nil} {:amount 20}])")).toBe("15.0");
  });

  it("give 0 and nil for empty input", async () => {
    expect(await ok("[(sum-by :a []) (avg-by :a []) (avg-by :a nil) (avg-by :a [{:b 1}])]")).toBe("[0 nil nil nil]");
  });

  it("raise on non-numeric values, naming the item", async () => {
    const e = await fails('(sum-by :a [{:a 1} {:a "x"}])');
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("sum-by");
    expect(e.message).toContain('{:a "x"}');
  });

  it("hint at the argument order when key and collection are swapped", async () => {
    const e = await fails("(sum-by [{:a 1}] :a)");
    expect(e.kind).toBe("type_error");
    expect(e.hint).toContain("order");
  });

  it("reject a key that is neither a key nor a function", async () => {
    const e = await fails("(avg-by 3 [{:a 1}])");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("avg-by");
  });
});

describe("max-by and min-by", () => {
  it("pick the item with the extreme key, keeping the first on ties", async () => {
    expect(await ok("(max-by :n [{:n 1 :id 1} {:n 3 :id 2} {:n 3 :id 3}])")).toBe("{:n 3 :id 2}");
    expect(await ok("(min-by :n [{:n 1 :id 1} {:n 1 :id 2}])")).toBe("{:n 1 :id 1}");
  });

  it("skip items whose key is nil and return nil when nothing is left", async () => {
    expect(await ok("(min-by :price [{:price nil} {:price 10} {:price 5}])")).toBe("{:price 5}");
    expect(await ok("[(max-by :a []) (max-by :a nil) (min-by :a [{:b 1}])]")).toBe("[nil nil nil]");
  });

  it("order strings as well as numbers", async () => {
    expect(await ok('(max-by :name [{:name "b"} {:name "c"} {:name "a"}])')).toBe('{:name "c"}');
  });

  it("name themselves when keys cannot be compared", async () => {
    const e = await fails('(max-by :a [{:a 1} {:a "x"}])');
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("max-by");
  });

  it("point to max-key/min-key when given the items as arguments", async () => {
    const e = await fails("(max-by :a {:a 1} {:a 2})");
    expect(e.kind).toBe("arity_error");
    expect(e.hint).toContain("max-key");
    const e2 = await fails("(min-by :a {:a 1} {:a 2} {:a 3})");
    expect(e2.hint).toContain("min-key");
  });
});

describe("max-key and min-key", () => {
  it("pick the argument with the extreme key, keeping the last on ties", async () => {
    expect(await ok("(max-key :n {:n 1 :id 1} {:n 2 :id 2} {:n 2 :id 3})")).toBe("{:n 2 :id 3}");
    expect(await ok("(min-key :n {:n 1 :id 1} {:n 1 :id 2} {:n 5 :id 3})")).toBe("{:n 1 :id 2}");
    expect(await ok("(max-key (fn [s] (* s s)) -3 2)")).toBe("-3");
  });

  it("return the single argument", async () => {
    expect(await ok("(max-key :n {:n 1})")).toBe("{:n 1}");
  });

  it("work through apply on map entries", async () => {
    expect(await ok("(apply max-key (fn [[k v]] v) {:a 10 :b 42 :c 7})")).toBe("[:b 42]");
  });

  it("point to max-by when given a collection", async () => {
    const e = await fails("(max-key :price [{:price 1} {:price 2}])");
    expect(e.kind).toBe("type_error");
    expect(e.hint).toContain("max-by");
  });

  it("point to min-by when applied to an empty collection", async () => {
    const e = await fails("(apply min-key :n [])");
    expect(e.kind).toBe("arity_error");
    expect(e.message).toContain("min-key");
    expect(e.hint).toContain("min-by");
  });

  it("reject nil keys, pointing to max-by which skips them", async () => {
    const e = await fails("(max-key :n {:n 1} {:m 2})");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("max-key");
    expect(e.hint).toContain("max-by");
  });
});

describe("distinct-by", () => {
  it("keeps the first item per key, in order", async () => {
    expect(await ok("(distinct-by :t [{:t 1 :v 1} {:t 2 :v 2} {:t 1 :v 3}])")).toBe("[{:t 1 :v 1} {:t 2 :v 2}]");
    expect(await ok("(distinct-by (fn [[a]] a) [[:a 1] [:a 2] [:b 3]])")).toBe("[[:a 1] [:b 3]]");
  });

  it("treats nil as one key and compares keys by value", async () => {
    expect(await ok("(distinct-by :s [{:id 1} {:id 2 :s nil} {:id 3 :s 1}])")).toBe("[{:id 1} {:id 3 :s 1}]");
    expect(await ok("(distinct-by :k [{:k [1]} {:k [1]} {:k [2]}])")).toBe("[{:k [1]} {:k [2]}]");
  });

  it("supports paths and empty input", async () => {
    expect(await ok("(distinct-by [:u :r] [{:u {:r 1}} {:u {:r 1}} {:u {:r 2}}])")).toBe("[{:u {:r 1}} {:u {:r 2}}]");
    expect(await ok("[(distinct-by :x []) (distinct-by :x nil)]")).toBe("[[] []]");
  });

  it("rejects a non-collection", async () => {
    const e = await fails("(distinct-by :x 5)");
    expect(e.message).toContain("distinct-by");
  });
});
