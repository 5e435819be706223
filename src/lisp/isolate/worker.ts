// A worker thread of the isolated mode: runs one program at a time with the in-process
// evaluator, calls tools by asking the host, and keeps the memories its runs made so the next
// turn of the same agent (sent back here) needs no copy of them.
import { parentPort } from "node:worker_threads";
import { abortedError, LispError, toErrorInfo, ToolTimeout } from "../errors.js";
import { evaluate, evaluateWith, type EvalResult, type EvaluateOptions, type Memory, type ToolCallInfo, type ToolCallRecord, type ToolSpec } from "../evaluate.js";
import { Converted } from "../interop.js";
import { againOptions, defineAgain, type Entry } from "../define-again.js";
import { parseContextJson } from "../context-json.js";
import { resolveLimits } from "../limits.js";
import { Marks, type Origin } from "../marks.js";
import { noteReadableParts } from "../shared-hidden.js";
import { fuelUsed, run, runMarks } from "../runtime.js";
import { WireReader, WireWriter, type Wire } from "../wire.js";
import { tooDeepToCross, type AnswerMessage, type CallRecordWire, type CtxEntry, type DoneMessage, type FromWorker, type MemoryEntryWire, type RunMessage, type ToWorker } from "./protocol.js";

const port = parentPort;
if (port === null) throw new Error("the isolated evaluator must run in a worker thread");

const send = (m: FromWorker): void => port.postMessage(m);

// Memories of recent runs, newest last; an agent's next turn usually asks for the newest.
const KEPT_MEMORIES = 8;
const memories = new Map<number, Memory>();
let nextMemory = 1;

let nextCall = 1;
interface Answer {
  value: Wire;
  cost?: { steps: number; ms: number };
  hidden?: true;
  hiddenParts?: string[];
}
const pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: unknown) => void }>();
let waitingMemory: ((entries: MemoryEntryWire[]) => void) | null = null;

port.on("message", (m: ToWorker) => {
  if (m.type === "run") void start(m);
  else if (m.type === "memory") waitingMemory?.(m.entries);
  else answer(m);
});
send({ type: "ready" });

function answer(m: AnswerMessage): void {
  const p = pending.get(m.call);
  // A call the program stopped waiting for (timed out, or its run ended): the answer is dropped.
  if (p === undefined) return;
  // Before the program goes on: the host's copy of a key a tool renewed, searched for in this answer and read by later steps, as in process.
  if (m.ctx !== undefined && runCtx !== undefined) defineEntries(runCtx, m.ctx);
  for (const [at, entries] of m.callers ?? []) if (runCallers?.[at] !== undefined) defineEntries(runCallers[at], entries);
  pending.delete(m.call);
  if (m.timeoutMs !== undefined) p.reject(new ToolTimeout(m.timeoutMs));
  else if (m.refused !== undefined) p.reject(new LispError(m.refused.kind, m.refused.message, undefined, m.refused.hint));
  else if (m.halted === true) p.reject(abortedError());
  else if (m.error !== undefined) p.reject(new Error(m.error));
  else p.resolve({ value: m.value as Wire, cost: m.cost, ...(m.hidden === true ? { hidden: true } : {}), ...(m.hiddenParts === undefined ? {} : { hiddenParts: m.hiddenParts }) });
}

// The records of the calls the run is about to make, in order: the evaluator makes a record,
// then calls the tool, so each call takes the oldest (its arguments as the record shows them),
// with the strings and numbers the run marked since the call before, which the host is told.
const records: Array<{ record: ToolCallRecord; marks?: Array<[string | number, Origin]> }> = [];
// How many of the run's marked strings and numbers the host has been told of.
let told = 0;

function callHost(name: string, args: Record<string, unknown>, signal: AbortSignal, info: ToolCallInfo | undefined): Promise<unknown> {
  const call = nextCall++;
  const made = records.shift();
  const record = made?.record;
  const shown = record?.args as Record<string, unknown> | undefined;
  // The arguments' size as they crossed out, which the host's record counts as the evaluator's does.
  const size = record?.size === undefined ? {} : { size: record.size };
  const marks = made?.marks === undefined ? {} : { marks: made.marks };
  // The evaluator stopped waiting (the call's timeout, or the run ended): the host's tool is told.
  const onAbort = (): void => {
    if (pending.delete(call)) send({ type: "cancel", call });
  };
  signal.addEventListener("abort", onAbort, { once: true });
  return new Promise<Answer>((resolve, reject) => {
    pending.set(call, { resolve, reject });
    send(shown !== undefined && shown !== args ? { type: "call", call, name, args, shown, ...size, ...marks } : { type: "call", call, name, args, ...size, ...marks });
  })
    .finally(() => signal.removeEventListener("abort", onAbort))
    .then((a) => {
      if (a.hidden === true) info?.hideResult();
      else if (a.hiddenParts !== undefined) info?.hideResult(a.hiddenParts);
      return new Converted(new WireReader().read(a.value), a.cost?.steps ?? 0, a.cost?.ms ?? 0);
    });
}

// Printed lines go to the host in batches: at most this long or this big, and whenever the program waits.
// A line after a quiet spell goes at once: the program may compute long after it, with no event
// to send it by (a line held then would reach the host only at the end, or be lost to an abort).
const PRINT_BATCH_MS = 20;
const PRINT_BATCH_CHARS = 16_384;

/** Sends printed lines to the host as the program writes them. */
class Printer {
  private lines: string[] = [];
  private chars = 0;
  private last = -Infinity;

  readonly line = (text: string): void => {
    this.lines.push(text);
    this.chars += text.length;
    if (this.chars > PRINT_BATCH_CHARS || performance.now() - this.last > PRINT_BATCH_MS) this.flush();
  };

  /** At the interpreter's checks: a batch held past its window goes, though no line has come to end it. */
  readonly check = (): void => {
    if (this.lines.length > 0 && performance.now() - this.last > PRINT_BATCH_MS) this.flush();
  };

  flush(): void {
    // The window counts from the last message sent: a flush with nothing to send starts none.
    if (this.lines.length === 0) return;
    this.last = performance.now();
    send({ type: "print", lines: this.lines });
    this.lines = [];
    this.chars = 0;
  }
}

function ctxOf(entries: readonly CtxEntry[]): Record<string, unknown> {
  const ctx: Record<string, unknown> = {};
  defineEntries(ctx, entries);
  return ctx;
}

/** The run's own context, which the host's answers bring up to date (`AnswerMessage.ctx`), and its callers' hidden context (`AnswerMessage.callers`). */
let runCtx: Record<string, unknown> | undefined;
let runCallers: Array<Record<string, unknown>> | undefined;

function defineEntries(ctx: Record<string, unknown>, entries: readonly CtxEntry[]): void {
  const reader = new WireReader();
  for (const [key, value, error, parts] of entries) {
    // A key whose value the host refused fails where the program reads it, as in process.
    if (error !== null) {
      Object.defineProperty(ctx, key, { enumerable: true, configurable: true, get: () => { throw new LispError(error.kind, error.message, undefined, error.hint); } });
      if (parts !== undefined) noteReadableParts(ctx, key, parts.map((w) => reader.read(w)));
    } else Object.defineProperty(ctx, key, { enumerable: true, configurable: true, value: reader.read(value) });
  }
}

async function memoryOf(m: RunMessage, ctx: Record<string, unknown> | undefined): Promise<Memory> {
  const from = m.memory;
  if ("kept" in from) {
    const kept = memories.get(from.kept);
    if (kept !== undefined) return kept;
    send({ type: "need-memory" });
    return recreate(await new Promise<MemoryEntryWire[]>((resolve) => (waitingMemory = resolve)), m, ctx);
  }
  return recreate(from.entries, m, ctx);
}

/**
 * Memory rebuilt from what the host sent: data as it was, then each definition holding a
 * function made again from its source, in order (as a resumed run restores it), compiled as
 * the run's own code is (see define-again.ts).
 */
async function recreate(entries: MemoryEntryWire[], m: RunMessage, ctx: Record<string, unknown> | undefined): Promise<Memory> {
  waitingMemory = null;
  const reader = new WireReader();
  const all: Entry[] = entries.map((e) => ({ name: e.name, doc: e.doc, source: e.source, hidden: e.hidden, ...(e.value === undefined ? {} : { value: reader.read(e.value) }) }));
  const again = all.some((e) => e.value === undefined) ? againOptions(m.tools, { ctx: ctx ?? contextOf(m), limits: m.limits }) : {};
  return defineAgain(all, again, evaluate, "its definition could not be run again after its worker was lost; define it again");
}

/** The context given as text, read once for all the definitions made again; unreadable, none (the run itself reports why). */
function contextOf(m: RunMessage): Record<string, unknown> | undefined {
  if (m.ctxJson === undefined) return undefined;
  try {
    return parseContextJson(m.ctxJson, undefined, resolveLimits(m.limits), () => undefined);
  } catch {
    return undefined;
  }
}

function keep(memory: Memory): number {
  const id = nextMemory++;
  memories.set(id, memory);
  if (memories.size > KEPT_MEMORIES) memories.delete(memories.keys().next().value as number);
  return id;
}

async function start(m: RunMessage): Promise<void> {
  // Own properties, whatever the name: assigning to `__proto__` would set the prototype instead.
  const tools: Record<string, ToolSpec> = Object.fromEntries(
    m.tools.map((t) => [t.name, { run: (args, signal, info) => callHost(t.name, args, signal, info), params: t.params, timeoutMs: t.timeoutMs, maxCalls: t.maxCalls }]),
  );
  const printer = new Printer();
  const onToolCall = (record: ToolCallRecord, done: boolean): void => {
    if (done) return;
    // The host may end the run while it waits on this call (an abort): it reports this much.
    m.fuel[0] = fuelUsed(run);
    // Made while the program runs: the run's marks are the current ones.
    const marks = runMarks();
    if (marks instanceof Marks && marks.primitiveCount > told) {
      records.push({ record, marks: marks.primitivesFrom(told) });
      told = marks.primitiveCount;
    } else {
      records.push({ record });
    }
    // A call is made while the program waits: what it printed so far goes first.
    printer.flush();
  };
  const ctx = m.ctx === null ? undefined : ctxOf(m.ctx);
  runCtx = ctx;
  const options: EvaluateOptions = { tools, memory: await memoryOf(m, ctx), limits: m.limits, toolTimeoutMs: m.toolTimeoutMs, onToolCall };
  if (ctx !== undefined) options.ctx = ctx;
  runCallers = m.callerHidden?.map(ctxOf);
  if (runCallers !== undefined) options.callerHidden = runCallers;
  if (m.ctxJson !== undefined) options.ctxJson = m.ctxJson;
  if (m.handed !== undefined) options.handed = m.handed;
  records.length = 0;
  told = 0;
  send({ type: "running", running: true });
  const r = await evaluateWith(m.source, options, { line: printer.line, check: (used) => ((m.fuel[0] = used), printer.check()), read: () => send({ type: "read" }) });
  // Every line reaches the host as a print message before the result, so its listener hears them all.
  printer.flush();
  send({ type: "running", running: false });
  try {
    send(done(r));
  } catch (e) {
    // A value nested past what crosses (wire.ts), or past what structured clone takes, cannot be sent; the run fails rather than the worker.
    const error = e instanceof LispError ? e : e instanceof RangeError ? tooDeepToCross() : new LispError("internal_error", `internal error: ${e instanceof Error ? e.message : String(e)}`);
    const failed: DoneMessage = { type: "done", ok: false, error: toErrorInfo(error), values: [], defs: [], calls: [], prints: r.prints, fuelUsed: r.stats.fuelUsed, memory: 0 };
    // The calls the program made (their effects are done: the feedback says so) and the marks
    // that show its printed stand-ins, without the values that could not be written.
    if (r.marks !== undefined) failed.marks = r.marks.primitives();
    try {
      send({ ...failed, calls: r.toolCalls.map((c) => callWire(c)) });
    } catch {
      send(failed);
    }
  }
  for (const p of pending.values()) p.reject(new Error("the evaluation has ended"));
  pending.clear();
}

/** The result as it is sent: plain data, and every value through one writer. */
function done(r: EvalResult): DoneMessage {
  const writer = new WireWriter(true, r.marks ?? null);
  const values: Wire[] = [];
  const slot = (v: Parameters<WireWriter["write"]>[0]): number => values.push(writer.write(v)) - 1;
  const out: DoneMessage = { type: "done", ok: r.ok, values, defs: [], calls: [], prints: r.prints, fuelUsed: r.stats.fuelUsed, memory: 0 };
  if (r.marks !== undefined) out.marks = r.marks.primitives();
  if (r.ok) {
    out.outcome = r.outcome;
    out.value = r.value;
    slot(r.lisp);
    for (const d of r.defs) {
      const hidden = r.memory.get(d.name)?.hidden;
      out.defs.push(hidden === undefined ? { name: d.name, doc: d.doc, source: d.source } : { name: d.name, doc: d.doc, source: d.source, hidden });
      slot(d.value);
    }
    out.memory = keep(r.memory);
  } else {
    out.error = r.error;
  }
  for (const c of r.toolCalls) out.calls.push(callWire(c, c.value === undefined ? undefined : slot(c.value)));
  return out;
}

/** A call's record as sent: plain data, and the slot of the value the program received, when written. */
function callWire(c: ToolCallRecord, value?: number): CallRecordWire {
  return { name: c.name, args: c.args, result: c.result, error: c.error, errorKind: c.errorKind, errorHint: c.errorHint, durationMs: c.durationMs, value };
}
