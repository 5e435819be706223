// A strategy that fails where a test says: the harness must measure the rest and name the failure.
import { z } from "zod";
import { pureStrategy, type PureStrategy } from "../../src/compaction/strategies/pure.js";
import { defaultStrategies } from "../../src/history/registry.js";

/** The default strategies and "fragile", whose rewrite is `rewrite` (throwing where the test wants it to fail). */
export function withFragile(rewrite: PureStrategy<Record<string, never>>["rewrite"]): typeof defaultStrategies {
  return defaultStrategies.with(pureStrategy({ name: "fragile", description: "test only", schema: z.object({}).strict(), rewrite }));
}
