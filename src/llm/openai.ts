// An `Llm` over any OpenAI-compatible chat-completions server, on the official `openai`
// package, with the retries of retry.ts.
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai";
import { Stream } from "openai/core/streaming";
import { baseUrlProblem, countOrZero, isCount, isObjectArg, mustBe, requestProblem, samplingProblem } from "./args.js";
import { LlmError } from "./errors.js";
import { cappedFetch, droppedConnection, quoted, retrySettings, sdkBackstopMs, sdkError, streamError, withRetries, type RetryOptions, type SdkErrors } from "./retry.js";
import { sdkLogLevel, withSdkEnv } from "./sdk-env.js";
import { unstreamedReply, watchForDone, wholeReply } from "./stream.js";
import type { ChatCompletionMessageParam } from "openai/resources/chat/completions";
import type { Llm, LlmResponse, LlmUsage } from "./types.js";

const SDK_ERRORS: SdkErrors = { ConnectionTimeout: APIConnectionTimeoutError, UserAbort: APIUserAbortError, Connection: APIConnectionError, Api: APIError };

export type { RetryInfo } from "./retry.js";

export interface OpenAiLlmOptions extends RetryOptions {
  /** Model name; default `OPENAI_MODEL`. */
  model?: string;
  /** Server base URL (…/v1); default `OPENAI_BASE_URL`, else the OpenAI API. */
  baseURL?: string;
  /** Default `OPENAI_API_KEY`; optional when `baseURL` points at a server that ignores it. */
  apiKey?: string;
  /** Sampling temperature; left out once the server refuses it (a reasoning model takes only its default). */
  temperature?: number;
  /** Upper bound on reply tokens (`max_tokens`, or `max_completion_tokens` once the server refuses `max_tokens`). */
  maxTokens?: number;
  /**
   * Where the defaults come from, `OPENAI_ORG_ID` and `OPENAI_PROJECT_ID` too (sent as the
   * `OpenAI-Organization` and `OpenAI-Project` headers), and the SDK's `OPENAI_CUSTOM_HEADERS`
   * and `OPENAI_LOG`; default `process.env`.
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** The subset of the reply this client reads: every field is checked, none trusted. */
interface CompletionShape {
  model?: unknown;
  choices?: unknown;
  /** A failure a gateway sends in a 200's body, having committed the status before the provider ran (OpenRouter). */
  error?: unknown;
  usage?: {
    prompt_tokens?: unknown;
    completion_tokens?: unknown;
    prompt_tokens_details?: { cached_tokens?: unknown } | null;
    /** DeepSeek's name for cached prompt tokens. */
    prompt_cache_hit_tokens?: unknown;
  } | null;
}


/** Creates a client for an OpenAI-compatible server. Throws a `config` LlmError when no model is given. */
export function openaiLlm(options: OpenAiLlmOptions = {}): Llm {
  if (!isObjectArg(options)) throw new LlmError("config", mustBe("openaiLlm: options", "an object of options", options));
  const env = options.env ?? process.env;
  const model = options.model ?? env.OPENAI_MODEL;
  const baseURL = options.baseURL ?? env.OPENAI_BASE_URL;
  const apiKey = options.apiKey ?? env.OPENAI_API_KEY;
  if (!model) throw new LlmError("config", "openaiLlm: no model given (pass { model } or set OPENAI_MODEL)");
  if (!apiKey && !baseURL) throw new LlmError("config", "openaiLlm: no API key (pass { apiKey } or set OPENAI_API_KEY), and no baseURL of a server that needs none");
  const badSampling = samplingProblem("openaiLlm", options.maxTokens, options.temperature);
  if (badSampling !== undefined) throw new LlmError("config", badSampling);
  const badUrl = baseUrlProblem("openaiLlm", baseURL);
  if (badUrl !== undefined) throw new LlmError("config", badUrl);
  const retry = retrySettings("openaiLlm", options);
  const name = `openai:${model}`;
  // Local servers ignore the key, but the SDK insists on one. The attempt's own controller
  // (withRetries) bounds each attempt; the SDK's timeout is only a backstop set past it, since
  // when both fire together a body cut by the SDK reads as a connection error, not a timeout.
  // The SDK reads process.env for an option left undefined, whatever `env` says: null leaves it unread.
  const account = { baseURL: baseURL ?? null, organization: env.OPENAI_ORG_ID ?? null, project: env.OPENAI_PROJECT_ID ?? null };
  const client = withSdkEnv(env, ["OPENAI_CUSTOM_HEADERS", "OPENAI_LOG"], () => new OpenAI({ apiKey: apiKey || "unused", ...account, maxRetries: 0, timeout: sdkBackstopMs(retry.timeoutMs), fetch: cappedFetch(name, retry.maxReplyBytes), ...sdkLogLevel(env.OPENAI_LOG) }));
  // The parameters the server refused for a model (400 naming the param, code unsupported_...),
  // left out of that model's later requests: OpenAI's reasoning models (o-series, gpt-5) take
  // `max_completion_tokens` for `max_tokens`, which other OpenAI-compatible servers may not know,
  // and only the default temperature. Per model: a request may name another model, which takes them.
  const refusedBy = new Map<string, Set<"max_tokens" | "temperature">>();

  return {
    name,
    complete(request) {
      const problem = requestProblem(name, request);
      if (problem !== undefined) return Promise.reject(new LlmError("config", problem));
      const maxTokens = request.maxOutputTokens ?? options.maxTokens;
      const wanted = request.model ?? (model as string);
      const refused = refusedBy.get(wanted) ?? new Set();
      const body = () => ({
        model: wanted,
        // The wire shape is OpenAI's own; tool calls, ids and names pass through.
        messages: request.messages as unknown as ChatCompletionMessageParam[],
        ...(options.temperature === undefined || refused.has("temperature") ? {} : { temperature: options.temperature }),
        ...(maxTokens === undefined ? {} : refused.has("max_tokens") ? { max_completion_tokens: maxTokens } : { max_tokens: maxTokens }),
      });
      const onText = request.onText;
      const sendOnce = async (signal: AbortSignal, attempt: number, alive: () => void) => {
        if (onText === undefined) {
          const { data, response } = await client.chat.completions.create(body(), { signal }).withResponse();
          return wholeReply(data, response, name, (reply) => parseCompletion(reply, name, wanted));
        }
        const response = await client.chat.completions.create({ ...body(), stream: true, stream_options: { include_usage: true } }, { signal }).asResponse();
        const whole = await unstreamedReply(response, name, (reply) => parseCompletion(reply, name, wanted), (text) => onText(text, attempt));
        if (whole !== undefined) return whole;
        const watched = watchForDone(response);
        const stream = Stream.fromSSEResponse<unknown>(watched.response, new AbortController(), client);
        return parseCompletion(await readStream(stream, name, alive, (delta) => onText(delta, attempt), watched.done), name, wanted);
      };
      const send = async (signal: AbortSignal, attempt: number, alive: () => void): Promise<LlmResponse> => {
        try {
          return await sendOnce(signal, attempt, alive);
        } catch (e) {
          // Only a parameter refused as such: a max_tokens too large (invalid_value) stays an error.
          const param = e instanceof APIError && e.status === 400 && typeof e.code === "string" && e.code.startsWith("unsupported_") ? e.param : undefined;
          const sent = param === "max_tokens" ? maxTokens !== undefined : param === "temperature" && options.temperature !== undefined;
          if (!sent || refused.has(param as "max_tokens" | "temperature")) throw e;
          refused.add(param as "max_tokens" | "temperature");
          refusedBy.set(wanted, refused);
          return send(signal, attempt, alive);
        }
      };
      return withRetries(name, retry, request, send, (e, signal) => sdkError(e, signal, name, SDK_ERRORS, apiKey));
    },
  };
}

/**
 * A streamed completion read to its end, each chunk told to `alive` and each content delta to
 * `onText` as it comes, and put back together in the shape of a whole completion (usage from the
 * final chunk `include_usage` asks for).
 */
async function readStream(stream: AsyncIterable<unknown>, name: string, alive: () => void, onText: (delta: string) => void, done: () => boolean): Promise<CompletionShape> {
  let content = "";
  let refusal = "";
  let finish: unknown = null;
  const out: CompletionShape = {};
  try {
    for await (const raw of stream) {
      alive();
      // JSON that is no chunk (null, a list, choices that are no list) is the server's garbage,
      // which asking again repeats: not a stream cut short.
      if (!isChunk(raw)) throw new LlmError("malformed", `${name}: the stream holds an event that is not a chat completion chunk: ${quoted(String(JSON.stringify(raw)), 80)}`);
      const chunk = raw;
      if (typeof chunk.model === "string") out.model = chunk.model;
      if (chunk.usage) out.usage = chunk.usage;
      // The first choice's pieces only, as a whole reply's first choice: a server answering with several interleaves them.
      const choice = (Array.isArray(chunk.choices) ? (chunk.choices as unknown[]).find(firstChoice) : undefined) as { delta?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown; error?: unknown } | undefined;
      if (choice?.finish_reason === "error") throw streamError(name, choice.error ?? chunk);
      const text = replyText(choice?.delta?.content);
      if (text !== undefined && text !== "") {
        content += text;
        onText(text);
      }
      const refusalDelta = choice?.delta?.refusal;
      if (typeof refusalDelta === "string") refusal += refusalDelta;
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
  } catch (e) {
    // Dropped after the finish reason (before the usage chunk or [DONE]): the reply is whole and
    // paid for, and asking again would pay for it twice.
    if ((finish === null && !done()) || droppedConnection(e) === undefined) throw e;
  }
  // A stream cut short ends like a whole one; only the finish reason, or the [DONE] of a server
  // that sends none, tells them apart.
  if (finish === null && !done()) throw new LlmError("connection", `${name}: the stream ended before the reply was complete`, { delivered: true });
  out.choices = [{ message: { content, ...(refusal ? { refusal } : {}) }, finish_reason: finish }];
  return out;
}

/** Whether a stream's event is a chunk: an object whose choices are a list, or left out or null in the usage chunk. */
function isChunk(raw: unknown): raw is CompletionShape {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return false;
  const { choices, usage } = raw as CompletionShape;
  return choices === undefined || Array.isArray(choices) || (choices === null && typeof usage === "object" && usage !== null);
}

/** A stream's piece of the first choice: index 0, or no index at all (a server that sends one choice may leave it out). */
function firstChoice(c: unknown): boolean {
  const index = (c as { index?: unknown } | null)?.index;
  return index === undefined || index === 0;
}

/**
 * A reply's (or a delta's) text: its content string, or the text chunks of a content list, as
 * Mistral's reasoning models send it (a `thinking` chunk, then `text` ones); undefined for neither.
 */
function replyText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  let text = "";
  for (const part of content as unknown[]) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (p?.type === "text" && typeof p.text === "string") text += p.text;
  }
  return text;
}

/** Checks the reply is a chat completion with text, and maps its usage; `asked` names the model when the reply does not. */
function parseCompletion(raw: unknown, name: string, asked: string): LlmResponse {
  if (typeof raw !== "object" || raw === null) {
    throw new LlmError("malformed", `${name}: the reply is not a chat completion (got ${typeof raw === "string" ? `text: ${quoted(JSON.stringify(raw), 80)}` : String(raw)})`);
  }
  const c = raw as CompletionShape;
  if (typeof c.error === "object" && c.error !== null) throw streamError(name, c, "the reply");
  const u = c.usage;
  // A count left out is not known, not 0, which would pass any token budget: no usage then.
  const usage: LlmUsage | undefined =
    u && isCount(u.prompt_tokens) && isCount(u.completion_tokens)
      ? {
          inputTokens: u.prompt_tokens,
          outputTokens: u.completion_tokens,
          cachedTokens: countOrZero(u.prompt_tokens_details?.cached_tokens) || countOrZero(u.prompt_cache_hit_tokens),
        }
      : undefined;
  // Answered with no choice, the prompt was still read and billed.
  if (!Array.isArray(c.choices) || c.choices.length === 0) throw new LlmError("malformed", `${name}: the reply has no choices`, usage ? { usage } : {});
  const choice = c.choices[0] as { message?: { content?: unknown; refusal?: unknown }; finish_reason?: unknown; error?: unknown } | null;
  if (choice?.finish_reason === "error") throw streamError(name, choice.error ?? c, "the reply");
  const content = replyText(choice?.message?.content);
  if (content === undefined || content.trim() === "") {
    const refusal = choice?.message?.refusal;
    const why = typeof refusal === "string" && refusal ? `the model refused: ${refusal}` : `finish_reason: ${String(choice?.finish_reason ?? "none")}`;
    throw new LlmError("malformed", `${name}: the reply has no text content (${why})`, usage ? { usage } : {});
  }
  return { content, ...(usage ? { usage } : {}), model: typeof c.model === "string" && c.model !== "" ? c.model : asked, ...(choice?.finish_reason === "length" ? { truncated: true } : {}) };
}

