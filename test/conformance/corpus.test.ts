// The shared conformance corpus as a data-driven suite. Cases we deliberately (or for now)
// do not match are listed in skip.json with the reason; a skipped case that starts passing
// fails the suite, so the list cannot go stale.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { print } from "../../src/lisp/evaluate.js";
import { corpusMissing, loadCorpus, runCase } from "../support/corpus.js";

const skips = JSON.parse(readFileSync(new URL("./skip.json", import.meta.url), "utf8")) as Record<string, string>;
const cases = loadCorpus();
const missing = corpusMissing();
if (missing !== undefined) console.warn(`skipped: ${missing}`);

describe("without the shared folder", () => {
  it("explains why the corpus tests are skipped instead of failing on ENOENT", () => {
    expect(corpusMissing("/nonexistent/shared/conformance/ptc-lisp-cases.jsonl")).toBe(
      "conformance corpus not found at /nonexistent/shared/conformance/ptc-lisp-cases.jsonl: clone the project beside the shared/ folder to run these tests",
    );
  });
});

describe.skipIf(missing !== undefined)("conformance corpus", () => {
  it("loads all 1,165 cases", () => {
    expect(cases.length).toBe(1165);
  });

  it("skips at most 3% of the corpus, each with a reason", () => {
    const ids = new Set(cases.map((c) => c.id));
    for (const [id, reason] of Object.entries(skips)) {
      expect(ids.has(id), `skip.json names unknown case ${id}`).toBe(true);
      expect(reason.length, `skip for ${id} needs a reason`).toBeGreaterThan(10);
    }
    expect(Object.keys(skips).length).toBeLessThanOrEqual(Math.floor(cases.length * 0.03));
  });

  for (const c of cases) {
    const skip = skips[c.id];
    it(`${c.id}: ${c.source.slice(0, 60).replace(/\s+/g, " ")}`, async () => {
      const out = await runCase(c);
      if (skip) {
        expect(out.pass, `${c.id} is in skip.json (${skip}) but now passes: remove it`).toBe(false);
        return;
      }
      const got = out.result.ok ? print(out.result.lisp) : `${out.result.error.kind}: ${out.result.error.message}`;
      expect(out.pass, `${out.detail}\n   got: ${got}`).toBe(true);
    });
  }
});
