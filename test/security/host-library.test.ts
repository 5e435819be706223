// The interpreter's collections are immutable's, with a metered equality installed on their
// prototypes. That patch must stay the interpreter's own: a host using `immutable` in the same
// process keeps the library's answers, and the host's immutable collections are data like any
// other at the boundary (checked, converted), not values the program takes as they are.
import { Map as HostMap, OrderedMap, OrderedSet, Set as HostSet, List } from "immutable";
import { describe, expect, it } from "vitest";

// Comparisons where immutable's answer is not Clojure's (order counts for ordered collections;
// NaN is itself in a set): a global patch with the interpreter's rules flips each one.
function hostAnswers(): boolean[] {
  return [
    OrderedMap({ a: 1 }).equals(HostMap({ a: 1 })),
    HostMap({ a: 1 }).equals(OrderedMap({ a: 1 })),
    OrderedMap({ a: 1, b: 2 }).equals(OrderedMap({ b: 2, a: 1 })),
    OrderedSet([1, 2]).equals(OrderedSet([2, 1])),
    HostSet([NaN]).equals(HostSet([NaN])),
    HostMap({ a: List([1]) }).equals(HostMap({ a: List([1]) })),
    HostSet<unknown>([HostMap({ a: 1 })]).has(OrderedMap({ a: 1 })),
  ];
}

// Taken before the interpreter is loaded (it is imported below, inside the tests).
const before = hostAnswers();

describe("security: the host's own immutable", () => {
  it("keeps the library's answers after the interpreter has loaded and run programs", async () => {
    expect(before).toEqual([false, false, false, false, true, true, false]);
    const { evaluate } = await import("../../src/lisp/evaluate.js");
    // Programs that compare maps and sets as values and as keys, sorted (ordered) ones included.
    for (const src of [
      "(= (sorted-map :a 1 :b 2) {:b 2 :a 1})",
      "(contains? #{(sorted-map :a 1)} {:a 1})",
      "(= #{(sorted-set 1 2)} #{#{2 1}})",
      "(count (frequencies [{:a #{1}} {:a #{1}} (sorted-map :a #{1})]))",
    ]) {
      const r = await evaluate(src);
      expect(r.ok && r.value, src).toBe(src.startsWith("(count") ? 1 : true);
    }
    expect(hostAnswers()).toEqual(before);
  });

  it("a host's immutable collection in the context is checked like other data, not taken as a program value", async () => {
    const { evaluate } = await import("../../src/lisp/evaluate.js");
    const bad = await evaluate("(:a data/m)", { ctx: { m: HostMap({ a: () => 1 }) } });
    expect(bad.ok ? bad.value : bad.error.kind).toBe("type_error");
    expect(bad.ok ? "" : bad.error.message).toContain("data/m.a is a function");
    const good = await evaluate("[(:a data/m) (count data/s)]", { ctx: { m: HostMap({ a: 1 }), s: HostSet([1, 2]) } });
    expect(good.ok ? good.value : good.error).toEqual([1, 2]);
  });
});
