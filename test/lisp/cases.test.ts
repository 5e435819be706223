// Data-driven interpreter tests: each file in cases/ holds programs followed by their
// expectation, mal-style:
//   (+ 1 2)
//   ;=> 3                 the printed value
//   ;>> some line         a println line (in order, before the value or error line)
//   ;!! type_error         the error kind (optionally `;!! kind: text` with a message substring)
//   ;@ 2:5                 (after ;!!) the error's line:column
import { describe, it } from "vitest";
import { caseFiles, checkCase } from "../support/cases.js";

for (const [file, cases] of caseFiles()) {
  describe(file, () => {
    for (const c of cases) it(`line ${c.line}: ${c.source.replace(/\s+/g, " ").slice(0, 70)}`, () => checkCase(c));
  });
}
