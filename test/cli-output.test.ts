// The files the CLI writes (view --out, compare --json/--html, demo --trace-out/--record) as a
// process meets them: a write that stops halfway (a full disk, a file-size limit, a kill) must
// leave the file as it was, never half a page in place of the good one. The limit is a real
// one: the built bin runs under `ulimit -f`, so its writes fail with EFBIG past that size.
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/cli/commands.js";
import { chatsJsonl } from "./viewer/fixtures.js";
import { outcome, type Outcome } from "./support/process.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { bin: Record<string, string> };
const BIN = join(root, pkg.bin.ptc);

/** The built bin with `args`, its writes limited to `kb` KiB; its exit code and output. */
function ptcLimited(kb: number, args: string[], cwd: string): Promise<Outcome> {
  const quoted = [process.execPath, BIN, ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return outcome(spawn("bash", ["-c", `ulimit -f ${kb}; exec ${quoted}`], { cwd }), 120_000);
}

let dir: string;
const GOOD = "the previous good file\n";

beforeAll(() => {
  if (!existsSync(BIN)) execFileSync("npm", ["run", "build"], { cwd: root, stdio: "ignore" });
  dir = mkdtempSync(join(tmpdir(), "ptc-output-"));
  execFileSync(process.execPath, [BIN, "demo", "--trace-out", join(dir, "run.json")], { stdio: "ignore" });
  writeFileSync(join(dir, "chats.jsonl"), chatsJsonl());
}, 300_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("an output file whose write fails halfway", () => {
  it.each([
    ["view --out", ["view", "run.json", "--out", "out.html"], "out.html"],
    ["compare --html", ["compare", "chats.jsonl", "--strategy", "sliding-window:turns=3", "--html", "out.html"], "out.html"],
    ["demo --trace-out", ["demo", "--trace-out", "out.json"], "out.json"],
    ["demo --record", ["demo", "--record", "out.jsonl"], "out.jsonl"],
  ])("ptc %s keeps the file as it was, fails, and leaves no temporary file", { timeout: 180_000 }, async (_name, args, out) => {
    const target = join(dir, out);
    writeFileSync(target, GOOD, { mode: 0o600 });
    const before = new Set(readdirSync(dir));
    // Every one of these writes more than 4 KiB: the write is stopped partway.
    const r = await ptcLimited(4, args, dir);
    expect(r.code).not.toBe(0);
    // The demo reports a recorder that could not write as the run's failure, on stdout.
    expect(r.stderr + r.stdout).toMatch(/EFBIG/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(readFileSync(target, "utf8")).toBe(GOOD);
    expect(readdirSync(dir).filter((f) => !before.has(f))).toEqual([]);
  });

  it("a rewrite that succeeds keeps the old file's permissions (a private trace stays private)", { timeout: 180_000 }, async () => {
    const target = join(dir, "private.html");
    writeFileSync(target, GOOD, { mode: 0o600 });
    const r = await ptcLimited(100_000, ["view", "run.json", "--out", "private.html"], dir);
    expect(r.code).toBe(0);
    expect(readFileSync(target, "utf8")).toContain("<html");
    expect(statSync(target).mode & 0o777).toBe(0o600);
  });
});

// A page or report holds what its inputs hold: written with the default mode (0644 under the
// usual umask), a private trace's or transcript's content became readable by every user.
describe("an output file made from private inputs", () => {
  const silent = { stdin: Readable.from([]), stdout: { write: () => true }, stderr: { write: () => true } };
  const others = (file: string) => statSync(file).mode & 0o077;

  it.each([
    ["view --out", "run.json", (input: string) => ["view", input, "--out", "page.html"], "page.html"],
    ["compare --html", "chats.jsonl", (input: string) => ["compare", input, "--strategy", "sliding-window:turns=3", "--html", "page.html"], "page.html"],
    ["compare --json", "chats.jsonl", (input: string) => ["compare", input, "--strategy", "sliding-window:turns=3", "--json", "report.json"], "report.json"],
  ])("ptc %s is no more readable by others than its input", { timeout: 180_000 }, async (_name, source, args, out) => {
    const sub = mkdtempSync(join(dir, "private-"));
    const input = join(sub, source);
    writeFileSync(input, readFileSync(join(dir, source)), { mode: 0o600 });
    chmodSync(input, 0o600);
    const target = join(sub, out);
    expect(await runCli(args(input).map((a) => (a === out ? target : a)), silent)).toBe(0);
    expect(others(target)).toBe(0);
    // One already there, readable by others, is made private too, not kept as it was.
    writeFileSync(target, GOOD);
    chmodSync(target, 0o644);
    expect(await runCli(args(input).map((a) => (a === out ? target : a)), silent)).toBe(0);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    // A public input leaves the mode as a new file gets it.
    const control = join(sub, "control");
    writeFileSync(control, "");
    chmodSync(input, 0o644);
    rmSync(target);
    expect(await runCli(args(input).map((a) => (a === out ? target : a)), silent)).toBe(0);
    expect(statSync(target).mode & 0o777).toBe(statSync(control).mode & 0o777);
  });
});
