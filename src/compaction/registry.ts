// The strategy registry: every strategy by name, with zod-validated options whose defaults are
// its seed's parameters. Reports and traces record `{ name, options }`, and createStrategy
// rebuilds the same strategy from them.
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

/** A strategy by name and options, as configuration files and traces carry it. */
export interface StrategySpec {
  readonly name: string;
  readonly options?: Readonly<Record<string, unknown>>;
}

/** What `listStrategies` tells about each strategy. */
export interface StrategyInfo {
  readonly name: string;
  readonly description: string;
  readonly usesLlm: boolean;
  /** Every option with its default value. */
  readonly defaults: Readonly<Record<string, Json>>;
}

// Definitions are stored type-erased: each one validates its own options before create sees them.
type AnyDefinition = StrategyDefinition<Record<string, Json>>;

const definitions = new Map<string, AnyDefinition>();

/** Adds a strategy to the registry (the built-in ones are registered on import). */
export function registerStrategy<O extends Record<string, Json>>(definition: StrategyDefinition<O>): void {
  if (!/^[a-z][a-z0-9-]*$/.test(definition.name)) throw new Error(`compaction: strategy name "${definition.name}" must be lowercase words joined by dashes`);
  if (definitions.has(definition.name)) throw new Error(`compaction: a strategy named "${definition.name}" is already registered`);
  definitions.set(definition.name, definition as unknown as AnyDefinition);
}

/** Builds a strategy by name; unknown names and invalid options fail with a message naming what is wrong. */
export function createStrategy(spec: StrategySpec | string): Strategy {
  const { name, options = {} } = typeof spec === "string" ? { name: spec } : spec;
  const definition = definitions.get(name);
  if (definition === undefined) {
    throw new Error(`compaction: unknown strategy "${String(name)}" (known: ${[...definitions.keys()].join(", ")})`);
  }
  const parsed = definition.schema.safeParse(options ?? {});
  if (!parsed.success) throw new Error(`compaction: invalid options for strategy "${name}":\n${z.prettifyError(parsed.error)}`);
  return definition.create(parsed.data);
}

/** Every registered strategy with its description, whether it calls a model, and its defaults. */
export function listStrategies(): StrategyInfo[] {
  return [...definitions.values()].map((d) => ({ name: d.name, description: d.description, usesLlm: d.usesLlm, defaults: d.schema.parse({}) }));
}

for (const definition of [fullStrategy, slidingWindowStrategy, recapStrategy, rollingSummaryStrategy, usageRatioStrategy, goalBoundaryStrategy, costTriggerStrategy, observationMaskingStrategy, maskThenSummarizeStrategy] as AnyDefinition[]) registerStrategy(definition);
