// Definitions made again from their source, for memory whose functions cannot be used as they
// are: a worker that lost them (its memory was sent whole, functions as source), or functions
// compiled by a run without hidden context, which would not mark what they compute from it in
// a run with some (see evaluate.ts, `unmarked`). They are compiled as the run's own code is:
// against its context and its tools by name. A definition is only made again, never run for
// its effects: a tool it calls while being defined is refused, and it then becomes a function
// that says why it cannot be called.
import { LispError } from "./errors.js";
import type { EvalResult, EvaluateOptions, MemoryEntry, ToolSpec } from "./evaluate.js";
import { RemoteFn } from "./wire.js";

/** A definition to make again: its memory entry less the value. */
export type Pending = Omit<MemoryEntry, "value"> & { readonly name: string };

type Evaluate = (source: string, options: EvaluateOptions) => Promise<EvalResult>;

/**
 * What a definition made again sees: the run's limits and context, and its tools by name, each
 * refusing to be called (the call's effects would happen a second time; a function that calls
 * a tool when it is called, not when it is defined, compiles and comes back).
 */
export function againOptions(tools: ReadonlyArray<{ readonly name: string; readonly params?: readonly string[] }>, run: Pick<EvaluateOptions, "ctx" | "limits">): EvaluateOptions {
  const refusing: Record<string, ToolSpec> = {};
  for (const t of tools) refusing[t.name] = { run: () => Promise.reject(new LispError("tool_error", `tool/${t.name} is not called again to make a definition again`)), params: t.params };
  const options: EvaluateOptions = { tools: refusing };
  if (run.limits !== undefined) options.limits = run.limits;
  if (run.ctx !== undefined) options.ctx = run.ctx;
  return options;
}

/** `memory` with each pending definition added, in order, made again from its source; one that cannot be says `why` when called. */
export async function defineAgain(memory: Map<string, MemoryEntry>, pending: readonly Pending[], options: EvaluateOptions, evaluate: Evaluate, why: string): Promise<Map<string, MemoryEntry>> {
  for (const e of pending) {
    const made = e.source === undefined ? null : await evaluate(e.source, { ...options, memory });
    const value = (made?.ok ? made.memory.get(e.name)?.value : undefined) ?? new RemoteFn(e.name, e.name, undefined, why);
    const entry: MemoryEntry = { value, doc: e.doc, source: e.source };
    memory.set(e.name, e.hidden === undefined ? entry : { ...entry, hidden: e.hidden });
  }
  return memory;
}
