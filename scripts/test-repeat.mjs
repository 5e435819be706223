// Runs the test suite N times in a row (N=10 npm run test:repeat; default 10), stopping at the
// first failing run and naming it and its failed tests. Builds once first, as npm test does;
// arguments after -- go to vitest (a file, -t NAME) to repeat part of the suite.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const n = Number(process.env.N ?? 10);
if (!Number.isInteger(n) || n < 1) {
  console.error(`test:repeat: N must be a whole number above 0, got ${JSON.stringify(process.env.N)}`);
  process.exit(2);
}
const npm = process.platform === "win32" ? "npm.cmd" : "npm";
if (spawnSync(npm, ["run", "-s", "build"], { stdio: "inherit" }).status !== 0) process.exit(1);

const dir = mkdtempSync(join(tmpdir(), "ptc-test-repeat-"));
const started = Date.now();
try {
  for (let i = 1; i <= n; i++) {
    const report = join(dir, `run-${i}.json`);
    const t0 = Date.now();
    const r = spawnSync("npx", ["vitest", "run", "--reporter=dot", "--reporter=json", `--outputFile.json=${report}`, ...process.argv.slice(2)], { stdio: "inherit" });
    const seconds = ((Date.now() - t0) / 1000).toFixed(0);
    let failed = [];
    try {
      const json = JSON.parse(readFileSync(report, "utf8"));
      failed = json.testResults.flatMap((f) => f.assertionResults.filter((a) => a.status === "failed").map((a) => `${f.name.replace(process.cwd() + "/", "")} > ${a.fullName}`));
      if (json.numFailedTestSuites > 0 && failed.length === 0) failed = json.testResults.filter((f) => f.status === "failed").map((f) => `${f.name.replace(process.cwd() + "/", "")} (${f.message.split("\n")[0]})`);
    } catch {
      failed = ["(no report: vitest did not finish)"];
    }
    if (r.status !== 0 || failed.length > 0) {
      console.error(`\ntest:repeat: run ${i} of ${n} failed after ${seconds} s:\n${failed.map((f) => `  ${f}`).join("\n")}`);
      process.exit(1);
    }
    console.log(`test:repeat: run ${i} of ${n} passed (${seconds} s)`);
  }
  console.log(`test:repeat: ${n} of ${n} runs passed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
