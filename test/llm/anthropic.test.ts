// anthropicLlm against a fake Messages API on 127.0.0.1: real HTTP, real SDK, the wire format checked.
import type { IncomingMessage, ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { anthropicLlm, type AnthropicLlmOptions } from "../../src/llm/anthropic.js";
import type { ChatMessage } from "../../src/llm/types.js";
import type { RetryInfo } from "../../src/llm/retry.js";
import { localServer } from "../support/local-server.js";

type Behaviour =
  | { reply: string; usage?: Record<string, unknown> }
  | { status: number; headers?: Record<string, string>; body?: unknown }
  | { json: unknown }
  | { hang: true };

interface Block { type: string; text?: string; cache_control?: { type: string }; [k: string]: unknown }
interface Body { model: string; max_tokens: number; system?: Block[]; messages: Array<{ role: string; content: Block[] }>; temperature?: number }

let baseURL: string;
let script: Behaviour[] = [];
let received: Array<{ url: string; headers: IncomingMessage["headers"]; body: Body }> = [];

function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
  if (req.method !== "POST" || req.url !== "/v1/messages") {
    res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ type: "error", error: { type: "not_found_error", message: `no route ${req.method} ${req.url}` } }));
    return;
  }
  received.push({ url: req.url, headers: req.headers, body: JSON.parse(text) as Body });
  const b = script.shift() ?? { status: 500, body: { type: "error", error: { type: "api_error", message: "fake server: script exhausted" } } };
  if ("reply" in b) {
    const usage = b.usage ?? { input_tokens: 10, output_tokens: 2 };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "msg_1", type: "message", role: "assistant", model: "claude-fake-2026", content: [{ type: "text", text: b.reply }], stop_reason: "end_turn", stop_sequence: null, usage }));
  } else if ("status" in b) {
    res.writeHead(b.status, { "content-type": "application/json", ...b.headers }).end(JSON.stringify(b.body ?? { type: "error", error: { type: "api_error", message: `fake failure ${b.status}` } }));
  } else if ("json" in b) {
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(b.json));
  }
  // hang: never answer; the client's timeout or abort must end it.
}

localServer(handle, {
  listening: (origin) => (baseURL = `${origin}`),
  reset: () => {
    script = [];
    received = [];
  },
});

const client = (o: AnthropicLlmOptions = {}) => anthropicLlm({ model: "claude-fake", baseURL, apiKey: "sk-ant-test", retryBaseMs: 10, env: {}, ...o });

/** Which blocks carry cache_control, as "system:i" or "message:i:j". */
function marks(body: Body): string[] {
  const out: string[] = [];
  (body.system ?? []).forEach((b, i) => b.cache_control && out.push(`system:${i}`));
  body.messages.forEach((m, i) => m.content.forEach((b, j) => b.cache_control && out.push(`message:${i}:${j}`)));
  return out;
}

/** A conversation of `turns` assistant/user pairs after the system prompt and the task. */
function conversation(turns: number): ChatMessage[] {
  const out: ChatMessage[] = [{ role: "system", content: "You write PTC-Lisp." }, { role: "user", content: "Count the orders." }];
  for (let t = 1; t <= turns; t++) out.push({ role: "assistant", content: `(step ${t})` }, { role: "user", content: `result ${t}` });
  return out;
}

describe("anthropicLlm: the request on the wire", () => {
  // The installed SDK (1.14) sends the key as a bearer token rather than `x-api-key`.
  it("sends model, system blocks, messages and max_tokens, with the key and API version headers", async () => {
    script = [{ reply: "```clojure\n(count data/orders)\n```" }];
    const llm = client({ temperature: 0.2, maxTokens: 700 });
    const r = await llm.complete({ messages: conversation(1), turn: 1 });
    expect(llm.name).toBe("anthropic:claude-fake");
    expect(r.content).toBe("```clojure\n(count data/orders)\n```");
    expect(r.model).toBe("claude-fake-2026");
    const { headers, body } = received[0];
    expect(headers.authorization).toBe("Bearer sk-ant-test");
    expect(headers["anthropic-version"]).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(JSON.stringify(body)).not.toContain("sk-ant-test");
    expect(body).toEqual({
      model: "claude-fake",
      max_tokens: 700,
      temperature: 0.2,
      system: [{ type: "text", text: "You write PTC-Lisp.", cache_control: { type: "ephemeral" } }],
      messages: [
        { role: "user", content: [{ type: "text", text: "Count the orders." }] },
        { role: "assistant", content: [{ type: "text", text: "(step 1)" }] },
        { role: "user", content: [{ type: "text", text: "result 1", cache_control: { type: "ephemeral" } }] },
      ],
    });
  });

  it("defaults max_tokens (the API requires it) and lets the request override it and the model", async () => {
    script = [{ reply: "a" }, { reply: "b" }];
    await client().complete({ messages: conversation(0) });
    await client().complete({ messages: conversation(0), maxOutputTokens: 64, model: "claude-cheap" });
    expect(received[0].body.max_tokens).toBe(4096);
    expect(received[0].body).not.toHaveProperty("temperature");
    expect(received[1].body).toMatchObject({ max_tokens: 64, model: "claude-cheap" });
  });

  it("marks the strategy's stable-prefix ends besides the system prompt and the last message", async () => {
    script = [{ reply: "a" }];
    // Chat messages: system(0), task(1), a1(2), r1(3), a2(4), r2(5), a3(6), r3(7); the API's
    // messages leave the system prompt out, so chat 3 and 5 are API messages 2 and 4.
    await client().complete({ messages: conversation(3), cacheBreakpoints: [3, 5] });
    expect(marks(received[0].body)).toEqual(["system:0", "message:2:0", "message:4:0", "message:6:0"]);
  });

  it("never sends more than 4 breakpoints, keeping the latest, and ignores out-of-range marks", async () => {
    script = [{ reply: "a" }];
    await client().complete({ messages: conversation(6), cacheBreakpoints: [2, 4, 6, 8, 10, -1, 99, 1.5] });
    const body = received[0].body;
    expect(marks(body)).toHaveLength(4);
    // Chat indices 8 and 10 are API messages 7 and 9; the last API message is 12.
    expect(marks(body)).toEqual(["message:5:0", "message:7:0", "message:9:0", "message:12:0"]);
  });

  it("sends no cache_control at all with cache: false", async () => {
    script = [{ reply: "a" }];
    await client({ cache: false }).complete({ messages: conversation(2), cacheBreakpoints: [3] });
    expect(marks(received[0].body)).toEqual([]);
  });

  it("maps tool calls and results to tool_use and tool_result blocks, and merges same-role turns", async () => {
    script = [{ reply: "done" }];
    const messages: ChatMessage[] = [
      { role: "system", content: "sys A" },
      { role: "system", content: "sys B" },
      { role: "user", content: "weather?" },
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } }] },
      { role: "tool", tool_call_id: "call_1", content: "rain" },
      { role: "user", content: [{ type: "text", text: "and " }, { type: "text", text: "tomorrow?" }] },
    ];
    await client().complete({ messages });
    const body = received[0].body;
    expect(body.system).toEqual([{ type: "text", text: "sys A" }, { type: "text", text: "sys B", cache_control: { type: "ephemeral" } }]);
    expect(body.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "weather?" }] },
      { role: "assistant", content: [{ type: "tool_use", id: "call_1", name: "weather", input: { city: "Oslo" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: "rain" }, { type: "text", text: "and " }, { type: "text", text: "tomorrow?", cache_control: { type: "ephemeral" } }] },
    ]);
  });
  // The API refuses a text block that is empty or only whitespace ("text content blocks must contain non-whitespace text").
  it("sends no text block that is empty or only whitespace, in the system prompt or the messages", async () => {
    script = [{ reply: "done" }];
    const messages: ChatMessage[] = [
      { role: "system", content: "You write PTC-Lisp." },
      { role: "system", content: " \n" },
      { role: "user", content: "Count the orders." },
      { role: "assistant", content: "\n\n" },
      { role: "user", content: [{ type: "text", text: "\t" }, { type: "text", text: "result 1" }] },
    ];
    await client().complete({ messages });
    const body = received[0].body;
    const texts = [...(body.system ?? []), ...body.messages.flatMap((m) => m.content)].map((b) => b.text);
    expect(texts).toEqual(["You write PTC-Lisp.", "Count the orders.", "result 1"]);
    expect(body.messages.map((m) => m.role)).toEqual(["user"]);
  });
});

describe("anthropicLlm: usage and replies", () => {
  it("reports cache reads and writes, and counts them in the prompt tokens", async () => {
    script = [{ reply: "a", usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 1500, cache_creation_input_tokens: 300 } }];
    const r = await client().complete({ messages: conversation(1) });
    expect(r.usage).toEqual({ inputTokens: 1820, outputTokens: 7, cachedTokens: 1500, cacheWriteTokens: 300 });
  });

  it("reads null cache fields as zero", async () => {
    script = [{ reply: "a", usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: null, cache_creation_input_tokens: null } }];
    expect((await client().complete({ messages: conversation(0) })).usage).toEqual({ inputTokens: 20, outputTokens: 7, cachedTokens: 0, cacheWriteTokens: 0 });
  });

  // A count left out is not known, not 0: zero input tokens would pass any token budget and cost nothing.
  it("reports no usage when the reply's usage leaves out the input or the output tokens", async () => {
    script = [{ reply: "a", usage: { output_tokens: 7 } }, { reply: "b", usage: { input_tokens: 20, cache_read_input_tokens: 5 } }];
    expect((await client().complete({ messages: conversation(0) })).usage).toBeUndefined();
    expect((await client().complete({ messages: conversation(0) })).usage).toBeUndefined();
  });

  // A gateway in front of the API may commit its 200 before the upstream fails, and send the API's error in the body.
  it("reads an error sent in a 200's body as the API's error: retries an overload, not a bad request", async () => {
    const retries: RetryInfo[] = [];
    script = [{ json: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }, { reply: "(+ 1 2)" }, { json: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } } }];
    const llm = client({ onRetry: (i) => retries.push(i) });
    expect((await llm.complete({ messages: conversation(0) })).content).toBe("(+ 1 2)");
    expect(retries.map((i) => [i.error.kind, i.error.message])).toEqual([["server", "anthropic:claude-fake: error in the reply: overloaded_error: Overloaded"]]);
    const e = await failure(llm.complete({ messages: conversation(0) }));
    expect([e.kind, e.message, received.length]).toEqual(["http", "anthropic:claude-fake: error in the reply: invalid_request_error: prompt is too long", 3]);
  });

  it("joins the text blocks and fails clearly on a reply with no text", async () => {
    const message = (content: unknown[]) => ({ id: "m", type: "message", role: "assistant", model: "x", content, stop_reason: "max_tokens", usage: { input_tokens: 1, output_tokens: 1 } });
    script = [{ json: message([{ type: "text", text: "(+ 1 " }, { type: "thinking", thinking: "hm" }, { type: "text", text: "2)" }]) }, { json: message([]) }];
    expect((await client().complete({ messages: conversation(0) })).content).toBe("(+ 1 2)");
    const e = await failure(client().complete({ messages: conversation(0) }));
    expect(e.kind).toBe("malformed");
    expect(e.message).toMatch(/no text content \(stop_reason: max_tokens\)/);
    // The reply was billed all the same: its usage travels with the error.
    expect(e.details.usage).toEqual({ inputTokens: 1, outputTokens: 1, cachedTokens: 0, cacheWriteTokens: 0 });
  });

  // Sonnet 4.5 and later stop a reply that fills the context window with this reason: cut like
  // one at max_tokens (the AI SDK's Anthropic provider maps both to "length").
  it("flags a reply stopped at the context window as truncated, like one stopped at max_tokens", async () => {
    const message = (stop: string) => ({ id: "m", type: "message", role: "assistant", model: "x", content: [{ type: "text", text: "(def x [1" }], stop_reason: stop, usage: { input_tokens: 1, output_tokens: 1 } });
    script = [{ json: message("model_context_window_exceeded") }, { json: message("max_tokens") }, { json: message("end_turn") }];
    const flags = [];
    for (let i = 0; i < 3; i++) flags.push((await client().complete({ messages: conversation(0) })).truncated);
    expect(flags).toEqual([true, true, undefined]);
  });
});

describe("anthropicLlm: errors", () => {
  it("rejects a missing model or key before any request, without reading a key from elsewhere", () => {
    expect(() => anthropicLlm({ env: {}, apiKey: "k" })).toThrow(/no model given/);
    expect(() => anthropicLlm({ env: {}, model: "m" })).toThrow(/no API key/);
    expect(() => anthropicLlm({ env: {}, model: "m", apiKey: "k", maxTokens: 0 })).toThrow(/maxTokens must be a positive integer/);
    expect(() => anthropicLlm({ env: {}, model: "m", apiKey: "k", timeoutMs: -5 })).toThrow(/timeoutMs must be a positive number/);
    expect(received).toHaveLength(0);
  });

  it("takes model, key and base URL from the environment", async () => {
    script = [{ reply: "a" }];
    const llm = anthropicLlm({ env: { ANTHROPIC_MODEL: "claude-env", ANTHROPIC_API_KEY: "sk-ant-env", ANTHROPIC_BASE_URL: baseURL } });
    await llm.complete({ messages: conversation(0) });
    expect(received[0].body.model).toBe("claude-env");
    expect(received[0].headers.authorization).toBe("Bearer sk-ant-env");
  });

  it("does not retry a 401, and says the status", async () => {
    script = [{ status: 401, body: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } } }];
    const e = await failure(client().complete({ messages: conversation(0) }));
    expect(e.kind).toBe("http");
    expect(e.details.status).toBe(401);
    expect(e.message).toMatch(/HTTP 401/);
    expect(e.message).toMatch(/invalid x-api-key/);
    expect(e.message).not.toContain("sk-ant-test");
    expect(received).toHaveLength(1);
  });

  it("masks the API key a server quotes in its error body", async () => {
    const apiKey = "sk-ant-quoted-0123456789";
    script = [{ status: 401, body: { type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${apiKey}` } } }];
    const e = await failure(client({ apiKey }).complete({ messages: conversation(0) }));
    expect(e.message).toMatch(/invalid x-api-key \[api key\]/);
    expect(e.message).not.toContain(apiKey);
  });

  it("retries a 429 after the server's retry-after, then succeeds", async () => {
    script = [{ status: 429, headers: { "retry-after-ms": "15" } }, { reply: "ok" }];
    const retries: RetryInfo[] = [];
    const r = await client({ onRetry: (i) => retries.push(i) }).complete({ messages: conversation(0) });
    expect(r.content).toBe("ok");
    expect(retries).toHaveLength(1);
    expect(retries[0].delayMs).toBe(15);
    expect(retries[0].error.kind).toBe("rate_limit");
    expect(received).toHaveLength(2);
  });

  it("fails at once when retry-after is beyond the cap", async () => {
    script = [{ status: 429, headers: { "retry-after": "120" } }];
    const e = await failure(client({ retryMaxMs: 1000 }).complete({ messages: conversation(0) }));
    expect(e.kind).toBe("rate_limit");
    expect(e.details.retryAfterMs).toBe(120_000);
    expect(e.message).toMatch(/retry after 120 s, beyond the 1 s cap/);
    expect(received).toHaveLength(1);
  });

  it("retries 5xx and 529 overloaded, then reports a server error with the attempts", async () => {
    script = [{ status: 500 }, { status: 529, body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }, { status: 503 }];
    const e = await failure(client({ maxRetries: 2 }).complete({ messages: conversation(0) }));
    expect(e.kind).toBe("server");
    expect(e.details).toMatchObject({ status: 503, attempts: 3 });
    expect(received).toHaveLength(3);
  });

  it("ends a request the server never answers with a timeout", async () => {
    script = [{ hang: true }];
    const e = await failure(client({ timeoutMs: 200, maxRetries: 0 }).complete({ messages: conversation(0) }));
    expect(e.kind).toBe("timeout");
  });

  it("stops at the caller's abort, before and during a request", async () => {
    const ctl = new AbortController();
    ctl.abort();
    expect((await failure(client().complete({ messages: conversation(0), signal: ctl.signal }))).kind).toBe("aborted");
    expect(received).toHaveLength(0);
    script = [{ hang: true }];
    const live = new AbortController();
    const p = client().complete({ messages: conversation(0), signal: live.signal });
    while (received.length === 0) await new Promise((r) => setTimeout(r, 5));
    live.abort();
    expect((await failure(p)).kind).toBe("aborted");
  });

  it("reports an unreachable server as a connection error", async () => {
    const e = await failure(anthropicLlm({ model: "m", apiKey: "k", baseURL: "http://127.0.0.1:1", maxRetries: 0, env: {} }).complete({ messages: conversation(0) }));
    expect(e.kind).toBe("connection");
  });
});
