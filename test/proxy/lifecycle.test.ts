// A clean life cycle, against a real `ptc proxy` process: SIGTERM or SIGINT stops taking new
// work, lets in-flight requests and streams finish (up to the drain timeout), flushes the store
// and exits 0; during the drain /healthz says the process lives and /readyz says it is not ready,
// so a load balancer moves traffic away without cutting anyone off.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-openai.js";
import { tempDir } from "./setup.js";

let child: ChildProcess | undefined;
let upstream: FakeUpstream | undefined;
afterEach(async () => {
  if (child?.exitCode === null) child.kill("SIGKILL");
  await upstream?.close();
  child = undefined;
  upstream = undefined;
});

const ROOT = join(import.meta.dirname, "../..");

/** Starts `ptc proxy` from the sources in its own process; resolves with its URL once it listens. */
async function startProcess(args: string[]): Promise<{ url: string; exited: Promise<number | null>; stderr: () => string }> {
  const p = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "proxy", "--port", "0", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PTC_PROXY_ADMIN_TOKEN: "" } });
  child = p;
  let out = "";
  let err = "";
  p.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  p.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => p.on("exit", (code) => resolve(code)));
  await expect.poll(() => out + (p.exitCode === null ? "" : `exited: ${err}`), { timeout: 150_000, interval: 50 }).toMatch(/listening on|exited/);
  const url = /listening on (http:\/\/[^/\s]+)/.exec(out)?.[1];
  if (url === undefined) throw new Error(`the proxy did not start: ${err}`);
  return { url, exited, stderr: () => err };
}

describe("proxy life cycle", { timeout: 300_000 }, () => {
  it("drains in-flight requests and streams on SIGTERM, answers health checks meanwhile, flushes and exits 0", async () => {
    upstream = await startFakeUpstream();
    const db = join(tempDir(), "state.db");
    const proxy = await startProcess(["--upstream", upstream.url, "--db", db]);
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "sk-drain", maxRetries: 0, timeout: 20_000 });
    const hold = { headers: { "x-fake-mode": "hold", "x-conversation-id": "drain-plain" } };
    const plain = client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "plain question" }] }, hold);
    const stream = await client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "streamed question" }], stream: true }, { headers: { "x-fake-mode": "hold", "x-conversation-id": "drain-stream" } });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    await expect.poll(() => upstream?.held, { timeout: 10_000 }).toBe(2);

    child?.kill("SIGTERM");
    await expect.poll(async () => (await fetch(`${proxy.url}/readyz`)).status, { timeout: 10_000 }).toBe(503);
    const health = await fetch(`${proxy.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "draining" });
    // New work is refused with a status a client or balancer retries elsewhere.
    const refused = await client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "late" }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect(child?.exitCode).toBeNull();

    upstream.release();
    let text = "";
    for (let n = await iterator.next(); n.done !== true; n = await iterator.next()) text += n.value.choices[0]?.delta.content ?? "";
    expect(text).toBe("reply to streamed question (1 messages)");
    expect((await plain).choices[0].message.content).toBe("reply to plain question (1 messages)");
    expect(await proxy.exited).toBe(0);
    expect(proxy.stderr()).toContain('"event":"drained"');
    // The store was flushed: both conversations' records are on disk.
    const rows = new Database(db, { readonly: true }).prepare("SELECT record FROM conversations").all() as { record: string }[];
    expect(rows.map((r) => (JSON.parse(r.record) as { conversation: string }).conversation).sort()).toEqual(["drain-plain", "drain-stream"]);
  });

  it("gives up on requests still running at the drain timeout, and exits 0 on SIGINT", async () => {
    upstream = await startFakeUpstream();
    const proxy = await startProcess(["--upstream", upstream.url, "--db", ":memory:", "--drain-timeout", "100"]);
    const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "sk-drain", maxRetries: 0, timeout: 20_000 });
    const stuck = client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "never answered" }] }, { headers: { "x-fake-mode": "hold" } }).catch((e: unknown) => e);
    await expect.poll(() => upstream?.held, { timeout: 10_000 }).toBe(1);
    child?.kill("SIGINT");
    expect(await proxy.exited).toBe(0);
    expect(await stuck).toBeInstanceOf(OpenAI.APIError);
    expect(proxy.stderr()).toMatch(/"event":"drain_timeout","inFlight":1/);
  });
});
