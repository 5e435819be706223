// The child side of the attack watchdog: runs the named cases one by one and reports each.
// argv: a JSON object of limits, then case ids `mode|attack name` (`all` for every attack in every mode).
import { evaluate } from "../../src/lisp/evaluate.js";
import { ATTACKS, caseIds, type Mode } from "./attacks.js";

const [limitsJson, ...ids] = process.argv.slice(2);
const limits = JSON.parse(limitsJson) as Record<string, number>;
// A warm pool, as in a long-lived host: a cold worker's start (loading the interpreter) is not a case's time.
await evaluate("1", { isolation: "worker" });
for (const id of ids.includes("all") ? caseIds() : ids) {
  const [mode, name] = id.split("|") as [Mode, string];
  const a = ATTACKS.find((x) => x.name === name);
  if (a === undefined) continue;
  process.stdout.write(JSON.stringify({ start: id }) + "\n");
  const t0 = performance.now();
  let result;
  try {
    const report = await a.run(limits, mode);
    result = { report, ms: report.ms ?? performance.now() - t0 };
  } catch (e) {
    result = { report: { ok: false, kind: "thrown", message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) }, ms: performance.now() - t0 };
  }
  process.stdout.write(JSON.stringify({ done: id, result }) + "\n");
}
process.exit(0);
