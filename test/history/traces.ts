// Generated multi-turn traces for the history property tests: turns that define data and
// functions (redefining names across turns), print unique lines, call tools, and fail now
// and then, recorded the way the loop records them (Recorder, renderFeedback).
import fc from "fast-check";
import { renderFeedback } from "../../src/trace/feedback.js";
import { Recorder } from "../../src/trace/record.js";
import type { DefinitionTrace, RunTrace, ToolCallTrace, Turn, TurnStatus } from "../../src/trace/trace.js";
import { toLisp } from "../../src/lisp/interop.js";
import { prStr } from "../../src/lisp/printer.js";

export interface DefSpec {
  name: string;
  fn: boolean;
  value: unknown;
  doc?: string;
}

export interface TurnSpec {
  status: Extract<TurnStatus, "ok" | "error" | "no_code">;
  defs: DefSpec[];
  prints: number;
  tools: Array<{ name: string; args: Record<string, unknown>; result: unknown; error?: string }>;
  /** Extra prose in the reply, so programs range from terse to wordy. */
  prose: number;
}

const NAMES = ["users", "orders", "total", "helper", "by-region", "top", "xs", "report"];

const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.integer({ min: -1000, max: 100000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
    fc.string({ maxLength: 60 }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 12 }),
    fc.dictionary(fc.constantFrom("id", "name", "email", "price", "region", "tags"), tie("value"), { maxKeys: 5 }),
  ),
})).value;

const defSpec: fc.Arbitrary<DefSpec> = fc.record(
  { name: fc.constantFrom(...NAMES), fn: fc.boolean(), value: json, doc: fc.string({ minLength: 1, maxLength: 40 }) },
  { requiredKeys: ["name", "fn", "value"] },
);

const toolSpec = fc.record(
  {
    name: fc.constantFrom("search", "fetch-orders", "lookup"),
    args: fc.dictionary(fc.constantFrom("query", "id", "limit", "region"), fc.oneof(fc.string({ maxLength: 20 }), fc.integer({ min: 0, max: 99 })), { maxKeys: 3 }),
    result: json,
    error: fc.string({ minLength: 1, maxLength: 30 }),
  },
  { requiredKeys: ["name", "args", "result"] },
);

export const turnSpec: fc.Arbitrary<TurnSpec> = fc.record({
  status: fc.constantFrom<TurnSpec["status"]>("ok", "ok", "ok", "ok", "ok", "error", "no_code"),
  defs: fc.array(defSpec, { maxLength: 4 }),
  prints: fc.nat({ max: 6 }),
  tools: fc.array(toolSpec, { maxLength: 14 }),
  prose: fc.nat({ max: 300 }),
});

export const turnSpecs = (minLength = 1, maxLength = 14): fc.Arbitrary<TurnSpec[]> => fc.array(turnSpec, { minLength, maxLength });

/** Builds a trace from specs; every turn has feedback unless `finished` (the last then has none). */
export function buildTrace(specs: readonly TurnSpec[], maxTurns: number, finished = false): RunTrace {
  const recorder = new Recorder();
  const memory = new Map<string, DefinitionTrace>();
  const turns: Turn[] = [];
  specs.forEach((spec, i) => {
    const number = i + 1;
    const ok = spec.status === "ok";
    const defs = new Map<string, DefinitionTrace>();
    if (ok) for (const d of spec.defs) defs.set(d.name, d.fn ? fnDef(d) : recorder.definition(d.name, { value: toLisp(d.value), doc: d.doc }));
    const definitions = [...defs.values()];
    for (const d of definitions) memory.set(d.name, d);
    const prints = Array.from({ length: spec.prints }, (_, k) => `out t${number} line ${k}: ${"x".repeat((number * 7 + k * 13) % 50)}`);
    const toolCalls: ToolCallTrace[] = spec.tools.map((t) => (t.error !== undefined ? { name: t.name, args: t.args, error: t.error, durationMs: 1 } : { name: t.name, args: t.args, result: t.result, durationMs: 1 }));
    const program = spec.status === "no_code" ? null : programOf(spec, definitions, prints);
    const reply = `${"Let me look at the data. ".repeat(Math.ceil(spec.prose / 25))}\n${program === null ? "I think the answer is 42." : "```clojure\n" + program + "\n```"}`;
    const turn: Turn = {
      number,
      messages: [],
      reply,
      program,
      status: spec.status,
      prints,
      toolCalls,
      definitions,
      memory: [...memory.values()],
      usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmMs: 0, execMs: 0 },
    };
    if (spec.status === "error") turn.error = { kind: "type_error", message: `something failed in turn ${number}`, phase: "runtime", line: 1, column: 2, excerpt: "1 | (+ 1 x)\n  |  ^", hint: "check the argument types" };
    // Now and then the error happened inside a function an earlier turn may have defined.
    if (spec.status === "error" && number % 2 === 0) turn.error = { ...(turn.error as NonNullable<Turn["error"]>), trace: ["helper"] };
    if (!(finished && i === specs.length - 1)) turn.feedback = renderFeedback(turn, { maxTurns, toolsWithdrawn: number + 1 >= maxTurns }, { prints: true });
    turns.push(turn);
  });
  return { version: 1, system: "You write PTC-Lisp programs.\n".repeat(160), task: "Find the top customers by order value.", turns };
}

function fnDef(d: DefSpec): DefinitionTrace {
  const out: DefinitionTrace = { name: d.name, kind: "function", type: "function", sample: `#fn[${d.name}]`, params: "[x]", source: `(defn ${d.name} [x] (inc x))` };
  if (d.doc !== undefined) out.doc = d.doc;
  return out;
}

function programOf(spec: TurnSpec, defs: readonly DefinitionTrace[], prints: readonly string[]): string {
  const lines: string[] = [];
  for (const d of defs) lines.push(d.source ?? `(def ${d.name} ${d.edn ?? prStr(toLisp(null))})`);
  for (const t of spec.tools) lines.push(`(tool/${t.name} ${prStr(toLisp(t.args))})`);
  for (const p of prints) lines.push(`(println ${JSON.stringify(p)})`);
  return lines.join("\n");
}
