// The shared conformance corpus (../shared/conformance), loaded and run case by case.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluate, type EvalResult } from "../../src/lisp/evaluate.js";
import type { Value } from "../../src/lisp/values.js";
import { strictEqual } from "./strict.js";

export interface CorpusCase {
  id: string;
  source: string;
  expected: string | null;
  error: string | null;
  origin: string;
  ctx?: Record<string, unknown>;
  error_message?: string;
  prints?: string[];
  test?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
export const CORPUS_PATH = join(here, "../../../shared/conformance/ptc-lisp-cases.jsonl");

/**
 * Why the corpus cannot be read, or undefined when it can. It lives in the shared folder beside the
 * project (`../shared`, read-only material the team keeps outside the repository), which a plain
 * clone does not have: its tests are then skipped with this message instead of failing.
 */
export function corpusMissing(path = CORPUS_PATH): string | undefined {
  if (existsSync(path)) return undefined;
  return `conformance corpus not found at ${path}: clone the project beside the shared/ folder to run these tests`;
}

export function loadCorpus(): CorpusCase[] {
  if (corpusMissing() !== undefined) return [];
  return readFileSync(CORPUS_PATH, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as CorpusCase);
}

/** The reference's error kinds, and which of ours count as the same failure. */
export const KIND_MAP: Readonly<Record<string, readonly string[]>> = {
  parse_error: ["parse_error"],
  invalid_arity: ["invalid_form", "arity_error"],
  arity_error: ["arity_error"],
  arity_mismatch: ["arity_error"],
  invalid_form: ["invalid_form"],
  type_error: ["type_error"],
  unbound_var: ["unbound_var"],
  not_callable: ["not_callable"],
  arithmetic_error: ["arithmetic_error"],
  loop_limit_exceeded: ["loop_limit_exceeded"],
  cannot_shadow_builtin: ["cannot_shadow_builtin"],
  invalid_where_form: ["invalid_form"],
  destructure_error: ["destructure_error"],
};

export interface CaseOutcome {
  pass: boolean;
  detail: string;
  result: EvalResult;
}

async function readExpected(edn: string): Promise<Value> {
  const r = await evaluate(edn);
  if (!r.ok) throw new Error(`cannot read expected EDN ${edn}: ${r.error.message}`);
  return r.lisp;
}

export async function runCase(c: CorpusCase): Promise<CaseOutcome> {
  const result = await evaluate(c.source, c.ctx ? { ctx: c.ctx } : {});
  if (c.error) {
    if (result.ok) return { pass: false, detail: `expected ${c.error}, got a value`, result };
    const ok = (KIND_MAP[c.error] ?? [c.error]).includes(result.error.kind);
    return { pass: ok, detail: ok ? "" : `expected ${c.error}, got ${result.error.kind}: ${result.error.message}`, result };
  }
  if (!result.ok) return { pass: false, detail: `expected ${c.expected}, got ${result.error.kind}: ${result.error.message}`, result };
  const expected = await readExpected(c.expected as string);
  if (!strictEqual(result.lisp, expected)) return { pass: false, detail: `expected ${c.expected}`, result };
  if (c.prints && JSON.stringify(c.prints) !== JSON.stringify(result.prints)) {
    return { pass: false, detail: `expected prints ${JSON.stringify(c.prints)}, got ${JSON.stringify(result.prints)}`, result };
  }
  return { pass: true, detail: "", result };
}
