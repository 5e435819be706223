import { getEventListeners } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { AgentDefinitionError } from "../../src/agent/errors.js";
import type { RunScope } from "../../src/agent/subagent.js";
import { isTool, parseOwn, tool, ToolSession, type Tool } from "../../src/agent/tools.js";
import { saveRun } from "../../src/agent/resume.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { evaluate } from "../../src/lisp/evaluate.js";

const scope: RunScope = { depth: 0, options: {}, deadlineAt: undefined, tokensLeft: () => Infinity, charge: () => undefined, admitNested: () => undefined, addNested: () => undefined };

function session(tools: Record<string, Tool>, defaultTimeoutMs = 1000): ToolSession {
  return new ToolSession(tools, { defaultTimeoutMs, scope });
}

// Half of a surrogate pair: what a cut by UTF-16 units leaves of an emoji.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(new Error("stopped"));
    });
  });

const search = tool({
  description: "Searches.",
  input: z.object({ query: z.string(), limit: z.number().int().positive().optional() }),
  run: async ({ query, limit }) => ({ query, limit: limit ?? 10 }),
});

describe("tool()", () => {
  it("makes a frozen tool with an empty input object by default", () => {
    const t = tool({ description: "Now.", run: () => 1 });
    expect(isTool(t)).toBe(true);
    expect(Object.keys(t.input.shape)).toEqual([]);
    expect(Object.isFrozen(t)).toBe(true);
    expect(isTool({ description: "x", run: () => 1 })).toBe(false);
  });

  const one = (): number => 1;
  it.each<[unknown, string]>([
    [{ description: "", run: one }, "description"],
    [{ description: "x" }, "run"],
    [{ description: "x", run: one, input: z.string() }, "z.object"],
    [{ description: "x", run: one, timeoutMs: -1 }, "timeoutMs"],
    [{ description: "x", run: one, maxCalls: 1.5 }, "maxCalls"],
  ])("rejects an invalid definition %#", (def, word) => {
    expect(() => tool(def as never)).toThrow(AgentDefinitionError);
    expect(() => tool(def as never)).toThrow(word);
  });
});

describe("ToolSession", () => {
  // What a tool throws is the model's only clue: an object with a message (as some API clients
  // throw), a status number, an Error with no message or an AggregateError said "the tool failed"
  // or nothing at all ("tool/t failed: ").
  it.each<[string, unknown, string]>([
    ["an object with a message", { message: "rate limited", status: 429 }, "rate limited"],
    ["a number", 404, "404"],
    ["an Error without a message", new TypeError(""), "TypeError"],
    ["an AggregateError without a message", new AggregateError([new Error("mirror a down"), "mirror b down"], ""), "AggregateError: mirror a down; mirror b down"],
    ["a string", "plain", "plain"],
    ["null", null, "the tool failed"],
    ["a symbol", Symbol("x"), "the tool failed"],
    ["an object without a message", { code: 7 }, "the tool failed"],
  ])("says what a tool that throws %s failed with", async (_what, thrown, said) => {
    const t = tool({ description: "Fails.", run: () => { throw thrown; } });
    const r = await evaluate("(tool/t)", { tools: session({ t }).specs(false) });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toBe(`tool/t failed: ${said}`);
  });

  it("passes validated arguments, by map, keywords or position (the input's key order)", async () => {
    const specs = session({ search }).specs(false);
    expect(specs.search.params).toEqual(["query", "limit"]);
    const r = await evaluate('[(tool/search {:query "a"}) (tool/search :query "b" :limit 2) (tool/search "c" 3)]', { tools: specs });
    expect(r.ok && r.value).toEqual([
      { query: "a", limit: 10 },
      { query: "b", limit: 2 },
      { query: "c", limit: 3 },
    ]);
  });

  it("rejects invalid arguments with an error naming the field", async () => {
    const specs = session({ search }).specs(false);
    const wrongType = await evaluate("(tool/search {:query 5})", { tools: specs });
    expect(wrongType.ok).toBe(false);
    if (wrongType.ok) return;
    expect(wrongType.error.kind).toBe("tool_error");
    expect(wrongType.error.message).toContain("tool/search failed: invalid arguments: :query: expected string, received number");

    const missing = await evaluate("(tool/search {:limit 3})", { tools: specs });
    expect(!missing.ok && missing.error.message).toContain("missing :query (expected string)");

    // The host's own message for a missing argument is what the model needs; it was dropped for "expected string".
    const told = tool({ description: "x", input: z.object({ q: z.string({ error: "q is the search text, e.g. \"red shoes\"" }), n: z.number({ error: (i) => (i.input === undefined ? "n is required: how many results" : undefined) }) }), run: () => 1 });
    const own = await evaluate("(tool/s {})", { tools: session({ s: told }).specs(false) });
    expect(!own.ok && own.error.message).toBe('tool/s failed: invalid arguments: missing :q (q is the search text, e.g. "red shoes"); missing :n (n is required: how many results)');
    const nested = tool({ description: "x", input: z.object({ filter: z.object({ tags: z.array(z.string()) }) }), run: () => 1 });
    const deep = await evaluate('(tool/f {:filter {:tags ["a" 2]}})', { tools: session({ f: nested }).specs(false) });
    expect(!deep.ok && deep.error.message).toContain("[:filter :tags 1]: expected string");
  });

  // The argument map is built as a plain object: zod read an optional `constructor` left out
  // as Object.prototype's function, so every call without it failed.
  it.each([
    ["a map", '(tool/f {:q "a"})'],
    ["keyword arguments", '(tool/f :q "a")'],
    ["positional arguments", '(tool/f "a")'],
  ])("leaves out an optional argument named like an Object.prototype member, given %s", async (_how, program) => {
    const f = tool({ description: "x", input: z.object({ q: z.string(), constructor: z.string().optional(), toString: z.number().optional() }), run: (args) => Object.keys(args).join(",") });
    const r = await evaluate(program, { tools: session({ f }).specs(false) });
    expect(r.ok && r.value).toBe("q");
  });

  it("leaves out an optional key named like an Object.prototype member in a nested argument map, and gives the tool plain objects", async () => {
    const f = tool({
      description: "x",
      input: z.object({ opts: z.object({ valueOf: z.number().optional(), n: z.number() }), rows: z.array(z.object({ constructor: z.string().optional() })), raw: z.any() }),
      run: (args) => [args.opts.n, args.rows.length, Object.getPrototypeOf(args.raw) === Object.prototype && Object.getPrototypeOf(args.raw.x) === Object.prototype],
    });
    const r = await evaluate("(tool/f {:opts {:n 1} :rows [{}] :raw {:x {:y 1}}})", { tools: session({ f }).specs(false) });
    expect(r.ok ? [...(r.value as Iterable<unknown>)] : r.error.message).toEqual([1, 1, true]);
  });

  it("reads without prototypes where such a key hides under a lazy schema, a union or an enum", async () => {
    type Node = { toString?: string; n: number; kids?: Node[] };
    const node: z.ZodType<Node> = z.lazy(() => z.object({ toString: z.string().optional(), n: z.number(), kids: z.array(node).optional() }));
    const f = tool({
      description: "x",
      input: z.object({ tree: node, pick: z.union([z.object({ valueOf: z.number().optional(), a: z.number() }), z.string()]), by: z.partialRecord(z.enum(["constructor", "name"]), z.string()) }),
      run: (args) => JSON.stringify([args.tree.kids?.[0]?.n, args.pick, args.by]),
    });
    const r = await evaluate('(tool/f {:tree {:n 1 :kids [{:n 2}]} :pick {:a 3} :by {:name "x"}})', { tools: session({ f }).specs(false) });
    expect(r.ok ? r.value : r.error.message).toBe('[2,{"a":3},{"name":"x"}]');
  });

  // Every call's arguments were copied without prototypes and the prototypes put back after,
  // whatever the schema: 1,000 rows cost 1,002 copies made with Object.create(null) (100,000 rows:
  // 0.9 s against zod's own 42 ms). Only a schema naming such a key needs them (the tests above).
  it("makes no prototype-less copies of arguments when the schema names no such key", async () => {
    const f = tool({
      description: "x",
      input: z.object({ rows: z.array(z.object({ id: z.number() })), meta: z.record(z.string(), z.unknown()) }),
      run: (args) => args.rows.length,
    });
    const create = vi.spyOn(Object, "create");
    try {
      const r = await evaluate("(tool/f {:rows (mapv (fn [i] {:id i}) (range 1000)) :meta {:a 1}})", { tools: session({ f }).specs(false) });
      expect(r.ok ? r.value : r.error.message).toBe(1000);
      expect(create.mock.calls.filter(([proto]) => proto === null)).toHaveLength(0);
    } finally {
      create.mockRestore();
    }
  });

  it("replays, on resume, a saved call whose nested argument map left out such a key", async () => {
    const { saveRun } = await import("../../src/agent/resume.js");
    const { SubAgent } = await import("../../src/agent/subagent.js");
    const { scriptedLlm } = await import("../../src/llm/scripted.js");
    const f = tool({ description: "x", input: z.object({ opts: z.object({ valueOf: z.number().optional(), n: z.number() }) }), run: ({ opts }) => opts.n });
    const wipe = tool({ description: "Deletes.", needsApproval: true, run: () => "wiped" });
    const agent = SubAgent.create({ prompt: "Go.", tools: { f, wipe }, maxTurns: 3 });
    const fence = (src: string): string => "```clojure\n" + src + "\n```";
    const step = await SubAgent.run(agent, { llm: scriptedLlm([fence("(def a (tool/f {:opts {:n 1}}))"), fence("(return [a (tool/wipe)])")]), isolation: "none" });
    const done = await SubAgent.resume(agent, saveRun(step, agent), { llm: scriptedLlm([]), isolation: "none", approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.value).toEqual([1, "wiped"]);
  });

  // A schema that passes a value through gives zod's input back as its output: the tool must still
  // get its own copy, or what it does to its arguments changes the call's record.
  const PASS_THROUGH: ReadonlyArray<[string, z.ZodObject]> = [
    ["z.any() fields", z.object({ rows: z.any(), meta: z.any() })],
    ["z.unknown() fields", z.object({ rows: z.unknown(), meta: z.unknown().optional() })],
    ["z.custom() rows", z.object({ rows: z.custom<unknown>(() => true), meta: z.object({ k: z.number() }).optional() })],
    ["a loose object", z.looseObject({ rows: z.array(z.object({ id: z.number() })) })],
    ["a catch-all object", z.object({ rows: z.array(z.record(z.string(), z.number())) }).catchall(z.unknown())],
    ["records of unknowns", z.object({ rows: z.array(z.record(z.string(), z.unknown())), meta: z.record(z.string(), z.unknown()) })],
    ["a transform", z.object({ rows: z.array(z.looseObject({})).transform((rows) => rows), meta: z.any() })],
  ];
  for (const [label, input] of PASS_THROUGH) {
    it(`gives a tool with ${label} its own copy of its arguments: what it does to them leaves the call's record alone`, async () => {
      const meddle = tool({
        description: "Changes what it is given.",
        input,
        run: (args) => {
          const a = args as { rows: Array<Record<string, unknown>>; extra?: number; meta?: unknown };
          a.rows.push({ id: 99 });
          a.rows[0].id = -1;
          a.extra = 1;
          if (typeof a.meta === "object" && a.meta !== null) (a.meta as Record<string, unknown>).k = -1;
          delete a.meta;
          return a.rows.length;
        },
      });
      const r = await evaluate("(tool/meddle {:rows [{:id 1} {:id 2}] :meta {:k 1}})", { tools: session({ meddle }).specs(false) });
      expect(r.ok && r.value).toBe(3);
      // Before: { rows: [{ id: -1 }, { id: 2 }, { id: 99 }], extra: 1 }.
      expect(r.toolCalls[0].args).toEqual({ rows: [{ id: 1 }, { id: 2 }], meta: { k: 1 } });
    });
  }

  // The copy a pass-through schema gets must keep an own `__proto__` key (a JSON key) a key: assigned
  // to a plain object it sets the copy's prototype instead, and the key is gone.
  it("keeps an own __proto__ key of arguments a schema passes through, as a key", async () => {
    let got: unknown;
    const keep = tool({ description: "Keeps.", input: z.object({ v: z.any() }), run: ({ v }) => ((got = v), "ok") });
    const r = await evaluate('(tool/keep {:v {"__proto__" {:polluted true} "k" 1}})', { tools: session({ keep }).specs(false) });
    expect(r.ok && r.value).toBe("ok");
    expect(Object.keys(got as object)).toEqual(["__proto__", "k"]);
    expect((got as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it("records calls with plain-data arguments and results, errors and durations", async () => {
    const boom = tool({ description: "Fails.", run: () => Promise.reject(new Error("backend down")) });
    const r = await evaluate('(def a (tool/search "x")) (try (tool/boom) (catch e (:message e)))', { tools: session({ search, boom }).specs(false) });
    expect(r.ok && r.value).toBe("tool/boom failed: backend down");
    expect(r.toolCalls.map((c) => [c.name, c.args, c.result, c.error])).toEqual([
      ["search", { query: "x" }, { query: "x", limit: 10 }, undefined],
      ["boom", {}, undefined, "backend down"],
    ]);
    expect(r.toolCalls.every((c) => c.durationMs >= 0)).toBe(true);
  });

  it("converts results to plain data: Dates become ISO strings, Maps become maps; a function is refused at its path", async () => {
    const odd = tool({ description: "Odd data.", run: () => ({ when: new Date(Date.UTC(2024, 0, 2)), m: new Map([["k", 1]]) }) });
    const r = await evaluate("(tool/odd)", { tools: session({ odd }).specs(false) });
    expect(r.ok && r.value).toEqual({ when: "2024-01-02T00:00:00.000Z", m: { k: 1 } });
    const fn = tool({ description: "Leaks a function.", run: () => ({ rows: [{ id: 1, f: () => 1 }] }) });
    const bad = await evaluate("(tool/fn)", { tools: session({ fn }).specs(false) });
    expect(!bad.ok && bad.error.message).toContain("the result of tool/fn.rows[0].f is a function, which cannot cross into the program");
  });

  // The tools below never answer: that the call ends at all is the check, not how soon.
  it("times a slow call out, and aborts the tool's own signal", async () => {
    let aborted = false;
    const slow = tool({
      description: "Slow.",
      timeoutMs: 30,
      run: async (_args, signal) => {
        signal.addEventListener("abort", () => (aborted = true));
        await new Promise(() => undefined);
      },
    });
    const r = await evaluate("(tool/slow)", { tools: session({ slow }).specs(false) });
    expect(!r.ok && r.error.kind).toBe("tool_timeout");
    expect(!r.ok && r.error.message).toBe("tool/slow gave no answer within 30 ms; the call was abandoned and anything it returns later is ignored");
    expect(aborted).toBe(true);
  });

  it("uses the session's default timeout for tools without one", async () => {
    const slow = tool({ description: "Slow.", run: (_a, signal) => sleep(5000, signal) });
    const r = await evaluate("(tool/slow)", { tools: session({ slow }, 20).specs(false) });
    expect(!r.ok && r.error.message).toContain("no answer within 20 ms");
  });

  it("caps calls per session, across evaluations, without counting rejected arguments", async () => {
    const capped = tool({ description: "Capped.", maxCalls: 2, input: z.object({ n: z.number() }), run: ({ n }) => n });
    const s = session({ capped });
    const bad = await evaluate('(tool/capped "x")', { tools: s.specs(false) });
    expect(bad.ok).toBe(false);
    expect(s.callCount("capped")).toBe(0);
    const first = await evaluate("(tool/capped 1)", { tools: s.specs(false) });
    expect(first.ok && first.value).toBe(1);
    const second = await evaluate("[(tool/capped 2) (try (tool/capped 3) (catch e (:message e)))]", { tools: s.specs(false) });
    expect(second.ok && second.value).toEqual([2, "tool/capped failed: call limit reached: tool/capped may be called at most 2 times per run; use the results you already have"]);
    expect(s.callCount("capped")).toBe(2);
  });

  it("caps calls made at once (pmap) as it caps calls made one after another", async () => {
    let ran = 0;
    const capped = tool({ description: "Capped.", maxCalls: 2, input: z.object({ n: z.number() }), run: ({ n }) => (ran++, n) });
    const s = session({ capped });
    const r = await evaluate("(pmap (fn [n] (try (tool/capped n) (catch e :refused))) [1 2 3 4 5])", { tools: s.specs(false) });
    expect(r.ok && r.value).toEqual([1, 2, "refused", "refused", "refused"]);
    expect(ran).toBe(2);
  });

  it("checks results against the declared output", async () => {
    // A JavaScript host (or a cast) can still return the wrong shape: the runtime check catches it.
    // @ts-expect-error the compiler rejects a run whose return does not match `output`
    const liar = tool({ description: "Lies.", output: z.array(z.object({ id: z.number() })), run: () => [{ id: "7" }] });
    const r = await evaluate("(tool/liar)", { tools: session({ liar }).specs(false) });
    expect(!r.ok && r.error.message).toContain("does not match its declared output: [0 :id]: expected number, received string");
  });

  it("withdraws tools: the program still compiles, every call fails saying why", async () => {
    const s = session({ search });
    const r = await evaluate('(tool/search "x")', { tools: s.specs(true) });
    expect(!r.ok && r.error.message).toContain("tools are withdrawn on the final turn");
    expect(s.callCount("search")).toBe(0);
  });

  it("runs independent calls in pmap concurrently", async () => {
    let active = 0;
    let peak = 0;
    const wait = tool({
      description: "Waits.",
      input: z.object({ ms: z.number() }),
      run: async ({ ms }) => {
        active++;
        peak = Math.max(peak, active);
        await sleep(ms);
        active--;
        return ms;
      },
    });
    const r = await evaluate("(pmap (fn [ms] (tool/wait ms)) [60 60 60 60])", { tools: session({ wait }).specs(false) });
    expect(r.ok && r.value).toEqual([60, 60, 60, 60]);
    // Concurrency is counted, not timed: all four waits were in flight at once.
    expect(peak).toBe(4);
  });

  it("stops waiting at once when the run is aborted, even for a tool that ignores its signal", async () => {
    const stubborn = tool({ description: "Ignores signals.", timeoutMs: Infinity, run: () => new Promise(() => undefined) });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 30);
    const r = await evaluate("(tool/stubborn)", { tools: session({ stubborn }).specs(false), signal: ac.signal });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error.kind).toBe("aborted");
  });

  it("does not run a call whose run was aborted while its arguments were being checked", async () => {
    const ac = new AbortController();
    const ran: string[] = [];
    // The refinement stands in for any await before the call runs (an async schema, an approval check).
    const to = z.string().refine(async () => (ac.abort(), true));
    const send = tool({ description: "Sends.", input: z.object({ to }), timeoutMs: Infinity, run: ({ to }) => (ran.push(to), "sent") });
    const call = session({ send }).specs(false).send.run({ to: "a" }, ac.signal);
    await expect(call).rejects.toThrow("aborted");
    expect(ran).toEqual([]);
  });

  it("bounds an argument check that never settles by the call's timeout", async () => {
    const ran: string[] = [];
    const to = z.string().refine(() => new Promise<boolean>(() => undefined));
    const send = tool({ description: "Sends.", input: z.object({ to }), timeoutMs: 20, run: ({ to }) => (ran.push(to), "sent") });
    const r = await evaluate('(try (tool/send {:to "a"}) (catch e (:kind e)))', { tools: session({ send }).specs(false) });
    expect(r.ok && r.value).toBe("tool_timeout");
    expect(ran).toEqual([]);
  });

  it("bounds a result check that never settles by the call's timeout", async () => {
    const output = z.string().refine(() => new Promise<boolean>(() => undefined));
    const lookup = tool({ description: "Looks up.", output, timeoutMs: 20, run: () => "x" });
    const r = await evaluate("(try (tool/lookup) (catch e (:kind e)))", { tools: session({ lookup }).specs(false) });
    expect(r.ok && r.value).toBe("tool_timeout");
  });

  // The timeout is the call's: each of its steps got the whole of it anew, so a 200 ms call whose
  // argument check, run and result check took 150 ms each answered after 450 ms.
  it("bounds a call's checks and run together by its one timeout", async () => {
    const ran: string[] = [];
    const slow = <T,>(v: T): Promise<T> => new Promise((resolve) => setTimeout(() => resolve(v), 150));
    const to = z.string().refine(() => slow(true));
    const output = z.string().refine(() => slow(true));
    const send = tool({ description: "Sends.", input: z.object({ to }), output, timeoutMs: 200, run: ({ to }) => (ran.push(to), slow("sent")) });
    const r = await evaluate('(try (tool/send {:to "a"}) (catch e (:kind e)))', { tools: session({ send }).specs(false), limits: { timeoutMs: 60_000 } });
    expect(r.ok && r.value).toBe("tool_timeout");
  });

  it("serves a wide fan-out with one abort listener on the run's signal, removed when the calls settle", async () => {
    const gate: Array<() => void> = [];
    const held = tool({ description: "Waits for the gate.", input: z.object({ i: z.number() }), run: ({ i }) => new Promise((resolve) => gate.push(() => resolve(i))) });
    const spec = session({ held }).specs(false).held;
    const ac = new AbortController();
    const calls = Array.from({ length: 30 }, (_, i) => spec.run({ i }, ac.signal));
    await new Promise((r) => setTimeout(r, 0));
    expect(gate).toHaveLength(30);
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(1);
    for (const open of gate) open();
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(getEventListeners(ac.signal, "abort")).toHaveLength(0);
  });

  it("aborts every call of a wide fan-out, without a listener-leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const stubborn = tool({ description: "Ignores signals.", input: z.object({ i: z.number() }), timeoutMs: Infinity, run: () => new Promise(() => undefined) });
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 30);
        const r = await evaluate("(pmap (fn [i] (tool/stubborn i)) (range 25))", { tools: session({ stubborn }).specs(false), signal: ac.signal });
        expect(!r.ok && r.error.kind).toBe("aborted");
      const quick = tool({ description: "Quick.", input: z.object({ i: z.number() }), run: async ({ i }) => i * 2 });
      const ok = await evaluate("(pmap (fn [i] (tool/quick i)) (range 25))", { tools: session({ quick }).specs(false), signal: new AbortController().signal });
      expect(ok.ok && (ok.value as number[]).length).toBe(25);
      await new Promise((r) => setTimeout(r, 10));
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("cuts very long error messages from tools", async () => {
    const verbose = tool({ description: "Verbose.", run: () => Promise.reject(new Error("x".repeat(5000))) });
    const r = await evaluate("(tool/verbose)", { tools: session({ verbose }).specs(false) });
    // Cut once, by the interpreter, after it hides what the message quotes of hidden context (1,000 characters).
    expect(!r.ok && r.error.message.length).toBeLessThan(1100);
  });

  // fetch refuses a URL with credentials (a search server behind basic auth) with a TypeError that
  // quotes the URL whole: the tool's author never wrote the password into a message.
  it("shows no password of a URL a tool's error quotes, in the program's error and the call's record", async () => {
    const logs = tool({ description: "Searches the logs.", input: z.object({ q: z.string() }), run: async ({ q }) => (await fetch(`http://elastic:s3cr3t-es-pw@127.0.0.1:9/logs/_search?q=${q}`)).json() });
    const tools = session({ logs });
    const r = await evaluate('(tool/logs {:q "error"})', { tools: tools.specs(false) });
    expect(!r.ok && r.error.message).toContain("http://[redacted]@127.0.0.1:9/logs/_search?q=error");
    expect(JSON.stringify([r.ok ? null : r.error, r.toolCalls])).not.toMatch(/elastic|s3cr3t/);
  });

  // Only a thrown error was cut: the argument and result checks' messages went whole to the model, 229 KB for a
  // strict input given 20,000 extra keys, the value's length for a custom message quoting it.
  it.each([
    ["arguments to a strict input", tool({ description: "Strict.", input: z.strictObject({ a: z.number() }), run: () => 1 }), '(tool/t (merge {:a 1} (zipmap (map #(keyword (str "key-" %)) (range 20000)) (range 20000))))'],
    ["an argument a custom message quotes", tool({ description: "Picky.", input: z.object({ s: z.string().refine(() => false, { error: (i) => `bad: ${String(i.input)}` }) }), run: () => 1 }), '(tool/t (apply str (repeat 100000 "q")))'],
    ["a result a custom message quotes", tool({ description: "Wordy.", output: z.string().refine(() => false, { error: (i) => `bad: ${String(i.input)}` }), run: () => "r".repeat(100_000) }), "(tool/t)"],
  ])("cuts the check's message for %s as it cuts a thrown error", async (_what, t, program) => {
    const r = await evaluate(program, { tools: session({ t }).specs(false), limits: { timeoutMs: 60_000 } });
    expect(!r.ok && r.error.message.length).toBeLessThan(1100);
  });

  it("never cuts an emoji in half where it cuts a long error (a lone surrogate is a body Anthropic's API refuses)", async () => {
    for (const pad of [0, 1]) {
      const loud = tool({ description: "Loud.", run: () => Promise.reject(new Error("x".repeat(pad) + "🚀".repeat(400))) });
      const r = await evaluate("(tool/loud)", { tools: session({ loud }).specs(false) });
      expect(!r.ok && LONE_SURROGATE.test(r.error.message), `pad ${pad}`).toBe(false);
    }
  });
});

describe("tool results and transforms", () => {
  it("passes the parsed output into the program", async () => {
    const t = tool({ description: "Lengths.", output: z.array(z.string()).transform((xs) => xs.length), run: () => ["a", "b"] });
    const r = await evaluate("(tool/t)", { tools: session({ t }).specs(false) });
    expect(r.ok && r.value).toBe(2);
  });

  it("checks arguments and results against schemas that refine asynchronously", async () => {
    const known = async (id: string): Promise<boolean> => id === "acme";
    const t = tool({
      description: "Looks a customer up.",
      input: z.object({ id: z.string().refine(known, "unknown id") }),
      output: z.object({ id: z.string() }).refine(async (o) => o.id !== "", "empty id"),
      run: ({ id }) => ({ id }),
    });
    const ok = await evaluate('(tool/t "acme")', { tools: session({ t }).specs(false) });
    expect(ok.ok ? ok.value : ok.error.message).toEqual({ id: "acme" });
    const bad = await evaluate('(tool/t "nobody")', { tools: session({ t }).specs(false) });
    expect(bad.ok ? "" : bad.error.message).toMatch(/invalid arguments: .*unknown id/);
  });

  it("can skip checking results that are already valid", async () => {
    // @ts-expect-error the compiler rejects a run whose return does not match `output`
    const t = tool({ description: "Trusted.", output: z.number(), checkOutput: false, run: () => "not a number" });
    const r = await evaluate("(tool/t)", { tools: session({ t }).specs(false) });
    expect(r.ok && r.value).toBe("not a number");
  });
});

// A schema that passes values through (z.any, a loose object's extra keys, a record of unknown)
// gave the tool the very arrays and maps the call's record keeps: a tool that changed its
// arguments changed what the trace, the saved run and the next prompt said the program asked
// (a z.any argument, and a tool pushing 99 and adding a key: `tool/f {"v":{"items":[1,2,99],"extra":1}}`
// for a call made with {:v {:items [1 2]}}).
describe("a tool that changes its arguments", () => {
  // Changes every array and map it reaches (each one pushed to, or given a key and robbed of its
  // first), innermost first; says how many it changed.
  function vandalize(x: unknown): number {
    if (typeof x !== "object" || x === null) return 0;
    let n = 1;
    for (const v of Object.values(x)) n += vandalize(v);
    if (Array.isArray(x)) x.push("x");
    else {
      const o = x as Record<string, unknown>;
      const [first] = Object.keys(o);
      if (first !== undefined) delete o[first];
      o.extra = 1;
    }
    return n;
  }

  const fence = (src: string): string => "```clojure\n" + src + "\n```";
  const v = (schema: z.ZodType): z.ZodObject => z.object({ v: schema });
  const MAP = "{:v {:items [1 2] :more {:a 1}}}";
  const MAP_JS = { v: { items: [1, 2], more: { a: 1 } } };
  const ROWS_VALUE = "{:v [{:a 1} [1 2]]}";
  const ROWS_JS = { v: [{ a: 1 }, [1, 2]] };
  const shape = z.object({ items: z.array(z.number()) });
  it.each<[string, z.ZodObject, string, unknown]>([
    ["z.any", v(z.any()), MAP, MAP_JS],
    ["z.unknown", v(z.unknown()), MAP, MAP_JS],
    ["z.custom", v(z.custom<object>()), MAP, MAP_JS],
    ["a loose object", v(z.looseObject({ items: z.array(z.number()) })), MAP, MAP_JS],
    ["a passthrough object", v(shape.passthrough()), MAP, MAP_JS],
    ["a catchall object", v(z.object({}).catchall(z.unknown())), MAP, MAP_JS],
    ["a loose argument map", z.looseObject({}), MAP, MAP_JS],
    ["a record of unknown", v(z.record(z.string(), z.unknown())), MAP, MAP_JS],
    ["an array of unknown", v(z.array(z.unknown())), ROWS_VALUE, ROWS_JS],
    ["a union with z.any", v(z.union([z.string(), z.any()])), MAP, MAP_JS],
    ["an intersection with a record", v(z.intersection(shape, z.record(z.string(), z.unknown()))), MAP, MAP_JS],
    ["a lazy z.unknown", v(z.lazy(() => z.unknown())), MAP, MAP_JS],
    ["a transform", v(z.unknown().transform((x) => x)), MAP, MAP_JS],
    ["a preprocess", v(z.preprocess((x) => x, z.record(z.string(), z.unknown()))), MAP, MAP_JS],
    ["z.any beside a key named like an Object.prototype member", z.object({ constructor: z.string().optional(), v: z.any() }), MAP, MAP_JS],
  ])("leaves the call's record as the program asked, given %s", async (_kind, input, args, asked) => {
    let changed = 0;
    const f = tool({ description: "Changes its arguments.", input, run: (a) => (changed = vandalize(a)) });
    const agent = SubAgent.create({ prompt: "Go.", tools: { f }, maxTurns: 3 });
    // The program fails after the call, so the next prompt lists the call with its arguments.
    const llm = scriptedLlm([fence(`(def a (tool/f ${args})) (/ 1 (count []))`), fence("(return 1)")]);
    const step = await SubAgent.run(agent, { llm, isolation: "none" });
    expect(changed).toBeGreaterThan(2);
    expect(step.trace.turns[0].toolCalls[0].args).toEqual(asked);
    expect(llm.requests[1].messages.at(-1)?.content).toContain(`tool/f ${JSON.stringify(asked)}\n`);
  });

  it("gives the tool a key named __proto__ as the program's own key, in its copy too", async () => {
    const f = tool({ description: "x", input: v(z.any()), run: ({ v: got }) => [Object.hasOwn(got as object, "__proto__"), Object.getPrototypeOf(got) === Object.prototype, JSON.stringify(got)] });
    const r = await evaluate('(tool/f {:v {"__proto__" {:a 1} :b 2}})', { tools: session({ f }).specs(false) });
    expect(r.ok ? [...(r.value as Iterable<unknown>)] : r.error.message).toEqual([true, true, '{"__proto__":{"a":1},"b":2}']);
  });

  // Checked by a schema that passes values through, the parsed data is a copy: a host's edit
  // whose parts are shared (each level two references to the next) is copied once per part,
  // not once per path to it (2^40 here).
  it("copies a value whose parts are shared once per part", async () => {
    let shared: unknown = { leaf: true };
    for (let i = 0; i < 40; i++) shared = [shared, shared];
    const parsed = await parseOwn(v(z.any()), { v: shared });
    const got = parsed.success ? (parsed.data.v as unknown[]) : [];
    // Compared by identity only: vitest's toBe compares two different objects deeply for its message.
    expect([got === shared, got[0] === got[1], got[0] === (shared as unknown[])[0]]).toEqual([false, true, false]);
  });

  // A whole value a schema passed (a union's z.any) came back as the value itself when the
  // schema also named such a key: an agent's returned value checked so.
  it.each<[string, z.ZodType, unknown]>([
    ["z.any", z.any(), { a: [{ b: 1 }] }],
    ["a union naming constructor, with z.any", z.union([z.object({ constructor: z.string() }), z.any()]), { a: [{ b: 1 }] }],
    ["a loose object naming toString", z.looseObject({ toString: z.string().optional() }), { a: [{ b: 1 }] }],
    ["an array of unknown", z.array(z.unknown()), [{ a: 1 }, [2]]],
  ])("hands back, checked by %s, plain data none of which is the value's", async (_kind, schema, value) => {
    const containers = (x: unknown, out: Set<unknown>): Set<unknown> => {
      if (typeof x === "object" && x !== null) {
        out.add(x);
        for (const y of Object.values(x)) containers(y, out);
      }
      return out;
    };
    const parsed = await parseOwn(schema, value);
    expect(parsed.success && parsed.data).toEqual(value);
    const theirs = containers(value, new Set());
    expect([...containers(parsed.success ? parsed.data : null, new Set())].filter((x) => theirs.has(x))).toEqual([]);
  });

  it("leaves the record of a call the host edited as the host gave it", async () => {
    const f = tool({ description: "Changes its arguments.", input: v(z.any()), needsApproval: true, run: (a) => vandalize(a) });
    const agent = SubAgent.create({ prompt: "Go.", tools: { f }, maxTurns: 4 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([fence("(def r (tool/f {:v {:items [1]}}))")]), isolation: "none" });
    const edit = { v: { items: [5], more: { a: 1 } } };
    const llm = scriptedLlm([fence("(return r)")]);
    const done = await SubAgent.resume(agent, saveRun(step, agent), { llm, isolation: "none", approvals: { "turn-1-call-1": { approved: true, args: edit } } });
    expect(done.value).toBe(4);
    expect(edit).toEqual({ v: { items: [5], more: { a: 1 } } });
    expect(done.trace.turns[0].toolCalls[0]).toMatchObject({ args: { v: { items: [5], more: { a: 1 } } }, asked: { v: { items: [1] } } });
    expect(llm.requests[0].messages.at(-1)?.content).toContain('tool/f {"v":{"items":[5],"more":{"a":1}}}');
  });
});
