// The one walk behind a strategy state's check (jsonProblem, every turn) and a run answer's
// (unsavable): shared structure is walked once, and a getter that throws is named, not thrown.
import { describe, expect, it } from "vitest";
import { jsonProblem } from "../../src/compaction/result.js";
import { unsavable } from "../../src/trace/serialize.js";

/** A map of `size` keys that counts the keys read from it. */
function counted(size: number): { value: Record<string, number>; reads: () => number } {
  let reads = 0;
  const base: Record<string, number> = {};
  for (let i = 0; i < size; i++) base[`k${i}`] = i;
  const value = new Proxy(base, {
    get(t, k) {
      reads++;
      return Reflect.get(t, k) as unknown;
    },
  });
  return { value, reads: () => reads };
}

// Each key once; unsavable also asks the map for a toJSON.
describe.each([
  ["jsonProblem", jsonProblem, 100],
  ["unsavable", unsavable, 101],
] as const)("%s", (_, problem, reads) => {
  it("reads a map that 100 rows share once, not once per row", () => {
    // Before (jsonProblem): 100 rows x 100 keys = 10,000 reads; a turn whose strategy state held
    // 1,000 references to one 10,000-key map read 10,000,000 (3.1 s) every turn.
    const shared = counted(100);
    expect(problem({ rows: Array.from({ length: 100 }, () => shared.value) })).toBeNull();
    expect(shared.reads()).toBe(reads);
  });

  it("still finds a problem in shared structure, and a cycle through it", () => {
    const bad = { f: (): number => 1 };
    expect(problem({ a: [bad, bad] }, "s")).toBe("s.a.0.f is a function");
    const loop: Record<string, unknown> = {};
    loop.self = [loop];
    expect(problem({ a: loop }, "s")).toBe("s.a.self.0 is a cycle (it contains itself)");
  });

  it("names a getter that throws instead of throwing", () => {
    const v = Object.defineProperty({}, "x", {
      enumerable: true,
      get: () => {
        throw new Error("boom");
      },
    });
    expect(problem({ v }, "s")).toBe("s.v.x is a getter that throws");
  });

  // A strategy's state or an output schema's transform may hand back anything a host can build.
  it("names a Proxy it cannot read and a value nested past any JSON's depth, instead of throwing", () => {
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    // Before: "Cannot perform 'getPrototypeOf' on a proxy that has been revoked", thrown.
    expect(problem({ a: revoked }, "s")).toBe("s.a cannot be read (Cannot perform 'getPrototypeOf' on a proxy that has been revoked)");
    const keyless = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("no keys");
        },
      },
    );
    // Before: "no keys", thrown.
    expect(problem([keyless], "s")).toBe("s.0 cannot be read (no keys)");
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = { d: deep };
    // Before: "Maximum call stack size exceeded", thrown.
    expect(problem({ deep }, "s")).toMatch(/^s\.deep\.d\.d[.d]*….*\.d is nested more than 1000 deep$/);
    // A program's values (at most 500 deep) are never that deep.
    let ok: unknown = 1;
    for (let i = 0; i < 999; i++) ok = [ok];
    expect(problem(ok, "s")).toBeNull();
  });
});
