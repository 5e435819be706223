// Every channel a run's data leaves the process by, other than the prompts: the saved run and
// trace files, `ptc trace show`, the viewer's page, the run's events and turn callbacks, the
// OpenTelemetry spans, a recording of the LLM calls, the failure the host is handed and the
// approval requests. A run derives values from hidden context every way a program can (cut,
// reversed, upper-cased, glued, inside collections, thrown, returned, passed to tools and to a
// nested agent, waiting for approval) and each channel is scanned for fragments of them.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent, type Step } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { runToJson } from "../../src/agent/saved-run.js";
import { saveRun } from "../../src/agent/resume.js";
import { runStateToJson } from "../../src/trace/run-state.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { recordingLlm } from "../../src/llm/recorder.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { parseRun, renderRun, renderMessages } from "../../src/cli/trace.js";
import { readViewerInput } from "../../src/viewer/input.js";
import { buildPageData } from "../../src/viewer/data.js";
import { renderPage } from "../../src/viewer/page.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { fragments, leaks } from "../support/hidden.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";
const TOKEN = "K7Z2Q9-B3M8X4-W5R2";
const PASSWORD = "Qx9vLw-73Jpz-Tk4m";
const FRAGS = fragments([TOKEN, PASSWORD]);

function tools(): Record<string, ReturnType<typeof tool>> {
  const lookup = tool({
    description: "Looks a customer up.",
    input: z.object({ token: z.unknown(), q: z.string().optional() }),
    run: ({ token }) => ({ echoed: token, rows: [{ id: 1 }] }),
  });
  const login = tool({
    description: "Logs in.",
    input: z.object({ user: z.string(), password: z.string() }),
    run: ({ password }) => {
      throw new Error(`wrong password ${password} (${[...password].reverse().join("")})`);
    },
  });
  // A host's tool that holds the secret itself and quotes it failing, though it was not given it.
  const session = tool({
    description: "Opens a session.",
    input: z.object({ user: z.string() }),
    run: () => {
      throw new Error(`session for ${TOKEN} expired`);
    },
  });
  const send = tool({
    description: "Sends a message.",
    input: z.object({ to: z.string(), body: z.unknown() }),
    needsApproval: true,
    run: () => ({ sent: true }),
  });
  const child = SubAgent.create({ prompt: "Check the token {{token}}.", maxTurns: 2 });
  const checker = SubAgent.asTool(child, { description: "Checks a token.", input: z.object({ token: z.unknown() }) });
  return { lookup, login, session, send, checker };
}

const TURNS = [
  // Derive and print.
  '(def tok (:token data/_creds))\n(def rev (clojure.string/reverse tok))\n(def up (clojure.string/upper-case (str "Bearer " tok)))\n(println tok rev up)\n(println (pr-str data/_creds))',
  // Tools: an echo, a failure quoting the argument, a nested agent.
  '(def r (tool/lookup {:token (subs tok 0 14) :q "acme"}))\n(println (:echoed r))\n(println (try (tool/login {:user "ann" :password (:password data/_creds)}) (catch e (ex-message e))))\n(println (try (tool/session {:user "ann"}) (catch e (ex-message e))))\n(println (tool/checker {:token tok}))',
  // Errors: thrown with data, uncaught.
  '(throw (ex-info (str "bad token " rev) {:tok tok :why (subs up 0 12)}))',
  // A call waiting for approval, its body computed from hidden context.
  '(tool/send {:to "boss@corp.org" :body {:auth up :pw (:password data/_creds)}})',
];
const CHILD = [code("(return {:seen (subs data/_token 3 15) :rev (clojure.string/reverse data/_token)})")];

async function run(final: string, extra: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "ptc-channels-"));
  const cassette = join(dir, "calls.jsonl");
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const events: AgentEvent[] = [];
  const turnEvents: unknown[] = [];
  const replies = [code(TURNS[0]), code(TURNS[1]), ...CHILD, code(TURNS[2]), code(final)];
  const llm = recordingLlm(scriptedLlm(replies, { name: "openai:fake" }), cassette);
  const agent = SubAgent.create({ prompt: "Check the customer.", tools: tools(), maxTurns: 5 });
  const step = await SubAgent.run(agent, {
    llm,
    context: { _creds: { token: TOKEN, password: PASSWORD }, region: "eu" },
    tracer: provider.getTracer("test"),
    onEvent: (e) => events.push(e),
    onTurn: (t) => void turnEvents.push(t),
    isolation: "none",
    ...extra,
  });
  return { step, agent, events, turnEvents, spans: exporter.getFinishedSpans(), cassette };
}

/** What each channel shows, by name. */
async function channels(r: Awaited<ReturnType<typeof run>>): Promise<Record<string, string>> {
  const { step, agent } = r;
  const out: Record<string, string> = {};
  const saved = runToJson(step, 2);
  out["runToJson"] = saved;
  const state = saveRun(step, agent);
  // The saved state holds hidden values in memory and in the results of calls that sent one back
  // by design (history.md: resuming needs them).
  out["run state (but memory)"] = runStateToJson({ ...state, memory: [], hiddenResults: undefined, outcome: state.outcome.ok ? { ok: true } : state.outcome });
  out["step.fail"] = JSON.stringify(step.ok ? null : step.fail);
  out["paused approvals"] = JSON.stringify(step.paused?.approvals ?? null);
  out["events"] = JSON.stringify(r.events.map((e) => (e.type === "run-finish" ? { ...e, step: null } : e)));
  out["onTurn"] = JSON.stringify(r.turnEvents);
  out["spans"] = JSON.stringify(r.spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status })));
  out["cassette"] = readFileSync(r.cassette, "utf8");
  const source = parseRun(saved, "run.json");
  out["ptc trace show"] = renderRun(source.trace, {}, source.saved) + source.trace.turns.map((t) => renderMessages(t)).join("\n");
  const data = await buildPageData([readViewerInput("run.json", saved)]);
  out["viewer page"] = renderPage(data);
  return out;
}

function expectNoLeaks(out: Record<string, string>): void {
  const found = Object.fromEntries(
    Object.entries(out)
      .map(([k, v]) => [k, leaks(v, FRAGS)])
      .filter(([, v]) => v.length > 0),
  );
  expect(found).toEqual({});
}

describe.each(["none", "worker"] as const)("hidden context in every channel but the prompts (isolation %s)", (isolation) => {
  it("a run paused for approval", async () => {
    const r = await run(TURNS[3], { isolation, compressHistory: true });
    expect(r.step.ok).toBe(false);
    expect(r.step.paused?.approvals).toHaveLength(1);
    expectNoLeaks(await channels(r));
  });

  it.each([
    ["returns a value computed from it", "(return {:auth up :n (count tok)})"],
    ["fails with it", '(fail (str "gave up on " rev))'],
    ["fails with data holding it", "(fail {:reason :bad :tok tok :up up})"],
    // The trace keeps a value's EDN cut at 4,096 characters: here the hidden part lies past the cut.
    ["returns a large value holding it past what the trace keeps", "(return {:rows (vec (range 3000)) :auth up})"],
  ])("a run that %s", async (_what, final) => {
    const r = await run(final, { isolation });
    expect(r.step.turns.length).toBe(4);
    expectNoLeaks(await channels(r));
  });

  // An aborted worker's run is recorded from the host's own records of its calls, and the events
  // are told from them as the calls end: the worker's records come after. A run that never read
  // the token in the turn has nothing marked but what the tool's message quotes.
  it.each([
    ["read in the turn", "(def tok (:token data/_creds))\n"],
    ["not read in the turn", ""],
  ])("a run aborted after a tool's failure quoted a hidden value %s", async (_what, read) => {
    const abort = new AbortController();
    const stop = tool({ description: "Stops.", input: z.object({}), run: () => (abort.abort(), null) });
    const programs = [`${read}(println (try (tool/session {:user "ann"}) (catch e (ex-message e))))\n(tool/stop {})`];
    const agent = SubAgent.create({ prompt: "Check the customer.", tools: { ...tools(), stop }, maxTurns: 2 });
    const events: AgentEvent[] = [];
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs.map(code)), context: { _creds: { token: TOKEN } }, signal: abort.signal, isolation, onEvent: (e) => events.push(e) });
    expect(step.ok ? null : step.fail.reason).toBe("aborted");
    const failed = events.find((e) => e.type === "tool-result" && e.name === "session");
    expect(failed?.type === "tool-result" && failed.error).toBe("session for <hidden string from data/_creds :token> expired");
    expectNoLeaks({ trace: JSON.stringify(step.trace), runToJson: runToJson(step, 2), events: JSON.stringify(events.map((e) => (e.type === "run-finish" ? null : e))) });
  });
});

// evaluate's own channels: the records a host is told of (onToolCall) and given (toolCalls). A
// record kept the result as the program received it (`value`, for the trace's holders) with the
// token's echo as it was, and JSON wrote it: a host logging its records logged the token.
describe.each(["none", "worker"] as const)("evaluate's tool call records as a host writes them (isolation %s)", (isolation) => {
  it("hold the result with its hidden parts as stand-ins only", async () => {
    const heard: string[] = [];
    const look = ({ t }: Record<string, unknown>) => ({ low: String(t).toLowerCase(), plan: "pro" });
    const r = await evaluate("(def r (tool/look {:t (:token data/_creds)}))\n(:plan r)", { ctx: { _creds: { token: TOKEN } }, isolation, tools: { look }, onToolCall: (c) => void heard.push(JSON.stringify(c)) });
    expect(r.ok && r.value).toBe("pro");
    expect(heard).toHaveLength(2);
    expect(leaks([...heard, JSON.stringify(r.toolCalls), JSON.stringify({ ...r.toolCalls[0] })].join("\n"), FRAGS)).toEqual([]);
    // Still there for what reads it by name (the trace's holder of the whole result).
    expect(r.ok && r.toolCalls[0].value).toBe(r.ok && r.defs[0].value);
  });
});

export type { Step };
