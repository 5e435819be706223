// Whole replies the proxy reads before answering (a chat completion, a message, a response without
// streaming) count against maxInFlightBodyBytes as request bodies do: 6 concurrent 42 MB replies
// under a 1 MiB total were all held whole at once (413 MB of growth). One the total cannot hold is
// passed on as it arrives instead, its usage still read. What is held is read from the proxy's own
// count and the bytes the clients got while the upstream still holds back each reply's last byte.
import { createServer, request, type RequestListener, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startProxy, type RunningProxy } from "../../src/proxy/index.js";
import { openStore } from "../../src/proxy/store.js";
import { hashKey } from "../../src/proxy/tenancy.js";
import { JsonUsageScan } from "../../src/proxy/json-usage.js";
import { usageOf } from "../../src/proxy/reply-usage.js";
import { tempDir } from "./setup.js";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";

let proxy: RunningProxy | undefined;
let upstream: Server | undefined;
afterEach(async () => {
  await proxy?.close();
  const server = upstream;
  if (server !== undefined) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  proxy = undefined;
  upstream = undefined;
});

/** A chat completion of `size` bytes whose usage comes after its long content. */
function completion(size: number): string {
  const head = '{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"';
  const tail = '"},"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":11,"total_tokens":18}}';
  return head + "x".repeat(size - head.length - tail.length) + tail;
}

/**
 * An upstream answering every request with `body` (a JSON reply of `size` bytes) but its last byte,
 * each response pushed to `waiting` for the test to end.
 */
function holdingBack(body: string, size: number, waiting: ServerResponse[]): RequestListener {
  return (req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": String(size) });
      // All but the last byte: no reply can end until the test lets it.
      res.write(body.slice(0, -1));
      waiting.push(res);
    });
  };
}

/** Starts `answer` as the upstream and a proxy before it (maxInFlightBodyBytes `limit`, virtual key ptc-vk-`key`). */
async function start(answer: RequestListener, key: string, limit: number, db?: string): Promise<RunningProxy> {
  const server = createServer(answer);
  upstream = server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const configFile = join(tempDir(), "config.json");
  writeFileSync(configFile, JSON.stringify({ maxInFlightBodyBytes: limit, tenancy: { virtualKeys: { [key]: { keyHash: hashKey(`ptc-vk-${key}`), tokenBudget: 1_000_000 } } } }));
  const started = await startProxy({ upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, port: 0, configFile, ...(db === undefined ? {} : { db }), logger: () => {} });
  proxy = started;
  return started;
}

describe("replies read whole count against maxInFlightBodyBytes", () => {
  it("passes on as they arrive the replies the total cannot hold, reads their usage, and holds at most the total", async () => {
    const size = 4 << 20;
    const body = completion(size);
    const waiting: ServerResponse[] = [];
    const limit = 1 << 20;
    const running = await start(holdingBack(body, size, waiting), "big", limit);
    const port = running.port;
    const clients = 3;
    const received = Array.from({ length: clients }, () => 0);
    const texts: Array<Promise<{ status: number; text: string }>> = [];
    for (let i = 0; i < clients; i++) {
      texts.push(
        new Promise((resolve, reject) => {
          const req = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/chat/completions", headers: { authorization: "Bearer ptc-vk-big", "content-type": "application/json", "x-conversation-id": `c${i}` } }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => {
              received[i] += c.length;
              chunks.push(c);
            });
            res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
          });
          req.on("error", reject);
          req.end(JSON.stringify({ model: "m", messages: [{ role: "user", content: `hi ${i}` }] }));
        }),
      );
    }
    await expect.poll(() => waiting.length, { timeout: 20_000 }).toBe(clients);
    // Each reply is held back by one byte upstream: what the clients have not got yet, the proxy holds.
    // Before: every client got nothing while the proxy held all three whole (12 MB against a total of 1 MiB).
    const sent = clients * (size - 1);
    await expect.poll(() => received.reduce((a, b) => a + b, 0), { timeout: 20_000, interval: 20 }).toBeGreaterThanOrEqual(sent - limit - clients * (256 << 10));
    expect(running.context.bodies.used).toBeLessThanOrEqual(limit + (256 << 10));
    for (const res of waiting) res.end(body.slice(-1));
    const replies = await Promise.all(texts);
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.text).toBe(body);
    }
    // Their usage was read as they passed: 18 tokens each, not the prompt estimate.
    await expect.poll(() => running.context.tenants.spentBy("big"), { timeout: 5000 }).toBe(clients * 18);
    expect(running.context.bodies.used).toBe(0);
  });
});

describe("a reply passed on as it comes, left by its client", () => {
  it("cuts the upstream's reply and charges the prompt", async () => {
    const size = 4 << 20;
    const body = completion(size);
    const waiting: ServerResponse[] = [];
    let abandoned = 0;
    const hold = holdingBack(body, size, waiting);
    const db = join(tempDir(), "proxy.db");
    const running = await start(
      (req, res) => {
        res.on("close", () => {
          if (!res.writableFinished) abandoned++;
        });
        hold(req, res);
      },
      "left",
      1 << 20,
      db,
    );
    const port = running.port;
    const received = [0, 0];
    const requests = [0, 1].map((i) => {
      const req = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/chat/completions", headers: { authorization: "Bearer ptc-vk-left", "content-type": "application/json", "x-conversation-id": `l${i}` } }, (res) => {
        res.on("data", (c: Buffer) => (received[i] += c.length));
        res.on("error", () => {});
      });
      req.on("error", () => {});
      req.end(JSON.stringify({ model: "m", messages: [{ role: "user", content: `hi ${i}` }] }));
      return req;
    });
    await expect.poll(() => waiting.length, { timeout: 20_000 }).toBe(2);
    // One of the two is passed on as it comes (the total cannot hold both): its client leaves midway.
    await expect.poll(() => Math.max(...received), { timeout: 20_000 }).toBeGreaterThan(0);
    const leaver = received[0] > 0 ? 0 : 1;
    requests[leaver].destroy();
    await expect.poll(() => abandoned, { timeout: 20_000 }).toBe(1);
    for (const res of waiting) if (!res.destroyed) res.end(body.slice(-1));
    await expect.poll(() => running.context.life.inFlight, { timeout: 20_000 }).toBe(0);
    // Closing waits for the handlers' charges; the spend is read back from the file, reservations settled.
    await running.close();
    proxy = undefined;
    const store = await openStore(db);
    try {
      // The other reported 18 tokens; the one left is charged its prompt (its usage never came), not nothing.
      expect(await store.spent("left")).toBeGreaterThan(18);
    } finally {
      await store.close();
    }
  });
});

describe("replies read whole and decoded count against maxInFlightBodyBytes", () => {
  it("passes on as the upstream sent it a compressed reply whose decoded copy the total cannot hold, and reads its usage", async () => {
    const size = 4 << 20;
    const body = completion(size);
    const zipped = gzipSync(body);
    const running = await start(
      (req, res) => {
        req.resume();
        // Compressed though the proxy asks for identity, as some servers do.
        req.on("end", () => {
          res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(zipped.length) });
          res.end(zipped);
        });
      },
      "zip",
      1 << 20,
    );
    const port = running.port;
    const replies = await Promise.all(
      [0, 1, 2].map(
        (i) =>
          new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
            const req = request({ host: "127.0.0.1", port, method: "POST", path: "/v1/chat/completions", headers: { authorization: "Bearer ptc-vk-zip", "content-type": "application/json", "x-conversation-id": `z${i}` } }, (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (c: Buffer) => chunks.push(c));
              res.on("end", () => resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(chunks) }));
            });
            req.on("error", reject);
            req.end(JSON.stringify({ model: "m", messages: [{ role: "user", content: `hi ${i}` }] }));
          }),
      ),
    );
    // Each arrives whole, decoded by the proxy when its copy fitted, else as the upstream sent it.
    for (const reply of replies) expect((reply.encoding === "gzip" ? gunzipSync(reply.body) : reply.body).toString("utf8")).toBe(body);
    expect(replies.some((reply) => reply.encoding === "gzip")).toBe(true);
    await expect.poll(() => running.context.tenants.spentBy("zip"), { timeout: 5000 }).toBe(3 * 18);
    expect(running.context.bodies.used).toBe(0);
  });
});

describe("JsonUsageScan: the usage of a JSON reply read in pieces (top level, or in `response`)", () => {
  const usage = { prompt_tokens: 7, completion_tokens: 11 };
  const rows: Array<[string, string, { promptTokens: number; completionTokens: number } | undefined]> = [
    ["chat completion", JSON.stringify({ id: "c", choices: [{ message: { content: 'a "usage": {"prompt_tokens": 1} \\ }' } }], usage }), { promptTokens: 7, completionTokens: 11 }],
    ["usage first, nested usage after", JSON.stringify({ usage, output: [{ usage: { prompt_tokens: 1 } }] }), { promptTokens: 7, completionTokens: 11 }],
    ["anthropic message", JSON.stringify({ content: [{ type: "text", text: "}{" }], usage: { input_tokens: 5, cache_read_input_tokens: 2, output_tokens: 3 } }), { promptTokens: 7, completionTokens: 3 }],
    ["the last usage wins, as in JSON.parse", '{"usage":{"prompt_tokens":1},"x":[1,{"a":"\\"usage\\":"}],"usage" : {"prompt_tokens":2,"completion_tokens":3}}', { promptTokens: 2, completionTokens: 3 }],
    ["a name that only ends in usage", '{"\\"usage":{"prompt_tokens":1},"xusage":{"prompt_tokens":1}}', undefined],
    ["in a parent", JSON.stringify({ response: { output: [{ usage: { prompt_tokens: 1 } }], usage: { input_tokens: 4, output_tokens: 2 } } }), { promptTokens: 4, completionTokens: 2 }],
    ["a null usage beside one in a parent", JSON.stringify({ usage: null, response: { usage: { input_tokens: 4, output_tokens: 2 } } }), { promptTokens: 4, completionTokens: 2 }],
    ["in a member not a parent", JSON.stringify({ other: { usage } }), undefined],
    ["none", JSON.stringify({ data: [{ embedding: [0.1, -2e-3] }] }), undefined],
    ["not an object", JSON.stringify([{ usage }]), undefined],
    ["cut before its end", JSON.stringify({ usage, choices: [] }).slice(0, -1), undefined],
    ["something after its end", `${JSON.stringify({ usage })} x`, undefined],
  ];
  for (const [name, text, expected] of rows) {
    it(`${name}: whole, and a byte at a time`, () => {
      const bytes = Buffer.from(text);
      for (const step of [bytes.length, 1, 3]) {
        const scan = new JsonUsageScan(["response"]);
        for (let i = 0; i < bytes.length; i += step) scan.push(bytes.subarray(i, i + step));
        const json = scan.usageJson();
        const parsed = json === undefined ? undefined : (JSON.parse(json) as { response?: object });
        expect(parsed === undefined ? undefined : usageOf(parsed.response ?? parsed)).toEqual(expected);
      }
    });
  }
});

describe("an unfinished event a stream holds back counts against maxInFlightBodyBytes", () => {
  it("counts what each stream holds, and passes on unfinished the events the total cannot hold", async () => {
    // Each stream sends 600 KB of an event and waits: three held back whole were 1.8 MB under a 1 MiB total, none of it counted.
    const part = `data: {"choices":[{"delta":{"content":"${"x".repeat(600_000)}`;
    const waiting: ServerResponse[] = [];
    const limit = 1 << 20;
    const running = await start(
      (req, res) => {
        req.resume();
        req.on("end", () => {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(part);
          waiting.push(res);
        });
      },
      "sse",
      limit,
    );
    const clients = 3;
    const received = Array.from({ length: clients }, () => 0);
    const done: Array<Promise<string>> = [];
    for (let i = 0; i < clients; i++) {
      done.push(
        new Promise((resolve, reject) => {
          const req = request(`${running.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer ptc-vk-sse" } }, (res) => {
            let text = "";
            res.on("data", (c: Buffer) => {
              received[i] += c.length;
              text += c.toString();
            });
            res.on("end", () => resolve(text));
          });
          req.on("error", reject);
          req.end(JSON.stringify({ model: "m", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: `hi ${i}` }] }));
        }),
      );
    }
    await expect.poll(() => waiting.length, { timeout: 10_000 }).toBe(clients);
    // Every byte the upstream sent is either held (and counted) or on its way to its client.
    await expect.poll(() => running.context.bodies.used + received.reduce((a, b) => a + b, 0), { timeout: 10_000 }).toBeGreaterThanOrEqual(clients * part.length);
    // Before: 0 held counted (only the request bodies), and every client had received nothing.
    expect(running.context.bodies.used).toBeGreaterThanOrEqual(part.length);
    expect(running.context.bodies.used).toBeLessThanOrEqual(limit);
    for (const res of waiting) res.end(`"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3}}\n\ndata: [DONE]\n\n`);
    for (const text of await Promise.all(done)) expect(text).toBe(`${part}"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":2,"completion_tokens":3}}\n\ndata: [DONE]\n\n`);
    await expect.poll(() => running.context.bodies.used, { timeout: 10_000 }).toBe(0);
  });
});

describe("error bodies read before answering count against maxInFlightBodyBytes", () => {
  // The upstream answers the first request of each case with an error body of almost 1 MiB whose
  // last byte it holds back: the proxy holds what it read (to classify a 429, to mask or wrap an
  // error page) while it waits for the rest. Every other request gets a small completion.
  const cases = [
    { name: "a 429 read for insufficient_quota (chat)", path: "/v1/chat/completions", status: 429, type: "application/json" },
    { name: "a 500 error page (chat)", path: "/v1/chat/completions", status: 500, type: "text/html" },
    { name: "a 502 error page (forwarded embeddings)", path: "/v1/embeddings", status: 502, type: "text/html" },
  ];
  for (const c of cases) {
    it(`${c.name}: a concurrent body the total cannot hold beside it is refused`, async () => {
      const size = (1 << 20) - 64;
      const error = c.type === "application/json" ? `{"error":{"type":"rate_limit","message":"${"x".repeat(size - 50)}"}}` : `<html>${"x".repeat(size - 6)}`;
      const waiting: ServerResponse[] = [];
      const server = createServer((req, res) => {
        req.resume();
        req.on("end", () => {
          if (waiting.length === 0 && req.headers["x-first"] === "1") {
            res.writeHead(c.status, { "content-type": c.type, "content-length": String(Buffer.byteLength(error)) });
            res.write(error.slice(0, -1));
            waiting.push(res);
            return;
          }
          res.writeHead(200, { "content-type": "application/json" });
          res.end(completion(300));
        });
      });
      upstream = server;
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const configFile = join(tempDir(), "config.json");
      writeFileSync(configFile, JSON.stringify({ maxInFlightBodyBytes: 1.5 * (1 << 20), retries: { attempts: 0 } }));
      proxy = await startProxy({ upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, port: 0, configFile, logger: () => {} });
      const url = proxy.url;
      const send = (body: string, first: boolean, path = "/v1/chat/completions") =>
        fetch(`${url}${path}`, { method: "POST", headers: { authorization: "Bearer sk-client", "content-type": "application/json", ...(first ? { "x-first": "1" } : {}) }, body });
      const first = send(JSON.stringify({ model: "m", input: "hi", messages: [{ role: "user", content: "hi" }] }), true, c.path);
      await expect.poll(() => waiting.length, { timeout: 10_000 }).toBe(1);
      // A body of 800 KB: beside the error body of almost 1 MiB the proxy holds, past the total of 1.5 MiB.
      const big = JSON.stringify({ model: "m", messages: [{ role: "user", content: "y".repeat(800_000) }] });
      // Sent once the error body is read (else it would be the error body the total refuses, cut to its start).
      await expect.poll(() => proxy?.context.bodies.used, { timeout: 10_000 }).toBeGreaterThanOrEqual(error.length - 1);
      // Before: answered 200 (the error body held outside the total, which the wait above never saw, so it timed out;
      // sent regardless, each of the three cases was answered 200).
      expect((await send(big, false)).status).toBe(503);
      waiting[0].end(error.slice(-1));
      const res = await first;
      expect(res.status).toBe(c.status);
      const text = await res.text();
      expect(text).toContain(c.type === "application/json" ? '"rate_limit"' : "upstream answered HTTP");
      await expect.poll(() => proxy?.context.bodies.used).toBe(0);
    });
  }
  it("an error body the total cannot hold is cut to its start, masked, with the upstream's status, on chat and forwarded paths", async () => {
    const key = "sk-upstream-secret-42-abcdefghijklmnop";
    const page = `bad key ${key} ${"x".repeat(400_000)} again ${key}`;
    const server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(401, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(page)) });
        res.end(page);
      });
    });
    upstream = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const configFile = join(tempDir(), "config.json");
    writeFileSync(configFile, JSON.stringify({ maxBodyBytes: 1 << 20, maxInFlightBodyBytes: 1 << 20, retries: { attempts: 0 }, tenancy: { virtualKeys: { team: { keyHash: hashKey("ptc-vk-team"), upstreamKey: key } } } }));
    const running = await startProxy({ upstream: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, port: 0, configFile, logger: () => {} });
    proxy = running;
    // A slow sender holds 900 KB of the 1 MiB total: the error bodies below fit only in part.
    const slow = request({ host: "127.0.0.1", port: running.port, method: "POST", path: "/v1/chat/completions", headers: { authorization: "Bearer sk-other", "content-type": "application/json", "content-length": "950000" } });
    slow.on("error", () => {});
    slow.write("x".repeat(900_000));
    await expect.poll(() => running.context.bodies.used, { timeout: 10_000 }).toBe(900_000);
    for (const path of ["/v1/chat/completions", "/v1/embeddings"]) {
      const res = await fetch(`${running.url}${path}`, { method: "POST", headers: { authorization: "Bearer ptc-vk-team", "content-type": "application/json" }, body: JSON.stringify({ model: "m", input: "hi", messages: [{ role: "user", content: "hi" }] }) });
      const text = await res.text();
      expect(res.status, path).toBe(401);
      expect(text, path).toContain("upstream answered HTTP 401: bad key [api key]");
      expect(text, path).not.toContain("sk-upstream");
    }
    slow.destroy();
    await expect.poll(() => running.context.bodies.used).toBe(0);
  });
});
