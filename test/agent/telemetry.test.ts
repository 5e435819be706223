// OpenTelemetry export: a run's spans in an in-memory exporter, their tree, names and GenAI
// attributes, and hidden context in no attribute of any span.
import { context, SpanStatusCode, trace, type Span, type Tracer } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { providerOf } from "../../src/agent/telemetry.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

// The order spans started in, by span id. Their start times come from a millisecond clock, so a
// tool call and the nested run it starts, or a chat and the evaluation after it, can tie: ordered
// by start time, such siblings came in finishing order and the tree test failed about one run in three.
const started = new Map<string, number>();
const startOrder: SpanProcessor = {
  onStart: (span) => void started.set(span.spanContext().spanId, started.size),
  onEnd: () => undefined,
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

function setup(): { exporter: InMemorySpanExporter; provider: BasicTracerProvider } {
  const exporter = new InMemorySpanExporter();
  return { exporter, provider: new BasicTracerProvider({ spanProcessors: [startOrder, new SimpleSpanProcessor(exporter)] }) };
}

/** The span tree as indented lines: name and the attributes asked for. */
function tree(spans: ReadableSpan[], keys: string[] = []): string[] {
  const children = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const s of spans) {
    const parent = s.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    children.set(key, [...(children.get(key) ?? []), s]);
  }
  const out: string[] = [];
  const walk = (parent: string | undefined, depth: number): void => {
    const order = (s: ReadableSpan): number => started.get(s.spanContext().spanId) ?? Infinity;
    const kids = (children.get(parent) ?? []).sort((a, b) => order(a) - order(b));
    for (const s of kids) {
      const attrs = keys.filter((k) => s.attributes[k] !== undefined).map((k) => `${k}=${String(s.attributes[k])}`);
      out.push(`${"  ".repeat(depth)}${s.name}${attrs.length > 0 ? ` ${attrs.join(" ")}` : ""}`);
      walk(s.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return out;
}

const lookup = tool({
  description: "The price of a product.",
  input: z.object({ product: z.string() }),
  run: ({ product }) => {
    if (product === "ghost") throw new Error("no such product");
    return { price: product.length };
  },
});

afterEach(() => {
  trace.disable();
  context.disable();
});

describe("OpenTelemetry spans", () => {
  it("exports run → turn → chat / evaluation → tool, with GenAI attributes and compaction stats", async () => {
    const { exporter, provider } = setup();
    const agent = SubAgent.create({ prompt: "Price the lamp.", tools: { lookup }, maxTurns: 3 });
    const llm = scriptedLlm(
      [
        code('(def p (tool/lookup {:product "lamp"}))\n(try (tool/lookup {:product "ghost"}) (catch e nil))\n(println p)'),
        { content: code("(return (:price p))"), usage: { inputTokens: 900, outputTokens: 20, cachedTokens: 700, cacheWriteTokens: 50 }, model: "fake-2026" },
      ],
      { name: "openai:fake" },
    );
    const step = await SubAgent.run(agent, { llm, tracer: provider.getTracer("test"), isolation: "none" });
    expect(step.ok).toBe(true);
    const spans = exporter.getFinishedSpans();
    expect(tree(spans, ["ptc.turn", "gen_ai.tool.name", "error.type"])).toEqual([
      "invoke_agent",
      "  ptc.turn ptc.turn=1",
      "    chat fake ptc.turn=1",
      "    ptc.evaluate ptc.turn=1",
      "      execute_tool lookup gen_ai.tool.name=lookup",
      "      execute_tool lookup gen_ai.tool.name=lookup error.type=tool_error",
      "  ptc.turn ptc.turn=2",
      "    chat fake ptc.turn=2",
      "    ptc.evaluate ptc.turn=2",
    ]);
    const byName = (n: string) => spans.filter((s) => s.name === n);
    const run = byName("invoke_agent")[0];
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "fake",
      "gen_ai.usage.input_tokens": step.usage.inputTokens,
      "gen_ai.usage.output_tokens": step.usage.outputTokens,
      "ptc.turns": 2,
      "ptc.compression.enabled": false,
    });
    expect(run.status.code).toBe(1);
    const chat2 = byName("chat fake")[1];
    expect(chat2.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "openai",
      "gen_ai.request.model": "fake",
      "gen_ai.response.model": "fake-2026",
      "gen_ai.usage.input_tokens": 900,
      "gen_ai.usage.output_tokens": 20,
      "gen_ai.usage.cache_read.input_tokens": 700,
      "gen_ai.usage.cache_creation.input_tokens": 50,
    });
    const turn2 = byName("ptc.turn")[1];
    expect(turn2.attributes).toMatchObject({ "ptc.turn.status": "returned", "ptc.prompt.messages": 4, "ptc.compaction.messages_in": 4, "ptc.compaction.messages_out": 4 });
    expect(turn2.attributes["ptc.compaction.tokens_in"]).toBeGreaterThan(0);
    const tools = byName("execute_tool lookup");
    expect(tools[0].attributes).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.type": "function" });
    expect(tools[1].status).toEqual({ code: 2, message: "tool_error" });
    expect(byName("ptc.evaluate")[0].attributes["ptc.fuel_used"]).toBeGreaterThan(0);
  });

  it("records compression stats when a history strategy compacts, and a failed run's reason", async () => {
    const { exporter, provider } = setup();
    const agent = SubAgent.create({ prompt: "Loop.", maxTurns: 3 });
    // Reasoning before each program, which the summaries leave out: enough to repay the legend in a run of 3.
    const why = "I will print the next letter of the loop and look at what comes back before I decide what to do with the rest of it. ";
    const llm = scriptedLlm([why.repeat(2) + "\n\n" + code('(println "a")'), why.repeat(2) + "\n\n" + code('(println "b")'), why.repeat(2) + "\n\n" + code('(println "c")')]);
    const step = await SubAgent.run(agent, { llm, tracer: provider.getTracer("test"), compressHistory: true, isolation: "none" });
    expect(step.ok).toBe(false);
    const run = exporter.getFinishedSpans().find((s) => s.name === "invoke_agent") as ReadableSpan;
    expect(run.attributes).toMatchObject({ "ptc.compression.enabled": true, "error.type": "max_turns_exceeded" });
    expect(run.attributes["ptc.compression.full_tokens"]).toBeGreaterThan(0);
    expect(run.status).toEqual({ code: 2, message: "max_turns_exceeded" });
    const turns = exporter.getFinishedSpans().filter((s) => s.name === "ptc.turn");
    expect(turns.map((t) => t.attributes["ptc.view.turns_compressed"])).toEqual([0, 1, 2]);
  });

  it("hangs a nested agent's run under the evaluation that called it, and ends a turn cut short by an LLM failure", async () => {
    const { exporter, provider } = setup();
    const pricer = SubAgent.create({ prompt: "Price {{item}}.", maxTurns: 1 });
    const agent = SubAgent.create({ prompt: "Use the pricer.", tools: { pricer: SubAgent.asTool(pricer) }, maxTurns: 2 });
    const llm = scriptedLlm([code('(println (tool/pricer {:item "lamp"}))'), code("(return 4)")]);
    const step = await SubAgent.run(agent, { llm, tracer: provider.getTracer("test"), isolation: "none" });
    expect(step.ok).toBe(false);
    expect(tree(exporter.getFinishedSpans(), ["ptc.agent.depth", "error.type"])).toEqual([
      "invoke_agent ptc.agent.depth=0 error.type=llm_error",
      "  ptc.turn",
      "    chat",
      "    ptc.evaluate",
      "      execute_tool pricer",
      "      invoke_agent ptc.agent.depth=1",
      "        ptc.turn",
      "          chat",
      "          ptc.evaluate",
      "  ptc.turn",
      "    chat error.type=exhausted",
    ]);
  });

  it("uses the globally registered provider with tracer: \"global\", and makes no span without a tracer", async () => {
    const { exporter, provider } = setup();
    trace.setGlobalTracerProvider(provider);
    const agent = SubAgent.create({ prompt: "One." });
    await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), isolation: "none" });
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), isolation: "none", tracer: "global" });
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(["chat", "ptc.evaluate", "ptc.turn", "invoke_agent"]);
  });

  it("rejects a tracer that is not one", async () => {
    const step = await SubAgent.run(SubAgent.create({ prompt: "One." }), { llm: scriptedLlm([]), tracer: {} as never });
    expect(step.fail?.reason).toBe("invalid_input");
    expect(step.fail?.message).toContain("tracer must be an OpenTelemetry Tracer");
  });

  it("a tracer that throws (from startSpan, setAttribute, setStatus or end) costs its spans, never the run", async () => {
    const fails = (where: string): Tracer => {
      const ok = (what: string) => () => {
        if (what === where) throw new Error(`${what} failed`);
        return span;
      };
      const span = {
        end: ok("end"),
        setAttribute: ok("setAttribute"),
        setAttributes: ok("setAttribute"),
        setStatus: ok("setStatus"),
        spanContext: () => ({ traceId: "1".repeat(32), spanId: "1".repeat(16), traceFlags: 1 }),
        isRecording: () => true,
      } as unknown as Span;
      return { startSpan: ok("startSpan"), startActiveSpan: () => undefined } as unknown as Tracer;
    };
    const agent = SubAgent.create({ prompt: "Price the lamp.", tools: { lookup }, maxTurns: 3 });
    const replies = [code('(def p (tool/lookup {:product "lamp"}))\n(println p)'), code("(return (:price p))")];
    for (const where of ["startSpan", "setAttribute", "setStatus", "end"]) {
      const step = await SubAgent.run(agent, { llm: scriptedLlm(replies), tracer: fails(where), isolation: "none" });
      expect([where, step.ok, step.value, step.turns.map((t) => t.status)]).toEqual([where, true, 4, ["ok", "returned"]]);
    }
  });

  it("names provider and model from the client's name", () => {
    expect(providerOf("openai:gpt-5-mini")).toEqual({ provider: "openai", model: "gpt-5-mini" });
    expect(providerOf("anthropic:claude-sonnet-4-5")).toEqual({ provider: "anthropic", model: "claude-sonnet-4-5" });
    expect(providerOf("ai-sdk:anthropic.messages:claude-haiku-4-5")).toEqual({ provider: "anthropic", model: "claude-haiku-4-5" });
    expect(providerOf("scripted")).toEqual({ provider: "scripted" });
  });
});

describe("hidden context is never exported (adversary)", () => {
  const SECRET = "sk-live-Qm8Wz2Rt5Yp7";
  const fragments = [SECRET, SECRET.slice(3, 15), SECRET.toUpperCase(), SECRET.slice(-8), "Qm8Wz2Rt"];

  it("no attribute, status, event or name of any span holds the secret or a piece of it", async () => {
    const { exporter, provider } = setup();
    const crm = tool({
      description: "Looks up a customer.",
      input: z.object({ token: z.string() }),
      run: ({ token }) => {
        throw new Error(`token ${token} expired`);
      },
    });
    const agent = SubAgent.create({ prompt: "Look up the customer.", tools: { crm }, maxTurns: 3 });
    const llm = scriptedLlm([
      code('(def t (:token data/_creds))\n(println t (subs t 2 12))\n(try (tool/crm {:token t}) (catch e (println (ex-message e))))'),
      code("(tool/crm {:token (clojure.string/upper-case t)})"),
      code('(fail (str "gave up on " t))'),
    ]);
    const step = await SubAgent.run(agent, { llm, tracer: provider.getTracer("test"), context: { _creds: { token: SECRET } } });
    expect(step.fail?.reason).toBe("failed");
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(6);
    const exported = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, status: s.status, events: s.events, links: s.links, resource: s.resource.attributes })));
    for (const f of fragments) expect(exported).not.toContain(f);
    // The failure reason was computed from the secret: it reaches the host (and the saved run, the CLI and the viewer) as a stand-in.
    expect(step.fail?.message).toBe("<hidden string derived from data/_creds>");
  });

  it("a tool span says tool_timeout for a call that ran out of time, and tool_error for a tool's own error that only mentions one", async () => {
    const { exporter, provider } = setup();
    const slow = tool({ description: "Slow.", timeoutMs: 20, run: () => new Promise((r) => setTimeout(() => r(1), 200)) });
    const flaky = tool({
      description: "Flaky.",
      run: () => {
        throw new Error("no answer within 5 ms from the backend; retry later");
      },
    });
    const agent = SubAgent.create({ prompt: "Call both.", tools: { slow, flaky }, maxTurns: 2 });
    const llm = scriptedLlm([code("(try (tool/slow {}) (catch e nil))\n(try (tool/flaky {}) (catch e nil))\n(return 1)")]);
    const step = await SubAgent.run(agent, { llm, tracer: provider.getTracer("test"), isolation: "none" });
    expect(step.ok).toBe(true);
    const kind = (name: string) => exporter.getFinishedSpans().find((s) => s.name === `execute_tool ${name}`)?.attributes["error.type"];
    expect([kind("slow"), kind("flaky")]).toEqual(["tool_timeout", "tool_error"]);
  });
});

// A resume replays the saved turns: their events and spans came again as if they ran, so a
// dashboard counting tool calls or summing chat tokens counted the saved run's twice.
describe("a resumed run's replayed turns", () => {
  it("are told with replayed on their events, TurnEvents and spans, and their chat spans carry no tokens", async () => {
    const { saveRun } = await import("../../src/agent/resume.js");
    const { runStateFromJson, runStateToJson } = await import("../../src/trace/run-state.js");
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval: true, run: ({ to }) => `sent ${to}` });
    const agent = SubAgent.create({ prompt: "Go.", tools: { lookup, send }, maxTurns: 4 });
    const usage = { inputTokens: 900, outputTokens: 20, cachedTokens: 0 };
    const step = await SubAgent.run(agent, { llm: scriptedLlm([{ content: code('(def a (tool/lookup {:product "pen"}))'), usage }, { content: code('(def b (tool/send {:to "x"}))'), usage }]), isolation: "none" });
    const { exporter, provider } = setup();
    const events: string[] = [];
    const turns: string[] = [];
    const done = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(step, agent))), {
      llm: scriptedLlm([{ content: code("(return [a b])"), usage }]),
      isolation: "none",
      tracer: provider.getTracer("test"),
      approvals: { "turn-2-call-1": { approved: true } },
      onEvent: (e) => void (e.type !== "text-delta" && e.type !== "run-finish" && events.push(`${e.type} ${e.type === "turn-finish" ? e.turn.number : e.turn}${e.replayed === undefined ? "" : ` ${String(e.replayed)}`}`)),
      onTurn: (t) => void turns.push(`${t.turn.number} ${t.replayed ?? "live"}`),
    });
    expect(done.value).toEqual([{ price: 3 }, "sent x"]);
    expect(events).toEqual([
      "turn-start 1 true",
      "program 1 true",
      "tool-call 1 true",
      "tool-result 1 true",
      "turn-finish 1 turn",
      // The paused turn's reply is the saved run's; its program runs again, its approved call live.
      "turn-start 2 true",
      "program 2",
      "tool-call 2",
      "tool-result 2",
      "turn-finish 2 reply",
      "turn-start 3",
      "program 3",
      "turn-finish 3",
    ]);
    expect(turns).toEqual(["1 turn", "2 reply", "3 live"]);
    const spans = exporter.getFinishedSpans();
    const chats = spans.filter((s) => s.name.startsWith("chat"));
    expect(chats.map((s) => [s.attributes["ptc.turn"], s.attributes["ptc.replayed"], s.attributes["gen_ai.usage.input_tokens"] !== undefined])).toEqual([
      [1, true, false],
      [2, true, false],
      [3, undefined, true],
    ]);
    const tools = spans.filter((s) => s.name.startsWith("execute_tool"));
    expect(tools.map((s) => [s.name, s.attributes["ptc.replayed"]])).toEqual([
      ["execute_tool lookup", true],
      ["execute_tool send", undefined],
    ]);
  });

  it("tell a call of the paused turn answered from its record as replayed, and the held call not at all", async () => {
    const { saveRun } = await import("../../src/agent/resume.js");
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval: true, run: ({ to }) => `sent ${to}` });
    const agent = SubAgent.create({ prompt: "Go.", tools: { lookup, send }, maxTurns: 3 });
    const paused = setup();
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(def a (tool/lookup {:product "pen"}))\n(return [a (tool/send {:to "x"})])')]), isolation: "none", tracer: paused.provider.getTracer("test") });
    expect(step.fail?.reason).toBe("approval_required");
    expect(paused.exporter.getFinishedSpans().filter((s) => s.name.startsWith("execute_tool")).map((s) => s.name)).toEqual(["execute_tool lookup"]);
    // A program stopped for approval did not fail: its span is no error, and says it paused.
    const evaluation = paused.exporter.getFinishedSpans().find((s) => s.name === "ptc.evaluate");
    const turn = paused.exporter.getFinishedSpans().find((s) => s.name === "ptc.turn");
    expect([evaluation?.status.code, evaluation?.attributes["error.type"], evaluation?.attributes["ptc.paused"], turn?.attributes["error.type"], turn?.attributes["ptc.turn.status"]]).toEqual([SpanStatusCode.UNSET, undefined, true, undefined, "paused"]);
    const { exporter, provider } = setup();
    const done = await SubAgent.resume(agent, saveRun(step, agent), { llm: scriptedLlm([]), isolation: "none", tracer: provider.getTracer("test"), approvals: { "turn-1-call-2": { approved: true } } });
    expect(done.value).toEqual([{ price: 3 }, "sent x"]);
    const tools = exporter.getFinishedSpans().filter((s) => s.name.startsWith("execute_tool"));
    expect(tools.map((s) => [s.name, s.attributes["ptc.replayed"]])).toEqual([
      ["execute_tool lookup", true],
      ["execute_tool send", undefined],
    ]);
  });
});
