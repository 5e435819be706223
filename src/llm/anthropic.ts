// An `Llm` over Anthropic's Messages API, on the official `@anthropic-ai/sdk`, with the retries
// of retry.ts. Anthropic caches a prompt prefix only up to explicit `cache_control` breakpoints,
// so this client places them: after the system prompt, where the request's `cacheBreakpoints`
// say the history stays stable, and on the last message (the next request's prefix).
import Anthropic, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "@anthropic-ai/sdk";
import type { ContentBlockParam, MessageParam, TextBlockParam } from "@anthropic-ai/sdk/resources/messages/messages";
import { baseUrlProblem, countOrZero, isCount, isObjectArg, mustBe, requestProblem, samplingProblem } from "./args.js";
import { LlmError } from "./errors.js";
import { cacheMarks, messageText } from "./messages.js";
import { cappedFetch, droppedConnection, quoted, retrySettings, sdkBackstopMs, sdkError, streamError, withRetries, type RetryOptions, type SdkErrors } from "./retry.js";
import { sdkLogLevel, warnOncePerModel, withSdkEnv } from "./sdk-env.js";
import { unstreamedReply, wholeReply } from "./stream.js";
import type { ChatMessage, Llm, LlmResponse, LlmUsage } from "./types.js";

const SDK_ERRORS: SdkErrors = { ConnectionTimeout: APIConnectionTimeoutError, UserAbort: APIUserAbortError, Connection: APIConnectionError, Api: APIError };

export interface AnthropicLlmOptions extends RetryOptions {
  /** Model name; default `ANTHROPIC_MODEL`. */
  model?: string;
  /** Default `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** API base URL (without /v1); default `ANTHROPIC_BASE_URL`, else Anthropic's API. */
  baseURL?: string;
  temperature?: number;
  /** `max_tokens`, which the Messages API requires. Default 4096. */
  maxTokens?: number;
  /** Mark cache breakpoints. Default true; false sends no `cache_control` at all. */
  cache?: boolean;
  /** Where the defaults come from, the SDK's `ANTHROPIC_CUSTOM_HEADERS` and `ANTHROPIC_LOG` too; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

const EPHEMERAL = { type: "ephemeral" } as const;

/** Creates a client for Anthropic's Messages API. Throws a `config` LlmError when no model or key is given. */
export function anthropicLlm(options: AnthropicLlmOptions = {}): Llm {
  if (!isObjectArg(options)) throw new LlmError("config", mustBe("anthropicLlm: options", "an object of options", options));
  const env = options.env ?? process.env;
  const model = options.model ?? env.ANTHROPIC_MODEL;
  const apiKey = options.apiKey ?? env.ANTHROPIC_API_KEY;
  const baseURL = options.baseURL ?? env.ANTHROPIC_BASE_URL;
  if (!model) throw new LlmError("config", "anthropicLlm: no model given (pass { model } or set ANTHROPIC_MODEL)");
  if (!apiKey) throw new LlmError("config", "anthropicLlm: no API key (pass { apiKey } or set ANTHROPIC_API_KEY)");
  const maxTokens = options.maxTokens ?? 4096;
  const badSampling = samplingProblem("anthropicLlm", maxTokens, options.temperature);
  if (badSampling !== undefined) throw new LlmError("config", badSampling);
  const badUrl = baseUrlProblem("anthropicLlm", baseURL);
  if (badUrl !== undefined) throw new LlmError("config", badUrl);
  const retry = retrySettings("anthropicLlm", options);
  const name = `anthropic:${model}`;
  // authToken null: a stray ANTHROPIC_AUTH_TOKEN in the environment must not ride along; baseURL
  // null: the SDK would read ANTHROPIC_BASE_URL from process.env, whatever `env` says.
  // The attempt's own controller (withRetries) bounds each attempt; the SDK's timeout is a backstop past it.
  const client = withSdkEnv(env, ["ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"], () => new Anthropic({ apiKey, authToken: null, baseURL: baseURL || null, maxRetries: 0, timeout: sdkBackstopMs(retry.timeoutMs), fetch: cappedFetch(name, retry.maxReplyBytes), ...sdkLogLevel(env.ANTHROPIC_LOG) }));
  const cache = options.cache ?? true;
  const once = warnOncePerModel();

  return {
    name,
    ...(cache ? { cacheModel: "breakpoint" as const } : {}),
    complete(request) {
      const problem = requestProblem(name, request);
      if (problem !== undefined) return Promise.reject(new LlmError("config", problem));
      const { system, messages } = toAnthropic(request.messages, cache ? cacheMarks(request) : new Set());
      const asked = request.model ?? (model as string);
      const body = {
        model: asked,
        max_tokens: request.maxOutputTokens ?? maxTokens,
        ...(system.length > 0 ? { system } : {}),
        messages,
        ...(options.temperature === undefined ? {} : { temperature: options.temperature }),
      };
      const onText = request.onText;
      const send = async (signal: AbortSignal, attempt: number, alive: () => void) => {
        if (onText === undefined) {
          const { data, response } = await once(asked, () => client.messages.create(body, { signal })).withResponse();
          return wholeReply(data, response, name, (reply) => parseReply(reply, name, asked));
        }
        const { data: stream, response } = await once(asked, () => client.messages.create({ ...body, stream: true }, { signal })).withResponse();
        const whole = await unstreamedReply(response, name, (reply) => parseReply(reply, name, asked), (text) => onText(text, attempt));
        if (whole !== undefined) return whole;
        return parseReply(await readStream(stream, name, alive, (delta) => onText(delta, attempt)), name, asked);
      };
      return withRetries(name, retry, request, send, (e, signal) => sdkError(e, signal, name, SDK_ERRORS, apiKey));
    },
  };
}

/**
 * The chat messages in the Messages API's shape: system messages become the `system` blocks,
 * tool calls `tool_use` blocks and tool results `tool_result` blocks of a user turn, and
 * consecutive turns of one role merge (the API wants them alternating). A marked message puts
 * `cache_control` on its last block.
 */
function toAnthropic(chat: readonly ChatMessage[], marked: ReadonlySet<number>): { system: TextBlockParam[]; messages: MessageParam[] } {
  const system: TextBlockParam[] = [];
  const messages: MessageParam[] = [];
  chat.forEach((m, i) => {
    const blocks = m.role === "system" ? [] : contentBlocks(m);
    if (m.role === "system") {
      const text = messageText(m);
      if (text.trim() !== "") system.push({ type: "text", text });
    }
    const target: Array<TextBlockParam | ContentBlockParam> = m.role === "system" ? system : blocks;
    if (marked.has(i) && target.length > 0) {
      const at = target.length - 1;
      target[at] = { ...target[at], cache_control: EPHEMERAL } as ContentBlockParam;
    }
    if (m.role === "system" || blocks.length === 0) return;
    const role = m.role === "assistant" ? "assistant" : "user";
    const prev = messages[messages.length - 1];
    if (prev?.role === role) (prev.content as ContentBlockParam[]).push(...blocks);
    else messages.push({ role, content: blocks });
  });
  return { system, messages };
}

function contentBlocks(m: ChatMessage): ContentBlockParam[] {
  const text = messageText(m);
  if (m.role === "tool") {
    return [{ type: "tool_result", tool_use_id: m.tool_call_id ?? "", content: text === "" ? "(empty)" : text }];
  }
  // Text parts stay apart (so a mark lands on the last); the API rejects text blocks that are empty or only whitespace.
  const texts = Array.isArray(m.content) ? m.content.map((p) => (typeof p.text === "string" ? p.text : "")) : [text];
  const blocks: ContentBlockParam[] = texts.filter((t) => t.trim() !== "").map((t) => ({ type: "text", text: t }));
  for (const call of m.role === "assistant" ? (m.tool_calls ?? []) : []) {
    blocks.push({ type: "tool_use", id: call.id, name: call.function.name, input: parseArguments(call.function.arguments) });
  }
  return blocks;
}

/** Tool arguments are JSON text in the OpenAI shape and an object in Anthropic's. */
function parseArguments(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
  } catch {
    return { arguments: text };
  }
}


/**
 * A streamed message read to its end, each event told to `alive` and each text delta to `onText`
 * as it comes, and put back together in the shape of a whole message: `message_start` carries
 * the model and the prompt's usage (cache reads and writes), `message_delta` the stop reason and
 * the output tokens.
 */
async function readStream(stream: AsyncIterable<unknown>, name: string, alive: () => void, onText: (delta: string) => void): Promise<unknown> {
  let text = "";
  let model: unknown;
  let stop: unknown;
  let usage: Record<string, unknown> | null = null;
  try {
    for await (const raw of stream) {
      alive();
      // JSON that is no event (null, a list, a number) is the server's garbage, which asking again repeats: not a stream cut short.
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw new LlmError("malformed", `${name}: the stream holds an event that is not a message event: ${quoted(String(JSON.stringify(raw)), 80)}`);
      const e = raw as { type?: unknown; message?: { model?: unknown; usage?: Record<string, unknown> }; delta?: { type?: unknown; text?: unknown; stop_reason?: unknown }; usage?: Record<string, unknown> };
      if (e.type === "message_start") {
        model = e.message?.model;
        // None stays none, as in a whole reply: zero tokens would pass any token budget.
        if (typeof e.message?.usage === "object" && e.message.usage !== null) usage = { ...e.message.usage };
      } else if (e.type === "content_block_delta" && e.delta?.type === "text_delta" && typeof e.delta.text === "string") {
        text += e.delta.text;
        onText(e.delta.text);
      } else if (e.type === "message_delta") {
        stop = e.delta?.stop_reason;
        if (typeof e.usage === "object" && e.usage !== null) usage = mergedUsage(usage, e.usage);
      } else if (e.type === "message_stop") {
        // Nothing follows it: the SDK reads on until the body ends, so a server that holds the
        // connection open would keep the reply waiting for the stall timer. Leaving the loop
        // cancels the response.
        break;
      }
    }
  } catch (e) {
    // Dropped after the stop reason (before message_stop): the reply is whole and paid for, and
    // asking again would pay for it twice.
    if (stop === undefined || stop === null || droppedConnection(e) === undefined) throw e;
  }
  // A stream cut short ends like a whole one; only the stop reason tells them apart.
  if (stop === undefined || stop === null) throw new LlmError("connection", `${name}: the stream ended before the reply was complete`, { delivered: true });
  return { content: [{ type: "text", text }], model, stop_reason: stop, usage };
}

/** Stop reasons of a reply cut before its end: the output limit, or (Sonnet 4.5 and later) the context window filled. */
const CUT: ReadonlySet<unknown> = new Set(["max_tokens", "model_context_window_exceeded"]);

/** Whether a Messages API stop reason says the reply was cut before its end (CUT). */
export function cutShort(stopReason: unknown): boolean {
  return CUT.has(stopReason);
}

/** A `message_delta` event's usage over what came before: its figures are cumulative, and replace the earlier ones where given. */
export function mergedUsage(before: Record<string, unknown> | null, delta: Record<string, unknown>): Record<string, unknown> {
  return { ...(before ?? {}), ...Object.fromEntries(Object.entries(delta).filter(([, v]) => v !== null && v !== undefined)) };
}

/**
 * A Messages API usage as the project counts it: Anthropic's input_tokens leaves out the cached
 * part; the project's inputTokens is the whole prompt. Undefined when it leaves out the input or
 * the output tokens (a gateway's): a count not known is not 0, which would pass any token budget.
 */
export function messageUsage(u: Record<string, unknown>): LlmUsage | undefined {
  if (!isCount(u.input_tokens) || !isCount(u.output_tokens)) return undefined;
  return {
    inputTokens: countOrZero(u.input_tokens) + countOrZero(u.cache_read_input_tokens) + countOrZero(u.cache_creation_input_tokens),
    outputTokens: countOrZero(u.output_tokens),
    cachedTokens: countOrZero(u.cache_read_input_tokens),
    cacheWriteTokens: countOrZero(u.cache_creation_input_tokens),
  };
}

/** Checks the reply is a message with text, and maps its usage (cache reads and writes included); `asked` names the model when the reply does not. */
function parseReply(raw: unknown, name: string, asked: string): LlmResponse {
  if (typeof raw !== "object" || raw === null) throw new LlmError("malformed", `${name}: the reply is not a message (got ${quoted(String(raw), 80)})`);
  const r = raw as { type?: unknown; error?: unknown; content?: unknown; model?: unknown; stop_reason?: unknown; usage?: Record<string, unknown> | null };
  // A gateway that commits its 200 before the upstream fails sends the API's error in the body.
  if (r.type === "error" && typeof r.error === "object" && r.error !== null) throw streamError(name, r, "the reply");
  if (!Array.isArray(r.content)) throw new LlmError("malformed", `${name}: the reply has no content blocks`);
  const text = r.content
    .filter((b): b is { type: "text"; text: string } => typeof b === "object" && b !== null && (b as { type?: unknown }).type === "text" && typeof (b as { text?: unknown }).text === "string")
    .map((b) => b.text)
    .join("");
  const usage = typeof r.usage === "object" && r.usage !== null ? messageUsage(r.usage) : undefined;
  if (text.trim() === "") throw new LlmError("malformed", `${name}: the reply has no text content (stop_reason: ${String(r.stop_reason ?? "none")})`, usage ? { usage } : {});
  return { content: text, ...(usage ? { usage } : {}), model: typeof r.model === "string" && r.model !== "" ? r.model : asked, ...(cutShort(r.stop_reason) ? { truncated: true } : {}) };
}

