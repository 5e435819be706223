// maxInFlightBodyBytes: the total of request bodies the proxy holds at once. maxBodyBytes bounds
// each body only: 16 concurrent 30 MB bodies took well over 1 GB of heap. Slow senders hold their
// bodies open here, so what is reserved and refused is read from the proxy's own count, never timed.
import { connect, type Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { decodeBody } from "../../src/proxy/context.js";
import { rig, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** A chat body of exactly `size` bytes. */
function chatBody(size: number): string {
  const head = '{"model":"fake-model","messages":[{"role":"user","content":"';
  const tail = '"}]}';
  return head + "x".repeat(size - head.length - tail.length) + tail;
}

/** A raw connection to the proxy that sent a request's headers; `reply` is everything the proxy wrote until it closed. */
function open(port: number, headers: string): { socket: Socket; reply: Promise<string> } {
  const socket = connect(port, "127.0.0.1");
  let got = "";
  socket.on("data", (c: Buffer) => (got += c.toString("latin1")));
  socket.on("error", () => {});
  const reply = new Promise<string>((resolve) => socket.on("close", () => resolve(got)));
  socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer sk-client-key\r\nContent-Type: application/json\r\n${headers}\r\n`);
  return { socket, reply };
}

const statusLine = (reply: string) => reply.slice(0, reply.indexOf("\r\n"));
const chunk = (data: string) => `${data.length.toString(16)}\r\n${data}\r\n`;

describe("maxInFlightBodyBytes", () => {
  it("reserves bodies as they are read, refuses past the total with 503 and retry-after before reading on, and gives everything back", async () => {
    r = await rig({ config: { maxBodyBytes: 65_536, maxInFlightBodyBytes: 10_000 } });
    const bodies = r.proxy.context.bodies;
    const port = r.proxy.port;
    // Two slow senders announce 4,000 bytes each and send 3,000: what they sent is held, not what they announced.
    const body = chatBody(4000);
    const a = open(port, "Content-Length: 4000\r\nConnection: close\r\n");
    a.socket.write(body.slice(0, 3000));
    await expect.poll(() => bodies.used).toBe(3000);
    const b = open(port, "Content-Length: 4000\r\nConnection: close\r\n");
    b.socket.write(body.slice(0, 3000));
    await expect.poll(() => bodies.used).toBe(6000);
    // A third announcing 4,500 would pass 10,000: refused before its body is read, and the connection closed.
    const c = open(port, "Content-Length: 4500\r\n");
    const refused = await c.reply;
    expect(statusLine(refused)).toBe("HTTP/1.1 503 Service Unavailable");
    expect(refused.toLowerCase()).toContain("retry-after: 1");
    expect(refused).toContain('"code":"body_budget_exceeded"');
    expect(bodies.used).toBe(6000);
    // A chunked body is taken as it arrives: the first chunk fits, the second passes the total.
    const d = open(port, "Transfer-Encoding: chunked\r\n");
    d.socket.write(chunk("y".repeat(1500)));
    await expect.poll(() => bodies.used).toBe(7500);
    d.socket.write(chunk("y".repeat(3000)));
    expect(statusLine(await d.reply)).toBe("HTTP/1.1 503 Service Unavailable");
    await expect.poll(() => bodies.used).toBe(6000);
    // A client that leaves gives its bytes back.
    a.socket.destroy();
    await expect.poll(() => bodies.used).toBe(3000);
    // One that finishes is answered, and gives its bytes back when its reply ends.
    b.socket.write(body.slice(3000));
    expect(statusLine(await b.reply)).toBe("HTTP/1.1 200 OK");
    await expect.poll(() => bodies.used).toBe(0);
    expect(r.upstream.requests).toHaveLength(1);
    // A request alone is let in whatever its size within maxBodyBytes.
    const big = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json" }, body: chatBody(30_000) });
    expect(big.status).toBe(200);
    await big.text();
    await expect.poll(() => bodies.used).toBe(0);
    expect(r.proxy.context.life.inFlight).toBe(0);
  });

  it("does not let slow senders that announced much and sent little shut other requests out", async () => {
    r = await rig({ config: { maxBodyBytes: 65_536, maxInFlightBodyBytes: 10_000 } });
    const bodies = r.proxy.context.bodies;
    const slow = [1, 2, 3, 4].map(() => open(r?.proxy.port ?? 0, "Content-Length: 4000\r\nConnection: close\r\n"));
    for (const s of slow) s.socket.write("{");
    await expect.poll(() => bodies.used).toBe(4);
    const ordinary = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json" }, body: chatBody(3000) });
    expect(ordinary.status).toBe(200);
    await ordinary.text();
    for (const s of slow) s.socket.destroy();
    await expect.poll(() => bodies.used).toBe(0);
  });

  it("counts a compressed body twice, as sent and decoded, while the request is in flight", async () => {
    r = await rig({ config: { maxBodyBytes: 65_536, maxInFlightBodyBytes: 10_000 } });
    const bodies = r.proxy.context.bodies;
    const decoded = chatBody(40_000);
    const gz = gzipSync(decoded);
    // Held by the upstream, so the proxy still has the request.
    const held = fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json", "content-encoding": "gzip", "x-fake-mode": "hold" }, body: gz });
    await expect.poll(() => r?.upstream.held).toBe(1);
    expect(bodies.used).toBe(gz.length + 40_000);
    // Another compressed body that decodes past what is left is refused once decoded.
    const second = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json", "content-encoding": "gzip" }, body: gzipSync(chatBody(5000)) });
    expect(second.status).toBe(503);
    expect(second.headers.get("retry-after")).toBe("1");
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("body_budget_exceeded");
    await expect.poll(() => bodies.used).toBe(gz.length + 40_000);
    r.upstream.release();
    expect((await held).status).toBe(200);
    await expect.poll(() => bodies.used).toBe(0);
  });

  it("stops decoding a compressed body at the first piece the budget refuses, before the rest is inflated", async () => {
    // 32 KB of gzip that inflates to 32 MB: before, all 32 MB were allocated and only then counted.
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024));
    let offered = 0;
    const decoded = await decodeBody(bomb, "gzip", 64 * 1024 * 1024, (n) => (offered += n) <= 100_000);
    expect(decoded).toMatchObject({ ok: false, status: 503, code: "body_budget_exceeded" });
    expect(offered).toBeGreaterThan(100_000);
    expect(offered).toBeLessThan(200_000);
    // Within the budget, the body comes out whole; through two codings too.
    const text = chatBody(50_000);
    expect(await decodeBody(gzipSync(gzipSync(text)), "gzip, gzip", 65_536, () => true)).toEqual({ ok: true, body: Buffer.from(text) });
    expect(await decodeBody(gzipSync(text), "gzip", 40_000)).toMatchObject({ ok: false, status: 413, code: "body_too_large" });
    expect(await decodeBody(Buffer.from("not gzip"), "gzip", 40_000)).toMatchObject({ ok: false, status: 400, code: "invalid_content_encoding" });
    expect(await decodeBody(gzipSync(text).subarray(0, 100), "gzip", 65_536)).toMatchObject({ ok: false, status: 400, code: "invalid_content_encoding" });
  });

  it("refuses a compressed body that inflates past what is left with 503 while another holds bytes, not after inflating it whole", async () => {
    r = await rig({ config: { maxBodyBytes: 65_536, maxInFlightBodyBytes: 10_000 } });
    const bodies = r.proxy.context.bodies;
    const a = open(r.proxy.port, "Content-Length: 9000\r\nConnection: close\r\n");
    a.socket.write("x".repeat(8000));
    await expect.poll(() => bodies.used).toBe(8000);
    // Inflates past maxBodyBytes: decoded whole first, it was refused 413; the budget stops it first now.
    const bomb = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json", "content-encoding": "gzip" }, body: gzipSync(Buffer.alloc(1024 * 1024)) });
    expect(bomb.status).toBe(503);
    expect(((await bomb.json()) as { error: { code: string } }).error.code).toBe("body_budget_exceeded");
    await expect.poll(() => bodies.used).toBe(8000);
    a.socket.destroy();
    await expect.poll(() => bodies.used).toBe(0);
    expect(r.upstream.requests).toHaveLength(0);
  });

  it("tells a client waiting for 100-continue 503, not to send a body the total cannot hold", async () => {
    r = await rig({ config: { maxBodyBytes: 65_536, maxInFlightBodyBytes: 10_000 } });
    const bodies = r.proxy.context.bodies;
    const a = open(r.proxy.port, "Content-Length: 9000\r\nConnection: close\r\n");
    a.socket.write("x".repeat(8000));
    await expect.poll(() => bodies.used).toBe(8000);
    const b = open(r.proxy.port, "Content-Length: 4000\r\nExpect: 100-continue\r\n");
    const reply = await b.reply;
    expect(reply).not.toContain("100 Continue");
    expect(statusLine(reply)).toBe("HTTP/1.1 503 Service Unavailable");
    a.socket.destroy();
    await expect.poll(() => bodies.used).toBe(0);
  });

  it("is a setting of the one schema, with its default", async () => {
    const { parseConfig } = await import("../../src/proxy/config.js");
    const parsed = parseConfig({});
    expect(parsed.ok && parsed.value.maxInFlightBodyBytes).toBe(128 * 1024 * 1024);
    expect(parseConfig({ maxInFlightBodyBytes: 10 }).ok).toBe(false);
  });
});
