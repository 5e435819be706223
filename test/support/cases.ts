// The .lisp case files of test/lisp/cases: programs followed by their expectation (see
// test/lisp/cases.test.ts for the format), shared by the suite and the isolation parity test.
import { readdirSync, readFileSync } from "node:fs";

export interface Case {
  source: string;
  line: number;
  value?: string;
  error?: { kind: string; text?: string; at?: string };
  prints: string[];
}

export function parseCases(text: string): Case[] {
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

/** Every case file, in name order, with its cases. */
export function caseFiles(): Array<[string, Case[]]> {
  const dir = new URL("../lisp/cases/", import.meta.url);
  return readdirSync(dir)
    .filter((f) => f.endsWith(".lisp"))
    .sort()
    .map((f) => [f, parseCases(readFileSync(new URL(f, dir), "utf8"))]);
}
