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

  // Long names are no longer one object per name: a hidden map's long key, marked where it was
  // made, must stay hidden through every path a program takes it (and an equal keyword it never
  // read from hidden context is its own, shown).
  it.each(["none", "worker"] as const)("a hidden map's long keyword key stays hidden in what is printed (%s)", async (isolation) => {
    const key = `secret-${"k".repeat(70)}`;
    const programs = ["(println (keys data/_m))", "(println (first (keys data/_m)))", "(println (name (first (keys data/_m))))", "(println (into #{} (keys data/_m)))", "(println (get {(first (keys data/_m)) 2} (keyword (name (first (keys data/_m))))))"];
    for (const program of programs) {
      const r = await evaluate(program, { ctx: { _m: { [key]: 1 } }, isolation });
      expect(r.ok && r.prints.join("\n")).not.toContain("kkkkkkkk");
    }
    const typed = await evaluate(`(println (keyword "${key}"))`, { ctx: { _m: { [key]: 1 } }, isolation });
    expect(typed.ok && typed.prints).toEqual([`:${key}`]);
  });
});

