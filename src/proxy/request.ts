// Reading a chat-completions request: the checks that turn a malformed body into a 400 with a
// reason, and the parts of it the token budget needs. Returns a reason instead of throwing.
import { randomBytes } from "node:crypto";
import { forCompaction, messageProblem } from "../compaction/compact.js";
import { inputTokens, inputTokensYielding } from "../compaction/measure.js";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../json/depth.js";
import { jsonSyntaxError } from "../json/json-error.js";
import { whereInvalid } from "../json/text-input.js";
import { messageText } from "../llm/messages.js";
import type { ChatMessage, ToolCall } from "../llm/types.js";

export interface ChatRequest {
  readonly body: Record<string, unknown>;
  readonly messages: ChatMessage[];
  readonly model: string | undefined;
  readonly tools: unknown[] | undefined;
  readonly stream: boolean;
  /** max_completion_tokens or max_tokens, when the client set one. */
  readonly maxTokens: number | undefined;
  /**
   * The messages sent, as the budget counts them, when `messages` (what the compaction gets) is
   * empty though the request is not: a Responses input given as a string, or continuing a stored response.
   */
  readonly uncompacted?: ChatMessage[];
}

const ROLES = new Set(["system", "developer", "user", "assistant", "tool", "function"]);

export type ParsedRequest = { ok: true; request: ChatRequest } | { ok: false; error: string; param?: string };

// A byte-order mark is kept, so JSON.parse refuses it as before (the body may be forwarded as it came).
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * A request body's text, or why it is not UTF-8 (the first bad byte by line and column). Read
 * loosely, a Latin-1 "Zürich" became "Z\uFFFDrich" in every body the proxy rewrites (a stream's
 * stream_options, a compaction) and in every setting an admin update writes.
 */
export function bodyText(raw: Buffer): { ok: true; text: string } | { ok: false; error: string } {
  try {
    return { ok: true, text: STRICT_UTF8.decode(raw) };
  } catch {
    return { ok: false, error: `the request body is not UTF-8: ${whereInvalid(raw)}` };
  }
}

/** A request body as a JSON object, or the 400 to answer; every API's parser starts here. */
export function parseJsonObject(raw: Buffer): { ok: true; body: Record<string, unknown> } | { ok: false; error: string } {
  const decoded = bodyText(raw);
  if (!decoded.ok) return decoded;
  const text = decoded.text;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `the request body is not valid JSON (${jsonSyntaxError(text, e)})` };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return { ok: false, error: "the request body must be a JSON object" };
  if (nestedDeeperThan(body)) return { ok: false, error: `the request body is nested deeper than ${MAX_JSON_DEPTH} levels` };
  // Rare (a seed, an id in metadata or a tool's input), so looked for only where 16 digits stand in
  // a row or an exponent has 3 digits: a literal a double overflows has one or the other (with 2,
  // its mantissa has over 200 digits).
  if (INEXACT_HINT.test(text)) {
    const kept = keepInexactNumbers(text);
    if (kept !== undefined) {
      body = JSON.parse(kept, (_k, v: unknown) => (typeof v === "string" && v.startsWith(EXACT) ? new ExactNumber(v.slice(EXACT.length)) : v));
      exactBodies.add(body as object);
    }
  }
  return { ok: true, body: body as Record<string, unknown> };
}

/**
 * A number literal a double cannot hold (an integer past 2^53: a seed, an id; or one past the
 * double range, 1e400, which JSON.stringify writes as null), kept as written so a body the proxy
 * rewrites sends it unchanged. Anything that reads it as JSON (counting, hashing, a summary
 * prompt) sees its literal as a string.
 */
export class ExactNumber {
  constructor(readonly literal: string) {}
  toJSON(): string {
    return this.literal;
  }
}

// The exponent as a number ends it, so hex ids in text ("3e456f") rarely send a body to the scan.
const INEXACT_HINT = /\d{16}|\d[eE][+-]?\d{3,}(?!\w)/;
// Stands for an exact number between parsing and serializing: no client can write it, not knowing the nonce.
const EXACT = `\u0000ptc-exact-${randomBytes(8).toString("hex")}:`;
const EXACT_STRING = new RegExp(`"${JSON.stringify(EXACT).slice(1, -1).replace(/\\/g, "\\\\")}(-?[\\d.eE+-]+)"`, "g");
/** Bodies holding an ExactNumber: only these need the slower serialization. */
const exactBodies = new WeakSet<object>();

const isNumberChar = (c: number): boolean => (c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69;

/**
 * The (valid JSON) text with each number outside strings that a double cannot hold (an integer
 * past 2^53, a literal past the double range) turned into a string that stands for it; undefined
 * when there is none. A loop, not a regular expression: one over a string of megabytes overflows
 * the stack.
 */
function keepInexactNumbers(text: string): string | undefined {
  let out: string[] | undefined;
  let last = 0;
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // To the closing quote: one not escaped by an odd run of backslashes.
      let end = text.indexOf('"', i + 1);
      for (;;) {
        let k = end - 1;
        while (text.charCodeAt(k) === 92) k--;
        if ((end - 1 - k) % 2 === 0) break;
        end = text.indexOf('"', end + 1);
      }
      i = end + 1;
    } else if (isNumberChar(c)) {
      let j = i + 1;
      while (j < text.length && isNumberChar(text.charCodeAt(j))) j++;
      const token = text.slice(i, j);
      // Only a valid number overflows to Infinity (the "e" of true and false gives NaN).
      const n = Number(token);
      if (n === Infinity || n === -Infinity || (j - i >= 16 && /^-?\d+$/.test(token) && !Number.isSafeInteger(n))) {
        (out ??= []).push(text.slice(last, i), JSON.stringify(EXACT + token));
        last = j;
      }
      i = j;
    } else i++;
  }
  if (out === undefined) return undefined;
  out.push(text.slice(last));
  return out.join("");
}

/**
 * A rewritten request body as JSON: `value` is made from `body` (parseJsonObject's), and the
 * numbers a double cannot hold are written as the client wrote them.
 */
export function serializeBody(value: unknown, body: Record<string, unknown>): string {
  if (!exactBodies.has(body)) return JSON.stringify(value);
  return JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown) {
    const own = this[key];
    return own instanceof ExactNumber ? EXACT + own.literal : v;
  }).replace(EXACT_STRING, "$1");
}

const isObject = (v: unknown): boolean => typeof v === "object" && v !== null && !Array.isArray(v);

/** The first of `fields` of `o` (when it is an object) set to something other than a string, as `prefix` + its name. */
function notText(o: unknown, fields: readonly string[], prefix = ""): string | undefined {
  if (typeof o !== "object" || o === null || Array.isArray(o)) return undefined;
  const bad = fields.find((f) => (o as Record<string, unknown>)[f] !== undefined && typeof (o as Record<string, unknown>)[f] !== "string");
  return bad === undefined ? undefined : prefix + bad;
}

/**
 * A client's value where text is needed (an id, a name): a string as it is, anything else as JSON.
 * String() fails on an object whose toString is not a function ({"toString": 1}), a 500.
 */
export const asText = (v: unknown): string => (typeof v === "string" ? v : typeof v === "object" && v !== null ? JSON.stringify(v) : String(v));
const isObjectArray = (v: unknown): v is unknown[] => Array.isArray(v) && v.every(isObject);

/** The path of the first element of `list` that is not an object, or undefined when all are. */
export function notAnObject(list: readonly unknown[], path: string): string | undefined {
  const j = list.findIndex((v) => !isObject(v));
  return j === -1 ? undefined : `${path}[${j}]`;
}

/**
 * A new message the compaction built around a kept message's tool calls (recap merges the recap
 * lines before a step into the step, see mergeRuns): the kept message, found by its calls in
 * `byCall`, and the text put before its own. Undefined for any other message.
 */
export function mergedInto(m: ChatMessage, byCall: ReadonlyMap<ToolCall, ChatMessage>): { kept: ChatMessage; before: string } | undefined {
  const kept = m.tool_calls === undefined || m.tool_calls.length === 0 ? undefined : byCall.get(m.tool_calls[0]);
  if (kept === undefined) return undefined;
  const text = messageText(m);
  const own = messageText(kept);
  return { kept, before: own !== "" && text.endsWith(`\n${own}`) ? text.slice(0, text.length - own.length - 1) : text };
}

export function parseChatRequest(raw: Buffer): ParsedRequest {
  const parsed = parseJsonObject(raw);
  if (!parsed.ok) return parsed;
  const b = parsed.body;
  if (!Array.isArray(b.messages) || b.messages.length === 0) return { ok: false, error: "'messages' must be a non-empty array", param: "messages" };
  for (let i = 0; i < b.messages.length; i++) {
    const m: unknown = b.messages[i];
    if (typeof m !== "object" || m === null || Array.isArray(m)) return { ok: false, error: `messages[${i}] must be an object`, param: `messages[${i}]` };
    const { role, content } = m as { role?: unknown; content?: unknown };
    if (typeof role !== "string" || !ROLES.has(role)) return { ok: false, error: `messages[${i}].role must be one of ${[...ROLES].join(", ")}, got ${JSON.stringify(role)}`, param: `messages[${i}].role` };
    if (!(content === undefined || content === null || typeof content === "string" || Array.isArray(content))) {
      return { ok: false, error: `messages[${i}].content must be a string, an array of parts or null`, param: `messages[${i}].content` };
    }
    // Parts and calls are read to count and hash the prompt: one that is not an object is the client's error.
    const part = Array.isArray(content) ? notAnObject(content, `messages[${i}].content`) : undefined;
    if (part !== undefined) return { ok: false, error: `${part} must be a content part (an object)`, param: part };
    const calls = (m as { tool_calls?: unknown }).tool_calls;
    if (calls !== undefined && calls !== null && !isObjectArray(calls)) return { ok: false, error: `messages[${i}].tool_calls must be an array of objects`, param: `messages[${i}].tool_calls` };
    // Counted as text: one of another type (an object whose toString is a number) failed as a 500.
    const name = (m as { name?: unknown }).name;
    if (name !== undefined && name !== null && typeof name !== "string") return { ok: false, error: `messages[${i}].name must be a string`, param: `messages[${i}].name` };
    for (let j = 0; Array.isArray(calls) && j < calls.length; j++) {
      const call = calls[j] as Record<string, unknown>;
      const field = notText(call, ["id", "type"]) ?? notText(call.function, ["name", "arguments"], "function.") ?? notText(call.custom, ["name"], "custom.");
      if (field !== undefined) return { ok: false, error: `messages[${i}].tool_calls[${j}].${field} must be a string`, param: `messages[${i}].tool_calls[${j}].${field}` };
    }
    // Whatever else the compaction cannot take (a tool call without a function name or arguments)
    // would fail it on every request, each going upstream uncompacted: the client's error.
    const problem = messageProblem(m);
    if (problem !== undefined) {
      const param = `messages[${i}]${problem.field === "" ? "" : `.${problem.field.replace(/\.(\d+)/g, "[$1]")}`}`;
      return { ok: false, error: `messages[${i}] ${problem.problem}`, param };
    }
  }
  if (b.model !== undefined && typeof b.model !== "string") return { ok: false, error: "'model' must be a string", param: "model" };
  if (b.tools !== undefined && !Array.isArray(b.tools)) return { ok: false, error: "'tools' must be an array", param: "tools" };
  if (b.stream !== undefined && typeof b.stream !== "boolean") return { ok: false, error: "'stream' must be a boolean", param: "stream" };
  if (b.stream_options !== undefined && b.stream_options !== null && (typeof b.stream_options !== "object" || Array.isArray(b.stream_options))) {
    return { ok: false, error: "'stream_options' must be an object", param: "stream_options" };
  }
  const max = typeof b.max_completion_tokens === "number" ? b.max_completion_tokens : typeof b.max_tokens === "number" ? b.max_tokens : undefined;
  return {
    ok: true,
    request: { body: b, messages: b.messages as ChatMessage[], model: b.model as string | undefined, tools: b.tools as unknown[] | undefined, stream: b.stream === true, maxTokens: max },
  };
}

/** A client's prompt (messages and tool schemas) counted by the one measure, as the compaction library sees it. */
export function clientPromptTokens(messages: ChatMessage[], tools: readonly unknown[] | undefined): number {
  return inputTokens(clientPrompt(messages, tools));
}

/**
 * clientPromptTokens on the request path: a body of megabytes is counted with turns of the event
 * loop between its pieces (8 MB of text in one count held every other request for over half a
 * second), and the counts are kept per message, so the compaction and the charge count it no more.
 */
export function clientPromptTokensYielding(messages: ChatMessage[], tools: readonly unknown[] | undefined): Promise<number> {
  return inputTokensYielding(clientPrompt(messages, tools));
}

const clientPrompt = (messages: ChatMessage[], tools: readonly unknown[] | undefined) => ({ messages: forCompaction(messages).messages, ...(tools === undefined ? {} : { tools }) });
