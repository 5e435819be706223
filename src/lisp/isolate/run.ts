// The host side of one isolated evaluation. The program runs in a pooled worker thread with the
// same evaluator; tools stay here and are called by message, their results checked and
// converted here exactly as in process. The host's clock and signal are the hard stop: abort
// ends the worker at once, and so does a program still running past its time limit (with a
// margin for the interpreter's own check to fire first). A worker that runs out of heap or
// crashes fails that run only; the pool starts another.
import { abortedError, isLimitKind, limitRecord, limitThrown, LispError, ours, thrownMessage, toErrorInfo, toolMessage, ToolTimeout, type ErrorInfo } from "../errors.js";
import type { Definition, EvalFailure, EvaluateOptions, EvalResult, Memory, MemoryEntry, ToolCallRecord, ToolSpec } from "../evaluate.js";
import { ABORTED, unlessAborted } from "../abort.js";
import { boxed, Budget, ContextReader, contextValue, crossedSize, HELD_CALL, keepValue, ranWith, reporter, toHost, toLisp, UNKEPT_ARGS } from "../interop.js";
import { MAX_TIMER_MS, resolveLimits, type Limits } from "../limits.js";
import { hiddenKeys, hideQuoted, hideRewritten, isHiddenKey, Marks, meetsHidden, QUOTED_MIN, quotedForms, type SentBack, STAND_IN_OPEN } from "../marks.js";
import { renewedKeys, sentBackSearch, type SentBackSearch, valueOf } from "../sent-back.js";
import { readableParts } from "../shared-hidden.js";
import { OutputBuffer } from "../output.js";
import { quietly, timeoutError, whileWhole } from "../runtime.js";
import { contextJsonTimeout } from "../context-json.js";
import type { Value } from "../values.js";
import { WireReader, WireWriter, type Wire } from "../wire.js";
import { poolFor, type ExitReason, type PoolWorker } from "./pool.js";
import { tooDeepToCross, type CtxEntry, type DataError, type DoneMessage, type FromWorker, type MemoryEntryWire, type RunMessage, type ToolInfo } from "./protocol.js";

const EMPTY_MEMORY: Memory = new Map();

/** The worker that keeps each memory a run returned, and its id there. */
const keptIn = new WeakMap<Memory, { worker: PoolWorker; id: number }>();

/** How long past its time limit the host lets a program run before ending its worker. */
export function hardStopMs(timeoutMs: number): number {
  return timeoutMs * 1.5 + 50;
}

export async function evaluateIsolated(source: string, options: EvaluateOptions, tools: ReadonlyMap<string, ToolSpec>, maxHeapMb: number): Promise<EvalResult> {
  const started = performance.now();
  const memory = options.memory ?? EMPTY_MEMORY;
  const calls: ToolCallRecord[] = [];
  // The fuel the worker has used, as it last wrote it: what a run whose worker is ended spent.
  const fuel = new Float64Array(new SharedArrayBuffer(Float64Array.BYTES_PER_ELEMENT));
  // Whether a call's arguments came with marked values shown as stand-ins.
  let standIns = false;
  // What the program printed, as the worker sends it: a run whose worker is ended keeps it.
  let printed: OutputBuffer | null = null;
  // Results answered to the worker, which records them: a run whose worker is ended (an abort
  // just after a call finished) records them here, as a run in process would have (resume answers
  // a finished call from its record). Only in a run that cannot meet hidden context: which parts
  // of a result the program's marks hide (text equal to a hidden value it read) is known in the worker.
  const answered = options.ctxJson === undefined && !meetsHidden(options.ctx, memory, options.callerHidden) ? new Map<ToolCallRecord, Value>() : null;
  // The strings and numbers the worker's run has marked, told with each call: a tool's error
  // message is hidden with them as the run's own record of the call hides it (Marks.hideText),
  // for the events heard while it runs and the records kept if its worker is ended. What the
  // calls were handed (`Marks.gave`) is noted here too, so a run whose worker is ended reports it.
  let marked: Marks | null = null;
  const marks = (): Marks => {
    if (marked === null) {
      marked = new Marks();
      if (options.handed !== undefined) marked.handedBefore(options.handed);
    }
    return marked;
  };
  // A failed call's message quoting hidden context no argument held (a tool holding the key
  // itself, the caller's context), searched for as the program's own record of it is
  // (sent-back.ts), for the events heard before the worker's record. Context given as text is
  // read in the worker only: its records are hidden there.
  const hostCtx = options.ctx !== undefined && Object.keys(options.ctx).some(isHiddenKey) ? options.ctx : options.callerHidden !== undefined ? {} : undefined;
  let search: SentBackSearch | undefined;
  const sentBack = (message: string): readonly SentBack[] => {
    if (hostCtx === undefined) return [];
    search ??= sentBackSearch(hostCtx, limits, marks, new Map(), options.callerHidden);
    return search(undefined, message);
  };
  const handed = (r: EvalResult): EvalResult => {
    const all = marked === null ? options.handed : marked.handed;
    if (all !== undefined && all.length > 0) r.handed = [...all];
    return r;
  };
  const failure = (error: ErrorInfo): EvalFailure => {
    for (const [record, value] of answered ?? []) {
      if (record.result !== undefined || record.error !== undefined) continue;
      try {
        record.result = toHost(value, limits.maxNestingDepth, new Budget(limits));
      } catch {
        // Past the run's limits: the record stays without it.
      }
    }
    const prints = printed?.snapshot().lines ?? [];
    const out: EvalFailure = { ok: false, error, prints, memory, toolCalls: calls, stats: { fuelUsed: fuel[0], durationMs: performance.now() - started } };
    // Stand-ins in what was printed or passed are shown as such by whoever reads the marks.
    if (prints.some((l) => l.includes(STAND_IN_OPEN)) || standIns) out.marks = new Marks();
    return handed(out) as EvalFailure;
  };
  let limits: Limits;
  let ctx: CtxEntry[] | null;
  let callerHidden: CtxEntry[][] | undefined;
  // Converting the context is the run's time, as reading it is in process: the hard stop counts it.
  let ctxMs = 0;
  try {
    limits = resolveLimits(options.limits);
    printed = new OutputBuffer(limits.maxOutputChars);
    const t0 = performance.now();
    ctx = options.ctx === undefined ? null : ctxEntries(options.ctx, limits);
    callerHidden = options.callerHidden?.map((c) => ctxEntries(c, limits));
    ctxMs = performance.now() - t0;
  } catch (e) {
    return failure(e instanceof LispError ? toErrorInfo(e, source) : internal(e));
  }
  // A hidden key a tool renews in place while the program runs goes to the worker with the answer, whose copy of it is searched and read.
  // So does one of the callers' hidden context, which a host tool the runs share may renew.
  const renewed = options.ctx === undefined ? undefined : renewedKeys(options.ctx, undefined, true);
  const renewedCallers = options.callerHidden?.map((c) => renewedKeys(c, undefined, true));
  const renewedCtx = (): { ctx?: CtxEntry[]; callers?: Array<readonly [number, CtxEntry[]]> } => {
    const keys = renewed?.() ?? [];
    let callers: Array<readonly [number, CtxEntry[]]> | undefined;
    renewedCallers?.forEach((changed, at) => {
      const theirs = changed?.() ?? [];
      if (theirs.length > 0) (callers ??= []).push([at, ctxEntries((options.callerHidden as ReadonlyArray<Readonly<Record<string, unknown>>>)[at], limits, theirs)]);
    });
    return { ...(keys.length === 0 ? {} : { ctx: ctxEntries(options.ctx as Readonly<Record<string, unknown>>, limits, keys) }), ...(callers === undefined ? {} : { callers }) };
  };
  const out = printed;
  const signal = options.signal;
  if (signal?.aborted) return failure(toErrorInfo(abortedError()));
  const pool = poolFor(maxHeapMb);
  const kept = keptIn.get(memory);
  let w: PoolWorker;
  try {
    const acquired = pool.acquire(kept?.worker.alive ? kept.worker : undefined);
    // A worker may take a while to start: an abort meanwhile ends the run, and the worker goes back.
    const got = signal === undefined ? await acquired : await unlessAborted(acquired, signal);
    if (got === ABORTED) {
      void acquired.then((x) => pool.release(x), () => undefined);
      return failure(toErrorInfo(abortedError()));
    }
    w = got;
  } catch (e) {
    return failure(internal(e));
  }
  const infos: ToolInfo[] = [...tools].map(([name, s]) => ({ name, params: s.params, timeoutMs: s.timeoutMs, maxCalls: s.maxCalls }));
  const sent = kept !== undefined && kept.worker === w ? { kept: kept.id } : { entries: memoryEntries(memory) };

  const onToolCall = quietly(options.onToolCall);
  const onPrint = whileWhole(out, quietly(options.onPrint));
  const shownError = (text: string, args: Record<string, unknown>, shown: Record<string, unknown> | undefined): string => {
    const back = sentBack(text);
    const quoted = marked === null ? text : marked.hideText(text, true);
    const hidden = marked === null || back.length === 0 ? quoted : marked.hideEchoes(null, quoted, back);
    const rewritten = shown === undefined ? hidden : hideArgs(hidden, args, shown);
    return marked === null ? rewritten : marked.hideBareIn(rewritten, args);
  };
  return new Promise<EvalResult>((resolve) => {
    let settled = false;
    const inflight = new Map<number, AbortController>();
    // The hard stop counts the time the program runs, as its time limit does: from when the
    // worker starts it (memory and context rebuilt) to when it ends (before its result is
    // sent), and not while every branch waits on a tool.
    const budget = hardStopMs(limits.timeoutMs);
    let running = false;
    // Whether the worker is still reading the context text (the hard stop's error says so).
    let reading = options.ctxJson !== undefined;
    let spent = ctxMs;
    let since = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = (): void => {
      if (timer !== undefined) return;
      since = performance.now();
      if (budget - spent <= MAX_TIMER_MS) timer = setTimeout(() => finish(failure(toErrorInfo(reading ? contextJsonTimeout(limits.timeoutMs) : timeoutError(limits.timeoutMs))), false), Math.max(0, budget - spent));
    };
    const pause = (): void => {
      if (timer === undefined) return;
      clearTimeout(timer);
      timer = undefined;
      spent += performance.now() - since;
    };
    const onAbort = (): void => finish(failure(toErrorInfo(abortedError())), false);
    const finish = (r: EvalResult, reusable: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      for (const ac of inflight.values()) ac.abort();
      if (reusable) pool.release(w);
      else pool.terminate(w);
      resolve(r);
    };
    const callEnded = (call: number): void => {
      if (inflight.delete(call) && inflight.size === 0 && running && !settled) arm();
    };

    w.onExit = (why: ExitReason) => finish(failure(lost(why, maxHeapMb)), false);
    // A message the host cannot read back (a value nested deeper than its stack rebuilds, though
    // the worker's could write it) fails the run; the worker, which waits on it, is ended.
    w.onUnreadable = (e: unknown) => finish(failure(e instanceof RangeError ? toErrorInfo(tooDeepToCross()) : internal(e)), false);
    w.listener = (m: FromWorker) => {
      if (settled) return;
      switch (m.type) {
        case "running":
          running = m.running;
          if (running && inflight.size === 0) arm();
          else pause();
          return;
        case "read":
          reading = false;
          return;
        case "print":
          for (const line of m.lines) {
            out.push(line);
            onPrint?.(line);
          }
          return;
        case "need-memory":
          w.post({ type: "memory", entries: memoryEntries(memory) });
          return;
        case "cancel": {
          inflight.get(m.call)?.abort();
          callEnded(m.call);
          return;
        }
        case "call": {
          const spec = tools.get(m.name) as ToolSpec;
          const ac = new AbortController();
          if (inflight.size === 0) pause();
          inflight.set(m.call, ac);
          // The record shows the arguments as the program's own record does (marked values as stand-ins); the tool gets the values.
          const record: ToolCallRecord = { name: m.name, args: m.shown ?? m.args, durationMs: 0, ...(m.size === undefined ? {} : { size: m.size }) };
          if (m.shown !== undefined) standIns = true;
          if (m.marks !== undefined) {
            const into = marks();
            for (const [v, o] of m.marks) into.carry(v, o);
          }
          marked?.gave(m.args);
          calls.push(record);
          const report = reporter(record, spec, onToolCall);
          const t0 = performance.now();
          let resultHidden: boolean | readonly string[] = false;
          const info = { hidden: m.shown === undefined ? [] : hiddenKeys(m.args, m.shown), hideResult: (parts?: readonly string[]) => void (resultHidden = parts ?? true), ranWith: (given: Record<string, unknown>) => ranWith(record, given, (text) => shownError(text, m.args, m.shown)), ...(m.size === undefined ? {} : { size: m.size }), ...(report.answering === undefined ? {} : { answering: report.answering }) };
          Promise.resolve()
            .then(() => boxed(spec.run(m.args, ac.signal, info)))
            .then(
              ({ value: raw }) => {
                if (settled || ac.signal.aborted) return;
                // Checked and converted here, as in process, within the time the run has left
                // and charged to it, so a refused value fails the same way.
                const c0 = performance.now();
                const b = new Budget(limits, limits.maxFuel, c0 + Math.max(0, limits.timeoutMs - spent), () => performance.now());
                const refuse = (e: unknown): void => {
                  const refused = dataError(e);
                  // A refused result's path can quote a hidden argument the tool echoed (a key).
                  record.error = shownError(refused.message, m.args, m.shown);
                  if (isLimitKind(refused.kind)) Object.assign(record, limitRecord(refused));
                  w.post({ type: "answer", call: m.call, refused, ...renewedCtx() });
                };
                let value;
                let lisp;
                try {
                  lisp = toLisp(raw, limits.maxNestingDepth, 0, `the result of tool/${m.name}`, b);
                  record.size = (record.size ?? 0) + crossedSize(b);
                  value = new WireWriter(false).write(lisp);
                } catch (e) {
                  spent += performance.now() - c0;
                  return refuse(e);
                }
                const ms = performance.now() - c0;
                spent += ms;
                try {
                  w.post({ type: "answer", call: m.call, value, cost: { steps: limits.maxFuel - b.fuel, ms }, ...renewedCtx(), ...(resultHidden === true ? { hidden: true as const } : resultHidden === false ? {} : { hiddenParts: [...resultHidden] }) });
                } catch (e) {
                  // Deeper than the host's stack copies (a raised maxNestingDepth): thrown here, it ended the host's process.
                  return refuse(e instanceof RangeError ? tooDeepToCross(`the result of tool/${m.name} is nested too deeply to reach the program's worker thread`) : e);
                }
                answered?.set(record, lisp);
              },
              (e: unknown) => {
                // Safe on anything a tool throws (a Proxy whose traps throw).
                const own = ours(e);
                if (own instanceof ToolTimeout) {
                  record.error = `no answer within ${own.ms} ms`;
                  if (!settled && !ac.signal.aborted) w.post({ type: "answer", call: m.call, error: record.error, timeoutMs: own.ms });
                  return;
                }
                // A tool quoting a hidden value (an argument sent back): the host's record shows it as the program's does.
                record.error = record.held === true ? HELD_CALL : toolMessage(shownError(thrownMessage(e), m.args, m.shown));
                const halted = own instanceof LispError && own.kind === "aborted" ? { halted: true as const } : {};
                // A replayed call whose result ran into a limit (resume) meets the limit again, as in-process.
                const limit = limitThrown(e);
                if (limit !== null) Object.assign(record, limitRecord(limit));
                const answer = limit !== null ? { refused: dataError(limit) } : { error: record.error, ...halted };
                if (!settled && !ac.signal.aborted) w.post({ type: "answer", call: m.call, ...answer, ...renewedCtx() });
              },
            )
            .finally(() => {
              record.durationMs = performance.now() - t0;
              report.end();
              callEnded(m.call);
            });
          return;
        }
        case "done":
          finish(handed(result(m, memory, w, started, calls)), true);
          return;
      }
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const run: RunMessage = { type: "run", source, ctx, ...(callerHidden === undefined ? {} : { callerHidden }), tools: infos, memory: sent, limits: options.limits, toolTimeoutMs: options.toolTimeoutMs, fuel };
    if (options.handed !== undefined && options.handed.length > 0) run.handed = options.handed;
    if (options.ctxJson !== undefined) {
      // Context given as text goes as text, and the worker parses it: the hard stop counts from
      // here, so copying a large text across (a native call on each side) is the run's time too.
      run.ctxJson = options.ctxJson;
      arm();
    }
    w.post(run);
  });
}

function internal(e: unknown): ErrorInfo {
  return toErrorInfo(new LispError("internal_error", `internal error: ${e instanceof Error ? e.message : String(e)}`));
}

function lost(why: ExitReason, maxHeapMb: number): ErrorInfo {
  if (why === "out_of_memory") {
    return toErrorInfo(new LispError("memory_exceeded", `the program used more than its ${maxHeapMb} MB of memory`, undefined, "build smaller values: process the data in parts, or keep only what you need"));
  }
  return internal(new Error("the program's worker thread stopped unexpectedly"));
}

/**
 * The context as the worker receives it: each key converted here (the same checks as in
 * process), or the error reading it gives, raised only if the program reads that key.
 */
function ctxEntries(ctx: Readonly<Record<string, unknown>>, limits: Limits, keys: readonly string[] = Object.keys(ctx)): CtxEntry[] {
  const writer = new WireWriter(false);
  const out: CtxEntry[] = [];
  const reader = new ContextReader(limits);
  for (const key of keys) {
    try {
      const v = writer.tryWrite(reader.value(key, contextValue(ctx, key)));
      out.push(v === undefined ? [key, null, { kind: "type_error", message: `data/${key} holds a function, which cannot cross into the program` }] : [key, v, null]);
    } catch (e) {
      out.push(isHiddenKey(key) ? [key, null, dataError(e), partsOf(ctx, key, limits, writer)] : [key, null, dataError(e)]);
    }
  }
  return out;
}

/** The parts of a hidden key the worker cannot take whole that can be read, for the records they hold (`readableParts`). */
function partsOf(ctx: Readonly<Record<string, unknown>>, key: string, limits: Limits, writer: WireWriter): Wire[] {
  const parts: Wire[] = [];
  // A key whose getter throws gives undefined, which holds no parts.
  for (const v of readableParts(valueOf(ctx, key), (x) => toLisp(x, limits.maxNestingDepth, 0, `data/${key}`, new Budget(limits)))) {
    const w = writer.tryWrite(v);
    if (w !== undefined) parts.push(w);
  }
  return parts;
}

function dataError(e: unknown): DataError {
  if (e instanceof LispError) return e.hint === undefined ? { kind: e.kind, message: e.message } : { kind: e.kind, message: e.message, hint: e.hint };
  return { kind: "internal_error", message: `internal error: ${e instanceof Error ? e.message : String(e)}` };
}

/** Memory sent whole: data as data, a definition holding a function as its source. */
function memoryEntries(memory: Memory): MemoryEntryWire[] {
  const writer = new WireWriter(false);
  const out: MemoryEntryWire[] = [];
  for (const [name, e] of memory) {
    const w: MemoryEntryWire = { name };
    if (e.doc !== undefined) w.doc = e.doc;
    if (e.source !== undefined) w.source = e.source;
    const value = writer.tryWrite(e.value);
    if (value !== undefined) w.value = value;
    if (e.hidden !== undefined) w.hidden = e.hidden;
    out.push(w);
  }
  return out;
}

/** `calls`: the host's records of the calls, in the order made, as the worker's are: the size each counted (arguments and result) is the host's. */
function result(m: DoneMessage, memory: Memory, w: PoolWorker, started: number, calls: readonly ToolCallRecord[]): EvalResult {
  const marks = m.marks === undefined ? null : new Marks();
  for (const [v, o] of m.marks ?? []) marks?.carry(v, o);
  const reader = new WireReader("it lives in the worker thread that ran the program", marks);
  const values = m.values.map((v) => reader.read(v));
  const toolCalls = m.calls.map((c, i) => {
    const r: ToolCallRecord = { name: c.name, args: c.args, durationMs: c.durationMs };
    const host = calls[i]?.name === c.name ? calls[i] : undefined;
    if (host?.size !== undefined) r.size = host.size;
    // The host ran the call with other arguments (an edited approval): its record says so, the worker's cannot.
    if (host !== undefined && Object.hasOwn(host, "asked")) Object.assign(r, { args: host.args, asked: host.asked });
    // The host refused it, keeping no arguments (ToolCallInfo.answering).
    if (host?.args === UNKEPT_ARGS) r.args = UNKEPT_ARGS;
    if (c.result !== undefined) r.result = c.result;
    if (c.value !== undefined) keepValue(r, values[c.value]);
    if (c.error !== undefined) r.error = c.error;
    if (c.errorKind !== undefined) r.errorKind = c.errorKind;
    if (c.errorHint !== undefined) r.errorHint = c.errorHint;
    // How the host answered it, which the worker's record cannot know.
    if (host?.held === true) Object.assign(r, { held: true, error: host.error });
    if (host?.replayed === true) Object.assign(r, { replayed: true, durationMs: host.durationMs });
    return r;
  });
  const stats = { fuelUsed: m.fuelUsed, durationMs: performance.now() - started };
  if (!m.ok) return marks === null ? { ok: false, error: m.error as ErrorInfo, prints: m.prints, memory, toolCalls, stats } : { ok: false, error: m.error as ErrorInfo, prints: m.prints, memory, toolCalls, stats, marks };
  const next = new Map(memory);
  const defs: Definition[] = m.defs.map((d, i) => ({ name: d.name, doc: d.doc, value: values[1 + i], source: d.source }));
  m.defs.forEach((d, i) => {
    const entry: MemoryEntry = d.hidden === undefined ? { value: values[1 + i], doc: d.doc, source: d.source } : { value: values[1 + i], doc: d.doc, source: d.source, hidden: d.hidden };
    // The order of last definition, as in process (evaluate.ts, success).
    next.delete(d.name);
    next.set(d.name, entry);
  });
  keptIn.set(next, { worker: w, id: m.memory });
  const ok: EvalResult = { ok: true, value: m.value, lisp: values[0], outcome: m.outcome ?? "value", prints: m.prints, memory: next, defs, toolCalls, stats };
  if (marks !== null) ok.marks = marks;
  return ok;
}

/**
 * A tool's error with every hidden argument it quotes (whole or cut short, or rewritten, as the
 * run's own record hides it: `hideQuoted`, `hideRewritten`) shown as its stand-in: the hidden values are what the arguments
 * hold where their shown form (made by the worker's marks) has a stand-in.
 */
function hideArgs(text: string, args: unknown, shown: unknown): string {
  const found: Array<[string, string]> = [];
  // As the run's own marks do (Marks.hideText): a message may quote the value JSON-escaped too.
  const given: Array<[string | number, string]> = [];
  const quoted = (value: string | number, shown: string): void => {
    for (const q of quotedForms(String(value))) found.push([q, shown]);
    given.push([value, shown]);
  };
  const walk = (a: unknown, s: unknown, depth: number): void => {
    if (depth > 64) return;
    if (typeof s === "string") {
      if (s.startsWith(STAND_IN_OPEN) && (typeof a === "string" || typeof a === "number") && String(a).length >= QUOTED_MIN) quoted(a, s);
      return;
    }
    if (Array.isArray(s) && Array.isArray(a)) for (let i = 0; i < s.length; i++) walk(a[i], s[i], depth + 1);
    else if (s !== null && typeof s === "object" && a !== null && typeof a === "object") {
      // A hidden key is a stand-in in the shown form: paired with the argument's key in the same place.
      const shownKeys = Object.keys(s);
      const keys = Object.keys(a);
      for (let i = 0; i < shownKeys.length; i++) {
        const k = shownKeys[i];
        const key = k in a ? k : shownKeys.length === keys.length ? keys[i] : undefined;
        if (key === undefined) continue;
        if (key !== k && k.startsWith(STAND_IN_OPEN) && key.length >= QUOTED_MIN) quoted(key, k);
        walk((a as Record<string, unknown>)[key], (s as Record<string, unknown>)[k], depth + 1);
      }
    }
  };
  walk(args, shown, 0);
  return hideRewritten(hideQuoted(text, found, true), given);
}
