// The CI-sized batch of the containment fuzzer: fixed seeds, so the same programs every run,
// in a child process under a watchdog. What it asserts does not depend on the machine's speed:
// whichever limit stops a program, it must stop cleanly (no crash, no hang past the watchdog,
// no host text, no internal error, no fuel past the budget).
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { BatchSummary } from "./fuzz-child.js";
import { generate } from "./fuzz.js";
import { watch } from "./watchdog.js";

const script = fileURLToPath(new URL("./fuzz-child.ts", import.meta.url));

describe("containment fuzzer", () => {
  it("generates the same program for a seed, and programs that share structure", () => {
    expect(generate(42)).toEqual(generate(42));
    const sources = Array.from({ length: 200 }, (_, i) => generate(i).source);
    expect(new Set(sources).size).toBeGreaterThan(190);
    expect(sources.filter((s) => /\[(a\d+) \1\]|\{:l (a\d+) :r \2\}/.test(s)).length).toBeGreaterThan(10);
  });

  it("contains 600 seeded programs over hostile host data", { timeout: 600_000 }, async () => {
    const results = await watch<BatchSummary>(["1:300", "301:300"], { script, itemLimitMs: 240_000 });
    const failures = results.filter((r) => r.failure !== undefined).map((r) => `${r.id}: ${r.failure} ${r.detail ?? ""}`);
    expect(failures).toEqual([]);
    expect(results.flatMap((r) => r.done?.problems ?? [])).toEqual([]);
    expect(results.reduce((n, r) => n + (r.done?.programs ?? 0), 0)).toBe(600);
  });
});
