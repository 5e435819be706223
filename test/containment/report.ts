// Prints each attack's outcome and time under the given limits (default: the library's
// defaults), for the before/after table in the issue notes. Not a test.
//   node --import tsx test/containment/report.ts ['{"timeoutMs":1000}'] [itemLimitMs]
import { fileURLToPath } from "node:url";
import { ATTACKS, verdict, type Report } from "./attacks.js";
import { watch } from "./watchdog.js";

const limits = process.argv[2] ?? "{}";
const itemLimitMs = Number(process.argv[3] ?? 30_000);
const script = fileURLToPath(new URL("./child.ts", import.meta.url));
const results = await watch<{ report: Report; ms: number }>(ATTACKS.map((a) => a.name), { script, args: [limits], itemLimitMs });
for (const r of results) {
  const a = ATTACKS.find((x) => x.name === r.id);
  if (a === undefined) continue;
  const rep = r.done?.report;
  const outcome = r.failure ?? (rep?.ok ? `value ${JSON.stringify(rep.value)?.slice(0, 40)}` : `${rep?.kind}: ${rep?.message?.slice(0, 90)}`);
  const verdictText = r.failure !== undefined ? "FAIL" : verdict(a, rep as Report) === null ? "ok" : "FAIL";
  console.log(`${verdictText.padEnd(4)} | ${r.id.padEnd(44)} | ${(r.done?.ms ?? r.ms).toFixed(0).padStart(6)} ms | ${outcome}`);
}
