// Replays a recording made by `recordingLlm`: the recorded replies are served in order (a
// request that matches a later one, made at once with others, takes that one), and
// every request is compared with the recorded one, so a run that drifts from the recording
// (a changed prompt, tool or interpreter) stops with the first difference instead of
// silently feeding the model's old replies to a different conversation.
import { readFileSync } from "node:fs";
import { jsonSyntaxProblem } from "../json/json-error.js";
import { isArrayArg, isObjectArg, kindOf, mustBe, requestProblem } from "./args.js";
import { abortError, LlmError, type LlmErrorKind } from "./errors.js";
import type { RecordedCall, RecordedClient } from "./recorder.js";
import { messageText } from "./messages.js";
import { streamWhole } from "./stream.js";
import type { ChatMessage, Llm } from "./types.js";

export interface ReplayOptions {
  name?: string;
  /** Compare each request's messages with the recording. Default true. */
  checkRequests?: boolean;
}

export interface ReplayLlm extends Llm {
  /** Recorded calls not served yet. */
  readonly remaining: number;
}

/** Loads a JSONL recording (or takes recorded calls directly). Bad files fail here, with the line. */
export function replayLlm(source: string | readonly RecordedCall[], options: ReplayOptions = {}): ReplayLlm {
  if (typeof source !== "string" && !isArrayArg(source)) throw new LlmError("config", mustBe("replayLlm: source", "a recording's file name or an array of recorded calls", source));
  if (!isObjectArg(options)) throw new LlmError("config", mustBe("replayLlm: options", "an object of options", options));
  const calls = typeof source === "string" ? loadRecording(source) : checkCalls(source);
  const name = options.name ?? (typeof source === "string" ? `replay:${source}` : "replay");
  const check = options.checkRequests ?? true;
  const client = recordedClient(calls);
  // Served calls; `next` is the first not served yet, `left` how many are not.
  const served = new Array<boolean>(calls.length).fill(false);
  let next = 0;
  let left = calls.length;

  return {
    name,
    // The recorded client's cache settings, which a compressed history lays the recorded prompts out for.
    ...(client?.cacheModel === undefined ? {} : { cacheModel: client.cacheModel }),
    ...(client === undefined ? {} : { standsFor: client.name }),
    get remaining() {
      return left;
    },
    async complete(request) {
      const problem = requestProblem(name, request);
      if (problem !== undefined) throw new LlmError("config", problem);
      if (request.signal?.aborted) throw abortError(request.signal, name);
      while (next < calls.length && served[next]) next++;
      const number = calls.length - left + 1;
      let index = next;
      if (index >= calls.length) {
        throw new LlmError("exhausted", `${name}: the recording has ${calls.length} call${calls.length === 1 ? "" : "s"}; request ${number} has no recorded reply`);
      }
      if (check) {
        const difference = firstDifference(calls[index].request.messages, request.messages);
        if (difference) {
          // Calls that overlapped (nested agents in a pmap) are recorded as they finished, which
          // the replay's need not repeat: a later call not served yet with this very request answers it.
          index = calls.findIndex((c, i) => i > next && !served[i] && firstDifference(c.request.messages, request.messages) === undefined);
          if (index < 0) throw new LlmError("diverged", `${name}: request ${number} differs from the recording: ${difference}`);
        }
      }
      served[index] = true;
      left--;
      const call = calls[index];
      if (call.error) throw new LlmError(call.error.kind === "unknown" ? "malformed" : call.error.kind, `(replayed) ${call.error.message}`);
      const response = call.response as NonNullable<RecordedCall["response"]>;
      streamWhole(response.content, request.onText);
      return response;
    },
  };
}

/** The client the recording was made through: the one its lines name, when they agree (none for runs recorded through different clients, or before clients were recorded). */
function recordedClient(calls: readonly RecordedCall[]): RecordedClient | undefined {
  let client: RecordedClient | undefined;
  for (const c of calls) {
    if (c.client === undefined) continue;
    if (client !== undefined && (c.client.name !== client.name || c.client.cacheModel !== client.cacheModel)) return undefined;
    client = c.client;
  }
  return client;
}

/** Reads and validates a recording; every problem names the file and line. */
export function loadRecording(file: string): RecordedCall[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new LlmError("config", `replay: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  return parseRecording(text, file);
}

/** Validates the text of a recording read by the caller (`file` names it in errors); every problem names the line. */
export function parseRecording(text: string, file: string): RecordedCall[] {
  const calls: RecordedCall[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === "") continue;
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch (e) {
      // The column is in the untrimmed line, where an editor finds it.
      const p = jsonSyntaxProblem(line, e);
      const column = p.column === undefined ? "" : `:${p.column + lines[i].length - lines[i].trimStart().length}`;
      throw new LlmError("config", `replay: ${file}:${i + 1}${column}: not valid JSON (${p.reason})`);
    }
    const problem = checkCall(entry);
    if (problem) throw new LlmError("config", `replay: ${file}:${i + 1}: ${problem}`);
    calls.push(entry as RecordedCall);
  }
  return calls;
}

function checkCalls(calls: readonly RecordedCall[]): readonly RecordedCall[] {
  calls.forEach((c, i) => {
    const problem = checkCall(c);
    if (problem) throw new LlmError("config", `replay: call ${i + 1}: ${problem}`);
  });
  return calls;
}

const ROLES = new Set(["system", "user", "assistant", "tool"]);
const KINDS: ReadonlySet<string> = new Set<LlmErrorKind | "unknown">(["config", "rate_limit", "server", "http", "connection", "timeout", "aborted", "malformed", "exhausted", "diverged", "unknown"]);

function checkCall(v: unknown): string | undefined {
  if (!isObjectArg(v)) return `expected an object with request and response, got ${kindOf(v)}`;
  const { request, response, error, client } = v as Partial<Record<keyof RecordedCall, unknown>>;
  const messages = (request as { messages?: unknown } | undefined)?.messages;
  if (!Array.isArray(messages)) return "request.messages is missing";
  for (const m of messages as unknown[]) {
    const { role, content } = (isObjectArg(m) ? m : {}) as { role?: unknown; content?: unknown };
    if (typeof role !== "string" || !ROLES.has(role) || typeof content !== "string") return "request.messages holds a message without a valid role and text content";
  }
  if (client !== undefined) {
    const { name, cacheModel } = (isObjectArg(client) ? client : {}) as { name?: unknown; cacheModel?: unknown };
    if (typeof name !== "string" || (cacheModel !== undefined && cacheModel !== "token-prefix" && cacheModel !== "breakpoint")) return 'client needs a name and, if any, the cacheModel "token-prefix" or "breakpoint"';
  }
  if (error !== undefined) {
    const { kind, message } = error as { kind?: unknown; message?: unknown };
    return typeof kind === "string" && KINDS.has(kind) && typeof message === "string" ? undefined : "error needs a known kind and a message";
  }
  if (typeof (response as { content?: unknown } | undefined)?.content !== "string") return "response.content is missing";
  return undefined;
}

/** Describes the first place where two message lists differ, or returns undefined. */
function firstDifference(recorded: readonly ChatMessage[], sent: readonly ChatMessage[]): string | undefined {
  const n = Math.max(recorded.length, sent.length);
  for (let i = 0; i < n; i++) {
    const r = recorded[i];
    const s = sent[i];
    if (r === undefined) return `message ${i + 1} (${s.role}) was sent but not recorded (recorded ${recorded.length} messages, sent ${sent.length})`;
    if (s === undefined) return `message ${i + 1} (${r.role}) was recorded but not sent (recorded ${recorded.length} messages, sent ${sent.length})`;
    if (r.role !== s.role) return `message ${i + 1} has role ${s.role}, recorded ${r.role}`;
    const rt = messageText(r);
    const st = messageText(s);
    if (rt !== st) {
      let at = 0;
      while (at < rt.length && rt.charCodeAt(at) === st.charCodeAt(at)) at++;
      const excerpt = (t: string) => JSON.stringify(t.slice(Math.max(0, at - 20), at + 40));
      return `message ${i + 1} (${r.role}) differs at character ${at + 1}: recorded ${excerpt(rt)}, sent ${excerpt(st)}`;
    }
  }
  return undefined;
}
