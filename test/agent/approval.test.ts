// Tool approvals: a run pauses at a call that needs approval, and resumes where it stopped —
// in the same process or from the saved JSON — with nothing that has side effects run twice:
// tools count their calls, the scripted LLM its requests, and prints before the pause appear once.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { saveRun, type ResumeOptions } from "../../src/agent/resume.js";
import { ResumeError, runStateFromJson, runStateToJson, type RunState } from "../../src/trace/run-state.js";
import { SubAgent, type Step } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { AgentDefinitionError } from "../../src/agent/errors.js";
import type { ApprovalDecision } from "../../src/agent/approval.js";
import type { Isolation } from "../../src/lisp/isolate/options.js";
import type { AgentEvent } from "../../src/agent/events.js";
import { answersBFirst } from "../support/reorder.js";
import { renderTurn } from "../../src/cli/trace.js";
import { projectRun } from "../../src/viewer/run.js";
import { TextTable } from "../../src/viewer/texts.js";

const code = (src: string): string => `Next step.\n\n\`\`\`clojure\n${src}\n\`\`\``;

function world(overrides: { sendDescription?: string; limit?: number } = {}) {
  const sent: Array<{ to: string; body: string }> = [];
  const looked: string[] = [];
  const tools = {
    lookup: tool({
      description: "The address of a person.",
      input: z.object({ name: z.string() }),
      run: ({ name }) => {
        looked.push(name);
        return `${name}@example.com`;
      },
    }),
    send: tool({
      description: overrides.sendDescription ?? "Sends an email.",
      input: z.object({ to: z.string().email(), body: z.string() }),
      // Mail to outside addresses, or long mail, needs a person's yes.
      needsApproval: async ({ to, body }) => !to.endsWith("@example.com") || body.length > (overrides.limit ?? 100),
      run: ({ to, body }) => {
        sent.push({ to, body });
        return { id: sent.length };
      },
    }),
    wipe: tool({
      description: "Deletes everything.",
      needsApproval: true,
      run: () => {
        sent.push({ to: "wipe", body: "" });
        return "wiped";
      },
    }),
  };
  const agent = SubAgent.create({ prompt: "Mail people.", tools, maxTurns: 4 });
  return { sent, looked, tools, agent };
}

const json = (step: Step, agent: Parameters<typeof saveRun>[1]) => runStateToJson(saveRun(step, agent));

describe.each<Isolation>(["worker", "none"])("tool approvals (isolation %s)", (isolation) => {
  it("pauses at the call, then resumes from the saved JSON without repeating a tool call, an LLM call or a print", async () => {
    const w = world();
    const llm = scriptedLlm([
      code('(def addr (tool/lookup {:name "ann"}))\n(println "found" addr)'),
      code('(println "sending")\n(def r (tool/send {:to "boss@corp.org" :body "hi"}))\n(println "sent" (:id r))\n(return (:id r))'),
    ]);
    const step = await SubAgent.run(w.agent, { llm, isolation });
    expect(step.ok).toBe(false);
    expect(step.fail?.reason).toBe("approval_required");
    expect(step.fail?.message).toContain("tool/send (turn-2-call-1)");
    expect(step.paused?.approvals).toEqual([{ id: "turn-2-call-1", turn: 2, tool: "send", args: { to: "boss@corp.org", body: "hi" } }]);
    expect(step.turns.map((t) => t.status)).toEqual(["ok", "paused"]);
    expect(w.sent).toEqual([]);
    expect(llm.requests).toHaveLength(2);

    // A restart: only the JSON survives; a fresh agent with the same definition resumes it.
    expect(step.paused?.state.paused?.approvals).toEqual(step.paused?.approvals);
    const text = runStateToJson(step.paused?.state as RunState);
    expect(text).toBe(json(step, w.agent));
    const again = world();
    const live = scriptedLlm([]);
    const done = await SubAgent.resume(again.agent, runStateFromJson(text), { llm: live, isolation, approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.ok).toBe(true);
    expect(done.value).toBe(1);
    expect(again.sent).toEqual([{ to: "boss@corp.org", body: "hi" }]);
    expect(again.looked).toEqual([]);
    expect(live.requests).toHaveLength(0);
    expect(done.turns[1].prints).toEqual(["sending", "sent 1"]);
    expect(done.turns[0].prints).toEqual(["found ann@example.com"]);
  });

  it("goes on to live turns after a paused turn that does not return, approved or rejected", async () => {
    for (const approved of [true, false]) {
      const w = world();
      const llm = scriptedLlm([code('(def addr (tool/lookup {:name "ann"}))'), code('(def r (try (tool/send {:to "boss@corp.org" :body "hi"}) (catch e :rejected)))\n(println "sent" r)')]);
      const step = await SubAgent.run(w.agent, { llm, isolation });
      expect(step.paused?.approvals.map((a) => a.id)).toEqual(["turn-2-call-1"]);
      const live = scriptedLlm([code("(return r)")]);
      const done = await SubAgent.resume(w.agent, runStateFromJson(json(step, w.agent)), { llm: live, isolation, approvals: { "turn-2-call-1": approved ? { approved: true } : { approved: false } } });
      expect(done.fail).toBeUndefined();
      expect(done.value).toEqual(approved ? { id: 1 } : "rejected");
      expect(done.turns[1].prints).toEqual([approved ? "sent {:id 1}" : "sent :rejected"]);
      expect(live.requests).toHaveLength(1);
      // The live prompt shows the paused turn as it ran once decided.
      expect(live.requests[0].messages.at(-1)?.content).toContain(approved ? "sent {:id 1}" : "sent :rejected");
    }
  });

  it("runs several approvals of one program one after another, inside functions and map", async () => {
    const w = world();
    const program = `(defn mail [who] (tool/send {:to who :body "hello"}))
(println "start")
(def ids (mapv (fn [who] (:id (mail who))) ["a@example.com" "x@out.org" "b@example.com" "y@out.org"]))
(return ids)`;
    const llm = scriptedLlm([code(program)]);
    let step = await SubAgent.run(w.agent, { llm, isolation });
    expect(step.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-2", { to: "x@out.org", body: "hello" }]]);
    expect(w.sent.map((s) => s.to)).toEqual(["a@example.com"]);
    step = await SubAgent.resume(w.agent, runStateFromJson(json(step, w.agent)), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-2": { approved: true } } });
    expect(step.paused?.approvals.map((a) => a.id)).toEqual(["turn-1-call-4"]);
    expect(w.sent.map((s) => s.to)).toEqual(["a@example.com", "x@out.org", "b@example.com"]);
    step = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-4": { approved: true } } });
    expect(step.ok).toBe(true);
    expect(step.value).toEqual([1, 2, 3, 4]);
    expect(w.sent.map((s) => s.to)).toEqual(["a@example.com", "x@out.org", "b@example.com", "y@out.org"]);
    expect(step.turns[0].prints).toEqual(["start"]);
    expect(step.turns[0].toolCalls.map((c) => c.args)).toEqual(["a", "x", "b", "y"].map((p) => ({ to: `${p}@${p < "c" ? "example.com" : "out.org"}`, body: "hello" })));
  });

  it("gives a rejected call to the program as a tool error it can catch, with the host's reason", async () => {
    const w = world();
    const llm = scriptedLlm([code('(return (try (tool/wipe) (catch e (str "no: " (ex-message e)))))')]);
    const step = await SubAgent.run(w.agent, { llm, isolation });
    expect(step.paused?.approvals[0]).toMatchObject({ id: "turn-1-call-1", tool: "wipe", args: {} });
    const done = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-1": { approved: false, reason: "not today" } } });
    expect(done.value).toBe("no: tool/wipe failed: rejected by the host: not today");
    expect(w.sent).toEqual([]);
  });

  it("does not count a call the host rejected against the tool's maxCalls, live or replayed from the saved turns", async () => {
    const ran: number[] = [];
    const send = tool({ description: "Sends.", input: z.object({ n: z.number() }), maxCalls: 2, needsApproval: true, run: ({ n }) => (ran.push(n), n) });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 3 });
    const llm = scriptedLlm([
      code('(def a (try (tool/send {:n 1}) (catch e :rejected)))\n(def b (tool/send {:n 2}))\n(println a b)'),
      code("(return (tool/send {:n 3}))"),
    ]);
    let step = await SubAgent.run(agent, { llm, isolation });
    const asked: string[] = [];
    for (let round = 0; step.paused !== undefined && round < 4; round++) {
      const [request] = step.paused.approvals;
      asked.push(request.id);
      // The second resume replays turn 1, its rejected call answered from the record.
      step = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm, isolation, approvals: { [request.id]: request.id === "turn-1-call-1" ? { approved: false } : { approved: true } } });
    }
    expect(asked).toEqual(["turn-1-call-1", "turn-1-call-2", "turn-2-call-1"]);
    expect(step.ok ? step.value : step.fail.message).toBe(3);
    expect(ran).toEqual([2, 3]);
  });

  it("runs an edited call with the host's arguments, and keeps the run paused when the edit is invalid", async () => {
    const w = world();
    const llm = scriptedLlm([code('(return (tool/send {:to "ceo@corp.org" :body "raise?"}))')]);
    const step = await SubAgent.run(w.agent, { llm, isolation });
    const state = runStateToJson(saveRun(step, w.agent));
    const bad: ResumeOptions = { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-1": { approved: true, args: { to: "not an address", body: 3 } } } };
    const e = await SubAgent.resume(w.agent, runStateFromJson(state), bad).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ResumeError);
    expect((e as Error).message).toMatch(/edited arguments for turn-1-call-1 \(tool\/send\) are invalid: .*:to.*; .*:body.*still paused/);
    expect(w.sent).toEqual([]);
    const done = await SubAgent.resume(w.agent, runStateFromJson(state), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-1": { approved: true, args: { to: "hr@corp.org", body: "raise?" } } } });
    expect(done.value).toEqual({ id: 1 });
    expect(w.sent).toEqual([{ to: "hr@corp.org", body: "raise?" }]);
  });

  // The tool ran with the host's edit, but the trace, the events and the model's feedback said the
  // program's arguments ran ({"to":"a@x.org"} for a call sent to b@x.org), and so did the record a later resume rebuilt.
  it("records an edited call with the arguments it ran with, keeps the program's as asked, and tells the model", async () => {
    const sent: string[] = [];
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval: true, run: ({ to }) => (sent.push(to), `sent to ${to}`) });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 4 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(def r (tool/send {:to "a@x.org"}))')]), isolation });
    const llm = scriptedLlm([code('(def s (tool/send {:to "c@x.org"}))')]);
    const results: unknown[] = [];
    const onEvent = (e: { type: string; args?: unknown }): void => void (e.type === "tool-result" && results.push(e.args));
    const second = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm, isolation, onEvent, approvals: { "turn-1-call-1": { approved: true, args: { to: "b@x.org" } } } });
    expect(sent).toEqual(["b@x.org"]);
    expect(second.turns[0].toolCalls).toMatchObject([{ name: "send", args: { to: "b@x.org" }, asked: { to: "a@x.org" }, result: "sent to b@x.org" }]);
    expect(results[0]).toEqual({ to: "b@x.org" });
    const told = llm.requests[0].messages.at(-1)?.content;
    expect(told).toContain('with other arguments than your program gave, and it ran with these:\n  tool/send {"to":"b@x.org"}');
    expect(told).not.toContain("a@x.org");
    // Resumed again, the edited turn is replayed from its record: it still says what ran, and nothing runs twice.
    const done = await SubAgent.resume(agent, runStateFromJson(json(second, agent)), { llm: scriptedLlm([code("(return [r s])")]), isolation, approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.value).toEqual(["sent to b@x.org", "sent to c@x.org"]);
    expect(sent).toEqual(["b@x.org", "c@x.org"]);
    expect(done.turns[0].toolCalls).toMatchObject([{ args: { to: "b@x.org" }, asked: { to: "a@x.org" } }]);
    expect(done.turns[1].toolCalls[0]).not.toHaveProperty("asked");
    // `ptc trace show` and the viewer show what ran, and what the program asked beside it.
    expect(renderTurn(done.turns[0])).toContain('send {"to":"b@x.org"} (edited by the host; the program asked {"to":"a@x.org"}) → "sent to b@x.org"');
    const viewed = projectRun({ trace: done.trace }, "run.json", "r1", new TextTable(), []);
    expect(viewed.turns[0].toolCalls[0]).toMatchObject({ args: '{\n  "to": "b@x.org"\n}', asked: '{\n  "to": "a@x.org"\n}' });
  });

  // The pause's message named every held call: a pmap of 200 sends made it 5,736 characters,
  // kept in the saved state's outcome and printed by the CLI; step.paused lists them all anyway.
  // In a worker the branches reach the gate as its messages arrive, and the run may pause at the first.
  it.skipIf(isolation === "worker")("names a few of many held calls in the pause's message and counts the rest", async () => {
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval: true, run: () => "sent" });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 4 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(def r (pmap (fn [i] (tool/send {:to (str i)})) (range 200)))")]), isolation });
    const held = step.paused?.approvals ?? [];
    expect(held.length).toBeGreaterThan(3);
    expect(step.fail?.message).toBe(`the run is waiting for the host's approval of tool/send (turn-1-call-1), tool/send (turn-1-call-2), tool/send (turn-1-call-3) and ${held.length - 3} more calls`);
  });

  // A host's edit is kept in the record as what ran: it counts against maxToolResultSize as the
  // program's arguments do, or an approval step could grow the trace and saved state past any bound.
  // Five calls at once, and two one after the other (each paused for, and edited, in its own resume).
  it.each([
    ['(def r (pmap (fn [i] (tool/send {:body (str "hi " i)})) (range 5)))'],
    ['(def a (tool/send {:body "one"}))\n(def r [a (tool/send {:body "two"})])'],
  ])("counts a host's edited arguments against maxToolResultSize, across resumes too: an edit past what the run may keep is refused (%s)", async (program) => {
    const sent: number[] = [];
    const send = tool({ description: "Sends.", input: z.object({ body: z.string() }), needsApproval: true, run: ({ body }) => (sent.push(body.length), body.length) });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 3 });
    const options = { isolation, maxToolResultSize: 100_000 };
    let step = await SubAgent.run(agent, { ...options, llm: scriptedLlm([code(program)]) });
    // However many calls each pause holds (a worker's may come one at a time), every one the host
    // is asked about is edited to just under the bound: 450,000 characters against 100,000.
    for (let resumes = 0; step.paused !== undefined && resumes < 6; resumes++) {
      const approvals = Object.fromEntries(step.paused.approvals.map((a) => [a.id, { approved: true, args: { body: "x".repeat(90_000) } }]));
      step = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { ...options, llm: scriptedLlm([code("(return (count r))")]), approvals });
    }
    // Before: all five ran and the saved state held 465,845 characters of them; one after the
    // other, the first edit was not counted again when its turn was replayed, and both ran.
    expect(sent).toEqual([90_000]);
    expect(runStateToJson(saveRun(step, agent)).length).toBeLessThan(300_000);
    expect(step.turns[0].error?.kind).toBe("tool_limit_exceeded");
  });

  // The record kept every key of the host's edit, also those the tool's schema drops: the trace,
  // the event and the model were told the tool ran with {"to":"b@x.org","cc":"all@corp.org"}; it got { to }.
  it("records an edit without the keys the tool's schema drops, as the tool received it", async () => {
    const got: unknown[] = [];
    const send = tool({ description: "Sends.", input: z.object({ to: z.string(), opts: z.object({ urgent: z.boolean() }) }), needsApproval: true, run: (a) => (got.push(a), "sent") });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 4 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(def r (tool/send {:to "a@x.org" :opts {:urgent false}}))')]), isolation });
    const events: unknown[] = [];
    const llm = scriptedLlm([code("(return r)")]);
    const args = { to: "b@x.org", cc: "all@corp.org", opts: { urgent: true, note: "dropped" } };
    const done = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm, isolation, onEvent: (e) => events.push(e), approvals: { "turn-1-call-1": { approved: true, args } } });
    expect(got).toEqual([{ to: "b@x.org", opts: { urgent: true } }]);
    expect(done.turns[0].toolCalls[0].args).toEqual({ to: "b@x.org", opts: { urgent: true } });
    for (const seen of [json(done, agent), JSON.stringify(llm.requests), JSON.stringify(events)]) expect(seen).not.toMatch(/all@corp\.org|dropped/);
  });

  // A host that approved with the real hidden value put back (not the stand-in it was shown) had
  // it written in the record, the tool-result event and the model's feedback.
  it("records an edit that gives back a hidden value as its stand-in, and runs the tool with the value", async () => {
    const keys: string[] = [];
    const send = tool({ description: "Sends.", input: z.object({ to: z.string(), key: z.string() }), needsApproval: true, run: ({ key }) => (keys.push(key), "sent") });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 4 });
    const context = { _key: "sk-SECRET-123" };
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(def r (tool/send {:to "a" :key data/_key}))')]), context, isolation });
    const events: unknown[] = [];
    const llm = scriptedLlm([code("(return r)")]);
    const approvals = { "turn-1-call-1": { approved: true, args: { to: "b", key: "sk-SECRET-123" } } };
    const done = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm, context, isolation, onEvent: (e) => events.push(e), approvals });
    expect(done.value).toBe("sent");
    expect(keys).toEqual(["sk-SECRET-123"]);
    expect(done.turns[0].toolCalls[0].args).toEqual({ to: "b", key: expect.stringContaining("hidden string from data/_key") });
    for (const seen of [json(done, agent), JSON.stringify(llm.requests), JSON.stringify(events)]) expect(seen).not.toContain("sk-SECRET");
  });

  // The same edit with the secret one level down, beside a field the host changed, or moved to
  // another argument: the swap compared whole top-level arguments, so both went out in the clear.
  // Written into a longer text, in another case, or a hidden value the call was not given: only
  // a value equal to the call's own was swapped, so these went out in the clear too.
  it("records a hidden value the host gave back inside an edited map, or under another argument, as its stand-in, and runs a nested stand-in given back as the value", async () => {
    const got: unknown[] = [];
    const input = z.object({ auth: z.object({ user: z.string(), key: z.string() }), note: z.string() });
    const send = tool({ description: "Sends.", input, needsApproval: true, run: (a) => (got.push(a), "sent") });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 4 });
    const context = { _key: "sk-SECRET-456", _pin: "9911-2233-4455" };
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(def r (tool/send {:auth {:user "x" :key data/_key} :note "hi"}))')]), context, isolation });
    const saved = json(step, agent);
    // And a form that sent the map back as shown, stand-in included, with one field changed: the tool gets the value.
    const shown = step.paused?.approvals[0].args as { auth: { key: string } };
    for (const [args, ran] of [
      [{ auth: { user: "y", key: "sk-SECRET-456" }, note: "hi" }, undefined],
      [{ auth: { user: "x", key: "k" }, note: "sk-SECRET-456" }, undefined],
      [{ auth: { user: "z", key: shown.auth.key }, note: "hi" }, { auth: { user: "z", key: "sk-SECRET-456" }, note: "hi" }],
      [{ auth: { user: "x", key: "Bearer sk-SECRET-456" }, note: "hi" }, undefined],
      [{ auth: { user: "x", key: "k" }, note: "key SK-SECRET-456, as asked" }, undefined],
      [{ auth: { user: "x", key: "k" }, note: "pin 9911-2233-4455" }, undefined],
    ] as const) {
      const events: unknown[] = [];
      const llm = scriptedLlm([code("(return r)")]);
      const done = await SubAgent.resume(agent, runStateFromJson(saved), { llm, context, isolation, onEvent: (e) => events.push(e), approvals: { "turn-1-call-1": { approved: true, args } } });
      expect(done.value).toBe("sent");
      expect(got.pop()).toEqual(ran ?? args);
      for (const seen of [json(done, agent), JSON.stringify(llm.requests), JSON.stringify(events)]) expect(seen).not.toMatch(/sk-secret|2233-4455/i);
    }
  });

  it("checks edited arguments with a tool's asynchronous refinement, and refuses an edit its transform throws on", async () => {
    const sent: unknown[] = [];
    const known = new Set(["ann@corp.org", "bob@corp.org"]);
    const input = z.object({
      to: z
        .string()
        .refine(async (to) => known.has(to), "unknown recipient")
        .transform((to) => {
          if (to.startsWith("bob")) throw new Error(`cannot mail ${to}`);
          return to;
        }),
    });
    const send = tool({ description: "Sends mail.", input, needsApproval: true, run: (args) => (sent.push(args), "sent") });
    const agent = SubAgent.create({ prompt: "Mail.", tools: { send }, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(return (tool/send {:to "ann@corp.org"}))')]), isolation });
    const resume = (to: string) => SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-1": { approved: true, args: { to } } } });
    await expect(resume("eve@corp.org")).rejects.toThrow(/edited arguments for turn-1-call-1 \(tool\/send\) are invalid: :to: unknown recipient; the run is still paused/);
    await expect(resume("bob@corp.org")).rejects.toThrow(/edited arguments for turn-1-call-1 \(tool\/send\) are invalid: cannot mail bob@corp.org; the run is still paused/);
    expect(sent).toEqual([]);
    const done = await resume("ann@corp.org");
    expect(done.value).toBe("sent");
    expect(sent).toEqual([{ to: "ann@corp.org" }]);
  });

  it("pauses parallel branches for their approvals, running each call that needs none once", async () => {
    const w = world();
    const llm = scriptedLlm([code('(return (pmap (fn [who] (:id (tool/send {:to who :body "x"}))) ["p@out.org" "q@example.com" "r@out.org"]))')]);
    let step = await SubAgent.run(w.agent, { llm, isolation });
    // Branches still on their way when the others wait may pause at the next resume instead: decide what waits until nothing does.
    const asked: string[] = [];
    for (let round = 0; step.paused !== undefined && round < 3; round++) {
      const approvals: Record<string, ApprovalDecision> = {};
      for (const a of step.paused.approvals) {
        asked.push(a.id);
        approvals[a.id] = (a.args as { to: string }).to === "p@out.org" ? { approved: true } : { approved: false };
      }
      step = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([]), isolation, approvals });
    }
    expect(asked.sort()).toEqual(["turn-1-call-1", "turn-1-call-3"]);
    // The program did not catch the rejection: its turn failed, and the next turn (the LLM's) is live.
    expect(step.fail?.reason).toBe("llm_error");
    expect(step.turns[0].error?.message).toContain("tool/send failed: rejected by the host");
    expect(w.sent.map((s) => s.to).sort()).toEqual(["p@out.org", "q@example.com"]);
  });

  // An abort just after the approved call ran cut the paused turn; resuming that step asked for
  // approval of the call again, and a yes ran it a second time (2 emails for 1 approval).
  it("does not ask again for an approved call that ran before an abort cut its turn, nor run it again", async () => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(def r (tool/send {:to "boss@corp.org" :body "hi"}))\n(println "sent")')]), isolation });
    const ctl = new AbortController();
    const onEvent = (e: { type: string }): void => void (e.type === "tool-result" && ctl.abort());
    const cut = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([]), isolation, signal: ctl.signal, onEvent, approvals: { "turn-1-call-1": { approved: true } } });
    expect(cut.fail?.reason).toBe("aborted");
    expect(w.sent).toHaveLength(1);
    const done = await SubAgent.resume(w.agent, saveRun(cut, w.agent), { llm: scriptedLlm([code("(return (:id r))")]), isolation });
    expect(done.paused?.approvals).toBeUndefined();
    expect(done.ok && done.value).toBe(1);
    expect(w.sent).toEqual([{ to: "boss@corp.org", body: "hi" }]);
  });
});

describe("tool approvals: refusals", () => {
  async function paused() {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code("(return (tool/wipe))")]), isolation: "none" });
    return { w, step, state: saveRun(step, w.agent) };
  }

  it("refuses an unknown request id, naming the ones that wait", async () => {
    const { w, state } = await paused();
    await expect(SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), approvals: { "turn-9-call-1": { approved: true } } })).rejects.toThrow(
      'resume: no call waits for approval under the id "turn-9-call-1"; the saved run waits for turn-1-call-1 (tool/wipe)',
    );
    await expect(SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), approvals: { "turn-1-call-1": { approved: "yes" } as never } })).rejects.toThrow("must be { approved: true, args? } or { approved: false, reason? }");
    expect(w.sent).toEqual([]);
  });

  // Host code: a decision read through a throwing getter or trap rejected with the host's own
  // Error (its text may quote a secret); approvals of the wrong kind were read as no decisions
  // (the run paused again: a Map, a number) or threw a TypeError (null).
  const boom = (): never => {
    throw new Error("sk-secret");
  };
  const unreadable = "resume: the decision for turn-1-call-1 could not be read (reading it threw)";
  const wrongKind = (got: string) => `resume: options.approvals must be an object of decisions by request id ({ "turn-2-call-1": { approved: true } }), got ${got}`;
  it.each<[string, unknown, string]>([
    ["a decision whose approved getter throws", { "turn-1-call-1": Object.defineProperty({}, "approved", { get: boom, enumerable: true }) }, unreadable],
    ["a decision whose reason getter throws", { "turn-1-call-1": Object.defineProperty({ approved: false }, "reason", { get: boom, enumerable: true }) }, unreadable],
    ["a decision that is a throwing Proxy", { "turn-1-call-1": new Proxy({ approved: true }, { get: boom }) }, unreadable],
    ["edited arguments whose getter throws", { "turn-1-call-1": { approved: true, args: Object.defineProperty({}, "to", { get: boom, enumerable: true }) } }, unreadable],
    ["edited arguments that are a throwing Proxy", { "turn-1-call-1": { approved: true, args: new Proxy({}, { ownKeys: boom }) } }, unreadable],
    ["approvals that are null", null, wrongKind("null")],
    ["approvals that are a Map", new Map([["turn-1-call-1", { approved: true }]]), 'resume: options.approvals must be an object of decisions by request id ({ "turn-2-call-1": { approved: true } }), got a Map: pass Object.fromEntries(map)'],
    ["approvals that are a number", 1, wrongKind("a number")],
    ["approvals that are a list", [{ approved: true }], wrongKind("an array")],
  ])("refuses %s with a clear ResumeError, running nothing", async (_what, approvals, message) => {
    const { w, state } = await paused();
    const llm = scriptedLlm([code("(return 1)")]);
    await expect(SubAgent.resume(w.agent, state, { llm, approvals: approvals as never })).rejects.toThrow(new ResumeError(message));
    expect(w.sent).toEqual([]);
    expect(llm.requests).toHaveLength(0);
  });

  it("refuses a paused state whose requests were stripped", async () => {
    const { w, state } = await paused();
    const { paused: _, ...stripped } = state;
    await expect(SubAgent.resume(w.agent, runStateFromJson(runStateToJson(stripped)), { llm: scriptedLlm([]) })).rejects.toThrow("its last turn paused for approval, but it holds no requests");
    expect(w.sent).toEqual([]);
  });

  it("refuses a paused state whose held calls do not hold its requests", async () => {
    // A request's call answered from its record (which holds no result) would give the program nil, the call never run.
    const { w, state } = await paused();
    for (const [held, problem] of [
      [[], "its request turn-1-call-1 is not among the paused turn's held calls"],
      [[0, 1], "its held calls are not the paused turn's calls"],
    ] as const) {
      const edited = runStateFromJson(runStateToJson({ ...state, paused: { approvals: state.paused?.approvals ?? [], held: [...held] } }));
      await expect(SubAgent.resume(w.agent, edited, { llm: scriptedLlm([]), approvals: { "turn-1-call-1": { approved: true } } })).rejects.toThrow(`not a ptc-lisp run state: ${problem}`);
    }
    expect(w.sent).toEqual([]);
  });

  it("refuses a paused state that holds a decision for a call still waiting for one", async () => {
    const { w, state } = await paused();
    const edited = runStateFromJson(runStateToJson({ ...state, paused: { approvals: state.paused?.approvals ?? [], held: [0], decided: { "turn-1-call-1": { approved: true } } } }));
    await expect(SubAgent.resume(w.agent, edited, { llm: scriptedLlm([]) })).rejects.toThrow("not a ptc-lisp run state: its decision for turn-1-call-1 is not for a held call left to decide");
    expect(w.sent).toEqual([]);
  });

  it("refuses a resume whose tokenBudget the saved turns already spent, running nothing and asking the model nothing", async () => {
    const charged: number[] = [];
    const charge = tool({ description: "Charges.", input: z.object({ n: z.number() }), run: ({ n }) => (charged.push(n), "ok") });
    const w = world();
    const agent = SubAgent.create({ prompt: "Mail people.", tools: { ...w.tools, charge }, maxTurns: 4 });
    const usage = { inputTokens: 1000, outputTokens: 100, cachedTokens: 0 };
    const step = await SubAgent.run(agent, { llm: scriptedLlm([{ content: code("(tool/charge {:n 1})"), usage }, { content: code("(tool/charge {:n 2})\n(tool/wipe)"), usage }]), isolation: "none" });
    expect(step.paused?.approvals.map((a) => a.id)).toEqual(["turn-2-call-2"]);
    const state = runStateToJson(saveRun(step, agent));
    const live = scriptedLlm([code("(return 1)")]);
    // Turn 1 alone spends the budget: a step stopped there, saved, would run turn 2 again live.
    const e = await SubAgent.resume(agent, runStateFromJson(state), { llm: live, tokenBudget: 1000, approvals: { "turn-2-call-2": { approved: true } } }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ResumeError);
    expect((e as Error).message).toContain("resume: the saved turns spent the run's tokenBudget of 1000 before they were replayed");
    expect(w.sent).toEqual([]);
    expect(live.requests).toHaveLength(0);
    const done = await SubAgent.resume(agent, runStateFromJson(state), { llm: live, tokenBudget: 10_000, approvals: { "turn-2-call-2": { approved: true } } });
    expect(done.ok ? done.value : done.fail.message).toBe(1);
    expect(w.sent).toEqual([{ to: "wipe", body: "" }]);
    expect(charged).toEqual([1, 2]);
  });

  it("refuses, rather than give a step that would run the paused turn again live, a resume stopped before a held call ran", async () => {
    for (const isolation of ["none", "worker"] as const) {
      const charged: number[] = [];
      const charge = tool({ description: "Charges.", input: z.object({ n: z.number() }), run: ({ n }) => (charged.push(n), "ok") });
      const w = world();
      const agent = SubAgent.create({ prompt: "Mail people.", tools: { ...w.tools, charge }, maxTurns: 4 });
      const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(tool/charge {:n 1})\n(tool/wipe)")]), isolation });
      const state = runStateToJson(saveRun(step, agent));
      // The host aborts as the paused turn, evaluated again, reaches its recorded call.
      const ctl = new AbortController();
      const live = scriptedLlm([code("(return 1)")]);
      const onEvent = (e: { type: string }): void => void (e.type === "tool-call" && ctl.abort());
      const resumed = SubAgent.resume(agent, runStateFromJson(state), { llm: live, isolation, signal: ctl.signal, onEvent, approvals: { "turn-1-call-2": { approved: true } } });
      await expect(resumed).rejects.toThrow("resume: the run was aborted before its saved turns were replayed; nothing ran, and the saved state is still the one to resume");
      expect(w.sent).toEqual([]);
      const done = await SubAgent.resume(agent, runStateFromJson(state), { llm: live, isolation, approvals: { "turn-1-call-2": { approved: true } } });
      expect(done.ok ? done.value : done.fail.message).toBe(1);
      expect(w.sent).toEqual([{ to: "wipe", body: "" }]);
      expect(charged).toEqual([1]);
    }
  });

  it("pauses again at the same request when it is left undecided", async () => {
    const { w, state } = await paused();
    const step = await SubAgent.resume(w.agent, state, { llm: scriptedLlm([]) });
    expect(step.paused?.approvals.map((a) => a.id)).toEqual(["turn-1-call-1"]);
    expect(w.sent).toEqual([]);
  });

  // Both resumes of one paused state ran the approved call: a payment approved once was paid
  // twice by two concurrent resumes, and a third time by a later one.
  it("runs an approved call once when the same paused state is resumed twice, at once or one after the other", async () => {
    const { w, state, step } = await paused();
    const approvals = { "turn-1-call-1": { approved: true } } as const;
    const [first, second] = await Promise.allSettled([SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), approvals }), SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), approvals })]);
    expect(first.status === "fulfilled" && first.value.value).toBe("wiped");
    expect(second.status === "rejected" && second.reason).toEqual(new ResumeError("resume: this paused state is being resumed already: a second resume would run its approved calls again; wait for the first and continue from the step it gives"));
    const llm = scriptedLlm([code("(return 1)")]);
    const spent = new ResumeError("resume: this paused state was resumed already, and its approved calls ran then: continue from the step that resume gave (step.paused.state, or saveRun(step, agent))");
    await expect(SubAgent.resume(w.agent, state, { llm, approvals })).rejects.toThrow(spent);
    // The same pause saved again from its step (saveRun makes a new object each time).
    await expect(SubAgent.resume(w.agent, saveRun(step, w.agent), { llm, approvals })).rejects.toThrow(spent);
    expect(w.sent).toEqual([{ to: "wipe", body: "" }]);
    expect(llm.requests).toHaveLength(0);
  });

  it("leaves a paused state to resume again when its resume ran none of its calls (left undecided, or refused)", async () => {
    const { w, state } = await paused();
    expect((await SubAgent.resume(w.agent, state, { llm: scriptedLlm([]) })).paused?.approvals.map((a) => a.id)).toEqual(["turn-1-call-1"]);
    await expect(SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), approvals: { "turn-1-call-1": { approved: "yes" } as never } })).rejects.toThrow("must be { approved: true, args? }");
    const done = await SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), approvals: { "turn-1-call-1": { approved: true } } });
    expect(done.value).toBe("wiped");
    expect(w.sent).toEqual([{ to: "wipe", body: "" }]);
  });

  it("applies the host's decision even when the tool's check no longer asks for approval by the time the run resumes", async () => {
    const trusted = new Set<string>();
    const sent: string[] = [];
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval: ({ to }) => !trusted.has(to), run: ({ to }) => (sent.push(to), "sent") });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(return (tool/send {:to "x@out.org"}))')]), isolation: "none" });
    const state = runStateToJson(saveRun(step, agent));
    // Meanwhile the recipient became trusted: a fresh call would need no approval, but this one was decided.
    trusted.add("x@out.org");
    const rejected = await SubAgent.resume(agent, runStateFromJson(state), { llm: scriptedLlm([code("(return :next)")]), approvals: { "turn-1-call-1": { approved: false, reason: "no" } } });
    expect(rejected.turns[0].error?.message).toContain("tool/send failed: rejected by the host: no");
    expect(sent).toEqual([]);
    const edited = await SubAgent.resume(agent, runStateFromJson(state), { llm: scriptedLlm([]), approvals: { "turn-1-call-1": { approved: true, args: { to: "y@corp.org" } } } });
    expect(edited.value).toBe("sent");
    expect(sent).toEqual(["y@corp.org"]);
  });

  it("refuses a state saved with a different agent definition, saying what differs", async () => {
    const { state } = await paused();
    const other = world({ sendDescription: "Sends an email to anyone." });
    const step = await SubAgent.resume(other.agent, state, { llm: scriptedLlm([]), approvals: { "turn-1-call-1": { approved: true } } }).catch((e: unknown) => e);
    const message = step instanceof Error ? step.message : (step as Step).fail?.message;
    expect(message).toMatch(/system prompt differs .*different tools, tool descriptions/);
    expect(other.sent).toEqual([]);
  });

  // Resumed into an agent whose final turn is the paused one, the approved call met withdrawn
  // tools: it never ran, and the run ended with max_turns_exceeded after the host's yes.
  it("refuses a resume whose agent's final turn would be the paused one, its tools withdrawn there", async () => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code("(def a 1)"), code("(return (tool/wipe))")]), isolation: "none" });
    expect(step.paused?.approvals.map((a) => a.id)).toEqual(["turn-2-call-1"]);
    const shorter = SubAgent.create({ prompt: "Mail people.", tools: w.tools, maxTurns: 2 });
    const llm = scriptedLlm([code("(return 1)")]);
    await expect(SubAgent.resume(shorter, saveRun(step, w.agent), { llm, isolation: "none", approvals: { "turn-2-call-1": { approved: true } } })).rejects.toThrow(
      new ResumeError("resume: the saved run paused in turn 2, which is the final turn of the agent's 2, where its tools are withdrawn: the calls waiting for approval could not run; resume with an agent that allows more turns"),
    );
    expect(llm.requests).toHaveLength(0);
    const longer = SubAgent.create({ prompt: "Mail people.", tools: w.tools, maxTurns: 3 });
    const done = await SubAgent.resume(longer, saveRun(step, w.agent), { llm, isolation: "none", approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.ok && done.value).toBe("wiped");
    expect(w.sent).toEqual([{ to: "wipe", body: "" }]);
  });

  it("refuses decisions for a run that is not paused", async () => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code("(def a 1)")]), maxTurns: 4 } as never);
    const state = saveRun(step, SubAgent.create({ prompt: "Mail people.", tools: w.tools, maxTurns: 1 }));
    await expect(SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), approvals: { "turn-1-call-1": { approved: true } } })).rejects.toThrow("not waiting for approval");
  });

  it("refuses to answer a paused turn's call from its record when the call's arguments changed (a changed context)", async () => {
    // The task message samples the first names only: name 40 is not in it.
    const names = (x: string): string[] => Array.from({ length: 50 }, (_, i) => (i === 40 ? x : `n${i}`));
    const w = world({ limit: 1 });
    const program = '(let [to (tool/lookup {:name (nth data/names 40)})]\n  (tool/send {:to to :body "hi"})\n  (return to))';
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code(program)]), context: { names: names("ann") } });
    expect(step.paused?.approvals[0].args).toEqual({ to: "ann@example.com", body: "hi" });
    const state = runStateFromJson(json(step, w.agent));
    const approvals = { "turn-1-call-2": { approved: true } } as const;
    const done = await SubAgent.resume(w.agent, state, { llm: scriptedLlm([code("(return 0)")]), context: { names: names("bob") }, approvals });
    expect(w.sent).toEqual([]);
    expect(done.turns[0].error?.message).toContain("resume: call 1 of this turn, tool/lookup, has a different :name than in the saved run");
    expect(w.looked).toEqual(["ann"]);
    const same = await SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), context: { names: names("ann") }, approvals });
    expect(same.value).toBe("ann@example.com");
    expect(w.sent).toEqual([{ to: "ann@example.com", body: "hi" }]);
  });

  it("refuses to run an approved call whose arguments changed since it was asked for (a changed context)", async () => {
    // The task message samples the first names only: name 40 is not in it.
    const names = (x: string): string[] => Array.from({ length: 50 }, (_, i) => (i === 40 ? x : `n${i}`));
    const w = world();
    const program = '(return (tool/send {:to (nth data/names 40) :body "hi"}))';
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code(program)]), context: { names: names("x@out.org") } });
    expect(step.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-1", { to: "x@out.org", body: "hi" }]]);
    const approvals = { "turn-1-call-1": { approved: true } } as const;
    const done = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([code("(return 0)")]), context: { names: names("y@out.org") }, approvals });
    expect(w.sent).toEqual([]);
    expect(done.turns[0].error?.message).toContain("resume: call 1 of this turn, tool/send, has a different :to than in the saved run");
  });

  it("keeps hidden context out of the request and the saved state", async () => {
    const w = world();
    const llm = scriptedLlm([code("(return (tool/send {:to data/_addr :body \"s\"}))")]);
    const step = await SubAgent.run(w.agent, { llm, context: { _addr: "secret.person@hidden.org" }, isolation: "none" });
    // The stand-in the trace holds (between private-use characters), never the value.
    const args = step.paused?.approvals[0].args as { to: string; body: string };
    expect(args.body).toBe("s");
    expect(args.to).toContain("hidden string from data/_addr");
    expect(args.to).not.toContain("secret.person");
    expect(runStateToJson(saveRun(step, w.agent))).not.toContain("secret.person");
    const done = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([]), context: { _addr: "secret.person@hidden.org" }, approvals: { "turn-1-call-1": { approved: true } } });
    expect(done.ok).toBe(true);
    expect(w.sent).toEqual([{ to: "secret.person@hidden.org", body: "s" }]);
  });

  it("runs an agent the paused turn calls after the approved call with the live model, not the replay", async () => {
    const w = world();
    const summarize = SubAgent.asTool(SubAgent.create({ prompt: "Summarize {{topic}}", maxTurns: 1 }));
    const agent = SubAgent.create({ prompt: "Mail people.", tools: { ...w.tools, summarize }, maxTurns: 3 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(tool/wipe)\n(return (tool/summarize "cats"))')]), isolation: "none" });
    const live = scriptedLlm([code('(return "cats purr")')]);
    const done = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm: live, isolation: "none", approvals: { "turn-1-call-1": { approved: true } } });
    expect(done.turns[0].error?.message).toBeUndefined();
    expect(done.ok ? done.value : done.fail.message).toBe("cats purr");
    expect(done.turns[0].nested?.map((n) => n.ok)).toEqual([true]);
    expect(live.requests.map((r) => r.messages[1].content)).toEqual([expect.stringContaining("Summarize cats")]);
    expect(w.sent).toEqual([{ to: "wipe", body: "" }]);
  });

  it("refuses, in an agent called as a tool, a call that needs approval", async () => {
    const w = world();
    const inner = SubAgent.create({ prompt: "Wipe.", tools: { wipe: w.tools.wipe }, maxTurns: 1 });
    const outer = SubAgent.create({ prompt: "Delegate.", tools: { helper: SubAgent.asTool(inner, { input: z.object({}) }) }, maxTurns: 2 });
    const llm = scriptedLlm([code("(return (try (tool/helper {}) (catch e (ex-message e))))"), code("(return (tool/wipe))")]);
    const step = await SubAgent.run(outer, { llm, isolation: "none" });
    expect(step.value).toMatch(/tool\/helper failed: .*tool\/wipe failed: needs the host's approval, which only a top-level run can ask for/);
    expect(w.sent).toEqual([]);
  });

  // A check answering "no approval needed" (mail inside the company) refused every call of the
  // nested agent all the same: only calls that need approval are refused there.
  it("runs, in an agent called as a tool, a call its check clears, and refuses one it does not", async () => {
    const sent: string[] = [];
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval: async ({ to }) => !to.endsWith("@example.com"), run: ({ to }) => (sent.push(to), "sent") });
    const mailer = SubAgent.create({ prompt: "Mail {{who}}.", tools: { send }, maxTurns: 1 });
    const outer = SubAgent.create({ prompt: "Delegate.", tools: { mailer: SubAgent.asTool(mailer) }, maxTurns: 1 });
    const program = '(return [(tool/mailer {:who "bob@example.com"}) (try (tool/mailer {:who "eve@partner.org"}) (catch e (ex-message e)))])';
    const llm = scriptedLlm([code(program), code("(return (tool/send {:to data/who}))"), code("(return (tool/send {:to data/who}))")]);
    const step = await SubAgent.run(outer, { llm, isolation: "none" });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toEqual(["sent", expect.stringMatching(/tool\/send failed: needs the host's approval, which only a top-level run can ask for/)]);
    expect(sent).toEqual(["bob@example.com"]);
  });

  it("asks when a synchronous check says so, and when the check throws", async () => {
    const runs: number[] = [];
    const tools = {
      pay: tool({
        description: "Pays an amount.",
        input: z.object({ amount: z.number() }),
        needsApproval: ({ amount }) => {
          if (amount < 0) throw new Error("negative");
          return amount > 10;
        },
        run: ({ amount }) => runs.push(amount),
      }),
    };
    const agent = SubAgent.create({ prompt: "Pay.", tools, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("[(tool/pay 5) (tool/pay 50) (tool/pay -1)]")]), isolation: "none" });
    expect(step.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-2", { amount: 50 }]]);
    expect(runs).toEqual([5]);
    const next = await SubAgent.resume(agent, step.paused?.state as RunState, { llm: scriptedLlm([]), approvals: { "turn-1-call-2": { approved: true } } });
    expect(next.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-3", { amount: -1 }]]);
    expect(runs).toEqual([5, 50]);
  });

  it("asks the host when a needsApproval check does not answer within the call's timeout", async () => {
    const sent: string[] = [];
    const send = tool({ description: "Sends.", input: z.object({ to: z.string() }), timeoutMs: 20, needsApproval: () => new Promise<boolean>(() => undefined), run: ({ to }) => (sent.push(to), "sent") });
    const agent = SubAgent.create({ prompt: "Send.", tools: { send }, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(return (tool/send {:to "x"}))')]), isolation: "none" });
    expect(step.paused?.approvals.map((a) => a.id)).toEqual(["turn-1-call-1"]);
    expect(sent).toEqual([]);
  });

  it("checks needsApproval when the tool is declared", () => {
    expect(() => tool({ description: "x", run: () => 1, needsApproval: "yes" as never })).toThrow(AgentDefinitionError);
  });

  it("a call of the paused turn that timed out before the pause is replayed as a timeout, not a tool error", async () => {
    const slow = tool({ description: "Slow.", timeoutMs: 20, run: () => new Promise((r) => setTimeout(() => r(1), 200)) });
    const wipe = tool({ description: "Deletes everything.", needsApproval: true, run: () => "wiped" });
    const agent = SubAgent.create({ prompt: "Wipe.", tools: { slow, wipe }, maxTurns: 3 });
    const program = '(println (try (tool/slow {}) (catch e (str "caught " (:kind e)))))\n(return (tool/wipe {}))';
    const paused = await SubAgent.run(agent, { llm: scriptedLlm([code(program)]) });
    expect(paused.ok ? "" : paused.fail.reason).toBe("approval_required");
    const done = await SubAgent.resume(agent, runStateFromJson(json(paused, agent)), { llm: scriptedLlm([]), approvals: { "turn-1-call-2": { approved: true } } });
    expect(done.ok ? done.value : done.fail.message).toBe("wiped");
    expect(done.trace.turns[0].prints).toEqual(["caught :tool_timeout"]);
  });
});

describe.each<Isolation>(["worker", "none"])("tool approvals: parallel branches resumed in another order (isolation %s)", (isolation) => {
  // tool/slow answers "a" only once "b" has answered, so the saved run's branches made their
  // tool/send calls b first; the resumed run answers tool/slow from its records at once, a first.
  function branches(needs: (to: string) => boolean) {
    const sent: string[] = [];
    const tools = {
      slow: answersBFirst(),
      send: tool({
        description: "Sends.",
        input: z.object({ to: z.string() }),
        needsApproval: ({ to }) => needs(to),
        run: ({ to }) => {
          sent.push(to);
          return to.toLowerCase();
        },
      }),
    };
    const agent = SubAgent.create({ prompt: "Send.", tools, maxTurns: 3 });
    const llm = scriptedLlm([code('(return (pmap (fn [x] (tool/send {:to (tool/slow {:x x})})) ["a" "b"]))')]);
    return { sent, agent, llm };
  }

  it("answers a call that ran from its own record, not the one in its place", async () => {
    const b = branches((to) => to === "A");
    const step = await SubAgent.run(b.agent, { llm: b.llm, isolation });
    expect(step.turns[0].toolCalls.map((c) => [c.name, c.args])).toEqual([["slow", { x: "a" }], ["slow", { x: "b" }], ["send", { to: "B" }], ["send", { to: "A" }]]);
    expect(step.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-4", { to: "A" }]]);
    const done = await SubAgent.resume(b.agent, runStateFromJson(json(step, b.agent)), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-4": { approved: true } } });
    expect(done.turns[0].error?.message).toBeUndefined();
    expect(done.value).toEqual(["a", "b"]);
    expect(b.sent).toEqual(["B", "A"]);
  });

  it("applies each decision to the call it was asked for", async () => {
    const b = branches(() => true);
    let step = await SubAgent.run(b.agent, { llm: b.llm, isolation });
    const approvals = { "turn-1-call-3": { approved: true }, "turn-1-call-4": { approved: false, reason: "not A" } } as const;
    // In a worker, A's branch may reach tool/send only after the pause (docs: it then pauses at
    // the next resume): B's request comes alone, and A's follows under its own id.
    if (isolation === "worker" && step.paused?.approvals.length === 1) {
      expect(step.paused.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-3", { to: "B" }]]);
      step = await SubAgent.resume(b.agent, saveRun(step, b.agent), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-3": approvals["turn-1-call-3"] } });
      expect(step.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-4", { to: "A" }]]);
      const done = await SubAgent.resume(b.agent, saveRun(step, b.agent), { llm: scriptedLlm([code("(return :next)")]), isolation, approvals: { "turn-1-call-4": approvals["turn-1-call-4"] } });
      expect(b.sent).toEqual(["B"]);
      expect(done.turns[0].error?.message).toContain("rejected by the host: not A");
      return;
    }
    expect(step.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-3", { to: "B" }], ["turn-1-call-4", { to: "A" }]]);
    const done = await SubAgent.resume(b.agent, saveRun(step, b.agent), { llm: scriptedLlm([code("(return :next)")]), isolation, approvals });
    expect(b.sent).toEqual(["B"]);
    expect(done.turns[0].error?.message).toContain("rejected by the host: not A");
  });

  // In a worker, A's branch may reach tool/send only after the pause (docs: it then pauses at the
  // next resume), so the saved run asks for both calls at once only in the host's thread.
  it.skipIf(isolation === "worker")("keeps the id of a request left undecided when the resumed branches call in another order", async () => {
    const b = branches(() => true);
    const step = await SubAgent.run(b.agent, { llm: b.llm, isolation });
    expect(step.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-3", { to: "B" }], ["turn-1-call-4", { to: "A" }]]);
    const decided: Record<string, ApprovalDecision> = { "turn-1-call-3": { approved: true } };
    const again = await SubAgent.resume(b.agent, runStateFromJson(json(step, b.agent)), { llm: scriptedLlm([]), isolation, approvals: decided });
    // A host that keeps its decisions by id must not find the approval of B under A's request.
    expect(again.paused?.approvals.map((a) => [a.id, a.args])).toEqual([["turn-1-call-4", { to: "A" }]]);
    expect(b.sent).toEqual(["B"]);
    const done = await SubAgent.resume(b.agent, runStateFromJson(json(again, b.agent)), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-4": { approved: false } } });
    expect(done.turns[0].error?.message).toContain("tool/send failed: rejected by the host");
    expect(b.sent).toEqual(["B"]);
  });
});

describe.each<Isolation>(["worker", "none"])("tool approvals: a decision is given once (isolation %s)", (isolation) => {
  it("does not ask again for an approved call that reaches the gate after another call paused the resumed turn", async () => {
    const sent: string[] = [];
    const checked: string[] = [];
    let bChecked: () => void = () => undefined;
    const bAsked = new Promise<void>((resolve) => (bChecked = resolve));
    let firstRun = true;
    const tools = {
      lookup: tool({ description: "Looks up.", input: z.object({ x: z.string() }), run: ({ x }) => x }),
      send: tool({
        description: "Sends.",
        input: z.object({ to: z.string() }),
        // A barrier: in the first run A's check waits for B's, so both are asked at once in either isolation.
        needsApproval: async ({ to }) => {
          checked.push(to);
          if (to === "B") bChecked();
          else if (firstRun) await bAsked;
          return true;
        },
        run: ({ to }) => (sent.push(to), to),
      }),
    };
    // A raised time limit: B's computing must not outlast the 1 s default on a loaded machine.
    const agent = SubAgent.create({ prompt: "Send.", tools, maxTurns: 3, limits: { timeoutMs: 600_000 } });
    // B's branch waits for a call, then computes (fuel, no timer) before its own: in a worker the
    // host meanwhile sees A's call wait with nothing else in flight, and pauses the resumed turn.
    const program = '(return (pmap (fn [x] (if (= x "b") (do (tool/lookup {:x x}) (reduce + (range 200000)) (tool/send {:to "B"})) (tool/send {:to "A"}))) ["a" "b"]))';
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code(program)]), isolation });
    const id = (to: string): string => step.paused?.approvals.find((a) => (a.args as { to: string }).to === to)?.id ?? "none";
    expect(step.paused?.approvals).toHaveLength(2);
    firstRun = false;
    // B approved, A left for later.
    const again = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm: scriptedLlm([]), isolation, approvals: { [id("B")]: { approved: true } } });
    expect(again.paused?.approvals.map((a) => a.id)).toEqual([id("A")]);
    // A host that gives B's decision again is told it stands.
    await expect(SubAgent.resume(agent, runStateFromJson(json(again, agent)), { llm: scriptedLlm([]), isolation, approvals: { [id("B")]: { approved: true } } })).rejects.toThrow(
      again.paused?.decided === undefined ? "no call waits for approval" : `${id("B")} was decided (approved) at an earlier resume`,
    );
    const done = await SubAgent.resume(agent, runStateFromJson(json(again, agent)), { llm: scriptedLlm([]), isolation, approvals: { [id("A")]: { approved: true } } });
    expect(done.ok ? done.value : done.fail.message).toEqual(["A", "B"]);
    expect([...sent].sort()).toEqual(["A", "B"]);
    // The host was asked about B once, in the first run.
    expect(checked.filter((to) => to === "B")).toEqual(["B"]);
  });
});

describe.each<Isolation>(["worker", "none"])("tool approvals: a recorded call that sent a hidden argument back (isolation %s)", (isolation) => {
  it("gives the resumed program the argument, so the approved call gets the value rather than its stand-in", async () => {
    const token = "tok-9f2c41d7e6";
    const paid: string[] = [];
    const tools = {
      echo: tool({ description: "Echoes its argument.", input: z.object({ x: z.string() }), run: ({ x }) => ({ got: x }) }),
      pay: tool({ description: "Pays with a token.", input: z.object({ t: z.string() }), needsApproval: true, run: ({ t }) => (paid.push(t), "paid") }),
    };
    const agent = SubAgent.create({ prompt: "Pay.", tools, maxTurns: 3 });
    const context = { _token: token };
    const step = await SubAgent.run(agent, { isolation, context, llm: scriptedLlm([code("(def r (tool/echo {:x data/_token}))\n(return (tool/pay {:t (:got r)}))")]) });
    const paused = step.paused;
    if (paused === undefined) throw new Error("the run did not pause");
    const state = runStateFromJson(runStateToJson(paused.state));
    expect(JSON.stringify(state.trace)).not.toContain(token);
    const resumed = await SubAgent.resume(agent, state, { isolation, context, llm: scriptedLlm([]), approvals: { [paused.approvals[0].id]: { approved: true } } });
    expect(resumed.ok ? resumed.value : resumed.fail.message).toBe("paid");
    expect(paid).toEqual([token]);
  });
});

describe.each<Isolation>(["worker", "none"])("tool approvals: the host edits a call whose arguments hold hidden context (isolation %s)", (isolation) => {
  it("an argument the host left as the request shows it (a stand-in) is the call's own value; one it changed is the host's", async () => {
    const token = "tok-9f2c41d7e6";
    const paid: Array<{ t: string; amount: number }> = [];
    const tools = {
      pay: tool({ description: "Pays with a token.", input: z.object({ t: z.string(), amount: z.number() }), needsApproval: true, run: (args) => (paid.push(args), "paid") }),
    };
    const agent = SubAgent.create({ prompt: "Pay.", tools, maxTurns: 3 });
    const context = { _token: token };
    const step = await SubAgent.run(agent, { isolation, context, llm: scriptedLlm([code("(return (tool/pay {:t data/_token :amount 5}))")]) });
    const request = step.paused?.approvals[0];
    if (step.paused === undefined || request === undefined) throw new Error("the run did not pause");
    expect(JSON.stringify(request.args)).not.toContain(token);
    // A host's form sends back every argument as shown, with the amount changed.
    const args = { ...(request.args as Record<string, unknown>), amount: 3 };
    const resumed = await SubAgent.resume(agent, runStateFromJson(runStateToJson(step.paused.state)), { isolation, context, llm: scriptedLlm([]), approvals: { [request.id]: { approved: true, args } } });
    expect(resumed.ok ? resumed.value : resumed.fail.message).toBe("paid");
    expect(paid).toEqual([{ t: token, amount: 3 }]);
  });
});

// A call whose result ran into a limit was recorded with its message only, so the replay on
// resume threw it as tool_error, the feedback differed, and resume refused the saved run.
describe.each<Isolation>(["worker", "none"])("resuming past a tool result that ran into a limit (isolation %s)", (isolation) => {
  const tools = {
    deep: tool({
      description: "Nested data.",
      run: () => {
        let v: unknown = 1;
        for (let i = 0; i < 50; i++) v = [v];
        return v;
      },
    }),
    wide: tool({ description: "Many rows.", run: () => Array.from({ length: 200 }, (_, i) => i) }),
    wipe: tool({ description: "Deletes everything.", needsApproval: true, run: () => "wiped" }),
  };
  const agent = SubAgent.create({ prompt: "Clean up.", tools, maxTurns: 4 });
  it.each([
    ["deep", { maxNestingDepth: 20 }, "nesting_too_deep"],
    ["wide", { maxCollectionSize: 100 }, "collection_too_large"],
  ] as const)("replays tool/%s's limit as the limit", async (name, limits, kind) => {
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code(`(def s (tool/${name}))`), code("(return (tool/wipe))")]), isolation, limits });
    expect(step.fail?.reason).toBe("approval_required");
    expect(step.turns[0].error?.kind).toBe(kind);
    const done = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm: scriptedLlm([]), isolation, limits, approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.fail).toBeUndefined();
    expect(done.value).toBe("wiped");
    expect(done.turns[0].error?.kind).toBe(kind);
  });
});

// A tool's Set or Map was recorded as its plain JSON (an array, an object with string keys), so
// the replay on resume gave the program [1 2] for #{1 2} and resume refused the saved run.
describe.each<Isolation>(["worker", "none"])("resuming past a tool result holding a set or a map (isolation %s)", (isolation) => {
  const tools = {
    tags: tool({ description: "Tags.", run: () => ({ tags: new Set([1, 2]), byId: new Map<unknown, unknown>([[7, "seven"], ["a", new Set(["x"])]]) }) }),
    wipe: tool({ description: "Deletes everything.", needsApproval: true, run: () => "wiped" }),
  };
  const agent = SubAgent.create({ prompt: "Clean up.", tools, maxTurns: 4 });
  it("replays the result as the value the program had", async () => {
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(def t (tool/tags))\n(println t)"), code("(return [(tool/wipe) (:tags t) (get (:byId t) 7)])")]), isolation });
    expect(step.fail?.reason).toBe("approval_required");
    const printed = step.turns[0].prints;
    expect(printed[0]).toContain("#{1 2}");
    const done = await SubAgent.resume(agent, runStateFromJson(json(step, agent)), { llm: scriptedLlm([]), isolation, approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.fail).toBeUndefined();
    expect(done.turns[0].prints).toEqual(printed);
    expect(done.value).toEqual(["wiped", [1, 2], "seven"]);
  });
});

// The events of a paused turn and of its resume: a call answered from the saved run's record
// was told as if it ran again (no `replayed`), and a held call as a failed one ("the evaluation
// was aborted by the host"), so a host counting calls, or failures, from events counted wrong.
describe.each<Isolation>(["worker", "none"])("the events of held and replayed calls (isolation %s)", (isolation) => {
  const told = (into: string[]) => (e: AgentEvent): void => {
    if (e.type === "tool-call" || e.type === "tool-result") into.push(`${e.type} ${e.name}${e.replayed === true ? " replayed" : ""}${e.type === "tool-result" && e.error !== undefined ? ` error: ${e.error}` : ""}`);
  };

  it("tells a held call not at all, and a call answered from its record as replayed", async () => {
    const w = world();
    const paused: string[] = [];
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(def a (tool/lookup {:name "ann"}))\n(tool/wipe)\n(return a)')]), isolation, onEvent: told(paused) });
    expect(step.fail?.reason).toBe("approval_required");
    expect(paused).toEqual(["tool-call lookup", "tool-result lookup"]);
    // The trace's record of the held call says it was held, not that it failed.
    expect(step.turns[0].toolCalls.map((c) => [c.name, c.error])).toEqual([["lookup", undefined], ["wipe", "held by the host: the call waits for approval and did not run"]]);
    const resumed: string[] = [];
    const done = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([]), isolation, onEvent: told(resumed), approvals: { "turn-1-call-2": { approved: true } } });
    expect(done.value).toBe("ann@example.com");
    expect(resumed).toEqual(["tool-call lookup replayed", "tool-result lookup replayed", "tool-call wipe", "tool-result wipe"]);
    expect(w.looked).toEqual(["ann"]);
  });

  it("tells the lines the paused turn printed before it paused as replayed when its resume prints them again", async () => {
    const w = world();
    const lines = (into: string[]) => (e: AgentEvent): void => void (e.type === "print" && into.push(`${e.line}${e.replayed === true ? " replayed" : ""}`));
    const paused: string[] = [];
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(println "sending")\n(println "now")\n(tool/wipe)\n(println "wiped")\n(return 1)')]), isolation, onEvent: lines(paused) });
    expect(paused).toEqual(["sending", "now"]);
    const resumed: string[] = [];
    const done = await SubAgent.resume(w.agent, saveRun(step, w.agent), { llm: scriptedLlm([]), isolation, onEvent: lines(resumed), approvals: { "turn-1-call-1": { approved: true } } });
    expect(done.value).toBe(1);
    expect(resumed).toEqual(["sending replayed", "now replayed", "wiped"]);
  });

  it("tells the calls of a cut turn that finished before the cut as replayed when its resume answers them from their records", async () => {
    const w = world();
    const ctl = new AbortController();
    const onEvent = (e: AgentEvent): void => void (e.type === "tool-result" && ctl.abort());
    const cut = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(def a (tool/lookup {:name "ann"}))\n(def b (tool/lookup {:name "bob"}))\n(return [a b])')]), isolation, signal: ctl.signal, onEvent });
    expect(cut.fail?.reason).toBe("aborted");
    const resumed: string[] = [];
    const done = await SubAgent.resume(w.agent, saveRun(cut, w.agent), { llm: scriptedLlm([]), isolation, onEvent: told(resumed) });
    expect(done.value).toEqual(["ann@example.com", "bob@example.com"]);
    expect(resumed).toEqual(["tool-call lookup replayed", "tool-result lookup replayed", "tool-call lookup", "tool-result lookup"]);
    expect(w.looked).toEqual(["ann", "bob"]);
  });
});

// An abort while a call's needsApproval check was pending held the call as if the host were to
// be asked: the turn was recorded as paused, the step aborted without requests, and its saved
// state was refused by resume ("its last turn paused for approval, but it holds no requests").
describe.each<Isolation>(["worker", "none"])("an abort while a call waits on its approval check (isolation %s)", (isolation) => {
  it("cuts the turn as any abort does, and its resume asks for the approval again, running the call once", async () => {
    const ctl = new AbortController();
    const ran: string[] = [];
    const make = (needsApproval: () => boolean | Promise<boolean>) =>
      SubAgent.create({ prompt: "Go.", maxTurns: 3, tools: { send: tool({ description: "Sends.", input: z.object({ to: z.string() }), needsApproval, run: ({ to }) => (ran.push(to), "sent") }) } });
    const hanging = make(() => (ctl.abort(), new Promise<boolean>(() => undefined)));
    const step = await SubAgent.run(hanging, { llm: scriptedLlm([code('(return (tool/send {:to "x"}))')]), isolation, signal: ctl.signal });
    expect(step.fail?.reason).toBe("aborted");
    expect(step.turns.map((t) => t.status)).toEqual(["error"]);
    const agent = make(() => true);
    const paused = await SubAgent.resume(agent, saveRun(step, hanging), { llm: scriptedLlm([]), isolation });
    expect(paused.paused?.approvals).toEqual([{ id: "turn-1-call-1", turn: 1, tool: "send", args: { to: "x" } }]);
    const done = await SubAgent.resume(agent, saveRun(paused, agent), { llm: scriptedLlm([]), isolation, approvals: { "turn-1-call-1": { approved: true } } });
    expect(done.value).toBe("sent");
    expect(ran).toEqual(["x"]);
  });
});

// A request's args were the paused turn's trace record itself: a host that changed them (to show
// or to normalize them) changed the saved run, and the approved call was refused on resume as
// "called with a different :to than in the saved run", the model told so, and nothing sent.
describe("a paused run's requests", () => {
  it("are the host's own copies: changing one changes neither the saved run nor what the approved call runs with", async () => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(return (:id (tool/send {:to "boss@corp.org" :body "hi"})))')]), isolation: "none" });
    const [request] = step.paused?.approvals ?? [];
    (request.args as { to: string }).to = "someone@else.org";
    expect(step.paused?.state.trace.turns[0].toolCalls[0].args).toEqual({ to: "boss@corp.org", body: "hi" });
    const done = await SubAgent.resume(w.agent, step.paused?.state as RunState, { llm: scriptedLlm([]), isolation: "none", approvals: { [request.id]: { approved: true } } });
    expect(done.value).toBe(1);
    expect(w.sent).toEqual([{ to: "boss@corp.org", body: "hi" }]);
  });

  // step.paused.state.trace was step.trace: a host redacting the turns it logs (step.turns, in
  // place) redacted the saved run, and the approved call ran with the redacted address
  // (sent to "[redacted]"); saveRun's state likewise.
  it.each(["paused state", "saveRun"])("keep the %s apart from step.turns: a host redacting its log changes neither what resume replays nor what the approved call runs with", async (which) => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(def a (tool/lookup {:name "boss"}))'), code('(return (:id (tool/send {:to (str a ".org") :body "hi"})))')]), isolation: "none" });
    const state = which === "saveRun" ? saveRun(step, w.agent) : (step.paused?.state as RunState);
    for (const t of step.turns) {
      t.prints = [];
      for (const c of t.toolCalls) {
        c.args = { redacted: true };
        if (c.result !== undefined) c.result = "[redacted]";
      }
    }
    for (const r of step.paused?.approvals ?? []) (r.args as { to: string }).to = "[redacted]";
    expect(state.trace.turns.map((t) => t.toolCalls.map((c) => c.args))).toEqual([[{ name: "boss" }], [{ to: "boss@example.com.org", body: "hi" }]]);
    expect(state.paused?.approvals.map((r) => r.args)).toEqual([{ to: "boss@example.com.org", body: "hi" }]);
    const done = await SubAgent.resume(w.agent, state, { llm: scriptedLlm([]), isolation: "none", approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.value).toBe(1);
    expect(w.sent).toEqual([{ to: "boss@example.com.org", body: "hi" }]);
    expect(w.looked).toEqual(["boss"]);
    // The pause is still resumed once, from either state of the step.
    const again = await SubAgent.resume(w.agent, which === "saveRun" ? (step.paused?.state as RunState) : saveRun(step, w.agent), { llm: scriptedLlm([]), isolation: "none", approvals: { "turn-2-call-1": { approved: true } } }).catch((e: unknown) => e);
    expect((again as Error).message).toMatch(/^resume: this paused state was resumed already/);
    expect(w.sent).toHaveLength(1);
  });

  // The copy must take what the step holds as its file would: an edit carrying a key the tool's
  // schema drops (a function) is in the record, and a deep clone of it failed, ending the run
  // that paused again with internal_error and losing the pause.
  it("is taken of a step whose record holds a host's edit that JSON cannot hold whole", async () => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code("(tool/wipe)\n(tool/wipe)")]), isolation: "none" });
    const edit = { approved: true, args: { extra: () => 1 } } as unknown as ApprovalDecision;
    const next = await SubAgent.resume(w.agent, step.paused?.state as RunState, { llm: scriptedLlm([]), isolation: "none", approvals: { "turn-1-call-1": edit } });
    expect(next.fail?.reason).toBe("approval_required");
    expect(next.paused?.approvals.map((a) => a.id)).toEqual(["turn-1-call-2"]);
    const done = await SubAgent.resume(w.agent, runStateFromJson(runStateToJson(next.paused?.state as RunState)), { llm: scriptedLlm([code("(return 1)")]), isolation: "none", approvals: { "turn-1-call-2": { approved: true } } });
    expect(done.value).toBe(1);
    expect(w.sent).toHaveLength(2);
  });
});

// An onTurn hook that threw on the paused turn ended the run with internal_error and no
// requests, and the saved state was refused ("its last turn paused for approval, but it holds no
// requests"): the call waiting for approval could never run.
describe("an onTurn hook that throws on the paused turn", () => {
  it("ends the run with internal_error that still holds the requests, and the run resumes from it", async () => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(return (:id (tool/send {:to "boss@corp.org" :body "hi"})))')]), isolation: "none", onTurn: () => { throw new Error("hook broke"); } });
    expect(step.fail?.reason).toBe("internal_error");
    expect(step.fail?.message).not.toContain("hook broke");
    expect(step.paused?.approvals.map((a) => a.id)).toEqual(["turn-1-call-1"]);
    const done = await SubAgent.resume(w.agent, runStateFromJson(json(step, w.agent)), { llm: scriptedLlm([]), isolation: "none", approvals: { "turn-1-call-1": { approved: true } } });
    expect(done.value).toBe(1);
    expect(w.sent).toEqual([{ to: "boss@corp.org", body: "hi" }]);
  });
});

// The replayed turns' records took the replay's timings (about 0 ms) for the saved run's: a run
// whose two saved turns waited 204 and 200 ms for the model reported llm 0 and 0 ms for them
// once resumed, and the step's usage.llmMs only the live turn's.
describe("a resumed run's timings", () => {
  it("keep the saved turns' llmMs (and execMs of the turns replayed whole), and the step's usage sums them", async () => {
    const w = world();
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code('(def a (tool/lookup {:name "ann"}))'), code('(def r (tool/send {:to "boss@corp.org" :body "hi"}))')]), isolation: "none" });
    const done = await SubAgent.resume(w.agent, runStateFromJson(json(step, w.agent)), { llm: scriptedLlm([code("(return (:id r))")]), isolation: "none", approvals: { "turn-2-call-1": { approved: true } } });
    expect(done.value).toBe(1);
    const [one, two] = step.turns.map((t) => t.usage);
    expect([done.turns[0].usage.llmMs, done.turns[0].usage.execMs, done.turns[1].usage.llmMs]).toEqual([one.llmMs, one.execMs, two.llmMs]);
    const sum = (key: "llmMs" | "execMs") => done.turns.reduce((a, t) => a + t.usage[key], 0);
    expect(done.usage.llmMs).toBeCloseTo(sum("llmMs"), 6);
    expect(done.usage.execMs).toBeCloseTo(sum("execMs"), 6);
  });

  it.each<Isolation>(["worker", "none"])("keep the saved durations of the calls answered from their records (isolation %s)", async (isolation) => {
    const w = world();
    const program = '(def a (tool/lookup {:name "ann"}))\n(def b (tool/lookup {:name "bob"}))';
    const step = await SubAgent.run(w.agent, { llm: scriptedLlm([code(program), code(`${program}\n(def r (tool/send {:to "boss@corp.org" :body "hi"}))`)]), isolation });
    const durations: number[] = [];
    const done = await SubAgent.resume(w.agent, runStateFromJson(json(step, w.agent)), { llm: scriptedLlm([code("(return (:id r))")]), isolation, approvals: { "turn-2-call-3": { approved: true } }, onEvent: (e) => void (e.type === "tool-result" && e.replayed === true && durations.push(e.durationMs)) });
    expect(done.value).toBe(1);
    const saved = step.turns.flatMap((t) => t.toolCalls.filter((c) => c.name === "lookup").map((c) => c.durationMs));
    expect(done.turns.flatMap((t) => t.toolCalls.filter((c) => c.name === "lookup").map((c) => c.durationMs))).toEqual(saved);
    expect(durations).toEqual(saved);
  });
});
