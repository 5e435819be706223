// `ptc proxy` from the command line: help, bad options, and a real start, request and stop.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/commands.js";
import { runProxyCommand } from "../../src/cli/proxy.js";
import { startFakeUpstream } from "../support/fake-openai.js";
import { tempDir } from "./setup.js";

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdin: new PassThrough(), stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } }, out, err };
}

describe("ptc proxy", () => {
  it("prints its usage and is listed in ptc --help", async () => {
    const a = io();
    expect(await runCli(["proxy", "--help"], a.io)).toBe(0);
    expect(a.out.join("")).toContain("--upstream URL");
    const b = io();
    expect(await runCli(["--help"], b.io)).toBe(0);
    expect(b.out.join("")).toMatch(/proxy\s+OpenAI-compatible proxy/);
  });

  it("rejects an --upstream that is no http(s) URL without echoing the credentials in it (a typo in the scheme)", async () => {
    const a = io();
    expect(await runCli(["proxy", "--upstream", "htps://user:sk-secret-123@api.example.com/v1", "--db", ":memory:"], a.io)).toBe(2);
    expect(a.err.join("")).toBe("ptc proxy: --upstream must be an http(s) URL, got htps://[redacted]@api.example.com/v1\n");
  });

  it("refuses an --upstream whose user name, password or query would not be sent, without echoing them (they were dropped unseen)", async () => {
    const a = io();
    expect(await runCli(["proxy", "--upstream", "http://gw:sk-secret-123@127.0.0.1:9/v1?api-version=2024-02-01", "--port", "0", "--db", ":memory:"], a.io)).toBe(2);
    const err = a.err.join("");
    expect(err).toContain("ptc proxy: invalid configuration:\n");
    expect(err).toContain("a user name or password in the URL is not sent");
    expect(err).toContain("a query in the URL (?...) is not sent");
    expect(err).not.toMatch(/sk-secret|2024-02-01/);
    expect(a.out.join("")).not.toContain("listening");
  });

  it("names a PostgreSQL URL it cannot open without its password, in the query or unencoded in the user part", async () => {
    const secret = "s3cr3t-pw-XYZ9";
    const cases: Array<[string, string]> = [
      // libpq's (and pg's) password parameter.
      [`postgres://127.0.0.1:1/db?sslmode=disable&password=${secret}`, "postgres://127.0.0.1:1/db?sslmode=disable&password=[redacted]"],
      // A generated password with '#' or '/' not percent-encoded: the URL no longer parses.
      [`postgres://alice:${secret.replace("-", "#")}@127.0.0.1:1/db`, "postgres://[redacted]@127.0.0.1:1/db"],
      [`postgresql://alice:${secret.replace("-", "/")}@127.0.0.1:1/db`, "postgresql://[redacted]@127.0.0.1:1/db"],
    ];
    for (const [db, shown] of cases) {
      const a = io();
      expect(await runCli(["proxy", "--upstream", "http://127.0.0.1:9/v1", "--port", "0", "--db", db], a.io)).toBe(2);
      const err = a.err.join("");
      expect(err).toContain(`ptc proxy: cannot open the state database ${shown}: `);
      expect(err).not.toMatch(/s3cr3t|pw.XYZ9/);
    }
  });

  it("rejects bad options with exit code 2", async () => {
    for (const args of [["--port", "99999"], ["--upstream", "ftp://x"], ["--nope"]]) {
      const a = io();
      expect(await runCli(["proxy", ...args], a.io)).toBe(2);
      expect(a.err.join("")).toMatch(/ptc proxy: /);
    }
    const bad = io();
    const dir = tempDir();
    const config = join(dir, "c.json");
    writeFileSync(config, '{"maxBodyBytes": "big"}');
    expect(await runCli(["proxy", "--config", config, "--db", ":memory:"], bad.io)).toBe(2);
    expect(bad.err.join("")).toContain("maxBodyBytes");
  });

  // A mistyped --config path ran on the defaults without a word beside --upstream, and without it
  // was refused as "typo.json names none", as if the file were there.
  it("refuses a --config file that does not exist when it would name the only upstream", async () => {
    const a = io();
    const missing = join(tempDir(), "typo.json");
    expect(await runProxyCommand(["--config", missing, "--port", "0", "--db", ":memory:"], a.io, Promise.resolve())).toBe(2);
    expect(a.err.join("")).toContain(`ptc proxy: no upstream: the config file ${missing} does not exist`);
    expect(a.out.join("")).not.toContain("listening");
  });

  it("says so when it starts with a --config file that does not exist (the first admin update creates it)", async () => {
    const a = io();
    const missing = join(tempDir(), "typo.json");
    expect(await runProxyCommand(["--upstream", "http://127.0.0.1:9/v1", "--config", missing, "--port", "0", "--db", ":memory:"], a.io, Promise.resolve())).toBe(0);
    const line = a.err.join("").split("\n").find((l) => l.includes('"event":"config_file_missing"'));
    expect(line === undefined ? undefined : JSON.parse(line)).toMatchObject({ event: "config_file_missing", file: missing });
  });

  it("serves until stopped", async () => {
    const upstream = await startFakeUpstream();
    const a = io();
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const run = runProxyCommand(["--upstream", upstream.url, "--port", "0", "--db", join(tempDir(), "s.db")], a.io, stopped);
    await expect.poll(() => a.out.join(""), { timeout: 5000 }).toContain("listening on");
    const url = /listening on (\S+)/.exec(a.out.join(""))?.[1] ?? "";
    const res = await fetch(`${url}/models`);
    expect(res.status).toBe(200);
    stop();
    expect(await run).toBe(0);
    expect(a.err.join("")).toContain('"event":"listening"');
    await upstream.close();
  });
});
