// Strategy registries: strategies by name, with zod-validated options whose defaults are their
// seed's parameters. Reports and traces record `{ name, options }`, and a registry rebuilds the
// same strategy from them. A registry belongs to its caller: nothing is registered globally, so
// one library user's strategies never appear in another's, and no import order decides what exists.
import { z } from "zod";
import type { StrategyDefinition } from "./registry-types.js";
import { fullStrategy } from "./strategies/full.js";
import { slidingWindowStrategy } from "./strategies/sliding-window.js";
import { recapStrategy } from "./strategies/recap.js";
import { rollingSummaryStrategy } from "./strategies/rolling-summary.js";
import { usageRatioStrategy } from "./strategies/usage-ratio.js";
import { goalBoundaryStrategy } from "./strategies/goal-boundary.js";
import { costTriggerStrategy } from "./strategies/cost-trigger.js";
import { observationMaskingStrategy } from "./strategies/observation-masking.js";
import { maskThenSummarizeStrategy } from "./strategies/mask-then-summarize.js";
import type { Json, Strategy } from "./types.js";
import { isArrayArg, isObjectArg, mustBe } from "../llm/args.js";

/** A strategy by name and options, as configuration files and traces carry it. */
export interface StrategySpec {
  readonly name: string;
  readonly options?: Readonly<Record<string, unknown>>;
}

/** What `list` tells about each strategy. */
export interface StrategyInfo {
  readonly name: string;
  readonly description: string;
  readonly usesLlm: boolean;
  /** Every option with its default value. */
  readonly defaults: Readonly<Record<string, Json>>;
}

// Definitions are stored type-erased: each one validates its own options before create sees them.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDefinition = StrategyDefinition<any, any>;

/** An immutable set of strategy definitions by name. */
export class StrategyRegistry {
  private readonly definitions: ReadonlyMap<string, AnyDefinition>;

  constructor(definitions: readonly AnyDefinition[] = []) {
    if (!isArrayArg(definitions)) throw new TypeError(mustBe("StrategyRegistry: definitions", "an array of strategy definitions", definitions));
    const map = new Map<string, AnyDefinition>();
    for (const [i, d] of definitions.entries()) {
      if (!isObjectArg(d) || typeof d.name !== "string") throw new TypeError(mustBe(`StrategyRegistry: definitions[${i}]`, "a strategy definition with a name", d));
      if (!/^[a-z][a-z0-9-]*$/.test(d.name)) throw new Error(`compaction: strategy name "${d.name}" must be lowercase words joined by dashes`);
      if (map.has(d.name)) throw new Error(`compaction: a strategy named "${d.name}" is already registered`);
      map.set(d.name, d);
    }
    this.definitions = map;
  }

  /** A registry with these definitions added (names must be new). */
  with(...definitions: readonly AnyDefinition[]): StrategyRegistry {
    return new StrategyRegistry([...this.definitions.values(), ...definitions]);
  }

  has(name: string): boolean {
    return this.definitions.has(name);
  }

  names(): string[] {
    return [...this.definitions.keys()];
  }

  /** Builds a strategy by name; unknown names and invalid options fail with a message naming what is wrong. */
  create(spec: StrategySpec | string): Strategy {
    if (typeof spec !== "string" && !isObjectArg(spec)) throw new TypeError(mustBe("compaction: strategy", "a strategy, its name or { name, options }", spec));
    const { name, options = {} } = typeof spec === "string" ? { name: spec } : spec;
    const definition = this.definitions.get(name);
    if (definition === undefined && typeof name === "string" && name.length > MAX_NAME) throw new Error(mustBe("compaction: strategy", `a strategy's name (known: ${this.names().join(", ")})`, name));
    if (definition === undefined) throw new Error(`compaction: unknown strategy "${String(name)}" (known: ${this.names().join(", ")})`);
    const parsed = definition.schema.safeParse(options ?? {});
    if (!parsed.success) throw new Error(`compaction: invalid options for strategy "${name}":\n${z.prettifyError(parsed.error)}`);
    const built: unknown = definition.create(parsed.data);
    // A host's definition gone wrong failed later, at the first call, with the engine's "initialState is not a function".
    if (!isStrategy(built as Strategy)) {
      throw new TypeError(mustBe(`compaction: strategy "${name}": what its definition's create gave`, "a strategy (with initialState and project)", built));
    }
    // The rest, as for a host's instance: its name and options are what reports and traces record.
    checkInstance(built as Strategy);
    return built as Strategy;
  }

  /** Every strategy with its description, whether it calls a model, and its defaults. */
  list(): StrategyInfo[] {
    return [...this.definitions.values()].map((d) => ({ name: d.name, description: d.description, usesLlm: d.usesLlm, defaults: d.schema.parse({}) as Record<string, Json> }));
  }
}

/** The strategies for any chat history (the interpreter-aware one is added above, in src/history). */
export const compactionStrategies = new StrategyRegistry([fullStrategy, slidingWindowStrategy, recapStrategy, rollingSummaryStrategy, usageRatioStrategy, goalBoundaryStrategy, costTriggerStrategy, observationMaskingStrategy, maskThenSummarizeStrategy]);

/** Longer than any strategy's name: not quoted back in an error. */
const MAX_NAME = 100;

/** An instance as it is, or a name or spec built from `registry`. */
export function resolveStrategy(strategy: Strategy | StrategySpec | string, registry: StrategyRegistry = compactionStrategies): Strategy {
  if (!isStrategy(strategy)) return registry.create(strategy);
  checkInstance(strategy);
  return strategy;
}

/**
 * A host's strategy object, checked before any use: one without a name ran, and the trace and
 * saved state recording it could not be read back; one without initialState failed mid-run.
 */
function checkInstance(s: Strategy): void {
  const name: unknown = s.name;
  if (typeof name !== "string" || name === "") throw new TypeError(mustBe("compaction: a strategy object's name", "a non-empty string", name));
  const who = `compaction: strategy "${name.length > MAX_NAME ? `${name.slice(0, MAX_NAME)}…` : name}"`;
  if (typeof s.initialState !== "function") throw new TypeError(mustBe(`${who}: initialState`, "a function", s.initialState));
  const options: unknown = s.options;
  if (options !== undefined && (!isObjectArg(options) || Array.isArray(options))) throw new TypeError(mustBe(`${who}: options`, "an object of its option values", options));
}

/** Whether `x` is a built strategy (it projects), not a name or a spec. */
export function isStrategy(x: Strategy | StrategySpec | string): x is Strategy {
  return isObjectArg(x) && "project" in x && typeof x.project === "function";
}

/** Builds a strategy from `registry` (default: the generic compaction strategies). */
export function createStrategy(spec: StrategySpec | string, registry: StrategyRegistry = compactionStrategies): Strategy {
  return registry.create(spec);
}

/** The strategies of `registry` (default: the generic compaction strategies). */
export function listStrategies(registry: StrategyRegistry = compactionStrategies): StrategyInfo[] {
  return registry.list();
}
