// Agent options: defaults, validation, and how the layers (defaults, a calling agent, the
// agent's own, the run's) merge.
import { checkViewOptions } from "../trace/view-settings.js";
import { resolveIsolation, resolveLimits } from "../lisp/index.js";
import { historyStrategy } from "./history.js";
import { isTracerOption } from "./telemetry.js";
import type { InheritableOptions } from "./types.js";

export const DEFAULTS = {
  maxTurns: 5,
  toolTimeoutMs: 30_000,
  maxDepth: 3,
  maxNestedRuns: 50,
  isolation: "worker",
} as const;

export function positiveNumber(v: unknown): boolean {
  return typeof v === "number" && v > 0;
}

export function checkInheritable(o: InheritableOptions, fail: (message: string) => never): void {
  if (o.history !== undefined) {
    try {
      historyStrategy({ history: o.history });
    } catch (e) {
      fail(`history: ${(e as { message?: string }).message ?? "not a compaction strategy"}`);
    }
  }
  if (o.historyLlm !== undefined && (typeof o.historyLlm !== "object" || o.historyLlm === null || typeof o.historyLlm.complete !== "function")) fail("historyLlm must implement complete(request)");
  if (o.llm !== undefined && (typeof o.llm !== "object" || o.llm === null || typeof o.llm.complete !== "function")) fail("llm must implement complete(request)");
  if (o.tracer !== undefined && !isTracerOption(o.tracer)) fail('tracer must be an OpenTelemetry Tracer (with startSpan) or "global"');
  if (o.limits !== undefined) {
    try {
      resolveLimits(o.limits);
    } catch (e) {
      fail((e as { message?: string }).message ?? "invalid limits");
    }
  }
  if (o.isolation !== undefined) {
    try {
      resolveIsolation(o.isolation);
    } catch (e) {
      fail((e as { message?: string }).message ?? "invalid isolation");
    }
  }
  if (o.printlnHistoryLimit !== undefined && !(Number.isInteger(o.printlnHistoryLimit) && o.printlnHistoryLimit >= 0)) fail(`printlnHistoryLimit must be a non-negative integer, got ${String(o.printlnHistoryLimit)}`);
  for (const key of ["toolTimeoutMs", "maxPrintChars", "ednBudget"] as const) {
    if (o[key] !== undefined && !positiveNumber(o[key])) fail(`${key} must be a positive number, got ${String(o[key])}`);
  }
  for (const key of ["maxDepth", "maxNestedRuns"] as const) {
    if (o[key] !== undefined && !(Number.isInteger(o[key]) && (o[key] as number) >= 0)) fail(`${key} must be a non-negative integer, got ${String(o[key])}`);
  }
  if (o.view !== undefined) {
    if (!isPlainObject(o.view)) fail("view must be an object of prompt-view options");
    const problem = checkViewOptions(o.view);
    if (problem !== undefined) fail(problem);
  }
}

const INHERITABLE_KEYS = ["llm", "limits", "compressHistory", "printlnHistoryLimit", "view", "toolTimeoutMs", "maxDepth", "maxNestedRuns", "maxPrintChars", "ednBudget", "history", "historyLlm", "isolation", "tracer"] as const;

export function pickInheritable(o: InheritableOptions): InheritableOptions {
  const out: InheritableOptions = {};
  for (const k of INHERITABLE_KEYS) if (o[k] !== undefined) (out as Record<string, unknown>)[k] = o[k];
  return out;
}

/** Later layers win; `limits` and `view` merge key by key. */
export function mergeOptions(...layers: ReadonlyArray<InheritableOptions | undefined>): InheritableOptions {
  const out: InheritableOptions = {};
  for (const layer of layers) {
    if (layer === undefined) continue;
    for (const k of INHERITABLE_KEYS) {
      const v = layer[k];
      if (v === undefined) continue;
      if (k === "limits" || k === "view") (out as Record<string, unknown>)[k] = { ...(out[k] as object | undefined), ...(v as object) };
      else (out as Record<string, unknown>)[k] = v;
    }
  }
  return out;
}

/**
 * A nested run's options: the limits that bound the whole tree (maxDepth, maxNestedRuns) are
 * its caller's, lowered by its own, never raised by them.
 */
export function nestedOptions(merged: InheritableOptions, caller: Readonly<InheritableOptions>): InheritableOptions {
  for (const key of ["maxDepth", "maxNestedRuns"] as const) merged[key] = Math.min(merged[key] ?? DEFAULTS[key], caller[key] ?? DEFAULTS[key]);
  return merged;
}

export function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== "object" || x === null) return false;
  try {
    if (Array.isArray(x)) return false;
    const proto = Object.getPrototypeOf(x);
    return proto === Object.prototype || proto === null;
  } catch {
    // A revoked Proxy, or one whose getPrototypeOf trap throws: not data.
    return false;
  }
}
