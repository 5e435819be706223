// What a run leaves in the process after it ends (tables that outlive runs) is bounded,
// whatever the program made: a long-running host or a pooled worker runs many programs.
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";
import { Keyword, keyword } from "../../src/lisp/values.js";

describe("limits: what a run leaves behind", () => {
  it("a keyword with a long name is not kept in the intern table", async () => {
    // Each run could pin 100,000 such names of up to maxStringLength characters for the life
    // of the process: 30 MB a run under a 1 s limit, growing run after run.
    const name = "k".repeat(100_000);
    const r = await evaluate(`(keyword (apply str (repeat 100000 "k")))`);
    expect(r.ok).toBe(true);
    const made = r.ok ? r.lisp : null;
    expect(made).toBeInstanceOf(Keyword);
    expect(keyword(name)).not.toBe(made);
    // Two such keywords are still one value.
    const same = await evaluate(`(let [s (apply str (repeat 100000 "k"))] [(= (keyword s) (keyword s)) (count #{(keyword s) (keyword s)}) (get {(keyword s) 1} (keyword s))])`);
    expect(same.ok && same.value).toEqual([true, 1, 1]);
  });

  it("short names are still shared", async () => {
    const r = await evaluate("(keyword (str \"user-\" \"id\"))");
    expect(r.ok && r.lisp).toBe(keyword("user-id"));
  });
});
