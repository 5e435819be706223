// Emoji everywhere (data, prose, docstrings, a tool's error, wide prints): no prompt of either
// view may hold half of a surrogate pair, text cut inside an emoji, which a provider's JSON
// parser rejects or a model reads as a replacement character. The note's 160-character cut, the
// 4,000-character output cut and the samples' cuts each made them (34 messages of full history,
// 12 and 16 of the compressed view's two layouts, in this run).
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { scriptedLlm } from "../../src/llm/scripted.js";

const E = "😀🚀✨🔥💯🎉";
const code = (body: string, prose: string): string => `${prose}\n\n\`\`\`clojure\n${body}\n\`\`\``;
const items = Array.from({ length: 40 }, (_, i) => ({ id: i, name: `${E.repeat(3)} item ${i} ${E.repeat(i % 7)}`, note: E.repeat(20) }));
const tools = {
  boom: tool({
    description: "Fails.",
    input: z.object({ k: z.string() }),
    run: ({ k }) => {
      throw new Error(`${E.repeat(10)} no such key ${k} ${E.repeat(10)}`);
    },
  }),
  echo: tool({ description: "Echoes.", input: z.object({ k: z.string() }), run: ({ k }) => k.length }),
  loud: tool({
    description: "Fails at length.",
    run: () => {
      throw new Error(`x${E.repeat(100)}`);
    },
  }),
};
const prose = (k: number): string => `${E.repeat(30)} turn ${k} ${E.repeat(30)}`;
const replies = [
  code(`(defn tag "${E.repeat(60)}" [x] (str "${E}" x))\n(def xs (vec (take 5 data/items)))`, prose(0)),
  code("(def ys (vec (take 8 (drop 5 data/items))))", prose(1)),
  code(`(println (tool/boom {:k "${E.repeat(12)}"}))`, prose(2)),
  // A call that worked, listed with its arguments cut, before the turn fails; a tool error cut at its length.
  code(`(tool/echo {:k "${E.repeat(40)}"})\n(tool/loud)`, prose(3)),
  ...Array.from({ length: 10 }, (_, k) => code(`(println (take 4 (drop ${k * 3} data/items)))\n(println (apply str (repeat ${700 + k} "${E}")))`, prose(k + 3))),
  "```clojure\n(return 1)\n```",
];
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe("no prompt cuts an emoji in half", () => {
  it("the output limit cuts a line at its head and its tail between characters", async () => {
    // One line over the limit (the head keeps half of it), then another (the tail keeps the rest), at both parities.
    for (const pad of ["", "x"]) {
      const r = await evaluate(`(println (apply str "${pad}" (repeat 80 "${E}")))\n(println (apply str (concat (repeat 80 "${E}") ["${pad}"])))`, { limits: { maxOutputChars: 301 } });
      expect(r.ok).toBe(true);
      expect(r.prints.join("\n")).toContain("output truncated");
      expect(r.prints.filter((l) => LONE.test(l)), `pad "${pad}"`).toEqual([]);
    }
  });

  it.each([
    ["full history", { compressHistory: false }],
    ["compressed, token prefix", { compressHistory: true }],
    ["compressed, breakpoints", { compressHistory: true, view: { cacheModel: "breakpoint" as const } }],
  ])("%s", async (_name, options) => {
    const llm = scriptedLlm(replies);
    const agent = SubAgent.create({ prompt: "Look at the items.", tools, maxTurns: 20 });
    const step = await SubAgent.run(agent, { llm, context: { items }, ...options });
    expect(step.ok).toBe(true);
    const cut = llm.requests.flatMap((r, i) => r.messages.filter((m) => LONE.test(m.content)).map((m) => `prompt ${i + 1}: ${JSON.stringify(m.content.slice(Math.max(0, m.content.search(LONE) - 30), m.content.search(LONE) + 5))}`));
    expect(cut).toEqual([]);
    // The cuts happened: long output and notes were shortened, not left whole.
    expect(llm.requests.some((r) => r.messages.some((m) => m.content.includes("[output cut:")))).toBe(true);
  });

  // Host text may hold half of a pair already (a title an upstream API cut inside an emoji):
  // printed, thrown or put in the mission, it is the host's, but no prompt may carry it raw.
  const summarizer = scriptedLlm(Array.from({ length: 20 }, () => JSON.stringify({ ConversationSummary: "the page was fetched" })));
  it.each([
    ["full history", { compressHistory: false }],
    ["compressed", { compressHistory: true }],
    ["rolling-summary, its summarizer too", { history: { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } }, historyLlm: summarizer }],
  ])("host text holding half of a pair reaches no prompt raw: %s", async (_name, options) => {
    const title = "caf\ud83d";
    const hostTools = {
      fetch: tool({ description: "Fetches.", run: () => ({ title }) }),
      fail: tool({
        description: "Fails.",
        run: () => {
          throw new Error(`no page ${title}`);
        },
      }),
    };
    const llm = scriptedLlm([
      code("(def t (:title (tool/fetch)))\n(println t)", "fetch"),
      code("(println (tool/fail))", "fail"),
      code('(println (str "[" data/note "]"))', "note"),
      "```clojure\n(return 1)\n```",
    ]);
    const agent = SubAgent.create({ prompt: "Read {{note}} and the page.", tools: hostTools, maxTurns: 6 });
    const step = await SubAgent.run(agent, { llm, context: { note: "x\udc00y" }, ...options });
    expect(step.ok).toBe(true);
    const raw = [...llm.requests, ...summarizer.requests].flatMap((r, i) => r.messages.filter((m) => LONE.test(m.content)).map((m) => `prompt ${i + 1}: ${JSON.stringify(m.content.slice(Math.max(0, m.content.search(LONE) - 30), m.content.search(LONE) + 5))}`));
    expect(raw).toEqual([]);
    // The text is there, with a replacement character where the half was.
    const sent = llm.requests.flatMap((r) => r.messages.map((m) => m.content)).join("\n");
    expect(sent).toContain("caf\ufffd");
    expect(sent).toContain("no page caf\ufffd");
    expect(sent).toContain("[x\ufffdy]");
    if ("historyLlm" in options) expect(summarizer.requests.length).toBeGreaterThan(0);
  });
});
