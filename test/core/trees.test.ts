// walk, prewalk, postwalk, the key and replace helpers, and tree-seq: visiting order, map
// entries, rebuilding each kind of collection, errors, and the depth and size budgets.
import { describe, expect, it } from "vitest";
import { edn as ok, errorOf as fails, printsOf as prints } from "../support/run.js";

// A vector nested n levels deep, built by the program itself: [[[...[1]...]]].
const nested = (n: number): string => `(loop [i 0 v 1] (if (< i ${n}) (recur (inc i) [v]) v))`;

describe("walk", () => {
  it("applies inner to each element and outer to the rebuilt collection", async () => {
    expect(await ok("(walk inc (fn [v] (apply + v)) [1 2 3])")).toBe("9");
    expect(await ok("(walk inc identity #{1 2})")).toBe("#{2 3}");
    expect(await ok("(walk inc inc 5)")).toBe("6");
    expect(await ok("(walk identity identity nil)")).toBe("nil");
  });

  it("walks maps as [k v] entries and drops entries that become nil", async () => {
    expect(await ok("(walk (fn [[k v]] [k (* 10 v)]) identity {:a 1 :b 2})")).toBe("{:a 10 :b 20}");
    expect(await ok("(walk (fn [[k v]] (when (> v 1) [k v])) identity {:a 1 :b 2})")).toBe("{:b 2}");
  });

  it("rejects an entry that stops being a pair, naming walk", async () => {
    const e = await fails("(walk (fn [e] 1) identity {:a 1})");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("walk");
    expect(e.message).toContain("[key value]");
  });

  it("rejects non-functions", async () => {
    const e = await fails("(walk 1 identity [1])");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("walk");
  });
});

describe("postwalk and prewalk", () => {
  it("postwalk visits children before their parent", async () => {
    expect(await prints("(postwalk (fn [x] (println (pr-str x)) x) [1 [2]])")).toEqual(["1", "2", "[2]", "[1 [2]]"]);
  });

  it("prewalk visits a parent before its children", async () => {
    expect(await prints("(prewalk (fn [x] (println (pr-str x)) x) [1 [2]])")).toEqual(["[1 [2]]", "1", "[2]", "2"]);
  });

  it("postwalk sees map entries as vectors, keys and values as leaves", async () => {
    expect(await prints("(postwalk (fn [x] (println (pr-str x)) x) {:a 1})")).toEqual([":a", "1", "[:a 1]", "{:a 1}"]);
  });

  it("transform numbers at every depth in vectors, maps and sets", async () => {
    expect(await ok("(postwalk (fn [x] (if (number? x) (inc x) x)) {:a 1 :b {:c [2 #{3}]}})")).toBe("{:a 2 :b {:c [3 #{4}]}}");
    expect(await ok("(prewalk (fn [x] (if (number? x) (* 2 x) x)) [1 [2 [3 4]]])")).toBe("[2 [4 [6 8]]]");
  });

  it("prewalk walks into what f returned", async () => {
    expect(await ok("(prewalk (fn [x] (if (= x :leaf) [1 2] (if (number? x) (inc x) x))) [:leaf])")).toBe("[[2 3]]");
  });

  it("postwalk can collapse the tree", async () => {
    expect(await ok("(postwalk (fn [x] (if (vector? x) (apply + x) x)) [[1 2] [3 4]])")).toBe("10");
  });

  it("return the same value when nothing changes", async () => {
    expect(await ok("(let [v [1 {:a [2]} #{3}]] [(identical? v (postwalk identity v)) (identical? v (prewalk identity v))])")).toBe("[true true]");
  });

  it("handle nil and empty collections", async () => {
    expect(await ok("[(postwalk identity nil) (prewalk identity []) (postwalk identity {})]")).toBe("[nil [] {}]");
  });

  it("are reachable as clojure.walk/ and walk/", async () => {
    expect(await ok("(clojure.walk/postwalk identity [1])")).toBe("[1]");
    expect(await ok("(walk/prewalk identity [2])")).toBe("[2]");
  });

  it("stop at the nesting limit instead of overflowing the stack", async () => {
    const e = await fails(`(postwalk identity ${nested(40)})`, { limits: { maxNestingDepth: 20 } });
    expect(e.kind).toBe("nesting_too_deep");
    expect(e.message).toContain("postwalk");
    expect(await ok(`(do (postwalk identity ${nested(15)}) :ok)`, { limits: { maxNestingDepth: 20 } })).toBe(":ok");
  });

  it("stop a prewalk that keeps growing the tree", async () => {
    const e = await fails("(prewalk (fn [x] (if (number? x) [x] x)) 1)");
    expect(e.kind).toBe("nesting_too_deep");
  });

  it("charge fuel per node", async () => {
    const xs = Array.from({ length: 50_000 }, (_, i) => i);
    const e = await fails("(postwalk identity data/xs)", { ctx: { xs }, limits: { maxFuel: 10_000 } });
    expect(e.kind).toBe("fuel_exhausted");
  });
});

describe("keywordize-keys and stringify-keys", () => {
  it("convert keys of nested maps, including maps inside vectors", async () => {
    expect(await ok('(keywordize-keys {"a" {"b" 1} "c" [{"d" "e"}]})')).toBe('{:a {:b 1} :c [{:d "e"}]}');
    expect(await ok('(stringify-keys {:a {:b 1} :c [{:d :e}]})')).toBe('{"a" {"b" 1} "c" [{"d" :e}]}');
  });

  it("leave other keys, values and non-maps alone", async () => {
    expect(await ok('(keywordize-keys {1 "x" :k "y"})')).toBe('{1 "x" :k "y"}');
    expect(await ok("[(keywordize-keys nil) (stringify-keys 5)]")).toBe("[nil 5]");
  });

  it("are reachable qualified", async () => {
    expect(await ok('(clojure.walk/keywordize-keys {"a" 1})')).toBe("{:a 1}");
  });
});

describe("prewalk-replace and postwalk-replace", () => {
  it("replace matching nodes anywhere", async () => {
    expect(await ok("(prewalk-replace {:a :b} [:a {:a :c} #{:a}])")).toBe("[:b {:b :c} #{:b}]");
    expect(await ok("(postwalk-replace {[1 2] :pair} [[1 2] [3]])")).toBe("[:pair [3]]");
  });

  it("match exact values only (no keyword/string fallback)", async () => {
    expect(await ok('(prewalk-replace {:a 1} ["a" :a])')).toBe('["a" 1]');
  });

  it("reject a replacement table that is not a map", async () => {
    const e = await fails("(prewalk-replace [:a] [:a])");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("prewalk-replace");
  });

  it("stop a replacement that grows forever", async () => {
    const e = await fails("(prewalk-replace {1 [1]} [1])");
    expect(e.kind).toBe("nesting_too_deep");
  });
});

describe("tree-seq", () => {
  it("lists nodes depth-first in pre-order", async () => {
    expect(await ok("(tree-seq vector? identity [[1 2 [3]] [4]])")).toBe("[[[1 2 [3]] [4]] [1 2 [3]] 1 2 [3] 3 [4] 4]");
    expect(await ok("(tree-seq vector? identity 42)")).toBe("[42]");
    expect(await ok("(tree-seq vector? identity [])")).toBe("[[]]");
  });

  it("walks maps with keyword branch and children functions", async () => {
    const tree = "{:id 1 :kids [{:id 2 :kids [{:id 4}]} {:id 3 :kids nil}]}";
    expect(await ok(`(count (tree-seq :kids :kids ${tree}))`)).toBe("4");
    expect(await ok(`(reduce (fn [acc n] (conj acc (:id n))) [] (tree-seq :kids :kids ${tree}))`)).toBe("[1 2 4 3]");
  });

  it("rejects children that are not a collection, naming tree-seq", async () => {
    const e = await fails("(tree-seq number? inc 1)");
    expect(e.kind).toBe("type_error");
    expect(e.message).toContain("tree-seq");
  });

  it("stops an endless tree at the nesting limit", async () => {
    const e = await fails("(tree-seq (fn [_] true) (fn [x] [x]) 1)");
    expect(e.kind).toBe("nesting_too_deep");
  });

  it("stops a result that outgrows the collection limit", async () => {
    const xs = Array.from({ length: 5_000 }, (_, i) => i);
    const e = await fails("(tree-seq vector? identity data/xs)", { ctx: { xs }, limits: { maxCollectionSize: 1_000 } });
    expect(e.kind).toBe("collection_too_large");
  });
});
