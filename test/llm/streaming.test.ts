// The clients' streaming paths against fake servers on 127.0.0.1 that speak server-sent events:
// OpenAI chat completions (`stream: true`, usage in the final chunk), Anthropic messages
// (message_start / content_block_delta / message_delta), and the AI SDK over an
// OpenAI-compatible provider. Real HTTP, real SDKs; the request and the stream's shape checked.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { describe, expect, it, vi } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { aiSdkLlm } from "../../src/llm/ai-sdk.js";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { openaiLlm } from "../../src/llm/openai.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { RetryInfo } from "../../src/llm/retry.js";
import type { ChatMessage, Llm } from "../../src/llm/types.js";
import { localServer } from "../support/local-server.js";

/**
 * One answer: SSE events to send, or an HTTP error. `cut` ends the socket after the events are
 * written; `drop` waits until they are on the wire, then closes it (FIN) or resets it (RST), as a
 * proxy or load balancer that loses its upstream or times out does: the client has read them first.
 * `hold` leaves the stream open after the events, a reply that stalls.
 */
type Sse = { events: Array<{ event?: string; data: unknown }>; cut?: boolean; drop?: "fin" | "reset"; hold?: boolean };
/** `whole` is a plain JSON reply; with `drop`, only its first half is sent. */
type Behaviour = Sse | { status: number } | { whole: unknown; drop?: "fin" | "reset" } | { page: string };

let base: string;
let script: Behaviour[] = [];
let received: Array<{ url: string; accept: string | undefined; body: Record<string, unknown> }> = [];

function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
  received.push({ url: req.url ?? "", accept: req.headers.accept, body: JSON.parse(text) as Record<string, unknown> });
  const b = script.shift() ?? { status: 500 };
  if ("status" in b) {
    res.writeHead(b.status, { "content-type": "application/json" }).end(JSON.stringify({ error: { type: "api_error", message: `fake failure ${b.status}` } }));
    return;
  }
  if ("page" in b) return void res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(b.page);
  if ("whole" in b) {
    const body = JSON.stringify(b.whole);
    if (!b.drop) return void res.writeHead(200, { "content-type": "application/json" }).end(body);
    res.shouldKeepAlive = true;
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.write(body.slice(0, body.length >> 1), () => (b.drop === "reset" ? res.socket?.resetAndDestroy() : res.socket?.end()));
    return;
  }
  // A drop comes inside a chunked body on a kept-alive connection, as a proxy sends it: with
  // `connection: close` the client takes the close for the body's end and sees no cut.
  if (b.drop) res.shouldKeepAlive = true;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const e of b.events) res.write(`${e.event === undefined ? "" : `event: ${e.event}\n`}data: ${typeof e.data === "string" ? e.data : JSON.stringify(e.data)}\n\n`);
  // A cut: the socket closes after the data (FIN, not reset) without ending the chunked body.
  if (b.cut) res.socket?.end();
  else if (b.drop) res.write("", () => (b.drop === "reset" ? res.socket?.resetAndDestroy() : res.socket?.end()));
  else if (!b.hold) res.end();
}

localServer(handle, {
  listening: (origin) => (base = `${origin}`),
  reset: () => {
    script = [];
    received = [];
  },
});

const messages: ChatMessage[] = [
  { role: "system", content: "You write PTC-Lisp." },
  { role: "user", content: "Count the orders." },
];

/** An OpenAI chat-completions stream of `pieces`, ending with a usage chunk and [DONE]. */
function chatStream(pieces: string[], usage: Record<string, unknown> = { prompt_tokens: 12, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 8 } }, finish = "stop"): Sse {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ data: { id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-served", choices: [{ index: 0, delta, finish_reason: finish }] } });
  return {
    events: [
      chunk({ role: "assistant", content: "" }),
      ...pieces.map((p) => chunk({ content: p })),
      chunk({}, finish),
      { data: { id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-served", choices: [], usage } },
      { data: "[DONE]" },
    ],
  };
}

function collector(): { deltas: Array<[string, number]>; onText: (d: string, a: number) => void } {
  const deltas: Array<[string, number]> = [];
  return { deltas, onText: (d, a) => deltas.push([d, a]) };
}

describe("openaiLlm streaming", () => {
  const client = () => openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {} });

  it("asks for a stream with usage, tells each delta, and gives the whole reply with the final chunk's usage", async () => {
    script = [chatStream(["(count", " data/orders", ")"])];
    const c = collector();
    const r = await client().complete({ messages, onText: c.onText });
    expect(received[0].url).toBe("/v1/chat/completions");
    expect(received[0].body).toMatchObject({ model: "fake", stream: true, stream_options: { include_usage: true }, messages });
    expect(c.deltas).toEqual([["(count", 1], [" data/orders", 1], [")", 1]]);
    expect(r).toEqual({ content: "(count data/orders)", usage: { inputTokens: 12, outputTokens: 5, cachedTokens: 8 }, model: "fake-served" });
  });

  // A count left out is not known, not 0: zero prompt tokens would pass any token budget and cost nothing.
  it("reports no usage when the usage chunk leaves out the prompt or the completion tokens", async () => {
    script = [chatStream(["(+ 1 2)"], { completion_tokens: 5 }), chatStream(["(+ 1 2)"], { prompt_tokens: 12 })];
    expect(await client().complete({ messages, onText: () => undefined })).toEqual({ content: "(+ 1 2)", model: "fake-served" });
    expect(await client().complete({ messages, onText: () => undefined })).toEqual({ content: "(+ 1 2)", model: "fake-served" });
  });

  it("sends no stream field without onText (the plain path is unchanged)", async () => {
    script = [{ status: 400 }];
    await failure(client().complete({ messages }));
    expect(received[0].body).not.toHaveProperty("stream");
  });

  it("retries a stream cut half-way (no finish reason) instead of taking the half reply: the new attempt's pieces carry attempt 2", async () => {
    script = [{ ...chatStream(["(cou"]), cut: true, events: chatStream(["(cou"]).events.slice(0, 2) }, chatStream(["(count", " x)"])];
    const c = collector();
    const r = await client().complete({ messages, onText: c.onText });
    expect(received).toHaveLength(2);
    expect(c.deltas).toEqual([["(cou", 1], ["(count", 2], [" x)", 2]]);
    expect(r.content).toBe("(count x)");
  });

  // Some OpenAI-compatible servers leave finish_reason null in every chunk: [DONE] is the server's
  // own word that the reply is whole, where a body that ends without it may be a cut.
  it("takes a stream that ends with [DONE] but no finish reason as whole, and retries one that ends without either", async () => {
    const noFinish = chatStream(["(count", " x)"]).events.filter((e) => (e.data as { choices?: Array<{ finish_reason?: unknown }> }).choices?.[0]?.finish_reason !== "stop");
    script = [{ events: noFinish }];
    const r = await client().complete({ messages, onText: () => undefined });
    expect([received.length, r.content, r.usage?.outputTokens, r.truncated]).toEqual([1, "(count x)", 5, undefined]);
    received = [];
    script = [{ events: noFinish.slice(0, -2) }, chatStream(["(other)"])];
    expect([(await client().complete({ messages, onText: () => undefined })).content, received.length]).toEqual(["(other)", 2]);
  });

  // Nothing can follow [DONE]: a server that holds the connection open after it would otherwise
  // keep the reply waiting for the attempt's timeout (120 s by default), then end it there.
  it("takes the reply at [DONE] from a server that holds the connection open after it, with or without a finish reason", async () => {
    for (const finish of [true, false]) {
      const events = chatStream(["(count", " x)"]).events.filter((e) => finish || (e.data as { choices?: Array<{ finish_reason?: unknown }> }).choices?.[0]?.finish_reason !== "stop");
      script = [{ events, hold: true }];
      received = [];
      const r = await openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", timeoutMs: 600_000, env: {} }).complete({ messages, onText: () => undefined });
      expect([finish, received.length, r.content]).toEqual([finish, 1, "(count x)"]);
    }
  }, 30_000);

  it("retries a server error that arrives in the stream, and rate-limits one that says so", async () => {
    const broken = (error: Record<string, unknown>): Sse => ({ events: [...chatStream(["(cou"]).events.slice(0, 2), { data: { error } }] });
    script = [broken({ message: "The server had an error while processing your request.", type: "server_error" }), broken({ message: "Rate limit reached", type: "rate_limit_exceeded" }), chatStream(["(count x)"])];
    const retries: RetryInfo[] = [];
    const c = collector();
    const r = await openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {}, onRetry: (i) => retries.push(i) }).complete({ messages, onText: c.onText });
    expect(retries.map((i) => [i.error.kind, i.error.message])).toEqual([
      ["server", "openai:fake: error in the stream: server_error: The server had an error while processing your request."],
      ["rate_limit", "openai:fake: error in the stream: rate_limit_exceeded: Rate limit reached"],
    ]);
    expect(c.deltas).toEqual([["(cou", 1], ["(cou", 2], ["(count x)", 3]]);
    expect(r.content).toBe("(count x)");
  });

  it("retries a stream whose choice ends in an error (OpenRouter's finish_reason \"error\") instead of taking the half reply", async () => {
    const s = chatStream(["(cou"]);
    const failed = { data: { id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-served", choices: [{ index: 0, delta: { content: "" }, finish_reason: "error", error: { message: "Provider disconnected", code: 502 } }] } };
    script = [{ events: [...s.events.slice(0, 2), failed, { data: "[DONE]" }] }, chatStream(["(count x)"])];
    const retries: RetryInfo[] = [];
    const r = await openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {}, onRetry: (i) => retries.push(i) }).complete({ messages, onText: () => undefined });
    expect(retries.map((i) => [i.error.kind, i.error.message])).toEqual([["server", "openai:fake: error in the stream: Provider disconnected"]]);
    expect(r.content).toBe("(count x)");
  });

  it("takes the text chunks of deltas whose content is a list (Mistral's reasoning models), leaving the thinking out", async () => {
    const s = chatStream([]);
    const delta = (content: unknown) => ({ data: { id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-served", choices: [{ index: 0, delta: { content }, finish_reason: null }] } });
    script = [{ events: [s.events[0], delta([{ type: "thinking", thinking: [{ type: "text", text: "Count them." }] }]), delta([{ type: "text", text: "(count" }]), delta(" x)"), ...s.events.slice(1)] }];
    const c = collector();
    const r = await client().complete({ messages, onText: c.onText });
    expect(c.deltas).toEqual([["(count", 1], [" x)", 1]]);
    expect(r.content).toBe("(count x)");
  });

  // A server that answers with several choices (n > 1 in its defaults): the whole reply's first choice, not the choices' text interleaved.
  it("takes the first choice of a stream of several, as of a whole reply", async () => {
    const s = chatStream([]);
    const piece = (index: number, content: string, finish: string | null = null) => ({ data: { id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-served", choices: [{ index, delta: { content }, finish_reason: finish }] } });
    script = [{ events: [s.events[0], piece(0, "(count"), piece(1, "(sum"), piece(1, " y)", "stop"), piece(0, " x)"), piece(0, "", "length"), ...s.events.slice(2)] }];
    const c = collector();
    const r = await client().complete({ messages, onText: c.onText });
    expect(c.deltas).toEqual([["(count", 1], [" x)", 1]]);
    expect([r.content, r.truncated]).toEqual(["(count x)", true]);
  });

  // An onText that throws a value String() cannot convert (an object without a prototype, one
  // whose toString throws) escaped the client as a raw TypeError with no kind.
  it("fails with an LlmError when onText throws a value String() cannot convert", async () => {
    const said = { kind: "", message: "" };
    script = [chatStream(["(count", " x)"])];
    const plain = await failure(client().complete({ messages, onText: () => { throw new Error("viewer closed"); } }));
    Object.assign(said, { kind: plain.kind, message: plain.message });
    for (const thrown of [Object.create(null) as unknown, { toString: () => { throw new Error("no"); } }]) {
      script = [chatStream(["(count", " x)"])];
      const e = await failure(client().complete({ messages, onText: () => { throw thrown; } }));
      expect([e.kind, e.message]).toEqual([said.kind, said.message.replace("viewer closed", "a thrown value that cannot be read")]);
    }
  });

  it("fails as malformed when the stream holds no text", async () => {
    script = [chatStream([])];
    const e = await failure(client().complete({ messages, onText: () => undefined }));
    expect(e.kind).toBe("malformed");
    expect(e.message).toContain("no text content");
  });
});

// The SDKs write an event they cannot parse to the console, raw, before they throw: a server's
// text (an echoed key, a terminal's escape that sets the clipboard) on the host's stderr, which
// no mask or terminal guard sees. The error the client throws says it; nothing else is written.
describe("an event that is not JSON", () => {
  const hostile = "{not json \u001b]52;c;cGF5bG9hZA==\u0007 sk-echoed-0123456789abcdef}";
  it("is an error of the client, written to no console, by each SDK client", async () => {
    const written: unknown[][] = [];
    const spies = (["error", "warn", "log", "info", "debug"] as const).map((k) => vi.spyOn(console, k).mockImplementation((...a: unknown[]) => void written.push(a)));
    try {
      script = [{ events: [{ data: hostile }] }];
      const o = await failure(openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", maxRetries: 0, env: {} }).complete({ messages, onText: () => undefined }));
      expect(o.kind).toBe("malformed");
      script = [{ events: [{ event: "message_start", data: hostile }] }];
      const a = await failure(anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", maxRetries: 0, env: {} }).complete({ messages, onText: () => undefined }));
      expect(a.kind).toBe("malformed");
      for (const e of [o, a]) expect(e.message).not.toContain("\u001b");
    } finally {
      for (const s of spies) s.mockRestore();
    }
    expect(written).toEqual([]);
  });
});

describe("anthropicLlm streaming", () => {
  const client = () => anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", retryBaseMs: 5, env: {} });
  const stream = (pieces: string[], stop = "end_turn"): Sse => ({
    events: [
      { event: "message_start", data: { type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-fake-2026", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 4, cache_read_input_tokens: 30, cache_creation_input_tokens: 6, output_tokens: 1 } } } },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
      { event: "ping", data: { type: "ping" } },
      ...pieces.map((p) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } } })),
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 9 } } },
      { event: "message_stop", data: { type: "message_stop" } },
    ],
  });

  it("asks for a stream with the cache breakpoints in place, tells each delta, and sums the usage of start and delta", async () => {
    script = [stream(["(return", " 42)"])];
    const c = collector();
    const r = await client().complete({ messages, onText: c.onText });
    expect(received[0].url).toBe("/v1/messages");
    const body = received[0].body as { stream?: boolean; system: Array<{ cache_control?: unknown }>; messages: Array<{ content: Array<{ cache_control?: unknown }> }> };
    expect(body.stream).toBe(true);
    expect(body.system[0].cache_control).toEqual({ type: "ephemeral" });
    expect(body.messages[0].content[0].cache_control).toEqual({ type: "ephemeral" });
    expect(c.deltas).toEqual([["(return", 1], [" 42)", 1]]);
    expect(r).toEqual({ content: "(return 42)", usage: { inputTokens: 40, outputTokens: 9, cachedTokens: 30, cacheWriteTokens: 6 }, model: "claude-fake-2026" });
  });

  // As the whole reply without usage: none, so the run counts the prompt itself rather than zero tokens.
  it("reports no usage for a stream that carries none (a gateway's), as for a whole reply without it", async () => {
    const bare = stream(["(return 42)"]).events.map((e) => {
      const { usage: _, ...data } = e.data as { usage?: unknown; message?: { usage?: unknown } };
      if (data.message === undefined) return { ...e, data };
      const { usage: __, ...message } = data.message;
      return { ...e, data: { ...data, message } };
    });
    script = [{ events: bare }];
    const r = await client().complete({ messages, onText: () => undefined });
    expect(r).toEqual({ content: "(return 42)", model: "claude-fake-2026" });
  });

  // A gateway whose message_start carries no usage, message_delta the output tokens alone: the
  // prompt's size is not known, and 0 input tokens would pass any token budget and cost nothing.
  it("reports no usage for a stream that gives the output tokens alone", async () => {
    const events = stream(["(return 42)"]).events.map((e) => {
      const data = e.data as { type: string; message?: Record<string, unknown> };
      if (data.type !== "message_start" || data.message === undefined) return e;
      const { usage: _, ...message } = data.message;
      return { ...e, data: { ...data, message } };
    });
    script = [{ events }];
    const r = await client().complete({ messages, onText: () => undefined });
    expect(r).toEqual({ content: "(return 42)", model: "claude-fake-2026" });
  });

  it("retries a stream cut half-way (no stop reason) instead of taking the half reply", async () => {
    script = [{ events: stream(["(ret"]).events.slice(0, 4), cut: true }, stream(["(return 1)"])];
    const c = collector();
    const r = await client().complete({ messages, onText: c.onText });
    expect(received).toHaveLength(2);
    expect(c.deltas).toEqual([["(ret", 1], ["(return 1)", 2]]);
    expect(r.content).toBe("(return 1)");
  });

  // Anthropic sends an overload that strikes after the 200 as an error event: the 529 of a stream.
  it("retries a stream's overloaded error event as a server error, the new attempt starting the reply over", async () => {
    const s = stream(["(ret"]);
    script = [{ events: [...s.events.slice(0, 4), { event: "error", data: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }] }, stream(["(return 1)"])];
    const retries: RetryInfo[] = [];
    const c = collector();
    const r = await anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", retryBaseMs: 5, env: {}, onRetry: (i) => retries.push(i) }).complete({ messages, onText: c.onText });
    expect(retries.map((i) => i.error.kind)).toEqual(["server"]);
    expect(retries[0].error.message).toBe("anthropic:claude-fake: error in the stream: overloaded_error: Overloaded");
    expect(c.deltas).toEqual([["(ret", 1], ["(return 1)", 2]]);
    expect(r.content).toBe("(return 1)");
  });

  // The SDK ends a stream quietly when the attempt's signal fires, which looked like a stream cut short.
  it("says a reply that stalls half-way timed out, and that the caller's abort was no failure to retry", async () => {
    script = [{ events: stream(["(ret"]).events.slice(0, 4), hold: true }];
    const retries: RetryInfo[] = [];
    const llm = anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", timeoutMs: 300, maxRetries: 0, env: {}, onRetry: (i) => retries.push(i) });
    const e = await failure(llm.complete({ messages, onText: () => undefined }));
    expect([e.kind, e.message]).toEqual(["timeout", "anthropic:claude-fake: the reply stalled: nothing received for 300 ms"]);
    script = [{ events: stream(["(ret"]).events.slice(0, 4), hold: true }];
    const ctl = new AbortController();
    const aborted = failure(anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", env: {}, onRetry: (i) => retries.push(i) }).complete({ messages, signal: ctl.signal, onText: () => ctl.abort() }));
    expect((await aborted).kind).toBe("aborted");
    expect(retries).toEqual([]);
  });

  // Nothing follows message_stop: a server that holds the connection open after it kept the
  // reply waiting for the stall timer, which then failed the attempt and asked again.
  it("takes the reply at message_stop from a server that holds the connection open after it", async () => {
    script = [{ ...stream(["(return", " 42)"]), hold: true }, stream(["(other)"])];
    const r = await anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", timeoutMs: 600_000, env: {} }).complete({ messages, onText: () => undefined });
    expect([received.length, r.content, r.usage?.outputTokens]).toEqual([1, "(return 42)", 9]);
  }, 30_000);

  it("does not retry a stream's error event for a bad request, and names no HTTP status it never had", async () => {
    const s = stream([]);
    script = [{ events: [...s.events.slice(0, 2), { event: "error", data: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long" } } }] }];
    const e = await failure(client().complete({ messages, onText: () => undefined }));
    expect(e.kind).toBe("http");
    expect(e.message).toBe("anthropic:claude-fake: error in the stream: invalid_request_error: prompt is too long");
    expect(e.details.status).toBeUndefined();
    expect(received).toHaveLength(1);
  });
});

describe("aiSdkLlm streaming", () => {
  // The provider ends its stream (and gives the finish part) only when the body ends: a server
  // that holds the connection open after [DONE] kept the reply waiting for the stall timer, which
  // then failed the attempt and asked again, paying for the reply once more.
  it("takes the reply at [DONE] from a server that holds the connection open after it", async () => {
    script = [{ ...chatStream(["(+ 1", " 2)"], { prompt_tokens: 20, completion_tokens: 3 }), hold: true }, chatStream(["(other)"])];
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
    const r = await aiSdkLlm({ model: provider.chatModel("fake-model"), timeoutMs: 600_000 }).complete({ messages, onText: () => undefined });
    expect([received.length, r.content, r.usage?.outputTokens]).toEqual([1, "(+ 1 2)", 3]);
  }, 30_000);

  it("streams through streamText: deltas as they come, usage from the finish part", async () => {
    script = [chatStream(["(+ 1", " 2)"], { prompt_tokens: 20, completion_tokens: 3 })];
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
    const c = collector();
    const r = await aiSdkLlm({ model: provider.chatModel("fake-model"), retryBaseMs: 5 }).complete({ messages, onText: c.onText });
    expect(received[0].body).toMatchObject({ model: "fake-model", stream: true });
    expect(c.deltas).toEqual([["(+ 1", 1], [" 2)", 1]]);
    expect(r.content).toBe("(+ 1 2)");
    expect(r.usage).toMatchObject({ inputTokens: 20, outputTokens: 3 });
  });

  // The provider calls a stream without a finish reason cut short, [DONE] or not; a server that
  // leaves every finish_reason null but ends with [DONE] was asked 4 times and the run failed.
  it("takes a stream that ends with [DONE] but no finish reason as whole, and retries one that ends without either", async () => {
    const noFinish = chatStream(["(count", " x)"]).events.filter((e) => (e.data as { choices?: Array<{ finish_reason?: unknown }> }).choices?.[0]?.finish_reason !== "stop");
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
    const llm = aiSdkLlm({ model: provider.chatModel("fake-model"), retryBaseMs: 5 });
    script = [{ events: noFinish }];
    const r = await llm.complete({ messages, onText: () => undefined });
    expect([received.length, r.content, r.usage?.outputTokens, r.truncated]).toEqual([1, "(count x)", 5, undefined]);
    received = [];
    script = [{ events: noFinish.slice(0, -2) }, chatStream(["(other)"])];
    expect([(await llm.complete({ messages, onText: () => undefined })).content, received.length]).toEqual(["(other)", 2]);
  });

  it("retries a stream that fails with a server error, as the plain path does", async () => {
    script = [{ status: 503 }, chatStream(["(inc 1)"])];
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake" });
    const c = collector();
    const r = await aiSdkLlm({ model: provider.chatModel("fake-model"), retryBaseMs: 5 }).complete({ messages, onText: c.onText });
    expect(received).toHaveLength(2);
    expect(c.deltas).toEqual([["(inc 1)", 2]]);
    expect(r.content).toBe("(inc 1)");
  });
  it("retries an error chunk in the stream as the HTTP clients do, and says what it was", async () => {
    const broken = (error: Record<string, unknown>): Sse => ({ events: [...chatStream(["(cou"]).events.slice(0, 2), { data: { error } }] });
    script = [broken({ message: "The server had an error while processing your request.", type: "server_error" }), chatStream(["(count x)"]), broken({ message: "prompt is too long", type: "invalid_request_error" })];
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake" });
    const retries: RetryInfo[] = [];
    const c = collector();
    const llm = aiSdkLlm({ model: provider.chatModel("fake-model"), retryBaseMs: 5, onRetry: (i) => retries.push(i) });
    const r = await llm.complete({ messages, onText: c.onText });
    expect(retries.map((i) => [i.error.kind, i.error.message])).toEqual([["server", "ai-sdk:fake.chat:fake-model: error in the stream: server_error: The server had an error while processing your request."]]);
    expect(c.deltas).toEqual([["(cou", 1], ["(count x)", 2]]);
    expect(r.content).toBe("(count x)");
    const e = await failure(llm.complete({ messages, onText: () => undefined }));
    expect([e.kind, e.message]).toEqual(["http", "ai-sdk:fake.chat:fake-model: error in the stream: invalid_request_error: prompt is too long"]);
    expect(received).toHaveLength(3);
  });

  // OpenRouter ends a choice whose upstream failed half-way with finish_reason "error"; the provider maps it to "other".
  it("retries a reply whose choice ends in an error, streamed or whole, instead of taking the half reply, as the OpenAI client does", async () => {
    const s = chatStream(["(cou"]);
    const failed = { data: { id: "c1", object: "chat.completion.chunk", created: 0, model: "fake-served", choices: [{ index: 0, delta: { content: "" }, finish_reason: "error", error: { message: "Provider disconnected", code: 502 } }] } };
    const whole = (content: string, finish: string) => ({ whole: { id: "c1", object: "chat.completion", created: 0, model: "fake-served", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: finish }], usage: { prompt_tokens: 5, completion_tokens: 2 } } });
    script = [{ events: [...s.events.slice(0, 2), failed, { data: "[DONE]" }] }, chatStream(["(count x)"]), whole("(cou", "error"), whole("(count y)", "stop")];
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake" });
    const retries: RetryInfo[] = [];
    const llm = aiSdkLlm({ model: provider.chatModel("fake-model"), retryBaseMs: 5, onRetry: (i) => retries.push(i) });
    const streamed = await llm.complete({ messages, onText: () => undefined });
    const plain = await llm.complete({ messages });
    expect([streamed.content, plain.content]).toEqual(["(count x)", "(count y)"]);
    expect(retries.map((i) => i.error.kind)).toEqual(["server", "server"]);
  });
});

describe("a connection dropped by a proxy or load balancer", () => {
  const provider = () => createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
  const anthropicStream = (pieces: string[]): Sse => ({
    events: [
      { event: "message_start", data: { type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-fake", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 4, output_tokens: 1 } } } },
      { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
      ...pieces.map((p) => ({ event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } } })),
      { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } } },
      { event: "message_stop", data: { type: "message_stop" } },
    ],
  });
  const clients = (onRetry: (i: RetryInfo) => void) =>
    [
      ["openai", openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {}, onRetry }), chatStream, 2],
      ["anthropic", anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", retryBaseMs: 5, env: {}, onRetry }), anthropicStream, 3],
      ["ai-sdk", aiSdkLlm({ model: provider().chatModel("fake-model"), retryBaseMs: 5, onRetry }), chatStream, 2],
    ] as const;

  it("half-way through a reply is a connection error, retried, whether the socket is closed or reset", async () => {
    const retries: RetryInfo[] = [];
    for (const [name, client, stream, head] of clients((i) => retries.push(i))) {
      for (const drop of ["fin", "reset"] as const) {
        script = [{ events: stream(["(cou"]).events.slice(0, head), drop }, stream(["(count x)"])];
        received = [];
        retries.length = 0;
        const c = collector();
        const r = await client.complete({ messages, onText: c.onText });
        expect([name, drop, received.length, retries.map((i) => i.error.kind), r.content]).toEqual([name, drop, 2, ["connection"], "(count x)"]);
        expect(c.deltas.at(-1)).toEqual(["(count x)", 2]);
      }
    }
  });

  it("half-way through a whole (not streamed) reply is a connection error too, retried", async () => {
    const completion = { id: "c1", object: "chat.completion", created: 0, model: "fake-served", choices: [{ index: 0, message: { role: "assistant", content: "(count x)" }, finish_reason: "stop" }] };
    const message = { id: "m1", type: "message", role: "assistant", model: "claude-fake", content: [{ type: "text", text: "(count x)" }], stop_reason: "end_turn", usage: { input_tokens: 4, output_tokens: 9 } };
    const retries: RetryInfo[] = [];
    for (const [name, client] of clients((i) => retries.push(i))) {
      const whole = name === "anthropic" ? message : completion;
      for (const drop of ["fin", "reset"] as const) {
        script = [{ whole, drop }, { whole }];
        received = [];
        retries.length = 0;
        const r = await client.complete({ messages });
        expect([name, drop, received.length, retries.map((i) => i.error.kind), r.content]).toEqual([name, drop, 2, ["connection"], "(count x)"]);
      }
    }
  });

  // The server has charged for the whole reply: asking again would pay for it twice.
  it("after the whole reply was read (finish reason and usage, no [DONE] or message_stop) takes it, without asking again", async () => {
    // aiSdkLlm's provider gives its finish and usage only when the body ends: a drop after them
    // was asked again, 4 times in all, and the run failed.
    for (const [name, client, stream] of clients(() => undefined)) {
      for (const drop of ["fin", "reset"] as const) {
        const whole = stream(["(count", " x)"]).events;
        script = [{ events: whole.slice(0, -1), drop }, stream(["(other)"])];
        received = [];
        const r = await client.complete({ messages, onText: () => undefined });
        expect([name, drop, received.length, r.content, r.usage?.outputTokens, r.truncated]).toEqual([name, drop, 1, "(count x)", name === "anthropic" ? 9 : 5, undefined]);
      }
    }
  });
});

describe("a reply cut at the output token limit", () => {
  it("is flagged truncated by each client, and only then", async () => {
    const usage = { prompt_tokens: 20, completion_tokens: 3 };
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
    const clients = {
      openai: [openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {} }), (cut: boolean) => chatStream(["(def x [1"], usage, cut ? "length" : "stop")],
      anthropic: [
        anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", retryBaseMs: 5, env: {} }),
        (cut: boolean) => ({
          events: [
            { event: "message_start", data: { type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-fake", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 4, output_tokens: 1 } } } },
            { event: "content_block_start", data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } } },
            { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "(def x [1" } } },
            { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
            { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: cut ? "max_tokens" : "end_turn", stop_sequence: null }, usage: { output_tokens: 9 } } },
            { event: "message_stop", data: { type: "message_stop" } },
          ],
        }),
      ],
      "ai-sdk": [aiSdkLlm({ model: provider.chatModel("fake-model"), retryBaseMs: 5 }), (cut: boolean) => chatStream(["(def x [1"], usage, cut ? "length" : "stop")],
    } as const;
    for (const [name, [client, reply]] of Object.entries(clients)) {
      for (const cut of [true, false]) {
        script = [reply(cut)];
        const r = await client.complete({ messages, onText: () => undefined });
        expect([name, cut, r.content, r.truncated]).toEqual([name, cut, "(def x [1", cut ? true : undefined]);
      }
    }
  });
});

// A server or gateway that does not stream answers a streamed request with the whole reply, as JSON.
describe("a server that answers a stream with the whole reply", () => {
  it("is read as the whole reply, told as one piece, in one request, by each HTTP client", async () => {
    const completion = { id: "c1", object: "chat.completion", created: 0, model: "fake-served", choices: [{ index: 0, message: { role: "assistant", content: "(count x)" }, finish_reason: "length" }], usage: { prompt_tokens: 5, completion_tokens: 2 } };
    const message = { id: "m1", type: "message", role: "assistant", model: "claude-fake", content: [{ type: "text", text: "(count x)" }], stop_reason: "max_tokens", usage: { input_tokens: 5, output_tokens: 2 } };
    const clients = [
      [openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {} }), completion],
      [anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", retryBaseMs: 5, env: {} }), message],
    ] as const;
    for (const [client, whole] of clients) {
      script = [{ whole }];
      received = [];
      const c = collector();
      const r = await client.complete({ messages, onText: c.onText });
      expect([client.name, received.length, received[0].body.stream, c.deltas, r.content, r.usage?.inputTokens, r.truncated]).toEqual([client.name, 1, true, [["(count x)", 1]], "(count x)", 5, true]);
    }
  });

  // A base URL that points at a web site (a web app's port, /v1 left off) answers 200 with a page.
  // Streamed, it was retried as a stream cut short; unstreamed it was three messages: the text quoted
  // ("not a chat completion (got text: ...)", "not a message (got ...)") or, by the AI SDK client,
  // an "http" error "HTTP 200: Invalid JSON response".
  it("a web page, not the API, is said as such at once, streamed or not, by each HTTP client", async () => {
    const page = "<!DOCTYPE html><html><head><title>My App</title></head><body><div id=root></div></body></html>";
    const clients = [
      openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {} }),
      anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", retryBaseMs: 5, env: {} }),
      aiSdkLlm({ model: createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-test" }).chatModel("m"), retryBaseMs: 5 }),
    ];
    for (const streamed of [true, false]) {
      for (const client of clients) {
        script = [{ page }, { page }, { page }, { page }];
        received = [];
        const e = await failure(client.complete(streamed ? { messages, onText: () => undefined } : { messages }));
        expect([streamed, client.name, e.kind, received.length]).toEqual([streamed, client.name, "malformed", 1]);
        expect(e.message).toMatch(/answered with a web page, not the API \(is the base URL right\?\)/);
        if (!streamed) expect(e.message).toBe(`${client.name}: the server answered with a web page, not the API (is the base URL right?): My App (an HTML page)`);
      }
    }
  });

  // The AI SDK's provider reads the body as events itself, so the reply is lost to it: it is
  // asked for again unstreamed, and the client's later requests are sent unstreamed at once.
  it("by the AI SDK client: asked again unstreamed once, then not streamed any more", async () => {
    const completion = { id: "c1", object: "chat.completion", created: 0, model: "fake-served", choices: [{ index: 0, message: { role: "assistant", content: "(count x)" }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 2 } };
    const llm = aiSdkLlm({ model: createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-test" }).chatModel("m"), retryBaseMs: 5 });
    for (const expected of [[true, undefined], [undefined]]) {
      script = [{ whole: completion }, { whole: completion }];
      received = [];
      const c = collector();
      const r = await llm.complete({ messages, onText: c.onText });
      expect([received.map((q) => q.body.stream), c.deltas, r.content, r.usage?.inputTokens]).toEqual([expected, [["(count x)", 1]], "(count x)", 5]);
    }
  });
});

// The run prices its turns by the model the reply names, else the client's name ("openai:gpt-4o"), which no price matches.
describe("a reply that names no model", () => {
  it("names the model asked for, streamed or whole, by each client", async () => {
    const completion = { id: "c1", object: "chat.completion", created: 0, choices: [{ index: 0, message: { role: "assistant", content: "(count x)" }, finish_reason: "stop" }], usage: { prompt_tokens: 5, completion_tokens: 2 } };
    const message = { id: "m1", type: "message", role: "assistant", content: [{ type: "text", text: "(count x)" }], stop_reason: "end_turn", usage: { input_tokens: 5, output_tokens: 2 } };
    const anonymous = (s: Sse): Sse => ({ events: s.events.map((e) => (typeof e.data === "object" && e.data !== null ? { ...e, data: JSON.parse(JSON.stringify(e.data).replace(/"model":"[^"]*",?/g, "")) as unknown } : e)) });
    const start = { type: "message_start", message: { id: "m1", type: "message", role: "assistant", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } };
    const anthropicStream: Sse = {
      events: [
        { event: "message_start", data: start },
        { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "(count x)" } } },
        { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } } },
        { event: "message_stop", data: { type: "message_stop" } },
      ],
    };
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
    const clients = [
      [openaiLlm({ model: "gpt-4o", baseURL: `${base}/v1`, apiKey: "sk-test", env: {} }), completion, anonymous(chatStream(["(count x)"]))],
      [anthropicLlm({ model: "claude-sonnet-4-5", baseURL: base, apiKey: "sk-ant-test", env: {} }), message, anthropicStream],
      [aiSdkLlm({ model: provider.chatModel("gpt-4o") }), completion, anonymous(chatStream(["(count x)"]))],
    ] as const;
    const models: unknown[] = [];
    for (const [client, whole, stream] of clients) {
      script = [{ whole }, stream];
      models.push((await client.complete({ messages })).model, (await client.complete({ messages, onText: () => undefined })).model);
    }
    expect(models).toEqual(["gpt-4o", "gpt-4o", "claude-sonnet-4-5", "claude-sonnet-4-5", "gpt-4o", "gpt-4o"]);
  });
});

describe("offline clients", () => {
  it("a scripted reply comes piece by piece, and the pieces make the reply", async () => {
    const reply = "Thinking.\n```clojure\n(return  [1 2])\n```\n";
    const c = collector();
    const r = await scriptedLlm([reply]).complete({ messages, onText: c.onText });
    expect(c.deltas.length).toBeGreaterThan(3);
    expect(c.deltas.map(([d]) => d).join("")).toBe(reply);
    expect(r.content).toBe(reply);
  });
});

// An event that is JSON but no event of the API (null, a list, choices null): a server's garbage,
// which asking again repeats. It read as a stream cut short (connection, retried, paid for again).
describe("an event that is JSON but no event", () => {
  it("is malformed, not retried, by each client", async () => {
    const s = chatStream(["(count x)"]);
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
    const openai = [openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", retryBaseMs: 5, env: {} }), aiSdkLlm({ model: provider.chatModel("m"), retryBaseMs: 5 })];
    const results: unknown[] = [];
    for (const junk of [null, [1, 2], 5, "\"text\"", { choices: null }, { choices: "x" }]) {
      for (const client of openai) {
        script = [{ events: [s.events[0], { data: junk }, { data: "[DONE]" }] }, s, s, s];
        received = [];
        const e = await client.complete({ messages, onText: () => undefined }).then(() => ({ kind: "none" }), (e: { kind?: string; message?: string }) => e);
        results.push([client.name, junk, e.kind, received.length]);
      }
    }
    const start = { type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-fake", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 1 } } };
    const anthropic = anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", retryBaseMs: 5, env: {} });
    const stop = [
      { event: "message_delta", data: { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 2 } } },
      { event: "message_stop", data: { type: "message_stop" } },
    ];
    for (const [event, junk] of [["message_start", null], ["message_start", [1, 2]], ["message_delta", null], ["content_block_delta", 5]] as const) {
      script = [{ events: [...(event === "message_start" ? [] : [{ event: "message_start", data: start }]), { event, data: junk }, { event: "message_stop", data: { type: "message_stop" } }] }, { events: [{ event: "message_start", data: start }, { event: "content_block_delta", data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "(count x)" } } }, ...stop] }];
      received = [];
      const e = await anthropic.complete({ messages, onText: () => undefined }).then(() => ({ kind: "none" }), (e: { kind?: string; message?: string }) => e);
      results.push([anthropic.name, junk, e.kind, received.length]);
    }
    expect(results).toEqual(results.map((r) => [(r as unknown[])[0], (r as unknown[])[1], "malformed", 1]));
  });
});

// The quote of a reply that is no completion was cut at 80 characters wherever they ended: a
// key the server echoed across the cut was left in part ("sk-proj-0123"), which no mask finds.
describe("a reply that is no completion, quoted in the error", () => {
  it("is cut before a word the cut would halve, by each client, streamed or not", async () => {
    const key = "sk-proj-0123456789abcdefghijKLMNOPQRSTUVWXYZ";
    const echo = `${"p ".repeat(34)}${key} and more`;
    const openai = openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: key, maxRetries: 0, env: {} });
    const anthropic = anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: key, maxRetries: 0, env: {} });
    const cases: Array<[Llm, Behaviour, boolean]> = [
      [openai, { events: [{ data: [echo] }] }, true],
      [openai, { whole: echo }, false],
      [anthropic, { events: [{ event: "message_start", data: [echo] }] }, true],
      [anthropic, { whole: echo }, false],
    ];
    for (const [client, behaviour, streamed] of cases) {
      script = [behaviour];
      const e = await failure(client.complete({ messages, ...(streamed ? { onText: () => undefined } : {}) }));
      expect([client.name, streamed, e.kind]).toEqual([client.name, streamed, "malformed"]);
      expect(e.message).toContain("p p p");
      expect(e.message).not.toContain(key.slice(0, 10));
    }
  });
});

// The Anthropic SDK warns on the console at each request for a model it lists as deprecated
// (claude-sonnet-4-5, the model the docs suggest): two lines on the host's stderr every turn.
describe("the Anthropic SDK's deprecation warning", () => {
  it("reaches the console once per model a client asks, not at every request", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const reply = (model: string) => ({ whole: { id: "m1", type: "message", role: "assistant", model, content: [{ type: "text", text: "(count x)" }], stop_reason: "end_turn", usage: { input_tokens: 4, output_tokens: 9 } } });
      const client = anthropicLlm({ model: "claude-sonnet-4-5", baseURL: base, apiKey: "sk-ant-test", maxRetries: 0, env: {} });
      script = [reply("claude-sonnet-4-5"), reply("claude-sonnet-4-5"), reply("claude-sonnet-4-5"), reply("claude-opus-4-5"), reply("claude-opus-4-5")];
      for (const model of [undefined, undefined, undefined, "claude-opus-4-5", "claude-opus-4-5"]) {
        expect((await client.complete({ messages, ...(model === undefined ? {} : { model }) })).content).toBe("(count x)");
      }
      expect(received).toHaveLength(5);
      expect(warn.mock.calls.map((c) => String(c[0]).split("'")[1])).toEqual(["claude-sonnet-4-5", "claude-opus-4-5"]);
    } finally {
      warn.mockRestore();
    }
  });
});
