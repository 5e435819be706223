// The child side of the containment fuzzer: each argument is a batch `start:count` of seeds.
import { check } from "./fuzz.js";
import { FUZZ_LIMITS } from "./fuzz.js";
import { evaluate } from "../../src/lisp/evaluate.js";

export interface BatchSummary {
  programs: number;
  problems: string[];
  /** Programs that took longer than twice the time limit (wall clock: load inflates it). */
  slow: number;
  /** The first few slow seeds with their times, to re-run one alone. */
  slowSeeds: string[];
  maxMs: number;
  kinds: Record<string, number>;
}

// A warm pool, as in a long-lived host: starting a worker (loading the interpreter) is not a program's time.
await evaluate("1", { isolation: "worker" });

for (const batch of process.argv.slice(2)) {
  process.stdout.write(JSON.stringify({ start: batch }) + "\n");
  const [start, count] = batch.split(":").map(Number);
  const summary: BatchSummary = { programs: 0, problems: [], slow: 0, slowSeeds: [], maxMs: 0, kinds: {} };
  for (let seed = start; seed < start + count; seed++) {
    const o = await check(seed);
    summary.programs++;
    summary.problems.push(...o.problems);
    if (o.ms > 2 * FUZZ_LIMITS.timeoutMs && ++summary.slow <= 3) summary.slowSeeds.push(`${seed} (${o.ms.toFixed(0)} ms, ${o.kind})`);
    summary.maxMs = Math.max(summary.maxMs, o.ms);
    summary.kinds[o.kind] = (summary.kinds[o.kind] ?? 0) + 1;
  }
  process.stdout.write(JSON.stringify({ done: batch, result: summary }) + "\n");
}
process.exit(0);
