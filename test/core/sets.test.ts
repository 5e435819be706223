// Set builtins: constructors, disj and the clojure.set operations, with nil, vectors,
// wrong types (the builtin named in the error) and limits.
import { describe, expect, it } from "vitest";
import { edn, failure } from "../support/run.js";

describe("set, hash-set, sorted-set", () => {
  it("set accepts any seqable", async () => {
    expect(await edn("(set [1 2 1])")).toBe("#{1 2}");
    expect(await edn("(set #{1})")).toBe("#{1}");
    expect(await edn('(set "aba")')).toBe('#{"a" "b"}');
    expect(await edn("(set {:a 1})")).toBe("#{[:a 1]}");
    expect(await edn("(set [])")).toBe("#{}");
    expect(await edn("(= (set [1 1.0]) #{1})")).toBe("true");
    const e = await failure("(set 5)");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^set expects a collection/);
  });

  it("hash-set and sorted-set take elements as arguments", async () => {
    expect(await edn("(hash-set)")).toBe("#{}");
    expect(await edn("(hash-set :a :a :b)")).toBe("#{:a :b}");
    expect(await edn('(sorted-set "b" "c" "a" "b")')).toBe('#{"a" "b" "c"}');
  });

  it("sorted-set stays in order beyond the small-set size and still equals a hash set", async () => {
    const xs = Array.from({ length: 30 }, (_, i) => 29 - i);
    expect(await edn(`(sorted-set ${xs.join(" ")})`)).toBe(`#{${[...xs].reverse().join(" ")}}`);
    expect(await edn(`(= (sorted-set ${xs.join(" ")}) (set [${xs.join(" ")}]))`)).toBe("true");
    const words = Array.from({ length: 30 }, (_, i) => `"w${String(i).padStart(2, "0")}"`).join(" ");
    expect(await edn(`(union (sorted-set) [${words}])`)).toBe(`#{${words}}`);
  });

  it("sorted-set names itself when elements cannot be ordered", async () => {
    const e = await failure('(sorted-set 1 "a")');
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^sorted-set: /);
  });
});

describe("disj", () => {
  it("removes several elements and tolerates nil and absent elements", async () => {
    expect(await edn("(disj #{1 2 3} 1 2 9)")).toBe("#{3}");
    expect(await edn("(disj #{1})")).toBe("#{1}");
    expect(await edn("(disj nil 1)")).toBe("nil");
  });

  it("keeps the order of a small set", async () => {
    expect(await edn("(disj #{1 2 3 4} 1)")).toBe("#{2 3 4}");
    expect(await edn("(difference #{1 2 3 4} #{2})")).toBe("#{1 3 4}");
  });

  it("rejects maps and vectors with a hint", async () => {
    const e = await failure("(disj {:a 1} :a)");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^disj expects a set, got map/);
    expect(e.error.hint).toMatch(/dissoc/);
    expect((await failure("(disj [1 2] 1)")).error.hint).toMatch(/remove/);
  });
});

describe("union, intersection, difference", () => {
  it("are reachable unqualified, as clojure.set/ and as set/", async () => {
    expect(await edn("(union #{1} #{2})")).toBe("#{1 2}");
    expect(await edn("(clojure.set/union #{1} #{2})")).toBe("#{1 2}");
    expect(await edn("(set/difference #{1 2} #{2})")).toBe("#{1}");
  });

  it("union: any arity, nil as empty, vectors taken as sets", async () => {
    expect(await edn("(union)")).toBe("#{}");
    expect(await edn("(union nil)")).toBe("#{}");
    expect(await edn("(union #{1} nil [2 2 3])")).toBe("#{1 2 3}");
    expect(await edn("(union #{} #{})")).toBe("#{}");
  });

  it("intersection keeps the first set's elements found in all others", async () => {
    expect(await edn("(intersection #{1 2 3} #{3 2 4} #{2 3})")).toBe("#{2 3}");
    expect(await edn("(intersection #{1 2} nil)")).toBe("#{}");
    expect(await edn("(intersection [1 2 2])")).toBe("#{1 2}");
    expect(await edn("(intersection #{[1 2]} #{[1 2]})")).toBe("#{[1 2]}");
  });

  it("difference removes the elements of every other set", async () => {
    expect(await edn("(difference #{1 2 3 4} #{1} [2] nil)")).toBe("#{3 4}");
    expect(await edn("(difference #{1 2} #{1 2 3 4 5})")).toBe("#{}");
    expect(await edn("(difference nil #{1})")).toBe("#{}");
  });

  it("intersection and difference need at least one argument", async () => {
    expect((await failure("(clojure.set/intersection)")).error.kind).toBe("arity_error");
    expect((await failure("(clojure.set/difference)")).error.kind).toBe("arity_error");
  });

  it("reject maps and scalars, naming the operation and the argument", async () => {
    const e = await failure("(union #{1} {:a 1})");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^union expects sets, argument 2 is map/);
    expect(e.error.hint).toMatch(/merge/);
    expect((await failure("(intersection #{1} 5)")).error.message).toMatch(/^intersection expects sets, argument 2 is integer 5/);
    expect((await failure('(difference "ab" #{})')).error.message).toMatch(/^difference expects sets, argument 1 is string/);
  });
});

describe("subset?, superset?, select", () => {
  it("compare sets (and vectors taken as sets)", async () => {
    expect(await edn("(subset? #{1 2} #{1 2 3})")).toBe("true");
    expect(await edn("(subset? #{1 4} #{1 2 3})")).toBe("false");
    expect(await edn("(subset? nil #{1})")).toBe("true");
    expect(await edn("(subset? #{} #{})")).toBe("true");
    expect(await edn("(superset? #{1 2 3} [2 3])")).toBe("true");
    expect(await edn("(clojure.set/superset? #{1} #{1 2})")).toBe("false");
  });

  it("superset? names the argument that is wrong", async () => {
    expect((await failure("(superset? #{1} :a)")).error.message).toMatch(/^superset\? expects sets, argument 2 is keyword :a/);
  });

  it("select filters a set into a set", async () => {
    expect(await edn("(select (fn [x] (> x 1)) #{1 2 3})")).toBe("#{2 3}");
    expect(await edn("(set/select :a #{{:a 1} {:b 2}})")).toBe("#{{:a 1}}");
    expect(await edn("(select (fn [x] true) nil)")).toBe("#{}");
    const e = await failure("(select #{1 2} (fn [x] true))");
    expect(e.error.kind).toBe("type_error");
    expect(e.error.message).toMatch(/^select/);
  });
});

describe("limits", () => {
  const ids = Array.from({ length: 1000 }, (_, i) => i);

  it("set and union past the collection limit fail", async () => {
    const opts = { ctx: { ids }, limits: { maxCollectionSize: 500 } };
    expect((await failure("(set data/ids)", opts)).error.kind).toBe("collection_too_large");
    expect((await failure("(union #{} data/ids)", opts)).error.kind).toBe("collection_too_large");
    const small = { ctx: { a: ids.slice(0, 300), b: ids.slice(300, 600) }, limits: { maxCollectionSize: 500 } };
    expect((await failure("(union (set data/a) (set data/b))", small)).error.kind).toBe("collection_too_large");
  });

  it("operations on large sets charge fuel", async () => {
    const big = Array.from({ length: 30_000 }, (_, i) => i);
    const e = await failure("(intersection data/big data/big)", { ctx: { big }, limits: { maxFuel: 1_000 } });
    expect(e.error.kind).toBe("fuel_exhausted");
  });

  it("union adds into its largest set, as Clojure does, not into a small first one", async () => {
    // 200 unions of a one-element set with a 30,000-element one: 6M elements added when the
    // first set is built on, 200 when the large one is.
    const big = Array.from({ length: 30_000 }, (_, i) => i);
    const opts = { ctx: { big }, limits: { maxFuel: 1_000_000 } };
    expect(await edn("(count (reduce (fn [acc i] (union #{i} acc)) (set data/big) (range 30000 30200)))", opts)).toBe("30200");
    expect(await edn("(count (union [1 -1] #{-2} (set data/big) #{-3} [-3 -4]))", opts)).toBe("30004");
    // An element = to one held keeps the earliest argument's, as when the first set is built on.
    expect(await edn("(let [u (union #{7.0} #{7} (set data/big) #{8.0})] [(count u) (some float? u) (contains? (set (filter float? u)) 7.0)])", opts)).toBe("[30000 true true]");
    expect(await edn("(let [u (union #{7} #{7.0} (set data/big))] (some float? u))", opts)).toBe("nil");
    // A large sorted set is not built on unless it is the base union keeps sorted: the result is
    // then the hash set it was, in the same order.
    expect(await edn("(let [u (union #{100} (apply sorted-set-by > (range 20)) (set (range 20 40)))] [(count u) (= (vec (conj u -5)) (vec (set (conj (range 40) 100 -5))))])")).toBe("[41 true]");
  });

  it("intersection walks its smallest set, as Clojure does, not a large first one", async () => {
    // 200 intersections of a 30,000-element set with a one-element set: 6M elements walked when
    // the first set is filtered, a few hundred when the small one is.
    const big = Array.from({ length: 30_000 }, (_, i) => i);
    const opts = { ctx: { big }, limits: { maxFuel: 1_000_000 } };
    expect(await edn("(let [s (set data/big)] (count (filter (fn [i] (seq (intersection s #{i}))) (range 0 60000 300))))", opts)).toBe("100");
    expect(await edn("(let [s (set data/big)] (intersection s #{7 40000} (set (range 5 10))))", opts)).toBe("#{7}");
    // The element kept is the one the first set holds, as when it is walked.
    expect(await edn("(let [s (set data/big)] (intersection s #{7.0}))", opts)).toBe("#{7}");
    expect(await edn("(let [s (apply sorted-set-by > (range 20))] (intersection s #{3.0 50}))", opts)).toBe("#{3}");
  });
});
