// The child side of the attack watchdog: runs the named attacks one by one and reports each.
// argv: a JSON object of limits, then attack names (`all` for every one).
import { ATTACKS } from "./attacks.js";

const [limitsJson, ...names] = process.argv.slice(2);
const limits = JSON.parse(limitsJson) as Record<string, number>;
const chosen = names.includes("all") ? ATTACKS : ATTACKS.filter((a) => names.includes(a.name));
for (const a of chosen) {
  process.stdout.write(JSON.stringify({ start: a.name }) + "\n");
  const t0 = performance.now();
  let result;
  try {
    result = { report: await a.run(limits), ms: performance.now() - t0 };
  } catch (e) {
    result = { report: { ok: false, kind: "thrown", message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) }, ms: performance.now() - t0 };
  }
  process.stdout.write(JSON.stringify({ done: a.name, result }) + "\n");
}
process.exit(0);
