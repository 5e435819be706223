// The host's stack running out (recursion through a builtin whose frames are larger than the
// call depth limit allows for) is named depth_exceeded at the program's innermost call. The
// check that recognises it runs where the stack has just run out: a regular expression there
// (/call stack/i) was compiled when V8 first ran it or tiered it up, and compiling it at the
// stack's edge failed with a SyntaxError that reached the program as internal_error.
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";

describe("the host stack running out", () => {
  // Each recursion goes through a builtin whose host frames are deep: the stack runs out
  // before the 1,000 nested calls of maxCallDepth.
  it.each(["((memoize f) x)", "(into [] (map f) [x])", "(clojure.walk/postwalk (fn [y] (if (= y x) (f x) y)) [x])"])("recursion through %s is depth_exceeded at the call", async (via) => {
    for (const isolation of ["none", "worker"] as const) {
      const r = await evaluate(`(defn f [x] ${via})\n(f 1)`, { isolation, limits: { timeoutMs: 30_000 } });
      expect(r.ok ? "ok" : [r.error.kind, r.error.line], isolation).toEqual(["depth_exceeded", 1]);
    }
  });
});
