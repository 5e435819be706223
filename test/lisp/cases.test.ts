// Data-driven interpreter tests: each file in cases/ holds programs followed by their
// expectation, mal-style:
//   (+ 1 2)
//   ;=> 3                 the printed value
//   ;>> some line         a println line (in order, before the value or error line)
//   ;!! type_error         the error kind (optionally `;!! kind: text` with a message substring)
//   ;@ 2:5                 (after ;!!) the error's line:column
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { evaluate, print } from "../../src/lisp/evaluate.js";

interface Case {
  source: string;
  line: number;
  value?: string;
  error?: { kind: string; text?: string; at?: string };
  prints: string[];
}

function parseCases(text: string): Case[] {
  const cases: Case[] = [];
  let code: string[] = [];
  let prints: string[] = [];
  let start = 1;
  const lines = text.split("\n");
  lines.forEach((raw, i) => {
    if (raw.startsWith(";>> ")) {
      prints.push(raw.slice(4));
    } else if (raw.startsWith(";=> ")) {
      cases.push({ source: code.join("\n"), line: start, value: raw.slice(4), prints });
      code = [];
      prints = [];
    } else if (raw.startsWith(";!! ")) {
      const [kind, ...rest] = raw.slice(4).split(": ");
      cases.push({ source: code.join("\n"), line: start, error: { kind, text: rest.join(": ") || undefined }, prints });
      code = [];
      prints = [];
    } else if (raw.startsWith(";@ ")) {
      const last = cases[cases.length - 1];
      if (last?.error) last.error.at = raw.slice(3).trim();
    } else if (raw.startsWith(";;") || (raw.trim() === "" && code.length === 0)) {
      if (code.length === 0) start = i + 2;
    } else {
      if (code.length === 0) start = i + 1;
      code.push(raw);
    }
  });
  return cases;
}

const dir = new URL("./cases/", import.meta.url);
for (const file of readdirSync(dir).filter((f) => f.endsWith(".lisp")).sort()) {
  describe(file, () => {
    for (const c of parseCases(readFileSync(new URL(file, dir), "utf8"))) {
      it(`line ${c.line}: ${c.source.replace(/\s+/g, " ").slice(0, 70)}`, async () => {
        const r = await evaluate(c.source, { ctx: { orders: [{ id: 1, total: 10 }, { id: 2, total: 25 }] } });
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
