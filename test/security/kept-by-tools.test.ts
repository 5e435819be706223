// The adversary for a tool that sends back hidden context the evaluation never read: a memory
// tool given a token in one turn and asked for it in a later one, a host's client configured with
// the key that reports it, a message quoting it. Nothing in the later evaluation held a mark, so
// the token went to the model as it was (a helper's review). Text merely equal to a short hidden
// value, or a tool's own data, still shows.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { resumeRun, saveRun } from "../../src/agent/resume.js";
import { evaluate, type Memory } from "../../src/lisp/evaluate.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { traceToJson } from "../../src/trace/serialize.js";
import { fragments, leaks } from "../support/hidden.js";

const TOKEN = "K7Z2Q9-B3M8X4-W5R2";
const CONTEXT = { _creds: { token: TOKEN, user: "ann" }, _env: "test", region: "eu" };
const code = (body: string): string => "```clojure\n" + body + "\n```";

/** A memory tool, a client holding the token itself, and one that fails quoting it. */
function tools(): Record<string, { run: (a: Record<string, unknown>) => unknown }> {
  const kept = new Map<string, unknown>();
  return {
    remember: { run: (a) => void kept.set(String(a.key), a.value) },
    recall: { run: (a) => ({ value: kept.get(String(a.key)) ?? null }) },
    whoami: { run: () => ({ user: "ann", key: TOKEN, note: `signed in with ${TOKEN.toLowerCase()} today`, env: "test" }) },
    session: { run: () => { throw new Error(`session for ${TOKEN} expired`); } },
    expire: { run: (a) => { throw new Error(`key ${String(kept.get(String(a.key)))} expired`); } },
  };
}

describe("a tool that sends back hidden context the evaluation never read", () => {
  it.each(["none", "worker"] as const)("a memory tool, a client holding the key, a failure quoting it (isolation %s)", async (isolation) => {
    const t = tools();
    const first = await evaluate("(tool/remember {:key \"auth\" :value (:token data/_creds)})", { ctx: CONTEXT, isolation, tools: t });
    expect(first.ok).toBe(true);
    const program = '(println (tool/recall {:key "auth"}))\n(println (tool/whoami))\n(println (try (tool/session {}) (catch e (ex-message e))))\n(println data/region)';
    const r = await evaluate(program, { ctx: CONTEXT, isolation, tools: t, memory: first.memory as Memory });
    const out = showStandIns(r.prints.join("\n"));
    expect(out).toBe(
      "{:value <hidden string from data/_creds :token>}\n" +
        '{:user <hidden string from data/_creds :user> :key <hidden string from data/_creds :token> :note <hidden string derived from data/_creds> :env "test"}\n' +
        "tool/session failed: session for <hidden string from data/_creds :token> expired\n" +
        "eu",
    );
    expect(leaks(out, fragments([TOKEN]))).toEqual([]);
    // The trace's record of the call: what `ptc trace show` and the viewer read.
    expect(JSON.stringify(r.toolCalls.map((c) => [c.result, c.error]))).not.toContain(TOKEN);
  });

  // What a host's listener is told as each call ends, which the worker mode's host tells from its
  // own record: a failure quoting the token before anything in the run marked it showed it there.
  it.each(["none", "worker"] as const)("a failure quoting the token, as a listener is told of it (isolation %s)", async (isolation) => {
    const told: string[] = [];
    const r = await evaluate("(println (try (tool/session {}) (catch e (ex-message e))))", { ctx: CONTEXT, isolation, tools: tools(), onToolCall: (c, done) => void (done && told.push(String(c.error))) });
    expect(told).toEqual(["session for \uE000hidden string from data/_creds :token\uE001 expired"]);
    expect(showStandIns(r.prints.join("\n"))).toBe("tool/session failed: session for <hidden string from data/_creds :token> expired");
  });

  // An agent called as a tool shares its caller's host tools, which may quote the caller's
  // hidden context: never readable by the nested program, but hidden where a tool quotes it.
  it.each(["none", "worker"] as const)("the hidden context of the runs above, which the program cannot read (isolation %s)", async (isolation) => {
    const options = { ctx: { user: "ann" }, callerHidden: [{ _creds: { token: TOKEN } }], isolation, tools: tools() };
    const r = await evaluate('(println (tool/whoami))\n(println (try (tool/session {}) (catch e (ex-message e))))', options);
    const out = showStandIns(r.prints.join("\n"));
    expect(out).toBe('{:user "ann" :key <hidden string from data/_creds :token> :note <hidden string derived from data/_creds> :env "test"}\n' + "tool/session failed: session for <hidden string from data/_creds :token> expired");
    expect(JSON.stringify(r.toolCalls.map((c) => [c.result, c.error]))).not.toContain(TOKEN);
    const read = await evaluate("data/_creds", options);
    expect(read.ok ? read.value : read.error.message).toBe("data/_creds is not in the context");
  });

  // What the program derived from the token and gave the memory tool comes back quoting it (8+
  // characters, in any case, reversed): glued, re-cased, reversed, nested in what it kept; and a
  // piece of it, which holds no hidden text, found as what the run handed its tools (`handed`).
  it.each([
    ['(str "Bearer " (:token data/_creds))', "<hidden string derived from data/_creds>"],
    ["(clojure.string/lower-case (:token data/_creds))", "<hidden string derived from data/_creds>"],
    ["(clojure.string/reverse (:token data/_creds))", "<hidden string derived from data/_creds>"],
    ["{:auth [(:token data/_creds)]}", "{:auth [<hidden string from data/_creds :token>]}"],
    ["(subs (:token data/_creds) 0 12)", "<hidden string derived from data/_creds>"],
    ["(subs (:token data/_creds) 7)", "<hidden string derived from data/_creds>"],
    ['(str "#" (subs (:token data/_creds) 3 12) "#")', "<hidden string derived from data/_creds>"],
    ['(clojure.string/join "" (take 10 (:token data/_creds)))', "<hidden string derived from data/_creds>"],
    ["[(subs (:token data/_creds) 0 9) 12345]", "[<hidden string derived from data/_creds> 12345]"],
    // Too short to be searched for inside other text: sent back whole.
    ["(subs (:token data/_creds) 0 6)", "<hidden string derived from data/_creds>"],
    ["{:last4 (subs (:token data/_creds) 14)}", "{:last4 <hidden string derived from data/_creds>}"],
  ])("a derived value kept in one evaluation and sent back in the next: %s", async (derived, shown) => {
    for (const isolation of ["none", "worker"] as const) {
      const t = tools();
      const first = await evaluate(`(tool/remember {:key "k" :value ${derived}})`, { ctx: CONTEXT, isolation, tools: t });
      const r = await evaluate('(println (:value (tool/recall {:key "k"})))\n(println (try (tool/expire {:key "k"}) (catch e (ex-message e))))', { ctx: CONTEXT, isolation, tools: t, ...(first.handed === undefined ? {} : { handed: first.handed }) });
      const out = showStandIns(r.prints.join("\n"));
      expect(out.split("\n")[0], isolation).toBe(shown);
      expect(leaks(out, fragments([TOKEN])), isolation).toEqual([]);
      expect(JSON.stringify(r.toolCalls.map((c) => [c.result, c.error])), isolation).not.toMatch(/K7Z2|2Q9-|B3M8|W5R2/);
    }
  });

  // The adversary: a piece of the token the program cut, re-cased, glued or reversed, kept by a
  // memory tool inside other data, and sent back in a later evaluation whole, re-cased, reversed
  // or quoted in a sentence. A piece of 8+ characters is found however it comes back; a shorter
  // one only whole, as it was kept.
  it("a property: no piece of the token a memory tool kept shows in a later evaluation", async () => {
    const derive = fc.oneof(
      fc.tuple(fc.nat(TOKEN.length - 4), fc.integer({ min: 4, max: TOKEN.length })).map(([a, n]) => [`(subs tok ${a} ${Math.min(TOKEN.length, a + n)})`, Math.min(TOKEN.length, a + n) - a] as const),
      fc.integer({ min: 8, max: TOKEN.length }).map((n) => [`(clojure.string/upper-case (subs tok 0 ${n}))`, n] as const),
      fc.integer({ min: 8, max: TOKEN.length }).map((n) => [`(clojure.string/reverse (subs tok ${TOKEN.length - n}))`, n] as const),
      fc.integer({ min: 8, max: TOKEN.length }).map((n) => [`(str "id:" (subs tok 1 ${n}))`, n + 2] as const),
    );
    const wrap = fc.constantFrom((v: string) => v, (v: string) => `[1 ${v}]`, (v: string) => `{:k ${v} :n 2}`);
    const sendBack = fc.constantFrom<[string, (v: unknown) => unknown, boolean]>(
      ["whole", (v) => v, true],
      ["re-cased", (v) => JSON.parse(JSON.stringify(v).toLowerCase()), false],
      ["in a sentence", (v) => `you kept ${JSON.stringify(v)} earlier`, false],
    );
    await fc.assert(
      fc.asyncProperty(derive, wrap, sendBack, async ([piece, length], wrapped, [, back, whole]) => {
        fc.pre(length >= 8 || whole);
        let kept: unknown = null;
        const t = { keep: { run: (a: Record<string, unknown>) => void (kept = a.v) }, give: { run: () => back(kept) } };
        const first = await evaluate(`(let [tok (:token data/_creds)] (tool/keep {:v ${wrapped(piece)}}))`, { ctx: CONTEXT, tools: t });
        expect(first.ok).toBe(true);
        const r = await evaluate("(println (tool/give))", { ctx: CONTEXT, tools: t, ...(first.handed === undefined ? {} : { handed: first.handed }) });
        const out = showStandIns(r.prints.join("\n")) + JSON.stringify(r.toolCalls.map((c) => c.result));
        expect(leaks(out, fragments([TOKEN]))).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it("what the run handed its tools is carried over: each result holds the earlier ones and its own, once each", async () => {
    const t = tools();
    const one = await evaluate('(tool/remember {:key "a" :value (subs (:token data/_creds) 0 12)})', { ctx: CONTEXT, tools: t });
    // Not a plain text, a count computed from hidden context (in too much later output), a piece under 4 characters.
    const two = await evaluate('(tool/remember {:key "b" :value (subs (:token data/_creds) 5)})\n(tool/remember {:key "c" :value (subs (:token data/_creds) 0 12)})\n(tool/remember {:key "d" :value "plain text here"})\n(tool/remember {:key "e" :value [(count (:token data/_creds)) (subs (:token data/_creds) 0 3)]})', { ctx: CONTEXT, tools: t, handed: one.handed });
    expect(one.handed?.map(([text]) => text)).toEqual([TOKEN.slice(0, 12)]);
    expect(two.handed?.map(([text]) => text)).toEqual([TOKEN.slice(0, 12), TOKEN.slice(5)]);
    expect(two.handed?.every(([, from]) => from.derived && from.root === "data/_creds")).toBe(true);
    // A failed evaluation's calls happened: what they were handed is kept too.
    const failed = await evaluate('(tool/remember {:key "f" :value (subs (:token data/_creds) 2 11)})\n(/ 1 nil)', { ctx: CONTEXT, tools: t, handed: two.handed });
    expect(failed.ok).toBe(false);
    expect(failed.handed?.map(([text]) => text)).toEqual([TOKEN.slice(0, 12), TOKEN.slice(5), TOKEN.slice(2, 11)]);
  });

  // A host's client configured with credentials from hidden context, which the program never
  // read, fails quoting them the way requests carry them: a Basic header, separators dropped,
  // URL-encoded; its result quotes one as it is, or holds the request's Basic header. A message
  // is searched as a message quoting a hidden argument is; a result's parts for quotes, and their
  // base64 decoded only after `Basic ` (decoding every digest and blob of a large answer would
  // cost every tool call).
  // The adversary for the header in a result: any password of 8+ letters and digits with symbols
  // between them, any user, the scheme in any case, either base64 alphabet, the header nested
  // anywhere in the answer or inside a longer line, the program never reading the credentials.
  it("a property: a result echoing the request's Basic header never shows the password", async () => {
    const password = fc.tuple(fc.stringMatching(/^[A-Za-z0-9]{8,16}$/), fc.constantFrom("", "&", "-", "!", "#")).map(([p, sym]) => p.slice(0, 4) + sym + p.slice(4));
    const where = fc.constantFrom(
      (h: string) => ({ headers: { Authorization: h } }),
      (h: string) => ({ request: [{ line: `GET /v1/me HTTP/1.1\r\nAuthorization: ${h}\r\n` }] }),
      (h: string) => [{ name: "authorization", value: h }],
    );
    await fc.assert(
      fc.asyncProperty(password, fc.stringMatching(/^[a-z]{3,8}$/), fc.constantFrom("Basic", "basic", "BASIC"), fc.constantFrom<BufferEncoding>("base64", "base64url"), where, async (pw, user, scheme, encoding, place) => {
        const header = `${scheme} ${Buffer.from(`${user}:${pw}`).toString(encoding)}`;
        const r = await evaluate("(println (tool/echo {}))", { ctx: { _api: { user, password: pw } }, tools: { echo: { run: () => place(header) } } });
        // Stand-ins' own words (`string`) are not the password's.
        const out = (showStandIns(r.prints.join("\n")) + JSON.stringify(r.toolCalls.map((c) => c.result))).replace(/<hidden [^>]*>|\uE000[^\uE001]*\uE001/g, "<>");
        const decoded = out.replace(/[A-Za-z0-9+/_-]{12,}={0,2}/g, (run) => `${run} ${Buffer.from(run, "base64").toString("utf8")}`);
        // Nor are the answer's own words: "riza" of a password "aAAZir0a" reversed is in `Authorization` (1 run in 12,000 failed so).
        const words = "GET /v1/me HTTP/1.1 Authorization headers request line name value".toLowerCase();
        expect(leaks(decoded, new Set([...fragments([pw])].filter((f) => !words.includes(f.toLowerCase()))))).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it.each(["none", "worker"] as const)("a client holding the credentials sends them back encoded (isolation %s)", async (isolation) => {
    const creds = { _api: { user: "alice@example.com", password: "Tr0ub4dor&3-horse", card: "4111 1111 1111 1111" }, region: "eu" };
    const basic = `Basic ${Buffer.from("alice@example.com:Tr0ub4dor&3-horse").toString("base64")}`;
    const client = {
      fail: { run: () => { throw new Error(`401 for GET /v1/me (Authorization: ${basic}; user=${encodeURIComponent("alice@example.com")})`); } },
      charge: { run: () => { throw new Error("card 4111111111111111 declined"); } },
      me: { run: () => ({ headers: { from: "ALICE@EXAMPLE.COM" }, note: "password Tr0ub4dor&3-horse set", status: 200 }) },
      // An echo service answering with the request it was sent, its credentials' header among it.
      echo: { run: () => ({ request: { method: "GET", headers: { Authorization: basic, Accept: "application/json" } } }) },
      blob: { run: () => ({ etag: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", data: Buffer.from("plain public text, nothing hidden").toString("base64") }) },
    };
    const program = '(println (try (tool/fail {}) (catch e (ex-message e))))\n(println (try (tool/charge {}) (catch e (ex-message e))))\n(println (tool/me {}))\n(println (tool/blob {}))\n(println (tool/echo {}))';
    const told: string[] = [];
    const r = await evaluate(program, { ctx: creds, isolation, tools: client, onToolCall: (c, done) => void (done && told.push(JSON.stringify([c.result, c.error]))) });
    expect(told.join("\n")).not.toMatch(/YWxpY2|4111111111111111|alice%40/);
    const out = showStandIns(r.prints.join("\n"));
    const decoded = out.replace(/[A-Za-z0-9+/]{12,}={0,2}/g, (run) => `${run} ${Buffer.from(run, "base64").toString("utf8")}`).replace(/[0-9a-f]{16,}/g, (run) => `${run} ${Buffer.from(run, "hex").toString("utf8")}`);
    for (const v of ["alice@example.com", "Tr0ub4dor&3-horse", "4111111111111111"]) expect(leaks(decoded.replace(/%40/g, "@"), fragments([v])), v).toEqual([]);
    expect(out).toContain("tool/charge failed: card <hidden");
    // What holds nothing hidden shows as sent.
    expect(out).toContain('{:etag "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" :data "cGxhaW4gcHVibGljIHRleHQsIG5vdGhpbmcgaGlkZGVu"}');
    expect(JSON.stringify(r.toolCalls.map((c) => [c.result, c.error]))).not.toMatch(/YWxpY2|VHIwdWI0|5472307562|4111111111111111/);
  });

  // A host that renews the token in place between turns (the same context object, as an agent's
  // turns pass it): the search for what tools quote must find the token the context holds now.
  it.each(["none", "worker"] as const)("a token renewed in place between evaluations (isolation %s)", async (isolation) => {
    const ctx = { _creds: { token: TOKEN } };
    const client = { whoami: { run: () => ({ key: ctx._creds.token }) } };
    const first = await evaluate("(println (tool/whoami))", { ctx, isolation, tools: client });
    expect(showStandIns(first.prints.join("\n"))).toBe("{:key <hidden string from data/_creds :token>}");
    ctx._creds.token = "R3NEW3D-T0KEN-9QX7";
    const second = await evaluate("(println (tool/whoami))", { ctx, isolation, tools: client });
    expect(showStandIns(second.prints.join("\n"))).toBe("{:key <hidden string from data/_creds :token>}");
  });

  // A tool the program calls renews the token in place, or signs in and adds a hidden key, and a
  // later call in the same program quotes the new one: the context was searched as the first
  // answer found it (in the worker, as the evaluation started), so the new token showed.
  it.each([
    ["none", "renewed"],
    ["none", "added"],
    ["worker", "renewed"],
    ["worker", "added"],
  ] as const)("a token a tool the program called (isolation %s: %s), quoted by a later call", async (isolation, change) => {
    const NEW = "P4N8R2-H6J3V9-C1T7";
    const ctx: { _creds: { token: string }; _session?: { id: string }; region: string } = { _creds: { token: TOKEN }, region: "eu" };
    const current = (): string => (change === "renewed" ? ctx._creds.token : (ctx._session?.id ?? "none"));
    const client = {
      ping: { run: () => ({ pong: "service is up" }) },
      refresh: { run: () => void (change === "renewed" ? (ctx._creds.token = NEW) : (ctx._session = { id: NEW })) },
      api: { run: () => ({ sent: `Bearer ${current()}` }) },
      fails: { run: () => { throw new Error(`401: token ${current().toLowerCase()} expired`); } },
    };
    const r = await evaluate("(tool/ping)\n(tool/refresh)\n(println (tool/api))\n(println (try (tool/fails) (catch e (ex-message e))))", { ctx, isolation, tools: client });
    const origin = change === "renewed" ? "from data/_creds :token" : "from data/_session :id";
    expect(showStandIns(r.prints.join("\n"))).toBe(`{:sent <hidden string derived from data/${change === "renewed" ? "_creds" : "_session"}>}\ntool/fails failed: 401: token <hidden string ${origin}> expired`);
    expect(JSON.stringify(r.toolCalls.map((c) => [c.result, c.error]))).not.toMatch(/P4N8/i);
  });

  // The token the program kept, renewed in place or its key removed since (a rotation, a logout),
  // quoted by the host's client: its failure's message hid it (marked strings are searched for
  // there) but its result showed it, as the context searched no longer held it.
  it.each([
    ["none", "renewed"],
    ["none", "removed"],
    ["worker", "renewed"],
    ["worker", "removed"],
  ] as const)("the token a program kept, where a tool quotes it after the host changed it (isolation %s: %s)", async (isolation, change) => {
    const ctx: { _creds?: { token: string }; region: string } = { _creds: { token: TOKEN }, region: "eu" };
    const client = {
      audit: { run: () => ({ log: `token ${TOKEN} replaced`, low: TOKEN.toLowerCase() }) },
      revoke: { run: () => { throw new Error(`old token ${TOKEN.toLowerCase()} revoked`); } },
    };
    const first = await evaluate("(def old (:token data/_creds))", { ctx, isolation, tools: client });
    if (change === "renewed" && ctx._creds !== undefined) ctx._creds.token = "R3NEW3D-T0KEN-9QX7";
    else delete ctx._creds;
    const second = await evaluate("(println (tool/audit))\n(println (try (tool/revoke) (catch e (ex-message e))))", { ctx, isolation, tools: client, memory: first.memory as Memory });
    expect(showStandIns(second.prints.join("\n"))).toBe("{:log <hidden string derived from data/_creds> :low <hidden string derived from data/_creds>}\ntool/revoke failed: old token <hidden string from data/_creds :token> revoked");
    expect(JSON.stringify(second.toolCalls.map((c) => [c.result, c.error]))).not.toMatch(/K7Z2/i);
  });

  // A hidden map's field names are shown wherever the map is (`{:password <hidden ...>}`), so a
  // tool's words that are such a name are no secret: "set a new password via the portal" showed
  // as "set a new <hidden string derived from data/_creds> via the portal".
  it.each(["none", "worker"] as const)("the field names of hidden context in a tool's answer still show, its values do not (isolation %s)", async (isolation) => {
    const ctx = { _creds: { username: "ann", password: "Qx9-secret-77Lm", profile: new Map([["timezone", "Europe/Lisbon"]]) } };
    const client = {
      info: { run: () => ({ msg: "set a new password via the portal", field: "username", zone: "timezone" }) },
      login: { run: () => { throw new Error("wrong password Qx9-secret-77Lm for username ann (timezone Europe/Lisbon)"); } },
    };
    const r = await evaluate("(println (tool/info))\n(println (try (tool/login) (catch e (ex-message e))))", { ctx, isolation, tools: client });
    expect(showStandIns(r.prints.join("\n"))).toBe(
      '{:msg "set a new password via the portal" :field "username" :zone "timezone"}\ntool/login failed: wrong password <hidden string from data/_creds :password> for username ann (timezone <hidden string from data/_creds :profile :timezone>)',
    );
  });

  // A hidden map keyed by session tokens, past its first 20,000 parts: the walk of its texts
  // stopped at its 6,667th key (in the worker, the first 6,667 in its copy's order), so a client
  // quoting a later session showed it; every key was searched for before the walk stopped early.
  it.each(["none", "worker"] as const)("a client quoting a key of a large hidden map (isolation %s)", async (isolation) => {
    const tok = (i: number): string => `sess-${String(i).padStart(6, "0")}-Q8ZK`;
    const sessions = Object.fromEntries(Array.from({ length: 12_000 }, (_, i) => [tok(i), { user: `u${i}`, n: i }]));
    for (const i of [100, 9_000, 11_999]) {
      // Sending 12,000 sessions to a worker can take over the 1-second default on a loaded machine.
      const r = await evaluate("(println (tool/whoami))", { ctx: { _sessions: sessions }, isolation, limits: { timeoutMs: 600_000 }, tools: { whoami: { run: () => ({ session: tok(i) }) } } });
      expect(r.ok, r.ok ? "" : r.error.message).toBe(true);
      expect(showStandIns(r.prints.join("\n")), `session ${i}`).toBe("{:session <hidden string from data/_sessions>}");
    }
  });

  it("text equal to a short hidden value, and a tool's own data, still show", async () => {
    const r = await evaluate('(println (tool/whoami))', { ctx: { _env: "test", _pin: 4242 }, tools: tools() });
    expect(showStandIns(r.prints.join("\n"))).toContain(':user "ann" :key "K7Z2Q9-B3M8X4-W5R2"');
    expect(showStandIns(r.prints.join("\n"))).toContain(':env "test"');
  });

  it("across turns of a run and its resume, in both views and isolations: no prompt, and not the trace, holds a piece of the token a memory tool kept", async () => {
    for (const compressHistory of [false, true])
      for (const isolation of ["none", "worker"] as const) {
        const t = tools();
        const agentTools = {
          remember: tool({ description: "Keeps a value under a key.", input: z.object({ key: z.string(), value: z.unknown() }), run: t.remember.run }),
          recall: tool({ description: "The value kept under a key.", input: z.object({ key: z.string() }), run: t.recall.run }),
        };
        const replies = [code('(tool/remember {:key "auth" :value (subs (:token data/_creds) 0 12)})\n(println "kept")'), code('(println "next")'), code('(def v (tool/recall {:key "auth"}))\n(println v)'), code("(return (count (:value v)))")];
        const agent = SubAgent.create({ prompt: "Keep part of the token, then read it back.", maxTurns: 5, tools: agentTools });
        // Stopped when its model stops answering after two turns.
        const stopped = await SubAgent.run(agent, { llm: scriptedLlm(replies.slice(0, 2)), context: CONTEXT, compressHistory, isolation });
        expect(stopped.turns).toHaveLength(2);
        const live = scriptedLlm(replies.slice(2));
        const step = await resumeRun(agent, saveRun(stopped, agent, { compressHistory }), { llm: live, context: CONTEXT, compressHistory, isolation });
        const label = `compressHistory ${compressHistory}, ${isolation}`;
        expect(step.ok ? step.value : `${step.fail.reason}: ${step.fail.message}`, label).toBe(12);
        const prompts = live.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n");
        expect(prompts, label).toContain("{:value <hidden string derived from data/_creds>}");
        expect(leaks(prompts, fragments([TOKEN])), label).toEqual([]);
        expect(traceToJson(step.trace), label).not.toMatch(/K7Z2|2Q9-|B3M8/);
      }
  });

  it("across turns of a run, in both views: no prompt, and not the trace, holds the token a memory tool kept", async () => {
    for (const compressHistory of [false, true]) {
      const t = tools();
      const agentTools = {
        remember: tool({ description: "Keeps a value under a key.", input: z.object({ key: z.string(), value: z.unknown() }), run: t.remember.run }),
        recall: tool({ description: "The value kept under a key.", input: z.object({ key: z.string() }), run: t.recall.run }),
      };
      const llm = scriptedLlm([code('(tool/remember {:key "auth" :value (:token data/_creds)})\n(println "kept")'), code('(def v (tool/recall {:key "auth"}))\n(println v)'), code("(return (count (:value v)))")]);
      const agent = SubAgent.create({ prompt: "Keep the token, then read it back.", maxTurns: 4, tools: agentTools });
      const step = await SubAgent.run(agent, { llm, context: CONTEXT, compressHistory });
      expect(step.ok ? step.value : `${step.fail.reason}: ${step.fail.message}`).toBe(TOKEN.length);
      const prompts = llm.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n");
      expect(leaks(prompts, fragments([TOKEN]))).toEqual([]);
      expect(prompts).toContain("{:value <hidden string from data/_creds :token>}");
      expect(traceToJson(step.trace)).not.toContain(TOKEN);
    }
  });
});
