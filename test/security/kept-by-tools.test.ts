// The adversary for a tool that sends back hidden context the evaluation never read: a memory
// tool given a token in one turn and asked for it in a later one, a host's client configured with
// the key that reports it, a message quoting it. Nothing in the later evaluation held a mark, so
// the token went to the model as it was (a helper's review). Text merely equal to a short hidden
// value, or a tool's own data, still shows.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
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
  // characters, in any case, reversed): glued, re-cased, reversed, nested in what it kept.
  it.each([
    ['(str "Bearer " (:token data/_creds))', "<hidden string derived from data/_creds>"],
    ["(clojure.string/lower-case (:token data/_creds))", "<hidden string derived from data/_creds>"],
    ["(clojure.string/reverse (:token data/_creds))", "<hidden string derived from data/_creds>"],
    ["{:auth [(:token data/_creds)]}", "{:auth [<hidden string from data/_creds :token>]}"],
  ])("a derived value kept in one evaluation and sent back in the next: %s", async (derived, shown) => {
    for (const isolation of ["none", "worker"] as const) {
      const t = tools();
      await evaluate(`(tool/remember {:key "k" :value ${derived}})`, { ctx: CONTEXT, isolation, tools: t });
      const r = await evaluate('(println (:value (tool/recall {:key "k"})))', { ctx: CONTEXT, isolation, tools: t });
      expect(showStandIns(r.prints.join("\n")), isolation).toBe(shown);
    }
  });

  it("text equal to a short hidden value, and a tool's own data, still show", async () => {
    const r = await evaluate('(println (tool/whoami))', { ctx: { _env: "test", _pin: 4242 }, tools: tools() });
    expect(showStandIns(r.prints.join("\n"))).toContain(':user "ann" :key "K7Z2Q9-B3M8X4-W5R2"');
    expect(showStandIns(r.prints.join("\n"))).toContain(':env "test"');
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
