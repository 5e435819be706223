// Traces and finished runs to JSON and back. Loading validates the whole structure and
// says where it is wrong; fields this version does not know are kept, so traces written by
// newer code still load. Non-finite numbers (tool results may hold them) survive the trip.
import { z } from "zod";
import type { AgentFailure } from "./errors.js";
import type { RunUsage, Step } from "./subagent.js";
import type { RunTrace } from "./trace.js";

export const TRACE_VERSION = 1;

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

const toolCall = z.looseObject({ name: z.string(), args: z.unknown(), result: z.unknown().optional(), error: z.string().optional(), durationMs: z.number() });

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

const usage = z.looseObject({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number(), llmMs: z.number(), execMs: z.number() });

const turn = z.looseObject({
  number: z.number().int().positive(),
  messages: z.array(message),
  reply: z.string(),
  program: z.string().nullable(),
  status: z.enum(["ok", "error", "no_code", "invalid_return", "returned", "failed"]),
  value: z.string().optional(),
  error: errorInfo.optional(),
  prints: z.array(z.string()),
  toolCalls: z.array(toolCall),
  definitions: z.array(definition),
  memory: z.array(definition),
  feedback: z.string().optional(),
  usage,
  notes: z.array(z.string()).optional(),
  view: z.looseObject({}).optional(),
  get nested() {
    return z.array(z.looseObject({ tool: z.string(), ok: z.boolean(), trace: runTrace })).optional();
  },
});

const runTrace = z.looseObject({
  version: z.literal(TRACE_VERSION),
  system: z.string(),
  task: z.string(),
  turns: z.array(turn),
});

const savedRun = z.looseObject({
  version: z.literal(TRACE_VERSION),
  ok: z.boolean(),
  value: z.unknown().optional(),
  fail: z.looseObject({ reason: z.string(), message: z.string(), details: z.unknown().optional() }).optional(),
  usage: z.looseObject({ inputTokens: z.number(), outputTokens: z.number(), cachedTokens: z.number(), llmRequests: z.number() }),
  trace: runTrace,
});

/** A finished run as saved: the outcome, the usage and the full trace (values as plain data). */
export interface SavedRun {
  version: typeof TRACE_VERSION;
  ok: boolean;
  value?: unknown;
  fail?: AgentFailure;
  usage: RunUsage;
  trace: RunTrace;
}

const NUMBER_TAG = "$ptc:number";

function replacer(_key: string, v: unknown): unknown {
  return typeof v === "number" && !Number.isFinite(v) ? { [NUMBER_TAG]: String(v) } : v;
}

function reviver(_key: string, v: unknown): unknown {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    const tag = (v as Record<string, unknown>)[NUMBER_TAG];
    if (typeof tag === "string" && Object.keys(v).length === 1) return Number(tag);
  }
  return v;
}

function parse<T>(text: string, schema: z.ZodType, what: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text, reviver);
  } catch (e) {
    throw new TraceFormatError(`not a ${what}: invalid JSON (${(e as Error).message})`);
  }
  const version = typeof raw === "object" && raw !== null ? (raw as { version?: unknown }).version : undefined;
  if (version !== undefined && version !== TRACE_VERSION) throw new TraceFormatError(`unsupported ${what} version ${String(version)}; this library reads version ${TRACE_VERSION}`);
  const checked = schema.safeParse(raw);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    const where = issue.path.length > 0 ? issue.path.join(".") : "(top level)";
    throw new TraceFormatError(`not a ${what}: at ${where}: ${issue.message}`);
  }
  // The checked input itself, not zod's copy, so key order (and the bytes) survive a round trip.
  return raw as T;
}

export function traceToJson(trace: RunTrace, indent?: number): string {
  return JSON.stringify(trace, replacer, indent);
}

/** Loads a trace; throws TraceFormatError naming the first problem and where it is. */
export function traceFromJson(text: string): RunTrace {
  return parse<RunTrace>(text, runTrace, "ptc-lisp trace");
}

/** A finished run as JSON. Live memory values are not saved: the trace's definitions carry their EDN and source. */
export function runToJson(step: Step, indent?: number): string {
  const saved: SavedRun = { version: TRACE_VERSION, ok: step.ok, usage: step.usage, trace: step.trace };
  if (step.ok) saved.value = step.value;
  else saved.fail = step.fail;
  return JSON.stringify(saved, replacer, indent);
}

export function runFromJson(text: string): SavedRun {
  return parse<SavedRun>(text, savedRun, "saved ptc-lisp run");
}
