// A deterministic, offline `Llm` that serves a fixed list of replies in order: the default
// for tests and examples. It is no provider, so it reports no usage unless a reply carries one:
// the agent then measures its prompts locally, as every other part of the product does.
import { isArrayArg, isObjectArg, kindOf, mustBe, requestProblem } from "./args.js";
import { abortError, LlmError, sleep } from "./errors.js";
import { messageText } from "./messages.js";
import { streamWhole } from "./stream.js";
import type { TextMessage, Llm, LlmRequest, LlmResponse } from "./types.js";

/** A reply: its text, a full response, or a function of the request (for tests that react). */
export type ScriptedReply = string | LlmResponse | ((request: LlmRequest) => string | LlmResponse | Promise<string | LlmResponse>);

export interface ScriptedLlmOptions {
  /** Its name, and the model its replies say they came from (default "scripted"). */
  name?: string;
  /** Simulated latency of every reply (abortable). Default 0. */
  delayMs?: number;
}

export interface ScriptedLlm extends Llm {
  /** The requests served so far, in order (messages copied with their text content, signal dropped). */
  readonly requests: ReadonlyArray<{ turn?: number; messages: TextMessage[] }>;
  /** Replies not served yet. */
  readonly remaining: number;
}

/** Serves `replies` in order; fails with an `exhausted` LlmError once they run out. */
export function scriptedLlm(replies: readonly ScriptedReply[], options: ScriptedLlmOptions = {}): ScriptedLlm {
  if (!isArrayArg(replies)) throw new LlmError("config", mustBe("scriptedLlm: replies", "an array of replies", replies));
  if (!isObjectArg(options)) throw new LlmError("config", mustBe("scriptedLlm: options", "an object of options", options));
  replies.forEach((r, i) => {
    if (!isReply(r)) throw new LlmError("config", mustBe(`scriptedLlm: replies[${i}]`, "a string, a response { content } or a function of the request", r));
  });
  const name = options.name ?? "scripted";
  const requests: Array<{ turn?: number; messages: TextMessage[] }> = [];

  return {
    name,
    get requests() {
      return requests;
    },
    get remaining() {
      return Math.max(0, replies.length - requests.length);
    },
    async complete(request) {
      const problem = requestProblem(name, request);
      if (problem !== undefined) throw new LlmError("config", problem);
      if (request.signal?.aborted) throw abortError(request.signal, name);
      const index = requests.length;
      if (index >= replies.length) {
        throw new LlmError("exhausted", `${name}: no reply scripted for request ${index + 1} (the script has ${replies.length})`);
      }
      requests.push({ ...(request.turn === undefined ? {} : { turn: request.turn }), messages: request.messages.map((m) => ({ ...m, content: messageText(m) })) });
      if (options.delayMs) await sleep(options.delayMs, request.signal, name);
      const scripted = replies[index];
      const produced = typeof scripted === "function" ? await scripted(request) : scripted;
      if (typeof produced !== "string" && !isResponse(produced)) throw new LlmError("config", `${name}: reply ${index + 1} (a function) must answer a string or a response { content }, got ${kindOf(produced)}`);
      const response: LlmResponse = typeof produced === "string" ? { content: produced } : produced;
      streamWhole(response.content, request.onText);
      return { content: response.content, model: response.model ?? name, ...(response.usage ? { usage: response.usage } : {}), ...(response.truncated === true ? { truncated: true } : {}) };
    },
  };
}

/** A reply as scripted: text, a response with text content, or a function (checked when it answers). */
function isReply(r: unknown): boolean {
  return typeof r === "string" || typeof r === "function" || isResponse(r);
}

function isResponse(r: unknown): r is LlmResponse {
  return isObjectArg(r) && typeof (r as { content?: unknown }).content === "string";
}
