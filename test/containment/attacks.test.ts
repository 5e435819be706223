// Issue 19's attacks, each in a child process with a 512 MB heap and a watchdog: every one must
// end with a clean, documented error (or the correct value), in a process that survives, from
// `evaluate` in process and in a worker, from a `SubAgent.run` turn and from `ptc eval`. The
// limits are fuel and size, not time, so the outcome does not depend on the machine's speed;
// the clock limit is set far above what any case needs (the watchdog is the backstop).
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ATTACKS, caseIds, verdict, type Report } from "./attacks.js";
import { watch } from "./watchdog.js";

const script = fileURLToPath(new URL("./child.ts", import.meta.url));
const limits = { timeoutMs: 60_000, maxFuel: 2_000_000, maxCollectionSize: 100_000, maxBoundaryValues: 200_000 };

describe("containment: every attack ends cleanly in a process that survives", () => {
  it("runs the catalogue in every mode", { timeout: 900_000 }, async () => {
    const ids = caseIds();
    const results = await watch<{ report: Report; ms: number }>(ids, { script, args: [JSON.stringify(limits)], itemLimitMs: 90_000 });
    const problems: string[] = [];
    let answered = 0;
    for (const r of results) {
      const attack = ATTACKS.find((a) => a.name === r.id.split("|")[1]);
      if (attack === undefined) continue;
      if (r.failure !== undefined) problems.push(`${r.id}: ${r.failure} ${r.detail ?? ""}`);
      else if (r.done !== undefined) {
        if (r.done.report.skipped === undefined) answered++;
        const why = verdict(attack, r.done.report);
        if (why !== null) problems.push(`${r.id}: ${why}`);
      }
    }
    expect(problems).toEqual([]);
    // Every attack answered in process and in a worker; most through an agent and the CLI too.
    expect(answered).toBeGreaterThan(ATTACKS.length * 3);
  });
});
