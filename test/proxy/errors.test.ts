// Failures reach the client as OpenAI-style errors the official SDK understands: upstream error
// pages, JSON errors, timeouts, malformed replies, an unreachable upstream, and bad requests.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startProxy, type RunningProxy } from "../../src/proxy/index.js";
import { hashKey } from "../../src/proxy/tenancy.js";
import { rig, tempDir, type Rig } from "./setup.js";
import { MAX_ERROR_BYTES, MAX_REPLY_BYTES } from "../../src/proxy/upstream.js";

let r: Rig | undefined;
let extra: RunningProxy | undefined;
afterEach(async () => {
  await r?.close();
  await extra?.close();
  r = undefined;
  extra = undefined;
});

const ask = (client: OpenAI, mode?: string) =>
  client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }, mode === undefined ? {} : { headers: { "x-fake-mode": mode } });

async function failure(p: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OpenAI.APIError);
  return e as InstanceType<typeof OpenAI.APIError>;
}

describe("proxy errors", () => {
  it("wraps an upstream HTML error page into an OpenAI error with the same status", async () => {
    r = await rig();
    const e = await failure(ask(r.client, "html500"));
    expect(e.status).toBe(500);
    expect(e.message).toContain("upstream answered HTTP 500");
    expect(e.message).toContain("Internal Server Error");
    expect((e.error as { type?: string }).type).toBe("upstream_error");
  });

  it("passes an upstream JSON error through as it is", async () => {
    r = await rig();
    const e = await failure(ask(r.client, "json429"));
    expect(e.status).toBe(429);
    expect(e.message).toContain("Rate limit reached");
    expect(e.code).toBe("rate_limit_exceeded");
  });

  it("answers 502 for a malformed upstream reply and 504 when the upstream hangs", async () => {
    r = await rig({ config: { upstreamTimeoutMs: 150 } });
    const malformed = await failure(ask(r.client, "malformed"));
    expect(malformed.status).toBe(502);
    expect(malformed.code).toBe("upstream_malformed");
    const hung = await failure(ask(r.client, "hang"));
    expect(hung.status).toBe(504);
    expect(hung.code).toBe("upstream_timeout");
  });

  it("says so when the upstream answers a chat request with a redirect, which the proxy does not follow", async () => {
    r = await rig();
    for (const stream of [false, true]) {
      const res = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-fake-mode": "redirect" }, body: JSON.stringify({ model: "fake-model", stream, messages: [{ role: "user", content: "hi" }] }) });
      expect(res.status).toBe(502);
      const { error } = (await res.json()) as { error: { message: string; code: string } };
      // Before: upstream_malformed, 'the upstream's reply is not a JSON chat completion (it starts with "")'.
      expect(error.code).toBe("upstream_redirect");
      expect(error.message).toContain("HTTP 307");
      expect(error.message).toContain("https://upstream.example/v1/chat/completions");
    }
  });

  it("reads no more than a bound of an upstream reply that never ends, an error page or a whole reply (it was read for ever, into memory)", async () => {
    // An upstream (a broken gateway) that sends its body without end, until the proxy lets go.
    let open = 0;
    const endless = http.createServer((req, res) => {
      req.resume();
      const status = Number(req.headers["x-status"]);
      res.writeHead(status, { "content-type": status === 200 ? "application/json" : "text/html" });
      open++;
      const chunk = Buffer.alloc(1 << 16, status === 200 ? "{" : "x");
      const pump = () => {
        while (res.write(chunk));
      };
      res.on("drain", pump);
      res.on("close", () => open--);
      pump();
    });
    await new Promise<void>((resolve) => endless.listen(0, "127.0.0.1", resolve));
    try {
      extra = await startProxy({ upstream: `http://127.0.0.1:${(endless.address() as AddressInfo).port}/v1`, port: 0, logger: () => {}, sleep: async () => {} });
      const post = (path: string, status: number) =>
        fetch(`${extra?.url}/v1/${path}`, { method: "POST", headers: { "content-type": "application/json", "x-status": String(status) }, body: JSON.stringify({ model: "m", input: "x", messages: [{ role: "user", content: "hi" }] }) }).then(async (res) => ({ status: res.status, body: await res.text() }));
      // An error page: its beginning is enough to say what went wrong, on the chat path and forwarded ones.
      for (const path of ["chat/completions", "embeddings"]) {
        const page = await post(path, 400);
        expect(page.status).toBe(400);
        expect(page.body).toContain("upstream answered HTTP 400: xxxx");
      }
      // A whole reply past the bound: refused, not held.
      const whole = await post("chat/completions", 200);
      expect(whole.status).toBe(502);
      expect(JSON.parse(whole.body)).toMatchObject({ error: { code: "upstream_reply_too_large", message: expect.stringContaining(`larger than the ${MAX_REPLY_BYTES} bytes`) } });
      // A 500 is retried: the reply each retry replaces was read for ever in the background (resume()), the last one up to the bound.
      const retried = await post("chat/completions", 500);
      expect(retried.status).toBe(500);
      // Each upstream connection was let go.
      await expect.poll(() => open, { timeout: 5000 }).toBe(0);
    } finally {
      endless.closeAllConnections();
      endless.close();
    }
  }, 60_000);

  it("decodes a whole reply or error the upstream compressed though asked for identity (it answered 502 with the gzip bytes quoted)", async () => {
    const reply = { id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } };
    const error = { error: { message: "bad model", type: "invalid_request_error", code: null } };
    const gzipping = http.createServer((req, res) => {
      req.resume();
      const status = Number(req.headers["x-status"]);
      if (req.headers["x-stream"] !== undefined) {
        res.writeHead(200, { "content-type": "text/event-stream", "content-encoding": "gzip" });
        return res.end(gzipSync(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "ok" } }] })}\n\ndata: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 1 } })}\n\ndata: [DONE]\n\n`));
      }
      res.writeHead(status, { "content-type": "application/json", "content-encoding": "gzip" });
      res.end(gzipSync(JSON.stringify(status === 200 ? reply : error)));
    });
    await new Promise<void>((resolve) => gzipping.listen(0, "127.0.0.1", resolve));
    try {
      extra = await startProxy({ upstream: `http://127.0.0.1:${(gzipping.address() as AddressInfo).port}/v1`, port: 0, logger: () => {} });
      const client = new OpenAI({ baseURL: `${extra.url}/v1`, apiKey: "k", maxRetries: 0 });
      const ok = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-status": "200" } });
      expect(ok.choices[0].message.content).toBe("ok");
      // A stream: its usage is read, and the usage chunk the proxy asked for on the client's behalf is dropped (both were missed in the gzip bytes).
      const stream = await client.chat.completions.create({ model: "m", stream: true, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-status": "200", "x-stream": "1" } });
      const chunks: unknown[] = [];
      for await (const c of stream) chunks.push(c);
      expect(chunks).toEqual([{ choices: [{ index: 0, delta: { content: "ok" } }] }]);
      // The error as the upstream wrote it, readable: before, sent as plain text under content-encoding: gzip, which no client could read.
      const e = await failure(client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-status": "400" } }));
      expect(e.status).toBe(400);
      expect(e.message).toContain("bad model");
    } finally {
      gzipping.close();
    }
  });

  it("passes on as it came a whole reply in a content-encoding this Node cannot undo, charged as one whose usage is unread (it answered 502 upstream_malformed)", async () => {
    // "compress" no Node undoes; zstd before Node 22.15 is the same case. Not JSON until decoded.
    const bytes = Buffer.from([0x1f, 0x9d, 0x90, 0x7b, 0x22, 0x00, 0xff, 0x13]);
    const compressing = http.createServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "compress", "content-length": String(bytes.length) });
      res.end(bytes);
    });
    await new Promise<void>((resolve) => compressing.listen(0, "127.0.0.1", resolve));
    try {
      const configFile = join(tempDir(), "config.json");
      writeFileSync(configFile, JSON.stringify({ tenancy: { virtualKeys: { z: { keyHash: hashKey("ptc-vk-z"), tokenBudget: 1_000_000 } } } }));
      extra = await startProxy({ upstream: `http://127.0.0.1:${(compressing.address() as AddressInfo).port}/v1`, port: 0, configFile, logger: () => {} });
      // Read through node:http, which leaves the bytes as they came.
      const raw = await new Promise<{ status: number; encoding: string | undefined; body: Buffer }>((resolve, reject) => {
        const req = http.request(`${extra?.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer ptc-vk-z" } }, (r) => {
          const chunks: Buffer[] = [];
          r.on("data", (c: Buffer) => chunks.push(c));
          r.on("end", () => resolve({ status: r.statusCode ?? 0, encoding: r.headers["content-encoding"], body: Buffer.concat(chunks) }));
        });
        req.on("error", reject);
        req.end(JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }));
      });
      // Before: 502 upstream_malformed, quoting the compressed bytes: the reply the upstream made (and billed) was lost.
      expect(raw.status).toBe(200);
      expect(raw.encoding).toBe("compress");
      expect(raw.body.equals(bytes)).toBe(true);
      expect(extra.context.metrics.get("ptc_proxy_upstream_errors_total", 'kind="malformed"')).toBe(0);
      // Charged its estimated prompt, as a reply that reports no usage is.
      await expect.poll(() => extra?.context.tenants.spentBy("z"), { timeout: 5000 }).toBeGreaterThan(0);
    } finally {
      compressing.close();
    }
  });

  it("inflates an error page forwarded untouched no further than the MiB of an error body it reads", async () => {
    // 20 KB of gzip that inflates to 20 MiB, of which the client is shown 500 characters.
    const page = gzipSync(Buffer.alloc(20 << 20, "a"));
    const failing = http.createServer((req, res) => {
      req.resume();
      res.writeHead(500, { "content-type": "text/html", "content-encoding": "gzip", "content-length": String(page.length) });
      res.end(page);
    });
    await new Promise<void>((resolve) => failing.listen(0, "127.0.0.1", resolve));
    let largest = 0;
    const concat = Buffer.concat.bind(Buffer);
    const spy = vi.spyOn(Buffer, "concat").mockImplementation((list, n) => {
      const b = concat(list, n);
      largest = Math.max(largest, b.length);
      return b;
    });
    try {
      extra = await startProxy({ upstream: `http://127.0.0.1:${(failing.address() as AddressInfo).port}/v1`, port: 0, logger: () => {} });
      const res = await fetch(`${extra.url}/v1/embeddings`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer k" }, body: "{}" });
      expect(res.status).toBe(500);
      // Its start, as a page of any size is shown.
      expect(((await res.json()) as { error: { message: string } }).error.message).toBe(`upstream answered HTTP 500: ${"a".repeat(500)}`);
    } finally {
      spy.mockRestore();
      failing.close();
    }
    // Before: 20 MiB inflated (up to maxBodyBytes, 32 MiB) for each such reply, outside any budget.
    expect(largest).toBeLessThanOrEqual(MAX_ERROR_BYTES);
  });

  it("answers 502 when the upstream cannot be reached", async () => {
    extra = await startProxy({ upstream: "http://127.0.0.1:9/v1", port: 0, logger: () => {} });
    const client = new OpenAI({ baseURL: `${extra.url}/v1`, apiKey: "k", maxRetries: 0 });
    const e = await failure(ask(client));
    expect(e.status).toBe(502);
    expect(e.code).toBe("upstream_unreachable");
    const models = await failure(client.models.list());
    expect(models.status).toBe(502);
  });

  it("refuses malformed client requests with 400 and a reason, without calling upstream", async () => {
    r = await rig();
    const post = (body: string) => fetch(`${r?.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body });
    const cases: [string, string][] = [
      ["{not json", "not valid JSON"],
      // Where, by line and column (before: "at position 57", or the body quoted around the token).
      ['{\n "model": "m",\n "messages": [ {"role": "user", "content": "hi" x}]\n}', "not valid JSON (Expected ',' or '}' after property value at line 3, column 49)"],
      ['{"model":"m","messages": [}', "not valid JSON (Unexpected token '}' at line 1, column 27)"],
      ["[1,2]", "must be a JSON object"],
      ['{"model":"m"}', "'messages' must be a non-empty array"],
      ['{"model":"m","messages":[{"role":"robot","content":"x"}]}', "messages[0].role must be one of"],
      ['{"model":"m","messages":[{"role":"user","content":5}]}', "messages[0].content must be"],
      ['{"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"}', "'stream' must be a boolean"],
    ];
    for (const [body, reason] of cases) {
      const res = await post(body);
      expect(res.status).toBe(400);
      const json = (await res.json()) as { error: { message: string; type: string } };
      expect(json.error.type).toBe("invalid_request_error");
      expect(json.error.message).toContain(reason);
    }
    expect(r.upstream.requests).toHaveLength(0);
  });

  it("answers a body whose names, ids or blocks are of the wrong type with 400 or as usual, never 500, in every API", async () => {
    // A compaction counts and converts every message: the last one makes the prompt worth compacting.
    r = await rig({ config: { compaction: { contextLimits: { "fake-model": 300 }, reserveOutputTokens: 10 } } });
    const go = { role: "user", content: "go ".repeat(300) };
    const odd = { toString: 1 };
    const call = (c: Record<string, unknown>) => ({ model: "fake-model", messages: [{ role: "user", content: "x" }, { role: "assistant", content: null, tool_calls: [c] }, { role: "tool", tool_call_id: "a", content: "r" }, go] });
    const cases: Array<[string, unknown, number, string]> = [
      ["chat/completions", { model: "fake-model", messages: [{ role: "user", content: "hi", name: [] }, go] }, 400, "messages[0].name must be a string"],
      ["chat/completions", { model: "fake-model", messages: [{ role: "user", content: "hi", name: odd }, go] }, 400, "messages[0].name must be a string"],
      ["chat/completions", call({ id: "a", type: "function", function: { name: "f", arguments: odd } }), 400, "messages[1].tool_calls[0].function.arguments must be a string"],
      ["chat/completions", call({ id: odd, type: "custom", custom: { name: "f", input: "x" } }), 400, "messages[1].tool_calls[0].id must be a string"],
      ["chat/completions", call({ id: "a", type: "custom", custom: { name: odd, input: "x" } }), 400, "messages[1].tool_calls[0].custom.name must be a string"],
      // Before: 200, forwarded uncompacted on every request, each logging a compaction failure ("has a tool call (0) without a function name").
      ["chat/completions", call({ id: "a", type: "function", function: { arguments: "{}" } }), 400, "messages[1] has a tool call (0) without a function name"],
      ["chat/completions", call({ id: "a", type: "function", function: { name: "f" } }), 400, "messages[1] has a tool call (0) without a function name and arguments string"],
      ["chat/completions", call({ id: "a", type: "function" }), 400, "messages[1] has a tool call (0) without a function name"],
      ["chat/completions", call({ id: "a", type: "function", function: null }), 400, "messages[1] has a tool call (0) without a function name"],
      ["chat/completions", call({ id: "a", type: "custom", custom: { input: "x" } }), 400, "messages[1] has a tool call (0) without a function name"],
      ["messages", { model: "fake-model", max_tokens: 5, system: [{ type: "tool_result", content: [null] }], messages: [{ role: "user", content: "hi" }] }, 400, "system[0].content[0] must be a content block"],
      ["messages", { model: "fake-model", max_tokens: 5, messages: [{ role: "user", content: [{ type: "document", source: { type: "content", content: [null, 5] } }] }, go] }, 200, ""],
      ["messages", { model: "fake-model", max_tokens: 5, messages: [{ role: "assistant", content: [{ type: "tool_use", id: odd, name: odd, input: {} }] }, { role: "user", content: [{ type: "tool_result", tool_use_id: odd, content: "r" }] }, go] }, 400, "messages[0].content[0].id must be a string"],
      ["responses", { model: "fake-model", input: [{ type: "function_call", call_id: odd, name: odd, arguments: odd }, { type: "function_call_output", call_id: odd, output: "x" }, go] }, 400, "input[0].call_id must be a string"],
      ["responses", { model: "fake-model", input: [{ role: "user", content: [{ type: odd }] }, go] }, 200, ""],
    ];
    for (const [path, body, status, reason] of cases) {
      const res = await fetch(`${r.proxy.url}/v1/${path}`, { method: "POST", headers: { "content-type": "application/json", "x-conversation-id": "odd" }, body: JSON.stringify(body) });
      const text = await res.text();
      // Before: 500 internal_error ("countTokens: text must be a string", "Cannot convert object to primitive value", "Cannot read properties of null").
      expect({ path, status: res.status }).toEqual({ path, status });
      expect(text).toContain(reason);
    }
    expect(r.logs.filter((l) => l.event === "internal_error")).toEqual([]);
    expect(r.logs.filter((l) => l.event === "compaction_error").map((l) => l.error)).toEqual([]);
  });

  it("refuses a body that is not UTF-8 with 400 saying where, in every API (a rewritten body carried U+FFFD in its place)", async () => {
    r = await rig();
    const latin1 = (json: string) => Buffer.from(json.replace("Zurich", "Z\xfcrich"), "latin1");
    const cases: Array<[string, Buffer]> = [
      // A stream: the proxy adds stream_options, so it rewrites the body.
      ["chat/completions", latin1('{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"Zurich"}]}')],
      ["messages", latin1('{"model":"fake-model","max_tokens":5,"messages":[{"role":"user","content":"Zurich"}]}')],
      ["responses", latin1('{"model":"fake-model","input":"Zurich"}')],
    ];
    for (const [path, body] of cases) {
      const res = await fetch(`${r.proxy.url}/v1/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body });
      const text = await res.text();
      expect(res.status, text).toBe(400);
      expect(JSON.parse(text)).toMatchObject({ error: { type: "invalid_request_error", message: expect.stringMatching(/^the request body is not UTF-8: byte 0xFC at line 1, column \d+$/) } });
    }
    expect(r.upstream.requests).toHaveLength(0);
  });

  it("refuses a null block, part or tool call with 400 naming it, in every API (not 500, not 503 store_unavailable)", async () => {
    r = await rig();
    const post = (path: string, body: unknown) => fetch(`${r?.proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k" }, body: JSON.stringify(body) });
    const user = { role: "user", content: "x" };
    const cases: [string, unknown, string][] = [
      ["/v1/chat/completions", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: [null] }, user] }, "messages[0].tool_calls"],
      ["/v1/chat/completions", { model: "m", messages: [{ role: "assistant", content: null, tool_calls: "x" }, user] }, "messages[0].tool_calls"],
      // Streamed without usage, the prompt is counted after the reply: a null part cut the stream (internal_error).
      ["/v1/chat/completions", { model: "m", stream: true, stream_options: { include_usage: false }, messages: [{ role: "user", content: [null, { type: "text", text: "hi" }] }] }, "messages[0].content[0]"],
      ["/v1/messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: [null] }] }, "messages[0].content[0]"],
      ["/v1/messages", { model: "m", max_tokens: 10, system: [null], messages: [user] }, "system[0]"],
      ["/v1/messages", { model: "m", max_tokens: 10, messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "a", content: [null] }] }] }, "messages[0].content[0].content[0]"],
      ["/v1/responses", { model: "m", input: [{ role: "user", content: [null] }] }, "input[0].content[0]"],
      ["/v1/responses", { model: "m", input: [{ type: "function_call_output", call_id: "c", output: [null] }] }, "input[0].output[0]"],
      ["/v1/responses", { model: "m", input: [user, { type: "reasoning", id: "rs" }, { role: "assistant", content: [null] }] }, "input[2].content[0]"],
    ];
    for (const [path, body, param] of cases) {
      const res = await post(path, body);
      expect(res.status, `${path} ${param}`).toBe(400);
      const json = (await res.json()) as { error: { message: string; type: string; param: string } };
      expect(json.error).toMatchObject({ type: "invalid_request_error", param });
      expect(json.error.message).toContain(param);
    }
    expect(r.upstream.requests).toHaveLength(0);
    expect(r.logs.filter((l) => l.event === "internal_error" || l.event === "store_error")).toEqual([]);
  });

  it("refuses JSON nested deeper than it can handle with 400, in every API (not 500, not 503 store_unavailable)", async () => {
    r = await rig();
    // 5,000 levels: JSON.parse takes them, but the proxy's own serializing, hashing and counting overflowed the stack.
    const deep = "[".repeat(5000) + "1" + "]".repeat(5000);
    const user = '{"role":"user","content":"hi"}';
    const cases: [string, string][] = [
      ["/v1/chat/completions", `{"model":"m","stream":true,"messages":[${user}],"metadata":${deep}}`],
      ["/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"hi","x":${deep}}]}]}`],
      ["/v1/chat/completions", `{"model":"m","messages":[${user}],"tools":[{"type":"function","function":{"name":"f","parameters":${deep}}}]}`],
      ["/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":[{"type":"text","text":"hi","x":${deep}}]}]}`],
      ["/v1/responses", `{"model":"m","input":[{"role":"user","content":[{"type":"input_text","text":"hi","x":${deep}}]}]}`],
    ];
    for (const [path, body] of cases) {
      const res = await fetch(`${r.proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k" }, body });
      // Before: 500 internal_error, 503 store_unavailable (a balancer retries that elsewhere), or 200 with the record left unwritten.
      expect(res.status, path).toBe(400);
      const json = (await res.json()) as { error: { message: string; type: string } };
      expect(json.error.type).toBe("invalid_request_error");
      expect(json.error.message).toContain("nested");
    }
    // Strings holding brackets, and a depth real schemas reach, are no nesting.
    const fine = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"model":"m","messages":[{"role":"user","content":"${"[{\\\"".repeat(3000)}"}],"metadata":${"[".repeat(100)}1${"]".repeat(100)}}` });
    expect(fine.status).toBe(200);
    expect(r.upstream.requests).toHaveLength(1);
    expect(r.logs.filter((l) => l.event === "internal_error" || l.event === "store_error")).toEqual([]);
  });

  it("refuses bodies over the size limit with 413", async () => {
    r = await rig({ config: { maxBodyBytes: 4096 } });
    const e = await failure(r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "x".repeat(10_000) }] }));
    expect(e.status).toBe(413);
    expect(e.message).toContain("larger than the limit of 4096 bytes");
    expect(r.upstream.requests).toHaveLength(0);
    // The proxy still serves the next request.
    const ok = await ask(r.client);
    expect(ok.choices[0].message.content).toContain("hi");
  });

  it("answers a body announced over the limit with 413 before the client sends it, when the client waits for 100-continue", async () => {
    r = await rig({ config: { maxBodyBytes: 4096 } });
    const head = (length: number) => `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: ${length}\r\n\r\n`;
    const firstLine = async (length: number) => {
      const socket = connect(r?.proxy.port ?? 0, "127.0.0.1");
      let got = "";
      socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
      socket.write(head(length));
      await expect.poll(() => got.includes("\r\n")).toBe(true);
      socket.destroy();
      return got.slice(0, got.indexOf("\r\n"));
    };
    // Before: "HTTP/1.1 100 Continue", so the client sent its gigabyte, to be refused after.
    expect(await firstLine(1_000_000_000)).toBe("HTTP/1.1 413 Payload Too Large");
    // A body within the limit is still asked for.
    expect(await firstLine(100)).toBe("HTTP/1.1 100 Continue");
  });

  it("closes the connection after a 413 for a body over the limit, on /v1 and the admin routes alike, rather than read the rest", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: { maxBodyBytes: 4096 } });
    for (const path of ["/v1/chat/completions", "/ext/context_compaction/config", "/ext/context_compaction/keys"]) {
      const socket = connect(r.proxy.port, "127.0.0.1");
      let got = "";
      socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
      const closed = new Promise((resolve) => socket.on("close", resolve));
      // Announced over the limit, and none of it sent: the proxy must not wait for it.
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer admin\r\nContent-Type: application/json\r\nContent-Length: 1000000000\r\n\r\n`);
      await expect.poll(() => got.includes("\r\n\r\n")).toBe(true);
      expect(got.slice(0, got.indexOf("\r\n")), path).toBe("HTTP/1.1 413 Payload Too Large");
      // Before: the admin routes answered keep-alive and went on reading the gigabyte announced.
      expect(got.toLowerCase(), path).toContain("\r\nconnection: close\r\n");
      await closed;
      expect(got, path).toContain("larger than the limit of 4096 bytes");
    }
  });

  it("answers a chunked body with 413 as soon as it passes the limit, not when it ends (or at requestBodyTimeoutMs when it never does)", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: { maxBodyBytes: 4096, requestBodyTimeoutMs: 600_000 } });
    for (const path of ["/v1/chat/completions", "/v1/embeddings", "/ext/context_compaction/config"]) {
      const socket = connect(r.proxy.port, "127.0.0.1");
      let got = "";
      socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
      const closed = new Promise((resolve) => socket.on("close", resolve));
      // 10,000 bytes in one chunk, and no last chunk: the body never ends.
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer admin\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n2710\r\n${"x".repeat(10_000)}\r\n`);
      // Before: nothing until the body timeout (here ten minutes; the test's own timeout is the safety net).
      await expect.poll(() => got.includes("\r\n\r\n"), { timeout: 20_000 }).toBe(true);
      expect(got.slice(0, got.indexOf("\r\n")), path).toBe("HTTP/1.1 413 Payload Too Large");
      await closed;
    }
    expect(r.upstream.requests).toHaveLength(0);
  }, 60_000);

  it("refuses a body sent with a transfer coding other than chunked (gzip, chunked) with 501, rather than forward its coded bytes as the body", async () => {
    r = await rig({ proxy: { adminToken: "admin" } });
    const json = JSON.stringify({ model: "fake-model", input: "hello", messages: [{ role: "user", content: "hello" }] });
    const gz = gzipSync(json);
    for (const path of ["/v1/embeddings", "/v1/chat/completions", "/ext/context_compaction/config"]) {
      const socket = connect(r.proxy.port, "127.0.0.1");
      let got = "";
      socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
      const closed = new Promise((resolve) => socket.on("close", resolve));
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer admin\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n`);
      socket.write(Buffer.concat([Buffer.from(`${gz.length.toString(16)}\r\n`), gz, Buffer.from("\r\n0\r\n\r\n")]));
      await closed;
      // Before: the gzip bytes went upstream as the body, with no coding said (404 from the fake), a 400 "not valid JSON" on chat.
      expect(got.slice(0, got.indexOf("\r\n")), path).toBe("HTTP/1.1 501 Not Implemented");
      expect(got, path).toContain('"code":"unsupported_transfer_encoding"');
    }
    expect(r.upstream.requests).toHaveLength(0);
    // chunked alone (and identity before it) is read as ever.
    for (const te of ["chunked", "identity, chunked"]) {
      const socket = connect(r.proxy.port, "127.0.0.1");
      let got = "";
      socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
      const closed = new Promise((resolve) => socket.on("close", resolve));
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nTransfer-Encoding: ${te}\r\n\r\n${Buffer.byteLength(json).toString(16)}\r\n${json}\r\n0\r\n\r\n`);
      await closed;
      expect(got.slice(0, got.indexOf("\r\n")), te).toBe("HTTP/1.1 200 OK");
    }
  });

  it("takes a client that leaves in the middle of its request body for what it is, not an internal error", async () => {
    r = await rig({ proxy: { adminToken: "admin" } });
    for (const [path, auth] of [["/v1/chat/completions", ""], ["/ext/context_compaction/config", "Authorization: Bearer admin\r\n"]]) {
      const socket = connect(r.proxy.port, "127.0.0.1");
      await new Promise((resolve) => socket.on("connect", resolve));
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"model":`);
      await expect.poll(() => r?.proxy.context.life.inFlight).toBe(1);
      socket.destroy();
      await expect.poll(() => r?.proxy.context.life.inFlight).toBe(0);
    }
    await new Promise((resolve) => setImmediate(resolve));
    // Before: each logged internal_error ("aborted"), the event that means a bug in the proxy.
    expect(r.logs.filter((l) => l.event === "internal_error")).toEqual([]);
    expect(r.upstream.requests).toHaveLength(0);
  });

  it("answers a request body that does not arrive within requestBodyTimeoutMs with 408 and frees its slot", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: { requestBodyTimeoutMs: 200 } });
    for (const [path, auth, framing] of [
      ["/v1/chat/completions", "", "Transfer-Encoding: chunked\r\n\r\n9\r\n{\"model\":\r\n"],
      ["/v1/embeddings", "", "Content-Length: 1000\r\n\r\n{\"input\":"],
      ["/ext/context_compaction/config", "Authorization: Bearer admin\r\n", "Content-Length: 1000\r\n\r\n{\"a\":"],
    ]) {
      const socket = connect(r.proxy.port, "127.0.0.1");
      let got = "";
      socket.on("data", (d: Buffer) => (got += d.toString("latin1")));
      const closed = new Promise((resolve) => socket.on("close", resolve));
      await new Promise((resolve) => socket.on("connect", resolve));
      // Headers and part of the body, then nothing: before, the slot was held until Node's 300 s requestTimeout.
      socket.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}Content-Type: application/json\r\n${framing}`);
      await closed;
      expect(got.slice(0, got.indexOf("\r\n"))).toBe("HTTP/1.1 408 Request Timeout");
      expect(got).toContain('"code":"request_body_timeout"');
      await expect.poll(() => r?.proxy.context.life.inFlight).toBe(0);
    }
    expect(r.upstream.requests).toHaveLength(0);
    // The proxy still serves the next request.
    expect((await ask(r.client)).choices[0].message.content).toContain("hi");
  }, 20_000);

  it("lets Node's own request timeout follow requestBodyTimeoutMs, so a body allowed longer than 300 s is not cut by Node first", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: { requestBodyTimeoutMs: 600_000 } });
    const port = r.proxy.port;
    // The proxy's own server, found among the process's handles.
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
    const server = handles.find((h): h is http.Server => h instanceof http.Server && (h.address() as AddressInfo | null)?.port === port);
    expect(server).toBeDefined();
    // Before: 300,000, Node's default, which cut a body still within the proxy's 600,000 ms.
    expect(server?.requestTimeout).toBe((server?.headersTimeout ?? 0) + 600_000);
    // An update applies from the next request on.
    const update = await fetch(`${r.proxy.url}/ext/context_compaction/config`, { method: "POST", headers: { authorization: "Bearer admin", "content-type": "application/json" }, body: JSON.stringify({ requestBodyTimeoutMs: 2000 }) });
    expect(update.status).toBe(200);
    await ask(r.client);
    expect(server?.requestTimeout).toBe((server?.headersTimeout ?? 0) + 2000);
  });

  // A client that goes away while the upstream is slow to answer (before its headers) or while the
  // body is read (headers, then nothing): nothing is wrong with the upstream. Before, the first
  // counted it unreachable, the second an upstream timeout.
  it.each([
    ["before the reply's headers", "slow:2000", "unreachable"],
    ["in the middle of a whole reply", "headers-then-hang", "timeout"],
  ])("stops the upstream request when the client goes away %s, and does not count it as the upstream's fault", async (_when, mode, kind) => {
    r = await rig();
    const ctl = new AbortController();
    const pending = fetch(`${r.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-fake-mode": mode },
      body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "slow" }] }),
      signal: ctl.signal,
    }).catch((e: unknown) => e);
    await expect.poll(() => r?.upstream.requests.length, { timeout: 2000 }).toBe(1);
    ctl.abort();
    await pending;
    await expect.poll(() => r?.upstream.abandoned, { timeout: 2000 }).toBe(1);
    await expect.poll(() => r?.proxy.context.metrics.get("ptc_proxy_requests_total", 'route="chat",status="none"'), { timeout: 2000 }).toBe(1);
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_errors_total", `kind="${kind}"`)).toBe(0);
  });

  it("stops the upstream stream when the client leaves it, and does not count that as the upstream's fault", async () => {
    r = await rig();
    const gone = new AbortController();
    const stream = await r.client.chat.completions.create({ model: "fake-model", stream: true, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-fake-mode": "hold" }, signal: gone.signal });
    for await (const _ of stream) break;
    gone.abort();
    await expect.poll(() => r?.upstream.abandoned, { timeout: 2000 }).toBe(1);
    await expect.poll(() => r?.proxy.context.metrics.get("ptc_proxy_requests_total", 'route="chat",status="2xx"'), { timeout: 2000 }).toBe(1);
    // Before: every stream a user stopped counted as an upstream stream cut.
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_errors_total", 'kind="stream_cut"')).toBe(0);
  });

  it("stops the upstream request of any other path when the client goes away, before or during the reply", async () => {
    r = await rig();
    for (const [mode, sent] of [["hang", 1], ["headers-then-hang", 2]] as const) {
      const ctl = new AbortController();
      const pending = fetch(`${r.proxy.url}/v1/completions`, { method: "POST", headers: { "content-type": "application/json", "x-fake-mode": mode }, body: '{"model":"fake-model","prompt":"hi","stream":true}', signal: ctl.signal })
        .then((res) => res.body?.getReader().read())
        .catch((e: unknown) => e);
      await expect.poll(() => r?.upstream.requests.length, { timeout: 2000 }).toBe(sent);
      if (mode === "headers-then-hang") await pending;
      ctl.abort();
      await pending;
      // Before: the upstream went on answering nobody, its connection held until upstreamTimeoutMs.
      await expect.poll(() => r?.upstream.abandoned, { timeout: 2000 }).toBe(sent);
    }
  });

  it("cuts the reply of any other path when the upstream breaks off in the middle of it, instead of leaving the client waiting", async () => {
    r = await rig();
    const res = await fetch(`${r.proxy.url}/v1/completions`, { method: "POST", headers: { "content-type": "application/json", "x-fake-mode": "headers-then-cut" }, body: '{"model":"fake-model","prompt":"hi","stream":true}' });
    expect(res.status).toBe(200);
    const body = res.text().then(
      () => "ended",
      () => "cut",
    );
    // Before: the reply stayed open with no end (the client waited for its own timeout) and the request in flight, holding up a drain.
    await expect.poll(() => r?.proxy.context.life.inFlight, { timeout: 5000 }).toBe(0);
    expect(await body).toBe("cut");
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_errors_total", 'kind="stream_cut"')).toBe(1);
  });

  it("answers an error reply the upstream broke off as an upstream error on every path, not an internal one", async () => {
    r = await rig();
    for (const path of ["/v1/completions", "/v1/chat/completions"]) {
      const res = await fetch(`${r.proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-fake-mode": "error-then-cut" }, body: '{"model":"fake-model","prompt":"hi","messages":[{"role":"user","content":"hi"}]}' });
      // Before, on /v1/completions: 500 internal_error, and the log event that means a bug in the proxy.
      expect(res.status, path).toBe(500);
      expect(((await res.json()) as { error: { type: string } }).error.type).toBe("upstream_error");
    }
    expect(r.logs.filter((l) => l.event === "internal_error")).toEqual([]);
  });

  // "cut-mid-event": before, the half event reached the client, whose SDK failed on it with a JSON SyntaxError.
  it.each(["cut", "cut-mid-event"])("ends a stream the upstream broke off (%s) with an error event the client raises, never half an event", async (mode) => {
    r = await rig();
    const stream = await r.client.chat.completions.create({ model: "fake-model", stream: true, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-fake-mode": mode } });
    let text = "";
    const e = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
    })().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(text).toBe("partial ");
    expect(e).toBeInstanceOf(OpenAI.APIError);
    expect((e as Error).message).toContain("upstream stream broke off");
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_errors_total", 'kind="stream_cut"')).toBe(1);
  });
});
