// Traces to JSON and back (a finished run wraps one: src/agent/saved-run.ts). Loading validates the whole structure and
// says where it is wrong; fields this version does not know are kept, so traces written by
// newer code still load. Non-finite numbers and -0 (tool results may hold them; plain JSON
// writes -0 as 0 and the others as null) survive the trip.
// Each turn records every message it sent, so consecutive turns repeat long prefixes (the
// system prompt above all); on disk a turn's messages start with a `{"$ptc:reuse": k}`
// marker standing for the first k messages of the turn before, and are expanded on load.
import { z } from "zod";
import type { RunTrace } from "./trace.js";
import { isObjectArg, kindOf } from "../llm/args.js";
import { viewOptionsSchema } from "./view-settings.js";
import { jsonSyntaxError } from "../json/json-error.js";
import { firstProblem, keyPath, ownEntries, type ValueStep } from "../json/value-problem.js";

export const TRACE_VERSION = 2;

/** Versions this library reads: 1 (before history strategies were recorded) and 2. */
const READS = new Set<unknown>([1, 2]);

/** Thrown when text is not a trace (or saved run) this version can read. */
export class TraceFormatError extends Error {
  override readonly name = "TraceFormatError";
}

const message = z.looseObject({ role: z.enum(["system", "user", "assistant"]), content: z.string() });

const errorInfo = z.looseObject({
  kind: z.string(),
  message: z.string(),
  phase: z.string(),
  line: z.number().optional(),
  column: z.number().optional(),
  hint: z.string().optional(),
  excerpt: z.string().optional(),
  trace: z.array(z.string()).optional(),
});

const toolCall = z.looseObject({ name: z.string(), args: z.unknown(), asked: z.unknown().optional(), result: z.unknown().optional(), holder: z.string().optional(), error: z.string().optional(), errorKind: z.string().optional(), errorHint: z.string().optional(), size: z.number().nonnegative().optional(), durationMs: z.number() });

const definition = z.looseObject({
  name: z.string(),
  doc: z.string().optional(),
  kind: z.enum(["function", "value"]),
  params: z.string().optional(),
  type: z.string(),
  size: z.number().optional(),
  sample: z.string(),
  edn: z.string().optional(),
  source: z.string().optional(),
});

const usage = z.looseObject({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number(), cacheWriteTokens: z.number().optional(), llmMs: z.number(), execMs: z.number(), cost: z.number().optional() });

const count = z.number().int().nonnegative();

// What the prompt view recorded for a turn (ViewStats); every field optional, each checked when there.
const viewStats = z.looseObject({
  turnsCompressed: count.optional(),
  turnsFull: z.array(z.looseObject({ turn: z.number().int(), reason: z.string() })).optional(),
  definitionsShown: count.optional(),
  printlnShown: count.optional(),
  printlnDropped: count.optional(),
  toolCallsShown: count.optional(),
  definitionsSuperseded: count.optional(),
  toolCallsDropped: count.optional(),
});

const turn = z.looseObject({
  number: z.number().int().positive(),
  messages: z.array(message),
  reply: z.string(),
  truncated: z.literal(true).optional(),
  program: z.string().nullable(),
  status: z.enum(["ok", "error", "no_code", "invalid_return", "returned", "failed", "paused"]),
  value: z.string().optional(),
  valueHidden: z.literal(true).optional(),
  error: errorInfo.optional(),
  prints: z.array(z.string()),
  toolCalls: z.array(toolCall),
  definitions: z.array(definition),
  memory: z.array(definition),
  feedback: z.string().optional(),
  usage,
  notes: z.array(z.string()).optional(),
  view: viewStats.optional(),
  get nested() {
    return z.array(z.looseObject({ tool: z.string(), ok: z.boolean(), trace: runTrace })).optional();
  },
});

/** A run's maxPrintChars as saved: a run takes Infinity (no cap), which the files write tagged. */
export const maxPrintCharsSchema = z.union([z.number().positive(), z.literal(Infinity)]);

/** A run's settings (TraceSettings): what every reader of a trace builds its views and prices from. */
export const settingsSchema = z.object({
  maxTurns: z.number().int().positive(),
  toolsWithdrawn: z.boolean(),
  maxPrintChars: maxPrintCharsSchema,
  view: viewOptionsSchema,
  model: z.string().optional(),
  strategy: z.looseObject({ name: z.string(), options: z.record(z.string(), z.unknown()) }).optional(),
});

/** Turns in the order they ran: readers (the viewer's links and keys, ptc trace show --turn) find a turn by its number. */
const turns = z.array(turn).superRefine((list, ctx) => {
  for (let i = 1; i < list.length; i++) {
    const [before, now] = [list[i - 1].number, list[i].number];
    if (now <= before) ctx.addIssue({ code: "custom", path: [i, "number"], message: `turn ${now} follows turn ${before}: a run's turns are numbered in the order they ran` });
  }
});

export const runTrace = z.looseObject({
  version: z.union([z.literal(1), z.literal(TRACE_VERSION)]),
  system: z.string(),
  task: z.string(),
  turns,
  settings: settingsSchema.optional(),
  failedRequests: z.array(z.object({ turn: z.number().int().positive(), inputTokens: z.number().nonnegative(), outputTokens: z.number().nonnegative(), cachedTokens: z.number().nonnegative(), error: z.string() })).optional(),
});

const NUMBER_TAG = "$ptc:number";
const BIGINT_TAG = "$ptc:bigint";
// A tool result's exact form (ToolCallTrace.exact) holds JS Sets and Maps, which JSON cannot.
const SET_TAG = "$ptc:set";
const MAP_TAG = "$ptc:map";
const MAX_BIGINT_CHARS = 10_000;
const REUSE_TAG = "$ptc:reuse";

type Message = { role: string; content: string };

function sharedPrefix(a: readonly Message[], b: readonly Message[]): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a[k]?.role === b[k]?.role && a[k]?.content === b[k]?.content) k++;
  return k;
}

/** The trace with each turn's messages written as a reuse marker plus the new messages. */
export function encodeTrace(trace: RunTrace): unknown {
  // A host's hand-edited trace (resume writes the state it is given) is written as it is where
  // it is malformed: the reader then names the place.
  if (!isRecord(trace) || !Array.isArray(trace.turns)) return trace;
  let previous: readonly Message[] = [
    { role: "system", content: trace.system },
    { role: "user", content: trace.task },
  ];
  const turns = trace.turns.map((t: unknown) => {
    if (!isRecord(t) || !Array.isArray(t.messages)) return t;
    const messages = t.messages as Message[];
    const k = sharedPrefix(previous, messages);
    previous = messages;
    const encoded: Record<string, unknown> = { ...t, messages: k > 0 ? [{ [REUSE_TAG]: k }, ...messages.slice(k)] : messages };
    if (Array.isArray(t.nested)) encoded.nested = t.nested.map((n: unknown) => (isRecord(n) ? { ...n, trace: encodeTrace(n.trace as RunTrace) } : n));
    return encoded;
  });
  return { ...trace, turns };
}

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * Messages a trace's turns may hold in all, once expanded: each turn records its whole prompt,
 * so n turns of full history hold some n²: 50 million is about 7,000 such turns (0.8 GB loaded).
 * A 7 MB file of 20,000 turns ran out of heap.
 */
export const MAX_TRACE_MESSAGES = 50_000_000;

/** What stands for a reuse marker while the trace is validated: a valid message, so paths into the turn's own messages keep their numbers. */
const REUSED: Message = { role: "system", content: "" };

/**
 * Checks the reuse markers and sets each aside for validation, which then reads every message
 * of the file once (expanded first, a run of n turns had it read some n²/2 messages: 3,000 turns
 * took 6 s, 7,000 turns 4 GB and 38 s); returns in `expand` the expansions to run, in order, once
 * the trace is valid. Leaves anything malformed for validation to report.
 */
function setReuseAside(raw: unknown, path: string, expand: Array<() => void>, total = { messages: 0 }): void {
  if (!isRecord(raw) || !Array.isArray(raw.turns)) return;
  const first = [
    { role: "system", content: raw.system },
    { role: "user", content: raw.task },
  ];
  let sent = first.length;
  raw.turns.forEach((t: unknown, i, turns: unknown[]) => {
    if (!isRecord(t) || !Array.isArray(t.messages)) return;
    const messages = t.messages as unknown[];
    const head: unknown = messages[0];
    if (isRecord(head) && Object.hasOwn(head, REUSE_TAG)) {
      const k = head[REUSE_TAG];
      if (typeof k !== "number" || !Number.isInteger(k) || k < 1 || k > sent) {
        throw new TraceFormatError(`not a ptc-lisp trace: at ${path}turns.${i}.messages: reuses ${String(k)} messages of a turn that sent ${sent}`);
      }
      messages[0] = REUSED;
      // Run after the turn before has been expanded: its messages are then whole.
      expand.push(() => {
        const previous = i === 0 ? first : ((turns[i - 1] as { messages: unknown[] }).messages);
        t.messages = [...previous.slice(0, k), ...messages.slice(1)];
      });
      sent = k + messages.length - 1;
    } else sent = messages.length;
    // Expanded, a few megabytes of markers hold billions of messages: past the limit, refused before any is made.
    total.messages += sent;
    if (total.messages > MAX_TRACE_MESSAGES) throw new TraceFormatError(`not a ptc-lisp trace: its turns' prompts hold more than ${MAX_TRACE_MESSAGES.toLocaleString("en-US")} messages in all (at ${path}turns.${i})`);
    if (Array.isArray(t.nested)) t.nested.forEach((n: unknown, j) => isRecord(n) && setReuseAside(n.trace, `${path}turns.${i}.nested.${j}.trace.`, expand, total));
  });
}

/** The one key of an object a tag stands for, or one escaped with more `$`: data written so must be escaped. */
const TAG_KEY = /^\$+ptc:(?:number|bigint|set|map)$/;

/** The key of an object with exactly one own key, or undefined. */
function onlyKey(v: object): string | undefined {
  let only: string | undefined;
  for (const k in v) {
    if (!Object.hasOwn(v, k)) continue;
    if (only !== undefined) return undefined;
    only = k;
  }
  return only;
}

/**
 * JSON.stringify's replacer keeping the numbers plain JSON cannot write (±Infinity, NaN, -0,
 * BigInts) as tags. Data that reads as a tag (a tool's result `{"$ptc:bigint": "5"}`) is
 * written with its key escaped by one more `$`, so it is read back as the data it was.
 */
export function numberReplacer(_key: string, v: unknown): unknown {
  // A run's answer may hold a BigInt (an output schema may transform to one), which JSON.stringify refuses.
  if (typeof v === "bigint") return { [BIGINT_TAG]: v.toString() };
  if (v instanceof Set) return { [SET_TAG]: [...(v as Set<unknown>)] };
  if (v instanceof Map) return { [MAP_TAG]: [...(v as Map<unknown, unknown>)] };
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const k = onlyKey(v);
    return k !== undefined && TAG_KEY.test(k) ? { [`$${k}`]: (v as Record<string, unknown>)[k] } : v;
  }
  if (typeof v !== "number") return v;
  if (!Number.isFinite(v)) return { [NUMBER_TAG]: String(v) };
  return Object.is(v, -0) ? { [NUMBER_TAG]: "-0" } : v;
}

/**
 * Where a run's answer holds what its JSON cannot (an output schema may transform it to
 * anything): JSON.stringify throws a bare TypeError for a cycle, drops a function and writes a
 * WeakMap as `{}`. Maps and Sets are written tagged (numberReplacer), so their entries are
 * checked. The text names the first such place (`value.byId.b is a function`), or null.
 */
export function unsavable(value: unknown, path = "value"): string | null {
  return firstProblem(value, path, savableStep);
}

function savableStep(v: unknown, path: string): ValueStep {
  if (typeof v === "function") return `${path} is a function`;
  if (typeof v === "symbol") return `${path} is a symbol`;
  if (typeof v !== "object" || v === null) return null;
  if (v instanceof WeakMap || v instanceof WeakSet) return `${path} is a ${v.constructor.name}`;
  // What JSON.stringify writes of an object with toJSON (a Date) is its own business.
  if (typeof (v as { toJSON?: unknown }).toJSON === "function") return null;
  if (v instanceof Set) return [...(v as Set<unknown>)].map((item, i) => [`${path}.${i}`, item] as const);
  if (v instanceof Map) {
    const out: Array<readonly [string, unknown]> = [];
    let i = 0;
    for (const [key, item] of v as Map<unknown, unknown>) {
      out.push([`${path}.(key ${i})`, key], [typeof key === "object" && key !== null ? `${path}.(key ${i})` : keyPath(path, String(key)), item]);
      i++;
    }
    return out;
  }
  return ownEntries(v, path);
}

/** JSON.parse's reviver undoing numberReplacer. */
export function numberReviver(_key: string, v: unknown): unknown {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const k = onlyKey(v);
    if (k !== undefined && k.startsWith("$$") && TAG_KEY.test(k)) return { [k.slice(1)]: (v as Record<string, unknown>)[k] };
    const set = (v as Record<string, unknown>)[SET_TAG];
    if (Array.isArray(set) && Object.keys(v).length === 1) return new Set(set);
    const map = (v as Record<string, unknown>)[MAP_TAG];
    if (Array.isArray(map) && Object.keys(v).length === 1 && map.every((e) => Array.isArray(e) && e.length === 2)) return new Map(map as [unknown, unknown][]);
    const tag = (v as Record<string, unknown>)[NUMBER_TAG];
    if (typeof tag === "string" && Object.keys(v).length === 1) return Number(tag);
    const big = (v as Record<string, unknown>)[BIGINT_TAG];
    // Parsing a BigInt grows with the square of its digits: a file's longer ones stay tagged data.
    if (typeof big === "string" && big.length <= MAX_BIGINT_CHARS && /^-?\d+$/.test(big) && Object.keys(v).length === 1) return BigInt(big);
  }
  return v;
}

/** Parses a trace, or a document holding one (`trace` picks it out, `prefix` names its path in errors), against `schema`. */
export function parseTraceJson<T>(text: string, schema: z.ZodType, what: string, trace: (raw: Record<string, unknown>) => unknown, prefix: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text, numberReviver);
  } catch (e) {
    throw new TraceFormatError(`not a ${what}: invalid JSON (${jsonSyntaxError(text, e)})`);
  }
  const version = isRecord(raw) ? raw.version : undefined;
  if (version !== undefined && !READS.has(version)) throw new TraceFormatError(`unsupported ${what} version ${String(version)}; this library reads versions 1 and ${TRACE_VERSION}`);
  const expand: Array<() => void> = [];
  if (isRecord(raw)) {
    if (nestedPast(trace(raw), MAX_NESTED_DEPTH)) throw new TraceFormatError(`not a ${what}: its nested agents go more than ${MAX_NESTED_DEPTH} levels deep`);
    setReuseAside(trace(raw), prefix, expand);
  }
  const checked = schema.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    throw new TraceFormatError(`not a ${what}: at ${where}: ${issue.message}`);
  }
  for (const run of expand) run();
  // The checked input itself, not zod's copy, so key order (and the bytes) survive a round trip.
  return raw as T;
}

// Nested agents (an agent a tool runs) as deep as a trace may hold them: readers walk them
// recursively, and a hand-made file 400 levels deep overflowed the stack.
const MAX_NESTED_DEPTH = 64;

/** Whether a trace holds nested traces more than `max` levels deep. Walked without recursion. */
function nestedPast(root: unknown, max: number): boolean {
  const stack: Array<{ trace: unknown; depth: number }> = [{ trace: root, depth: 0 }];
  while (stack.length > 0) {
    const { trace, depth } = stack.pop() as { trace: unknown; depth: number };
    if (depth > max) return true;
    if (!isRecord(trace) || !Array.isArray(trace.turns)) continue;
    for (const t of trace.turns as unknown[]) {
      if (isRecord(t) && Array.isArray(t.nested)) for (const n of t.nested as unknown[]) if (isRecord(n)) stack.push({ trace: n.trace, depth: depth + 1 });
    }
  }
  return false;
}

export function traceToJson(trace: RunTrace, indent?: number): string {
  const wrong = notTrace(trace);
  if (wrong !== null) throw new TypeError(`traceToJson expects a RunTrace (a Step's trace), ${wrong}`);
  return JSON.stringify(encodeTrace(trace), numberReplacer, indent);
}

/** What a value an untyped host passed as a trace is instead (the whole Step, say), or null. */
function notTrace(x: unknown): string | null {
  if (!isObjectArg(x)) return `got ${kindOf(x)}`;
  const { turns, trace } = x as { turns?: unknown; trace?: unknown };
  // A Step has turns too.
  if (typeof trace === "object" && trace !== null) return "got a Step: pass its trace";
  return Array.isArray(turns) ? null : "got an object that is not one";
}

/** Loads a trace; throws TraceFormatError naming the first problem and where it is. */
export function traceFromJson(text: string): RunTrace {
  return parseTraceJson<RunTrace>(text, runTrace, "ptc-lisp trace", (raw) => raw, "");
}
