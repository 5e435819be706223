// The containment fuzzer (`npm run fuzz:containment -- [programs] [batch] [first seed]`):
// generated programs in batches, each batch in a child process with a 512 MB heap under a
// watchdog. Counts crashes, hangs, host-looking messages and runs past their limits; all must
// be zero (the exit code says whether they are). Not a test: the CI-sized batch is fuzz.test.ts.
import { fileURLToPath } from "node:url";
import type { BatchSummary } from "./fuzz-child.js";
import { watch } from "./watchdog.js";

const programs = Number(process.argv[2] ?? 100_000);
const batchSize = Number(process.argv[3] ?? 1_000);
const first = Number(process.argv[4] ?? 1);
const script = fileURLToPath(new URL("./fuzz-child.ts", import.meta.url));

const batches: string[] = [];
for (let s = first; s < first + programs; s += batchSize) batches.push(`${s}:${Math.min(batchSize, first + programs - s)}`);

const t0 = performance.now();
// All batches go to one child in turn (a dead or hung one is replaced for the rest), so start-up is paid rarely.
let finished = 0;
const results = await watch<BatchSummary>(batches, {
  script,
  itemLimitMs: 300_000,
  onResult: (r) => {
    const d = r.done as BatchSummary | undefined;
    finished++;
    console.error(`batch ${r.id} (${finished}/${batches.length}, ${((performance.now() - t0) / 1000).toFixed(0)} s): ${r.failure ?? `${d?.problems.length ?? 0} problems, ${d?.slow ?? 0} slow`}`);
  },
});
let ran = 0;
let slow = 0;
const slowSeeds: string[] = [];
let maxMs = 0;
const problems: string[] = [];
const kinds: Record<string, number> = {};
const crashes: string[] = [];
const hangs: string[] = [];
for (const r of results) {
  if (r.failure === "crash") crashes.push(`${r.id} ${r.detail ?? ""}`);
  else if (r.failure === "hang") hangs.push(r.id);
  else if (r.done !== undefined) {
    ran += r.done.programs;
    slow += r.done.slow;
    slowSeeds.push(...r.done.slowSeeds);
    maxMs = Math.max(maxMs, r.done.maxMs);
    problems.push(...r.done.problems);
    for (const [k, n] of Object.entries(r.done.kinds)) kinds[k] = (kinds[k] ?? 0) + n;
  }
}
const secs = (performance.now() - t0) / 1000;
console.log(`programs run: ${ran} of ${programs} in ${secs.toFixed(0)} s (${batches.length} batches)`);
console.log(`crashed batches: ${crashes.length}${crashes.length ? "\n  " + crashes.join("\n  ") : ""}`);
console.log(`hung batches: ${hangs.length}${hangs.length ? "\n  " + hangs.join("\n  ") : ""}`);
console.log(`host-looking messages, internal errors, throws, fuel over the limit: ${problems.length}`);
for (const p of problems.slice(0, 20)) console.log("  " + p);
console.log(`runs past twice their time limit (wall clock, machine load included): ${slow}; slowest ${maxMs.toFixed(0)} ms`);
if (slowSeeds.length > 0) console.log(`  e.g. seeds ${slowSeeds.slice(0, 10).join(", ")}`);
console.log(`outcomes: ${JSON.stringify(kinds)}`);
process.exit(crashes.length + hangs.length + problems.length === 0 ? 0 : 1);
