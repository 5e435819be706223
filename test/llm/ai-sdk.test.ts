// aiSdkLlm with a real AI SDK provider (@ai-sdk/openai-compatible) pointed at a fake server on
// 127.0.0.1, and with the AI SDK's mock model for what the provider receives.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createGateway, extractReasoningMiddleware, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it, vi } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { aiSdkLlm } from "../../src/llm/ai-sdk.js";
import type { ChatMessage } from "../../src/llm/types.js";
import type { RetryInfo } from "../../src/llm/retry.js";
import { localServer } from "../support/local-server.js";
import { SubAgent } from "../../src/agent/subagent.js";

type Behaviour = { reply: string; usage?: Record<string, unknown> } | { stream: string[] } | { status: number; headers?: Record<string, string>; body?: unknown } | { status: number; page: string } | { hang: true };

let baseURL: string;
let script: Behaviour[] = [];
let received: Array<{ headers: IncomingMessage["headers"]; body: { model: string; messages: unknown[]; max_tokens?: number; temperature?: number } }> = [];

function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
  received.push({ headers: req.headers, body: JSON.parse(text) as (typeof received)[number]["body"] });
  const b = script.shift() ?? { status: 500 };
  if ("reply" in b) {
    const usage = b.usage ?? { prompt_tokens: 10, completion_tokens: 2 };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "c1", object: "chat.completion", created: 0, model: "fake-served", choices: [{ index: 0, message: { role: "assistant", content: b.reply }, finish_reason: "stop" }], usage }));
  } else if ("stream" in b) {
    // No usage chunk: the server was not asked for one (stream_options), as providers made without includeUsage.
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-served", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { "content-type": "text/event-stream" }).end([...b.stream.map((p) => chunk({ content: p })), chunk({}, "stop"), "data: [DONE]\n\n"].join(""));
  } else if ("page" in b) {
    res.writeHead(b.status, { "content-type": "text/html; charset=utf-8" }).end(b.page);
  } else if ("status" in b) {
    res.writeHead(b.status, { "content-type": "application/json", ...b.headers }).end(JSON.stringify(b.body ?? { error: { message: `fake failure ${b.status}` } }));
  }
}

localServer(handle, {
  listening: (origin) => (baseURL = `${origin}/v1`),
  reset: () => {
    script = [];
    received = [];
  },
});

const provider = () => createOpenAICompatible({ name: "fake", baseURL, apiKey: "sk-fake" });
const messages: ChatMessage[] = [
  { role: "system", content: "You write PTC-Lisp." },
  { role: "user", content: "Count the orders." },
  { role: "assistant", content: "(count data/orders)" },
  { role: "user", content: "3" },
];

describe("aiSdkLlm over a real provider and a fake server", () => {
  it("sends the conversation through the provider and maps the reply and cached tokens", async () => {
    script = [{ reply: "```clojure\n(return 3)\n```", usage: { prompt_tokens: 120, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 64 } } }];
    const llm = aiSdkLlm({ model: provider().chatModel("fake-model"), temperature: 0.1, maxTokens: 300 });
    expect(llm.name).toBe("ai-sdk:fake.chat:fake-model");
    const r = await llm.complete({ messages, turn: 1 });
    expect(r).toEqual({ content: "```clojure\n(return 3)\n```", usage: { inputTokens: 120, outputTokens: 9, cachedTokens: 64 }, model: "fake-served" });
    const { headers, body } = received[0];
    expect(headers.authorization).toBe("Bearer sk-fake");
    expect(body).toMatchObject({ model: "fake-model", max_tokens: 300, temperature: 0.1 });
    expect(body.messages).toEqual([
      { role: "system", content: "You write PTC-Lisp." },
      { role: "user", content: "Count the orders." },
      { role: "assistant", content: "(count data/orders)" },
      { role: "user", content: "3" },
    ]);
  });

  it("passes tool calls and their results through in the provider's wire shape", async () => {
    script = [{ reply: "ok" }];
    await aiSdkLlm({ model: provider().chatModel("m") }).complete({
      messages: [
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: "rain" },
      ],
    });
    expect(received[0].body.messages).toMatchObject([
      { role: "user", content: "weather?" },
      { role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "rain" },
    ]);
  });

  // As the OpenAI and Anthropic clients say it: the provider's message is the status text alone ("Bad Gateway").
  it("says what a gateway's HTML error page is (its title)", async () => {
    script = [{ status: 502, page: "<!doctype html><html><head><title>example.com | 502: Bad gateway</title></head><body><h1>Bad gateway</h1></body></html>" }];
    const e = await failure(aiSdkLlm({ model: provider().chatModel("m"), maxRetries: 0 }).complete({ messages }));
    expect([e.kind, e.message]).toEqual(["server", "ai-sdk:fake.chat:m: HTTP 502: example.com | 502: Bad gateway (an HTML page)"]);
  });

  it("does not retry a 401 and names the status", async () => {
    script = [{ status: 401 }];
    const e = await failure(aiSdkLlm({ model: provider().chatModel("m") }).complete({ messages }));
    expect(e.kind).toBe("http");
    expect(e.details.status).toBe(401);
    expect(e.message).not.toContain("sk-fake");
    expect(received).toHaveLength(1);
  });

  // As the OpenAI and Anthropic clients do with the key they were given: the provider holds it here.
  it("masks the API key a server or gateway quotes in its error body, in the error and its retries", async () => {
    const apiKey = "sk-fake-quoted-0123456789";
    const body = { error: { message: `Incorrect API key provided: ${apiKey}.` } };
    const retries: RetryInfo[] = [];
    const model = createOpenAICompatible({ name: "fake", baseURL, apiKey }).chatModel("m");
    script = [{ status: 503, body }, { status: 401, body }];
    const e = await failure(aiSdkLlm({ model, retryBaseMs: 5, onRetry: (i) => retries.push(i) }).complete({ messages }));
    expect([e.kind, e.message]).toEqual(["http", "ai-sdk:fake.chat:m: HTTP 401: Incorrect API key provided: [api key]. (after 2 attempts)"]);
    expect(retries.map((i) => i.error.message)).toEqual(["ai-sdk:fake.chat:m: HTTP 503: Incorrect API key provided: [api key]."]);
    expect(received[0].headers.authorization).toBe(`Bearer ${apiKey}`);
  });

  // The AI Gateway's provider gives its headers as a promise, which rejects without a key: read
  // for the key to mask, it rejected again with no one to catch it, and Node ends the process.
  it("fails a call of a model whose headers reject (the AI Gateway without a key) without an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    // Nothing in the environment may authenticate the gateway either.
    vi.stubEnv("AI_GATEWAY_API_KEY", "");
    vi.stubEnv("VERCEL_OIDC_TOKEN", "");
    try {
      const model = createGateway({ baseURL: `${baseURL}/ai`, apiKey: "" })("openai/gpt-5");
      const e = await failure(aiSdkLlm({ model, maxRetries: 0 }).complete({ messages }));
      expect(e.message).toContain("ai-sdk:gateway:openai/gpt-5:");
      // A rejection no one handles is reported once the queued callbacks have run.
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      vi.unstubAllEnvs();
    }
  });

  // The key to mask is read from the provider's headers once the call has failed: a headers
  // promise that never settles (a credential callback stuck on its token service) held the run
  // past the attempt's timeout and the caller's abort, for ever.
  it("bounds the read of a failed call's credentials by the attempt's timeout and the caller's abort", async () => {
    const failing = () => {
      const model = new MockLanguageModelV3({ provider: "stuck", modelId: "m", doGenerate: () => Promise.reject(new Error("upstream refused")) });
      return Object.assign(model, { config: { headers: () => new Promise<never>(() => {}) } });
    };
    const timedOut = await failure(aiSdkLlm({ model: failing(), maxRetries: 0, timeoutMs: 50 }).complete({ messages }));
    expect([timedOut.kind, timedOut.message]).toEqual(["malformed", "ai-sdk:stuck:m: unexpected failure (upstream refused)"]);
    const caller = new AbortController();
    const pending = aiSdkLlm({ model: failing(), maxRetries: 0 }).complete({ messages, signal: caller.signal });
    setImmediate(() => caller.abort());
    const aborted = await failure(pending);
    expect([aborted.kind, aborted.message]).toEqual(["malformed", "ai-sdk:stuck:m: unexpected failure (upstream refused)"]);
  }, 20_000);

  // A wrapped model (middleware such as extractReasoningMiddleware, for a model that thinks in
  // <think> tags) keeps its provider's headers out of reach: the key is not known to mask.
  it("masks a bearer token a gateway quotes in its error for a wrapped model, whose key it cannot read", async () => {
    const apiKey = "sk-fake-wrapped-0123456789";
    const inner = createOpenAICompatible({ name: "fake", baseURL, apiKey }).chatModel("m");
    const model = wrapLanguageModel({ model: inner, middleware: extractReasoningMiddleware({ tagName: "think" }) });
    script = [{ status: 401, body: { error: { message: `Invalid authorization header: Bearer ${apiKey}` } } }];
    const e = await failure(aiSdkLlm({ model, maxRetries: 0 }).complete({ messages }));
    expect(e.message).toBe("ai-sdk:fake.chat:m: HTTP 401: Invalid authorization header: Bearer [api key]");
    expect(received[0].headers.authorization).toBe(`Bearer ${apiKey}`);
  });

  // Quoted bare (no "Bearer "), the key of a wrapped model is known by its provider's shape alone.
  it("masks a key of a provider's shape quoted bare in the error for a wrapped model", async () => {
    for (const apiKey of ["sk-fake-wrapped-0123456789abcdef", "sk-ant-api03-Zx9_fake-0123456789", "sk-or-v1-0123456789abcdef0123", "gsk_fake0123456789abcdefABCD", "xai-fake0123456789abcdefABCD", "AIzaSyFake0123456789abcdefABCDEFGHIJKL"]) {
      const model = wrapLanguageModel({ model: createOpenAICompatible({ name: "fake", baseURL, apiKey }).chatModel("m"), middleware: extractReasoningMiddleware({ tagName: "think" }) });
      script = [{ status: 401, body: { error: { message: `Incorrect API key provided: ${apiKey}. You can find your API key at the dashboard.` } } }];
      const e = await failure(aiSdkLlm({ model, maxRetries: 0 }).complete({ messages }));
      expect(e.message).toBe("ai-sdk:fake.chat:m: HTTP 401: Incorrect API key provided: [api key]. You can find your API key at the dashboard.");
    }
  });

  // A key of no provider's shape (a company gateway's token) cannot be read from a wrapped model
  // nor known by its shape: the host names it, and no error, retry line, trace or event quotes it.
  it("masks the secrets the host names, of any shape, quoted in the errors of a wrapped model", async () => {
    const apiKey = "corp-gateway-token-0123456789abcdef";
    const model = wrapLanguageModel({ model: createOpenAICompatible({ name: "fake", baseURL, apiKey }).chatModel("m"), middleware: extractReasoningMiddleware({ tagName: "think" }) });
    for (const onText of [undefined, () => {}]) {
      const body = { error: { message: `Unknown key ${apiKey} (check the key)` } };
      script = [{ status: 500, body }, { status: 401, body }];
      const retries: RetryInfo[] = [];
      const e = await failure(aiSdkLlm({ model, secrets: [apiKey], retryBaseMs: 1, maxRetries: 1, onRetry: (i) => retries.push(i) }).complete({ messages, ...(onText === undefined ? {} : { onText }) }));
      expect(e.message).toBe("ai-sdk:fake.chat:m: HTTP 401: Unknown key [api key] (check the key) (after 2 attempts)");
      expect(retries.map((i) => i.error.message)).toEqual(["ai-sdk:fake.chat:m: HTTP 500: Unknown key [api key] (check the key)"]);
    }
    script = [{ status: 401, body: { error: { message: `Unknown key ${apiKey}` } } }];
    const events: unknown[] = [];
    const step = await SubAgent.run(SubAgent.create({ prompt: "Say hi" }), { llm: aiSdkLlm({ model, secrets: [apiKey] }), onEvent: (ev) => events.push(ev) });
    expect(step.ok).toBe(false);
    expect(JSON.stringify([step, events])).toContain("[api key]");
    expect(JSON.stringify([step, events])).not.toContain(apiKey);
  });

  it("refuses secrets that are not a list of texts", () => {
    for (const secrets of ["corp-gateway-token-0123456789", [42], {}]) {
      expect(() => aiSdkLlm({ model: provider().chatModel("m"), secrets: secrets as unknown as string[] })).toThrow(/aiSdkLlm: secrets must be a list of texts \(the keys no error may quote\), got /);
    }
  });

  // The AI Gateway's provider gives its headers as a promise: the key is read from it when a call fails.
  it("masks the AI Gateway's key, of any shape, quoted in its error", async () => {
    const apiKey = "my-gateway-secret-0123456789";
    for (const onText of [undefined, () => {}]) {
      script = [{ status: 400, body: { error: { message: `Bad request for key ${apiKey}`, type: "invalid_request_error" } } }];
      const model = createGateway({ baseURL: `${baseURL}/ai`, apiKey })("openai/gpt-5");
      const e = await failure(aiSdkLlm({ model }).complete({ messages, ...(onText === undefined ? {} : { onText }) }));
      expect(e.message).toBe("ai-sdk:gateway:openai/gpt-5: HTTP 400: Bad request for key [api key]");
    }
  });

  // fetch refuses such a URL with a TypeError that quotes it, which the provider hands on as it is.
  it("masks the password of a base URL with credentials (a server behind basic auth) in the error", async () => {
    const withCredentials = baseURL.replace("://", "://alice:s3cr3t-basic-pw@");
    const model = createOpenAICompatible({ name: "fake", baseURL: withCredentials, apiKey: "sk-fake-0123456789" }).chatModel("m");
    for (const onText of [undefined, () => {}]) {
      const e = await failure(aiSdkLlm({ model, maxRetries: 0 }).complete({ messages, ...(onText === undefined ? {} : { onText }) }));
      expect(e.message).toContain(baseURL.replace("://", "://[redacted]@"));
      expect(e.message).not.toMatch(/alice|s3cr3t/);
    }
  });

  // OpenRouter commits its 200 before the provider runs: a later failure rides the body, its code the status it stands for.
  it("reads an error sent in a 200's body: says it, and retries a rate limit", async () => {
    const retries: RetryInfo[] = [];
    script = [{ status: 200, body: { error: { message: "Rate limit exceeded: free-models-per-min", code: 429 } } }, { reply: "ok" }];
    const r = await aiSdkLlm({ model: provider().chatModel("m"), retryBaseMs: 5, onRetry: (i) => retries.push(i) }).complete({ messages });
    expect(r.content).toBe("ok");
    expect(retries.map((i) => [i.error.kind, i.error.message])).toEqual([["rate_limit", "ai-sdk:fake.chat:m: error in the reply: Rate limit exceeded: free-models-per-min"]]);
  });

  it("does not retry a 429 for a used-up quota (insufficient_quota)", async () => {
    const quota = { error: { message: "You exceeded your current quota, please check your plan and billing details.", type: "insufficient_quota", param: null, code: "insufficient_quota" } };
    script = [{ status: 429, body: quota }, { reply: "never sent" }];
    const e = await failure(aiSdkLlm({ model: provider().chatModel("m"), retryBaseMs: 1 }).complete({ messages }));
    expect([received.length, e.kind, e.details.status, e.message]).toEqual([1, "http", 429, `ai-sdk:fake.chat:m: HTTP 429: ${quota.error.message}`]);
  });

  it("retries a 429 after retry-after-ms and a 5xx, then succeeds", async () => {
    script = [{ status: 429, headers: { "retry-after-ms": "12" } }, { status: 502 }, { reply: "ok" }];
    const retries: RetryInfo[] = [];
    const r = await aiSdkLlm({ model: provider().chatModel("m"), retryBaseMs: 5, onRetry: (i) => retries.push(i) }).complete({ messages });
    expect(r.content).toBe("ok");
    expect(retries.map((i) => i.error.kind)).toEqual(["rate_limit", "server"]);
    expect(retries[0].delayMs).toBe(12);
    expect(received).toHaveLength(3);
  });

  it("times out a server that never answers, and stops at the caller's abort", async () => {
    script = [{ hang: true }];
    expect((await failure(aiSdkLlm({ model: provider().chatModel("m"), timeoutMs: 200, maxRetries: 0 }).complete({ messages }))).kind).toBe("timeout");
    script = [{ hang: true }];
    received = [];
    const ctl = new AbortController();
    const p = aiSdkLlm({ model: provider().chatModel("m") }).complete({ messages, signal: ctl.signal });
    while (received.length === 0) await new Promise((r) => setTimeout(r, 5));
    ctl.abort();
    expect((await failure(p)).kind).toBe("aborted");
  });

  it("reports an unreachable server as a connection error", async () => {
    const dead = createOpenAICompatible({ name: "dead", baseURL: "http://127.0.0.1:1/v1" });
    expect((await failure(aiSdkLlm({ model: dead.chatModel("m"), maxRetries: 0 }).complete({ messages }))).kind).toBe("connection");
  });

  // A model named by a string goes through the AI Gateway, whose errors are its own classes, not APICallErrors.
  it("reads the AI Gateway's errors by their status: retries a 429 after its retry-after and a 500, and does not retry a 404", async () => {
    const gateway = () => createGateway({ baseURL: `${baseURL}/ai`, apiKey: "vck_fake0123456789" })("openai/gpt-5");
    const retries: RetryInfo[] = [];
    script = [
      { status: 429, headers: { "retry-after-ms": "7" }, body: { error: { message: "slow down", type: "rate_limit_exceeded" } } },
      { status: 500, body: { error: { message: "boom", type: "internal_server_error" } } },
      { status: 404, body: { error: { message: "no such model", type: "model_not_found" } } },
    ];
    const e = await failure(aiSdkLlm({ model: gateway(), retryBaseMs: 5, onRetry: (i) => retries.push(i) }).complete({ messages }));
    expect(retries.map((i) => [i.error.kind, i.error.details.status, i.delayMs])).toEqual([
      ["rate_limit", 429, 7],
      ["server", 500, expect.any(Number)],
    ]);
    expect([e.kind, e.details.status, e.message]).toEqual(["http", 404, "ai-sdk:gateway:openai/gpt-5: HTTP 404: no such model (after 3 attempts)"]);
    expect(received).toHaveLength(3);
  });

  // The AI SDK rewraps the Gateway's 401 as a plain Error, its message coloured for a terminal.
  it("says the AI Gateway's refusal of its key as an HTTP 401, without terminal escapes", async () => {
    for (const onText of [undefined, () => {}]) {
      script = [{ status: 401, body: { error: { message: "Invalid API key", type: "authentication_error" } } }];
      received = [];
      const model = createGateway({ baseURL: `${baseURL}/ai`, apiKey: "vck_fake0123456789" })("openai/gpt-5");
      const e = await failure(aiSdkLlm({ model }).complete({ messages, ...(onText === undefined ? {} : { onText }) }));
      expect([e.kind, e.details.status, received.length]).toEqual(["http", 401, 1]);
      expect(e.message).toMatch(/^ai-sdk:gateway:openai\/gpt-5: HTTP 401: \S/);
      expect(e.message).not.toContain("\u001b");
    }
  });

  it("says what a model threw that JSON cannot spell (undefined, a symbol, a cycle), not the TypeError reading it raised", async () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    for (const thrown of [undefined, Symbol("x"), cycle, { n: 1n }]) {
      const model = new MockLanguageModelV3({ doGenerate: () => Promise.reject(thrown), doStream: () => Promise.reject(thrown) });
      for (const onText of [undefined, () => undefined]) {
        const e = await failure(aiSdkLlm({ model, maxRetries: 0 }).complete({ messages, onText }));
        expect(e.message).toBe("ai-sdk:mock-provider:mock-model-id: error in the stream: an error that says nothing");
      }
    }
  });

  it("rejects a missing model", () => {
    expect(() => aiSdkLlm({} as never)).toThrow(/no model given/);
  });
});

/** The AI SDK's mock model answering "(+ 1 2)" with these input-token counts. */
const mockModel = (inputTokens: { total: number; noCache: number; cacheRead: number; cacheWrite: number }) =>
  new MockLanguageModelV3({
    doGenerate: { content: [{ type: "text", text: "(+ 1 2)" }], finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens, outputTokens: { total: 5, text: 5, reasoning: 0 } }, warnings: [] },
  });

describe("aiSdkLlm: a provider that reports no usage", () => {
  // The agent measures the prompt itself when a client reports no usage; zeros would read as the provider's count.
  it("reports none, not zero tokens", async () => {
    const none = { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined };
    const model = new MockLanguageModelV3({
      doGenerate: { content: [{ type: "text", text: "(+ 1 2)" }], finishReason: { unified: "stop", raw: "stop" }, usage: { inputTokens: none, outputTokens: { total: undefined, text: undefined, reasoning: undefined } }, warnings: [] },
    });
    const r = await aiSdkLlm({ model }).complete({ messages });
    expect(r.content).toBe("(+ 1 2)");
    expect(r.usage).toBeUndefined();
  });

  it("over a streamed OpenAI-compatible server without includeUsage: the run counts its prompts itself", async () => {
    script = [{ stream: ["(return ", "3)"] }];
    const step = await SubAgent.run(SubAgent.create({ prompt: "Return 3" }), { llm: aiSdkLlm({ model: provider().chatModel("m"), retryBaseMs: 5 }), onEvent: () => undefined });
    expect(received[0].body).toMatchObject({ stream: true });
    expect(step.ok).toBe(true);
    expect(step.usage.inputTokens).toBeGreaterThan(100);
  });
});

describe("aiSdkLlm: what the model receives", () => {
  it("marks the system prompt, the strategy's breakpoints and the last message for the cache, and maps cache reads and writes", async () => {
    const model = mockModel({ total: 900, noCache: 100, cacheRead: 500, cacheWrite: 300 });
    const r = await aiSdkLlm({ model }).complete({ messages, cacheBreakpoints: [1] });
    expect(r.usage).toEqual({ inputTokens: 900, outputTokens: 5, cachedTokens: 500, cacheWriteTokens: 300 });
    const prompt = model.doGenerateCalls[0].prompt;
    const marked = prompt.map((m) => (m.providerOptions as { anthropic?: { cacheControl?: unknown } } | undefined)?.anthropic?.cacheControl !== undefined);
    expect(prompt.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(marked).toEqual([true, true, false, true]);
  });

  it("marks no more messages than Anthropic allows (four), the latest winning, as the Anthropic client does", async () => {
    const model = mockModel({ total: 9, noCache: 9, cacheRead: 0, cacheWrite: 0 });
    const long: ChatMessage[] = [...messages, { role: "assistant", content: "(return 3)" }, { role: "user", content: "ok" }, { role: "assistant", content: "(return 4)" }, { role: "user", content: "ok" }];
    // The system prompt, four breakpoints and the last message: six candidates for four marks.
    await aiSdkLlm({ model }).complete({ messages: long, cacheBreakpoints: [1, 3, 4, 5] });
    const prompt = model.doGenerateCalls[0].prompt;
    const marked = prompt.flatMap((m, i) => ((m.providerOptions as { anthropic?: { cacheControl?: unknown } } | undefined)?.anthropic?.cacheControl === undefined ? [] : [i]));
    expect(marked).toEqual([3, 4, 5, 7]);
  });
});

/** A model stream of these parts that then fails as a connection dropped under it (undici's "terminated"). */
/** A part of a model's stream, as the mock model takes them. */
type StreamPart = Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;

function droppedAfter(parts: unknown[]): MockLanguageModelV3 {
  const dropped = new TypeError("terminated", { cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }) });
  return new MockLanguageModelV3({
    provider: "anthropic.messages",
    modelId: "claude-fake",
    doStream: async () => {
      const left = [...parts];
      return { stream: new ReadableStream<StreamPart>({ pull: (c) => (left.length > 0 ? c.enqueue(left.shift() as StreamPart) : c.error(dropped)) }) };
    },
  });
}

describe("aiSdkLlm: an Anthropic provider's stream (its raw chunks are Messages API events)", () => {
  const start = { type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-served", content: [], stop_reason: null, usage: { input_tokens: 7, cache_read_input_tokens: 20, cache_creation_input_tokens: 3, output_tokens: 1 } } };
  const text = [{ type: "stream-start", warnings: [] }, { type: "raw", rawValue: start }, { type: "text-start", id: "0" }, { type: "text-delta", id: "0", delta: "(+ 1 2)" }, { type: "text-end", id: "0" }];

  // The provider gives its finish part at message_stop: a connection dropped after message_delta
  // lost a reply that was whole and paid for, and asking again paid for it twice.
  it("takes a reply dropped after its stop reason (message_delta), with its usage, in one request", async () => {
    for (const [reason, truncated] of [["end_turn", false], ["max_tokens", true]] as const) {
      const model = droppedAfter([...text, { type: "raw", rawValue: { type: "message_delta", delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: 5 } } }]);
      const retries: RetryInfo[] = [];
      const r = await aiSdkLlm({ model, maxRetries: 1, retryBaseMs: 0, onRetry: (i) => void retries.push(i) }).complete({ messages, onText: () => undefined });
      expect([model.doStreamCalls.length, retries.length, r]).toEqual([1, 0, { content: "(+ 1 2)", usage: { inputTokens: 30, outputTokens: 5, cachedTokens: 20, cacheWriteTokens: 3 }, model: "claude-served", ...(truncated ? { truncated } : {}) }]);
    }
  });

  it("retries a reply dropped before its stop reason", async () => {
    const model = droppedAfter(text);
    const e = await failure(aiSdkLlm({ model, maxRetries: 1, retryBaseMs: 0 }).complete({ messages, onText: () => undefined }));
    expect([model.doStreamCalls.length, e.kind, e.message]).toEqual([2, "connection", "ai-sdk:anthropic.messages:claude-fake: the connection was lost before the reply was complete (other side closed) (after 2 attempts)"]);
  });
});
