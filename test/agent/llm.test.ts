// openaiLlm against a fake OpenAI-compatible server on 127.0.0.1: real HTTP, real SDK.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { LlmError, openaiLlm, recordingLlm, replayLlm, type ChatMessage, type OpenAiLlmOptions, type RetryInfo } from "../../src/llm/index.js";
import { localServer } from "../support/local-server.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { aiSdkLlm } from "../../src/llm/ai-sdk.js";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";

/** What the fake server does with one request. */
type Behaviour =
  | { reply: string; usage?: Record<string, unknown>; model?: string }
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { json: unknown }
  | { raw: string; contentType?: string; status?: number }
  | { hang: "headers" | "body" };

interface Received {
  url: string;
  headers: IncomingMessage["headers"];
  body: { model: string; messages: ChatMessage[]; temperature?: number; max_tokens?: number };
}

let baseURL: string;
let script: Behaviour[] = [];
let received: Received[] = [];

function completion(content: string, usage?: Record<string, unknown>, model = "fake-model") {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 0,
    model,
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    ...(usage ? { usage } : {}),
  };
}

function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
  if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
    return;
  }
  received.push({ url: req.url, headers: req.headers, body: JSON.parse(text) as Received["body"] });
  const b = script.shift() ?? { status: 500, body: { error: { message: "fake server: script exhausted" } } };
  if ("reply" in b) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(completion(b.reply, b.usage, b.model)));
  } else if ("raw" in b) {
    res.writeHead(b.status ?? 200, { "content-type": b.contentType ?? "application/json" }).end(b.raw);
  } else if ("status" in b) {
    res.writeHead(b.status, { "content-type": "application/json", ...b.headers }).end(JSON.stringify(b.body ?? { error: { message: `fake failure ${b.status}` } }));
  } else if ("json" in b) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(b.json));
  } else if (b.hang === "body") {
    res.writeHead(200, { "content-type": "application/json" });
    res.write('{"id":"chatcmpl-1","choices":[');
  }
  // hang === "headers": never answer; the client's timeout or abort must end it.
}

localServer(handle, {
  listening: (origin) => (baseURL = `${origin}/v1`),
  reset: () => {
    script = [];
    received = [];
  },
});

const messages: ChatMessage[] = [
  { role: "system", content: "You write PTC-Lisp." },
  { role: "user", content: "Count the orders." },
];

const client = (o: OpenAiLlmOptions = {}) => openaiLlm({ model: "fake-model", baseURL, apiKey: "sk-test", retryBaseMs: 10, env: {}, ...o });


describe("openaiLlm: requests and replies", () => {
  it("sends the model, messages and sampling options, and maps the reply and usage", async () => {
    script = [{ reply: "```clojure\n(count data/orders)\n```", usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129, prompt_tokens_details: { cached_tokens: 64 } }, model: "fake-model-2026" }];
    const llm = client({ temperature: 0.2, maxTokens: 500 });
    const r = await llm.complete({ messages, turn: 1 });
    expect(r).toEqual({ content: "```clojure\n(count data/orders)\n```", usage: { inputTokens: 120, outputTokens: 9, cachedTokens: 64 }, model: "fake-model-2026" });
    expect(llm.name).toBe("openai:fake-model");
    expect(received).toHaveLength(1);
    expect(received[0].body).toEqual({ model: "fake-model", messages, temperature: 0.2, max_tokens: 500 });
    expect(received[0].headers.authorization).toBe("Bearer sk-test");
  });

  it("leaves temperature and max_tokens out when not given, and usage undefined when the server reports none", async () => {
    script = [{ reply: "(+ 1 2)" }];
    const r = await client().complete({ messages });
    expect(received[0].body).not.toHaveProperty("temperature");
    expect(received[0].body).not.toHaveProperty("max_tokens");
    expect(r.usage).toBeUndefined();
  });

  it("reads cached tokens under DeepSeek's field name too, and zero when absent", async () => {
    script = [
      { reply: "a", usage: { prompt_tokens: 50, completion_tokens: 2, prompt_cache_hit_tokens: 32 } },
      { reply: "b", usage: { prompt_tokens: 50, completion_tokens: 2 } },
    ];
    const llm = client();
    expect((await llm.complete({ messages })).usage).toEqual({ inputTokens: 50, outputTokens: 2, cachedTokens: 32 });
    expect((await llm.complete({ messages })).usage).toEqual({ inputTokens: 50, outputTokens: 2, cachedTokens: 0 });
  });

  // OpenAI's reasoning models (o-series, gpt-5) refuse max_tokens; servers other than OpenAI's may know only max_tokens.
  it("sends max_completion_tokens instead of max_tokens once the server refuses max_tokens, and keeps to it", async () => {
    const refusal = { status: 400, body: { error: { message: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", type: "invalid_request_error", param: "max_tokens", code: "unsupported_parameter" } } };
    script = [refusal, { reply: "a" }, { reply: "b" }];
    const retries: RetryInfo[] = [];
    const llm = client({ model: "gpt-5-mini", maxTokens: 300, onRetry: (i) => retries.push(i) });
    expect((await llm.complete({ messages })).content).toBe("a");
    expect((await llm.complete({ messages, maxOutputTokens: 40 })).content).toBe("b");
    expect(received.map((r) => [r.body.max_tokens, (r.body as { max_completion_tokens?: number }).max_completion_tokens])).toEqual([[300, undefined], [undefined, 300], [undefined, 40]]);
    expect(retries).toEqual([]);
  });

  it("keeps what one model refused to that model: a request for another model still sends its temperature and max_tokens", async () => {
    const refusal = (param: string) => ({ status: 400, body: { error: { message: `Unsupported parameter: '${param}'`, type: "invalid_request_error", param, code: "unsupported_parameter" } } });
    script = [refusal("temperature"), refusal("max_tokens"), { reply: "a" }, { reply: "b" }, { reply: "c" }];
    const llm = client({ model: "gpt-5-mini", temperature: 0.3, maxTokens: 50 });
    expect((await llm.complete({ messages })).content).toBe("a");
    expect((await llm.complete({ messages, model: "gpt-4o" })).content).toBe("b");
    expect((await llm.complete({ messages })).content).toBe("c");
    const sent = received.map((r) => [r.body.model, r.body.temperature, r.body.max_tokens, (r.body as { max_completion_tokens?: number }).max_completion_tokens]);
    expect(sent.slice(2)).toEqual([
      ["gpt-5-mini", undefined, undefined, 50],
      ["gpt-4o", 0.3, 50, undefined],
      ["gpt-5-mini", undefined, undefined, 50],
    ]);
  });

  it("leaves the temperature out once the server refuses it, and still fails on other refused parameters", async () => {
    const refusal = (param: string, message: string) => ({ status: 400, body: { error: { message, type: "invalid_request_error", param, code: "unsupported_value" } } });
    const tooLarge = { status: 400, body: { error: { message: "max_tokens is too large: 200000.", type: "invalid_request_error", param: "max_tokens", code: "invalid_value" } } };
    script = [refusal("temperature", "Unsupported value: 'temperature' does not support 0.3 with this model. Only the default (1) value is supported."), { reply: "a" }, refusal("messages", "messages: too long"), tooLarge];
    const llm = client({ model: "gpt-5-mini", temperature: 0.3 });
    expect((await llm.complete({ messages })).content).toBe("a");
    expect(received.map((r) => r.body.temperature)).toEqual([0.3, undefined]);
    expect((await failure(llm.complete({ messages }))).message).toMatch(/HTTP 400: messages: too long/);
    expect((await failure(llm.complete({ messages, maxOutputTokens: 200_000 }))).message).toMatch(/HTTP 400: max_tokens is too large/);
    expect(received).toHaveLength(4);
    expect(received[3].body.max_tokens).toBe(200_000);
  });

  it("takes model, base URL and key from the environment", async () => {
    script = [{ reply: "(println 1)" }];
    const llm = openaiLlm({ env: { OPENAI_MODEL: "env-model", OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: "sk-env" } });
    expect(llm.name).toBe("openai:env-model");
    await llm.complete({ messages });
    expect(received[0].body.model).toBe("env-model");
    expect(received[0].headers.authorization).toBe("Bearer sk-env");
  });

  it("rejects a missing model, a missing key without a base URL, and bad numbers, before any request", () => {
    expect(() => openaiLlm({ env: {}, baseURL })).toThrow(/no model given/);
    expect(() => openaiLlm({ env: {}, model: "m" })).toThrow(/no API key/);
    expect(() => openaiLlm({ env: {}, model: "m", baseURL, timeoutMs: 0 })).toThrow(/timeoutMs must be a positive number/);
    expect(() => openaiLlm({ env: {}, model: "m", baseURL, maxRetries: -1 })).toThrow(/maxRetries must be a non-negative number/);
    expect(received).toHaveLength(0);
  });

  // Sent as they were, max_tokens -1 or 1.5 came back as the server's 400 at the first request, and
  // a temperature of NaN went as null (JSON has no NaN), the server's default taken unsaid.
  // aiSdkLlm sent NaN on (the server's default taken unsaid) and failed the rest at every call, as a
  // "malformed" reply the server never gave.
  it("refuses a bad maxTokens or temperature before any request, in every HTTP client", () => {
    const rows: Array<[Record<string, unknown>, string]> = [
      [{ maxTokens: -1 }, "maxTokens must be a positive integer, got -1"],
      [{ maxTokens: 1.5 }, "maxTokens must be a positive integer, got 1.5"],
      [{ maxTokens: "100" }, 'maxTokens must be a positive integer, got "100"'],
      [{ temperature: Number.NaN }, "temperature must be a finite number, got NaN"],
      [{ temperature: "0.2" }, 'temperature must be a finite number, got "0.2"'],
    ];
    for (const [options, message] of rows) {
      expect(() => openaiLlm({ env: {}, model: "m", baseURL, ...options })).toThrow(`openaiLlm: ${message}`);
      expect(() => anthropicLlm({ env: {}, model: "m", apiKey: "k", ...options })).toThrow(`anthropicLlm: ${message}`);
      expect(() => aiSdkLlm({ model: createOpenAICompatible({ name: "fake", baseURL }).chatModel("m"), ...options })).toThrow(new LlmError("config", `aiSdkLlm: ${message}`));
    }
    expect(received).toHaveLength(0);
  });

  // Without its scheme, "localhost:11434/v1" reads as a URL of scheme "localhost:": each request
  // failed as "cannot reach the server (Connection error.)" after every retry, and one that does
  // not parse as "malformed: unexpected failure reading the reply (Invalid URL)".
  it("refuses a base URL that is no http(s) URL before any request, in both HTTP clients, without quoting a password in it", () => {
    const rows: Array<[string, string]> = [
      ["localhost:11434/v1", '"localhost:11434/v1"'],
      ["127.0.0.1:11434/v1", '"127.0.0.1:11434/v1"'],
      ["ftp://example.com/v1", '"ftp://example.com/v1"'],
      ["http://user:secret-pw@bad host/v1", '"http://[redacted]@bad host/v1"'],
    ];
    for (const [url, shown] of rows) {
      for (const [who, make] of [
        ["openaiLlm", () => openaiLlm({ env: {}, model: "m", baseURL: url })],
        ["openaiLlm", () => openaiLlm({ env: { OPENAI_BASE_URL: url }, model: "m" })],
        ["anthropicLlm", () => anthropicLlm({ env: {}, model: "m", apiKey: "k", baseURL: url })],
      ] as const) {
        let error: unknown;
        try {
          make();
        } catch (e) {
          error = e;
        }
        expect(error).toBeInstanceOf(LlmError);
        expect([(error as LlmError).kind, (error as LlmError).message]).toEqual(["config", `${who}: the base URL must be an http:// or https:// URL such as http://localhost:11434/v1, got ${shown}`]);
      }
    }
  });

  it("works without a key against a server that needs none", async () => {
    script = [{ reply: "ok" }];
    const r = await openaiLlm({ env: {}, model: "local", baseURL }).complete({ messages });
    expect(r.content).toBe("ok");
  });
});

describe("openaiLlm: retries", () => {
  it("retries a 429 after the delay the server asks for, then succeeds", async () => {
    script = [{ status: 429, headers: { "retry-after-ms": "150" } }, { reply: "(return 1)" }];
    const retries: RetryInfo[] = [];
    const started = performance.now();
    const r = await client({ onRetry: (i) => retries.push(i) }).complete({ messages });
    expect(r.content).toBe("(return 1)");
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(received).toHaveLength(2);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatchObject({ attempt: 1, delayMs: 150 });
    expect(retries[0].error.kind).toBe("rate_limit");
  });

  // OpenAI answers a used-up quota (no credits, the monthly limit reached) with a 429 of its own
  // code: no wait helps, and retrying it as a rate limit only delayed the failure.
  const QUOTA = { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } };

  it("does not retry a 429 for a used-up quota (insufficient_quota), streamed or not", async () => {
    for (const streamed of [false, true]) {
      script = [{ status: 429, body: QUOTA }, { reply: "never sent" }];
      received = [];
      const e = await failure(client().complete({ messages, ...(streamed ? { onText: () => undefined } : {}) }));
      expect([received.length, e.kind, e.details.status, e.message]).toEqual([1, "http", 429, `openai:fake-model: HTTP 429: ${QUOTA.error.message}`]);
    }
  });

  it("does not retry a used-up quota a gateway sends in a 200's body", async () => {
    script = [{ json: QUOTA }, { reply: "never sent" }];
    const e = await failure(client().complete({ messages }));
    expect([received.length, e.kind, e.message]).toEqual([1, "http", `openai:fake-model: error in the reply: insufficient_quota: ${QUOTA.error.message}`]);
  });

  it("reads retry-after in seconds, and fails at once when it exceeds the cap", async () => {
    script = [{ status: 429, headers: { "retry-after": "30" } }, { reply: "never sent" }];
    const e = await failure(client({ retryMaxMs: 1000 }).complete({ messages }));
    expect(e.kind).toBe("rate_limit");
    expect(e.message).toMatch(/retry after 30 s, beyond the 1 s cap/);
    expect(e.details.status).toBe(429);
    expect(received).toHaveLength(1);
  });

  it("backs off exponentially on 5xx and gives up after maxRetries with the attempt count", async () => {
    script = [{ status: 500 }, { status: 502 }, { status: 503 }];
    const retries: RetryInfo[] = [];
    const e = await failure(client({ maxRetries: 2, retryBaseMs: 40, onRetry: (i) => retries.push(i) }).complete({ messages }));
    expect(e.kind).toBe("server");
    expect(e.details).toMatchObject({ status: 503, attempts: 3 });
    expect(e.message).toMatch(/HTTP 503.*after 3 attempts/);
    expect(received).toHaveLength(3);
    // 40 ms then 80 ms, each with up to 25% jitter taken off.
    expect(retries.map((r) => r.attempt)).toEqual([1, 2]);
    expect(retries[0].delayMs).toBeGreaterThanOrEqual(30);
    expect(retries[0].delayMs).toBeLessThanOrEqual(40);
    expect(retries[1].delayMs).toBeGreaterThanOrEqual(60);
    expect(retries[1].delayMs).toBeLessThanOrEqual(80);
  });

  it("does not retry client errors such as 400 and 401", async () => {
    script = [{ status: 400, body: { error: { message: "messages: too long" } } }];
    const e = await failure(client().complete({ messages }));
    expect(e.kind).toBe("http");
    expect(e.details.status).toBe(400);
    expect(e.message).toMatch(/too long/);
    // The status is said once: "HTTP 400: messages: too long", not "HTTP 400: 400 messages...".
    expect(e.message).toMatch(/HTTP 400: messages: too long/);
    expect(e.message.match(/400/g)).toHaveLength(1);
    expect(received).toHaveLength(1);
  });

  it("says what a gateway's HTML error page is (its title), not the whole page", async () => {
    const style = `<style>${"body{margin:0;padding:0}".repeat(200)}</style>`;
    const page = (title: string) => `<!DOCTYPE html>\n<html lang="en">\n<head><title>${title}</title>${style}</head>\n<body><h1>Bad gateway</h1><p>The web server reported a bad gateway error.</p></body></html>\n`;
    script = [{ raw: page("example.com | 502: Bad gateway"), contentType: "text/html", status: 502 }, { raw: `<html><body>${style}<center><h1>503 Service Temporarily Unavailable</h1></center><hr><center>nginx</center></body></html>`, contentType: "text/html", status: 503 }];
    const retries: RetryInfo[] = [];
    const e = await failure(client({ maxRetries: 1, onRetry: (r) => retries.push(r) }).complete({ messages }));
    expect(retries[0].error.message).toBe("openai:fake-model: HTTP 502: example.com | 502: Bad gateway (an HTML page)");
    expect(e.kind).toBe("server");
    expect(e.message).toBe("openai:fake-model: HTTP 503: 503 Service Temporarily Unavailable nginx (an HTML page) (after 2 attempts)");
  });

  // The SDKs quote a body that is no JSON whole, and a JSON error's message as long as it is: the
  // message goes on to the run's ending, its trace and events, and every retry line at a terminal.
  it("quotes the start of a huge error body, not all of it, cut where no key quoted in it is halved", async () => {
    const words = "upstream failed ".repeat(62_500);
    script = [
      { raw: words, contentType: "text/plain", status: 502 },
      // The key the client sent, quoted across the 1,000th character.
      { status: 400, body: { error: { message: `bad request: ${"x".repeat(980)} sk-secret-0123456789abcdef ${"y".repeat(999_000)}` } } },
    ];
    const retries: RetryInfo[] = [];
    const e = await failure(client({ maxRetries: 0, onRetry: (r) => retries.push(r) }).complete({ messages }));
    expect(e.kind).toBe("server");
    expect(e.message.length).toBeLessThan(1_100);
    expect(e.message).toMatch(/^openai:fake-model: HTTP 502: upstream failed upstream failed .*upstream… \(1,000,000 characters in all\)$/);
    const bad = await failure(client({ maxRetries: 0, apiKey: "sk-secret-0123456789abcdef" }).complete({ messages }));
    expect(bad.kind).toBe("http");
    expect(bad.message).toMatch(/^openai:fake-model: HTTP 400: bad request: x{980}… \(1,000,0\d\d characters in all\)$/);
    expect(bad.message).not.toContain("sk-");
  });

  // A compact JSON body, or a token-like text, has no space to cut at: the cut goes before the
  // word it would halve (a key of no provider's shape is masked only whole) and before an escape.
  it("cuts a long error text with no space in its first 1,000 characters before a word or escape, never through it", async () => {
    const apiKey = "proxy-token-0123456789abcdefghij";
    script = [
      { status: 401, body: { error: { message: `invalid_key:${"x".repeat(985)},${apiKey},${"y".repeat(5_000)}` } } },
      { raw: `${"z".repeat(998)}\\u00e9${"w".repeat(5_000)}`, contentType: "text/plain", status: 400 },
      { raw: "a".repeat(5_000), contentType: "text/plain", status: 400 },
    ];
    const keyed = await failure(client({ maxRetries: 0, apiKey }).complete({ messages }));
    expect(keyed.message).toBe(`openai:fake-model: HTTP 401: invalid_key:${"x".repeat(985)}… (6,031 characters in all)`);
    const escaped = await failure(client({ maxRetries: 0 }).complete({ messages }));
    expect(escaped.message).toBe(`openai:fake-model: HTTP 400: ${"z".repeat(998)}… (6,004 characters in all)`);
    // One word of 5,000 characters (a token, a blob): none of it, which may be a secret.
    const blob = await failure(client({ maxRetries: 0 }).complete({ messages }));
    expect(blob.message).toBe("openai:fake-model: HTTP 400: … (5,000 characters in all)");
  });

  it("masks the API key a server quotes in its error body, in the error, its retries and a run's trace and events", async () => {
    const apiKey = "sk-live-quoted-0123456789";
    const body = { error: { message: `Incorrect API key provided: ${apiKey}` } };
    script = [{ status: 500, body }, { status: 401, body }];
    const retries: RetryInfo[] = [];
    const e = await failure(client({ apiKey, maxRetries: 1, onRetry: (r) => retries.push(r) }).complete({ messages }));
    expect(e.kind).toBe("http");
    expect(e.message).toMatch(/Incorrect API key provided: \[api key\]/);
    expect(retries[0].error.message).not.toContain(apiKey);

    script = [{ status: 401, body }];
    const events: unknown[] = [];
    const step = await SubAgent.run(SubAgent.create({ prompt: "Say hi" }), { llm: client({ apiKey }), onEvent: (ev) => events.push(ev) });
    expect(step.ok).toBe(false);
    expect(JSON.stringify(step)).toContain("[api key]");
    expect(JSON.stringify([step, events])).not.toContain(apiKey);
  });

  it("masks a key with whitespace around it (a trailing newline from a secret file) as the server received and quotes it, in both HTTP clients", async () => {
    // fetch trims a header value, so the server sees and quotes the key without the whitespace.
    const echo = createServer((req, res) => {
      req.resume();
      const auth = String(req.headers.authorization ?? req.headers["x-api-key"]);
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "authentication_error", message: `Incorrect API key provided: ${auth}` } }));
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    try {
      for (const apiKey of ["sk-live-newline-0123456789\n", "sk-live-spaced-0123456789 ", " sk-live-crlf-0123456789\r\n"]) {
        for (const llm of [openaiLlm({ model: "m", baseURL: `${url}/v1`, apiKey, maxRetries: 0, env: {} }), anthropicLlm({ model: "m", baseURL: url, apiKey, maxRetries: 0, env: {} })]) {
          const e = await failure(llm.complete({ messages }));
          expect(e.message).toMatch(/Incorrect API key provided: Bearer +\[api key\]/);
          expect(e.message).not.toContain(apiKey.trim());
        }
      }
    } finally {
      await new Promise<void>((resolve) => echo.close(() => resolve()));
    }
  });

  // Node reads at most 16 KB of headers: a reply past that (a proxy's cookies) was "cannot reach
  // the server", retried as a connection error, though the server answered and would again.
  it("says a reply whose headers are larger than Node reads is such, not a server it cannot reach, and does not retry it", async () => {
    let hits = 0;
    const big = createServer((req, res) => {
      hits++;
      req.resume();
      res.writeHead(200, { "content-type": "application/json", "set-cookie": "a".repeat(70_000) }).end("{}");
    });
    await new Promise<void>((resolve) => big.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(big.address() as AddressInfo).port}`;
    try {
      const aiSdk = aiSdkLlm({ model: createOpenAICompatible({ name: "fake", baseURL: `${url}/v1`, apiKey: "sk-test" }).chatModel("m"), maxRetries: 2, retryBaseMs: 1 });
      for (const llm of [openaiLlm({ model: "m", baseURL: `${url}/v1`, apiKey: "sk-test", maxRetries: 2, retryBaseMs: 1, env: {} }), anthropicLlm({ model: "m", baseURL: url, apiKey: "sk-test", maxRetries: 2, retryBaseMs: 1, env: {} }), aiSdk]) {
        hits = 0;
        const e = await failure(llm.complete({ messages }));
        expect(e.kind).toBe("malformed");
        expect(e.message).toMatch(/: the reply's headers are larger than Node\.js reads \(--max-http-header-size\)$/);
        expect(hits).toBe(1);
      }
    } finally {
      await new Promise<void>((resolve) => big.close(() => resolve()));
    }
  });

  it("reports a server it cannot reach as a connection error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e = await failure(client({ baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 1 }).complete({ messages }));
    expect(e.kind).toBe("connection");
    expect(e.details.attempts).toBe(2);
  });
});

describe("openaiLlm: timeouts and abort", () => {
  it("times out a server that never answers, retrying once", async () => {
    script = [{ hang: "headers" }, { hang: "headers" }];
    const started = performance.now();
    const retries: RetryInfo[] = [];
    const e = await failure(client({ timeoutMs: 150, maxRetries: 1, onRetry: (i) => retries.push(i) }).complete({ messages }));
    const elapsed = performance.now() - started;
    expect(e.kind).toBe("timeout");
    expect(e.message).toMatch(/no reply within 150 ms.*after 2 attempts/);
    // Two attempts; on a loaded machine the second may time out before the server has read it.
    expect(retries.map((r) => r.attempt)).toEqual([1]);
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(received.length).toBeLessThanOrEqual(2);
    // Two waits of 150 ms at least (a loaded machine only adds to it; vitest's timeout catches a hang).
    expect(elapsed).toBeGreaterThanOrEqual(290);
  });

  it("times out a reply whose body stops half-way", async () => {
    script = [{ hang: "body" }];
    const e = await failure(client({ timeoutMs: 300, maxRetries: 0 }).complete({ messages }));
    expect(e.kind, e.message).toBe("timeout");
  });

  it("aborts an in-flight request when the signal fires, without retrying", async () => {
    script = [{ hang: "headers" }, { reply: "never sent" }];
    const ctl = new AbortController();
    // Abort once the server holds the request, however long a loaded machine takes to send it.
    const poll = setInterval(() => {
      if (received.length > 0) {
        clearInterval(poll);
        ctl.abort();
      }
    }, 5);
    // Not timed: a request the abort missed would end at its timeout, as "timeout".
    const e = await failure(client({ timeoutMs: 10_000 }).complete({ messages, signal: ctl.signal }));
    expect(e.kind).toBe("aborted");
    expect(received).toHaveLength(1);
  });

  it("aborts during a backoff wait", async () => {
    script = [{ status: 429, headers: { "retry-after-ms": "5000" } }, { reply: "never sent" }];
    const ctl = new AbortController();
    const e = await failure(client({ onRetry: () => setTimeout(() => ctl.abort(), 30) }).complete({ messages, signal: ctl.signal }));
    expect(e.kind).toBe("aborted");
    expect(received).toHaveLength(1);
  });

  it("does not send anything when the signal has already fired", async () => {
    const ctl = new AbortController();
    ctl.abort();
    const e = await failure(client().complete({ messages, signal: ctl.signal }));
    expect(e.kind).toBe("aborted");
    expect(received).toHaveLength(0);
  });
});

describe("openaiLlm: content as a list of chunks", () => {
  // Mistral's reasoning models answer with content as chunks: the thinking, then the text.
  it("takes the text chunks of a reply whose content is a list, leaving the thinking out", async () => {
    const content = [{ type: "thinking", thinking: [{ type: "text", text: "Count them." }] }, { type: "text", text: "(count " }, { type: "text", text: "data/orders)" }];
    script = [{ json: { id: "x", object: "chat.completion", model: "mistral-medium", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] } }];
    expect((await client().complete({ messages })).content).toBe("(count data/orders)");
  });
});

describe("openaiLlm: malformed replies", () => {
  it("reports a body that is not JSON", async () => {
    script = [{ raw: '{"id": "chatcmpl-1", "choices": [' }];
    const e = await failure(client().complete({ messages }));
    expect(e.kind).toBe("malformed");
    expect(e.message).toMatch(/not valid JSON/);
  });

  it("reports a reply that is plain text", async () => {
    script = [{ raw: "Service temporarily unavailable", contentType: "text/plain" }];
    const e = await failure(client().complete({ messages }));
    expect(e.kind).toBe("malformed");
    expect(e.message).toMatch(/not a chat completion.*Service temporarily/);
  });

  it("reports a reply with no choices", async () => {
    script = [{ json: { id: "x", object: "chat.completion", choices: [] } }];
    const e = await failure(client().complete({ messages }));
    expect(e.kind).toBe("malformed");
    expect(e.message).toMatch(/no choices/);
  });

  // The prompt was read and billed: the run's totals count it, as for a reply with no text.
  it("keeps the usage of a reply with no choices, streamed or not", async () => {
    const usage = { prompt_tokens: 900, completion_tokens: 0 };
    for (const streamed of [false, true]) {
      script = [{ json: { id: "x", object: "chat.completion", choices: [], usage } }];
      const e = await failure(client().complete({ messages, ...(streamed ? { onText: () => undefined } : {}) }));
      expect([e.kind, e.message, e.details.usage]).toEqual(["malformed", "openai:fake-model: the reply has no choices", { inputTokens: 900, outputTokens: 0, cachedTokens: 0 }]);
    }
  });

  // OpenRouter commits its 200 before the provider runs: a later failure rides the body, at the top
  // or in the choice (finish_reason "error"), its code the status it would have had.
  it("reads an error sent in a 200's body: says it, retries what a retry can help, and not a bad request", async () => {
    const retries: RetryInfo[] = [];
    script = [
      { json: { error: { message: "Rate limit exceeded: free-models-per-min", code: 429 } } },
      { json: { id: "x", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "error", error: { message: "Provider disconnected", code: 502 } }] } },
      { reply: "(count data/orders)" },
      { json: { error: { message: "No endpoints found that support image input", code: 404 } } },
    ];
    const llm = client({ onRetry: (i) => retries.push(i) });
    expect((await llm.complete({ messages })).content).toBe("(count data/orders)");
    expect(retries.map((i) => [i.error.kind, i.error.message])).toEqual([
      ["rate_limit", "openai:fake-model: error in the reply: Rate limit exceeded: free-models-per-min"],
      ["server", "openai:fake-model: error in the reply: Provider disconnected"],
    ]);
    const e = await failure(llm.complete({ messages }));
    expect([e.kind, e.message, received.length]).toEqual(["http", "openai:fake-model: error in the reply: No endpoints found that support image input", 4]);
  });

  it("reports empty content, with the finish reason or the refusal", async () => {
    script = [
      { json: { choices: [{ index: 0, message: { role: "assistant", content: "" }, finish_reason: "length" }], usage: { prompt_tokens: 900, completion_tokens: 64 } } },
      { json: { choices: [{ index: 0, message: { role: "assistant", content: null, refusal: "I cannot help with that." }, finish_reason: "stop" }] } },
    ];
    const llm = client();
    const e1 = await failure(llm.complete({ messages }));
    expect(e1.kind).toBe("malformed");
    expect(e1.message).toMatch(/no text content \(finish_reason: length\)/);
    // A reply with no text was billed (a reasoning model that spent its limit thinking): its usage travels with the error.
    expect(e1.details.usage).toEqual({ inputTokens: 900, outputTokens: 64, cachedTokens: 0 });
    const e2 = await failure(llm.complete({ messages }));
    expect(e2.message).toMatch(/refused: I cannot help with that/);
    expect(e2.details.usage).toBeUndefined();
  });
});

describe("recording a real client and replaying it", () => {
  const dir = mkdtempSync(join(tmpdir(), "ptc-llm-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("replays an HTTP run exactly, errors included, without the server", async () => {
    const file = join(dir, "run.jsonl");
    script = [{ reply: "(def n 1)", usage: { prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 0 } } }, { status: 400 }];
    const live = recordingLlm(client(), file, { fresh: true });
    const second: ChatMessage[] = [...messages, { role: "assistant", content: "(def n 1)" }, { role: "user", content: "Turn 2 of 5" }];
    const first = await live.complete({ messages, turn: 1 });
    const liveError = await failure(live.complete({ messages: second, turn: 2 }));
    expect(readFileSync(file, "utf8").trim().split("\n")).toHaveLength(2);

    const replay = replayLlm(file);
    expect(await replay.complete({ messages, turn: 1 })).toEqual(first);
    const replayed = await failure(replay.complete({ messages: second, turn: 2 }));
    expect(replayed.kind).toBe(liveError.kind);
    expect(replayed.message).toContain(liveError.message);
    expect(received).toHaveLength(2);
  });
});
