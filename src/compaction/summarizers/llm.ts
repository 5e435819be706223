// The LLM summarizer: fills a prompt template, asks `context.llm` (usually a cheaper model than
// the conversation's), parses the JSON reply and validates it. Accepted summaries are cached by
// the exact messages and previous summary they cover, so a retry or re-run costs no call.
import { createHash } from "node:crypto";
import { abortError, LlmError } from "../../llm/errors.js";
import { transcript } from "../messages.js";
import { fill, template as promptTemplate } from "../../llm/templates.js";
import { counted } from "../tokens.js";
import type { CompactionContext, Summarizer, SummaryRequest, SummaryResult } from "../types.js";
import { summaryProblem } from "./validate.js";

export type SummaryTemplate = "conversation" | "code";

export interface LlmSummarizerOptions {
  /** "code" also lists the known variables (from `knownNames`, never from the model). Default "conversation". */
  readonly template?: SummaryTemplate;
  /** Model override passed to the client (e.g. a cheaper model behind the same endpoint). */
  readonly model?: string;
  /** Most summaries kept in memory. Default 256. */
  readonly cacheSize?: number;
  /** Characters of transcript sent to the summarizer at most (about a quarter as many tokens). Default 60000. */
  readonly maxInputChars?: number;
  /** Most milliseconds a summary call may take; the client is then aborted and the call fails. Default 120000. */
  readonly timeoutMs?: number;
}

/**
 * The client's answer, or an LlmError once `timeoutMs` pass ("timeout") or the caller aborts
 * ("aborted"), whether or not the client listens to the signal it is given (it fires too).
 */
export async function boundedCall<T>(call: (signal: AbortSignal) => Promise<T>, timeoutMs: number, caller: AbortSignal | undefined, who = "summarizer"): Promise<T> {
  if (caller?.aborted === true) throw abortError(caller, who);
  const ctl = new AbortController();
  let onAbort: (() => void) | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stopped = new Promise<never>((_, reject) => {
    const stop = (e: LlmError): void => {
      ctl.abort(e);
      reject(e);
    };
    timer = setTimeout(() => stop(new LlmError("timeout", `${who}: no reply within ${timeoutMs} ms`)), timeoutMs);
    if (caller !== undefined) {
      onAbort = () => stop(abortError(caller, who));
      caller.addEventListener("abort", onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([call(ctl.signal), stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort !== undefined) caller?.removeEventListener("abort", onAbort);
  }
}

/** A reply that cannot be used as a summary. */
export class SummaryRejected extends Error {
  override readonly name = "SummaryRejected";
}

function parseReply(content: string): string {
  const body = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, "$1");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new SummaryRejected("the reply is not JSON");
  }
  const summary = typeof parsed === "object" && parsed !== null ? (parsed as { ConversationSummary?: unknown }).ConversationSummary : undefined;
  if (typeof summary !== "string") throw new SummaryRejected('the reply has no "ConversationSummary" string');
  return summary.trim();
}

export function llmSummarizer(options: LlmSummarizerOptions = {}): Summarizer {
  const template = options.template ?? "conversation";
  const limit = options.cacheSize ?? 256;
  const maxInputChars = options.maxInputChars ?? 60_000;
  const timeoutMs = options.timeoutMs ?? 120_000;
  const cache = new Map<string, string>();

  return {
    name: "llm",
    usesLlm: true,
    async summarize(request: SummaryRequest, context: CompactionContext): Promise<SummaryResult> {
      const llm = context.llm;
      if (llm === undefined) throw new Error("compaction: the llm summarizer needs context.llm");
      const names = request.knownNames ?? [];
      const prompt = fill(promptTemplate(`compaction-${template}`), {
        previous: request.previous || "(none)",
        // Long spans get a smaller share per message, and past maxInputChars lose messages from their middle, so the summarizer's own prompt stays bounded.
        transcript: transcript(request.messages, Math.max(200, Math.min(2000, Math.floor(maxInputChars / Math.max(1, request.messages.length)))), maxInputChars),
        maxTokens: String(request.maxTokens),
        variables: names.length > 0 ? names.join(", ") : "(none)",
      });
      const key = createHash("sha256").update(`${template}\0${request.maxTokens}\0${prompt}`).digest("hex");
      const hit = cache.get(key);
      if (hit !== undefined) return { text: hit, llmCalls: 0, inputTokens: 0, outputTokens: 0 };
      const response = await boundedCall(
        (signal) => llm.complete({ messages: [{ role: "user", content: prompt }], ...(options.model === undefined ? {} : { model: options.model }), signal, maxOutputTokens: request.maxTokens * 2 }),
        timeoutMs,
        context.signal,
      ).catch((e: unknown) => {
        // A reply with no text (a reasoning model that spent its output limit thinking) was billed as it reports.
        const paid = e instanceof LlmError ? e.details.usage : undefined;
        throw paid === undefined ? e : Object.assign(e as LlmError, { spend: { calls: 1, inputTokens: counted(paid.inputTokens, prompt), outputTokens: counted(paid.outputTokens, "") } });
      });
      const inputTokens = counted(response.usage?.inputTokens, prompt);
      const outputTokens = counted(response.usage?.outputTokens, response.content);
      let text: string;
      try {
        text = parseReply(response.content);
        if (template === "code" && names.length > 0) text += `\nVariables: ${names.join(", ")}`;
        const problem = summaryProblem(text, request);
        if (problem !== undefined) throw new SummaryRejected(problem);
      } catch (e) {
        // The call was made and paid for even when its reply is rejected.
        throw Object.assign(e instanceof Error ? e : new Error(String(e)), { spend: { calls: 1, inputTokens, outputTokens } });
      }
      if (cache.size >= limit) cache.delete(cache.keys().next().value as string);
      cache.set(key, text);
      return { text, llmCalls: 1, inputTokens, outputTokens };
    },
  };
}

/** Whether an error means the caller gave up (abort), which must not count as a summary failure. */
export function isAbort(e: unknown): boolean {
  return (e instanceof LlmError && e.kind === "aborted") || (e instanceof Error && e.name === "AbortError");
}
