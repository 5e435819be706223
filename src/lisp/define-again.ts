// Definitions made again from their source, for memory whose functions cannot be used as they
// are: a worker that lost them (its memory was sent whole, functions as source), or functions
// compiled by a run without hidden context, which would not mark what they compute from it in
// a run with some (see evaluate.ts, `unmarked`). They are compiled as the run's own code is:
// against its context and its tools by name. A definition is only made again, never run for
// its effects: a tool it calls while being defined is refused, and it then becomes a function
// that says why it cannot be called.
import { LispError } from "./errors.js";
import type { EvalResult, EvaluateOptions, MemoryEntry, ToolSpec } from "./evaluate.js";
import { definitionReads } from "./reads.js";
import type { Value } from "./values.js";
import { RemoteFn } from "./wire.js";

/** A memory entry as it comes to be made again: `value` absent for a definition to make again from its source. */
export type Entry = Omit<MemoryEntry, "value"> & { readonly name: string; readonly value?: Value };

type Evaluate = (source: string, options: EvaluateOptions) => Promise<EvalResult>;

/**
 * What a definition made again sees: the run's limits and context, and its tools by name, each
 * refusing to be called (the call's effects would happen a second time; a function that calls
 * a tool when it is called, not when it is defined, compiles and comes back).
 */
export function againOptions(tools: ReadonlyArray<{ readonly name: string; readonly params?: readonly string[] }>, run: Pick<EvaluateOptions, "ctx" | "limits">): EvaluateOptions {
  // Own properties, whatever the name: assigning to `__proto__` would set the prototype instead.
  const refusing: Record<string, ToolSpec> = Object.fromEntries(
    tools.map((t) => [t.name, { run: () => Promise.reject(new LispError("tool_error", `tool/${t.name} is not called again to make a definition again`)), params: t.params }]),
  );
  const options: EvaluateOptions = { tools: refusing };
  if (run.limits !== undefined) options.limits = run.limits;
  if (run.ctx !== undefined) options.ctx = run.ctx;
  return options;
}

/**
 * Memory holding `entries` in their order (the order of their last definition), each without a
 * value made again from its source. Every name is there from the start, so a function calling
 * one defined after it compiles (it reads the name when called, as in the run that made it).
 * A definition is made again only when that gives what it gave then: what it read while it was
 * made (definitionReads) was defined before it and not since. Otherwise, or when it fails, it
 * is a function that says `why` (or which name changed) when called.
 */
export async function defineAgain(entries: readonly Entry[], options: EvaluateOptions, evaluate: Evaluate, why: string): Promise<Map<string, MemoryEntry>> {
  const at = new Map<string, number>();
  entries.forEach((e, i) => at.set(e.name, i));
  const memory = new Map<string, MemoryEntry>();
  const put = (e: Entry, value: Value): void => {
    const entry: MemoryEntry = { value, doc: e.doc, source: e.source };
    memory.set(e.name, e.hidden === undefined ? entry : { ...entry, hidden: e.hidden });
  };
  for (const e of entries) put(e, e.value ?? new RemoteFn(e.name, e.name, undefined, why));
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (e.value !== undefined || e.source === undefined) continue;
    const changed = definitionReads(e.source).find((name) => (at.get(name) ?? -1) >= i);
    if (changed !== undefined) {
      put(e, new RemoteFn(e.name, e.name, undefined, `its definition read ${changed === e.name ? "its own earlier value" : changed}, which is not what it was then; define it again`));
      continue;
    }
    const made = await evaluate(e.source, { ...options, memory });
    const value = made.ok ? made.memory.get(e.name)?.value : undefined;
    if (value !== undefined) put(e, value);
  }
  return memory;
}
