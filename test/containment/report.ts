// Prints each attack's outcome and time under the given limits (default: the library's
// defaults) in every mode, and whether it was a clean answer within twice the time limit, for
// the before/after table in the issue notes. Not a test.
//   node --import tsx test/containment/report.ts ['{"timeoutMs":1000}'] [itemLimitMs] [modes, e.g. none,worker]
import { fileURLToPath } from "node:url";
import { ATTACKS, caseIds, MODES, verdict, type Mode, type Report } from "./attacks.js";
import { watch } from "./watchdog.js";

const limits = process.argv[2] ?? "{}";
const timeoutMs = (JSON.parse(limits) as { timeoutMs?: number }).timeoutMs ?? 1000;
const itemLimitMs = Number(process.argv[3] ?? 30_000);
const modes = (process.argv[4]?.split(",") as Mode[] | undefined) ?? MODES;
const script = fileURLToPath(new URL("./child.ts", import.meta.url));
// Each case in a child of its own: a case's time must not include collecting what earlier cases
// built (their host data is kept for the child's life; after the 2M-key cases a 300k-key case took
// 2 s in a shared child, 0.5 s alone).
const results = [];
for (const id of caseIds(modes)) results.push(...(await watch<{ report: Report; ms: number }>([id], { script, args: [limits], itemLimitMs })));
console.log(`limits ${limits}; "ok" = the expected clean answer within 2 x timeoutMs (${2 * timeoutMs} ms) in a process that survived`);
console.log(`${"case".padEnd(44)} | ${"mode".padEnd(6)} | ${"ms".padStart(6)} | verdict | outcome`);
let bad = 0;
for (const r of results) {
  const [mode, name] = r.id.split("|");
  const a = ATTACKS.find((x) => x.name === name);
  if (a === undefined) continue;
  const rep = r.done?.report;
  const ms = r.done?.ms ?? r.ms;
  const outcome = r.failure ?? (rep?.skipped !== undefined ? `n/a (${rep.skipped})` : rep?.ok ? `value ${JSON.stringify(rep.value)?.slice(0, 40)}` : `${rep?.kind}: ${rep?.message?.slice(0, 80)}`);
  const clean = r.failure === undefined && verdict(a, rep as Report) === null;
  const verdictText = rep?.skipped !== undefined ? "n/a" : !clean ? "FAIL" : ms > 2 * timeoutMs ? "SLOW" : "ok";
  if (verdictText === "FAIL" || verdictText === "SLOW") bad++;
  console.log(`${name.padEnd(44)} | ${mode.padEnd(6)} | ${ms.toFixed(0).padStart(6)} | ${verdictText.padEnd(7)} | ${outcome}`);
}
console.log(`${bad} case(s) not a clean answer within 2 x timeoutMs`);
