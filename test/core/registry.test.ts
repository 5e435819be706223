// Every builtin and special form documents itself with examples; each example runs here,
// so the generated language reference can never show a result the runtime does not give.
import { describe, expect, it } from "vitest";
import { DOCUMENTED_SPECIAL_FORMS } from "../../src/lisp/analyzer/specials/index.js";
import { allBuiltins } from "../../src/lisp/core/registry.js";
import { evaluate, print } from "../../src/lisp/evaluate.js";
import { builtinsReference } from "../../src/cli/reference.js";

const builtins = allBuiltins();

describe("builtin registry", () => {
  it("every public builtin has a doc line and valid arity", () => {
    for (const b of builtins) {
      if (b.name.startsWith("%")) continue;
      expect(b.doc.length, `${b.name} doc`).toBeGreaterThan(5);
      expect(b.arity[0] <= b.arity[1], `${b.name} arity`).toBe(true);
      if (b.f1) expect(b.arity[0] <= 1 && b.arity[1] >= 1, `${b.name} f1 outside its arity`).toBe(true);
      if (b.f2) expect(b.arity[0] <= 2 && b.arity[1] >= 2, `${b.name} f2 outside its arity`).toBe(true);
    }
  });

  it("every public builtin has a signature and at least one example (ptc reference --builtins shows them)", () => {
    const bare = builtins.filter((b) => !b.name.startsWith("%") && (b.params.trim() === "" || (b.examples ?? []).length === 0)).map((b) => b.name);
    expect(bare).toEqual([]);
    const text = builtinsReference();
    for (const b of builtins.filter((x) => !x.name.startsWith("%"))) {
      const [source, result] = (b.examples ?? [])[0];
      expect(text, b.name).toContain(`${b.params} - ${b.doc.split("\n")[0]}`);
      expect(text, b.name).toContain(`  ${source} ;=> ${result}`);
    }
  });

  const examples = [
    ...builtins.flatMap((b) => (b.examples ?? []).map(([src, want]) => ({ who: b.name, src, want }))),
    ...Object.entries(DOCUMENTED_SPECIAL_FORMS).flatMap(([name, s]) => (s.examples ?? []).map(([src, want]) => ({ who: name, src, want }))),
  ];
  for (const { who, src, want } of examples) {
    it(`${who}: ${src} => ${want}`, async () => {
      const r = await evaluate(src);
      expect(r.ok ? print(r.lisp) : `${r.error.kind}: ${r.error.message}`).toBe(want);
    });
  }
});

describe("standard Clojure list", () => {
  it("names only registered builtins", async () => {
    const { STANDARD_CLOJURE } = await import("../../src/lisp/core/standard.js");
    const names = new Set(builtins.map((b) => b.name));
    for (const n of STANDARD_CLOJURE) expect(names.has(n), `${n} is listed as standard but not registered`).toBe(true);
  });
});
