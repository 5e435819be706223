// Output that print builds up without a newline: its completed lines are output as it prints
// them, and a line longer than the output limit keeps only what the limit can show of it, so a
// program cannot hold (or make the host split) more text than the limit in one pending line.
import { describe, expect, it } from "vitest";
import { evaluate } from "../../src/lisp/evaluate.js";

describe("limits: output written by print", () => {
  it("print's completed lines are output as it prints them, not at the next println", async () => {
    const heard: string[] = [];
    let atCall: string[] = [];
    const r = await evaluate('(print "one\\ntwo\\nthr") (tool/t) (print "ee") (println)', {
      tools: { t: () => void (atCall = heard.slice()) },
      onPrint: (line) => heard.push(line),
    });
    expect(r.ok && r.prints).toEqual(["one", "two", "three"]);
    expect(atCall).toEqual(["one", "two"]);
  });

  it("empty lines count against the output limit: each line is its characters and its newline", async () => {
    // 1M newlines printed 7 times kept 7M empty lines (350 MB, and 7 MB of newlines for a model).
    for (const src of ["(dotimes [i 10000] (println))", '(println (apply str (repeat 10000 "\n")))', '(print (apply str (repeat 10000 "\n")))']) {
      const r = await evaluate(src, { limits: { maxOutputChars: 100 } });
      expect(r.ok && r.prints.length, src).toBeLessThanOrEqual(101);
      expect(r.ok && r.prints.join("\n"), src).toContain("[output truncated:");
    }
    const r = await evaluate('(println "a") (println) (println "b")', { limits: { maxOutputChars: 6 } });
    expect(r.ok && r.prints).toEqual(["a", "", "b"]);
  });

  it("a line many prints long keeps its end and counts all it drops", async () => {
    for (const end of ["", "(println)", '(println "!")']) {
      const r = await evaluate(`(println "first") (dotimes [i 2000] (print "0123456789")) ${end}`, { limits: { maxOutputChars: 100 } });
      const last = end === '(println "!")' ? "!" : "";
      expect(r.ok && r.prints, end).toEqual([
        "first",
        `... [output truncated: 0 line(s), ${20_000 + last.length - 95} char(s) omitted; print less or narrow the data] ...`,
        "…" + "0123456789".repeat(10).slice(5 + last.length) + last,
      ]);
    }
  });
});
