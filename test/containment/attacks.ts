// The attacks of issue 19, as data: each case runs one attack and reports what came back. They
// run in a child process under a watchdog (watchdog.ts), so a hang or an out-of-heap abort
// fails the case instead of killing the test runner.
import { z } from "zod";
import { evaluate, print, type EvaluateOptions, type ToolFn, type ToolSpec } from "../../src/lisp/evaluate.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { runEvalCommand } from "../../src/cli/eval.js";
import { PassThrough } from "node:stream";
import { types } from "node:util";

export interface Report {
  ok: boolean;
  kind?: string;
  message?: string;
  value?: unknown;
  /** The entry point cannot take this case's input (`ptc eval` has no tools, and its context is JSON). */
  skipped?: string;
  /** How long the run took (building the case's host data excluded). */
  ms?: number;
  /** The entry point refused the input before running the program (an agent's context check). */
  before?: true;
}

/**
 * Where a case runs: `evaluate` in process ("none") or in a worker ("worker"), a `SubAgent.run`
 * turn (its default isolation), or `ptc eval` (its command function, default isolation).
 */
export type Mode = "none" | "worker" | "agent" | "cli";
export const MODES: readonly Mode[] = ["none", "worker", "agent", "cli"];

export interface Attack {
  name: string;
  run: (limits: EvaluateOptions["limits"], mode: Mode) => Promise<Report>;
  /** Error kinds that are a clean answer; `value` when a correct value is the answer instead. */
  expect: { kinds?: string[]; value?: unknown; message?: RegExp };
  /** The modes the case means something in (default: all). */
  modes?: readonly Mode[];
}

/** 2^26 leaves, a few KB of distinct nodes. */
export const DAG = "(reduce (fn [m _] [m m]) [] (range 26))";
const MAP_DAG = "(reduce (fn [m i] {:l m :r m}) {} (range 26))";
const BOUNDED = ["fuel_exhausted", "timeout", "collection_too_large", "string_too_large"];
/** A string of 1,000,000 characters (maxStringLength under the defaults). */
const LONG = '(apply str (repeat 1000 (apply str (repeat 1000 "x"))))';
/** 1,000,000 code units: 499,990 letters with a combining accent each, then 20 x's. */
const COMBINING = "e\u0301".repeat(499_990) + "x".repeat(20);

const code = (s: string): string => "```clojure\n" + s + "\n```";

async function run(source: string, options: EvaluateOptions, mode: Mode = "none"): Promise<Report> {
  // The command line is written before the clock starts: writing a 2M-key context as JSON is the caller's time, not ptc eval's.
  const cli = mode === "cli" ? cliArgs(source, options) : undefined;
  if (cli !== undefined && !Array.isArray(cli)) return cli;
  const t0 = performance.now();
  const report = cli !== undefined ? await runCli(cli) : await runIn(source, options, mode as Exclude<Mode, "cli">);
  return { ...report, ms: performance.now() - t0 };
}

async function runIn(source: string, options: EvaluateOptions, mode: Exclude<Mode, "cli">): Promise<Report> {
  if (mode === "agent") return runAgent(source, options);
  const r = await evaluate(source, { ...options, isolation: mode });
  return r.ok ? { ok: true, value: r.value } : { ok: false, kind: r.error.kind, message: r.error.message };
}

/** One turn of an agent whose model writes `source`: what that turn's program gave. */
async function runAgent(source: string, options: EvaluateOptions): Promise<Report> {
  const tools: Record<string, ReturnType<typeof tool>> = {};
  for (const [name, t] of Object.entries(options.tools ?? {})) {
    const spec: ToolSpec = typeof t === "function" ? { run: t } : t;
    tools[name] = tool({ description: name, input: z.object({}).passthrough(), run: (args, signal) => (spec.run as ToolFn)(args, signal), timeoutMs: spec.timeoutMs ?? options.toolTimeoutMs });
  }
  let agent;
  try {
    agent = SubAgent.create({ prompt: "Run the program", tools, maxTurns: 1, limits: options.limits });
  } catch (e) {
    return { ok: false, kind: (e as Error).name, message: (e as Error).message };
  }
  const step = await SubAgent.run(agent, { llm: scriptedLlm([code(source)]), context: options.ctx });
  const turn = step.turns[0];
  // Refused before any turn (the context could not be read for the prompt).
  if (turn === undefined || turn.program === null) return step.ok ? { ok: true, value: step.value } : { ok: false, kind: step.fail.reason, message: step.fail.message, before: true };
  if (turn?.error !== undefined) return { ok: false, kind: turn.error.kind, message: turn.error.message };
  return { ok: true, value: turn?.value === undefined ? undefined : { edn: turn.value } };
}

/** The arguments of `ptc eval -e source --ctx JSON --limit ...`, or why the case does not apply. */
function cliArgs(source: string, options: EvaluateOptions): string[] | Report {
  if (options.tools !== undefined) return { ok: false, skipped: "ptc eval has no tools" };
  if (options.ctx !== undefined && !isJson(options.ctx, { left: 5_000_000 })) return { ok: false, skipped: "the context is not JSON" };
  const args = ["-e", source, "--json", ...Object.entries(options.limits ?? {}).flatMap(([k, v]) => ["--limit", `${k}=${v}`])];
  if (options.ctx !== undefined) args.push("--ctx", JSON.stringify(options.ctx));
  return args;
}

/** `ptc eval` as its command runs it. */
async function runCli(args: string[]): Promise<Report> {
  let out = "";
  let err = "";
  const code = await runEvalCommand(args, { stdin: new PassThrough(), stdout: { write: (s: string) => (out += s) }, stderr: { write: (s: string) => (err += s) } });
  if (code === 0) return { ok: true, value: JSON.parse(out) as unknown };
  const m = /^([a-z_]+): (.*)/m.exec(err);
  return { ok: false, kind: m?.[1] ?? `exit ${code}`, message: m?.[2] ?? err.slice(0, 300) };
}

/** Whether `x` is a JSON tree (within `budget` nodes, no cycle): what `--ctx` can carry. */
function isJson(x: unknown, budget: { left: number }, depth = 0): boolean {
  if (--budget.left < 0 || depth > 200) return false;
  if (x === null || typeof x === "string" || typeof x === "boolean") return true;
  if (typeof x === "number") return Number.isFinite(x);
  if (typeof x !== "object" || types.isProxy(x)) return false;
  if (Array.isArray(x)) {
    if (x.length > budget.left) return false;
    for (let i = 0; i < x.length; i++) if (!(i in x) || !isJson(x[i], budget, depth + 1)) return false;
    return true;
  }
  const proto: unknown = Object.getPrototypeOf(x);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const k in x) if (!isJson((x as Record<string, unknown>)[k], budget, depth + 1)) return false;
  return true;
}

// Host data is built once per process, before it is timed: building it is the host's cost.
const built = new Map<string, unknown>();
function once<T>(key: string, make: () => T): T {
  if (!built.has(key)) built.set(key, make());
  return built.get(key) as T;
}

const program = (name: string, source: string, expect: Attack["expect"], options: EvaluateOptions = {}): Attack => ({
  name,
  run: (limits, mode) => run(source, { ...options, limits: { ...limits, ...options.limits } }, mode),
  expect,
});

const ctxAttack = (name: string, source: string, ctx: Record<string, unknown>, expect: Attack["expect"]): Attack => program(name, source, expect, { ctx });
// A context too big to build when the module loads: built for the run, before it starts.
const bigCtxAttack = (name: string, source: string, ctx: (limits: EvaluateOptions["limits"]) => Record<string, unknown>, expect: Attack["expect"]): Attack => ({
  name,
  expect,
  run: (limits, mode) => run(source, { limits, ctx: once(name, () => ctx(limits)) }, mode),
});
// The result is built before the program runs: building it is the host's own time, not the run's.
const toolAttack = (name: string, result: (limits: EvaluateOptions["limits"]) => unknown, expect: Attack["expect"], source = "(tool/t)"): Attack => ({
  name,
  expect,
  run(limits, mode) {
    const value = once(name, () => result(limits));
    return run(source, { limits, tools: { t: () => value } }, mode);
  },
});
// Twice the collection limit in force (2M under the defaults).
const twiceTheLimit = (limits: EvaluateOptions["limits"]): number => 2 * (limits?.maxCollectionSize ?? 1_000_000);

function cyclic(): Record<string, unknown> {
  const o: Record<string, unknown> = { id: 1 };
  o.a = o;
  o.b = o;
  return o;
}

function lyingArray(length: number): unknown {
  return new Proxy([], { get: (t, k) => (k === "length" ? length : Reflect.get(t, k)) });
}

function manyKeys(n: number): Record<string, number> {
  const o: Record<string, number> = {};
  for (let i = 0; i < n; i++) o["k" + i] = i;
  return o;
}

const TYPE = { kinds: ["type_error"] };

/** 90,000 distinct strings that all begin "user-". */
const users = (from: number): string[] => Array.from({ length: 90_000 }, (_, i) => `user-${100_000 + from + i}`);

export const ATTACKS: Attack[] = [
  // Shared structure.
  program("dag returned", DAG, { kinds: ["collection_too_large"], message: /unfolds into 134217727 values/ }),
  program("dag passed to a tool", `(tool/t {:x ${DAG}})`, { kinds: ["collection_too_large"] }, { tools: { t: () => 1 } }),
  program("dag in a set", `(let [a ${DAG} b ${DAG}] (count #{a b}))`, { value: 1 }),
  program("dag in hash-set", `(let [a ${DAG} b ${DAG}] (count (hash-set a b)))`, { value: 1 }),
  program("dag as map keys", `(let [a ${DAG} b ${DAG}] (count (assoc {} a 1 b 2)))`, { value: 1 }),
  program("dag distinct", `(let [a ${DAG} b ${DAG}] (count (distinct [a b])))`, { value: 1 }),
  program("dag frequencies", `(let [a ${DAG} b ${DAG}] (vals (frequencies [a b])))`, { value: [2] }),
  program("dag group-by", `(let [a ${DAG} b ${DAG}] (count (group-by identity [a b])))`, { value: 1 }),
  program("dag =", `(let [a ${DAG} b ${DAG}] (= a b))`, { value: true }),
  program("dag not=", `(let [a ${DAG} b ${DAG}] (not= a (conj b 1)))`, { value: true }),
  program("dag compare", `(let [a ${DAG} b ${DAG}] (compare a b))`, { value: 0, kinds: BOUNDED }),
  program("dag sorted", `(let [a ${DAG} b ${DAG}] (count (sort [a b])))`, { value: 2, kinds: BOUNDED }),
  program("dag pr-str", `(count (pr-str ${DAG}))`, { kinds: BOUNDED }),
  program("dag str", `(count (str ${DAG}))`, { kinds: BOUNDED }),
  program("dag println", `(println ${DAG})`, { kinds: BOUNDED }),
  program("dag in ex-info", `(try (throw (ex-info "x" {:d ${DAG}})) (catch e (count (ex-message e))))`, { kinds: BOUNDED, value: 1 }),
  program("dag from a replacement function", `(clojure.string/replace "ab" #"a" (fn [m] ${DAG}))`, { kinds: BOUNDED }),
  program("dag from an escape function", `(clojure.string/escape "ab" (fn [c] ${DAG}))`, { kinds: BOUNDED }),
  program("dag as an assert message", `(assert false ${DAG})`, { kinds: BOUNDED }),
  program("dag as a map key returned", `{${DAG} 1}`, { kinds: BOUNDED }),
  program("map dag =", `(let [a ${MAP_DAG} b ${MAP_DAG}] (= a b))`, { value: true }),
  program("map dag in a set", `(let [a ${MAP_DAG} b ${MAP_DAG}] (count (hash-set a b)))`, { value: 1 }),
  program("map dag distinct", `(let [a ${MAP_DAG} b ${MAP_DAG}] (count (distinct [a b a])))`, { value: 1 }),
  program("map dag returned", MAP_DAG, { kinds: ["collection_too_large"] }),
  {
    name: "dag in agent memory, traces and summaries",
    expect: { value: "done" },
    modes: ["agent"],
    async run() {
      const agent = SubAgent.create({ prompt: "Keep a value", tools: { t: tool({ description: "echo", input: z.object({}), run: () => 1 }) }, maxTurns: 3 });
      const llm = scriptedLlm([code(`(def d ${DAG}) (def m ${MAP_DAG}) (println (count d)) (count d)`), code("(def e [d m]) (count e)"), code('(return "done")')]);
      const step = await SubAgent.run(agent, { llm });
      return step.ok ? { ok: true, value: step.value } : { ok: false, kind: step.fail.reason, message: step.fail.message };
    },
  },
  {
    // 600 x 1M characters is past the longest string V8 can build: refused before it is built.
    name: "a long context string filling a placeholder used 600 times",
    expect: { kinds: ["invalid_input"], message: /is 600000600 characters, over the limit of 20000000 \(maxBoundaryChars\)/ },
    modes: ["agent"],
    async run() {
      const agent = SubAgent.create({ prompt: "{{x}} ".repeat(600), maxTurns: 1 });
      const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), context: { x: "x".repeat(1_000_000) } });
      return step.ok ? { ok: true, value: step.value } : { ok: false, kind: step.fail.reason, message: step.fail.message };
    },
  },
  program("dag of a hidden value printed", "(println (reduce (fn [v _] [v v]) data/_tok (range 40)))", { kinds: BOUNDED }, { ctx: { _tok: "secret-token-123" } }),
  {
    name: "dag of a hidden value in agent memory",
    expect: { value: "done" },
    modes: ["agent"],
    async run() {
      const agent = SubAgent.create({ prompt: "Keep a value", maxTurns: 2 });
      const llm = scriptedLlm([code("(def d (reduce (fn [v _] [v v]) data/_tok (range 40))) (count d)"), code('(return "done")')]);
      const step = await SubAgent.run(agent, { llm, context: { _tok: "secret-token-123" } });
      return step.ok ? { ok: true, value: step.value } : { ok: false, kind: step.fail.reason, message: step.fail.message };
    },
  },
  // Hidden strings sharing their first characters ("user", "http"): an error message is searched
  // for each, and indexing them scanned every value with the same head, so an error in a run that
  // read 180,000 of them ran for minutes after the run had ended.
  bigCtxAttack("an error after reading many hidden strings with one head", '(do (count data/_a) (count data/_b) (+ 1 "a"))', () => ({ _a: users(0), _b: users(90_000) }), { kinds: ["type_error"], message: /\+ expects numbers/ }),
  // Text with a combining mark in every character: Intl.Segmenter takes time proportional to the
  // whole string for each character it yields, so reading the characters of 1M code units was one
  // native loop of hours that no limit could stop in process.
  // Splitting it into characters builds a collection of 500,010: over the catalogue's maxCollectionSize.
  ...([["(count data/s)", 500_010], ["(subs data/s 499990)", "x".repeat(20)], ['(clojure.string/index-of data/s "x")', 499_990], ["(count (seq data/s))", 500_010], ["(last data/s)", "x"]] as const).map(([source, value]) =>
    ctxAttack(`the characters of 1M code units of combining text: ${source}`, source, { s: COMBINING }, { value, kinds: ["collection_too_large"] }),
  ),
  program("deep printing is an error", "(str (reduce (fn [m _] [m]) [] (range 300)))", { kinds: ["nesting_too_deep"] }),
  program("deep pr-str is an error", "(pr-str (reduce (fn [m _] {:a m}) {} (range 300)))", { kinds: ["nesting_too_deep"] }),

  // Host data at the boundary.
  ctxAttack("ctx sparse 1e9 array", "(count data/xs)", { xs: new Array(1e9) }, { kinds: ["collection_too_large"] }),
  ctxAttack("ctx array Proxy with length 2^32-1", "(count data/xs)", { xs: lyingArray(2 ** 32 - 1) }, { kinds: ["collection_too_large"] }),
  ctxAttack("ctx array Proxy with length 1e9", "(first data/xs)", { xs: lyingArray(1e9) }, { kinds: ["collection_too_large"] }),
  ctxAttack("ctx cyclic graph", "(count data/g)", { g: cyclic() }, { kinds: ["type_error"], message: /data\/g\.a is a cycle/ }),
  ctxAttack("ctx function at a path", "(count data/orders)", { orders: [{}, {}, {}, { fetch: () => 1 }] }, { kinds: ["type_error"], message: /data\/orders\[3\]\.fetch/ }),
  ctxAttack("ctx class instance", "data/x", { x: { when: new (class Order {})() } }, TYPE),
  ctxAttack("ctx symbol", "data/x", { x: [Symbol("s")] }, TYPE),
  ctxAttack("ctx Proxy whose ownKeys throws", "data/x", { x: new Proxy({}, { ownKeys: () => { throw new TypeError("trap says no"); } }) }, TYPE),
  ctxAttack("ctx revoked Proxy", "data/x", { x: (() => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; })() }, TYPE),
  ctxAttack("ctx Proxy whose getPrototypeOf throws", "data/x", { x: new Proxy({}, { getPrototypeOf: () => { throw new Error("proto trap"); } }) }, TYPE),
  // The context itself a Proxy: its keys are listed before any program runs (hidden keys, the
  // prompt, the worker's copy), and a trap that threw there escaped evaluate with its own message.
  program("ctx that is a Proxy whose ownKeys throws", "data/a", { kinds: ["value_error"], message: /keys cannot be listed/ }, { ctx: new Proxy({ a: 1 }, { ownKeys: () => { throw new Error("trap says sk-secret"); } }) }),
  program("ctx that is a Proxy whose getOwnPropertyDescriptor throws", "1", { kinds: ["value_error"], message: /keys cannot be listed/ }, { ctx: new Proxy({ a: 1 }, { getOwnPropertyDescriptor: () => { throw new Error("trap says sk-secret"); } }) }),
  program("ctx that is a Proxy listing a non-string key", "1", { kinds: ["value_error"], message: /keys cannot be listed/ }, { ctx: new Proxy({ a: 1 }, { ownKeys: () => [1 as never] }) }),
  program("ctx that is a readable Proxy", "(+ data/a data/b)", { value: 3 }, { ctx: new Proxy({ a: 1 }, { ownKeys: () => ["a", "b"], getOwnPropertyDescriptor: () => ({ value: 0, enumerable: true, configurable: true }), get: (_t, k) => (k === "a" ? 1 : 2) }) }),
  ctxAttack("ctx DAG of host objects", "(count data/x)", { x: (() => { let o: unknown = {}; for (let i = 0; i < 40; i++) o = { a: o, b: o }; return o; })() }, { kinds: ["collection_too_large", "fuel_exhausted", "timeout"] }),
  toolAttack("tool sparse 1e9 array", () => new Array(1e9), { kinds: ["collection_too_large"] }),
  toolAttack("tool array-like Proxy 2^32-1", () => lyingArray(2 ** 32 - 1), { kinds: ["collection_too_large"] }),
  // Listing 2M keys is one V8 call of about a second: on a slow machine the time limit may fire first.
  toolAttack("tool 2M-key object", (l) => manyKeys(twiceTheLimit(l)), { kinds: ["collection_too_large", "timeout"] }),
  toolAttack("tool 300k-key object", () => manyKeys(300_000), { value: 300_000, kinds: ["timeout", "collection_too_large", "fuel_exhausted"] }, "(count (tool/t))"),
  bigCtxAttack("ctx 2M-key object", "(count data/x)", (l) => ({ x: manyKeys(twiceTheLimit(l)) }), { kinds: ["collection_too_large", "timeout"] }),
  bigCtxAttack("ctx 300k-key object", "(count data/x)", () => ({ x: manyKeys(300_000) }), { value: 300_000, kinds: ["timeout", "collection_too_large", "fuel_exhausted"] }),
  // The trap is host code: nothing preempts it (README, Limits), and when it returns past the time
  // limit the worker mode's hard stop may answer first with `timeout`, as clean as the count's refusal.
  toolAttack("tool object Proxy with 2M ownKeys", (l) => new Proxy({}, { ownKeys: () => Array.from({ length: twiceTheLimit(l) }, (_, i) => "k" + i), getOwnPropertyDescriptor: () => ({ value: 1, enumerable: true, configurable: true }) }), { kinds: ["collection_too_large", "type_error", "tool_error", "timeout"] }),
  toolAttack("tool Map whose size says 1e9", () => Object.defineProperty(new Map([[1, 1]]), "size", { get: () => 1e9 }), { kinds: ["collection_too_large"] }),
  toolAttack("tool Set whose size says 1 over 2M entries", (l) => Object.defineProperty(new Set(Array.from({ length: twiceTheLimit(l) }, (_, i) => i)), "size", { get: () => 1 }), { kinds: ["collection_too_large", "timeout", "fuel_exhausted"] }),
  toolAttack("tool Map of 2M entries", (l) => new Map(Array.from({ length: twiceTheLimit(l) }, (_, i) => [i, i])), { kinds: ["collection_too_large"] }),
  toolAttack("tool cyclic graph", cyclic, { kinds: ["tool_error"], message: /tool\/t\.a is a cycle/ }),
  toolAttack("tool function in result", () => ({ rows: [1, { f: () => 1 }] }), { kinds: ["type_error", "tool_error"], message: /rows\[1\]\.f/ }),
  toolAttack("tool revoked Proxy", () => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; }, { kinds: ["type_error", "tool_error"] }),
  {
    name: "tool Error whose message getter throws",
    expect: { kinds: ["tool_error"] },
    run: (limits, mode) => {
      const e = new Error("x");
      Object.defineProperty(e, "message", { get: () => { throw new Error("getter boom"); } });
      return run("(tool/t)", { limits, tools: { t: () => { throw e; } } }, mode);
    },
  },
  {
    name: "tool throws a Proxy whose traps throw",
    expect: { kinds: ["tool_error"] },
    run: (limits, mode) => run("(tool/t)", { limits, tools: { t: () => Promise.reject(new Proxy({}, { get: () => { throw new Error("trap"); }, getPrototypeOf: () => { throw new Error("trap"); } })) } }, mode),
  },
  // A host may throw megabytes (an HTTP body quoted whole): the program, the record and the error keep 1,000 characters of it.
  {
    name: "tool throws a 10M-character message",
    expect: { kinds: ["tool_error"], message: /^tool\/t failed: m{1,1000}…$/ },
    run: (limits, mode) => run("(tool/t)", { limits, tools: { t: () => { throw new Error("m".repeat(10_000_000)); } } }, mode),
  },
  {
    name: "tool throws a 10M-character message, caught",
    expect: { value: 1016 },
    modes: ["none", "worker"],
    run: (limits, mode) => run("(try (tool/t) (catch e (count (ex-message e))))", { limits, tools: { t: () => { throw new Error("m".repeat(10_000_000)); } } }, mode),
  },
  // Strings share too: one string reached many times is copied each time it is written across a
  // thread (structured clone does not share strings) or as JSON. 3,000 x 1M characters is 3 GB.
  program("a long string shared in the result", `(let [s ${LONG}] (vec (repeat 3000 s)))`, { kinds: ["string_too_large"], message: /maxBoundaryChars/ }),
  program("a long string shared in a tool's arguments", `(let [s ${LONG}] (tool/t {:xs (vec (repeat 3000 s))}))`, { kinds: ["string_too_large"], message: /maxBoundaryChars/ }, { tools: { t: () => 1 } }),
  program("a long string shared in a definition", `(def big (let [s ${LONG}] (vec (repeat 3000 s)))) (count big)`, { value: 3000 }),
  // Two equal long strings built apart compare character by character, each time: 100,000 pairs
  // of 1M characters is 100 G characters read for 100,000 units of fuel.
  program("equal long strings compared 100,000 times", `(let [a ${LONG} b (str ${LONG})] (= (vec (repeat 100000 a)) (vec (repeat 100000 b))))`, { kinds: BOUNDED }),
  program("equal long strings sorted", `(let [a ${LONG} b (str ${LONG})] (count (sort (concat (repeat 1500 a) (repeat 1500 b)))))`, { kinds: BOUNDED }),
  toolAttack("tool result sharing a long string", () => new Array(3000).fill("y".repeat(1_000_000)), { kinds: ["string_too_large", "tool_error"], message: /maxBoundaryChars/ }),
  bigCtxAttack("ctx sharing a long string", "(count data/xs)", () => ({ xs: new Array(30).fill("y".repeat(1_000_000)) }), { kinds: ["string_too_large"], message: /maxBoundaryChars/ }),
  // evaluate's own checks; an agent's tools are checked by tool() and SubAgent.create (the next case).
  { ...program("tool spec without run", "1", { kinds: ["value_error"], message: /tool\/t/ }, { tools: { t: {} as never } }), modes: ["none", "worker"] },
  { ...program("tool spec with bad params", "1", { kinds: ["value_error"], message: /tool\/t/ }, { tools: { t: { run: () => 1, params: "a" as never } } }), modes: ["none", "worker"] },
  {
    name: "SubAgent tool without run",
    expect: { kinds: ["AgentDefinitionError"], message: /t/ },
    modes: ["agent"],
    async run() {
      try {
        SubAgent.create({ prompt: "p", tools: { t: { description: "d" } as never } });
        return { ok: true, value: "created" };
      } catch (e) {
        return { ok: false, kind: (e as Error).name, message: (e as Error).message };
      }
    },
  },
  {
    name: "tool past its timeout is abandoned",
    expect: { kinds: ["tool_timeout"] },
    modes: ["none", "worker", "agent"],
    async run(limits, mode) {
      let late = false;
      const r = await run("(tool/t)", { limits, toolTimeoutMs: 20, tools: { t: () => new Promise((ok) => setTimeout(() => ok((late = true)), 200)) } }, mode);
      await new Promise((ok) => setTimeout(ok, 300));
      // The late result arrived and was ignored: the report is still the timeout.
      return late ? r : { ok: true, value: "the tool never finished" };
    },
  },
];

/** What looks like host text rather than a message written for the program's author. */
export const HOST_TEXT = /Cannot perform|TypeError|RangeError|SyntaxError|ReferenceError|is not a function|Cannot read prop|Cannot convert|Invalid array length|Maximum call stack|'ownKeys'|on proxy|internal error|trap|boom|\n\s+at /;

/** Why a report is not the clean answer the case expects (null when it is). */
export function verdict(a: Attack, r: Report): string | null {
  if (r.skipped !== undefined) return null;
  if (r.message !== undefined && HOST_TEXT.test(r.message)) return `host text in the message: ${r.message}`;
  // An agent refuses a context it cannot read before any program runs: clean, when an error is the answer.
  if (r.before === true && r.kind === "invalid_input" && a.expect.kinds !== undefined) return null;
  if (r.ok) {
    if (!("value" in a.expect)) return `expected an error, got a value`;
    // An agent's turn shows its value as EDN.
    const want = isEdn(r.value) ? print(a.expect.value as never) : JSON.stringify(a.expect.value);
    const got = isEdn(r.value) ? r.value.edn : JSON.stringify(r.value);
    return got === want ? null : `wrong value ${got?.slice(0, 200)}`;
  }
  if (!a.expect.kinds?.includes(r.kind ?? "")) return `unexpected ${r.kind}: ${r.message}`;
  if (a.expect.message && !a.expect.message.test(r.message ?? "")) return `message does not match ${a.expect.message}: ${r.message}`;
  return null;
}

const isEdn = (v: unknown): v is { edn: string } => typeof v === "object" && v !== null && "edn" in v;

/** Every case id (`mode|attack name`) in `modes`, attack by attack. */
export function caseIds(modes: readonly Mode[] = MODES): string[] {
  return ATTACKS.flatMap((a) => modes.filter((m) => a.modes?.includes(m) ?? true).map((m) => `${m}|${a.name}`));
}
