// freeNames: the names a program reads from memory, found by the analyzer without running it
// (the compressed history view asks which earlier definitions a later program used).
import { describe, expect, it } from "vitest";
import { freeNames } from "../../src/lisp/index.js";

describe("freeNames", () => {
  it("lists free symbols once, in order of first use, not locals, parameters, qualified names, data or tools", () => {
    const source = `(defn f [x] (+ x threshold))
(let [ys 3 {:keys [k]} {:k 1}] (println ys k (count xs) (f 2) (str/join "," [a])))
(tool/search {:q data/query})
(for [o data/orders :when (> (:total o) threshold)] o)`;
    // Builtins are free names too (the caller keeps the ones it defined); the defn's own name is read by the call.
    expect(freeNames(source)).toEqual(["+", "threshold", "println", "count", "xs", "f", "a", ">"]);
  });

  it("a fn literal's % arguments and a loop's bindings are locals", () => {
    expect(freeNames("(map #(> (:total %) limit) rows)\n(loop [i 0] (if (< i n) (recur (inc i)) i))")).toEqual(["map", ">", "limit", "rows", "<", "n", "inc"]);
  });

  it("a program the analyzer rejects gives every symbol it names; one the reader rejects gives none", () => {
    expect(freeNames("(let [x] (+ x y))")).toEqual(["let", "x", "+", "y"]);
    expect(freeNames("(+ 1 (count xs)")).toEqual([]);
  });
});
