// Small helpers for interpreter tests: run a program, get EDN or the error kind.
import { expect, it } from "vitest";
import type { ErrorInfo } from "../../src/lisp/errors.js";
import { evaluate, print, type EvaluateOptions, type EvalResult } from "../../src/lisp/evaluate.js";

/**
 * A clock that stands still: the time limit never fires, so what a test sees cannot depend on
 * how fast or loaded the machine is (fuel and the other limits still bound the work). The
 * helpers below use it unless a test passes its own clock.
 */
export const stillClock = (): number => 0;

/**
 * A virtual clock: each read is `step` ms after the one before, so a time limit fires after a
 * set number of clock checks; `advance` moves it on (time a tool spends waiting); `reads` counts
 * the checks.
 */
export function virtualClock(step: number): { now: () => number; reads: () => number; advance: (ms: number) => void } {
  let reads = 0;
  let t = 0;
  return {
    now: () => {
      reads++;
      return (t += step) - step;
    },
    reads: () => reads,
    advance: (ms) => void (t += ms),
  };
}

/** EDN of the result, or throws with the error so a test shows what went wrong. */
export async function edn(source: string, options: EvaluateOptions = {}): Promise<string> {
  const r = await evaluate(source, { clock: stillClock, ...options });
  if (!r.ok) throw new Error(`expected a value from ${source}, got ${r.error.kind}: ${r.error.message}`);
  return print(r.lisp);
}

/** The failed result of a program that must fail. */
export async function failure(source: string, options: EvaluateOptions = {}): Promise<Extract<EvalResult, { ok: false }>> {
  const r = await evaluate(source, { clock: stillClock, ...options });
  if (r.ok) throw new Error(`expected ${source} to fail, got ${print(r.lisp)}`);
  return r;
}

/** The error of a program that must fail. */
export async function errorOf(source: string, options: EvaluateOptions = {}): Promise<ErrorInfo> {
  return (await failure(source, options)).error;
}

/** The println lines of a program that must succeed. */
export async function printsOf(source: string, options: EvaluateOptions = {}): Promise<string[]> {
  const r = await evaluate(source, { clock: stillClock, ...options });
  if (!r.ok) throw new Error(`expected a value from ${source}, got ${r.error.kind}: ${r.error.message}`);
  return r.prints;
}

/** One test per [source, expected EDN] row. */
export function cases(table: ReadonlyArray<readonly [string, string]>): void {
  it.each(table)("%s => %s", async (source, want) => {
    expect(await edn(source)).toBe(want);
  });
}
