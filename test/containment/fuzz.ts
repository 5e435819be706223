// A seeded generator of programs that share structure, and of hostile host inputs, for the
// containment fuzzer: chains of `let` bindings each built from the previous one twice (so 30
// steps reach 2^30 leaves in a few KB), then used as keys, set members, tool arguments, printed,
// compared, sorted, defined and returned; `data/x` and tool results are drawn from huge, sparse,
// lying, cyclic, shared and non-data host values. One seed gives one program, the same each time.
import { evaluate, print } from "../../src/lisp/evaluate.js";
import { printSample } from "../../src/lisp/printer.js";
import { HOST_TEXT } from "./attacks.js";
import { rng } from "../support/rng.js";

const BASES = ["[]", "{}", "#{}", "1", '"s"', ":k", "nil", "[1 2]", "{:a 1}", "(range 5)", "data/x", "(tool/t {:q 1})", "(vec (range 40))", "(str \"ab\" 1)", '(apply str (repeat 2000 "ab"))'];
// Each builds a value from `x` and `y` (both the previous link, or the previous link of the other chain).
const STEPS = [
  "[x y]",
  "(vector x y)",
  "{:l x :r y}",
  "(hash-map :l x :r y)",
  "(hash-set x [y])",
  "(conj [x] y)",
  "(assoc {} x y)",
  "{x 1 y 2}",
  "(vec (concat [x] [y]))",
  "(into [x] [y])",
  "(merge {:a x} {:b y})",
  "[x y x]",
  "(update {:v x} :v (fn [v] [v y]))",
];
const FINALS = [
  "a",
  "(count a)",
  "(= a b)",
  "(not= a (conj [b] 1))",
  "(hash-set a b)",
  "(count (hash-set a b))",
  "(distinct [a b a])",
  "(count (distinct [a b]))",
  "(frequencies [a b])",
  "(vals (frequencies [a b]))",
  "{a 1}",
  "(get {a 1} b)",
  "(contains? #{a} b)",
  "(count (group-by identity [a b]))",
  "(count (into #{} [a b]))",
  "(pr-str a)",
  "(count (pr-str a))",
  "(count (str a))",
  "(println a)",
  "(compare [a] [b])",
  "(count (sort [a b]))",
  "(tool/t {:x a})",
  "(tool/t a)",
  "(def d a)",
  "(do (def d a) (count d))",
  "(try (throw (ex-info \"e\" {:v a})) (catch e (ex-data e)))",
  "(return a)",
  "(fail a)",
  "(hash-map a b)",
  "[a b]",
  "(flatten [a])",
  "(count (flatten [a]))",
];

type Host = { label: string; make: () => unknown };

function lying(length: number): unknown {
  return new Proxy([], { get: (t, k) => (k === "length" ? length : Reflect.get(t, k)) });
}

function cyclic(): unknown {
  const o: Record<string, unknown> = { n: 1 };
  o.self = o;
  o.list = [o, o];
  return o;
}

function sharedObjects(depth: number): unknown {
  let o: unknown = { leaf: 1 };
  for (let i = 0; i < depth; i++) o = { a: o, b: [o, o] };
  return o;
}

const HOSTS: Host[] = [
  { label: "small", make: () => [1, { a: "b" }, [2, 3]] },
  { label: "sparse 1e9", make: () => new Array(1e9) },
  { label: "sparse 2^32-1", make: () => new Array(2 ** 32 - 1) },
  { label: "lying length", make: () => lying(1e9) },
  { label: "lying Map size", make: () => new Proxy(new Map(), { get: (t, k) => (k === "size" ? 1e9 : Reflect.get(t, k)) }) },
  { label: "cyclic", make: cyclic },
  { label: "shared objects", make: () => sharedObjects(30) },
  { label: "function inside", make: () => ({ rows: [1, { fetch: () => 1 }] }) },
  { label: "class instance", make: () => [new (class Order {})()] },
  { label: "symbol", make: () => ({ s: Symbol("x") }) },
  { label: "ownKeys throws", make: () => new Proxy({}, { ownKeys: () => { throw new TypeError("trap"); } }) },
  { label: "revoked", make: () => { const p = Proxy.revocable({}, {}); p.revoke(); return p.proxy; } },
  { label: "getter throws", make: () => Object.defineProperty({}, "x", { enumerable: true, get: () => { throw new Error("boom"); } }) },
  { label: "deep", make: () => { let o: unknown = 1; for (let i = 0; i < 400; i++) o = [o]; return o; } },
  { label: "wide object", make: () => Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i])) },
  { label: "big flat", make: () => Array.from({ length: 5_000 }, (_, i) => i) },
  { label: "shared long string", make: () => new Array(5_000).fill("q".repeat(10_000)) },
];

export interface FuzzCase {
  source: string;
  ctx: string;
  tool: string;
}

export function generate(seed: number): FuzzCase {
  const r = rng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
  const links = 1 + Math.floor(r() * 32);
  const base = pick(BASES);
  const bindings: string[] = [`a0 ${base}`, `b0 ${base}`];
  for (let i = 1; i <= links; i++) {
    const s = pick(STEPS);
    // Mostly the same step on both chains (equal values built apart), sometimes crossed.
    const cross = r() < 0.1;
    bindings.push(`a${i} ${s.replace(/\bx\b/g, `a${i - 1}`).replace(/\by\b/g, cross ? `b${i - 1}` : `a${i - 1}`)}`);
    bindings.push(`b${i} ${s.replace(/\bx\b/g, `b${i - 1}`).replace(/\by\b/g, `b${i - 1}`)}`);
  }
  const final = pick(FINALS).replace(/\ba\b/g, `a${links}`).replace(/\bb\b/g, `b${links}`);
  const source = `(let [${bindings.join(" ")}] ${final})`;
  return { source, ctx: pick(HOSTS).label, tool: pick(HOSTS).label };
}

export const FUZZ_LIMITS = { timeoutMs: 200, maxFuel: 300_000, maxCollectionSize: 10_000, maxBoundaryValues: 20_000, maxBoundaryChars: 200_000, maxStringLength: 20_000 };

export interface FuzzOutcome {
  /** Empty when the program was contained; else what went wrong. */
  problems: string[];
  ms: number;
  kind: string;
}

// Made once per process: conversion never changes them, and building the big ones is the host's cost, not the run's.
const made = new Map<string, unknown>();
function host(label: string): unknown {
  if (!made.has(label)) made.set(label, (HOSTS.find((h) => h.label === label) as Host).make());
  return made.get(label);
}

/** Runs one generated program and says what, if anything, escaped the promise. */
export async function check(seed: number): Promise<FuzzOutcome> {
  const c = generate(seed);
  const problems: string[] = [];
  const t0 = performance.now();
  let kind = "value";
  try {
    const toolResult = host(c.tool);
    // One program in ten runs in a worker, so the thread boundary (context, tool results, values and marks crossing) meets the same inputs.
    const r = await evaluate(c.source, { ctx: { x: host(c.ctx) }, tools: { t: () => toolResult }, limits: FUZZ_LIMITS, isolation: seed % 10 === 0 ? "worker" : "none" });
    if (r.stats.fuelUsed > FUZZ_LIMITS.maxFuel) problems.push(`used ${r.stats.fuelUsed} fuel`);
    if (!r.ok) {
      kind = r.error.kind;
      if (r.error.kind === "internal_error") problems.push(`internal error: ${r.error.message}`);
      else if (HOST_TEXT.test(r.error.message)) problems.push(`host text: ${r.error.message}`);
    } else {
      JSON.stringify(r.value);
      // The walkers that meet values after a run: traces and summaries (samples), print.
      printSample(r.lisp, { maxItems: Infinity, maxChars: 4096, maxDepth: Infinity });
      for (const d of r.defs) printSample(d.value, { maxItems: 3, maxChars: 80 });
      try {
        print(r.lisp);
      } catch (e) {
        if (!(e && typeof e === "object" && "kind" in e)) throw e;
      }
    }
  } catch (e) {
    problems.push(`threw: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
  }
  const ms = performance.now() - t0;
  return { problems: problems.map((p) => `seed ${seed} [${c.ctx} / ${c.tool}] ${c.source.slice(0, 300)}: ${p}`), ms, kind };
}
