// Small helpers for interpreter tests: run a program, get EDN or the error kind.
import { expect, it } from "vitest";
import type { ErrorInfo } from "../../src/lisp/errors.js";
import { evaluate, print, type EvaluateOptions, type EvalResult } from "../../src/lisp/evaluate.js";

/** EDN of the result, or throws with the error so a test shows what went wrong. */
export async function edn(source: string, options: EvaluateOptions = {}): Promise<string> {
  const r = await evaluate(source, options);
  if (!r.ok) throw new Error(`expected a value from ${source}, got ${r.error.kind}: ${r.error.message}`);
  return print(r.lisp);
}

/** The failed result of a program that must fail. */
export async function failure(source: string, options: EvaluateOptions = {}): Promise<Extract<EvalResult, { ok: false }>> {
  const r = await evaluate(source, options);
  if (r.ok) throw new Error(`expected ${source} to fail, got ${print(r.lisp)}`);
  return r;
}

/** Wall-clock milliseconds a promise took. */
export async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await f();
  return [v, performance.now() - t0];
}

/** The error of a program that must fail. */
export async function errorOf(source: string, options: EvaluateOptions = {}): Promise<ErrorInfo> {
  return (await failure(source, options)).error;
}

/** The println lines of a program that must succeed. */
export async function printsOf(source: string, options: EvaluateOptions = {}): Promise<string[]> {
  const r = await evaluate(source, options);
  if (!r.ok) throw new Error(`expected a value from ${source}, got ${r.error.kind}: ${r.error.message}`);
  return r.prints;
}

/** One test per [source, expected EDN] row. */
export function cases(table: ReadonlyArray<readonly [string, string]>): void {
  it.each(table)("%s => %s", async (source, want) => {
    expect(await edn(source)).toBe(want);
  });
}
