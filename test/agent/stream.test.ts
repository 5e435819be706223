// SubAgent.stream and onEvent: the live events of a run, their order, the same trace as an
// unstreamed run, and hidden context never appearing in an event.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent, type AgentEvent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { runToJson } from "../../src/agent/saved-run.js";
import { scriptedLlm, type ScriptedReply } from "../../src/llm/scripted.js";
import type { Llm } from "../../src/llm/types.js";
import type { Isolation } from "../../src/lisp/isolate/options.js";

const code = (body: string): string => "Let me look.\n```clojure\n" + body + "\n```";

const lookup = tool({
  description: "The price of a product.",
  input: z.object({ product: z.string() }),
  run: ({ product }) => {
    if (product === "ghost") throw new Error(`no product ${product}`);
    return { product, price: product.length * 10 };
  },
});

const REPLIES: ScriptedReply[] = [
  code('(def p (tool/lookup {:product "lamp"}))\n(println "lamp costs" (:price p))\n(println "done looking")'),
  code('(try (tool/lookup {:product "ghost"}) (catch e (println "missing")))\n(return {:price (:price p)})'),
];

const agent = (isolation: Isolation) => SubAgent.create({ prompt: "Find the lamp's price.", tools: { lookup }, maxTurns: 3, isolation });

/** A trace without its wall-clock figures, which differ from run to run. */
function timeless(json: string): unknown {
  return JSON.parse(json, (k, v: unknown) => (k === "llmMs" || k === "execMs" || k === "durationMs" ? 0 : v));
}

async function collect(stream: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of stream) out.push(e);
  return out;
}

describe("SubAgent.stream", () => {
  for (const isolation of ["none", "worker"] as const) {
    it(`yields the run's events in order, and ends with the same trace as run (isolation ${isolation})`, async () => {
      const stream = SubAgent.stream(agent(isolation), { llm: scriptedLlm(REPLIES) });
      const events = await collect(stream);
      const step = await stream.step;
      expect(step.ok).toBe(true);
      expect(step.value).toEqual({ price: 40 });

      // The shape of the run, with runs of text deltas folded into one entry.
      const kinds = events.map((e) => e.type).filter((t, i, all) => t !== "text-delta" || all[i - 1] !== "text-delta");
      expect(kinds).toEqual([
        "turn-start", "text-delta", "program", "tool-call", "tool-result", "print", "print", "turn-finish",
        "turn-start", "text-delta", "program", "tool-call", "tool-result", "print", "turn-finish",
        "run-finish",
      ]);
      // The deltas of a turn are the reply, piece by piece.
      const turn1 = events.filter((e): e is Extract<AgentEvent, { type: "text-delta" }> => e.type === "text-delta" && e.turn === 1);
      expect(turn1.length).toBeGreaterThan(3);
      expect(turn1.map((e) => e.delta).join("")).toBe(REPLIES[0]);
      const program = events.find((e) => e.type === "program" && e.turn === 1);
      expect(program).toMatchObject({ program: expect.stringContaining('(tool/lookup {:product "lamp"})') });
      const calls = events.filter((e) => e.type === "tool-call" || e.type === "tool-result");
      expect(calls[0]).toMatchObject({ type: "tool-call", turn: 1, name: "lookup", args: { product: "lamp" } });
      expect(calls[1]).toMatchObject({ type: "tool-result", turn: 1, id: (calls[0] as { id: number }).id, name: "lookup", durationMs: expect.any(Number) });
      expect(calls[1]).not.toHaveProperty("error");
      expect(calls[3]).toMatchObject({ type: "tool-result", turn: 2, name: "lookup", args: { product: "ghost" }, error: "no product ghost" });
      expect(events.filter((e) => e.type === "print").map((e) => (e as { line: string }).line)).toEqual(["lamp costs 40", "done looking", "missing"]);
      const finish = events.at(-1) as Extract<AgentEvent, { type: "run-finish" }>;
      expect(finish.step).toBe(step);
      const turnEnd = events.find((e) => e.type === "turn-finish") as Extract<AgentEvent, { type: "turn-finish" }>;
      expect(turnEnd.turn.status).toBe("ok");
      expect(turnEnd.totals.llmRequests).toBe(1);

      const plain = await SubAgent.run(agent(isolation), { llm: scriptedLlm(REPLIES) });
      expect(timeless(runToJson(step))).toEqual(timeless(runToJson(plain)));
    });
  }

  it("gives a reply in one piece when the client does not stream", async () => {
    const reply = code("(return 1)");
    const plain: Llm = { name: "plain", complete: async () => ({ content: reply }) };
    const events = await collect(SubAgent.stream(SubAgent.create({ prompt: "One." }), { llm: plain, isolation: "none" }));
    expect(events.filter((e) => e.type === "text-delta")).toEqual([{ type: "text-delta", turn: 1, delta: reply, attempt: 1 }]);
  });

  it("tells onEvent the same events, and a listener that throws does not disturb the run", async () => {
    const told: string[] = [];
    const step = await SubAgent.run(agent("none"), {
      llm: scriptedLlm(REPLIES),
      onEvent: (e) => {
        told.push(e.type);
        throw new Error("listener bug");
      },
    });
    expect(step.ok).toBe(true);
    expect(step.turns.map((t) => t.prints)).toEqual([["lamp costs 40", "done looking"], ["missing"]]);
    expect(told.filter((t) => t === "tool-call")).toHaveLength(2);
    expect(told.at(-1)).toBe("run-finish");
  });

  it("ignores the rejection of an async onEvent passed to stream, which unheard would end the host's process", async () => {
    const unhandled: unknown[] = [];
    const note = (e: unknown): void => void unhandled.push(e);
    process.on("unhandledRejection", note);
    try {
      const stream = SubAgent.stream(agent("none"), {
        llm: scriptedLlm(REPLIES),
        onEvent: async () => {
          throw new Error("log sink down");
        },
      });
      const types: string[] = [];
      for await (const e of stream) types.push(e.type);
      expect([(await stream.step).ok, types.at(-1)]).toEqual([true, "run-finish"]);
      // Node reports an unhandled rejection once the microtasks have run: before the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", note);
    }
  });

  it("ends the stream when the run fails, with the failure in step", async () => {
    const stream = SubAgent.stream(agent("none"), { llm: scriptedLlm([]) });
    const events = await collect(stream);
    const step = await stream.step;
    expect(step.ok).toBe(false);
    expect(events.map((e) => e.type)).toEqual(["turn-start", "run-finish"]);
  });

  it("ends the stream when the run pauses for an approval, with no hidden value in any event", async () => {
    const pay = tool({ description: "Pays an invoice.", input: z.object({ invoice: z.string() }), needsApproval: true, run: () => "paid" });
    const stream = SubAgent.stream(SubAgent.create({ prompt: "Pay it.", tools: { pay } }), {
      llm: scriptedLlm([code('(println "paying")\n(tool/pay {:invoice (:id data/_inv)})')]),
      context: { _inv: { id: "INV-secret-9911" } },
    });
    const events = await collect(stream);
    const step = await stream.step;
    expect(step.paused?.approvals[0].tool).toBe("pay");
    expect(events.at(-1)?.type).toBe("run-finish");
    expect(events.filter((e) => e.type === "print").map((e) => (e as { line: string }).line)).toEqual(["paying"]);
    expect(JSON.stringify(events.slice(0, -1))).not.toContain("INV-secret-9911");
  });

  it("refuses a second reader while one reads, instead of leaving one of them waiting forever", async () => {
    // The model answers only once both readers wait for the first event.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const llm = scriptedLlm([async () => (await gate, code("(return 1)"))]);
    const stream = SubAgent.stream(SubAgent.create({ prompt: "One." }), { llm });
    const first = stream[Symbol.asyncIterator]();
    const second = stream[Symbol.asyncIterator]();
    const a = first.next(); // turn-start, queued already
    expect((await a).value?.type).toBe("turn-start");
    const waiting = first.next();
    await expect(second.next()).rejects.toThrow(/one reader at a time/);
    release();
    const rest: string[] = [(await waiting).value?.type ?? "done"];
    for (let r = await first.next(); r.done !== true; r = await first.next()) rest.push(r.value.type);
    expect(rest.at(-1)).toBe("run-finish");
    expect((await stream.step).ok).toBe(true);
  });

  it("lets a new loop read on where a loop that stopped early left off", async () => {
    const stream = SubAgent.stream(agent("none"), { llm: scriptedLlm(REPLIES) });
    for await (const e of stream) {
      expect(e.type).toBe("turn-start");
      break;
    }
    const rest = await collect(stream);
    expect(rest[0].type).toBe("text-delta");
    expect(rest.at(-1)?.type).toBe("run-finish");
  });

  it("ignores the text a client still gives after the run abandoned its request: run-finish stays the last event", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const waiting = new Promise<void>((resolve) => (asked = resolve));
    // A client that ignores the signal and streams its reply once it is no longer wanted.
    const deaf: Llm = {
      name: "deaf",
      async complete(request) {
        asked();
        await gate;
        request.onText?.("late words", 1);
        return { content: "late words" };
      },
    };
    const controller = new AbortController();
    const told: string[] = [];
    const stream = SubAgent.stream(SubAgent.create({ prompt: "One." }), { llm: deaf, signal: controller.signal, onEvent: (e) => told.push(e.type) });
    await waiting;
    controller.abort();
    expect((await stream.step).fail?.reason).toBe("aborted");
    release();
    await gate;
    await new Promise((resolve) => setImmediate(resolve));
    expect(told).toEqual(["turn-start", "run-finish"]);
    expect((await collect(stream)).map((e) => e.type)).toEqual(["turn-start", "run-finish"]);
  });

  it("tells the turn-finish of a turn the trace keeps when onTurn throws and ends the run", async () => {
    const stream = SubAgent.stream(SubAgent.create({ prompt: "Two.", maxTurns: 2 }), {
      llm: scriptedLlm([code("(println 1)"), code("(return 2)")]),
      onTurn: () => {
        throw new Error("progress sink down");
      },
    });
    const kinds = (await collect(stream)).map((e) => e.type).filter((t) => t !== "text-delta");
    const step = await stream.step;
    expect(step.fail?.reason).toBe("internal_error");
    expect(step.turns).toHaveLength(1);
    expect(kinds).toEqual(["turn-start", "program", "print", "turn-finish", "run-finish"]);
  });

  it("stops the live prints where the output limit cuts in (the trace keeps head and tail)", async () => {
    const flood = code('(doseq [i (range 200)] (println "line" i))\n(return :ok)');
    const events = await collect(SubAgent.stream(SubAgent.create({ prompt: "Flood." }), { llm: scriptedLlm([flood]), isolation: "none", limits: { maxOutputChars: 100 } }));
    const prints = events.filter((e) => e.type === "print").map((e) => (e as { line: string }).line);
    expect(prints.length).toBeGreaterThan(5);
    expect(prints.length).toBeLessThan(20);
    expect(prints[0]).toBe("line 0");
  });
});

describe("hidden context never appears in events (adversary)", () => {
  const SECRET = "sk-live-7Hq2ZpX9wLm4";
  const fragments = [SECRET, SECRET.slice(3, 15), SECRET.toUpperCase(), SECRET.slice(-8), "7Hq2ZpX9"];

  it("shows prints, tool arguments and tool errors with stand-ins, as the prompts do", async () => {
    const seen: string[] = [];
    const crm = tool({
      description: "Looks up a customer with an API token.",
      input: z.object({ token: z.string(), id: z.number() }),
      run: ({ token, id }) => {
        seen.push(token);
        // A careless tool quoting its secret argument back in an error.
        if (id === 2) throw new Error(`token ${token} rejected`);
        return { id, name: "Ada" };
      },
    });
    const program = code(
      [
        "(def t (:token data/_creds))",
        '(println "token is" t)',
        '(println "part" (subs t 3 15) "upper" (clojure.string/upper-case t))',
        "(def c (tool/crm {:token t :id 1}))",
        "(try (tool/crm {:token (str t) :id 2}) (catch e (println \"failed:\" (ex-message e))))",
        "(println {:k t :tail (subs t 10)})",
        "(return (:name c))",
      ].join("\n"),
    );
    const stream = SubAgent.stream(SubAgent.create({ prompt: "Look up customer 1.", tools: { crm } }), { llm: scriptedLlm([program]), context: { _creds: { token: SECRET } } });
    const events = await collect(stream);
    const step = await stream.step;
    expect(step.ok).toBe(true);
    expect(seen).toEqual([SECRET, SECRET]);
    // Everything but the run's own result (the host's Step) is scanned.
    const text = JSON.stringify(events.map((e) => (e.type === "run-finish" ? null : e)));
    for (const f of fragments) expect(text).not.toContain(f);
    const prints = events.filter((e) => e.type === "print").map((e) => (e as { line: string }).line);
    expect(prints[0]).toBe("token is <hidden string from data/_creds :token>");
    expect(prints[1]).toContain("<hidden string derived from data/_creds>");
    expect(prints.join("\n")).toContain("failed:");
    const call = events.find((e) => e.type === "tool-call") as { args: { token: string } };
    expect(call.args.token).toBe("<hidden string from data/_creds :token>");
    const failed = events.find((e) => e.type === "tool-result" && e.error !== undefined) as { error: string };
    expect(failed.error).toMatch(/^token <hidden string .*> rejected$/);
    // The trace (and so every later prompt) holds the same stand-ins: the error a program
    // catches from a tool that quotes its secret argument is hidden too.
    const trace = JSON.stringify(step.trace);
    for (const f of fragments) expect(trace).not.toContain(f);
    expect(step.turns[0].prints[2]).toBe("failed: tool/crm failed: token <hidden string from data/_creds :token> rejected");
  });
});

// stream spread its options to add its own listener: a getter or Proxy trap that threw made
// stream() itself throw the host's error (sk-secret) before any step, and an onEvent that is
// not a function was wrapped, so the run took it and every event threw inside.
describe("SubAgent.stream with options it cannot use", () => {
  const boom = (): never => {
    throw new Error("sk-secret");
  };
  it.each<[string, () => unknown, string]>([
    ["a limits getter", () => Object.defineProperty({}, "limits", { get: boom, enumerable: true }), "options.limits could not be read (reading it threw)"],
    ["a throwing Proxy", () => new Proxy({}, { get: boom, ownKeys: boom }), "options.llm could not be read (reading it threw)"],
    ["an onEvent that is not a function", () => ({ onEvent: "log" }), "onEvent must be a function, got string"],
  ])("%s ends the step with invalid_input", async (_, options, message) => {
    const llm = scriptedLlm(REPLIES);
    const stream = SubAgent.stream(SubAgent.create({ prompt: "Add up.", llm, isolation: "none" }), options() as never);
    const events: string[] = [];
    for await (const e of stream) events.push(e.type);
    const step = await stream.step;
    expect(step.fail).toEqual({ reason: "invalid_input", message });
    expect(JSON.stringify(step)).not.toContain("sk-secret");
    expect(llm.requests).toHaveLength(0);
  });
});
