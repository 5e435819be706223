// Data-driven interpreter tests: each file in cases/ holds programs followed by their
// expectation, mal-style:
//   (+ 1 2)
//   ;=> 3                 the printed value
//   ;>> some line         a println line (in order, before the value or error line)
//   ;!! type_error         the error kind (optionally `;!! kind: text` with a message substring)
//   ;@ 2:5                 (after ;!!) the error's line:column
import { describe, expect, it } from "vitest";
import { evaluate, print } from "../../src/lisp/evaluate.js";
import { caseFiles } from "../support/cases.js";

// No case depends on the clock: fuel bounds them, and a far time limit keeps a loaded machine
// from turning a case into a timeout (two transducer cases over (range 1000000) did, under load 20).
const limits = { timeoutMs: 60_000 };

for (const [file, cases] of caseFiles()) {
  describe(file, () => {
    for (const c of cases) {
      it(`line ${c.line}: ${c.source.replace(/\s+/g, " ").slice(0, 70)}`, async () => {
        const r = await evaluate(c.source, { ctx: { orders: [{ id: 1, total: 10 }, { id: 2, total: 25 }] }, limits });
        if (c.error) {
          expect(r.ok, r.ok ? `expected ${c.error.kind}, got ${print(r.lisp)}` : "").toBe(false);
          if (r.ok) return;
          expect(r.error.kind, r.error.message).toBe(c.error.kind);
          if (c.error.text) expect(r.error.message + " " + (r.error.hint ?? "")).toContain(c.error.text);
          if (c.error.at) expect(`${r.error.line}:${r.error.column}`).toBe(c.error.at);
        } else {
          expect(r.ok, r.ok ? "" : `${r.error.kind}: ${r.error.message}`).toBe(true);
          if (r.ok) expect(print(r.lisp)).toBe(c.value);
        }
        expect(r.prints).toEqual(c.prints);
      });
    }
  });
}
