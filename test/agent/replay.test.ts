// The offline clients: scriptedLlm, the JSONL recorder, and replayLlm.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { LlmError, loadRecording, recordingLlm, replayLlm, scriptedLlm, type ChatMessage, type TextMessage, type Llm, type RecordedCall } from "../../src/llm/index.js";

const dir = mkdtempSync(join(tmpdir(), "ptc-replay-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const system: TextMessage = { role: "system", content: "You write PTC-Lisp programs. ".repeat(20) };
const task: TextMessage = { role: "user", content: "Find the top customer." };
const turn = (n: number, reply: string, feedback: string): TextMessage[] => [
  { role: "assistant", content: reply },
  { role: "user", content: `${feedback}\nTurn ${n + 1} of 5` },
];


describe("scriptedLlm", () => {
  it("serves replies in order and records what it was asked", async () => {
    const llm = scriptedLlm(["(def a 1)", { content: "(return a)", usage: { inputTokens: 7, outputTokens: 3, cachedTokens: 1 } }]);
    expect(llm.remaining).toBe(2);
    const r1 = await llm.complete({ messages: [system, task], turn: 1 });
    const r2 = await llm.complete({ messages: [system, task, ...turn(1, "(def a 1)", "Stored: a")], turn: 2 });
    expect(r1.content).toBe("(def a 1)");
    expect(r2).toEqual({ content: "(return a)", usage: { inputTokens: 7, outputTokens: 3, cachedTokens: 1 }, model: "scripted" });
    expect(llm.remaining).toBe(0);
    expect(llm.requests.map((r) => [r.turn, r.messages.length])).toEqual([
      [1, 2],
      [2, 4],
    ]);
  });

  it("fails clearly when the script runs out", async () => {
    const llm = scriptedLlm(["(+ 1 2)"], { name: "demo-script" });
    await llm.complete({ messages: [system, task] });
    const e = await failure(llm.complete({ messages: [system, task] }));
    expect(e.kind).toBe("exhausted");
    expect(e.message).toBe("demo-script: no reply scripted for request 2 (the script has 1)");
  });

  it("reports no usage of its own (it is no provider), only what a scripted reply carries", async () => {
    const llm = scriptedLlm(["(def a 1)", { content: "(return a)", usage: { inputTokens: 9, outputTokens: 2, cachedTokens: 0 } }]);
    expect((await llm.complete({ messages: [system, task] })).usage).toBeUndefined();
    expect((await llm.complete({ messages: [system, task] })).usage).toEqual({ inputTokens: 9, outputTokens: 2, cachedTokens: 0 });
  });

  it("lets a reply be computed from the request", async () => {
    const llm = scriptedLlm([(req) => `(return ${req.messages.length})`]);
    expect((await llm.complete({ messages: [system, task] })).content).toBe("(return 2)");
  });

  it("honours the abort signal, before and during a simulated delay", async () => {
    const done = new AbortController();
    done.abort();
    expect((await failure(scriptedLlm(["x"]).complete({ messages: [task], signal: done.signal }))).kind).toBe("aborted");
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 20);
    // A delay longer than any test may wait: that the call ends at all is the check, not how soon.
    const e = await failure(scriptedLlm(["x"], { delayMs: 2_000_000_000 }).complete({ messages: [task], signal: ctl.signal }));
    expect(e.kind).toBe("aborted");
  });
});

describe("recordingLlm and replayLlm", () => {
  const conversation = (): Array<{ messages: ChatMessage[]; turn: number }> => [
    { messages: [system, task], turn: 1 },
    { messages: [system, task, ...turn(1, "(def rows (tool/orders))", "Stored: rows")], turn: 2 },
  ];

  async function record(file: string, llm: Llm = scriptedLlm(["(def rows (tool/orders))", { content: "(return (count rows))", usage: { inputTokens: 12, outputTokens: 3, cachedTokens: 4 } }])) {
    const rec = recordingLlm(llm, file, { fresh: true });
    const replies = [];
    for (const r of conversation()) replies.push(await rec.complete(r));
    return replies;
  }

  it("writes one JSON line per call with the request, the reply and the time", async () => {
    const file = join(dir, "nested", "rec.jsonl");
    await record(file);
    const lines = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as RecordedCall);
    expect(lines).toHaveLength(2);
    expect(lines[0].request).toEqual({ turn: 1, messages: [system, task] });
    expect(lines[1].response?.content).toBe("(return (count rows))");
    expect(lines[1].response?.usage).toEqual({ inputTokens: 12, outputTokens: 3, cachedTokens: 4 });
    expect(typeof lines[0].ms).toBe("number");
  });

  it("appends to an existing recording unless told to start fresh", async () => {
    const file = join(dir, "append.jsonl");
    await record(file);
    const again = recordingLlm(scriptedLlm(["(return 3)"]), file);
    await again.complete({ messages: [task] });
    expect(loadRecording(file)).toHaveLength(3);
    await record(file);
    expect(loadRecording(file)).toHaveLength(2);
  });

  it("creates the file with the mode it is given, fresh or appended to", async () => {
    for (const fresh of [true, false]) {
      const file = join(dir, `private-${fresh}.jsonl`);
      await recordingLlm(scriptedLlm(["(return 3)"]), file, { fresh, mode: 0o600 }).complete({ messages: [task] });
      expect(loadRecording(file)).toHaveLength(1);
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
  });

  it("of two recordings to one file at once, the one whose lines were lost fails, instead of both claiming a recording neither made", async () => {
    const file = join(dir, "shared.jsonl");
    const a = recordingLlm(scriptedLlm(["(def a 1)", "(return a)"]), file, { fresh: true });
    const b = recordingLlm(scriptedLlm(["(def b 2)", "(return b)"]), file, { fresh: true });
    const [first, second] = conversation();
    await a.complete(first);
    await b.complete(first);
    // b started the file afresh over a's first line: a finds the file changed since its own last line.
    await expect(a.complete(second)).rejects.toThrow(/recorder: cannot write .*shared\.jsonl \(it was written by something else during this recording/);
    await b.complete(second);
    // What is left is b's recording alone, whole.
    expect(loadRecording(file).map((c) => c.response?.content)).toEqual(["(def b 2)", "(return b)"]);
  });

  it("replays the recorded replies in order, usage and model included", async () => {
    const file = join(dir, "replay.jsonl");
    const live = await record(file);
    const replay = replayLlm(file);
    expect(replay.remaining).toBe(2);
    const replies = [];
    for (const r of conversation()) replies.push(await replay.complete(r));
    expect(replies).toEqual(live);
    expect(replay.remaining).toBe(0);
  });

  it("replays a recording of messages with tool calls, tool results and content parts, as it recorded them", async () => {
    const file = join(dir, "tools.jsonl");
    const messages: ChatMessage[] = [
      task,
      { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "orders", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "[3 orders]" },
      { role: "user", content: [{ type: "text", text: "Which is " }, { type: "text", text: "the largest?" }] },
    ];
    await recordingLlm(scriptedLlm(["(return 3)"]), file, { fresh: true }).complete({ messages });
    const replay = replayLlm(file);
    expect((await replay.complete({ messages })).content).toBe("(return 3)");
  });

  it("fails with the first difference when the requests diverge", async () => {
    const file = join(dir, "diverge.jsonl");
    await record(file);
    const replay = replayLlm(file);
    await replay.complete(conversation()[0]);
    const changed = conversation()[1];
    changed.messages[3] = { role: "user", content: "Stored: rows, total\nTurn 2 of 5" };
    const e = await failure(replay.complete(changed));
    expect(e.kind).toBe("diverged");
    expect(e.message).toMatch(/request 2 differs from the recording: message 4 \(user\) differs at character 13: recorded "Stored: rows\\nTurn 2 of 5", sent "Stored: rows, total/);
  });

  it("replays a run whose nested agents in pmap called the model at once, their replies recorded in another order", async () => {
    const file = join(dir, "nested.jsonl");
    const fence = "`".repeat(3);
    // The model answers the nested run for "a" only after the one for "b": the recording holds b's call first.
    let bAnswered: () => void = () => undefined;
    const afterB = new Promise<void>((resolve) => (bAnswered = resolve));
    const model: Llm = {
      name: "model",
      async complete({ messages }) {
        const last = String(messages.at(-1)?.content);
        if (last.includes("Name a")) await afterB;
        else if (last.includes("Name b")) setImmediate(bAnswered);
        const reply = last.includes("Name a") ? '(return "A")' : last.includes("Name b") ? '(return "B")' : '(return (pmap (fn [x] (tool/name {:x x})) ["a" "b"]))';
        return { content: `${fence}clojure\n${reply}\n${fence}` };
      },
    };
    const inner = SubAgent.create({ prompt: "Name {{x}}", output: z.string(), maxTurns: 1 });
    const outer = SubAgent.create({ prompt: "Collect the names", tools: { name: SubAgent.asTool(inner) }, maxTurns: 2 });
    const live = await SubAgent.run(outer, { llm: recordingLlm(model, file, { fresh: true }) });
    expect(live.value).toEqual(["A", "B"]);
    expect(loadRecording(file).map((c) => c.response?.content.includes('"B"'))).toEqual([false, true, false]);
    const replayed = await SubAgent.run(outer, { llm: replayLlm(file) });
    expect(replayed.fail?.message).toBeUndefined();
    expect(replayed.value).toEqual(["A", "B"]);
  });

  // A compressed history is laid out for the client's cache: its kind (`cacheModel`) and its
  // model's minimum, by its name. A replay reported neither (a generic name), so a compressed run
  // recorded through an Anthropic client was refused at its first request, its prompts laid out for
  // another cache: "request 1 differs from the recording: message 1 (system) differs at character
  // 9400". The recording keeps the client's name and cache model; the replay reports them.
  it("replays a compressed run recorded through a breakpoint client whose model caches from 4,096 tokens", async () => {
    const code = (body: string) => "```clojure\n" + body + "\n```";
    const rows = Array.from({ length: 300 }, (_, i) => ({ id: i, sku: `SKU-${10000 + i}`, city: ["Oslo", "Lima", "Perth", "Tokyo"][i % 4], qty: (i * 7) % 13 }));
    const replies = [...Array.from({ length: 29 }, (_, k) => code(k % 3 === 0 ? `(def acc${k % 5} (take 3 (drop ${k} data/rows)))` : `(println (take 2 (drop ${k * 4} data/rows)))`)), code("(return 1)")];
    const agent = SubAgent.create({ prompt: "Look at the rows.", maxTurns: replies.length });
    const scripted = scriptedLlm(replies);
    const anthropic: Llm = { name: "anthropic:claude-haiku-4-5", cacheModel: "breakpoint", complete: (request) => scripted.complete(request) };
    const file = join(dir, "compressed.jsonl");
    const again = join(dir, "compressed-again.jsonl");
    const run = (llm: Llm, history?: string) => SubAgent.run(agent, { llm, context: { rows }, ...(history === undefined ? { compressHistory: true } : { history }) });
    const recorded = await run(recordingLlm(anthropic, file, { fresh: true }));
    expect(recorded.trace.settings?.view).toMatchObject({ cacheModel: "breakpoint", cacheMinTokens: 4096 });
    expect(loadRecording(file)[0].client).toEqual({ name: "anthropic:claude-haiku-4-5", cacheModel: "breakpoint" });
    // Replayed, and replayed while recorded again (ptc demo --replay --record): the same prompts, to the end.
    const replay = replayLlm(file);
    expect([replay.cacheModel, replay.standsFor]).toEqual(["breakpoint", "anthropic:claude-haiku-4-5"]);
    const replayed = await run(recordingLlm(replay, again, { fresh: true }));
    expect(replayed.fail?.message).toBeUndefined();
    expect(replay.remaining).toBe(0);
    expect(replayed.trace.settings?.view).toEqual(recorded.trace.settings?.view);
    expect(loadRecording(again).map((c) => c.client)).toEqual(loadRecording(file).map((c) => c.client));
    // Each setting counts: without the kind the first request differs, without the model's minimum the 20th.
    for (const [llm, turn] of [[{ name: "replay", cacheModel: "breakpoint" }, 1], [{ name: "replay", standsFor: "anthropic:claude-haiku-4-5" }, 20]] as const) {
      const partial = replayLlm(file, { name: "replay" });
      const step = await run({ ...llm, complete: (request) => partial.complete(request) });
      expect(step.fail?.message).toMatch(new RegExp(`^LLM request failed on turn ${turn}: replay: request ${turn} differs from the recording`));
    }
    // A named strategy takes them as the view does.
    const named = join(dir, "named.jsonl");
    await run(recordingLlm({ ...anthropic, complete: scriptedLlm(replies).complete }, named, { fresh: true }), "interpreter-summaries");
    expect((await run(replayLlm(named), "interpreter-summaries")).fail?.message).toBeUndefined();
  });

  it("reports the recorded client's cache settings only where the recording names one client: not for one made before they were recorded, nor for runs of two clients appended", () => {
    const call = (client?: RecordedCall["client"]): RecordedCall => ({ request: { messages: [task] }, response: { content: "(return 1)" }, ms: 1, ...(client === undefined ? {} : { client }) });
    const haiku = { name: "anthropic:claude-haiku-4-5", cacheModel: "breakpoint" as const };
    const rows: Array<[RecordedCall[], Pick<Llm, "cacheModel" | "standsFor">]> = [
      [[call(), call()], {}],
      [[call(), call(haiku)], { cacheModel: "breakpoint", standsFor: "anthropic:claude-haiku-4-5" }],
      [[call({ name: "openai:gpt-4o" })], { standsFor: "openai:gpt-4o" }],
      [[call(haiku), call({ name: "openai:gpt-4o" })], {}],
      [[call(haiku), call({ name: haiku.name })], {}],
    ];
    for (const [calls, reported] of rows) {
      const replay = replayLlm(calls);
      expect({ cacheModel: replay.cacheModel, standsFor: replay.standsFor }).toEqual({ cacheModel: undefined, standsFor: undefined, ...reported });
    }
  });

  it("names a missing or extra message", async () => {
    const file = join(dir, "count.jsonl");
    await record(file);
    const e = await failure(replayLlm(file).complete({ messages: [system] }));
    expect(e.message).toMatch(/message 2 \(user\) was recorded but not sent \(recorded 2 messages, sent 1\)/);
  });

  it("can skip the request check", async () => {
    const file = join(dir, "nocheck.jsonl");
    await record(file);
    const r = await replayLlm(file, { checkRequests: false }).complete({ messages: [task] });
    expect(r.content).toBe("(def rows (tool/orders))");
  });

  it("fails clearly when the recording runs out", async () => {
    const calls: RecordedCall[] = [{ request: { messages: [task] }, response: { content: "(return 1)" }, ms: 1 }];
    const replay = replayLlm(calls);
    await replay.complete({ messages: [task] });
    const e = await failure(replay.complete({ messages: [task] }));
    expect(e.kind).toBe("exhausted");
    expect(e.message).toBe("replay: the recording has 1 call; request 2 has no recorded reply");
  });

  it("records a failed call and replays the same failure", async () => {
    const file = join(dir, "error.jsonl");
    const failing: Llm = {
      name: "flaky",
      complete: async () => {
        throw new LlmError("rate_limit", "flaky: HTTP 429: slow down");
      },
    };
    const rec = recordingLlm(failing, file, { fresh: true });
    expect((await failure(rec.complete({ messages: [task] }))).kind).toBe("rate_limit");
    const [line] = loadRecording(file);
    expect(line.error).toEqual({ kind: "rate_limit", message: "flaky: HTTP 429: slow down" });
    const e = await failure(replayLlm(file).complete({ messages: [task] }));
    expect(e.kind).toBe("rate_limit");
    expect(e.message).toBe("(replayed) flaky: HTTP 429: slow down");
  });

  // A client may reject with anything: String() of an object without a prototype, of one whose
  // toString throws, or of a Proxy that throws when read threw a TypeError from the recorder,
  // which then neither recorded the call nor let the client's own failure through.
  it("records a call that failed with a value String() cannot convert, and rethrows that value", async () => {
    const unreadable: unknown[] = [Object.create(null), { toString: () => { throw new Error("no"); } }, new Proxy({}, { get: () => { throw new Error("no"); } })];
    for (const [n, thrown] of unreadable.entries()) {
      const file = join(dir, `unreadable-${n}.jsonl`);
      const rec = recordingLlm({ name: "odd", complete: () => Promise.reject(thrown) }, file, { fresh: true });
      // Boxed: a Proxy a promise resolves with is read for a `then`.
      const [caught] = await rec.complete({ messages: [task] }).then(() => ["resolved"], (e: unknown) => [e]);
      expect(caught === thrown).toBe(true);
      const [line] = loadRecording(file);
      expect(line.error).toEqual({ kind: "unknown", message: "a thrown value that cannot be read" });
    }
  });

  it("reports a recording it cannot write, keeping the original failure", async () => {
    const blocker = join(dir, "blocker");
    writeFileSync(blocker, "a file, not a directory");
    const ok = recordingLlm(scriptedLlm(["x"]), join(blocker, "rec.jsonl"));
    const e1 = await failure(ok.complete({ messages: [task] }));
    expect(e1.kind).toBe("config");
    expect(e1.message).toMatch(/recorder: cannot write .*blocker/);
    const bad = recordingLlm(scriptedLlm([]), join(blocker, "rec.jsonl"));
    const e2 = await failure(bad.complete({ messages: [task] }));
    expect(e2.kind).toBe("exhausted");
    expect(e2.message).toMatch(/no reply scripted.*; and recorder: cannot write/);
  });
});

describe("loadRecording: bad files", () => {
  const write = (name: string, text: string) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it("names a missing file", () => {
    expect(() => replayLlm(join(dir, "absent.jsonl"))).toThrow(/replay: cannot read .*absent\.jsonl \(ENOENT\)/);
  });

  it("names the line that is not JSON", () => {
    const file = write("bad-json.jsonl", `${JSON.stringify({ request: { messages: [] }, response: { content: "x" } })}\n\n{oops\n`);
    expect(() => loadRecording(file)).toThrow(/bad-json\.jsonl:3:2: not valid JSON \(Expected property name or '\}'\)$/);
  });

  it("names the column and the reason of a line cut short (a recording whose writer was killed), in the line as written", () => {
    const call = JSON.stringify({ request: { messages: [{ role: "user", content: "a secret-ish prompt" }] }, response: { content: "x" } });
    const file = write("cut.jsonl", `${call}\n  ${call.slice(0, 40)}\n`);
    let message = "";
    try {
      loadRecording(file);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toBe(`replay: ${file}:2:43: not valid JSON (Unterminated string)`);
  });

  it("names a line without the expected fields", () => {
    expect(() => loadRecording(write("no-msgs.jsonl", '{"response":{"content":"x"}}\n'))).toThrow(/no-msgs\.jsonl:1: request\.messages is missing/);
    expect(() => loadRecording(write("bad-role.jsonl", '{"request":{"messages":[{"role":"robot","content":"x"}]},"response":{"content":"x"}}\n'))).toThrow(/without a valid role/);
    expect(() => loadRecording(write("no-reply.jsonl", '{"request":{"messages":[]},"response":{}}\n'))).toThrow(/response\.content is missing/);
    expect(() => loadRecording(write("bad-err.jsonl", '{"request":{"messages":[]},"error":{"kind":"boom","message":"x"}}\n'))).toThrow(/error needs a known kind/);
    expect(() => loadRecording(write("bad-client.jsonl", '{"request":{"messages":[]},"response":{"content":"x"},"client":{"cacheModel":"breakpoint"}}\n'))).toThrow(/bad-client\.jsonl:1: client needs a name/);
    expect(() => loadRecording(write("bad-cache.jsonl", '{"request":{"messages":[]},"response":{"content":"x"},"client":{"name":"x","cacheModel":"lru"}}\n'))).toThrow(/client needs a name and, if any, the cacheModel/);
  });

  it("checks recorded calls given directly, too", () => {
    const calls = [{ request: { messages: [task] }, response: { content: "x" }, ms: 1 }, { request: { messages: [task] }, ms: 1 }] as RecordedCall[];
    expect(() => replayLlm(calls)).toThrow(/replay: call 2: response\.content is missing/);
  });

  it("accepts an empty recording, which then has nothing to serve", async () => {
    const replay = replayLlm(write("empty.jsonl", ""));
    expect(replay.remaining).toBe(0);
    expect((await failure(replay.complete({ messages: [task] }))).kind).toBe("exhausted");
  });
});
