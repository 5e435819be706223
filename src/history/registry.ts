// The default strategy registry: every shipped strategy, the interpreter-aware one included, so
// the agent, `ptc compare`, the harness, the proxy and the shared property suite all see the same set.
import { compactionStrategies } from "../compaction/registry.js";
import { interpreterStrategy } from "./strategy.js";

export const defaultStrategies = compactionStrategies.with(interpreterStrategy);
