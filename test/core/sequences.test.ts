// Sequence builtins: nil and empty inputs, strings and maps as sequences, callables other
// than functions, wrong types (the message names the builtin), and limits that must fail
// fast instead of building something huge.
import { describe, expect, it } from "vitest";
import { edn, errorOf, failure } from "../support/run.js";

const error = (src: string, limits?: Record<string, number>) => errorOf(src, limits ? { limits } : {});

describe("map and friends", () => {
  it("map over vectors, strings, maps (entries), sets and nil", async () => {
    expect(await edn('[(map inc [1 2]) (map identity "ab") (map first {:a 1 :b 2}) (map inc #{1}) (map inc nil)]')).toBe('[[2 3] ["a" "b"] [:a :b] [2] []]');
  });

  it("keywords, maps, sets and vectors are callable as the function", async () => {
    expect(await edn('[(map :a [{:a 1} {"a" 2} {}]) (map {:x 1} [:x :y]) (map #{2} [1 2]) (map [10 20] [1 0])]')).toBe("[[1 2 nil] [1 nil] [nil 2] [20 10]]");
  });

  it("several collections stop at the shortest", async () => {
    expect(await edn("[(map + [1 2 3] [10 20]) (map vector [1 2] [:a :b] [true false]) (map + nil [1]) (mapv * [2] [5 6])]")).toBe("[[11 22] [[1 :a true] [2 :b false]] [] [10]]");
  });

  it("a keyword over a single map is a type error that points at the fix", async () => {
    const e = await error("(map :key {:key 1})");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("map with keyword :key expects a collection of maps, got a single map");
    expect(e.hint).toContain("(:key m)");
    expect((await error("(mapv :key {:key 1})")).message).toContain("mapv");
  });

  it("argument mistakes name the builtin and suggest the order", async () => {
    const swapped = await error("(map [1 2] inc)");
    expect(swapped.message).toContain("map expects a collection");
    expect(swapped.hint).toContain("function comes first");
    const notFn = await error("(map 1 [1 2])");
    expect(notFn.message).toContain("map expects a function");
    expect((await error("(map inc 5)")).message).toContain("map expects a collection, got integer 5");
  });

  it("map-indexed, mapcat, keep, keep-indexed", async () => {
    expect(await edn('[(map-indexed vector "ab") (map-indexed vector {:a 1})]')).toBe('[[[0 "a"] [1 "b"]] [[0 [:a 1]]]]');
    expect(await edn("[(mapcat (fn [x] [x x]) [1 2]) (mapcat identity [[1] nil [] #{2}]) (mapcat vector [1 2] [:a :b]) (mapcat reverse {:a 1})]")).toBe("[[1 1 2 2] [1 2] [1 :a 2 :b] [1 :a]]");
    expect(await edn("[(keep :a [{:a 1} {:a false} {}]) (keep-indexed (fn [i x] (when (odd? i) x)) [:a :b :c :d])]")).toBe("[[1 false] [:b :d]]");
    const e = await error("(mapcat (fn [x] x) [[1] 2])");
    expect(e.message).toContain("mapcat: the function must return a collection");
  });

  it("mapcat that explodes stops at the collection limit", async () => {
    const r = await failure("(mapcat (fn [x] (range 1000)) (range 10000))", { limits: { maxCollectionSize: 50_000 } });
    expect(r.error.kind).toBe("collection_too_large");
    // Stopped near the limit: about 51 of the 10,000 ranges were built.
    expect(r.stats.fuelUsed).toBeLessThan(200_000);
  });
});

describe("filter, remove, some, every?", () => {
  it("filter and remove with functions, keywords and sets, over strings and maps", async () => {
    expect(await edn('[(filter even? [1 2 3 4]) (remove even? [1 2 3 4]) (filter #{"a"} ["a" "b" "a"]) (filter :ok [{:ok 1} {:ok nil}]) (filterv odd? #{1 2})]')).toBe('[[2 4] [1 3] ["a" "a"] [{:ok 1}] [1]]');
    expect(await edn('[(filter #(= % "l") "hello") (filter (fn [[k v]] (> v 1)) {:a 1 :b 2}) (filter odd? nil)]')).toBe('[["l" "l"] [[:b 2]] []]');
  });

  it("filter of a non-collection names filter", async () => {
    const e = await error("(filter odd? 42)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("filter expects a collection, got integer 42");
  });

  it("some returns the first truthy result; every?, not-any?, not-every? return booleans", async () => {
    expect(await edn('[(some even? [1 3]) (some #{:b} [:a :b]) (some :x [{} {:x 0}]) (some even? nil) (some #(when (> % 1) (* % 10)) [1 2 3])]')).toBe("[nil :b 0 nil 20]");
    // 0 and "" are truthy: not-any? must not read them as JS falsy values, even through apply.
    expect(await edn('[(not-any? :x [{:x 0}]) (apply not-any? [:x [{:x ""}]]) (not-any? :x [{:x false}])]')).toBe("[false false true]");
    expect(await edn("[(every? odd? []) (every? odd? [1 3]) (every? #{1 2} [1 3]) (not-any? odd? [2]) (not-any? odd? [1]) (not-every? odd? [1 2]) (not-every? odd? nil)]")).toBe("[true true false true false true false]");
  });
});

describe("reduce, reduce-kv, reductions", () => {
  it("reduce with and without init, over maps and strings", async () => {
    expect(await edn('[(reduce + [1 2 3]) (reduce + 10 [1 2 3]) (reduce - [10 1 2]) (reduce str "" "abc") (reduce (fn [a [k v]] (+ a v)) 0 {:a 1 :b 2})]')).toBe('[6 16 7 "abc" 3]');
  });

  it("(reduce f []) calls (f); one element is returned without calling f", async () => {
    expect(await edn("[(reduce + []) (reduce * nil) (reduce + 5 []) (reduce (fn [a b] :called) [:only])]")).toBe("[0 1 5 :only]");
    expect((await error("(reduce (fn [a b] a) [])")).kind).toBe("arity_error");
  });

  it("reduce with a non-function or a non-collection is a type error naming reduce", async () => {
    expect((await error("(reduce 1 [1 2])")).message).toContain("reduce expects a function");
    expect((await error("(reduce + 0 5)")).message).toContain("reduce expects a collection");
  });

  it("reduce-kv over maps, vectors (by index) and nil", async () => {
    expect(await edn("[(reduce-kv (fn [m k v] (assoc m v k)) {} {:a 1 :b 2}) (reduce-kv (fn [a i x] (+ a (* i x))) 0 [5 6 7]) (reduce-kv (fn [a k v] a) :init nil)]")).toBe("[{1 :a 2 :b} 20 :init]");
    expect((await error('(reduce-kv (fn [a k v] a) 0 "ab")')).hint).toContain("reduce");
  });

  it("reductions keeps the intermediate values", async () => {
    expect(await edn("[(reductions + [1 2 3]) (reductions + 10 [1 2]) (reductions + []) (reductions + 5 nil)]")).toBe("[[1 3 6] [10 11 13] [0] [5]]");
  });
});

describe("range and repeat", () => {
  it("range with one to three arguments, counting up and down", async () => {
    expect(await edn("[(range 3) (range 2 5) (range 0 10 3) (range 5 0 -2) (range 0 5 -1) (range 5 5) (range -2)]")).toBe("[[0 1 2] [2 3 4] [0 3 6 9] [5 3 1] [] [] []]");
  });

  it("range elements take the type of start and step, as in Clojure", async () => {
    expect(await edn("[(range 0 1 0.25) (range 1.5) (range 0 2.0) (range 0.5 2) (range (/ 6 2))]")).toBe("[[0 0.25 0.5 0.75] [0 1] [0 1] [0.5 1.5] [0 1 2]]");
    // A float step adds up as in Clojure, so rounding can add an element just below end.
    expect(await edn("(count (range 0 1 0.1))")).toBe("11");
  });

  it("range has no infinite form and refuses a zero step", async () => {
    expect((await error("(range)")).kind).toBe("arity_error");
    const e = await error("(range 0 10 0)");
    expect(e.kind).toBe("value_error");
    expect(e.message).toContain("range");
    expect(await edn("(range 3 3 0)")).toBe("[]");
    expect((await error('(range "5")')).message).toContain("range expects numbers");
  });

  it("a huge range fails before allocating", async () => {
    const r = await failure("(range 1e9)");
    expect(r.error.kind).toBe("collection_too_large");
    expect(r.stats.fuelUsed).toBe(0);
    expect((await error("(range ##Inf)")).kind).toBe("collection_too_large");
    expect((await error("(range 0 100 1)", { maxCollectionSize: 50 })).kind).toBe("collection_too_large");
  });

  it("repeat needs a count", async () => {
    expect(await edn("[(repeat 2 :x) (repeat 0 :x) (repeat -1 :x)]")).toBe("[[:x :x] [] []]");
    const e = await error("(repeat :x)");
    expect(e.kind).toBe("arity_error");
    expect(e.message).toContain("(repeat n x)");
    expect((await error("(repeat 1e9 :x)")).kind).toBe("collection_too_large");
  });
});

describe("take, drop and their variants", () => {
  it("take and drop on vectors, strings (characters), maps and nil", async () => {
    expect(await edn('[(take 2 [1 2 3]) (take 5 [1]) (take 0 [1]) (take -1 [1]) (take 2 "hello") (take 1 {:a 1}) (take 2 nil)]')).toBe('[[1 2] [1] [] [] ["h" "e"] [[:a 1]] []]');
    expect(await edn('[(drop 2 [1 2 3]) (drop 5 [1]) (drop -1 [1]) (drop 2 "hello") (drop 1 nil)]')).toBe('[[3] [] [1] ["l" "l" "o"] []]');
  });

  it("counts given as floats are rounded up, as in Clojure", async () => {
    expect(await edn("[(take (/ 4 2) [1 2 3 4]) (take 1.5 [1 2 3]) (drop 1.5 [1 2 3])]")).toBe("[[1 2] [1 2] [3]]");
    expect((await error("(take :a [1])")).message).toContain("take expects a number");
  });

  it("take and drop walk a set in its own order, as in Clojure", async () => {
    expect(await edn("[(count (take 2 #{1 2 3})) (drop 1 #{1}) (take 2 (sorted-set 5 3 4))]")).toBe("[2 [] [3 4]]");
  });

  it("take-while, drop-while, take-last, drop-last, split-at, split-with, take-nth", async () => {
    expect(await edn("[(take-while pos? [1 2 0 3]) (drop-while pos? [1 2 0 3]) (take-while :a [{:a 1} {}]) (take-while pos? nil)]")).toBe("[[1 2] [0 3] [{:a 1}] []]");
    expect(await edn("[(take-last 2 [1 2 3]) (take-last 5 [1]) (take-last 0 [1]) (take-last 2 []) (drop-last [1 2 3]) (drop-last 2 [1 2 3]) (drop-last 5 [1])]")).toBe("[[2 3] [1] nil nil [1 2] [1] []]");
    expect(await edn("[(split-at 1 [1 2 3]) (split-at 9 [1]) (split-with odd? [1 3 2 5]) (split-with odd? [])]")).toBe("[[[1] [2 3]] [[1] []] [[1 3] [2 5]] [[] []]]");
    expect(await edn('[(take-nth 2 [1 2 3 4 5]) (take-nth 3 "abcdefg") (take-nth 1 nil)]')).toBe('[[1 3 5] ["a" "d" "g"] []]');
    expect((await error("(take-nth 0 [1])")).kind).toBe("value_error");
  });
});

describe("distinct, dedupe, frequencies, group-by", () => {
  it("distinct keeps first-seen order and uses = (1 and 1.0 are the same)", async () => {
    expect(await edn('[(distinct [1 2 1 3]) (distinct "aabc") (distinct [1 1.0 [1] [1.0] {:a 1} {:a 1} :a "a" nil nil]) (distinct nil)]')).toBe('[[1 2 3] ["a" "b" "c"] [1 [1] {:a 1} :a "a" nil] []]');
  });

  it("dedupe removes only consecutive duplicates", async () => {
    expect(await edn("[(dedupe [1 1 2 1 1]) (dedupe []) (dedupe [[1] [1] [2]])]")).toBe("[[1 2 1] [] [[1] [2]]]");
  });

  it("frequencies and group-by build maps in first-seen order", async () => {
    expect(await edn('[(frequencies [:a "a" :a 1 1.0]) (frequencies nil) (frequencies "aab")]')).toBe('[{:a 2 "a" 1 1 2} {} {"a" 2 "b" 1}]');
    expect(await edn('[(group-by odd? [1 2 3]) (group-by :t [{:t "x"} {"t" "y"} {:t "x"}]) (group-by count ["a" "bb" "c"]) (group-by first nil)]')).toBe(
      '[{true [1 3] false [2]} {"x" [{:t "x"} {:t "x"}] "y" [{"t" "y"}]} {1 ["a" "c"] 2 ["bb"]} {}]',
    );
    expect(await edn('(group-by "k" [{"k" 1} {:k 1}])')).toBe('{1 [{"k" 1} {:k 1}]}');
  });

  // Speed is measured by npm run bench; here the work is bounded: linear in the input (at most 12 steps an element).
  it("large inputs stay linear", async () => {
    const v = await edn("[(count (distinct (range 100000))) (count (group-by #(mod % 7) (range 100000))) (count (frequencies (map #(mod % 13) (range 100000))))]", { limits: { maxFuel: 1_200_000 } });
    expect(v).toBe("[100000 7 13]");
  });
});

describe("concat, flatten, interleave, interpose, zip", () => {
  it("concat takes any seqables", async () => {
    expect(await edn('[(concat [1] [2 3]) (concat) (concat nil "ab" {:a 1})]')).toBe('[[1 2 3] [] ["a" "b" [:a 1]]]');
    expect((await error("(concat [1] 2)")).message).toContain("concat expects a collection");
    expect((await error("(concat [1 2 3] [4 5 6])", { maxCollectionSize: 5 })).kind).toBe("collection_too_large");
  });

  it("flatten flattens nested vectors only, iteratively", async () => {
    expect(await edn("[(flatten [1 [2 [3 [4]]]]) (flatten [[] [[]]]) (flatten [#{1} {:a [1]}]) (flatten nil)]")).toBe("[[1 2 3 4] [] [#{1} {:a [1]}] []]");
    const deep = "[".repeat(200) + "1" + "]".repeat(200);
    expect(await edn(`(flatten ${deep})`)).toBe("[1]");
    expect((await error("(flatten {:a 1})")).hint).toContain("vals");
  });

  it("flatten of data nested deeper than the reader allows does not overflow", async () => {
    const src = "(flatten (loop [i 0 v [1]] (if (< i 20000) (recur (inc i) [v]) v)))";
    expect(await edn(src)).toBe("[1]");
  });

  it("interleave and interpose", async () => {
    expect(await edn('[(interleave [1 2 3] [:a :b]) (interleave) (interleave [1 2]) (interleave "ab" [1 2])]')).toBe('[[1 :a 2 :b] [] [1 2] ["a" 1 "b" 2]]');
    expect(await edn("[(interpose 0 [1 2 3]) (interpose 0 [1]) (interpose 0 nil)]")).toBe("[[1 0 2 0 3] [1] []]");
  });

  it("zip pairs up elements, stopping at the shortest", async () => {
    expect(await edn('[(zip [1 2 3] [:a :b]) (zip "ab" [1 2]) (zip [1] [2] [3]) (zip [] [1])]')).toBe('[[[1 :a] [2 :b]] [["a" 1] ["b" 2]] [[1 2 3]] []]');
  });
});

describe("partition family", () => {
  it("partition drops an incomplete chunk unless padded", async () => {
    expect(await edn("[(partition 2 [1 2 3 4 5]) (partition 2 1 [1 2 3]) (partition 2 3 [1 2 3 4 5 6 7]) (partition 10 [1 2]) (partition 2 nil)]")).toBe("[[[1 2] [3 4]] [[1 2] [2 3]] [[1 2] [4 5]] [] []]");
    expect(await edn("[(partition 3 3 [:a] [1 2 3 4 5 6 7 8]) (partition 3 1 [:p] [1 2 3 4]) (partition 3 3 [] [1 2 3 4])]")).toBe("[[[1 2 3] [4 5 6] [7 8 :a]] [[1 2 3] [2 3 4] [3 4 :p]] [[1 2 3] [4]]]");
  });

  it("partition-all keeps incomplete chunks; partition-by splits on changes", async () => {
    expect(await edn('[(partition-all 2 [1 2 3]) (partition-all 2 3 [1 2 3 4 5 6 7]) (partition-all 3 1 [1 2 3]) (partition-all 2 "abc")]')).toBe('[[[1 2] [3]] [[1 2] [4 5] [7]] [[1 2 3] [2 3] [3]] [["a" "b"] ["c"]]]');
    expect(await edn("[(partition-by odd? [1 3 2 4 5]) (partition-by identity []) (partition-by :k [{:k 1} {:k 1} {:k 2}])]")).toBe("[[[1 3] [2 4] [5]] [] [[{:k 1} {:k 1}] [{:k 2}]]]");
  });

  it("sizes and steps must be positive", async () => {
    for (const src of ["(partition 0 [1])", "(partition 2 0 [1 2])", "(partition-all -1 [1])"]) {
      const e = await error(src);
      expect(e.kind, src).toBe("value_error");
      expect(e.message, src).toMatch(/^partition(-all)? expects a positive/);
    }
  });

  it("overlapping windows over big data run out of fuel instead of hanging", async () => {
    const r = await failure("(count (partition 5000 1 (range 100000)))");
    expect(r.error.kind).toBe("fuel_exhausted");
  });
});

describe("reverse, sort, sort-by", () => {
  it("reverse gives a vector; strings reverse as characters", async () => {
    expect(await edn('[(reverse [1 2 3]) (reverse "abc") (reverse nil) (reverse {:a 1 :b 2})]')).toBe('[[3 2 1] ["c" "b" "a"] [] [[:b 2] [:a 1]]]');
    expect(await edn("(reverse (sorted-set 1 3 2))")).toBe("[3 2 1]");
  });

  it("sort orders numbers, strings, keywords, vectors and nil; sets and strings can be sorted", async () => {
    expect(await edn('[(sort [3 1.5 2]) (sort ["b" "a"]) (sort [:b :a]) (sort [[2] [1 1] [1]]) (sort [2 nil 1]) (sort #{3 1 2}) (sort "cab") (sort nil)]')).toBe(
      '[[1.5 2 3] ["a" "b"] [:a :b] [[1] [2] [1 1]] [nil 1 2] [1 2 3] ["a" "b" "c"] []]',
    );
  });

  it("orders keywords as Clojure does: a plain keyword first, then by namespace, then by name", async () => {
    // Not by the whole text: "user/id" < "user-x/a" and "a.b/c" < "a/c" as strings.
    expect(await edn("[(sort [:user-x/a :user/id :b :a/c :a.b/c :a]) (compare :user/id :user-x/a) (compare :z :a/b) (keys (sorted-map :x/b 1 :a 2 :x/a 3))]")).toBe(
      "[[:a :b :a/c :a.b/c :user/id :user-x/a] -1 -1 [:a :x/a :x/b]]",
    );
  });

  it("sort with a comparator: <, >, compare, numeric or boolean functions", async () => {
    expect(await edn('[(sort > [1 3 2]) (sort < [3 1 2]) (sort compare ["b" "a"]) (sort (fn [a b] (- b a)) [1 3 2]) (sort (fn [a b] (> a b)) [1 3 2]) (sort > ["a" "c" "b"])]')).toBe(
      '[[3 2 1] [1 2 3] ["a" "b"] [3 2 1] [3 2 1] ["c" "b" "a"]]',
    );
    expect((await error("(sort (fn [a b] :x) [1 2])")).message).toContain("comparator must return a number or a boolean");
  });

  it("sort explains what it cannot order", async () => {
    const maps = await error("(sort [{:a 2} {:a 1}])");
    expect(maps.kind).toBe("type_error");
    expect(maps.hint).toContain("sort-by");
    expect((await error('(sort [1 "a"])')).kind).toBe("type_error");
  });

  it("sort-by is stable, takes keywords and string keys, and a comparator", async () => {
    const rows = '[{:n "b" :p 2} {:n "a" :p 1} {"n" "c" "p" 2} {:n "d" :p 1}]';
    expect(await edn(`(map :n (sort-by :p ${rows}))`)).toBe('["a" "d" "b" "c"]');
    expect(await edn(`(map :n (sort-by :p > ${rows}))`)).toBe('["b" "c" "a" "d"]');
    expect(await edn(`(map :n (sort-by :n > ${rows}))`)).toBe('["d" "c" "b" "a"]');
    expect(await edn(`(map :n (sort-by "p" ${rows}))`)).toBe('["a" "d" "b" "c"]');
    expect(await edn("[(sort-by count [[1 2] [1]]) (sort-by (juxt :a :b) [{:a 1 :b 2} {:a 1 :b 1}]) (sort-by val {:x 2 :y 1})]")).toBe("[[[1] [1 2]] [{:a 1 :b 1} {:a 1 :b 2}] [[:y 1] [:x 2]]]");
  });

  it("sort-by with arguments out of order says so", async () => {
    const e = await error("(sort-by :a :b [{:a 1}])");
    expect(e.message).toContain("sort-by expects a comparator function");
    expect(e.hint).toContain("key function comes first");
  });

  // At most 2 n log2 n steps (n = 100k: 3.4M); a quadratic sort would need billions.
  it("sorting 100k elements is stable, in n log n steps", async () => {
    const v = await edn("(let [xs (sort-by #(mod % 10) (range 100000))] [(take 3 xs) (count xs)])", { limits: { maxFuel: 3_400_000 } });
    expect(v).toBe("[[0 10 20] 100000]");
  });
});

describe("reference extras: pluck, pairs, combinations, doall, dorun", () => {
  it("pluck reads a key from every map, with keyword/string fallback", async () => {
    expect(await edn('[(pluck :id [{:id 1} {"id" 2} {}]) (pluck "id" [{:id 1}]) (pluck :id nil)]')).toBe("[[1 2 nil] [1] []]");
    expect((await error("(pluck :id {:id 1})")).message).toContain("pluck expects a collection of maps");
  });

  it("pairs and combinations, in index order", async () => {
    expect(await edn('[(pairs [1 2 3]) (pairs "ab") (pairs [1]) (pairs nil)]')).toBe('[[[1 2] [1 3] [2 3]] [["a" "b"]] [] []]');
    expect(await edn("[(combinations [1 2 3 4] 3) (combinations [1 2] 0) (combinations [] 0) (combinations [1] 2) (combinations [1 2] -1) (count (combinations (range 10) 5))]")).toBe(
      "[[[1 2 3] [1 2 4] [1 3 4] [2 3 4]] [[]] [[]] [] [] 252]",
    );
  });

  it("combinations that would explode fail before any work", async () => {
    const r = await failure("(combinations (range 1000) 10)");
    expect(r.error.kind).toBe("collection_too_large");
    expect(r.error.message).toContain("combinations");
    // Only the 1,000-element range was built.
    expect(r.stats.fuelUsed).toBe(1_000);
  });

  it("doall returns the collection, dorun nil", async () => {
    expect(await edn("[(doall [1 2]) (doall 1 [1 2]) (dorun [1]) (dorun 1 [1])]")).toBe("[[1 2] [1 2] nil nil]");
  });
});

describe("fuel", () => {
  it("builtins charge fuel per element touched", async () => {
    expect((await error("(count (map inc (range 10000)))", { maxFuel: 5_000 })).kind).toBe("fuel_exhausted");
    expect((await error("(count (sort (range 10000)))", { maxFuel: 50_000 })).kind).toBe("fuel_exhausted");
    expect(await edn("(count (map inc (range 1000)))", { limits: { maxFuel: 5_000 } })).toBe("1000");
  });

  // 300k element visits in all, at most 2 steps each.
  it("map, filter and reduce over 100k elements take a few steps an element", async () => {
    const v = await edn("(let [xs (range 100000)] [(count (map (fn [x] (* 2 x)) xs)) (count (filter even? xs)) (reduce + xs)])", { limits: { maxFuel: 600_000 } });
    expect(v).toBe("[100000 50000 4999950000]");
  });
});
