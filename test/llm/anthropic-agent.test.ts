// A run with a history strategy over anthropicLlm: the strategy's stable-prefix ends reach the
// wire as cache_control breakpoints (the agent passes Strategy.cacheBreakpoints to the client).
import { describe, expect, it } from "vitest";
import { SubAgent } from "../../src/index.js";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { summaryLegend } from "../../src/history/legend.js";
import { localServer } from "../support/local-server.js";

interface Body { system?: Array<{ text?: string; cache_control?: unknown }>; messages: Array<{ role: string; content: Array<{ text?: string; cache_control?: unknown }> }> }

const REPLIES = ["```clojure\n(println 1)\n```", "```clojure\n(println 2)\n```", "```clojure\n(return 3)\n```"];
// Reasoning before each program, which the summaries leave out: enough to repay the legend that heads the first in a run this short.
const WHY = "I will build on what the last program stored and print just enough to check it before the next step. ".repeat(2) + "\n\n";
const COMPRESSED = [WHY + "```clojure\n(def xs [1 2 3])\n(println \"xs\" (count xs))\n```", WHY + "```clojure\n(def ys (map inc xs))\n(println \"ys\" ys)\n```", WHY + "```clojure\n(def zs (filter odd? ys))\n(println \"zs\" zs)\n```", "```clojure\n(return (count zs))\n```"];
let replies: readonly string[] = REPLIES;
let baseURL = "";
const bodies: Body[] = [];

localServer(
  (req, res, text) => {
    bodies.push(JSON.parse(text) as Body);
    const reply = replies[bodies.length - 1] ?? '(fail "over")';
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ id: "m", type: "message", role: "assistant", model: "claude-fake", content: [{ type: "text", text: reply }], stop_reason: "end_turn", usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } }));
  },
  {
    listening: (origin) => (baseURL = origin),
    reset: () => {
      bodies.length = 0;
      replies = REPLIES;
    },
  },
);

function marks(body: Body): string[] {
  const out: string[] = [];
  (body.system ?? []).forEach((b, i) => b.cache_control && out.push(`system:${i}`));
  body.messages.forEach((m, i) => m.content.forEach((b, j) => b.cache_control && out.push(`${m.role}:${i}:${j}`)));
  return out;
}

describe("anthropicLlm under a history strategy", () => {
  it("marks where observation-masking keeps the prompt stable, besides the system prompt and the last message", async () => {
    const llm = anthropicLlm({ model: "claude-fake", apiKey: "k", baseURL, env: {} });
    const agent = SubAgent.create({ prompt: "Print, then return 3.", maxTurns: 3 });
    const step = await SubAgent.run(agent, { llm, history: { name: "observation-masking", options: { turns: 1, polling: 1 } } });
    expect(step.ok).toBe(true);
    expect(bodies).toHaveLength(3);
    expect(marks(bodies[0])).toEqual(["system:0", "user:0:0"]);
    // Turn 3: task, a1, feedback 1, a2, feedback 2; masking keeps the prefix up to each aged turn's start.
    expect(bodies[2].messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(marks(bodies[2])).toEqual(["system:0", "assistant:1:0", "assistant:3:0", "user:4:0"]);
  });

  it("compressed history with the breakpoint layout: summaries are their own messages, sent unchanged, and the task and the two messages before the latest turn are marked besides the last message", async () => {
    bodies.length = 0;
    replies = COMPRESSED;
    const llm = anthropicLlm({ model: "claude-fake", apiKey: "k", baseURL, env: {} });
    const agent = SubAgent.create({ prompt: "Count the odd successors.", maxTurns: 4 });
    const step = await SubAgent.run(agent, { llm, compressHistory: true, view: { cacheModel: "breakpoint" } });
    expect(step.ok, step.ok ? "" : `${step.fail.reason}: ${step.fail.message}`).toBe(true);
    expect(bodies).toHaveLength(4);
    const last = bodies[3];
    // Task, then each summarized turn as an assistant message with its feedback.
    expect(last.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user", "assistant", "user"]);
    // The two messages before the last, which holds the model's note (one prompt only): the next
    // request's hit if a rewrite (a println cut, a superseded line) changes what follows them.
    // Four marks are all a request may carry: the system prompt's gives way to the task's, which
    // covers it (the first request marked it).
    expect(marks(bodies[0])).toContain("system:0");
    expect(last.messages[6].content[0].text).toContain("; Note: I will build on");
    expect(marks(last)).toEqual(["user:0:0", "user:4:0", "assistant:5:0", "user:6:0"]);
    // Each summary reaches the wire once and is sent unchanged in every later request.
    const text = (b: Body, i: number): string => JSON.stringify(b.messages[i].content.map((c) => ({ ...c, cache_control: undefined })));
    for (let k = 2; k < 4; k++) for (let i = 0; i < bodies[k - 1].messages.length - 1; i++) expect(text(bodies[k], i)).toBe(text(bodies[k - 1], i));
    expect(JSON.stringify(last.messages[1])).toContain("; Defined: xs");
    // The legend heads the first summary, and the system prompt does not hold it.
    expect(last.messages[1].content[0].text?.startsWith(summaryLegend())).toBe(true);
    expect(JSON.stringify(last.system)).not.toContain(summaryLegend());
  });
});
