// A nested agent (SubAgent.asTool) is a tool that hands its arguments to a model. An argument
// holding the caller's hidden context must stay hidden there too: it reaches the nested run as a
// hidden context key, not as input data shown in its prompt or a filled {{placeholder}}.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runToJson } from "../../src/agent/saved-run.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { showStandIns } from "../../src/lisp/marks.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { fragments, leaks } from "../support/hidden.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";
const TOKEN = "K7Z2Q9-B3M8X4-W5R2";

describe("a nested agent given hidden context", () => {
  it.each([
    ["the token itself", "(:token data/_creds)"],
    ["a value derived from it", '(str "Bearer " (:token data/_creds))'],
    ["a map holding it", "{:crm (:token data/_creds)}"],
    // Held as a key: its shown form has the stand-in in a key, not in a value.
    ["a map keyed by it", "{(:token data/_creds) 1}"],
    ["a vector of maps keyed by a keyword made of it", "[{(keyword (:token data/_creds)) 1}]"],
  ])("keeps %s from its model, and still uses it", async (_what, arg) => {
    const child = SubAgent.create({ prompt: "Check the token {{token}} for customer {{customer}}.", maxTurns: 2 });
    const checker = SubAgent.asTool(child, { description: "Checks a token.", input: z.object({ token: z.unknown(), customer: z.string() }) });
    const llm = scriptedLlm([
      code(`(def r (tool/checker {:token ${arg} :customer "acme"}))\n(println r)`),
      code("(return (count (pr-str data/_token)))"),
      code("(return :done)"),
    ]);
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { checker }, maxTurns: 3 });
    const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } } });
    expect(step.ok, JSON.stringify(step.ok ? step.value : step.fail)).toBe(true);
    expect(llm.requests).toHaveLength(3);
    // The nested agent's first prompt: the visible argument filled in, the hidden one named.
    const mission = llm.requests[1].messages.map((m) => m.content).join("\n");
    expect(mission).toContain("Check the token data/_token for customer acme.");
    for (const r of llm.requests) for (const m of r.messages) for (const f of fragments([TOKEN])) expect(m.content).not.toContain(f);
    for (const f of fragments([TOKEN])) expect(JSON.stringify(step.trace)).not.toContain(f);
    // The nested program read the real value (its answer went back to the caller's program).
    const fed = llm.requests[2].messages.at(-1)?.content ?? "";
    expect(fed).toMatch(/Output:\n(2[0-9]|3[0-9])\n/);
  });

  it.each([
    ["returns a value computed from it", "(return (clojure.string/reverse data/_token))"],
    ["returns a map holding a piece of it", "(return {:t (subs data/_token 2 12) :ok true})"],
    ["fails quoting a piece of it", '(fail (str "bad " (subs data/_token 0 8)))'],
  ])("hides its answer from the caller's model when it %s", async (_what, answer) => {
    const child = SubAgent.create({ prompt: "Check the token {{token}}.", maxTurns: 1 });
    const checker = SubAgent.asTool(child, { description: "Checks a token." });
    const replies = [code("(println (try (tool/checker {:token (:token data/_creds)}) (catch e (ex-message e))))"), code(answer), code("(return :done)")];
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { checker }, maxTurns: 3 });
    for (const isolation of ["worker", "none"] as const) {
      const step = await SubAgent.run(parent, { llm: scriptedLlm(replies), context: { _creds: { token: TOKEN } }, isolation });
      expect(step.ok).toBe(true);
      const fed = step.messages[1].map((m) => m.content).join("\n");
      expect(fed).toContain("<hidden");
      for (const f of fragments([TOKEN])) {
        expect(fed).not.toContain(f);
        expect(JSON.stringify(step.trace)).not.toContain(f);
      }
    }
  });

  it("hides its answer when the piece of it lies past the 4,096 characters of a value the trace keeps", async () => {
    const child = SubAgent.create({ prompt: "Check the token {{token}}.", maxTurns: 1 });
    const checker = SubAgent.asTool(child, { description: "Checks a token." });
    const replies = [code("(def r (tool/checker {:token (:token data/_creds)}))\n(println (:t r))"), code("(return {:rows (vec (range 3000)) :t (subs data/_token 2 12)})"), code("(return :done)")];
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { checker }, maxTurns: 3 });
    for (const isolation of ["worker", "none"] as const) {
      const step = await SubAgent.run(parent, { llm: scriptedLlm(replies), context: { _creds: { token: TOKEN } }, isolation });
      expect(step.ok).toBe(true);
      const fed = step.messages[1].map((m) => m.content).join("\n");
      expect(fed).toContain("Output:\n<hidden string");
      for (const f of fragments([TOKEN])) expect(fed).not.toContain(f);
    }
  });

  // An input that takes keys beyond its own passed an argument keyed by hidden context under that
  // key, public: the nested task listed `data/K7Z2Q9-B3M8X4-W5R2 ; integer, sample: 1`, so its
  // model, and the caller's trace holding its run, had the token (ctx.hidden named arguments by
  // their shown keys, which for a hidden key is a stand-in no argument has). Passed as a hidden key
  // it would be named wherever a stand-in for its value shows (`data/_K7Z2Q9-...`): refused. One
  // keyed by a field name is passed as `_key`.
  it.each([
    ["a loose object", z.looseObject({ q: z.string() })],
    ["a catchall", z.object({ q: z.string() }).catchall(z.unknown())],
  ])("refuses an argument keyed by hidden context, and passes one named as a field hidden (%s)", async (_what, input) => {
    const child = SubAgent.create({ prompt: "Check {{q}}.", maxTurns: 1 });
    const helper = SubAgent.asTool(child, { description: "Checks.", input });
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { helper }, maxTurns: 2 });
    for (const isolation of ["worker", "none"] as const) {
      for (const arg of ["(keyword (:token data/_creds))", "(subs (:token data/_creds) 0 9)"]) {
        const llm = scriptedLlm([code(`(println (try (tool/helper {:q "acme" ${arg} 1}) (catch e (ex-message e))))`), code("(return :done)")]);
        const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } }, isolation });
        expect(step.ok ? step.value : step.fail).toBe("done");
        expect(step.trace.turns[0].prints).toEqual(["tool/helper failed: an argument beyond the input's own keys is keyed by hidden context; pass its value under a key of the input"]);
        for (const text of [JSON.stringify(llm.requests.map((r) => r.messages)), runToJson(step)]) expect(leaks(text, fragments([TOKEN])), text).toEqual([]);
      }
      const llm = scriptedLlm([code('(println (tool/helper {:q "acme" :extra (:token data/_creds)}))'), code("(return (count data/_extra))"), code("(return :done)")]);
      const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } }, isolation });
      expect(step.trace.turns[0].prints).toEqual(["18"]);
    }
  });

  // A placeholder with a path into an argument that becomes hidden ({{info.token}}, `info` holding
  // the caller's token) was left as it was, and the nested run failed: invalid_input, the context
  // has no key "info.token". It names the read of the hidden key instead.
  it("names a dotted placeholder into a hidden argument as its read", async () => {
    const child = SubAgent.create({ prompt: "Check the token {{info.token}} for {{info.user}}.", maxTurns: 1 });
    const checker = SubAgent.asTool(child, { description: "Checks a token.", input: z.object({ info: z.object({ token: z.string(), user: z.string() }) }) });
    const llm = scriptedLlm([code('(println (tool/checker {:info {:token (:token data/_creds) :user "ann"}}))'), code("(return (count (get-in data/_info [:token])))"), code("(return :done)")]);
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { checker }, maxTurns: 2 });
    const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } } });
    expect(step.ok ? step.value : step.fail).toBe("done");
    expect(llm.requests[1].messages.map((m) => m.content).join("\n")).toContain("Check the token (get-in data/_info [:token]) for (get-in data/_info [:user]).");
    expect(step.trace.turns[0].prints).toEqual(["18"]);
    expect(leaks(JSON.stringify(llm.requests.map((r) => r.messages)), fragments([TOKEN]))).toEqual([]);
  });

  it("shows an answer that holds nothing hidden, though it was given a hidden value", async () => {
    const child = SubAgent.create({ prompt: "Check the token {{token}}.", maxTurns: 1 });
    const checker = SubAgent.asTool(child, { description: "Checks a token." });
    const llm = scriptedLlm([code("(println (tool/checker {:token (:token data/_creds)}))"), code('(return {:valid (= 18 (count data/_token)) :user "ann"})'), code("(return :done)")]);
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { checker }, maxTurns: 3 });
    const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } } });
    expect(step.ok).toBe(true);
    expect(step.messages[1].map((m) => m.content).join("\n")).toContain('{:valid true :user "ann"}');
  });

  it("passes arguments that hold nothing hidden as they are", async () => {
    const child = SubAgent.create({ prompt: "Check the token {{token}}.", maxTurns: 1 });
    const checker = SubAgent.asTool(child, { description: "Checks a token." });
    const llm = scriptedLlm([code('(println (tool/checker {:token "visible-123"}))'), code("(return (count data/token))"), code("(return :done)")]);
    const parent = SubAgent.create({ prompt: "Check a token.", tools: { checker }, maxTurns: 3 });
    const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } } });
    expect(step.ok).toBe(true);
    expect(llm.requests[1].messages.map((m) => m.content).join("\n")).toContain("Check the token visible-123.");
    expect(llm.requests[2].messages.at(-1)?.content).toContain("Output:\n11\n");
  });

  // The nested agent shares a host tool with its caller, which holds the caller's token itself
  // and quotes it. The nested run searched only its own context (which does not hold the token),
  // so its model was fed the token, and the caller's trace, saved run and events held it.
  it.each([
    ["fails quoting it", "(println (try (tool/session {:user data/user}) (catch e (ex-message e))))"],
    ["answers with it", "(println (tool/lookup {:user data/user}))"],
    ["is given an output check that quotes it", "(return 1)"],
  ])("hides its caller's hidden context, which it was not given, where a tool it shares %s", async (_what, program) => {
    const tools = {
      session: tool({ description: "Opens a session.", input: z.object({ user: z.string() }), run: () => Promise.reject(new Error(`session for ${TOKEN} expired`)) }),
      lookup: tool({ description: "Looks a user up.", input: z.object({ user: z.string() }), run: () => ({ auth: `Bearer ${TOKEN.toLowerCase()}` }) }),
    };
    const output = z.number().refine(() => false, { error: `not the count for ${TOKEN}` });
    const child = SubAgent.create({ prompt: "Open a session for {{user}}.", tools, maxTurns: 2, output });
    const helper = SubAgent.asTool(child, { description: "Opens sessions." });
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { helper }, maxTurns: 2 });
    for (const isolation of ["worker", "none"] as const) {
      const llm = scriptedLlm([code('(println (tool/helper {:user "ann"}))'), code(program), code("(return 2)"), code("(return :done)")]);
      const events: unknown[] = [];
      const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } }, isolation, onEvent: (e) => void events.push(e.type === "run-finish" ? null : e) });
      expect(step.ok ? step.value : step.fail).toBe("done");
      const fed = llm.requests[2].messages.map((m) => m.content).join("\n");
      expect(fed).toContain("<hidden string");
      for (const text of [JSON.stringify(llm.requests.map((r) => r.messages)), runToJson(step), JSON.stringify(events)]) expect(leaks(text, fragments([TOKEN])), text).toEqual([]);
    }
  });

  // Given no hidden argument, the nested run's answer was shown to the caller's model even when
  // computed from such a quote: a piece of the token (6 characters, too short for the caller's
  // search of the result) or the token without its dashes printed as they were.
  it.each([
    ["a piece of it", "(subs (:auth r) 7 13)"],
    ["it without its separators", '(clojure.string/replace (:auth r) "-" "")'],
  ])("hides its answer computed from its caller's hidden context, which it was not given: %s", async (_what, answer) => {
    const lookup = tool({ description: "Looks a user up.", input: z.object({ user: z.string() }), run: () => ({ auth: `Bearer ${TOKEN}` }) });
    const child = SubAgent.create({ prompt: "Look {{user}} up.", tools: { lookup }, maxTurns: 1 });
    const helper = SubAgent.asTool(child, { description: "Looks users up." });
    const parent = SubAgent.create({ prompt: "Check my token.", tools: { helper }, maxTurns: 2 });
    for (const isolation of ["worker", "none"] as const) {
      const llm = scriptedLlm([code('(println (tool/helper {:user "ann"}))'), code(`(def r (tool/lookup {:user data/user}))\n(return ${answer})`), code("(return :done)")]);
      const step = await SubAgent.run(parent, { llm, context: { _creds: { token: TOKEN } }, isolation });
      expect(step.ok ? step.value : step.fail).toBe("done");
      expect(step.trace.turns[0].prints).toEqual(["<hidden string derived from hidden context>"]);
      for (const text of [JSON.stringify(llm.requests.map((r) => r.messages)), runToJson(step)]) expect(leaks(text, fragments([TOKEN])), text).toEqual([]);
    }
  });

  // A host tool replaces the caller's hidden card while a nested run goes on, or the caller's own
  // program did so before calling it again, or adds a hidden card beside it: the nested run
  // compared its tool's results with the hidden context its caller held when the first nested run
  // started, and printed the new card whole.
  it.each((["none", "worker"] as const).flatMap((isolation) => (["during the nested run", "between nested runs"] as const).flatMap((when) => (["replaced", "added"] as const).map((how) => [isolation, when, how] as const))))("hides a caller's hidden record a host tool replaced or added (isolation %s, %s, %s)", async (isolation, when, how) => {
    const renewed = { cvv: "999", last4: "1111", exp: "04/31" };
    const context: Record<string, unknown> = { _card: { cvv: "737", last4: "4242", exp: "01/29" } };
    const key = how === "replaced" ? "_card" : "_card2";
    const refresh = tool({ description: "Renews the card.", input: z.object({}), run: () => void (context[key] = { ...renewed }) });
    const lookup = tool({ description: "A record.", input: z.object({}), run: () => ({ ...renewed }) });
    const child = SubAgent.create({ prompt: "Look up {{n}}.", tools: { refresh, lookup }, maxTurns: 1 });
    const looker = SubAgent.asTool(child, { description: "Looks up.", input: z.object({ n: z.number() }) });
    const replies = when === "during the nested run" ? [code("(println (tool/looker {:n 1}))"), code("(tool/refresh) (println (tool/lookup)) (return 1)")] : [code("(println (tool/looker {:n 0})) (tool/refresh) (println (tool/looker {:n 1}))"), code("(return 0)"), code("(println (tool/lookup)) (return 1)")];
    const parent = SubAgent.create({ prompt: "Go.", tools: { looker, refresh }, maxTurns: 1 });
    const step = await SubAgent.run(parent, { llm: scriptedLlm(replies), context, isolation });
    const nested = step.trace.turns[0].nested?.at(-1);
    expect(nested?.ok).toBe(true);
    expect(nested?.trace.turns.at(-1)?.prints.map(showStandIns)).toEqual([`{:cvv <hidden string from data/${key} :cvv> :last4 <hidden string from data/${key} :last4> :exp <hidden string from data/${key} :exp>}`]);
  });

  it.each([["none", 5], ["worker", 2]] as const)("lists a caller's hidden keys without reading them (isolation %s, under %d reads a tool call)", async (isolation, most) => {
    // A host getter that builds its value on each read (a lazily loaded list): each read is one
    // more value to index. Listing the keys read every one of them: 8.65 and 2.95 reads a tool call.
    let reads = 0;
    const context = {
      get _card() {
        reads++;
        return { cvv: "737", last4: "4242", exp: "01/29" };
      },
    };
    const lookup = tool({ description: "A record.", input: z.object({ n: z.number() }), run: ({ n }) => ({ n, status: "ok" }) });
    const child = SubAgent.create({ prompt: "Look up {{n}}.", tools: { lookup }, maxTurns: 1 });
    const looker = SubAgent.asTool(child, { description: "Looks up.", input: z.object({ n: z.number() }) });
    const parent = SubAgent.create({ prompt: "Go.", tools: { looker }, maxTurns: 1 });
    const calls = 20;
    const replies = [code("(println (tool/looker {:n 1}))"), code(`(return (count (for [i (range ${calls})] (tool/lookup {:n i}))))`)];
    const step = await SubAgent.run(parent, { llm: scriptedLlm(replies), context, isolation });
    expect(step.trace.turns[0].nested?.at(-1)?.ok).toBe(true);
    expect(reads / calls).toBeLessThan(most);
  });

  it("refuses an input with both key and _key, where a hidden key's value would be overwritten", () => {
    const child = SubAgent.create({ prompt: "Check the token {{token}}.", maxTurns: 1 });
    for (const input of [z.object({ token: z.unknown(), _token: z.unknown() }), z.object({ _token: z.unknown(), token: z.unknown() })]) {
      expect(() => SubAgent.asTool(child, { description: "Checks a token.", input })).toThrow("SubAgent.asTool input has both token and _token");
    }
    // A key that is hidden already is passed under its own name: no clash.
    expect(() => SubAgent.asTool(child, { description: "Checks a token.", input: z.object({ token: z.unknown(), __token: z.unknown() }) })).not.toThrow();
  });
});
