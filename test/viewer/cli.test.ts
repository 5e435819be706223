// `ptc view`: the self-contained file (--out), the loopback server (one page, CSP, no paths
// from the browser), and clear exits on bad input or options.
import { existsSync, linkSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runViewCommand } from "../../src/cli/view.js";
import { MAX_INPUT_BYTES } from "../../src/viewer/input.js";
import { chatsJsonl, compareReportJson, savedExample } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "ptc-view-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function io() {
  const out = { stdout: "", stderr: "" };
  return { out, io: { stdin: process.stdin, stdout: { write: (s: string) => (out.stdout += s) }, stderr: { write: (s: string) => (out.stderr += s) } } };
}

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function get(url: string, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), { method, headers }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("ptc view --out", () => {
  it("writes one self-contained page holding a run and a report", async () => {
    const run = file("recovery.json", await savedExample("recovery"));
    const report = file("report.json", await compareReportJson());
    const out = join(dir, "page.html");
    const t = io();
    expect(await runViewCommand([run, report, "--out", out], t.io)).toBe(0);
    expect(t.out.stdout).toMatch(/^wrote .*page\.html \(\d+\.\d KB\)\n$/);
    const html = readFileSync(out, "utf8");
    expect(html.startsWith("<!doctype html>")).toBe(true);
    const data = JSON.parse(/id="ptc-data">([\s\S]*?)<\/script>/.exec(html)?.[1] ?? "{}");
    expect(data.files.map((f: { kind: string }) => f.kind)).toEqual(["run", "report"]);
    // Nothing outside the page: no external script, style, image or link.
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/);
  });

  it("writes the page to standard output with --out -, never to a file named -", async () => {
    const run = file("recovery-stdout.json", await savedExample("recovery"));
    const t = io();
    expect(await runViewCommand([run, "--out", "-"], t.io)).toBe(0);
    expect(t.out.stdout.startsWith("<!doctype html>")).toBe(true);
    expect(t.out.stdout).toMatch(/<\/html>\n?$/);
    expect(t.out.stderr).toBe("");
    expect(existsSync(join(process.cwd(), "-"))).toBe(false);
  });

  it.skipIf(!existsSync("/dev/full"))("exits 1, as every command whose output is lost does, when the page cannot be written (a full disk), not 2 as for a usage error", async () => {
    const run = file("recovery-full.json", await savedExample("recovery"));
    const t = io();
    expect(await runViewCommand([run, "--out", "/dev/full"], t.io)).toBe(1);
    expect(t.out.stderr).toBe("ptc view: cannot write /dev/full (ENOSPC)\n");
  });

  it("exits 2 with a clear message on a malformed, unknown, missing or oversized file, writing nothing", async () => {
    const out = join(dir, "never.html");
    const cases: Array<[string, RegExp]> = [
      [file("broken.json", '{"version": 2, "trace": '), /broken\.json is not valid JSON/],
      [file("other.json", '{"version":2,"ok":true,"usage":{},"trace":{}}'), /other\.json: not a saved ptc-lisp run: at /],
      [join(dir, "missing.json"), /cannot read .*missing\.json \(ENOENT\)/],
      [file("bad.jsonl", "{nope\n"), /bad\.jsonl:1:2: not valid JSON/],
      [file("chats.jsonl", chatsJsonl()), /transcripts \(\.jsonl\) are shown beside the ptc compare report/],
    ];
    const big = file("big.json", "");
    truncateSync(big, MAX_INPUT_BYTES + 1);
    cases.push([big, new RegExp(`big\\.json is too large to view \\(more than ${MAX_INPUT_BYTES} bytes\\)`)]);
    // A device or pipe has no size to check first: it is read up to the limit, not to the longest string (512 MB).
    cases.push(["/dev/zero", new RegExp(`/dev/zero is too large to view \\(more than ${MAX_INPUT_BYTES} bytes\\)`)]);
    for (const [path, message] of cases) {
      const t = io();
      expect(await runViewCommand([path, "--out", out], t.io)).toBe(2);
      expect(t.out.stderr).toMatch(message);
      expect(t.out.stderr).not.toMatch(/\n\s+at /);
    }
    expect(() => readFileSync(out)).toThrow();
  });

  it("refuses an --out that names one of the files shown, which would be overwritten by the page", async () => {
    const run = await savedExample("recovery");
    const path = file("keep.json", run);
    // Another name for the same file: a symbolic link shown (the page would go through it), a hard link written.
    symlinkSync(path, join(dir, "keep-link.json"));
    linkSync(path, join(dir, "keep-hard.json"));
    for (const [shown, out] of [[path, path], [path, join(dir, ".", "keep.json")], [join(dir, "keep-link.json"), path], [path, join(dir, "keep-hard.json")]]) {
      const t = io();
      expect(await runViewCommand([shown, "--out", out], t.io)).toBe(2);
      expect(t.out.stderr).toMatch(/--out .*keep(-hard)?\.json is one of the files to show/);
    }
    expect(readFileSync(path, "utf8")).toBe(run);
  });

  it("prints its usage on --help", async () => {
    const t = io();
    expect(await runViewCommand(["--help"], t.io)).toBe(0);
    expect(t.out.stdout).toMatch(/^usage: ptc view FILE\.\.\. \[--port N\] \[--host ADDRESS\] \[--out FILE\|-\]/);
  });

  it("rejects bad options: no files, a non-loopback host, a bad port", async () => {
    for (const [args, message] of [
      [[], /give at least one file/],
      [["x.json", "--host", "0.0.0.0"], /--host must be a loopback address/],
      [["x.json", "--port", "99999"], /--port expects a port number/],
      [["x.json", "--bogus"], /Unknown option '--bogus'/],
      [["x.json", "--out", "y.html", "--port", "8080"], /--out writes a file and serves nothing/],
      [[join(dir, "t.jsonl")], /cannot read .*t\.jsonl/],
    ] as Array<[string[], RegExp]>) {
      const t = io();
      expect(await runViewCommand(args, t.io)).toBe(2);
      expect(t.out.stderr).toMatch(message);
    }
  });
});

describe("ptc view server", () => {
  it("serves the page at / on loopback with its CSP, and nothing else", async () => {
    const run = file("reviews.json", await savedExample("reviews"));
    const t = io();
    let stop: () => void = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const done = runViewCommand([run, "--port", "0"], t.io, () => stopped);
    while (!t.out.stdout.includes("http://")) await new Promise((r) => setTimeout(r, 10));
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(t.out.stdout)?.[1] ?? "";
    expect(url).not.toBe("");
    try {
      const page = await get(url, "/");
      expect(page.status).toBe(200);
      expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
      expect(String(page.headers["content-security-policy"])).toMatch(/^default-src 'none'; script-src 'sha256-.*frame-ancestors 'none'$/);
      expect(page.body).toContain('id="ptc-data"');
      // No path from the browser reaches the disk.
      for (const path of ["/reviews.json", `/${run.replace(/^\//, "")}`, "/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd"]) expect((await get(url, path)).status).toBe(404);
      expect((await get(url, "/", {}, "POST")).status).toBe(405);
      // A page elsewhere that rebinds its name to 127.0.0.1 is refused.
      expect((await get(url, "/", { Host: "evil.example:80" })).status).toBe(403);
    } finally {
      stop();
    }
    expect(await done).toBe(0);
  });
});
