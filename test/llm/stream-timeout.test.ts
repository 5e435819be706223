// What a client's `timeoutMs` bounds for a streamed reply: the wait for the server, before its
// first event and between two events, not the length of a healthy stream. A fake server on
// 127.0.0.1 sends each text delta only when the test says, and the test moves fake timers
// between them: the clock, not the machine's speed, decides what outlasts the timeout.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { wrapLanguageModel } from "ai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { aiSdkLlm } from "../../src/llm/ai-sdk.js";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { openaiLlm } from "../../src/llm/openai.js";
import type { RetryInfo } from "../../src/llm/retry.js";
import type { ChatMessage, Llm } from "../../src/llm/types.js";
import { localServer } from "../support/local-server.js";

const TIMEOUT = 10_000;

/** A reply's SSE events in bursts: the first goes out at once, each next one when `next()` is called. */
type Bursts = string[][];

let base: string;
let script: Bursts[] = [];
let requests = 0;
let pending: { res: ServerResponse; bursts: Bursts } | undefined;

function sse(data: unknown, event?: string): string {
  return `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}

function handle(_req: IncomingMessage, res: ServerResponse): void {
  requests++;
  const bursts = [...(script.shift() ?? [])];
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  pending = { res, bursts };
  next();
}

/** Sends the reply's next burst, ending the reply after its last; a reply whose bursts ran out stays open (a stall). */
function next(): void {
  const p = pending;
  const burst = p?.bursts.shift();
  if (p === undefined || burst === undefined) return;
  for (const e of burst) p.res.write(e);
  if (p.bursts.length === 0 && burst.at(-1)?.startsWith("data: [DONE]")) p.res.end();
}

localServer((req, res) => handle(req, res), {
  listening: (origin) => (base = origin),
  reset: () => {
    script = [];
    requests = 0;
    pending = undefined;
  },
});

/** An OpenAI chat-completions stream: a burst per piece, the finish and usage with the last. */
function chatStream(pieces: string[], last: "finish" | "stall" = "finish"): Bursts {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => sse({ id: "c1", object: "chat.completion.chunk", created: 0, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }] });
  const bursts = pieces.map((p) => [chunk({ content: p })]);
  bursts[0].unshift(chunk({ role: "assistant", content: "" }));
  if (last === "finish") bursts.push([chunk({}, "stop"), sse({ id: "c1", object: "chat.completion.chunk", created: 0, model: "fake", choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }), sse("[DONE]")]);
  return bursts;
}

/** An Anthropic messages stream, shaped the same way ([DONE] is not Anthropic's: it only marks the end for `next`). */
function anthropicStream(pieces: string[], last: "finish" | "stall" = "finish"): Bursts {
  const bursts = pieces.map((p) => [sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: p } }, "content_block_delta")]);
  bursts[0].unshift(
    sse({ type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-fake", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } }, "message_start"),
    sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start"),
  );
  if (last === "finish") {
    bursts.push([
      sse({ type: "content_block_stop", index: 0 }, "content_block_stop"),
      sse({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 4 } }, "message_delta"),
      sse({ type: "message_stop" }, "message_stop"),
      "data: [DONE]\n\n",
    ]);
  }
  return bursts;
}

const messages: ChatMessage[] = [{ role: "user", content: "Count the orders." }];
const PIECES = ["(count", " data", "/orders", ")"];

function clients(retries: RetryInfo[]): Array<[string, Llm, typeof chatStream]> {
  const onRetry = (i: RetryInfo) => {
    retries.push(i);
    // The retry's wait (0 ms) is a fake timer too: let it pass once it is set.
    setImmediate(() => vi.advanceTimersByTime(1));
  };
  const retry = { timeoutMs: TIMEOUT, maxRetries: 1, retryBaseMs: 0, onRetry };
  const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
  return [
    ["openai", openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "sk-test", env: {}, ...retry }), chatStream],
    ["anthropic", anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "sk-ant-test", env: {}, ...retry }), anthropicStream],
    ["ai-sdk", aiSdkLlm({ model: provider.chatModel("fake"), ...retry }), chatStream],
  ];
}

describe("a streamed reply and the client's timeoutMs", () => {
  // Only the timers: the sockets and setImmediate stay real.
  beforeEach(() => void vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }));
  afterEach(() => void vi.useRealTimers());

  it("a healthy stream longer than timeoutMs, a piece every 0.6 × timeoutMs, is read whole in one request", async () => {
    const retries: RetryInfo[] = [];
    for (const [name, llm, stream] of clients(retries)) {
      script = [stream(PIECES), stream(PIECES)];
      requests = 0;
      retries.length = 0;
      const deltas: Array<[string, number]> = [];
      // Each piece is followed by 0.6 × timeoutMs of silence: 2.4 × timeoutMs in all.
      const r = await llm.complete({
        messages,
        onText: (d, a) => {
          deltas.push([d, a]);
          vi.advanceTimersByTime(TIMEOUT * 0.6);
          next();
        },
      });
      expect([name, requests, retries.map((i) => i.error.kind), r.content, deltas.map(([, a]) => a)]).toEqual([name, 1, [], "(count data/orders)", [1, 1, 1, 1]]);
    }
  });

  it("a stream that sends nothing for timeoutMs after its first pieces still times out, and is retried", async () => {
    const retries: RetryInfo[] = [];
    for (const [name, llm, stream] of clients(retries)) {
      script = [stream(PIECES.slice(0, 2), "stall"), stream(["(count x)"])];
      requests = 0;
      retries.length = 0;
      const deltas: Array<[string, number]> = [];
      const r = await llm.complete({
        messages,
        onText: (d, a) => {
          deltas.push([d, a]);
          // Just short of the timeout after the first piece; the whole of it after the second, which nothing follows.
          if (a === 1) vi.advanceTimersByTime(deltas.length === 1 ? TIMEOUT - 1 : TIMEOUT);
          next();
        },
      });
      expect([name, requests, retries.map((i) => [i.error.kind, i.error.message.replace(/^[^ ]+ /, "")]), r.content, deltas]).toEqual([
        name,
        2,
        [["timeout", `the reply stalled: nothing received for ${TIMEOUT} ms`]],
        "(count x)",
        [["(count", 1], [" data", 1], ["(count x)", 2]],
      ]);
    }
  });

  // The finish reason and the usage came, then nothing (no [DONE] or message_stop), the connection
  // held open: the reply is whole and paid for. aiSdkLlm, whose provider gives its finish part
  // only when the body ends, failed the attempt and asked again (2 requests); openaiLlm took it.
  it("a stream that stalls after its finish reason is taken at the timeout, in one request", async () => {
    const retries: RetryInfo[] = [];
    for (const [name, llm, stream] of clients(retries)) {
      const held = stream(PIECES);
      // Its last burst, less the end-of-stream markers: the server holds the connection open after the rest.
      held[held.length - 1] = held[held.length - 1].filter((e) => !e.includes("[DONE]") && !e.includes("message_stop"));
      script = [held, stream(["(count x)"])];
      requests = 0;
      retries.length = 0;
      let told = 0;
      const reply = llm.complete({ messages, onText: () => void (told++, next()) });
      while (told < PIECES.length) await new Promise((resolve) => setImmediate(resolve));
      // The last burst, the finish, is on its way: the client has had time to read it when the timeout passes.
      for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
      vi.advanceTimersByTime(TIMEOUT);
      const r = await reply;
      expect([name, requests, retries.map((i) => i.error.kind), r.content]).toEqual([name, 1, [], "(count data/orders)"]);
    }
  });

  // A model wrapped in middleware keeps its provider's fetch out of reach, so no [DONE] watcher
  // ends the body: a server holding the connection open after [DONE] failed every attempt.
  it("aiSdkLlm over a model wrapped in middleware takes the reply at the timeout after [DONE], in one request", async () => {
    const retries: RetryInfo[] = [];
    const provider = createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "sk-fake", includeUsage: true });
    const onRetry = (i: RetryInfo) => void retries.push(i);
    const llm = aiSdkLlm({ model: wrapLanguageModel({ model: provider.chatModel("fake"), middleware: { specificationVersion: "v3" } }), timeoutMs: TIMEOUT, maxRetries: 1, retryBaseMs: 0, onRetry });
    // An empty last burst, never sent: the connection stays open after [DONE].
    script = [[...chatStream(PIECES), []], chatStream(["(count x)"])];
    let told = 0;
    const reply = llm.complete({ messages, onText: () => void (told++, next()) });
    while (told < PIECES.length) await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    vi.advanceTimersByTime(TIMEOUT);
    const r = await reply;
    expect([requests, retries.map((i) => i.error.kind), r.content, r.usage?.outputTokens]).toEqual([1, [], "(count data/orders)", 4]);
  });

  it("a stream whose first event never comes times out as a reply that never came", async () => {
    const retries: RetryInfo[] = [];
    for (const [name, llm] of clients(retries)) {
      script = [[], []];
      requests = 0;
      const reply = failure(llm.complete({ messages, onText: () => undefined }));
      // Each attempt: once the server has sent its headers, and the client has had time to read them, the timeout passes.
      for (const attempt of [1, 2]) {
        while (requests < attempt) await new Promise((resolve) => setImmediate(resolve));
        for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
        vi.advanceTimersByTime(TIMEOUT);
      }
      const e = await reply;
      expect([name, e.kind, e.message.replace(/^[^ ]+ /, ""), retries.map((i) => i.error.message.replace(/^[^ ]+ /, ""))]).toEqual([name, "timeout", `no reply within ${TIMEOUT} ms (after 2 attempts)`, [`no reply within ${TIMEOUT} ms`]]);
      retries.length = 0;
    }
  });
});
