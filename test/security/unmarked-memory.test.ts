// Memory made by runs that had no hidden context, used by a run that has some. A run without
// hidden context compiles its code without marking builtins (they cost time there), so its
// functions, called on a hidden value later, would compute from it without marking what they
// return: a careless host that adds a secret to the context of a later turn, or memory restored
// with `restoreMemory` (which has no context), printed derived secrets in full. Each way a
// function can be kept (defn, fn, a stored builtin, partial, comp, a map of functions, a
// closure over another) is tried with each way of deriving text from a secret.
import { describe, expect, it } from "vitest";
import { evaluate, type EvalResult, type Memory } from "../../src/lisp/evaluate.js";
import { restoreMemory, saveMemory } from "../../src/agent/resume.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { fragments, leaks } from "../support/hidden.js";

const TOKEN = "sk-live-unmarked-7f3a9c21e4b8d6";
const ctx = { _token: TOKEN, xs: [1, 2, 3] };

// A way to keep a function, and how a program calls it on a value.
const KEPT: ReadonlyArray<readonly [definition: (body: string) => string, call: (arg: string) => string]> = [
  [(body) => `(defn f [s] ${body})`, (arg) => `(f ${arg})`],
  [(body) => `(def f (fn [s] ${body}))`, (arg) => `(f ${arg})`],
  [(body) => `(def fs {:f (fn [s] ${body})})`, (arg) => `((:f fs) ${arg})`],
  [(body) => `(defn g [s] ${body}) (defn f [s] (g s))`, (arg) => `(f ${arg})`],
  [(body) => `(def f (comp identity (fn [s] ${body})))`, (arg) => `(f ${arg})`],
  [(body) => `(defn f [s] ${body}) (def fv [f])`, (arg) => `((first fv) ${arg})`],
];

// What a function computes from its argument.
const BODIES = ["(clojure.string/upper-case s)", '(str "Bearer " s)', "(subs s 3)", "(apply str (reverse s))", '(clojure.string/join "_" (clojure.string/split s #"-"))', "(clojure.string/replace s \"-\" \"+\")"];

// Builtins kept as values, and partial applications of them.
const STORED: ReadonlyArray<readonly [string, string]> = [
  ["(def f clojure.string/upper-case)", "(println (f data/_token))"],
  ['(def f (partial str "Bearer "))', "(println (f data/_token))"],
  ["(def f subs)", "(println (f data/_token 2))"],
];

/** What a run shows a model: its prints and error (its value goes to the host, unmarked by design). */
const shown = (r: EvalResult): string => showStandIns(JSON.stringify(r.ok ? { prints: r.prints } : { prints: r.prints, error: r.error }));

async function made(source: string, withHidden: boolean): Promise<Memory> {
  const r = await evaluate(source, withHidden ? { ctx } : { ctx: { xs: ctx.xs } });
  if (!r.ok) throw new Error(`${source}: ${r.error.message}`);
  return r.memory;
}

describe("memory made without hidden context, used with it", () => {
  const cases: Array<readonly [string, string]> = [...STORED];
  for (const [define, call] of KEPT) for (const body of BODIES) cases.push([define(body), `(println ${call("data/_token")})`]);

  it("every function kept from a run without hidden context marks what it derives from a hidden value", async () => {
    const frags = fragments([TOKEN]);
    for (const [definition, program] of cases) {
      const marked = await evaluate(program, { ctx, memory: await made(definition, true) });
      const later = await evaluate(program, { ctx, memory: await made(definition, false) });
      const restored = await evaluate(program, { ctx, memory: await restoreMemory(saveMemory(await made(definition, false))) });
      expect(leaks(shown(later), frags), definition).toEqual([]);
      expect(leaks(shown(restored), frags), definition).toEqual([]);
      // Defined again, the function does what it did: the same result as memory made with hidden context.
      expect(shown(later), definition).toBe(shown(marked));
      expect(shown(restored), definition).toBe(shown(marked));
    }
  });

  it("a definition that called a tool when it was made is not made again: it says why when called, and the tool is not called", async () => {
    const calls: unknown[] = [];
    const tools = { fetch: (args: Record<string, unknown>) => (calls.push(args), "row") };
    const first = await evaluate('(def f (let [row (tool/fetch {:n 1})] (fn [s] (str row s)))) (defn ok [s] (clojure.string/upper-case s))', { tools });
    if (!first.ok) throw new Error(first.error.message);
    calls.length = 0;
    const r = await evaluate("(println (ok data/_token)) (f data/_token)", { ctx, tools, memory: first.memory });
    expect(calls).toEqual([]);
    expect(r.ok ? "ok" : r.error.message).toMatch(/f cannot be called here: it was defined by a run without hidden context and could not be defined again for this one/);
    expect(showStandIns(r.prints.join("\n"))).toBe("<hidden string derived from data/_token>");
    // The failed run leaves the memory as it was given.
    expect(r.memory).toBe(first.memory);
  });

  it("functions defined again keep reading data/ and calling tools", async () => {
    const tools = { fetch: (args: Record<string, unknown>) => Number(args.n) * 10 };
    const first = await evaluate("(defn total [] (reduce + data/xs)) (defn fetch10 [n] (tool/fetch {:n n}))", { ctx: { xs: ctx.xs }, tools });
    if (!first.ok) throw new Error(first.error.message);
    const r = await evaluate("[(total) (fetch10 4) (count data/_token)]", { ctx, tools, memory: first.memory });
    expect(r.ok ? r.value : r.error.message).toEqual([6, 40, TOKEN.length]);
  });

  it("a function calling a tool named __proto__ (a name from JSON) is defined again too", async () => {
    const tools = JSON.parse('{"__proto__": null}') as Record<string, () => number>;
    tools["__proto__"] = () => 5;
    const first = await evaluate("(defn f [] (tool/__proto__))", { tools });
    if (!first.ok) throw new Error(first.error.message);
    const r = await evaluate("(f)", { ctx, tools, memory: first.memory });
    expect(r.ok ? r.value : r.error.message).toBe(5);
  });
});
