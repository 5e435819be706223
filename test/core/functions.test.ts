// Higher-order builtins: comp, partial, juxt, complement, fnil, some-fn, every-pred, apply,
// memoize, the all-of/any-of/none-of combinators and condp's no-match error.
import { describe, expect, it } from "vitest";
import { edn as ok, errorOf as fails, printsOf as prints } from "../support/run.js";
import { evaluate, print } from "../../src/lisp/evaluate.js";

describe("identity and constantly", () => {
  it("identity returns its argument, nil included", async () => {
    expect(await ok("(identity nil)")).toBe("nil");
    expect(await ok("(identity [1 {:a 2}])")).toBe("[1 {:a 2}]");
  });

  it("constantly ignores any number of arguments", async () => {
    expect(await ok("((constantly 3))")).toBe("3");
    expect(await ok("((constantly nil) 1 2 3)")).toBe("nil");
  });
});

describe("comp", () => {
  it("composes right to left and passes all arguments to the rightmost fn", async () => {
    expect(await ok("((comp inc +) 1 2 3)")).toBe("7");
    expect(await ok("((comp (fn [x] (* x 10)) inc) 1)")).toBe("20");
  });

  it("accepts keywords, maps and sets as functions", async () => {
    expect(await ok("((comp :b :a) {:a {:b 5}})")).toBe("5");
    expect(await ok("((comp {1 :one} inc) 0)")).toBe(":one");
    expect(await ok("((comp #{2} inc) 1)")).toBe("2");
  });

  it("of no functions is identity, of one function is that function", async () => {
    expect(await ok("((comp) 5)")).toBe("5");
    expect(await ok("(let [f (fn [x] x)] (identical? f (comp f)))")).toBe("true");
    const e = await fails("((comp) 1 2)");
    expect(e.kind).toBe("arity_error");
  });

  it("rejects a non-function when composing, naming comp", async () => {
    const e = await fails("(comp inc 5)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("comp");
    expect(e.message).toContain("argument 2");
  });
});

describe("partial", () => {
  it("fixes several leading arguments", async () => {
    expect(await ok("((partial + 1 2) 3 4)")).toBe("10");
    expect(await ok("((partial (fn [a b c] [a b c]) :x :y) :z)")).toBe("[:x :y :z]");
  });

  it("works with no further arguments and with keywords", async () => {
    expect(await ok("((partial + 1 2))")).toBe("3");
    expect(await ok("((partial :a) {:a 9})")).toBe("9");
  });

  it("rejects a non-function", async () => {
    const e = await fails('(partial "f" 1)');
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("partial");
  });

  it("reports arity errors of the wrapped function", async () => {
    const e = await fails("((partial (fn [a b] a) 1) 2 3)");
    expect(e.kind).toBe("arity_error");
  });
});

describe("juxt", () => {
  it("returns a vector of each function's result", async () => {
    expect(await ok("((juxt + -) 5 3)")).toBe("[8 2]");
    expect(await ok("((juxt :a :b) {:a 1})")).toBe("[1 nil]");
  });

  it("with no functions returns an empty vector", async () => {
    expect(await ok("((juxt) {:a 1})")).toBe("[]");
  });

  it("rejects a non-function", async () => {
    const e = await fails("(juxt :a 1)");
    expect(e.message).toContain("juxt");
  });
});

describe("complement, fnil, some-fn, every-pred", () => {
  it("complement negates truthiness, for any callable", async () => {
    expect(await ok("((complement even?) 3)")).toBe("true");
    expect(await ok("((complement :a) {:a false})")).toBe("true");
    expect(await ok("((complement :a) {:a 0})")).toBe("false");
  });

  it("fnil replaces nil arguments only, position by position", async () => {
    expect(await ok("((fnil + 0 0) nil nil)")).toBe("0");
    expect(await ok("((fnil (fn [a b] [a b]) 1 2) nil false)")).toBe("[1 false]");
    expect(await ok("((fnil (fn [a b c] [a b c]) 1 2 3) nil nil nil)")).toBe("[1 2 3]");
    expect(await ok("((fnil inc 0) 5)")).toBe("6");
  });

  it("fnil leaves arguments past its defaults alone", async () => {
    expect(await ok("((fnil (fn [a b] [a b]) 1) nil nil)")).toBe("[1 nil]");
  });

  it("some-fn returns the first truthy result, else the last falsy one", async () => {
    expect(await ok("((some-fn :a :b) {:b 2})")).toBe("2");
    expect(await ok("((some-fn :a) {:a nil} {:a 5})")).toBe("5");
    expect(await ok("((some-fn even? neg?) 1 3)")).toBe("false");
    expect(await ok("((some-fn even?))")).toBe("nil");
  });

  it("every-pred is true only when all predicates hold for all arguments", async () => {
    expect(await ok("((every-pred pos? even?) 2 4)")).toBe("true");
    expect(await ok("((every-pred pos?) 1 -1)")).toBe("false");
    expect(await ok("((every-pred :a) {:a 1})")).toBe("true");
    expect(await ok("((every-pred pos?))")).toBe("true");
  });
});

describe("apply", () => {
  it("spreads the last collection after the leading arguments", async () => {
    expect(await ok("(apply + 1 2 [3 4])")).toBe("10");
    expect(await ok("(apply (fn [a b c] [a b c]) 1 [2 3])")).toBe("[1 2 3]");
  });

  it("calls user functions, builtins, keywords, maps and sets", async () => {
    expect(await ok("(apply (fn [& xs] xs) [1 2])")).toBe("[1 2]");
    expect(await ok("(apply max [3 9 2])")).toBe("9");
    expect(await ok('(apply :name [{:name "Ann"}])')).toBe('"Ann"');
    expect(await ok("(apply {:a 1} [:a])")).toBe("1");
    expect(await ok("(apply #{1 2 3} [2])")).toBe("2");
  });

  it("spreads nil as no arguments, strings as characters and maps as entries", async () => {
    expect(await ok("(apply + nil)")).toBe("0");
    expect(await ok('(apply (fn [& xs] xs) "ab")')).toBe('["a" "b"]');
    expect(await ok("(apply (fn [e] e) {:x 1})")).toBe("[:x 1]");
    expect(await ok("(apply + #{5})")).toBe("5");
  });

  it("rejects a last argument that is not a collection", async () => {
    const e = await fails("(apply + 1 2)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("apply");
    expect(e.message).toContain("last argument");
  });

  it("rejects a non-function first argument", async () => {
    const e = await fails("(apply 5 [1])");
    expect(e.kind).toBe("not_callable");
    expect(e.message).toContain("apply");
  });

  it("passes arity errors of the called function through", async () => {
    const e = await fails("(apply (fn [x y] (+ x y)) [1])");
    expect(e.kind).toBe("arity_error");
  });

  it("charges fuel for the spread elements", async () => {
    const xs = Array.from({ length: 50_000 }, (_, i) => i);
    const e = await fails("(apply (fn [& xs] 0) data/xs)", { ctx: { xs }, limits: { maxFuel: 10_000 } });
    expect(e.kind).toBe("fuel_exhausted");
  });
});

describe("memoize", () => {
  it("calls the function once per distinct argument values", async () => {
    const out = await prints('(def f (memoize (fn [x] (println "call" x) (* x 2)))) [(f 2) (f 2) (f 3)]');
    expect(out).toEqual(["call 2", "call 3"]);
  });

  it("compares arguments by value, not identity", async () => {
    const out = await prints('(def f (memoize (fn [v] (println "call") v))) (f [1 {:a 2}]) (f [1 {:a 2}])');
    expect(out).toEqual(["call"]);
  });

  it("distinguishes argument counts and orders", async () => {
    const out = await prints('(def f (memoize (fn [& xs] (println "call") xs))) (f 1 2) (f 2 1) (f 1) (f 1 2)');
    expect(out).toEqual(["call", "call", "call"]);
  });

  it("does not cache errors", async () => {
    const r = await evaluate('(def g (memoize (fn [x] (println "g") (/ 1 x)))) [(try (g 0) (catch e :err)) (try (g 0) (catch e :err))]');
    expect(r.ok && print(r.lisp)).toBe("[:err :err]");
    expect(r.prints).toEqual(["g", "g"]);
  });

  it("keeps a bounded cache: old results are recomputed after many distinct calls", async () => {
    const out = await prints('(def f (memoize (fn [x] (when (= x 0) (println "miss")) x))) (dotimes [i 10001] (f i)) (f 0)');
    expect(out).toEqual(["miss", "miss"]);
  });
});

describe("all-of, any-of, none-of", () => {
  it("combine predicates into a boolean predicate", async () => {
    expect(await ok("((all-of pos? even?) 4)")).toBe("true");
    expect(await ok("((all-of pos? even?) 3)")).toBe("false");
    expect(await ok("((any-of neg? even?) 3)")).toBe("false");
    expect(await ok("((any-of :b :a) {:a 1})")).toBe("true");
    expect(await ok("((none-of neg? even?) 3)")).toBe("true");
    expect(await ok("((none-of neg? even?) 2)")).toBe("false");
  });

  it("with no predicates: all-of and none-of accept, any-of rejects", async () => {
    expect(await ok("[((all-of) 1) ((any-of) 1) ((none-of) 1)]")).toBe("[true false true]");
  });

  it("work with where predicates", async () => {
    expect(await ok("((all-of (where :a = 1) (where :b > 1)) {:a 1 :b 2})")).toBe("true");
    expect(await ok("((any-of (where :a = 2) (where :b = 3)) {:a 1 :b 2})")).toBe("false");
  });

  it("reject a non-predicate, naming the combinator", async () => {
    const e = await fails("(any-of pos? 3)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("any-of");
  });
});

describe("condp without a match", () => {
  it("raises a value_error that shows the value and hints at a default", async () => {
    const e = await fails("(condp = 3 1 :one 2 :two)");
    expect(e.kind).toBe("value_error");
    expect(e.message).toBe("condp: no clause matches 3");
    expect(e.hint).toContain("default");
  });

  it("shortens a large value in the message", async () => {
    const e = await fails("(condp = data/xs 1 :one)", { ctx: { xs: Array.from({ length: 500 }, (_, i) => i) } });
    expect(e.message.length).toBeLessThan(100);
    expect(e.message).toContain("[0 1 2");
  });
});
