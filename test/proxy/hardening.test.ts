// Data at rest and paths: state files are created 0600 in a 0700 state directory (the XDG state
// directory by default, never the working directory unless asked); with keepMessages off the
// database holds no message text; request paths are normalized, refused when they leave /v1, and
// admin paths are matched after normalization; the admin token can come from a file or the environment.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { runProxyCommand } from "../../src/cli/proxy.js";
import { defaultStateDir } from "../../src/proxy/paths.js";
import { startFakeUpstream } from "../support/fake-openai.js";
import { longConversation, rig, tempDir, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const mode = (file: string) => statSync(file).mode & 0o777;

/** A request with its path sent exactly as given (fetch would normalize it first). */
function raw(url: string, method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A request with exactly these headers (Host and Origin included) and an optional body. */
function sendAs(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers } }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const code = (body: string): unknown => (JSON.parse(body) as { error?: { code?: string } }).error?.code;

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdin: new PassThrough(), stdout: { write: (s: string) => out.push(s) }, stderr: { write: (s: string) => err.push(s) } }, out, err };
}

describe("proxy hardening", () => {
  it("keeps state in the XDG state directory by default, with owner-only modes, and nothing in the working directory", async () => {
    expect(defaultStateDir({ XDG_STATE_HOME: "/x/state", HOME: "/home/u" })).toBe("/x/state/ptc");
    expect(defaultStateDir({ HOME: "/home/u" })).toBe("/home/u/.local/state/ptc");
    const upstream = await startFakeUpstream();
    const home = tempDir();
    const saved = process.env.XDG_STATE_HOME;
    process.env.XDG_STATE_HOME = home;
    const before = readdirSync(process.cwd());
    const a = io();
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const run = runProxyCommand(["--upstream", upstream.url, "--port", "0"], a.io, stopped);
    try {
      await expect.poll(() => a.out.join(""), { timeout: 10_000 }).toContain("listening on");
      const url = /listening on (\S+)/.exec(a.out.join(""))?.[1] ?? "";
      await fetch(`${url}/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-conversation-id": "m" }, body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }) });
    } finally {
      stop();
      expect(await run).toBe(0);
      process.env.XDG_STATE_HOME = saved;
      await upstream.close();
    }
    const dir = join(home, "ptc");
    expect(mode(dir)).toBe(0o700);
    for (const f of readdirSync(dir)) expect(mode(join(dir, f))).toBe(0o600);
    expect(existsSync(join(dir, "proxy.db"))).toBe(true);
    expect(readdirSync(process.cwd())).toEqual(before);
  });

  it("keeps no message text at rest when keepMessages is off", async () => {
    const dir = tempDir();
    r = await rig({ proxy: { stateDir: dir, adminToken: "admin" }, config: { keepMessages: false, compaction: { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } } });
    await r.client.chat.completions.create({ model: "fake-model", messages: longConversation(30) }, { headers: { "x-conversation-id": "secret-talk" } });
    await r.client.chat.completions.create({ model: "fake-model", messages: longConversation(2, 10, "q") });
    await r.proxy.context.store.flush();
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f)).toString("latin1");
      expect(bytes).not.toContain("aword");
      expect(bytes).not.toContain("TASK-");
    }
    // The summary is kept (that is what the next request reuses); compact on demand says why it cannot run.
    const res = await fetch(`${r.proxy.url}/ext/context_compaction/compact`, { method: "POST", headers: { authorization: "Bearer admin" }, body: JSON.stringify({ conversation: "secret-talk" }) });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain("keepMessages");
  });

  it("refuses paths that leave /v1 and matches admin paths after normalization", async () => {
    r = await rig({ proxy: { adminToken: "admin" } });
    for (const path of ["/v1/../../x", "/v1/%2e%2e/%2E%2E/x", "/v1/..%2fadmin", "/v1/a%5c..%5c..%5cx", "/x", "/v1/models/../../../etc/passwd"]) {
      const res = await raw(r.proxy.url, "GET", path);
      expect(res.status, path).toBe(400);
      expect(res.body).toContain("/v1");
    }
    expect(r.upstream.requests).toHaveLength(0);
    // Doubled slashes are an admin path all the same: never forwarded, token required.
    for (const path of ["//ext/context_compaction/status", "/ext//context_compaction/status", "/v1/../ext/context_compaction/status"]) {
      const res = await raw(r.proxy.url, "GET", path);
      expect(res.status, path).toBe(401);
    }
    expect(r.upstream.requests).toHaveLength(0);
    const ok = await raw(r.proxy.url, "GET", "/v1//models");
    expect(ok.status).toBe(200);
    expect(r.upstream.requests.at(-1)?.path).toBe("/v1/models");
    await raw(r.proxy.url, "GET", "/v1/./x/../echo?x=1");
    expect(r.upstream.requests.at(-1)?.path).toBe("/v1/echo?x=1");
  });

  it("refuses a Host that is no IP address, localhost or allowed name (DNS rebinding), and a foreign Origin on admin routes and state-changing requests", async () => {
    r = await rig({ proxy: { adminToken: "admin" } });
    const x = r;
    const port = x.proxy.port;
    const chat = JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }] });
    const admin = { authorization: "Bearer admin" };
    // Before: 200 on each, a page on evil.example rebound to 127.0.0.1 drove the proxy from a victim's browser.
    for (const host of [`evil.example:${port}`, "evil.example", `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`]) {
      const posted = await sendAs(x.proxy.url, "POST", "/v1/chat/completions", { host }, chat);
      expect(posted.status, host).toBe(403);
      expect(code(posted.body)).toBe("host_not_allowed");
      expect(posted.body).toContain("--allowed-host");
      expect((await sendAs(x.proxy.url, "GET", "/ext/context_compaction/status", { host, ...admin })).status, host).toBe(403);
      expect((await sendAs(x.proxy.url, "GET", "/metrics", { host })).status, host).toBe(403);
      expect((await sendAs(x.proxy.url, "GET", "/v1/models", { host })).status, host).toBe(403);
    }
    // Before: 200, a form or fetch from another site's page (no preflight for text/plain) reached the chat and admin routes.
    for (const origin of ["https://evil.example", "null", "http://192.168.1.9:8080"]) {
      const posted = await sendAs(x.proxy.url, "POST", "/v1/chat/completions", { origin, "content-type": "text/plain" }, chat);
      expect(posted.status, origin).toBe(403);
      expect(code(posted.body)).toBe("origin_not_allowed");
      expect((await sendAs(x.proxy.url, "GET", "/ext/context_compaction/status", { origin, ...admin })).status, origin).toBe(403);
    }
    expect(x.upstream.requests).toHaveLength(0);
    expect(await x.proxy.context.store.count()).toBe(0);
    // Names that cannot be rebound, and pages served from this machine, are answered as before.
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `app.localhost:${port}`, "10.1.2.3", `[fe80::1]:${port}`]) {
      expect((await sendAs(x.proxy.url, "POST", "/v1/chat/completions", { host, "x-conversation-id": "c" }, chat)).status, host).toBe(200);
    }
    for (const origin of [`http://localhost:3000`, "http://127.0.0.1:5173", "http://[::1]:8080", "https://app.localhost"]) {
      expect((await sendAs(x.proxy.url, "POST", "/v1/chat/completions", { origin, "x-conversation-id": "c" }, chat)).status, origin).toBe(200);
      expect((await sendAs(x.proxy.url, "GET", "/ext/context_compaction/status", { origin, ...admin })).status, origin).toBe(200);
    }
    // A foreign page may still read what any page could (a GET forwarded upstream answers with the upstream's CORS).
    expect((await sendAs(x.proxy.url, "GET", "/v1/models", { origin: "https://evil.example" })).status).toBe(200);
    await x.close();
    r = undefined;
    // Named hosts are allowed by option, for the Host and the Origin; "*" allows any.
    r = await rig({ proxy: { adminToken: "admin", allowedHosts: ["Proxy.Internal", ".corp.example"] } });
    const y = r;
    expect((await sendAs(y.proxy.url, "POST", "/v1/chat/completions", { host: "proxy.internal:443", origin: "https://proxy.internal" }, chat)).status).toBe(200);
    expect((await sendAs(y.proxy.url, "POST", "/v1/chat/completions", { host: "llm.corp.example", origin: "https://ui.corp.example" }, chat)).status).toBe(200);
    expect((await sendAs(y.proxy.url, "POST", "/v1/chat/completions", { host: "corp.example.evil.example" }, chat)).status).toBe(403);
    expect((await sendAs(y.proxy.url, "POST", "/v1/chat/completions", { origin: "https://evil.example" }, chat)).status).toBe(403);
    await y.close();
    // An entry written as a Host header is (with its port, an IPv6 address in brackets) names the host.
    r = await rig({ proxy: { allowedHosts: ["llm.example:8787", "[fd00::1]:8787", "fd00::2"] } });
    const z = r;
    for (const host of ["llm.example:8787", "llm.example", "[fd00::1]:8787", "[fd00::2]:8787"]) {
      expect((await sendAs(z.proxy.url, "POST", "/v1/chat/completions", { host, origin: `http://${host}` }, chat)).status, host).toBe(200);
    }
    await z.close();
    r = await rig({ proxy: { allowedHosts: ["*"] } });
    expect((await sendAs(r.proxy.url, "POST", "/v1/chat/completions", { host: "evil.example", origin: "https://evil.example" }, chat)).status).toBe(200);
  });

  it("refuses a request with more than one Host header with 400 (RFC 9112 3.2), whichever comes first", async () => {
    r = await rig();
    const x = r;
    const ask = (hosts: string[]) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const s = net.connect(x.proxy.port, "127.0.0.1");
        let out = "";
        s.on("data", (d: Buffer) => (out += d.toString()));
        s.on("error", reject);
        s.on("close", () => resolve({ status: Number(out.split(" ")[1]), body: out.slice(out.indexOf("\r\n\r\n") + 4) }));
        s.write(`GET /v1/models HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join("")}Connection: close\r\n\r\n`);
      });
    // Before: 200, the first kept; a front proxy routing by the last one saw another request than this one answered.
    for (const hosts of [["127.0.0.1", "evil.example"], ["127.0.0.1", "127.0.0.1"], ["localhost", "127.0.0.1"]]) {
      const res = await ask(hosts);
      expect(res.status, hosts.join(" ")).toBe(400);
      expect(code(res.body)).toBe("repeated_host");
    }
    expect(x.upstream.requests).toHaveLength(0);
    expect((await ask(["127.0.0.1"])).status).toBe(200);
  });

  it("takes allowed Host names from --allowed-host", async () => {
    const upstream = await startFakeUpstream();
    const a = io();
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const run = runProxyCommand(["--upstream", upstream.url, "--port", "0", "--db", ":memory:", "--allowed-host", "proxy.internal", "--allowed-host", ".corp.example"], a.io, stopped);
    try {
      await expect.poll(() => a.out.join(""), { timeout: 10_000 }).toContain("listening on");
      const base = (/listening on (\S+)/.exec(a.out.join(""))?.[1] ?? "").replace(/\/v1$/, "");
      for (const [host, status] of [["proxy.internal", 200], ["a.corp.example:8787", 200], ["evil.example", 403]] as const) {
        expect((await sendAs(base, "GET", "/healthz", { host })).status, host).toBe(status);
      }
    } finally {
      stop();
      expect(await run).toBe(0);
      await upstream.close();
    }
  });

  it("reads the admin token from a file or the environment", async () => {
    const upstream = await startFakeUpstream();
    const file = join(tempDir(), "token");
    writeFileSync(file, "token-from-file\n", { mode: 0o600 });
    const a = io();
    let stop = () => {};
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const run = runProxyCommand(["--upstream", upstream.url, "--port", "0", "--db", ":memory:", "--admin-token-file", file], a.io, stopped);
    try {
      await expect.poll(() => a.out.join(""), { timeout: 10_000 }).toContain("listening on");
      const base = (/listening on (\S+)/.exec(a.out.join(""))?.[1] ?? "").replace(/\/v1$/, "");
      expect((await fetch(`${base}/ext/context_compaction/status`, { headers: { authorization: "Bearer token-from-file" } })).status).toBe(200);
      expect((await fetch(`${base}/ext/context_compaction/status`, { headers: { authorization: "Bearer token-from" } })).status).toBe(401);
    } finally {
      stop();
      expect(await run).toBe(0);
      await upstream.close();
    }
    const missing = io();
    expect(await runProxyCommand(["--upstream", "http://127.0.0.1:9/v1", "--admin-token-file", "/nonexistent/token", "--db", ":memory:"], missing.io, Promise.resolve())).toBe(2);
    expect(missing.err.join("")).toContain("admin token file");
    // On the command line it still works, with a warning that ps shows it.
    const argv = io();
    expect(await runProxyCommand(["--upstream", "http://127.0.0.1:9/v1", "--port", "0", "--db", ":memory:", "--admin-token", "t"], argv.io, Promise.resolve())).toBe(0);
    expect(argv.err.join("")).toContain("visible to other users");
  });
});
