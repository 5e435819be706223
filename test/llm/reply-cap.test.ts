// A server that keeps sending (a runaway stream of text deltas, an endless JSON body) must not
// have the whole of it held in memory: each client cuts the reply at `maxReplyBytes` and fails
// the attempt as `malformed`, once (asking again would only pay for the same flood), closing the
// connection. The fake server sends far past the cap and then ends the reply properly, so a
// client without the cap reads a reply of megabytes instead of failing.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { extractReasoningMiddleware, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { aiSdkLlm } from "../../src/llm/ai-sdk.js";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { LlmError } from "../../src/llm/errors.js";
import { openaiLlm } from "../../src/llm/openai.js";
import { MAX_REPLY_BYTES, retrySettings } from "../../src/llm/retry.js";
import type { Llm } from "../../src/llm/types.js";
import { localServer } from "../support/local-server.js";

const CAP = 64 * 1024;
/** What the server sends before it ends the reply: 64 times the cap. */
const FLOOD = 64 * CAP;

let base: string;
let requests = 0;
let sent = 0;
let pieces = 0;
let closedEarly = false;

const sse = (data: unknown, event?: string): string => `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null): string => sse({ id: "c1", object: "chat.completion.chunk", created: 0, model: "fake", choices: [{ index: 0, delta, finish_reason: finish }] });
const delta = (text: string): string => sse({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }, "content_block_delta");

/** Writes `piece` until FLOOD bytes went out or the client hung up (waiting on backpressure), then `end`. */
function flood(res: ServerResponse, head: string, piece: string, end: string): void {
  res.on("close", () => (closedEarly ||= sent < FLOOD));
  res.write(head);
  const pump = (): void => {
    while (sent < FLOOD && !res.destroyed) {
      sent += piece.length;
      pieces++;
      if (!res.write(piece)) {
        res.once("drain", pump);
        return;
      }
    }
    if (!res.destroyed) res.end(end);
  };
  pump();
}

function handle(req: IncomingMessage, res: ServerResponse, body: string): void {
  requests++;
  const streamed = (JSON.parse(body) as { stream?: boolean }).stream === true;
  const text = "x".repeat(1000);
  if (req.url?.includes("/messages")) {
    if (!streamed) {
      res.writeHead(200, { "content-type": "application/json" });
      return flood(res, '{"id":"m1","type":"message","role":"assistant","model":"claude-fake","stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":4},"content":[{"type":"text","text":"', text, '"}]}');
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const start = sse({ type: "message_start", message: { id: "m1", type: "message", role: "assistant", model: "claude-fake", content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } } }, "message_start") + sse({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }, "content_block_start");
    const end = sse({ type: "content_block_stop", index: 0 }, "content_block_stop") + sse({ type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 4 } }, "message_delta") + sse({ type: "message_stop" }, "message_stop");
    return flood(res, start, delta(text), end);
  }
  if (!streamed) {
    res.writeHead(200, { "content-type": "application/json" });
    return flood(res, '{"id":"c1","object":"chat.completion","created":0,"model":"fake","usage":{"prompt_tokens":3,"completion_tokens":4},"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"', text, '"}}]}');
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  flood(res, chunk({ role: "assistant", content: "" }), chunk({ content: text }), chunk({}, "stop") + "data: [DONE]\n\n");
}

localServer(handle, {
  listening: (origin) => (base = origin),
  reset: () => {
    requests = 0;
    sent = 0;
    pieces = 0;
    closedEarly = false;
  },
});

const options = { maxReplyBytes: CAP, maxRetries: 3, retryBaseMs: 1 };
const clients: Array<[string, () => Llm]> = [
  ["openaiLlm", () => openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "k", ...options })],
  ["anthropicLlm", () => anthropicLlm({ model: "claude-fake", baseURL: base, apiKey: "k", ...options })],
  ["aiSdkLlm", () => aiSdkLlm({ model: createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "k" }).chatModel("fake"), ...options })],
];

/** A model wrapped in middleware keeps its provider's fetch out of reach: its stream is counted instead. */
const wrapped = (): Llm => aiSdkLlm({ model: wrapLanguageModel({ model: createOpenAICompatible({ name: "fake", baseURL: `${base}/v1`, apiKey: "k" }).chatModel("fake"), middleware: extractReasoningMiddleware({ tagName: "think" }) }), ...options });

describe("a reply larger than maxReplyBytes", () => {
  for (const [who, make] of clients) {
    for (const streamed of [true, false]) {
      it(`${who} (${streamed ? "streamed" : "whole"}) fails as malformed at the cap, once, and hangs up`, async () => {
        let told = 0;
        const e = await failure(make().complete({ messages: [{ role: "user", content: "hi" }], ...(streamed ? { onText: (d: string) => void (told += d.length) } : {}) }));
        expect(e.kind, e.message).toBe("malformed");
        expect(e.message).toContain(`the reply is larger than maxReplyBytes (${CAP} bytes)`);
        expect(requests).toBe(1);
        expect(told).toBeLessThanOrEqual(CAP);
        // The server's writes fail once the client hangs up: it never got to send the whole flood.
        await expect.poll(() => closedEarly).toBe(true);
      });
    }
  }

  it("aiSdkLlm over a model wrapped in middleware (streamed) fails as malformed at the cap, once, and hangs up", async () => {
    let told = 0;
    const e = await failure(wrapped().complete({ messages: [{ role: "user", content: "hi" }], onText: (d: string) => void (told += d.length) }));
    expect(e.kind, e.message).toBe("malformed");
    expect(e.message).toContain(`the reply is larger than maxReplyBytes (${CAP} bytes)`);
    expect(requests).toBe(1);
    expect(told).toBeLessThanOrEqual(CAP);
    await expect.poll(() => closedEarly).toBe(true);
  });

  it("defaults to 64 MiB and refuses a cap that is no positive whole number", () => {
    expect(retrySettings("t", {}).maxReplyBytes).toBe(MAX_REPLY_BYTES);
    expect(MAX_REPLY_BYTES).toBe(64 * 1024 * 1024);
    for (const bad of [0, -1, 1.5, Number.NaN, Infinity]) {
      expect(() => openaiLlm({ model: "m", baseURL: "http://127.0.0.1:1/v1", maxReplyBytes: bad })).toThrow(new LlmError("config", `openaiLlm: maxReplyBytes must be a positive whole number, got ${bad}`));
    }
  });

  it("leaves a reply within the cap alone", async () => {
    const llm = openaiLlm({ model: "fake", baseURL: `${base}/v1`, apiKey: "k", maxReplyBytes: FLOOD * 2 });
    const r = await llm.complete({ messages: [{ role: "user", content: "hi" }], onText: () => undefined });
    expect(r.content).toBe("x".repeat(pieces * 1000));
    expect(r.content.length).toBeGreaterThan(CAP * 50);
    expect(requests).toBe(1);
  });

});
