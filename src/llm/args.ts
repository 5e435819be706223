// The first look at what a host passes to a public function: an untyped or careless host's
// null, number, JSON text or revoked Proxy gets an error naming the function and the argument,
// not the engine's "Cannot read properties of null (reading 'turns')" from somewhere inside.
import { maskSecrets } from "./retry.js";

/** What `x` is, in a few words ("null", "a number", "a string of 12 characters", "an array"), never quoting it. */
export function kindOf(x: unknown): string {
  if (x === null || x === undefined) return String(x);
  if (typeof x === "string") return `a string of ${x.length} characters`;
  if (typeof x !== "object" && typeof x !== "function") return `a ${typeof x}`;
  if (!readable(x)) return "an object that cannot be read (a revoked Proxy)";
  if (typeof x === "function") return "a function";
  return Array.isArray(x) ? "an array" : "an object";
}

/** Whether touching `x` works: a revoked Proxy throws at every touch, Array.isArray included. */
function readable(x: object): boolean {
  try {
    Reflect.getPrototypeOf(x);
    return true;
  } catch {
    return false;
  }
}

/** Whether a client's reported token figure is a count (finite, not negative): a custom client's NaN, -5 or "120" is none. */
export const isTokenCount = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n) && n >= 0;

/** Whether `x` is an object that can be read (not null, not a revoked Proxy). */
export function isObjectArg(x: unknown): x is object {
  return typeof x === "object" && x !== null && readable(x);
}

/** Whether `x` is an array that can be read. */
export function isArrayArg(x: unknown): x is unknown[] {
  return isObjectArg(x) && Array.isArray(x);
}

/**
 * Why `url` cannot be an HTTP client's base URL, as `who`'s config error says it, or undefined
 * (none given is the provider's own). Without its scheme, "localhost:11434/v1" reads as a URL of
 * scheme "localhost:" that no request reaches, failing as a connection error after every retry.
 * A password in it is not quoted.
 */
export function baseUrlProblem(who: string, url: unknown): string | undefined {
  if (url === undefined || url === "") return undefined;
  if (typeof url !== "string") return mustBe(`${who}: baseURL`, "an http:// or https:// URL", url);
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = "";
  }
  if (protocol === "http:" || protocol === "https:") return undefined;
  return `${who}: the base URL must be an http:// or https:// URL such as http://localhost:11434/v1, got ${JSON.stringify(maskSecrets(url, []))}`;
}

/**
 * Why an HTTP client's sampling options cannot be sent, as `who`'s config error says it, or
 * undefined: a max_tokens the server refuses at the first request, or a temperature that JSON
 * writes as null (NaN), which the server reads as its default.
 */
export function samplingProblem(who: string, maxTokens: unknown, temperature: unknown): string | undefined {
  const shown = (x: unknown): string => (typeof x === "string" ? JSON.stringify(x) : String(x));
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && (maxTokens as number) >= 1)) return `${who}: maxTokens must be a positive integer, got ${shown(maxTokens)}`;
  if (temperature !== undefined && !(typeof temperature === "number" && Number.isFinite(temperature))) return `${who}: temperature must be a finite number, got ${shown(temperature)}`;
  return undefined;
}

/** The problem with an argument, as an error says it: "`arg` must be `what`, got a number". */
export function mustBe(arg: string, what: string, x: unknown): string {
  return `${arg} must be ${what}, got ${kindOf(x)}`;
}

/**
 * Why `request` is not one an `Llm` can send (`who` its name), or undefined: an object whose
 * messages are chat messages with a string, null or a list of parts as content. Every client's
 * `complete` looks first, as a host may call it directly.
 */
export function requestProblem(who: string, request: unknown): string | undefined {
  if (!isObjectArg(request)) return mustBe(`${who}: complete: request`, "an object with messages", request);
  const messages = (request as { messages?: unknown }).messages;
  if (!isArrayArg(messages)) return mustBe(`${who}: complete: request.messages`, "an array of chat messages", messages);
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObjectArg(m)) return mustBe(`${who}: complete: request.messages[${i}]`, "a chat message", m);
    const c = (m as { content?: unknown }).content;
    if (typeof c !== "string" && c !== null && c !== undefined && !isArrayArg(c)) return mustBe(`${who}: complete: request.messages[${i}].content`, "a string, null or a list of content parts", c);
    const calls = (m as { tool_calls?: unknown }).tool_calls;
    if (calls !== undefined && calls !== null) {
      const problem = toolCallsProblem(`${who}: complete: request.messages[${i}].tool_calls`, calls);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}

/**
 * Why `calls` are no tool calls, or undefined: each client reads every call's function name, and
 * pairs the call with its result by id (Anthropic's tool_use, the AI SDK's toolCallId).
 */
function toolCallsProblem(at: string, calls: unknown): string | undefined {
  if (!isArrayArg(calls)) return mustBe(at, "an array of tool calls", calls);
  for (let k = 0; k < calls.length; k++) {
    const call: unknown = calls[k];
    if (!isObjectArg(call)) return mustBe(`${at}[${k}]`, "a tool call ({ id, type, function })", call);
    const id = (call as { id?: unknown }).id;
    if (typeof id !== "string") return mustBe(`${at}[${k}].id`, "a string", id);
    const f = (call as { function?: unknown }).function;
    if (!isObjectArg(f) || typeof (f as { name?: unknown }).name !== "string") return mustBe(`${at}[${k}].function`, "the called function ({ name, arguments })", f);
  }
  return undefined;
}

/** A token count a provider reported: a finite number (a missing or garbled one is no count). */
export const isCount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/** A reported count where a missing one adds nothing (cache reads, cache writes). */
export const countOrZero = (v: unknown): number => (isCount(v) ? v : 0);
