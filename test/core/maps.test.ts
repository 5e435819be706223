// Map builtins: edge cases beyond the registry examples (nil, empty, vectors, string keys
// from host data, wrong types with the builtin named in the error, and limits).
import { describe, expect, it } from "vitest";
import { evaluate, print } from "../../src/lisp/evaluate.js";
import { isSortedTree } from "../../src/lisp/sorted-map.js";
import { edn, failure, stillClock } from "../support/run.js";

// Host data arrives with keyword keys; tool results and JSON parsing can give string keys.
const stringKeyed = '{"name" "Ann" "tags" ["a" "b"] "address" {"city" "Oslo"}}';
const users = { user: { name: "Ann", tags: ["a", "b"], address: { city: "Oslo" } } };

describe("get and get-in", () => {
  it("looks up maps, vector indices and string characters", async () => {
    expect(await edn("(get {:a 1} :a)")).toBe("1");
    expect(await edn("(get [10 20 30] 1)")).toBe("20");
    expect(await edn('(get "héllo" 1)')).toBe('"é"');
    expect(await edn('(get "e\u0301a" 1)')).toBe('"a"');
    expect(await edn("(get #{:a} :a)")).toBe(":a");
  });

  it("returns nil or the default for absent keys, nil and non-collections", async () => {
    expect(await edn("(get nil :a)")).toBe("nil");
    expect(await edn("(get nil :a 5)")).toBe("5");
    expect(await edn("(get 42 :a :d)")).toBe(":d");
    expect(await edn("(get [1 2] -1 :d)")).toBe(":d");
    expect(await edn("(get [1 2] 1.5 :d)")).toBe(":d");
  });

  it("returns a present nil or false instead of the default", async () => {
    expect(await edn("(get {:a nil} :a 0)")).toBe("nil");
    expect(await edn("(get {:a false} :a 0)")).toBe("false");
    expect(await edn("(get-in {:a {:b nil}} [:a :b] 0)")).toBe("nil");
  });

  it("falls back between keyword and string keys, exact type first", async () => {
    expect(await edn('(get {"a" 1} :a)')).toBe("1");
    expect(await edn('(get {:a 1} "a")')).toBe("1");
    expect(await edn('(get {:a 1 "a" 2} "a")')).toBe("2");
    expect(await edn("(get-in data/user [:address :city])", { ctx: users })).toBe('"Oslo"');
    expect(await edn("(get-in data/user [:tags 1])", { ctx: users })).toBe('"b"');
  });

  it("get-in follows nil and missing steps to the default", async () => {
    expect(await edn("(get-in nil [:a])")).toBe("nil");
    expect(await edn("(get-in {:a 1} [])")).toBe("{:a 1}");
    expect(await edn("(get-in {:a 1} nil)")).toBe("{:a 1}");
    expect(await edn("(get-in {:a {:b 1}} [:a :b :c] :none)")).toBe(":none");
    expect(await edn("(get-in {:a nil} [:a :b] 0)")).toBe("0");
  });

  it("rejects a path that is not a vector, naming get-in", async () => {
    const e = await failure("(get-in {:a 1} :a)");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/get-in/);
    expect(e.error.hint).toMatch(/\[:a :b\]/);
  });

  it("spots arguments swapped by ->>", async () => {
    const e = await failure("(->> {:a 1} (get :a))");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.hint).toMatch(/thread-first/);
    const e2 = await failure("(->> {:a {:b 1}} (get-in [:a :b]))");
    expect(e2.error.message).toMatch(/get-in/);
    expect(e2.error.hint).toMatch(/thread-first/);
  });
});

describe("assoc, assoc-in, dissoc", () => {
  it("assoc sets several pairs and works on nil", async () => {
    expect(await edn("(assoc {:a 1} :a 2 :b 3)")).toBe("{:a 2 :b 3}");
    expect(await edn("(assoc nil :a 1 :b 2)")).toBe("{:a 1 :b 2}");
  });

  it("assoc on vectors accepts indices up to the count and rejects beyond", async () => {
    expect(await edn("(assoc [1 2] 0 :x 2 :y)")).toBe("[:x 2 :y]");
    expect(await edn("(assoc [] 0 1)")).toBe("[1]");
    const e = await failure("(assoc [1 2] 3 :x)");
    expect(e.error.kind).toBe("index_out_of_bounds");
    expect(e.error.message).toMatch(/assoc/);
    const e2 = await failure("(assoc [1 2] :a 1)");
    expect(e2.error.kind).toBe("type_error");
    expect(e2.error.message).toMatch(/integer index/);
  });

  it("assoc rejects a missing value and non-associative collections", async () => {
    expect((await failure("(assoc {:a 1} :b 2 :c)")).error.kind).toBe("arity_error");
    const e = await failure("(assoc #{1} 1 2)");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^assoc expects a map or a vector, got set/);
    expect(e.error.hint).toMatch(/conj/);
    const e2 = await failure("(->> {:a 1} (assoc :b 2))");
    expect(e2.error.hint).toMatch(/thread-first/);
  });

  it("assoc-in creates missing levels and works through vectors", async () => {
    expect(await edn("(assoc-in nil [:a :b] 1)")).toBe("{:a {:b 1}}");
    expect(await edn("(assoc-in {:a [{:x 1}]} [:a 0 :y] 2)")).toBe("{:a [{:x 1 :y 2}]}");
    expect(await edn("(assoc-in {:a []} [:a 0 :y] 2)")).toBe("{:a [{:y 2}]}");
    expect(await edn("(assoc-in {:a 1} [] 2)")).toBe("{:a 1 nil 2}");
  });

  it("assoc-in writes into the nested map found through a string key", async () => {
    expect(await edn(`(assoc-in ${stringKeyed} [:address :zip] "0150")`)).toBe('{"name" "Ann" "tags" ["a" "b"] "address" {"city" "Oslo" :zip "0150"}}');
  });

  it("assoc-in fails clearly when a step is not a collection", async () => {
    const e = await failure("(assoc-in {:a 5} [:a :b] 1)");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^assoc-in cannot set key :b inside integer 5 \(found at path \[:a\]\)/);
    const e2 = await failure("(assoc-in [1] [5 :a] 1)");
    expect(e2.error.kind).toBe("index_out_of_bounds");
  });

  it("dissoc removes several keys, tolerates nil and absent keys, and finds string keys", async () => {
    expect(await edn("(dissoc {:a 1 :b 2 :c 3} :a :b :z)")).toBe("{:c 3}");
    expect(await edn("(dissoc {:a 1 :b 2 :c 3} :a)")).toBe("{:b 2 :c 3}");
    expect(await edn("(rename-keys {:a 1 :b 2 :c 3} {:a :z})")).toBe("{:b 2 :c 3 :z 1}");
    expect(await edn("(dissoc nil :a)")).toBe("nil");
    expect(await edn("(dissoc {:a 1})")).toBe("{:a 1}");
    expect(await edn(`(dissoc ${stringKeyed} :tags :address)`)).toBe('{"name" "Ann"}');
    const e = await failure("(dissoc [1 2] 0)");
    expect(e.error.message).toMatch(/^dissoc expects a map, got vector/);
    expect(e.error.hint).toMatch(/remove or filter/);
  });
});

describe("update and update-in", () => {
  it("passes extra arguments and nil for absent keys", async () => {
    expect(await edn("(update {:n 1} :n + 2 3)")).toBe("{:n 6}");
    expect(await edn("(update {:n 1} :n - 1 1 1)")).toBe("{:n -2}");
    expect(await edn("(update {} :n (fn [x] (if x x :none)))")).toBe("{:n :none}");
    expect(await edn("(update nil :n (fn [x] x))")).toBe("{:n nil}");
    expect(await edn("(update-in {:a {:n 1}} [:a :n] * 10)")).toBe("{:a {:n 10}}");
    expect(await edn("(update-in nil [:a :b] (fn [x] (if x 1 0)))")).toBe("{:a {:b 0}}");
  });

  it("updates the existing string-keyed entry instead of adding a keyword key", async () => {
    expect(await edn(`(update ${stringKeyed} :name (fn [s] (if (= s "Ann") :ok :bad)))`)).toBe('{"name" :ok "tags" ["a" "b"] "address" {"city" "Oslo"}}');
    expect(await edn(`(update-in ${stringKeyed} [:address :city] (fn [s] (= s "Oslo")))`)).toBe('{"name" "Ann" "tags" ["a" "b"] "address" {"city" true}}');
  });

  it("works on vectors, appending at the count, and rejects indices beyond it before calling f", async () => {
    expect(await edn("(update [1 2] 0 + 10)")).toBe("[11 2]");
    expect(await edn("(update [1 2] 2 (fn [x] (if x x 0)))")).toBe("[1 2 0]");
    const e = await failure("(update [1 2] 5 (fn [x] (/ 1 0)))");
    expect(e.error.kind).toBe("index_out_of_bounds");
  });

  it("rejects a non-function with a hint about assoc", async () => {
    const e = await failure("(update {:a 1} :a 5)");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^update expects a function as its third argument, got integer 5/);
    expect(e.error.hint).toMatch(/assoc/);
    const e2 = await failure("(update-in {:a 1} [:a] 5)");
    expect(e2.error.message).toMatch(/^update-in/);
    expect(e2.error.hint).toMatch(/assoc-in/);
  });

  it("accepts keywords and maps as the function", async () => {
    expect(await edn("(update {:a {:b 1}} :a :b)")).toBe("{:a 1}");
    expect(await edn("(update {:a :x} :a {:x 9})")).toBe("{:a 9}");
  });
});

describe("merge and merge-with", () => {
  it("skips nil arguments and returns nil when there is no map", async () => {
    expect(await edn("(merge)")).toBe("nil");
    expect(await edn("(merge nil)")).toBe("nil");
    expect(await edn("(merge nil {:a 1})")).toBe("{:a 1}");
    expect(await edn("(merge {:a 1} nil)")).toBe("{:a 1}");
    expect(await edn("(merge {} {:a 1} {})")).toBe("{:a 1}");
  });

  it("later maps win and keep the first map's order", async () => {
    expect(await edn("(merge {:a 1 :b 2} {:a 3 :c 4})")).toBe("{:a 3 :b 2 :c 4}");
  });

  it("rejects non-maps, naming the argument", async () => {
    expect(await edn("(merge {:a 1} [:b 2])")).toBe("{:a 1 :b 2}");
    const e = await failure("(merge {:a 1} [:b 2 3])");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^merge expects maps \(or nil\), argument 2 is vector/);
    expect(e.error.hint).toMatch(/into \{\}/);
  });

  it("merge-with combines duplicate keys in argument order", async () => {
    expect(await edn("(merge-with - {:a 10} {:a 1} {:a 2 :b 1})")).toBe("{:a 7 :b 1}");
    expect(await edn("(merge-with + nil {:a 1})")).toBe("{:a 1}");
    expect(await edn("(merge-with +)")).toBe("nil");
    const e = await failure("(merge-with 5 {:a 1} {:a 2})");
    expect(e.error.message).toMatch(/^merge-with expects a function as its first argument, got integer 5/);
  });
});

describe("select-keys, keys, vals, entries, key, val", () => {
  it("select-keys keeps only present keys, including present nils", async () => {
    expect(await edn("(select-keys {:a 1 :b nil} [:a :b :c])")).toBe("{:a 1 :b nil}");
    expect(await edn("(select-keys nil [:a])")).toBe("{}");
    expect(await edn("(select-keys {:a 1} nil)")).toBe("{}");
    expect(await edn("(select-keys [:x :y :z] [0 2 7])")).toBe("{0 :x 2 :z}");
    expect(await edn(`(select-keys ${stringKeyed} [:name :zip])`)).toBe('{:name "Ann"}');
  });

  it("select-keys wants a vector of keys", async () => {
    const e = await failure("(select-keys {:a 1} :a)");
    expect(e.error.message).toMatch(/^select-keys expects a vector of keys, got keyword :a/);
  });

  it("keys and vals are vectors in the same order, nil when empty", async () => {
    expect(await edn("(keys {:b 1 :a 2})")).toBe("[:b :a]");
    expect(await edn("(vals {:b 1 :a 2})")).toBe("[1 2]");
    expect(await edn("(keys nil)")).toBe("nil");
    expect(await edn("(vals {})")).toBe("nil");
    const e = await failure("(keys [1 2])");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^keys expects a map, got vector/);
  });

  it("keys and vals agree on large maps too", async () => {
    const big = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, i]));
    expect(await edn("(= (zipmap (keys data/m) (vals data/m)) data/m)", { ctx: { m: big } })).toBe("true");
  });

  it("entries gives [k v] vectors; key and val read them", async () => {
    expect(await edn("(entries {:a 1})")).toBe("[[:a 1]]");
    expect(await edn("(entries nil)")).toBe("[]");
    expect(await edn("(key [:a 1])")).toBe(":a");
    expect(await edn("(val [:a 1])")).toBe("1");
    const e = await failure("(key {:a 1})");
    expect(e.error.message).toMatch(/^key expects a map entry/);
    expect(e.error.hint).toMatch(/keys/);
    expect((await failure("(val [1 2 3])")).error.kind).toBe("type_error");
  });
});

describe("update-vals and update-keys", () => {
  it("maps values or keys, keeping the order", async () => {
    expect(await edn("(update-vals {:b 1 :a 2} inc)")).toBe("{:b 2 :a 3}");
    expect(await edn("(update-vals nil inc)")).toBe("{}");
    expect(await edn('(update-keys {:a 1 :b 2} (fn [k] (if (= k :a) "A" "B")))')).toBe('{"A" 1 "B" 2}');
    expect(await edn("(update-keys {:a 1 :b 2} (fn [k] :same))")).toMatch(/^\{:same [12]\}$/);
  });

  it("explains swapped arguments (from ->>) with a thread-first hint", async () => {
    const e = await failure("(update-vals inc {:a 1})");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toBe("update-vals expects (map, function) but got (function, map)");
    expect(e.error.hint).toMatch(/-> \(thread-first\) instead of ->> \(thread-last\) with update-vals/);
    const e2 = await failure("(update-keys :a {:a 1})");
    expect(e2.error.message).toMatch(/^update-keys expects \(map, function\)/);
  });

  it("rejects a non-map and a non-function", async () => {
    expect((await failure("(update-vals [1 2] inc)")).error.message).toMatch(/^update-vals expects a map, got vector/);
    expect((await failure("(update-vals {:a 1} 5)")).error.message).toMatch(/^update-vals expects a function/);
  });
});

describe("zipmap, hash-map, sorted-map, rename-keys, map-invert", () => {
  it("zipmap stops at the shorter input and accepts any seqable", async () => {
    expect(await edn("(zipmap [:a :b] [1 2 3])")).toBe("{:a 1 :b 2}");
    expect(await edn("(zipmap nil [1])")).toBe("{}");
    expect(await edn('(zipmap "ab" [1 2])')).toBe('{"a" 1 "b" 2}');
    expect((await failure("(zipmap 5 [1])")).error.message).toMatch(/zipmap/);
  });

  it("hash-map needs pairs", async () => {
    expect(await edn("(hash-map)")).toBe("{}");
    const e = await failure("(hash-map :a 1 :b)");
    expect(e.error.kind).toBe("arity_error");
    expect(e.error.message).toMatch(/^hash-map expects an even number/);
  });

  it("sorted-map orders keys, also beyond the small-map size", async () => {
    expect(await edn("(sorted-map \"b\" 1 \"a\" 2)")).toBe('{"a" 2 "b" 1}');
    const src = `(sorted-map ${Array.from({ length: 20 }, (_, i) => `:k${String(19 - i).padStart(2, "0")} ${i}`).join(" ")})`;
    const out = await edn(src);
    const keys = [...out.matchAll(/:k(\d\d)/g)].map((m) => m[1]);
    expect(keys).toEqual([...keys].sort());
    expect(keys.length).toBe(20);
    expect(await edn("(= (sorted-map :b 1 :a 2) {:a 2 :b 1})")).toBe("true");
  });

  it("an empty sorted-map keeps the order entries are added in, at any size", async () => {
    const pairs = Array.from({ length: 20 }, (_, i) => `:k${String(i).padStart(2, "0")} ${i}`).join(" ");
    const keys = [...(await edn(`(assoc (sorted-map) ${pairs})`)).matchAll(/:k(\d\d)/g)].map((m) => m[1]);
    expect(keys).toEqual(Array.from({ length: 20 }, (_, i) => String(i).padStart(2, "0")));
    expect(await edn("(= (sorted-map) {})")).toBe("true");
  });

  it("a sorted collection built one key at a time is not sorted again whole at each step", async () => {
    // Each assoc re-sorted every key: 20,000 in a reduce spent n² log n steps (fuel_exhausted).
    expect(await edn("(let [m (reduce (fn [m i] (assoc m i (* i i))) (sorted-map) (range 20000))] [(count m) (first (keys m)) (last (keys m)) (get m 19999)])")).toBe("[20000 0 19999 399960001]");
    expect(await edn("(let [s (reduce conj (sorted-set-by >) (range 20000 0 -1))] [(count s) (first s) (last s) (count (reduce disj s (range 1 10000)))])")).toBe("[20000 20000 1 10001]");
    // Keys that arrive out of order still land in their places, by the collection's comparator.
    expect(await edn("(vec (keys (reduce (fn [m k] (assoc m k true)) (sorted-map-by >) [5 1 9 3 7 2 8 6 4 10 0 11])))")).toBe("[11 10 9 8 7 6 5 4 3 2 1 0]");
    expect(await edn("(let [m (into (sorted-map) (map vector (range 20) (range 20)))] (vec (keys (assoc (dissoc m 3) 3 :x 25 :y -1 :z))))")).toBe(`[-1 ${Array.from({ length: 20 }, (_, i) => i).join(" ")} 25]`);
    expect(await edn("(let [by-len (fn [a b] (compare (count a) (count b))) m (into (sorted-map-by by-len) (map (fn [i] [(apply str (repeat i \"a\")) i]) (range 1 12)))] [(count (assoc m \"bbbbbbbbbbb\" :b)) (get (assoc m \"bbbbbbbbbbb\" :b) \"aaaaaaaaaaa\")])")).toBe("[11 :b]");
  });

  it("taking the least or greatest key out of a large sorted collection over and over leaves no long run of gaps to walk", async () => {
    // immutable's OrderedMap leaves a gap where an entry was removed and walks every gap before
    // its first (or after its last) entry: draining a sorted set by (disj s (first s)) walked
    // n²/4 gaps that no fuel paid for (40,000 elements: 840,095 fuel, 17 s). A large sorted
    // collection is now a tree (sorted-map.ts): its edge is as near as the tree is shallow, so
    // the tree must hold just the keys left, stay balanced, and be read only along one path.
    type TreeNode = { key: unknown; left: TreeNode | null; right: TreeNode | null };
    type TreeMap = { size: number; _tree: TreeNode | null; _entries: { has(k: unknown): boolean }; __iterator(type: number, reverse?: boolean): Iterator<unknown>; first(): unknown; last(): unknown };
    const shape = (n: TreeNode | null, m: TreeMap): { nodes: number; height: number; stale: number } => {
      if (n === null) return { nodes: 0, height: 0, stale: 0 };
      const l = shape(n.left, m);
      const r = shape(n.right, m);
      return { nodes: l.nodes + r.nodes + 1, height: Math.max(l.height, r.height) + 1, stale: l.stale + r.stale + (m._entries.has(n.key) ? 0 : 1) };
    };
    // The nodes a reading of the first or last key steps to: a copy of the map whose tree counts them.
    const stepsToEdge = (m: TreeMap, read: (copy: TreeMap) => unknown): number => {
      let steps = 0;
      const spy = (n: TreeNode | null): TreeNode | null =>
        n === null ? null : new Proxy(n, { get: (t, p) => (p === "left" || p === "right" ? (steps++, spy(t[p])) : t[p as keyof TreeNode]) });
      read(Object.assign(Object.create(Object.getPrototypeOf(m) as object) as TreeMap, m, { _tree: spy(m._tree) }));
      return steps;
    };
    for (const [src, tree, size] of [
      ["(loop [s (apply sorted-set (range 3000)) i 0] (if (= i 1400) s (recur (disj s (first s)) (inc i))))", (v: unknown) => (v as { _map: TreeMap })._map, 1600],
      ["(loop [m (apply sorted-map-by > (range 6000)) i 0] (if (= i 1400) m (recur (dissoc m (key (last m))) (inc i))))", (v: unknown) => v as TreeMap, 1600],
    ] as const) {
      // A still clock: 1,400 removals from a 3,000-entry map can outlast the 1 s limit on a loaded machine.
      const r = await evaluate(src, { clock: stillClock });
      expect(r.ok, src).toBe(true);
      if (!r.ok) continue;
      const m = tree(r.lisp);
      expect(isSortedTree(m), src).toBe(true);
      expect(m.size, src).toBe(size);
      const { nodes, height, stale } = shape(m._tree, m);
      expect([nodes, stale], src).toEqual([size, 0]);
      // An AVL tree of n keys is at most 1.44 log2(n + 2) deep.
      expect(height, src).toBeLessThanOrEqual(Math.floor(1.44 * Math.log2(size + 2)));
      for (const read of [(c: TreeMap) => c.__iterator(0).next(), (c: TreeMap) => c.__iterator(0, true).next(), (c: TreeMap) => c.first(), (c: TreeMap) => c.last()]) {
        expect(stepsToEdge(m, read), src).toBeLessThanOrEqual(2 * height);
      }
    }
    expect(await edn("(let [s (loop [s (apply sorted-set-by > (range 3000)) i 0] (if (= i 1400) s (recur (disj s (first s)) (inc i))))] [(count s) (first s) (last s) (first (conj s 5000))])")).toBe("[1600 1599 0 5000]");
  });

  it("adding keys out of order to a large sorted map or set costs a search, not a sort of everything", async () => {
    // Every assoc of a key that fell before the last one re-sorted the whole map: 2,000 keys in
    // descending order exhausted the default 20M fuel (1,000 used 4.8M).
    const n = 5000;
    for (const [src, want] of [
      [`(let [m (reduce (fn [m i] (assoc m (- ${n} i) i)) (sorted-map) (range ${n}))] [(count m) (first m) (last m) (take 2 (subseq m > 2500))])`, `[${n} [1 ${n - 1}] [${n} 0] [[2501 ${n - 2501}] [2502 ${n - 2502}]]]`],
      [`(let [s (reduce (fn [s i] (conj s (mod (* i 7919) ${n}))) (sorted-set) (range ${n}))] [(count s) (first s) (last s) (nth (vec s) 1234)])`, `[${n} 0 ${n - 1} 1234]`],
      [`(let [m (reduce (fn [m i] (assoc m (mod (* i 7919) ${n}) i)) (sorted-map-by >) (range ${n}))] [(count m) (key (first m)) (key (last m)) (count (reduce dissoc m (range 0 ${n} 2)))])`, `[${n} ${n - 1} 0 ${n / 2}]`],
      // A comparator of the program's own, which calls two numbers of a pair equal: one of each stays.
      [`(let [s (reduce (fn [s i] (conj s (mod (* i 7919) ${n}))) (sorted-set-by (fn [a b] (compare (quot a 2) (quot b 2)))) (range ${n}))] [(count s) (= (map #(quot % 2) s) (range ${n / 2})) (contains? s 4999) (contains? s 4998)])`, `[${n / 2} true true true]`],
    ] as const) {
      const r = await evaluate(src, { clock: stillClock });
      expect(r.ok ? "" : `${r.error.kind}: ${r.error.message}`, src).toBe("");
      if (!r.ok) continue;
      expect(print(r.lisp), src).toBe(want);
      // The reduce's own steps and a logarithmic search per key: well under 50 units per key.
      expect(r.stats.fuelUsed, src).toBeLessThan(n * 50);
    }
  });

  it("sorted-map names itself when keys cannot be ordered", async () => {
    const e = await failure('(sorted-map :a 1 "b" 2)');
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^sorted-map: /);
  });

  it("a key of the wrong type names the builtin that added it, at any size; a bad comparator names itself once", async () => {
    const sortHint = "sorted collections need keys of one comparable type (numbers, strings or keywords)";
    for (const [src, who] of [
      ['(conj (apply sorted-set (range 20)) "x")', "conj"],
      ['(into (apply sorted-set (range 20)) ["x"])', "into"],
      ['(assoc (apply sorted-map-by > (range 40)) "x" 1)', "assoc"],
      ['(conj (sorted-set-by > 1 2) "x")', "conj"],
    ] as const) {
      const e = (await failure(src)).error;
      expect(e.kind, src).toBe("type_error");
      expect(e.message, src).toMatch(new RegExp(`^${who}: cannot compare `));
      expect(e.hint, src).toBe(sortHint);
      expect([e.line, e.column], src).toEqual([1, 1]);
    }
    const bad = (await failure('(sorted-set-by (fn [a b] "x") 1 2 3)')).error;
    expect(bad.message).toBe('sorted-set-by: the comparator must return a number or a boolean, got string "x"');
    expect(bad.hint).toBe("use compare, or a function like (fn [a b] (< a b))");
    // A lookup by > finds what = finds, as with sorted-set: a key of another type is absent.
    expect(await edn('[(get (sorted-set-by > 1 2) "x") (contains? (apply sorted-map-by > (range 40)) "x") (disj (sorted-set-by > 1 2) "x") (dissoc (sorted-map-by > 1 2) "x")]')).toBe("[nil false #{2 1} {1 2}]");
  });

  it("rename-keys renames present keys only, also qualified", async () => {
    expect(await edn("(rename-keys {:a 1 :b 2} {:a :b :b :a})")).toBe("{:b 1 :a 2}");
    expect(await edn("(clojure.set/rename-keys {:a 1} {:z :y})")).toBe("{:a 1}");
    expect(await edn("(set/rename-keys data/user {:name :full-name :tags :labels})", { ctx: { user: { name: "Ann", tags: [] } } })).toBe(
      '{:full-name "Ann" :labels []}',
    );
    expect((await failure("(rename-keys {:a 1} [:a :b])")).error.message).toMatch(/^rename-keys expects a map of old key/);
  });

  it("map-invert swaps keys and values", async () => {
    expect(await edn("(map-invert {:a 1 :b 2})")).toBe("{1 :a 2 :b}");
    expect(await edn("(clojure.set/map-invert nil)")).toBe("{}");
  });
});

describe("limits", () => {
  const ids = Array.from({ length: 1000 }, (_, i) => i);

  it("zipmap past the collection limit fails quickly", async () => {
    const e = await failure("(zipmap data/ids data/ids)", { ctx: { ids }, limits: { maxCollectionSize: 100 } });
    expect(e.error.kind).toBe("collection_too_large");
  });

  it("merge past the collection limit fails", async () => {
    const a = Object.fromEntries(ids.slice(0, 60).map((i) => [`a${i}`, i]));
    const b = Object.fromEntries(ids.slice(0, 60).map((i) => [`b${i}`, i]));
    const e = await failure("(merge data/a data/b)", { ctx: { a, b }, limits: { maxCollectionSize: 100 } });
    expect(e.error.kind).toBe("collection_too_large");
  });

  it("assoc growing a map past the limit fails", async () => {
    const a = Object.fromEntries(ids.slice(0, 100).map((i) => [`a${i}`, i]));
    const e = await failure("(assoc data/a :x 1)", { ctx: { a }, limits: { maxCollectionSize: 100 } });
    expect(e.error.kind).toBe("collection_too_large");
    expect(await edn("(count (assoc data/a :a1 1))", { ctx: { a }, limits: { maxCollectionSize: 100 } })).toBe("100");
  });

  it("update-vals over a large map charges fuel per entry", async () => {
    // Fuel is checked every few thousand units, so the map must be well past the budget.
    const m = Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i]));
    const e = await failure("(update-vals data/m inc)", { ctx: { m }, limits: { maxFuel: 1_000 } });
    expect(e.error.kind).toBe("fuel_exhausted");
  });

  it("a path deeper than the nesting limit is refused by assoc-in and update-in", async () => {
    const path = Array.from({ length: 300 }, () => "k");
    for (const src of ["(assoc-in {} data/path 1)", "(update-in {} data/path (fn [x] 1))"]) {
      const e = await failure(src, { ctx: { path }, limits: { maxNestingDepth: 256 } });
      expect(e.error.kind).toBe("nesting_too_deep");
    }
    expect(await edn("(get-in {} data/path :none)", { ctx: { path } })).toBe(":none");
  });

  // A step an entry, plus a step for each value read in from the context (10k here).
  it("builds a 10k-entry map in a step an entry", async () => {
    const ks = Array.from({ length: 10_000 }, (_, i) => `k${i}`);
    const out = await edn("(count (zipmap data/ks data/ks))", { ctx: { ks }, limits: { maxFuel: 25_000 } });
    expect(out).toBe("10000");
  });
});
