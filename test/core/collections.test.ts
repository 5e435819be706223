// Structure and access builtins: nil and empty inputs, strings as characters, maps as
// [k v] entries, sets rejected where position matters, wrong types and size limits.
import { describe, expect, it } from "vitest";
import { edn, errorOf } from "../support/run.js";

const error = (src: string, limits?: Record<string, number>) => errorOf(src, limits ? { limits } : {});

describe("count, empty?, not-empty, seq", () => {
  it("counts every kind of collection, graphemes of strings, and nil as 0", async () => {
    expect(await edn('[(count [1 2]) (count {:a 1}) (count #{1 2 3}) (count "héllo") (count "👍🏽") (count nil)]')).toBe("[2 1 3 5 1 0]");
  });

  it("count of a non-collection is a type error naming count", async () => {
    const e = await error("(count 42)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("count");
    expect(e.message).toContain("42");
    expect((await error("(count :k)")).hint).toContain("(count (:k m))");
  });

  it("empty? and not-empty agree on nil, empty and non-empty values", async () => {
    expect(await edn('[(empty? nil) (empty? "") (empty? {}) (empty? #{}) (empty? [nil])]')).toBe("[true true true true false]");
    expect(await edn('[(not-empty nil) (not-empty "") (not-empty {}) (not-empty {:a 1}) (not-empty "x")]')).toBe('[nil nil nil {:a 1} "x"]');
    expect((await error("(empty? 0)")).message).toContain("empty?");
  });

  it("seq gives a vector or nil, with map entries and characters", async () => {
    expect(await edn('[(seq nil) (seq "") (seq #{}) (seq "ab") (seq {:a 1}) (seq #{7})]')).toBe('[nil nil nil ["a" "b"] [[:a 1]] [7]]');
    expect(await edn("(let [v [1 2]] (identical? v (seq v)))")).toBe("true");
  });
});

describe("positional access", () => {
  it("first/second/last on vectors, strings, maps and nil", async () => {
    expect(await edn("[(first [1 2]) (second [1 2]) (last [1 2]) (first []) (second [1]) (last nil)]")).toBe("[1 2 2 nil nil nil]");
    expect(await edn('[(first "héllo") (last "héllo") (second "ab") (first "")]')).toBe('["h" "o" "b" nil]');
    expect(await edn("[(first {:a 1}) (last {:a 1 :b 2})]")).toBe("[[:a 1] [:b 2]]");
  });

  it("first of a long string takes only its first grapheme, even a long cluster", async () => {
    expect(await edn('(first (apply str "é" (repeat 100 "x")))')).toBe('"é"');
    const combining = "a" + "\u0301".repeat(70) + "b";
    expect(await edn(`(= (first "${combining}") (first (vec "${combining}")))`)).toBe("true");
    expect(await edn(`(= (first "${combining}") "a")`)).toBe("false");
  });

  it("sets give their elements in their own order, as in Clojure; nth and peek still refuse them", async () => {
    expect(await edn("[(first #{7}) (second #{7}) (last #{7}) (rest #{7}) (next #{7}) (butlast #{7}) (ffirst #{[1]})]")).toBe("[7 nil 7 [] nil nil 1]");
    expect(await edn("[(first (sorted-set 3 1 2)) (second (sorted-set 3 1 2)) (last (sorted-set 3 1 2)) (drop 1 (sorted-set 3 1 2)) (take 2 (sorted-set 3 1 2))]")).toBe("[1 2 3 [2 3] [1 2]]");
    expect(await edn("(= (set (take 3 #{1 2 3})) #{1 2 3})")).toBe("true");
    for (const f of ["(nth #{1} 0)", "(peek #{1})"]) {
      const e = await error(f);
      expect(e.kind, f).toBe("type_error");
      expect(e.message, f).toContain("sets are unordered");
    }
  });

  it("nth: in range, with a default, out of range, floats, nil, maps", async () => {
    expect(await edn('[(nth [1 2 3] 0) (nth [1 2 3] 2) (nth "abc" 1) (nth [1] 5 :d) (nth [1] -1 :d) (nth nil 3) (nth [1 2] 1.0)]')).toBe('[1 3 "b" :d :d nil 2]');
    const e = await error("(nth [1 2 3] 3)");
    expect(e.kind).toBe("index_out_of_bounds");
    expect(e.message).toContain("nth");
    expect(e.message).toContain("3");
    expect(e.hint).toContain("default");
    expect((await error('(nth "ab" 2)')).kind).toBe("index_out_of_bounds");
    expect((await error("(nth {:a 1} 0)")).hint).toContain("get");
    expect((await error("(nth [1] :a)")).message).toContain("nth expects a number");
    expect((await error("(nth 5 0)")).kind).toBe("type_error");
  });

  it("rest always gives a vector, next gives nil when nothing is left", async () => {
    expect(await edn('[(rest [1 2 3]) (rest [1]) (rest []) (rest nil) (rest "abc") (rest {:a 1 :b 2})]')).toBe('[[2 3] [] [] [] ["b" "c"] [[:b 2]]]');
    expect(await edn("[(next [1 2 3]) (next [1]) (next []) (next nil)]")).toBe("[[2 3] nil nil nil]");
  });

  it("butlast is nil (falsy, as in Clojure) when nothing is left", async () => {
    expect(await edn('[(butlast [1 2 3]) (butlast [1]) (butlast []) (butlast nil) (butlast "abc") (butlast "a")]')).toBe('[[1 2] nil nil nil ["a" "b"] nil]');
    expect(await edn("(if (butlast [1]) :more :done)")).toBe(":done");
  });

  it("the composed accessors", async () => {
    expect(await edn("[(ffirst [[1 2] [3]]) (ffirst []) (fnext [1 2 3]) (fnext [1]) (nfirst [[1 2]]) (nfirst [[1]]) (nnext [1 2 3]) (nnext [1 2])]")).toBe("[1 nil 2 nil [2] nil [3] nil]");
  });

  it("nthrest and nthnext", async () => {
    expect(await edn("[(nthrest [1 2 3] 1) (nthrest [1 2 3] 5) (nthrest [1 2] 0) (nthrest nil 2) (nthrest nil 0) (nthnext [1 2 3] 2) (nthnext [1 2] 2) (nthnext [1 2] -1)]")).toBe("[[2 3] [] [1 2] nil nil [3] nil [1 2]]");
  });

  it("peek and pop work at the end of a vector", async () => {
    expect(await edn("[(peek [1 2]) (peek []) (peek nil) (pop [1 2]) (pop [1]) (pop nil)]")).toBe("[2 nil nil [1] [] nil]");
    const e = await error("(pop [])");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("pop");
    expect((await error('(peek "ab")')).hint).toContain("last");
    expect((await error("(pop {:a 1})")).message).toContain("pop expects a vector");
  });
});

describe("conj, cons, into", () => {
  it("conj adds at the end of vectors, into sets, entries and maps into maps; nil starts a vector", async () => {
    expect(await edn("[(conj [1] 2 3) (conj nil 1 2) (conj [1] nil) (conj #{1} 2 1)]")).toBe("[[1 2 3] [1 2] [1 nil] #{1 2}]");
    expect(await edn("(conj {:a 1} [:b 2] {:c 3} nil)")).toBe("{:a 1 :b 2 :c 3}");
    expect(await edn("[(conj [1]) (conj nil)]")).toBe("[[1] nil]");
  });

  it("conj rejects what it cannot add, with hints for strings and bad entries", async () => {
    const s = await error('(conj "ab" "c")');
    expect(s.kind).toBe("type_error");
    expect(s.hint).toContain("str");
    const m = await error("(conj {:a 1} [:b 2 3])");
    expect(m.message).toContain("conj onto a map");
    expect(m.hint).toContain("assoc");
    expect((await error("(conj 5 1)")).message).toContain("conj expects a vector, map or set");
  });

  it("(conj) is an empty vector, as in Clojure (a reducing function's start)", async () => {
    expect(await edn("(conj)")).toBe("[]");
  });

  it("cons puts x first and always returns a vector", async () => {
    expect(await edn('[(cons 0 [1 2]) (cons 0 nil) (cons 0 "ab") (cons 0 {:a 1})]')).toBe('[[0 1 2] [0] [0 "a" "b"] [0 [:a 1]]]');
  });

  it("into vectors, maps (from pairs, maps or a set of pairs) and sets", async () => {
    expect(await edn('[(into [1] [2 3]) (into [] "ab") (into [] {:a 1}) (into #{} [1 1 2]) (into nil [1 2])]')).toBe('[[1 2 3] ["a" "b"] [[:a 1]] #{1 2} [1 2]]');
    expect(await edn("[(into {} [[:a 1] [:b 2]]) (into {:a 1} {:b 2}) (into {} #{[:a 1]}) (into {} [{:x 1} nil])]")).toBe("[{:a 1 :b 2} {:a 1 :b 2} {:a 1} {:x 1}]");
    expect(await edn("[(into) (into [1]) (into [1] nil)]")).toBe("[[] [1] [1]]");
  });

  it("into explains transducers and rejects bad targets", async () => {
    const e = await error("(into [] (fn [x] x) [1])");
    expect(e.message).toContain("into expects a transducer such as (map f) or (filter p)");
    expect(e.hint).toContain("comp");
    expect((await error('(into "a" ["b"])')).hint).toContain("str");
    expect((await error("(into {} [1 2])")).message).toContain("[key value]");
  });

  it("growing past the collection limit fails with collection_too_large", async () => {
    const limits = { maxCollectionSize: 5 };
    expect((await error("(conj [1 2 3 4 5] 6)", limits)).kind).toBe("collection_too_large");
    expect((await error("(into [1 2 3] [4 5 6])", limits)).kind).toBe("collection_too_large");
    expect((await error("(into #{} (range 4) )", { maxCollectionSize: 3 })).kind).toBe("collection_too_large");
    expect((await error("(cons 0 [1 2 3 4 5])", limits)).kind).toBe("collection_too_large");
    expect(await edn("(conj [1 2 3 4] 5)", { limits })).toBe("[1 2 3 4 5]");
  });
});

describe("vec, vector, empty, subvec", () => {
  it("vec converts any seqable; nil becomes [] as in Clojure", async () => {
    expect(await edn('[(vec nil) (vec "ab") (vec {:a 1}) (vec #{}) (vec [1])]')).toBe('[[] ["a" "b"] [[:a 1]] [] [1]]');
    expect((await error("(vec 1)")).message).toContain("vec expects a collection");
  });

  it("vector and empty", async () => {
    expect(await edn("[(vector) (vector 1 nil)]")).toBe("[[] [1 nil]]");
    expect(await edn('[(empty [1]) (empty {:a 1}) (empty #{1}) (empty nil) (empty "ab")]')).toBe("[[] {} #{} nil nil]");
  });

  it("subvec slices vectors and checks its bounds", async () => {
    expect(await edn("[(subvec [1 2 3 4] 1) (subvec [1 2 3 4] 1 3) (subvec [1 2] 2 2)]")).toBe("[[2 3 4] [2 3] []]");
    const e = await error("(subvec [1 2 3] 2 5)");
    expect(e.kind).toBe("index_out_of_bounds");
    expect(e.message).toContain("subvec");
    expect((await error("(subvec [1 2 3] 2 1)")).kind).toBe("index_out_of_bounds");
    expect((await error('(subvec "abc" 1)')).hint).toContain("subs");
  });
});

describe("contains? and find", () => {
  it("contains? tests keys (with keyword/string fallback), set members and indices", async () => {
    expect(await edn('[(contains? {:a 1} :a) (contains? {"a" 1} :a) (contains? {:a nil} :a) (contains? #{1} 1) (contains? [:x :y] 1) (contains? [:x] :x) (contains? "ab" 1) (contains? nil 1)]')).toBe(
      "[true true true true true false true false]",
    );
    const e = await error("(contains? 5 1)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("contains?");
  });

  it("find with a predicate, keyword or set returns the first matching element", async () => {
    expect(await edn('[(find even? [1 2 4]) (find :ok [{:ok false} {:ok true}]) (find #{"b" "c"} ["a" "b"]) (find #{"x"} ["a"]) (find odd? nil)]')).toBe('[2 {:ok true} "b" nil nil]');
    expect(await edn("(find (fn [[k v]] (> v 1)) {:a 1 :b 2})")).toBe("[:b 2]");
  });

  it("find on a map with a key returns the entry, like Clojure", async () => {
    expect(await edn('[(find {:a 1} :a) (find {:a 1} :b) (find {"a" 1} :a) (find {:a 1} "a") (find {1 :x} 1)]')).toBe('[[:a 1] nil ["a" 1] [:a 1] [1 :x]]');
  });

  it("find on a map looks up a key that is a collection, and on a vector an index, like Clojure", async () => {
    // A map or vector is never a predicate here: (find m [x y]) looks up the composite key.
    expect(await edn("[(find {[1 2] :pt} [1 2]) (find {:a 1} [:a]) (find {#{1} :s} #{1}) (find (sorted-map [0] :z) [0])]")).toBe("[[[1 2] :pt] nil [#{1} :s] [[0] :z]]");
    expect(await edn("[(find [10 20] 1) (find [10 20] 2) (find [10 20] -1) (find [10 20] (/ 2 2)) (find [10 20] :a)]")).toBe("[[1 20] nil nil [1 20] nil]");
  });

  it("find rejects a non-function predicate", async () => {
    const e = await error("(find 1 [1 2])");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("find");
  });
});

describe("budgets", () => {
  it("rest over a vector shares its structure, so walking it with loop is linear", async () => {
    expect(await edn("(loop [xs (vec (range 200000)) n 0] (if (seq xs) (recur (rest xs) (inc n)) n))", { limits: { maxFuel: 2_000_000 } })).toBe("200000");
    const e = await error("(loop [xs (vec (range 200000))] (if (seq xs) (recur (rest xs)) :done))", { maxFuel: 100_000 });
    expect(e.kind).toBe("fuel_exhausted");
  });

  it("copying builtins charge fuel per element", async () => {
    expect((await error("(count (vec (range 300000)))", { maxFuel: 100_000 })).kind).toBe("fuel_exhausted");
  });

  it("strings turned into characters respect the collection limit", async () => {
    expect((await error('(vec "abcdef")', { maxCollectionSize: 5 })).kind).toBe("collection_too_large");
  });
});
