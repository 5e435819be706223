// An `Llm` over any Vercel AI SDK language model (`ai` package), so every provider the AI SDK
// supports drives an agent. The AI SDK's own retries are off; those of retry.ts apply, as for
// the other HTTP clients. Cache breakpoints travel as Anthropic's message-level provider
// option, which other providers ignore.
import { APICallError, generateText, InvalidResponseDataError, streamText, type LanguageModel, type LanguageModelUsage, type ModelMessage, type SystemModelMessage } from "ai";
import { isArrayArg, isCount, isObjectArg, mustBe, requestProblem, samplingProblem } from "./args.js";
import { cutShort, mergedUsage, messageUsage } from "./anthropic.js";
import { LlmError } from "./errors.js";
import { cacheMarks, messageText } from "./messages.js";
import { answeredPage, answeredWhole, watchForDone } from "./stream.js";
import { cappedFetch, droppedConnection, lostReply, maskClientSecrets, oversizedHeaders, oversizedReply, refusedHeader, retrySettings, statusError, streamError, webPageError, withRetries, type RetryOptions } from "./retry.js";
import type { ChatMessage, Llm, LlmRequest, LlmResponse, LlmUsage } from "./types.js";

export interface AiSdkLlmOptions extends RetryOptions {
  /** The AI SDK model, e.g. `anthropic("claude-sonnet-4-5")` or `openai("gpt-5-mini")`. */
  model: LanguageModel;
  temperature?: number;
  /** Upper bound on reply tokens. */
  maxTokens?: number;
  /**
   * Texts no error may quote, shown as [api key]: the key of a model wrapped in middleware
   * (`wrapLanguageModel`), whose headers are out of reach, when it has no provider's shape
   * (a company gateway's token). The key of an unwrapped AI SDK provider is masked without it.
   */
  secrets?: readonly string[];
}

const CACHE = { anthropic: { cacheControl: { type: "ephemeral" } } } as const;

/**
 * Whether the provider of the model `id` (`provider:modelId`, or a model id string) reads the
 * Anthropic cache option: Anthropic's own (`anthropic.messages`), Google Vertex's Anthropic models
 * (`vertex.anthropic.messages`), and an Anthropic model through the AI Gateway (`gateway`,
 * `anthropic/claude-sonnet-4`), which passes provider options on. The last two were taken for
 * token-prefix caches: the compressed view's growing summary message missed the cache the marks
 * wrote on every prompt, 3.22x full history over 63 turns (client-cache.test.ts). Bedrock reads
 * its own option (`cachePoint`), not this one.
 */
function readsAnthropicCache(id: string): boolean {
  const colon = id.indexOf(":");
  const provider = colon < 0 ? id : id.slice(0, colon);
  return id.startsWith("anthropic") || provider.split(".").includes("anthropic") || (provider === "gateway" && id.slice(colon + 1).startsWith("anthropic/"));
}

/** Wraps an AI SDK language model as the agent's `llm`. */
export function aiSdkLlm(options: AiSdkLlmOptions): Llm {
  if (!isObjectArg(options)) throw new LlmError("config", mustBe("aiSdkLlm: options", "an object of options with the model", options));
  const model = options.model;
  if (model === undefined || model === null || (typeof model !== "string" && typeof model !== "object")) {
    throw new LlmError("config", "aiSdkLlm: no model given (pass { model } with an AI SDK language model)");
  }
  const badSampling = samplingProblem("aiSdkLlm", options.maxTokens, options.temperature);
  if (badSampling !== undefined) throw new LlmError("config", badSampling);
  const retry = retrySettings("aiSdkLlm", options);
  const secrets = options.secrets ?? [];
  if (!isArrayArg(secrets) || !secrets.every((k) => typeof k === "string")) throw new LlmError("config", mustBe("aiSdkLlm: secrets", "a list of texts (the keys no error may quote)", secrets));
  const id = typeof model === "string" ? model : `${model.provider}:${model.modelId}`;
  const name = `ai-sdk:${id}`;
  // The server answered a streamed request with a whole JSON reply (it does not stream).
  let unstreamed = false;

  return {
    name,
    // Its messages carry Anthropic's cache option, which only an Anthropic model's provider reads.
    ...(readsAnthropicCache(id) ? { cacheModel: "breakpoint" as const } : {}),
    complete(request) {
      const problem = requestProblem(name, request);
      if (problem !== undefined) return Promise.reject(new LlmError("config", problem));
      const { system, messages } = toModelMessages(request);
      const maxOutputTokens = request.maxOutputTokens ?? options.maxTokens;
      const call = {
        model,
        ...(system.length > 0 ? { system } : {}),
        messages,
        maxRetries: 0,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
        ...(maxOutputTokens === undefined ? {} : { maxOutputTokens }),
      };
      const onText = request.onText;
      const whole = async (signal: AbortSignal): Promise<LlmResponse> => {
        const result = await generateText({ ...call, model: watchedModel(model, name, retry.maxReplyBytes).model, abortSignal: signal });
        return reply(name, result.text, result.finishReason, result.rawFinishReason, usageOf(result.usage), result.response.modelId);
      };
      const send = async (signal: AbortSignal, attempt: number, alive: () => void): Promise<LlmResponse> => {
        if (onText === undefined) return whole(signal);
        if (unstreamed) {
          const r = await whole(signal);
          onText(r.content, attempt);
          return r;
        }
        // Errors come as parts of the stream and are handled below; the default onError would also log them.
        const watched = watchedModel(model, name, retry.maxReplyBytes);
        // Raw chunks: the provider gives its finish and usage only when the body ends (readWire).
        // Leaving the loop does not stop the AI SDK reading the body: an oversized reply aborts it.
        const oversized = new AbortController();
        const result = streamText({ ...call, model: watched.model, abortSignal: AbortSignal.any([signal, oversized.signal]), includeRawChunks: true, onError: () => undefined });
        const wire: WireEnd = {};
        let text = "";
        let finish = "unknown";
        let rawFinish: string | undefined;
        let usage: LanguageModelUsage | undefined;
        // An error before any text is held until the step's end says what the server sent: a
        // whole JSON reply reads as an event stream cut before its first event.
        let failure: { error: unknown } | undefined;
        let contentType: string | undefined;
        // Dropped, or stalled past the timeout, after the finish reason (before the body's end):
        // the reply is whole and paid for, and asking again would pay for it twice.
        const stalled = (): boolean => signal.aborted && signal.reason instanceof LlmError && signal.reason.kind === "timeout";
        const paidFor = (e: unknown): boolean => wire.finish !== undefined && text !== "" && (droppedConnection(e) !== undefined || stalled());
        let cut = false;
        // What the stream held so far, in UTF-16 units (each at least one byte of the body): the
        // cap where the provider's fetch is out of reach (a model wrapped in middleware, or named
        // by a string), whose endless reply the AI SDK would otherwise gather whole.
        let held = 0;
        try {
          for await (const part of result.fullStream) {
            // The AI SDK's own `start` comes before anything from the server.
            if (part.type !== "start") alive();
            const piece = part.type === "text-delta" || part.type === "reasoning-delta" ? part.text : part.type === "tool-input-delta" ? part.delta : "";
            if ((held += piece.length) > retry.maxReplyBytes) {
              const error = oversizedReply(name, retry.maxReplyBytes);
              oversized.abort(error);
              throw error;
            }
            if (part.type === "raw") readWire(part.rawValue, wire);
            else if (part.type === "text-delta") {
              if (failure !== undefined) throw failure.error;
              text += part.text;
              onText(part.text, attempt);
            } else if (part.type === "error") {
              // [DONE] is the server's word that the reply is whole, where it leaves every finish_reason null.
              if (watched.done() && unfinished(part.error)) continue;
              if ((cut = paidFor(part.error))) break;
              if (text !== "") throw part.error;
              failure ??= { error: part.error };
            } else if (part.type === "abort") {
              if ((cut = paidFor(signal.reason))) break;
              throw signal.aborted ? signal.reason : new LlmError("aborted", `${name}: request aborted`);
            }
            else if (part.type === "finish-step") contentType = part.response.headers?.["content-type"];
            else if (part.type === "finish") {
              finish = part.finishReason;
              rawFinish = part.rawFinishReason;
              usage = part.totalUsage;
            }
          }
        } catch (e) {
          if (!(cut = paidFor(e))) throw e;
        }
        if (cut) return reply(name, text, wire.finish ?? "stop", undefined, wire.usage, wire.model ?? (typeof model === "string" ? model : model.modelId));
        if (text === "" && answeredPage(contentType)) throw webPageError(name, undefined);
        if (text === "" && answeredWhole(contentType)) {
          // The provider parsed the reply away as events: asked again unstreamed, this time and
          // from now on, since each such answer is paid for and lost.
          const r = await whole(signal);
          unstreamed = true;
          onText(r.content, attempt);
          return r;
        }
        if (failure !== undefined) throw failure.error;
        return reply(name, text, finish, rawFinish, usageOf(usage), (await result.response).modelId);
      };
      // Mapped here, where the key can be awaited (the AI Gateway's headers are a promise).
      const attempt = async (signal: AbortSignal, n: number, alive: () => void): Promise<LlmResponse> => {
        try {
          return await send(signal, n, alive);
        } catch (e) {
          throw masked(toLlmError(e, signal, name), [...secrets, ...(await credentials(model, signal))]);
        }
      };
      return withRetries(name, retry, request, attempt, (e, signal) => toLlmError(e, signal, name));
    },
  };
}

/**
 * `model` with its provider's fetch ending each event stream at `data: [DONE]` (watchForDone),
 * and whether the last one held it: an OpenAI-compatible provider gives its finish part only
 * when the body ends, so a server that holds the connection open after [DONE] kept the reply
 * waiting until the stall timer failed the attempt, and the reply was asked for (and paid for)
 * again. Each body is cut at `maxReplyBytes` too (cappedFetch). The AI SDK's providers keep their
 * fetch in `config`; a model kept otherwise (wrapped in middleware, a gateway's string) is passed
 * on as it is.
 */
function watchedModel(model: LanguageModel, name: string, maxReplyBytes: number): { model: LanguageModel; done: () => boolean } {
  let done = () => false;
  const config = typeof model === "object" ? (model as { config?: unknown }).config : undefined;
  if (typeof config !== "object" || config === null) return { model, done: () => done() };
  const inner = (config as { fetch?: unknown }).fetch;
  // Read at each call, as the provider does, so a fetch the host swaps in later still applies.
  const send = cappedFetch(name, maxReplyBytes, () => (typeof inner === "function" ? (inner as typeof fetch) : globalThis.fetch));
  const watching = async (...args: Parameters<typeof fetch>): Promise<Response> => {
    const response = await send(...args);
    const type = response.headers.get("content-type");
    if (!response.ok || answeredWhole(type) || answeredPage(type)) return response;
    const watched = watchForDone(response);
    done = watched.done;
    return watched.response;
  };
  return { model: Object.create(model as object, { config: { value: { ...config, fetch: watching } } }) as LanguageModel, done: () => done() };
}

/** What the server's own chunks said of the reply's end, read as they pass (readWire). */
interface WireEnd {
  /** The finish reason as the AI SDK names it ("stop", "length"), once a chunk gave one. */
  finish?: string;
  model?: string;
  /** The usage, once the chunks gave both token counts (as usageOf). */
  usage?: LlmUsage;
  /** Anthropic's usage figures as its events gave them so far. */
  anthropic?: Record<string, unknown> | null;
}

const count = (v: unknown): number | undefined => (isCount(v) ? v : undefined);

/**
 * Reads one raw chunk in the wire shape of OpenAI's chat completions (a choice's finish_reason,
 * the usage chunk) or of Anthropic's Messages API (`message_start`'s model and usage,
 * `message_delta`'s stop reason and usage): a provider may keep the finish until the body ends
 * (the OpenAI-compatible one) or until `message_stop` (Anthropic's), so a connection dropped, or
 * held open, after them lost a reply that is whole and paid for. A gateway's finish reason
 * "error" is no end.
 */
function readWire(raw: unknown, wire: WireEnd): void {
  if (typeof raw !== "object" || raw === null) return;
  const c = raw as { type?: unknown; model?: unknown; choices?: unknown; usage?: Record<string, unknown> | null; message?: { model?: unknown; usage?: unknown } | null; delta?: { stop_reason?: unknown } | null };
  if (c.type === "message_start" || c.type === "message_delta") return readMessageEvent(c, wire);
  if (typeof c.model === "string" && c.model !== "") wire.model = c.model;
  if (Array.isArray(c.choices)) {
    const reason = (c.choices[0] as { finish_reason?: unknown } | undefined)?.finish_reason;
    if (typeof reason === "string" && reason !== "" && reason !== "error") wire.finish = reason === "length" ? "length" : "stop";
    if (typeof c.usage === "object" && c.usage !== null) {
      const input = count(c.usage.prompt_tokens);
      const output = count(c.usage.completion_tokens);
      const cached = count((c.usage.prompt_tokens_details as { cached_tokens?: unknown } | null | undefined)?.cached_tokens);
      wire.usage = input === undefined || output === undefined ? undefined : { inputTokens: input, outputTokens: output, cachedTokens: cached ?? 0 };
    }
  }
}

/** An Anthropic `message_start` or `message_delta` event, read as anthropicLlm reads them. */
function readMessageEvent(e: { type?: unknown; usage?: unknown; message?: { model?: unknown; usage?: unknown } | null; delta?: { stop_reason?: unknown } | null }, wire: WireEnd): void {
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
  if (e.type === "message_start") {
    if (typeof e.message?.model === "string" && e.message.model !== "") wire.model = e.message.model;
    if (isRecord(e.message?.usage)) wire.anthropic = { ...e.message.usage };
  } else {
    const reason = e.delta?.stop_reason;
    if (typeof reason === "string" && reason !== "") wire.finish = cutShort(reason) ? "length" : "stop";
    if (isRecord(e.usage)) wire.anthropic = mergedUsage(wire.anthropic ?? null, e.usage);
  }
  if (isRecord(wire.anthropic)) wire.usage = messageUsage(wire.anthropic);
}

/**
 * The reply as an LlmResponse: text required, usage with the cache reads and writes the provider
 * reports. A provider that reports no token counts (a stream not asked for usage) gives no usage,
 * so the agent measures the prompt itself rather than count zero tokens.
 */
function reply(name: string, text: string, finishReason: string, rawFinishReason: string | undefined, usage: LlmUsage | undefined, modelId: string): LlmResponse {
  // A gateway (OpenRouter) ends a choice whose upstream failed half-way with "error", which the
  // providers map to "other": the text is half a reply, and the OpenAI client retries it.
  if (rawFinishReason === "error") throw new LlmError("server", `${name}: error in the reply: it ended with finish reason "error"`);
  if (text.trim() === "") throw new LlmError("malformed", `${name}: the reply has no text content (finish reason: ${finishReason})`, usage ? { usage } : {});
  return { ...(finishReason === "length" ? { truncated: true } : {}), content: text, ...(usage ? { usage } : {}), model: modelId };
}

function usageOf(u: LanguageModelUsage | undefined): LlmUsage | undefined {
  if (u?.inputTokens === undefined || u.outputTokens === undefined) return undefined;
  const cacheWrite = u.inputTokenDetails?.cacheWriteTokens;
  return { inputTokens: u.inputTokens, outputTokens: u.outputTokens, cachedTokens: u.inputTokenDetails?.cacheReadTokens ?? 0, ...(cacheWrite === undefined ? {} : { cacheWriteTokens: cacheWrite }) };
}

/**
 * The chat messages as AI SDK messages: system messages go to `system`, tool calls and results
 * become tool-call and tool-result parts. The messages `cacheMarks` picks carry the cache
 * provider option, no more than Anthropic allows.
 */
function toModelMessages(request: LlmRequest): { system: SystemModelMessage[]; messages: ModelMessage[] } {
  const chat = request.messages;
  const marked = cacheMarks(request);
  const toolNames = new Map<string, string>();
  const system: SystemModelMessage[] = [];
  const messages: ModelMessage[] = [];
  chat.forEach((m, i) => {
    const cache = marked.has(i) ? { providerOptions: CACHE } : {};
    const text = messageText(m);
    if (m.role === "system") system.push({ role: "system", content: text, ...cache });
    else if (m.role === "user") messages.push({ role: "user", content: text, ...cache });
    else if (m.role === "tool") {
      const toolCallId = m.tool_call_id ?? "";
      messages.push({ role: "tool", content: [{ type: "tool-result", toolCallId, toolName: toolNames.get(toolCallId) ?? m.name ?? "tool", output: { type: "text", value: text } }], ...cache });
    } else messages.push({ role: "assistant", content: assistantContent(m, text, toolNames), ...cache });
  });
  return { system, messages };
}

function assistantContent(m: ChatMessage, text: string, toolNames: Map<string, string>) {
  const calls = m.tool_calls ?? [];
  if (calls.length === 0) return text;
  for (const c of calls) toolNames.set(c.id, c.function.name);
  return [
    ...(text === "" ? [] : [{ type: "text" as const, text }]),
    ...calls.map((c) => ({ type: "tool-call" as const, toolCallId: c.id, toolName: c.function.name, input: parseJson(c.function.arguments) })),
  ];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Maps whatever the AI SDK threw to an LlmError with a kind. */
function toLlmError(e: unknown, signal: AbortSignal, name: string): LlmError {
  // Ours, or one our fetch raised (a reply past maxReplyBytes), which the provider wraps as its cause.
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 4; depth++, c = c.cause) if (c instanceof LlmError) return c;
  // Our controller fired: its reason says whether it was the timeout or the caller.
  if (signal.aborted && signal.reason instanceof LlmError) return signal.reason;
  if (signal.aborted) return new LlmError("aborted", `${name}: request aborted`);
  const oversized = oversizedHeaders(name, e);
  if (oversized !== undefined) return oversized;
  // A provider wraps a body cut mid-way as a failure "to process successful response" of status 200.
  const dropped = droppedConnection(e);
  if (dropped !== undefined) return lostReply(name, dropped);
  if (unfinished(e)) return lostReply(name, "the stream ended before its finish reason");
  if (APICallError.isInstance(e)) {
    if (e.statusCode === undefined) return new LlmError("connection", `${name}: cannot reach the server (${e.message})`);
    // A gateway that commits its 200 before the provider runs (OpenRouter) sends a later failure in the body.
    const failure = e.statusCode < 300 ? bodyError(e.responseBody) : undefined;
    if (failure !== undefined) return streamError(name, failure, "the reply");
    // A web page where the reply was due (the provider's "Invalid JSON response"), said as the HTTP clients say it.
    if (e.statusCode < 300 && answeredPage(e.responseHeaders?.["content-type"])) return webPageError(name, e.responseBody);
    // The provider's message for a page is the status text alone ("Bad Gateway"): the page itself says more, as the HTTP clients quote it.
    const page = answeredPage(e.responseHeaders?.["content-type"]) && e.responseBody?.trim() ? e.responseBody : undefined;
    return statusError(name, e.statusCode, page ?? e.message, e.responseHeaders ? new Headers(e.responseHeaders) : undefined, bodyError(e.responseBody));
  }
  // The AI Gateway's own errors (a model named by a string goes through it) carry the status.
  if (typeof e === "object" && e !== null && GATEWAY_ERROR in e) {
    const { statusCode, cause } = e as { statusCode?: unknown; cause?: unknown };
    if (typeof statusCode === "number") {
      const headers = APICallError.isInstance(cause) && cause.responseHeaders ? new Headers(cause.responseHeaders) : undefined;
      return statusError(name, statusCode, String((e as { message?: unknown }).message), headers);
    }
  }
  // Its refusal of the key, which the AI SDK rewraps as a plain Error, coloured for a terminal.
  if (e instanceof Error && (e.name === "GatewayAuthenticationError" || e.name === "GatewayError")) {
    return statusError(name, 401, e.message.replace(SGR, "").replace(/\s+/g, " ").trim(), undefined);
  }
  const header = refusedHeader(name, e);
  if (header !== undefined) return header;
  // A provider hands a stream's error chunk over as the chunk's error body, not an Error.
  if (!(e instanceof Error)) return streamError(name, e);
  return new LlmError("malformed", `${name}: unexpected failure (${e.message})`);
}

/** The OpenAI-compatible provider's word for a stream that ended cleanly before its finish reason. */
function unfinished(e: unknown): boolean {
  return InvalidResponseDataError.isInstance(e) && e.message.includes("without a finish reason");
}

/** A terminal's colour escape. */
// eslint-disable-next-line no-control-regex
const SGR = /\u001b\[[\d;]*m/g;

/** The mark of the AI Gateway's errors (GatewayError, of a package the `ai` package does not re-export). */
const GATEWAY_ERROR = Symbol.for("vercel.ai.gateway.error");

/** A reply body that is an error (`{"error": {...}}`), or undefined. */
function bodyError(body: string | undefined): unknown {
  if (body === undefined || !body.includes('"error"')) return undefined;
  try {
    const v: unknown = JSON.parse(body);
    const error = typeof v === "object" && v !== null ? (v as { error?: unknown }).error : undefined;
    return typeof error === "object" && error !== null ? v : undefined;
  } catch {
    return undefined;
  }
}

/** Headers whose value is a credential, as the AI SDK's providers send them. */
const AUTH_HEADERS: ReadonlySet<string> = new Set(["authorization", "x-api-key", "api-key", "x-goog-api-key"]);

/**
 * The credentials the provider sends, read where the AI SDK's own providers keep their headers
 * (the model's `config.headers()`, a promise for the AI Gateway's), none where a model keeps them
 * elsewhere (a model wrapped in middleware: maskSecrets knows its key by its shape only): a
 * server or gateway may quote the key it refused, and the message goes on to the run's ending,
 * trace and events. Read under the attempt's `signal` (its timeout, the caller's abort): a
 * headers promise that never settles (a credential callback stuck on its token service) reads as
 * none once it fires, and the keys of a provider's shape are still masked (maskClientSecrets).
 */
async function credentials(model: LanguageModel, signal: AbortSignal): Promise<string[]> {
  const headers = typeof model === "object" ? (model as { config?: { headers?: unknown } }).config?.headers : undefined;
  if (typeof headers !== "function") return [];
  let values: unknown;
  let onAbort = () => {};
  const given = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    values = await Promise.race([(headers as () => unknown)(), given]);
  } catch {
    // A provider with no key throws (or rejects) here; its request has failed for that already.
    return [];
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  if (typeof values !== "object" || values === null) return [];
  const keys: string[] = [];
  for (const [name, value] of Object.entries(values)) {
    if (AUTH_HEADERS.has(name.toLowerCase()) && typeof value === "string") keys.push(value.replace(/^Bearer\s+/i, ""));
  }
  return keys;
}

/** `error` with the secrets its message may quote masked (maskClientSecrets). */
function masked(error: LlmError, keys: readonly string[]): LlmError {
  const message = maskClientSecrets(error.message, keys);
  return message === error.message ? error : new LlmError(error.kind, message, error.details);
}
