// The .lisp case files of test/lisp/cases: programs followed by their expectation (see
// test/lisp/cases.test.ts for the format), shared by the suite, its run in the suspendable
// compile mode and the isolation parity test.
import { readdirSync, readFileSync } from "node:fs";
import { expect } from "vitest";
import { evaluate, print, type EvaluateOptions } from "../../src/lisp/evaluate.js";
import { stillClock } from "./run.js";

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

/** The context every case runs with (`data/orders`). */
export const CASE_CONTEXT = { orders: [{ id: 1, total: 10 }, { id: 2, total: 25 }] };

/**
 * Runs one case and checks its expectation: the printed value or the error, and the prints.
 * Fuel bounds the cases, not the time limit: the clock stands still, so a loaded machine
 * cannot time one out.
 */
export async function checkCase(c: Case, options: EvaluateOptions = {}): Promise<void> {
  const r = await evaluate(c.source, { ctx: CASE_CONTEXT, clock: stillClock, ...options });
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
}
