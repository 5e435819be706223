// A fake OpenAI-compatible server on 127.0.0.1 for the proxy's tests and benchmark. It answers
// chat completions (streaming and not) with a reply derived from the request, answers the
// compaction summarizer's prompts with a JSON summary, and misbehaves on request: the
// x-fake-mode header picks an error page, a JSON error, malformed JSON, a hang or a delay.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
  readonly body: Record<string, unknown> | undefined;
}

export interface FakeUpstreamOptions {
  /** Prompts larger than this (chars / 4) get a 400 context_length_exceeded. */
  contextTokens?: number;
  /** Reported prompt tokens for a request; default chars of the messages JSON / 4. */
  promptTokens?: (messages: unknown[]) => number;
  /** Refuse any request that sets a temperature, as OpenAI's reasoning models do (400, unsupported_value). */
  refuseTemperature?: boolean;
  /** What the summarizer prompt is answered with; default a valid short summary. */
  summary?: (prompt: string) => string;
  /** The first `count` chat requests get this status (and headers), as an overloaded server answers. */
  failFirst?: { count: number; status: number; headers?: Record<string, string>; body?: unknown };
  /** Keep every request (tests); off in the benchmark. */
  record?: boolean;
}

export interface FakeUpstream {
  readonly url: string;
  readonly requests: RecordedRequest[];
  summaryCalls: number;
  /** Responses whose client (the proxy) went away before they were finished. */
  abandoned: number;
  /** The bytes of each streamed /v1/responses reply, in order. */
  readonly streams: string[];
  /** Replies held by x-fake-mode: hold (a stream sends its first chunk, then waits). */
  held: number;
  /** Finishes every held reply. */
  release(): void;
  close(): Promise<void>;
}

type Msg = { role?: string; content?: unknown };

const isSummaryPrompt = (messages: Msg[]) => messages.length === 1 && typeof messages[0].content === "string" && messages[0].content.includes("ConversationSummary");

export const defaultPromptTokens = (messages: unknown[]) => Math.ceil(JSON.stringify(messages).length / 4);

export async function startFakeUpstream(options: FakeUpstreamOptions = {}): Promise<FakeUpstream> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const count = options.promptTokens ?? defaultPromptTokens;
  const held: (() => void)[] = [];
  let failed = 0;
  const state: FakeUpstream = {
    url: "",
    requests,
    summaryCalls: 0,
    streams: [],
    abandoned: 0,
    get held() {
      return held.length;
    },
    release: () => {
      for (const finish of held.splice(0)) finish();
    },
    close: async () => {},
  };
  const server: Server = createServer((req, res) => {
    res.on("close", () => {
      if (!res.writableFinished) state.abandoned++;
    });
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> | undefined;
      try {
        body = raw.length > 0 ? (JSON.parse(raw.toString("utf8")) as Record<string, unknown>) : undefined;
      } catch {
        body = undefined;
      }
      const path = req.url ?? "/";
      if (options.record !== false) requests.push({ method: req.method ?? "GET", path, headers: req.headers, raw, body });
      const mode = String(req.headers["x-fake-mode"] ?? "");
      const json = (status: number, value: unknown) => {
        const text = JSON.stringify(value);
        res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), "x-upstream": "fake" });
        res.end(text);
      };
      if (mode === "hang") return;
      if (mode === "headers-then-hang") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: {}\n\n");
        return;
      }
      if (mode === "json-headers-then-hang") {
        // A whole JSON reply whose headers and first bytes come before it is done.
        res.writeHead(200, { "content-type": "application/json" });
        res.write('{"object":"list",');
        return;
      }
      if (mode === "headers-then-cut") {
        // The connection breaks once the first event is on its way: no end of the reply ever comes.
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write("data: {}\n\n", () => res.socket?.destroy());
        return;
      }
      if (mode === "reset-after-body") {
        // The upstream had the whole request (it may have worked on it, and billed it), then the connection broke.
        req.socket.destroy();
        return;
      }
      if (mode === "error-then-cut") {
        res.writeHead(500, { "content-type": "text/plain" });
        res.write("upstream fail", () => res.socket?.destroy());
        return;
      }
      if (mode === "redirect") {
        // A server reached over http that answers on https only, or a path it wants with a trailing slash.
        res.writeHead(307, { location: "https://upstream.example/v1/chat/completions" });
        return res.end();
      }
      if (mode === "html500") {
        res.writeHead(500, { "content-type": "text/html" });
        return res.end("<html><body>Internal Server Error</body></html>");
      }
      if (mode === "quote-key") {
        // A gateway refusing the key it got, quoting it in its error body and a header.
        const auth = String(req.headers.authorization ?? "");
        const text = JSON.stringify({ error: { message: `Incorrect API key provided: ${auth}`, type: "invalid_request_error", code: "invalid_api_key" } });
        res.writeHead(401, { "content-type": "application/json", "x-echo-authorization": auth });
        return res.end(text);
      }
      if (mode === "quote-key-text") {
        res.writeHead(502, { "content-type": "text/plain" });
        return res.end(`bad gateway for key ${String(req.headers["x-api-key"] ?? "")}`);
      }
      if (mode === "json429") return json(429, { error: { message: "Rate limit reached", type: "rate_limit_error", code: "rate_limit_exceeded" } });
      if (mode === "malformed") {
        res.writeHead(200, { "content-type": "application/json" });
        return res.end("this is not json");
      }
      if (req.method === "GET" && path === "/v1/models") return json(200, { object: "list", data: [{ id: "fake-model", object: "model", created: 0, owned_by: "test" }] });
      if (path === "/v1/echo") {
        // x-echo-encoding: the reply says its body has this content-encoding (the body is sent as it came); x-echo-type: its content type.
        const encoding = req.headers["x-echo-encoding"];
        const echo = () => {
          res.writeHead(200, { "content-type": req.headers["x-echo-type"] ?? req.headers["content-type"] ?? "application/octet-stream", "x-upstream": "fake", ...(typeof encoding === "string" ? { "content-encoding": encoding } : {}) });
          res.end(raw);
        };
        if (mode === "hold") held.push(echo);
        else echo();
        return;
      }
      if (path === "/v1/messages" && body !== undefined) return anthropic(res, body, mode);
      if (path === "/v1/responses" && body !== undefined) {
        // OpenAI's Responses API: a reply naming the last user input, whole or streamed as its events.
        const input = typeof body.input === "string" ? [{ role: "user", content: body.input }] : ((body.input ?? []) as { role?: string; content?: unknown }[]);
        const lastUser = [...input].reverse().find((m) => m.role === "user");
        const text = `reply to ${typeof lastUser?.content === "string" ? lastUser.content : "?"} (${input.length} items)`;
        const inputTokens = count([body.instructions ?? "", ...input]);
        const item = { type: "message", id: "msg_1", role: "assistant", status: "completed", content: [{ type: "output_text", text, annotations: [] }] };
        const response = { id: "resp_1", object: "response", created_at: 1, status: "completed", model: body.model, output: [item], usage: { input_tokens: inputTokens, output_tokens: 10, total_tokens: inputTokens + 10 } };
        if (body.stream !== true) return json(200, response);
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        let seq = 0;
        let sentText = "";
        const event = (type: string, data: Record<string, unknown>) => {
          const chunk = `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
          sentText += chunk;
          res.write(chunk);
        };
        event("response.created", { response: { ...response, status: "in_progress", output: [], usage: null } });
        event("response.output_item.added", { output_index: 0, item: { ...item, status: "in_progress", content: [] } });
        event("response.content_part.added", { output_index: 0, item_id: "msg_1", content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
        for (const word of text.split(/(?<= )/)) event("response.output_text.delta", { output_index: 0, item_id: "msg_1", content_index: 0, delta: word });
        event("response.output_text.done", { output_index: 0, item_id: "msg_1", content_index: 0, text });
        event("response.content_part.done", { output_index: 0, item_id: "msg_1", content_index: 0, part: item.content[0] });
        event("response.output_item.done", { output_index: 0, item });
        event("response.completed", { response });
        state.streams.push(sentText);
        return res.end();
      }
      if (path !== "/v1/chat/completions" || body === undefined) return json(404, { error: { message: `no route ${path}`, type: "invalid_request_error", code: null } });
      const messages = (body.messages ?? []) as Msg[];
      const promptTokens = count(messages);
      // The summarizer's model is taken to have a larger window than the conversation's.
      if (options.contextTokens !== undefined && promptTokens > options.contextTokens && !isSummaryPrompt(messages)) {
        return json(400, { error: { message: `This model's maximum context length is ${options.contextTokens} tokens. However, your messages resulted in ${promptTokens} tokens.`, type: "invalid_request_error", code: "context_length_exceeded" } });
      }
      if (options.refuseTemperature && body.temperature !== undefined) {
        return json(400, { error: { message: "Unsupported value: 'temperature' does not support 0.3 with this model. Only the default (1) value is supported.", type: "invalid_request_error", param: "temperature", code: "unsupported_value" } });
      }
      if (options.failFirst !== undefined && failed < options.failFirst.count && !isSummaryPrompt(messages)) {
        failed++;
        const text = JSON.stringify(options.failFirst.body ?? { error: { message: "overloaded, try again", type: "server_error", code: null } });
        res.writeHead(options.failFirst.status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...options.failFirst.headers });
        return res.end(text);
      }
      let content: string;
      if (isSummaryPrompt(messages)) {
        state.summaryCalls++;
        content = options.summary ? options.summary(messages[0].content as string) : JSON.stringify({ ConversationSummary: "The user asked about several topics; all were answered." });
      } else {
        const last = [...messages].reverse().find((m) => m.role === "user");
        content = `reply to ${typeof last?.content === "string" ? last.content : "?"} (${messages.length} messages)`;
      }
      const usage = { prompt_tokens: promptTokens, completion_tokens: Math.ceil(content.length / 4), total_tokens: promptTokens + Math.ceil(content.length / 4) };
      const delay = /^slow:(\d+)$/.exec(mode);
      const answer = () => {
        if (body?.stream !== true) {
          return json(200, { id: "chatcmpl-1", object: "chat.completion", created: 1, model: body?.model ?? "fake-model", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }], usage });
        }
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-upstream": "fake" });
        const withUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
        const chunk = (delta: Record<string, unknown>, finish: string | null) =>
          `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: body?.model ?? "fake-model", choices: [{ index: 0, delta, finish_reason: finish }], ...(withUsage ? { usage: null } : {}) })}\n\n`;
        res.write(chunk({ role: "assistant", content: "" }, null));
        if (mode === "hold") {
          held.push(() => {
            for (const word of content.split(/(?<= )/)) res.write(chunk({ content: word }, null));
            res.write(chunk({}, "stop"));
            res.end("data: [DONE]\n\n");
          });
          return;
        }
        if (mode === "cut" || mode === "cut-mid-event") {
          res.write(chunk({ content: "partial " }, null));
          // A connection can break anywhere, also inside an event.
          if (mode === "cut-mid-event") res.write(chunk({ content: "lost" }, null).slice(0, 30));
          setTimeout(() => res.socket?.destroy(), 20);
          return;
        }
        for (const word of content.split(/(?<= )/)) res.write(chunk({ content: word }, null));
        res.write(chunk({}, "stop"));
        if (withUsage) res.write(`data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: body.model ?? "fake-model", choices: [], usage })}\n\n`);
        res.end("data: [DONE]\n\n");
      };
      if (mode === "hold" && body?.stream !== true) held.push(answer);
      else if (delay) setTimeout(answer, Number(delay[1]));
      else answer();
    });
  });
  /** Anthropic's Messages API, enough for its SDK: a reply naming the last user text, streamed as its events or whole. */
  function anthropic(res: import("node:http").ServerResponse, body: Record<string, unknown>, mode: string): void {
    const messages = (body.messages ?? []) as { role: string; content: unknown }[];
    const inputTokens = count([body.system ?? "", ...messages]);
    const send = (status: number, value: unknown) => {
      const text = JSON.stringify(value);
      res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
      res.end(text);
    };
    if (options.contextTokens !== undefined && inputTokens > options.contextTokens) {
      return send(400, { type: "error", error: { type: "invalid_request_error", message: `prompt is too long: ${inputTokens} tokens > ${options.contextTokens} maximum` } });
    }
    const last = [...messages].reverse().find((m) => m.role === "user");
    const lastText = typeof last?.content === "string" ? last.content : Array.isArray(last?.content) ? (last.content as { type: string; text?: string }[]).filter((b) => b.type === "text").map((b) => b.text).join(" ") : "?";
    const content = `reply to ${lastText} (${messages.length} messages)`;
    const usage = { input_tokens: inputTokens, output_tokens: Math.ceil(content.length / 4) };
    const message = { id: "msg_1", type: "message", role: "assistant", model: body.model ?? "fake-model", content: [{ type: "text", text: content }], stop_reason: "end_turn", stop_sequence: null, usage };
    if (body.stream !== true) return send(200, message);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const event = (type: string, data: Record<string, unknown>) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    event("message_start", { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: inputTokens, output_tokens: 1 } } });
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } });
    const rest = () => {
      for (const word of content.split(/(?<= )/)) event("content_block_delta", { index: 0, delta: { type: "text_delta", text: word } });
      event("content_block_stop", { index: 0 });
      event("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: usage.output_tokens } });
      event("message_stop", {});
      res.end();
    };
    if (mode === "cut") {
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "partial " } });
      setTimeout(() => res.socket?.destroy(), 20);
    } else if (mode === "hold") held.push(rest);
    else rest();
  }

  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}
