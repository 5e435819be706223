// Hidden context keys (`_`-prefixed) never reach any prompt, in either history view, nor the
// trace: not through printed output, tool arguments, definitions' samples, errors or summaries
// (property test).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { runToJson } from "../../src/agent/saved-run.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { STAND_IN_CLOSE, STAND_IN_OPEN } from "../../src/lisp/marks.js";
import { fragments } from "../support/hidden.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

const lookup = tool({
  description: "Looks a customer up.",
  input: z.object({ token: z.string(), q: z.string().optional() }),
  run: async ({ token, q }) => ({ echoed: token, q: q ?? null, rows: [{ id: 1 }] }),
});

// Programs that try every way a value could leak into the next prompt.
const PROGRAMS = [
  '(def t data/_token)\n(println "token is" t)',
  '(def r (tool/lookup {:token data/_token :q "acme"}))\n(println (:echoed r))',
  '(def auth (str "Bearer " data/_token))\n(def creds data/_creds)',
  "(println (pr-str data/_creds))",
  '(tool/lookup {:token (:secret data/_creds)})\n(+ 1 data/_token)',
  "(def n (count data/_token))\n(println n)",
  "(return :done)",
];

const secret = fc.stringMatching(/^[A-Za-z0-9_-]{8,24}$/).map((s) => `sk-${s}`);

describe("hidden context in prompts", () => {
  it("no message of any turn, in either view, holds a hidden value (property)", async () => {
    await fc.assert(
      fc.asyncProperty(secret, secret, fc.boolean(), async (token, inner, compressHistory) => {
        const agent = SubAgent.create({ prompt: "Find the customer.", tools: { lookup }, maxTurns: PROGRAMS.length });
        const step = await SubAgent.run(agent, {
          llm: scriptedLlm(PROGRAMS.map(code)),
          context: { _token: token, _creds: { secret: inner, user: "ann" }, region: "eu" },
          compressHistory,
        });
        expect(step.turns).toHaveLength(PROGRAMS.length);
        const sent = step.messages.flat();
        expect(sent.length).toBeGreaterThan(PROGRAMS.length);
        for (const m of sent) {
          expect(m.content).not.toContain(token);
          expect(m.content).not.toContain(inner);
        }
        // The model is told where the value lives instead.
        expect(sent.some((m) => m.content.includes("data/_token"))).toBe(true);
        // Nor does the trace (what `--trace-out` saves and `ptc view` shows), not even where a
        // tool echoed the token back in its result.
        const kept = JSON.stringify(step.trace);
        expect(kept).not.toContain(token);
        expect(kept).not.toContain(inner);
        // Stand-ins, which prompts show unquoted (src/lisp/marks.ts).
        const token_ = `${STAND_IN_OPEN}hidden string from data/_token${STAND_IN_CLOSE}`;
        expect(step.turns[1].toolCalls[0].args).toEqual({ token: token_, q: "acme" });
        expect(step.turns[1].toolCalls[0].result).toMatchObject({ echoed: token_ });
      }),
      { numRuns: 12 },
    );
  });

  it.each(["worker", "none"] as const)("refuses a hidden key whose getter throws without its message, which may quote the secret (isolation %s)", async (isolation) => {
    const context = {
      get _token(): string {
        throw new Error("vault locked, last token s3cr3t-tok");
      },
    };
    const llm = scriptedLlm([code("(println (str data/_token))"), code("(return :done)")]);
    const step = await SubAgent.run(SubAgent.create({ prompt: "Use the token.", maxTurns: 2 }), { llm, context, isolation });
    expect(step.turns[0].error?.message).toBe("data/_token is a getter that throws, which cannot cross into the program");
    expect(JSON.stringify({ trace: step.trace, requests: llm.requests })).not.toContain("s3cr3t");
  });

  // A visible key's getter was read bare: its message, which may quote a secret, became the run's
  // failure (and so the saved run's), and under a {{placeholder}} an internal_error.
  it.each(["Use the token.", "Use the token {{token}}."])("refuses a visible key whose getter throws without its message (%s)", async (prompt) => {
    const context = {
      get token(): string {
        throw new Error("vault locked, last token s3cr3t-tok");
      },
    };
    const step = await SubAgent.run(SubAgent.create({ prompt }), { llm: scriptedLlm([code("(return :done)")]), context });
    expect(step.fail).toMatchObject({ reason: "invalid_input", message: expect.stringContaining("data/token is a getter that throws, which cannot cross into the program") });
    expect(runToJson(step)).not.toContain("s3cr3t");
  });

  // A careless host whose public data shares its hidden credentials (the same object under a
  // public key, or the token again): the program prints the public copy with stand-ins (pieces
  // test), but the task message's sample of it and a {{placeholder}} filled from it showed the
  // token in the first prompt, and the trace kept it.
  it.each([false, true])("shows hidden texts that public context shares as the program prints them: stand-ins (compressHistory %s)", async (compressHistory) => {
    const TOKEN = "K7Z2Q9-B3M8X4-W5R2";
    const creds = { token: TOKEN, plan: "pro" };
    const context = { _creds: creds, profile: { name: "ann", creds }, token: TOKEN, plans: ["free", "pro"], sessions: { [TOKEN]: { user: "ann" } }, rows: Array.from({ length: 4 }, (_, i) => ({ id: i, [i === 3 ? TOKEN : "extra"]: 1 })) };
    const agent = SubAgent.create({ prompt: "Check {{profile}} with {{token}}.", maxTurns: 2 });
    const llm = scriptedLlm([code("(println data/profile data/token)"), code("(return :done)")]);
    const step = await SubAgent.run(agent, { llm, context, compressHistory, isolation: "none" });
    expect(step.ok).toBe(true);
    const first = llm.requests[0].messages.map((m) => m.content).join("\n");
    const shown = '{:name "ann" :creds {:token <hidden string from data/_creds :token> :plan <hidden string from data/_creds :plan>}}';
    // The sample is cut at its budget; a value shown whole as a stand-in has no size, as a definition's.
    expect(first).toContain('data/profile ; map[2], sample: {:name "ann" :creds {:token <hidden string from data/_creds :token> :plan ...}}\ndata/token ; string, sample: <hidden string from data/_creds :token>');
    expect(first).toContain(`Check ${shown} with <hidden string from data/_creds :token>.`);
    // Public data holding no hidden text whole is shown as it is.
    expect(first).toContain('data/plans ; vector[2], sample: ["free" "pro"]');
    // A map keyed by it (sessions by token): its key, in the sample and in the keys listed past it.
    expect(first).toContain('data/sessions ; map[1], sample: {<hidden keyword from data/_creds :token> {:user "ann"}}');
    expect(first).toContain("(4 items, showing first 3), keys: :id :extra <hidden keyword from data/_creds :token>");
    // The trace's task is the one sent: stand-ins shown, as a definition's sample keeps them.
    expect(step.trace.task).toBe(llm.requests[0].messages[1].content);
    // What the program printed of the same keys.
    expect(step.trace.turns[0].prints).toEqual([`${shown} <hidden string from data/_creds :token>`]);
    for (const text of [...llm.requests.flatMap((r) => r.messages.map((m) => m.content)), runToJson(step)]) for (const f of fragments([TOKEN])) expect(text).not.toContain(f);
  });

  it("leaves prompts untouched when nothing is hidden", async () => {
    const agent = SubAgent.create({ prompt: "Echo." });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(println "sk-visible-1234")'), code("(return 1)")]), context: { token: "sk-visible-1234" } });
    expect(step.messages[1].some((m) => m.content.includes("sk-visible-1234"))).toBe(true);
  });
});
