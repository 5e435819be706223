// The persistent vector against a plain array model, across trie boundaries (32, 1024, 32768).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Vec } from "../../src/lisp/vector.js";

type Op = { op: "conj"; v: number } | { op: "assoc"; i: number; v: number } | { op: "pop" } | { op: "slice"; a: number; b: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.integer().map((v) => ({ op: "conj" as const, v })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), fc.integer()).map(([i, v]) => ({ op: "assoc" as const, i, v })) },
  { weight: 2, arbitrary: fc.constant({ op: "pop" as const }) },
  { weight: 1, arbitrary: fc.tuple(fc.nat(), fc.nat()).map(([a, b]) => ({ op: "slice" as const, a, b })) },
);

function check(vec: Vec<number>, model: number[]): void {
  expect(vec.size).toBe(model.length);
  expect(vec.toArray()).toEqual(model);
  expect([...vec]).toEqual(model);
  for (const i of [0, model.length - 1, model.length >> 1]) if (i >= 0) expect(vec.get(i)).toBe(model[i]);
  expect(vec.get(model.length)).toBeUndefined();
  expect(vec.get(-1)).toBeUndefined();
}

describe("persistent vector", () => {
  it("behaves like an array under random operations, leaving old versions intact", () => {
    fc.assert(
      fc.property(fc.nat({ max: 2200 }), fc.array(op, { maxLength: 120 }), (start, ops) => {
        let model = Array.from({ length: start }, (_, i) => i);
        let vec = Vec.fromArray(model.slice());
        const history: Array<[Vec<number>, number[]]> = [];
        for (const o of ops) {
          history.push([vec, model.slice()]);
          if (o.op === "conj") {
            vec = vec.conj(o.v);
            model.push(o.v);
          } else if (o.op === "assoc" && model.length > 0) {
            const i = o.i % model.length;
            vec = vec.assoc(i, o.v);
            model[i] = o.v;
          } else if (o.op === "pop") {
            vec = vec.pop();
            model.pop();
          } else if (o.op === "slice") {
            const a = Math.min(o.a, model.length);
            const b = Math.max(a, Math.min(o.b, model.length));
            vec = vec.slice(a, b);
            model = model.slice(a, b);
          }
          check(vec, model);
        }
        for (const [v, m] of history) expect(v.toArray()).toEqual(m);
      }),
      { numRuns: 150 },
    );
  });

  it("grows through several trie levels by conj and by fromArray alike", () => {
    let v = Vec.empty<number>();
    for (let i = 0; i < 40_000; i++) v = v.conj(i);
    const w = Vec.fromArray(Array.from({ length: 40_000 }, (_, i) => i));
    expect(v.size).toBe(40_000);
    expect(v.equals(w)).toBe(true);
    expect(v.hashCode()).toBe(w.hashCode());
    expect(v.get(32_768)).toBe(32_768);
    let p = v;
    for (let i = 0; i < 39_990; i++) p = p.pop();
    expect(p.toArray()).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("assoc past the end is out of bounds", () => {
    expect(() => Vec.of(1, 2).assoc(5, 0)).toThrow(RangeError);
    expect(Vec.of(1, 2).assoc(2, 3).toArray()).toEqual([1, 2, 3]);
  });
});
