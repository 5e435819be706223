// A resumed run replays its saved turns with the recorded results standing in for the tools.
// A tool's result that echoes a hidden value is recorded with that part as a stand-in: replayed
// as recorded, the program would hold the stand-in's text where it had the value, and pass it
// on (a later call sends it to a tool) or print something else than the saved turn did (the
// replay is refused). The replay answers with the result the program had, kept in the saved
// state as its memory's values are; the prompts and the trace still show stand-ins.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { saveRun } from "../../src/agent/resume.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { runStateFromJson, runStateToJson } from "../../src/trace/run-state.js";
import { fragments, leaks } from "../support/hidden.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";
const TOKEN = "K7Z2Q9-B3M8X4-W5R2";
const context = { _creds: { token: TOKEN } };

function world() {
  const sent: string[] = [];
  let looked = 0;
  const tools = {
    look: tool({ description: "Looks a token up.", input: z.object({ t: z.string() }), run: ({ t }) => (looked++, { low: t.toLowerCase(), plan: "pro" }) }),
    send: tool({ description: "Sends.", input: z.object({ to: z.string() }), run: ({ to }) => (sent.push(to), "sent") }),
    confirm: tool({ description: "Sends, once a person agrees.", input: z.object({ to: z.string() }), needsApproval: true, run: ({ to }) => (sent.push(to), "sent") }),
  };
  return { sent, tools, looked: () => looked };
}

/** The prompts the model was sent, the trace and the state without its memory: no piece of the token in any of them. */
function expectNoLeak(texts: string[]): void {
  const frags = fragments([TOKEN]);
  for (const t of texts) expect(leaks(t, frags), t).toEqual([]);
}

describe.each(["none", "worker"] as const)("resuming a run whose tool echoed a hidden value (isolation %s)", (isolation) => {
  it("answers a replayed call with the result the program had: a later turn sends the value, not the stand-in", async () => {
    const w = world();
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Look the token up.", tools: w.tools, maxTurns });
    const saved = ['(def r (tool/look {:t (:token data/_creds)}))\n(println "looked")', "(println (subs (:low r) 0 6) (:plan r))"];
    const first = await SubAgent.run(make(2), { llm: scriptedLlm(saved.map(code)), context, isolation });
    expect(first.fail?.reason).toBe("max_turns_exceeded");
    const json = runStateToJson(saveRun(first, make(2)));
    const live = scriptedLlm([code("(tool/send {:to (:low r)})\n(println (subs (:low r) 0 6))\n(return :done)")]);
    const step = await SubAgent.resume(make(4), runStateFromJson(json), { llm: live, context, isolation });
    expect(step.ok ? step.value : step.fail).toBe("done");
    expect(w.sent).toEqual([TOKEN.toLowerCase()]);
    expect(w.looked()).toBe(1);
    // The replayed turns printed what the saved ones did (r, kept from a turn that read hidden
    // context, shows every part hidden); the live one shows a stand-in as well.
    expect(step.trace.turns.map((t) => t.prints)).toEqual([first.trace.turns[0].prints, first.trace.turns[1].prints, ["<hidden string derived from data/_creds>"]]);
    expect(first.trace.turns[1].prints).toEqual(["<hidden string derived from data/_creds> <hidden string derived from data/_creds>"]);
    const state = JSON.parse(json) as Record<string, unknown>;
    delete state.memory;
    delete state.hiddenResults;
    expectNoLeak([...live.requests.flatMap((r) => r.messages.map((m) => m.content)), JSON.stringify(step.trace), JSON.stringify(state)]);
  });

  // The token was renewed between the pause and the resume. The replayed result, the saved run's
  // echo of the old token, echoes nothing the resumed run's context holds, so it was shown: the
  // replay printed "k7z2q9-b3m8x4-w5r2" where the saved turn printed a stand-in, and resume threw
  // a ResumeError quoting it; a turn that printed no part of it resumed with the record of the
  // call holding it in the trace. The parts the saved record hid are hidden again.
  it("hides a replayed result's parts as the saved record did, when the hidden value changed since", async () => {
    const w = world();
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Look the token up.", tools: w.tools, maxTurns });
    const first = await SubAgent.run(make(1), { llm: scriptedLlm([code("(def r (tool/look {:t (:token data/_creds)}))\n(println (:low r) (:plan r))")]), context, isolation });
    const json = runStateToJson(saveRun(first, make(1)));
    const renewed = "P4N8-WQ2Z-7TRX-M3KD";
    const live = scriptedLlm([code("(println r)\n(return :done)")]);
    const step = await SubAgent.resume(make(3), runStateFromJson(json), { llm: live, context: { _creds: { token: renewed } }, isolation });
    expect(step.ok ? step.value : step.fail).toBe("done");
    expect(step.trace.turns.map((t) => t.prints)).toEqual([["<hidden string derived from data/_creds> pro"], ["{:low <hidden string derived from data/_creds> :plan <hidden string derived from data/_creds>}"]]);
    const frags = fragments([TOKEN, renewed]);
    for (const t of [...live.requests.flatMap((r) => r.messages.map((m) => m.content)), JSON.stringify(step.trace)]) expect(leaks(t, frags), t).toEqual([]);
  });

  it("answers the paused turn's finished call with the result the program had: the approved call gets the value", async () => {
    const w = world();
    const agent = SubAgent.create({ prompt: "Look the token up and send it.", tools: w.tools, maxTurns: 3 });
    const first = await SubAgent.run(agent, { llm: scriptedLlm([code("(def r (tool/look {:t (:token data/_creds)}))\n(println (:plan r))\n(tool/confirm {:to (:low r)})")]), context, isolation });
    expect(first.fail?.reason).toBe("approval_required");
    const json = runStateToJson(saveRun(first, agent));
    const live = scriptedLlm([code("(return :done)")]);
    const step = await SubAgent.resume(agent, runStateFromJson(json), { llm: live, context, isolation, approvals: { "turn-1-call-2": { approved: true } } });
    expect(step.ok ? step.value : step.fail).toBe("done");
    expect(w.sent).toEqual([TOKEN.toLowerCase()]);
    expect(w.looked()).toBe(1);
    expectNoLeak([...live.requests.flatMap((r) => r.messages.map((m) => m.content)), JSON.stringify(step.trace)]);
  });

  it("runs an approved call whose argument holds a hidden value as a map key (recorded as a stand-in key)", async () => {
    const got: unknown[] = [];
    const confirm = tool({ description: "Sends, once a person agrees.", input: z.object({ m: z.record(z.string(), z.number()) }), needsApproval: true, run: ({ m }) => (got.push(m), "ok") });
    const agent = SubAgent.create({ prompt: "Send it.", tools: { confirm }, maxTurns: 2 });
    const first = await SubAgent.run(agent, { llm: scriptedLlm([code("(tool/confirm {:m {(keyword (:token data/_creds)) 1}})\n(return :done)")]), context, isolation });
    const step = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(first, agent))), { llm: scriptedLlm([]), context, isolation, approvals: { "turn-1-call-1": { approved: true } } });
    expect(step.turns[0].error?.message).toBeUndefined();
    expect(step.ok ? step.value : step.fail).toBe("done");
    expect(got).toEqual([{ [TOKEN]: 1 }]);
  });

  it("hides a replayed result whole when the tool hid it (ctx.hideResult), as the saved run did", async () => {
    const masked = tool({ description: "Masks.", input: z.object({ t: z.string() }), run: ({ t }, _signal, ctx) => (ctx.hideResult(), { code: [...t.slice(2, 12)].reverse().join("") }) });
    const make = (maxTurns: number) => SubAgent.create({ prompt: "Mask it.", tools: { masked }, maxTurns });
    const first = await SubAgent.run(make(2), { llm: scriptedLlm([code("(def r (tool/masked {:t (:token data/_creds)}))\n(println (:code r))"), code("(println (:code r))")]), context, isolation });
    const live = scriptedLlm([code("(println (:code r))\n(return :done)")]);
    const step = await SubAgent.resume(make(4), runStateFromJson(runStateToJson(saveRun(first, make(2)))), { llm: live, context, isolation });
    expect(step.ok ? step.value : step.fail).toBe("done");
    expect(step.trace.turns.map((t) => t.prints)).toEqual(Array(3).fill(["<hidden string derived from data/_creds>"]));
    const frags = fragments([TOKEN, [...TOKEN.slice(2, 12)].reverse().join("")]);
    for (const t of [...live.requests.flatMap((r) => r.messages.map((m) => m.content)), JSON.stringify(step.trace)]) expect(leaks(t, frags), t).toEqual([]);
  });

  it("keeps the results through a second pause and resume", async () => {
    const w = world();
    const agent = SubAgent.create({ prompt: "Look the token up and send it.", tools: w.tools, maxTurns: 4 });
    const first = await SubAgent.run(agent, { llm: scriptedLlm([code("(def r (tool/look {:t (:token data/_creds)}))\n(tool/confirm {:to (:low r)})")]), context, isolation });
    const second = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(first, agent))), { llm: scriptedLlm([code('(tool/confirm {:to (str (:low r) "!")})')]), context, isolation, approvals: { "turn-1-call-2": { approved: true } } });
    expect(second.paused?.approvals.map((a) => a.id)).toEqual(["turn-2-call-1"]);
    const state = saveRun(second, agent);
    expect(state.hiddenResults).toEqual([{ turn: 1, call: 0, result: { low: TOKEN.toLowerCase(), plan: "pro" } }]);
    const third = await SubAgent.resume(agent, runStateFromJson(runStateToJson(state)), { llm: scriptedLlm([code("(return :done)")]), context, isolation, approvals: { "turn-2-call-1": { approved: true } } });
    expect(third.ok ? third.value : third.fail).toBe("done");
    expect(w.sent).toEqual([TOKEN.toLowerCase(), `${TOKEN.toLowerCase()}!`]);
    expect(w.looked()).toBe(1);
  });
});

it("answers the finished call of a turn the caller's abort cut short with the result the program had", async () => {
  const w = world();
  const agent = SubAgent.create({ prompt: "Look the token up and send it.", tools: w.tools, maxTurns: 3 });
  const ctl = new AbortController();
  const program = code("(def r (tool/look {:t (:token data/_creds)}))\n(tool/send {:to (:low r)})\n(return :done)");
  const stopped = await SubAgent.run(agent, { llm: scriptedLlm([program]), context, isolation: "none", signal: ctl.signal, onEvent: (e) => void (e.type === "tool-result" && ctl.abort()) });
  expect(stopped.fail?.reason).toBe("aborted");
  const step = await SubAgent.resume(agent, runStateFromJson(runStateToJson(saveRun(stopped, agent))), { llm: scriptedLlm([]), context, isolation: "none" });
  expect(step.ok ? step.value : step.fail).toBe("done");
  expect(w.sent).toEqual([TOKEN.toLowerCase()]);
  expect(w.looked()).toBe(1);
  expectNoLeak([JSON.stringify(step.trace)]);
});

it("refuses a saved state whose hidden results name a call its trace does not hold", async () => {
  const w = world();
  const make = (maxTurns: number) => SubAgent.create({ prompt: "Look the token up.", tools: w.tools, maxTurns });
  const first = await SubAgent.run(make(1), { llm: scriptedLlm([code("(def r (tool/look {:t (:token data/_creds)}))")]), context, isolation: "none" });
  const state = runStateFromJson(runStateToJson(saveRun(first, make(1))));
  expect(state.hiddenResults).toEqual([{ turn: 1, call: 0, result: { low: TOKEN.toLowerCase(), plan: "pro" } }]);
  state.hiddenResults = [{ turn: 1, call: 3, result: "x" }];
  await expect(SubAgent.resume(make(3), state, { llm: scriptedLlm([]), context, isolation: "none" })).rejects.toThrow("resume: the saved state's hiddenResults name call 4 of turn 1, which its trace does not hold");
});

// The result held for the replay was its plain JSON: a set in it came back a vector, the
// replayed turn printed false for true, and resume refused the saved run.
it.each(["none", "worker"] as const)("answers a replayed call whose result echoed a hidden value and held a set with that set (isolation %s)", async (isolation) => {
  const tools = { look: tool({ description: "Looks a token up.", input: z.object({ t: z.string() }), run: ({ t }) => ({ low: t.toLowerCase(), tags: new Set([1, 2]) }) }) };
  const make = (maxTurns: number) => SubAgent.create({ prompt: "Look the token up.", tools, maxTurns });
  const first = await SubAgent.run(make(1), { llm: scriptedLlm([code("(def r (tool/look {:t (:token data/_creds)}))\n(println (set? (:tags r)))")]), context, isolation });
  expect(first.trace.turns[0].prints).toEqual(["true"]);
  const step = await SubAgent.resume(make(2), runStateFromJson(runStateToJson(saveRun(first, make(1)))), { llm: scriptedLlm([code("(return (set? (:tags r)))")]), context, isolation });
  expect(step.fail).toBeUndefined();
  expect(step.value).toBe(true);
});
