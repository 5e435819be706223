// Forwarding through the proxy as an app sees it: the official client, chat completions with and
// without streaming, models, other paths and headers untouched, SSE byte for byte.
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import http from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { rig, stored, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

/** The raw bytes of an SSE response. */
async function rawStream(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

describe("proxy forwarding", () => {
  it("answers a chat completion through the official client, sending the client's key and fields upstream", async () => {
    r = await rig();
    const reply = await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hello" }], temperature: 0.2, seed: 7 });
    expect(reply.choices[0].message.content).toBe("reply to hello (1 messages)");
    const sent = r.upstream.requests[0];
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe("Bearer sk-client-key");
    expect(sent.body).toMatchObject({ model: "fake-model", temperature: 0.2, seed: 7 });
  });

  it("echoes the conversation id and forwards identity headers it consumed", async () => {
    r = await rig();
    const { data, response } = await r.client.chat.completions
      .create({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-session-affinity": "sess-42" } })
      .withResponse();
    expect(data.choices[0].message.content).toContain("hi");
    expect(response.headers.get("x-ptc-conversation-id")).toBe("sess-42");
    expect(response.headers.get("x-ptc-conversation-source")).toBe("header:x-session-affinity");
    expect(r.upstream.requests[0].headers["x-session-affinity"]).toBe("sess-42");
  });

  it("answers a request whose body-field id no header can carry (non-Latin-1, a line break), streamed or not", async () => {
    r = await rig();
    for (const user of ["用户-42", "jane\ndoe", "😀"]) {
      const { data, response } = await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }], user }).withResponse();
      expect(data.choices[0].message.content).toContain("hi");
      expect(decodeURIComponent(response.headers.get("x-ptc-conversation-id") ?? "")).toBe(user);
      const stream = await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }], user, stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      expect(text).toContain("hi");
    }
    expect(r.logs.filter((l) => l.event === "internal_error")).toEqual([]);
  });

  it("reads a compressed request body (Codex compresses its requests), sends it on decoded, and bounds what it inflates to", async () => {
    r = await rig({ config: { maxBodyBytes: 4096 } });
    const post = (path: string, body: Buffer, encoding: string) => fetch(`${r?.proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "content-encoding": encoding }, body });
    const chat = Buffer.from(JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "squeezed" }] }));
    const responses = Buffer.from(JSON.stringify({ model: "fake-model", input: [{ role: "user", content: "squeezed" }] }));
    for (const [encoding, bytes] of [["gzip", gzipSync(chat)], ["deflate", deflateSync(chat)], ["br", brotliCompressSync(chat)], ["gzip, br", brotliCompressSync(gzipSync(chat))]] as const) {
      const res = await post("/v1/chat/completions", bytes, encoding);
      expect(res.status, encoding).toBe(200);
      expect(((await res.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content).toBe("reply to squeezed (1 messages)");
      const sent = r.upstream.requests.at(-1);
      expect(sent?.headers["content-encoding"]).toBeUndefined();
      expect(sent?.raw).toEqual(chat);
    }
    expect((await post("/v1/responses", gzipSync(responses), "gzip")).status).toBe(200);
    // Over the limit once inflated: 413, however small it was on the wire.
    const bomb = await post("/v1/chat/completions", gzipSync(JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "x".repeat(100_000) }] })), "gzip");
    expect(bomb.status).toBe(413);
    const broken = await post("/v1/chat/completions", Buffer.from("not gzip at all"), "gzip");
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as { error: { message: string } }).error.message).toContain("gzip");
    const unknown = await post("/v1/chat/completions", chat, "compress");
    expect(unknown.status).toBe(415);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("unsupported_content_encoding");
    expect(r.upstream.requests).toHaveLength(5);
    // Any other path still passes the bytes and the header through as they are.
    await post("/v1/echo", gzipSync(chat), "gzip");
    expect(r.upstream.requests.at(-1)?.headers["content-encoding"]).toBe("gzip");
    expect(r.upstream.requests.at(-1)?.raw).toEqual(gzipSync(chat));
  });

  it("lists models and passes any other path, body and header through untouched", async () => {
    r = await rig();
    const models = await r.client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(["fake-model"]);
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10, 13]);
    const res = await fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers: { "content-type": "application/x-custom", "x-custom": "kept" }, body: bytes });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-upstream")).toBe("fake");
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes);
    expect(r.upstream.requests.at(-1)?.headers["x-custom"]).toBe("kept");
  });

  it("keeps the headers a client's Connection header names to its own hop, as it keeps Connection", async () => {
    r = await rig();
    await new Promise<void>((resolve, reject) => {
      const req = http.request(`${r?.proxy.url}/v1/models`, { headers: { connection: "keep-alive, X-Hop", "x-hop": "for the proxy only", "x-end": "for the upstream" } }, (res) => {
        res.resume();
        res.on("end", resolve);
      });
      req.on("error", reject);
      req.end();
    });
    const headers = r.upstream.requests.at(-1)?.headers;
    // Before: x-hop went upstream.
    expect(headers?.["x-hop"]).toBeUndefined();
    expect(headers?.["x-end"]).toBe("for the upstream");
  });

  it("does not forward a client's Expect: 100-continue: the proxy has the whole body before it sends, on chat and forwarded paths", async () => {
    r = await rig();
    const x = r;
    const body = JSON.stringify({ model: "fake-model", input: "hi", messages: [{ role: "user", content: "hi ".repeat(600) }] });
    for (const path of ["/v1/chat/completions", "/v1/echo"]) {
      // As curl sends a body over 1 KB: headers first, the body once the proxy answers 100 Continue.
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(`${x.proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", expect: "100-continue", "content-length": Buffer.byteLength(body) } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("continue", () => req.end(body));
        req.on("error", reject);
      });
      expect(status, path).toBe(200);
      const sent = x.upstream.requests.at(-1);
      expect(sent?.path, path).toBe(path);
      // Before: "100-continue" went upstream, asking it to wait for a body already on its way (an upstream refusing expectations answers 417).
      expect(sent?.headers.expect, path).toBeUndefined();
    }
  });

  it("keeps the headers the upstream's Connection header names to its own hop, on forwarded paths and chat", async () => {
    const upstream = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const body = JSON.stringify(req.url === "/v1/chat/completions" ? { id: "c", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] } : { data: [] });
        res.writeHead(200, { connection: "keep-alive, X-Upstream-Hop", "x-upstream-hop": "for the proxy only", "x-end": "for the client", "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    try {
      r = await rig({ proxy: { upstream: `http://127.0.0.1:${(upstream.address() as { port: number }).port}` } });
      for (const [method, path] of [["GET", "/v1/models"], ["POST", "/v1/chat/completions"]]) {
        const res = await fetch(`${r.proxy.url}${path}`, { method, headers: { "content-type": "application/json" }, ...(method === "POST" ? { body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) } : {}) });
        await res.text();
        expect(res.status, path).toBe(200);
        // Before: x-upstream-hop reached the client.
        expect(res.headers.get("x-upstream-hop"), path).toBeNull();
        expect(res.headers.get("x-end"), path).toBe("for the client");
      }
    } finally {
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it("streams chunk by chunk, byte for byte, when the client asked for usage itself", async () => {
    r = await rig();
    const body = { model: "fake-model", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "stream me a few words" }] };
    const direct = await rawStream(`${r.upstream.url}/chat/completions`, body);
    const proxied = await rawStream(`${r.proxy.url}/v1/chat/completions`, body);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get("content-type")).toContain("text/event-stream");
    expect(proxied.text).toBe(direct.text);
    expect(proxied.text).toContain('"usage":{"prompt_tokens"');
  });

  it("asks for usage when the client left it unset and strips the usage-only chunk, nothing else", async () => {
    r = await rig();
    const body = { model: "fake-model", stream: true, messages: [{ role: "user", content: "stream me a few words" }] };
    const proxied = await rawStream(`${r.proxy.url}/v1/chat/completions`, body, { "x-conversation-id": "stream-1" });
    // Upstream was asked for usage, so its chunks carry "usage": null; the usage-only chunk is gone.
    expect(r.upstream.requests[0].body).toMatchObject({ stream_options: { include_usage: true } });
    const direct = await rawStream(`${r.upstream.url}/chat/completions`, { ...body, stream_options: { include_usage: true } });
    const events = direct.text.split("\n\n").filter((e) => e !== "");
    const usageEvent = events.find((e) => e.includes('"choices":[]'));
    expect(usageEvent).toBeDefined();
    expect(proxied.text).toBe(direct.text.replace(`${usageEvent}\n\n`, ""));
    expect(proxied.text.endsWith("data: [DONE]\n\n")).toBe(true);
    // The usage it read is in the conversation's record.
    expect((await r.proxy.context.store.list()).find((c) => c.tenant === "anon" && c.conversation === "stream-1")?.reportedTokens).toBeGreaterThan(0);
  });

  it("keeps no upstream count of an earlier request beside the estimate of a stream left before its usage", async () => {
    r = await rig();
    const first = await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hello" }] }, { headers: { "x-conversation-id": "left-1" } });
    const reported = (await stored(r.proxy.context.store, "left-1"))?.reportedTokens;
    expect(reported).toBe(first.usage?.prompt_tokens);
    // The same conversation, a much longer prompt, streamed: the client leaves after the first chunk.
    const gone = new AbortController();
    const stream = await r.client.chat.completions.create({ model: "fake-model", stream: true, messages: [{ role: "user", content: "hello" }, { role: "assistant", content: "hi" }, { role: "user", content: "more words ".repeat(200) }] }, { headers: { "x-conversation-id": "left-1", "x-fake-mode": "hold" }, signal: gone.signal });
    await stream[Symbol.asyncIterator]().next();
    gone.abort();
    await expect.poll(() => r?.upstream.abandoned).toBe(1);
    await expect.poll(async () => (await stored((r as Rig).proxy.context.store, "left-1"))?.messageCount).toBe(3);
    const record = await stored(r.proxy.context.store, "left-1");
    expect(record?.estimatedTokens).toBeGreaterThan(200);
    // Before: reportedTokens still said the first request's count (a handful), beside this estimate.
    expect(record?.reportedTokens).toBeUndefined();
  });

  it("keeps integers past 2^53 exact in a body it rewrites (usage asked for, messages compacted), in the client's fields and in kept messages", async () => {
    r = await rig({ config: { compaction: { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } } });
    // Written as text: JSON.stringify of a JS object cannot hold these numbers either.
    const big = (extra: string, messages: string) =>
      `{"model":"fake-model","stream":true,"seed":12345678901234567890,"metadata":{"order":-98765432109876543210,"small":9007199254740991,"ratio":1.5e300},"logit_bias":{"12345678901234567890":-100}${extra},"messages":${messages}}`;
    const asked = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-conversation-id": "big-1" }, body: big("", '[{"role":"user","content":"a number 12345678901234567890 in a string"}]') });
    await asked.text();
    // Only stream_options was added: every number arrives as the client wrote it.
    const first = r.upstream.requests[0].raw.toString("utf8");
    expect(first).toContain('"stream_options":{"include_usage":true}');
    for (const n of ['"seed":12345678901234567890', '"order":-98765432109876543210', '"small":9007199254740991', '"ratio":1.5e+300', '"12345678901234567890":-100', '"content":"a number 12345678901234567890 in a string"']) expect(first).toContain(n);
    // A conversation long enough to compact: the kept last messages carry a field of their own.
    const turns = Array.from({ length: 40 }, (_, i) => `{"role":"${i % 2 === 0 ? "user" : "assistant"}","content":"turn ${i} ${"words and more words ".repeat(20)}"}`);
    const messages = `[{"role":"system","content":"sys"},${turns.join(",")},{"role":"user","content":"last","x_trace":18446744073709551615}]`;
    const compacted = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-conversation-id": "big-2" }, body: big(',"stream_options":{"include_usage":true}', messages) });
    await compacted.text();
    const sent = r.upstream.requests.at(-1)?.raw.toString("utf8") ?? "";
    expect(r.upstream.summaryCalls).toBeGreaterThan(0);
    expect(sent.length).toBeLessThan(messages.length);
    // Before: "seed":12345678901234567000, "order":-98765432109876540000, "x_trace":18446744073709552000.
    for (const n of ['"seed":12345678901234567890', '"order":-98765432109876543210', '"x_trace":18446744073709551615']) expect(sent).toContain(n);
  });

  it("keeps number literals a double overflows (1e400) as written in a body it rewrites, where they became null", async () => {
    r = await rig();
    const body = '{"model":"fake-model","stream":true,"metadata":{"huge":1e400,"neg":-2E+308,"fine":1e300},"messages":[{"role":"user","content":"1e400 in a string","x":[1E999]}],"tail":true,"off":false}';
    await (await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body })).text();
    const sent = r.upstream.requests[0].raw.toString("utf8");
    expect(sent).toContain('"stream_options":{"include_usage":true}');
    // Before: "huge":null, "neg":null, "x":[null].
    for (const n of ['"huge":1e400', '"neg":-2E+308', '"fine":1e+300', '"x":[1E999]', '"content":"1e400 in a string"', '"tail":true', '"off":false']) expect(sent).toContain(n);
  });

  it("leaves an explicit include_usage: false alone", async () => {
    r = await rig();
    const body = { model: "fake-model", stream: true, stream_options: { include_usage: false }, messages: [{ role: "user", content: "no usage" }] };
    const proxied = await rawStream(`${r.proxy.url}/v1/chat/completions`, body);
    expect(r.upstream.requests[0].body).toMatchObject({ stream_options: { include_usage: false } });
    expect(proxied.text).not.toContain('"usage"');
  });

  it("streams through the official client", async () => {
    r = await rig();
    const stream = await r.client.chat.completions.create({ model: "fake-model", stream: true, messages: [{ role: "user", content: "count to three" }] });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toBe("reply to count to three (1 messages)");
  });

  it("binds to loopback by default", async () => {
    r = await rig();
    expect(r.proxy.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });
});

describe("proxy forwarding: its log stays JSON lines", () => {
  // Each forwarded request with a body put 11 close listeners on its response, so Node wrote a
  // MaxListenersExceededWarning (two lines of plain text) to stderr for every one: an embeddings
  // client flooded the JSON log.
  it("writes no process warning for requests forwarded untouched, with a body or without", async () => {
    r = await rig();
    const warnings: string[] = [];
    const heard = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on("warning", heard);
    try {
      for (const [method, path, body] of [["GET", "/v1/models", undefined], ["POST", "/v1/embeddings", JSON.stringify({ model: "m", input: "hi" })], ["POST", "/v1/completions", JSON.stringify({ model: "m", prompt: "hi", stream: true })]] as const) {
        const res = await fetch(`${r.proxy.url}${path}`, { method, headers: { authorization: "Bearer sk-client-key", "content-type": "application/json" }, body });
        await res.text();
      }
      // A warning is emitted on the next tick of the listener that passed the bound, long before the reply ended.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", heard);
    }
    expect(warnings).toEqual([]);
    expect(r.upstream.requests.map((q) => q.path)).toEqual(["/v1/models", "/v1/embeddings", "/v1/completions"]);
  });
});
