// Agent options: defaults, validation, and how the layers (defaults, a calling agent, the
// agent's own, the run's) merge.
import { checkViewOptions } from "../trace/view-settings.js";
import { kindOf } from "../llm/args.js";
import { resolveIsolation, resolveLimits } from "../lisp/index.js";
import { isStrategy } from "../compaction/registry.js";
import { historyStrategy } from "./history.js";
import { isTracerOption } from "./telemetry.js";
import type { InheritableOptions, RunOptions } from "./types.js";

export const DEFAULTS = {
  maxTurns: 5,
  toolTimeoutMs: 30_000,
  maxDepth: 3,
  maxNestedRuns: 50,
  maxToolResultSize: 100_000_000,
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
    // A Map (or a class instance) would be read as no limits at all: every default kept, silently.
    if (!isPlainObject(o.limits)) fail(`limits must be an object of limits ({ timeoutMs: 5000 }), got ${(o.limits as unknown) instanceof Map ? "a Map" : kindOf(o.limits)}`);
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
  // Read as `=== true`: anything else ran with the full history, silently.
  if (o.compressHistory !== undefined && typeof o.compressHistory !== "boolean") fail(`compressHistory must be true or false, got ${kindOf(o.compressHistory)}`);
  if (o.printlnHistoryLimit !== undefined && !(Number.isInteger(o.printlnHistoryLimit) && o.printlnHistoryLimit >= 0)) fail(`printlnHistoryLimit must be a non-negative integer, got ${String(o.printlnHistoryLimit)}`);
  for (const key of ["toolTimeoutMs", "maxPrintChars", "ednBudget", "maxToolResultSize"] as const) {
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

const INHERITABLE_KEYS = ["llm", "limits", "compressHistory", "printlnHistoryLimit", "view", "toolTimeoutMs", "maxDepth", "maxNestedRuns", "maxToolResultSize", "maxPrintChars", "ednBudget", "history", "historyLlm", "isolation", "tracer"] as const;

export function pickInheritable(o: InheritableOptions): InheritableOptions {
  const out: InheritableOptions = {};
  for (const k of INHERITABLE_KEYS) if (o[k] !== undefined) (out as Record<string, unknown>)[k] = o[k];
  return out;
}

// Every option a run reads (the type makes the list complete).
const RUN_OPTION_NAMES = Object.keys({
  llm: 0, limits: 0, compressHistory: 0, printlnHistoryLimit: 0, view: 0, toolTimeoutMs: 0, maxDepth: 0, maxNestedRuns: 0, maxToolResultSize: 0, maxPrintChars: 0, ednBudget: 0, history: 0, historyLlm: 0, isolation: 0, tracer: 0,
  context: 0, signal: 0, deadlineMs: 0, tokenBudget: 0, onTurn: 0, onEvent: 0, onStep: 0,
} satisfies Record<keyof RunOptions, 0>) as (keyof RunOptions)[];

/**
 * A run's options as a plain object, each read once, here, with `limits` and `view` (merged key
 * by key) copied: a getter or Proxy trap that throws is named, without its message (host text,
 * which may quote a secret), rather than reject `run` or end it quoting that text. `extra` names
 * records of a caller's own (resume's `approvals`), read and copied the same way.
 */
export function readRunOptions<T extends RunOptions>(options: T, extra: ReadonlyArray<Exclude<keyof T, keyof RunOptions>> = []): T | string {
  const out: Record<string, unknown> = {};
  for (const name of [...RUN_OPTION_NAMES, ...extra] as Array<keyof T & string>) {
    try {
      let value: unknown = options[name];
      // Only plain objects: another (a Map, a class instance) is left for the option's check to refuse, not read as {}.
      if ((name === "limits" || name === "view" || extra.includes(name as never)) && isPlainObject(value)) value = { ...value };
      if (value !== undefined) out[name] = value;
    } catch {
      return `options.${String(name)} could not be read (reading it threw)`;
    }
  }
  return out as T;
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
 * What a nested run inherits of its caller's options: all but the count of saved turns a resumed
 * caller shows as full history showed them (`fullTurns`, resume.ts), which are the caller's own. A
 * run nested in one resumed from full history kept its first turns as written under the full
 * view's system prompt.
 */
export function inheritedOptions(caller: Readonly<InheritableOptions>): InheritableOptions {
  const out = { ...caller };
  if (out.view?.fullTurns !== undefined) out.view = { ...out.view, fullTurns: 0 };
  const spec = out.history;
  if (typeof spec === "object" && spec !== null && !isStrategy(spec) && spec.options !== undefined && "fullTurns" in spec.options) out.history = { name: spec.name, options: { ...spec.options, fullTurns: 0 } };
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
