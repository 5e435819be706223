// Retries before the first byte: 429/5xx answers are retried with back-off, a retry-after the
// upstream sends is honoured (and one too long is passed to the client instead of waited for),
// then the fallback upstream takes over. The waits are recorded, not slept: nothing here depends
// on the machine's speed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { hashKey } from "../../src/proxy/tenancy.js";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-openai.js";
import { rig, type Rig } from "./setup.js";

let r: Rig | undefined;
let fallback: FakeUpstream | undefined;
afterEach(async () => {
  await r?.close();
  await fallback?.close();
  r = undefined;
  fallback = undefined;
});

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "hello" }];
const chats = (u: FakeUpstream) => u.requests.filter((q) => q.path === "/v1/chat/completions");

describe("proxy retries and fallback", () => {
  it("retries a 503 honouring retry-after, for plain and streamed replies", async () => {
    const slept: number[] = [];
    r = await rig({ upstream: { failFirst: { count: 2, status: 503, headers: { "retry-after": "3" } } }, proxy: { sleep: async (ms) => void slept.push(ms) } });
    const reply = await r.client.chat.completions.create({ model: "fake-model", messages }).withResponse();
    expect(reply.data.choices[0].message.content).toBe("reply to hello (1 messages)");
    expect(reply.response.headers.get("x-ptc-upstream-attempts")).toBe("3");
    expect(slept).toEqual([3000, 3000]);
    expect(chats(r.upstream)).toHaveLength(3);
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_retries_total")).toBe(2);
    const stream = await r.client.chat.completions.create({ model: "fake-model", messages, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("reply to hello (1 messages)");
  });

  it("backs off exponentially without retry-after, and passes a retry-after longer than maxDelayMs to the client", async () => {
    const slept: number[] = [];
    r = await rig({ upstream: { failFirst: { count: 2, status: 429 } }, proxy: { sleep: async (ms) => void slept.push(ms) } });
    await r.client.chat.completions.create({ model: "fake-model", messages });
    expect(slept).toEqual([250, 500]);
    await r.close();
    slept.length = 0;
    r = await rig({ upstream: { failFirst: { count: 5, status: 429, headers: { "retry-after": "120" } } }, proxy: { sleep: async (ms) => void slept.push(ms) } });
    const e = (await r.client.chat.completions.create({ model: "fake-model", messages }).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(429);
    expect(e.headers?.get("retry-after")).toBe("120");
    expect(slept).toEqual([]);
    expect(chats(r.upstream)).toHaveLength(1);
  });

  it("does not retry a 429 whose body says the quota is used up (insufficient_quota), on any path: it goes to the fallback, else to the client as it came", async () => {
    const body = { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } };
    const text = JSON.stringify(body);
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req.url ?? "");
      req.resume();
      req.on("end", () => {
        res.writeHead(429, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
        res.end(text);
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    const slept: number[] = [];
    try {
      r = await rig({ proxy: { upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sleep: async (ms) => void slept.push(ms) } });
      for (const [path, request] of [
        ["/v1/chat/completions", { model: "fake-model", messages }],
        ["/v1/chat/completions", { model: "fake-model", messages, stream: true }],
        ["/v1/embeddings", { model: "fake-embed", input: "a passage" }],
      ] as const) {
        const res = await fetch(`${r.proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-client-key" }, body: JSON.stringify(request) });
        expect(res.status, path).toBe(429);
        expect(await res.json(), path).toEqual(body);
      }
      // Before: 3 requests and 2 waits (250 + 500 ms) each, for an answer no wait changes.
      expect(seen).toHaveLength(3);
      expect(slept).toEqual([]);
      expect(r.proxy.context.metrics.get("ptc_proxy_upstream_retries_total")).toBe(0);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
    await r.close();
    // A fallback upstream (another account, its own key) is tried at once.
    fallback = await startFakeUpstream();
    r = await rig({ upstream: { failFirst: { count: 100, status: 429, body } }, proxy: { sleep: async (ms) => void slept.push(ms) }, config: { retries: { fallbackUpstream: fallback.url, fallbackApiKey: "sk-fallback" } } });
    const reply = await r.client.chat.completions.create({ model: "fake-model", messages }).withResponse();
    expect(reply.data.choices[0].message.content).toBe("reply to hello (1 messages)");
    expect(chats(r.upstream)).toHaveLength(1);
    expect(chats(fallback)).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it("does not send again a reply whose upstream says x-should-retry: false (another ptc proxy's used-up budget), as the SDKs do not", async () => {
    r = await rig({ upstream: { failFirst: { count: 100, status: 429, headers: { "x-should-retry": "false" } } } });
    const e = (await r.client.chat.completions.create({ model: "fake-model", messages }).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(429);
    // Before: 3 requests.
    expect(chats(r.upstream)).toHaveLength(1);
  });

  it("retries every 5xx, such as Anthropic's 529 overloaded and a CDN's 520", async () => {
    for (const status of [529, 520]) {
      r = await rig({ upstream: { failFirst: { count: 1, status } } });
      // Before: passed to the client at once, as a 400 would be.
      const reply = await r.client.chat.completions.create({ model: "fake-model", messages }).withResponse();
      expect(reply.data.choices[0].message.content, String(status)).toBe("reply to hello (1 messages)");
      expect(reply.response.headers.get("x-ptc-upstream-attempts"), String(status)).toBe("2");
      await r.close();
      r = undefined;
    }
  });

  it("does not retry a client error", async () => {
    r = await rig({ upstream: { failFirst: { count: 1, status: 400 } } });
    const e = (await r.client.chat.completions.create({ model: "fake-model", messages }).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(400);
    expect(chats(r.upstream)).toHaveLength(1);
  });

  it("falls back to the other upstream, with its own key, once the first one's retries are used up", async () => {
    fallback = await startFakeUpstream();
    const slept: number[] = [];
    r = await rig({ upstream: { failFirst: { count: 100, status: 500 } }, proxy: { sleep: async (ms) => void slept.push(ms) }, config: { retries: { fallbackUpstream: fallback.url, fallbackApiKey: "sk-fallback" } } });
    const reply = await r.client.chat.completions.create({ model: "fake-model", messages }).withResponse();
    expect(reply.data.choices[0].message.content).toBe("reply to hello (1 messages)");
    expect(chats(r.upstream)).toHaveLength(3);
    expect(chats(fallback)).toHaveLength(1);
    expect(chats(fallback)[0].headers.authorization).toBe("Bearer sk-fallback");
    expect(reply.response.headers.get("x-ptc-upstream-attempts")).toBe("4");
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_fallbacks_total")).toBe(1);
  });
  it("does not send again a request the upstream had whole before its connection broke (it may have worked on it), on any path, nor to the fallback", async () => {
    fallback = await startFakeUpstream();
    r = await rig({ config: { retries: { fallbackUpstream: fallback.url }, tenancy: { virtualKeys: { once: { keyHash: hashKey("ptc-vk-once"), tokenBudget: 1_000_000 } } } } });
    const headers = { authorization: "Bearer ptc-vk-once", "content-type": "application/json", "x-fake-mode": "reset-after-body" };
    const paths: [string, string][] = [
      ["/v1/chat/completions", JSON.stringify({ model: "fake-model", messages })],
      ["/v1/embeddings", JSON.stringify({ model: "fake-embed", input: "a passage" })],
    ];
    for (const [path, body] of paths) {
      const res = await fetch(`${r.proxy.url}${path}`, { method: "POST", headers, body });
      expect(res.status, path).toBe(502);
      expect(((await res.json()) as { error: { code: string } }).error.code, path).toBe("upstream_unreachable");
      // Before: 3 requests upstream and 1 to the fallback, each of which the upstream could bill.
      expect(r.upstream.requests.filter((q) => q.path === path), path).toHaveLength(1);
    }
    expect(fallback.requests).toHaveLength(0);
    // It is charged: the upstream had it whole.
    expect(await r.proxy.context.tenants.spentBy("once")).toBeGreaterThan(0);
    // A request that never went out whole (nothing listens) is still retried, then sent to the fallback.
    await fallback.close();
    fallback = undefined;
    const closed = await startFakeUpstream();
    const url = closed.url;
    await closed.close();
    await r.close();
    r = await rig({ proxy: { upstream: url }, config: { retries: { attempts: 2 } } });
    const res = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: paths[0][1] });
    expect(res.status).toBe(502);
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_retries_total")).toBe(2);
  });
  it("sends again a request whose kept-alive connection the upstream had closed (the idle-close race), once, on a new one", async () => {
    // The upstream answers the first request on a connection and drops the connection when a second
    // one arrives on it, as a server closing an idle keep-alive connection just as a request is
    // sent does: it never read that request. Before, that request failed with a 502.
    const seen = new WeakMap<object, number>();
    let connections = 0;
    const server = http.createServer((req, res) => {
      const n = (seen.get(req.socket) ?? 0) + 1;
      seen.set(req.socket, n);
      if (n === 1) connections++;
      if (n > 1) return void req.socket.destroy();
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "fine" }, finish_reason: "stop" }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
      });
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    try {
      r = await rig({ proxy: { upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } });
      for (let i = 0; i < 2; i++) {
        const res = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "m", messages }) });
        expect(res.status, `request ${i + 1}`).toBe(200);
      }
      expect(connections).toBe(2);
      expect(r.proxy.context.metrics.get("ptc_proxy_upstream_retries_total")).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    }
  });
});
