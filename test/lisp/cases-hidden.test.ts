// The whole .lisp case suite again, in a run whose context has a hidden key: such a run swaps
// every builtin for a marking wrapper (marks.ts), and a program that never reads the hidden key
// must compute exactly as it does without one (docs/history.md, "Hidden context: provenance").
import { describe, it } from "vitest";
import { CASE_CONTEXT, caseFiles, checkCase } from "../support/cases.js";

const ctx = { ...CASE_CONTEXT, _key: "Hv4Y-mQ8s-Ld2Z" };

for (const [file, cases] of caseFiles()) {
  describe(`${file}, with hidden context`, () => {
    for (const c of cases) it(`line ${c.line}: ${c.source.replace(/\s+/g, " ").slice(0, 70)}`, () => checkCase(c, { ctx }));
  });
}
