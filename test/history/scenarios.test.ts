// The reference design's four scenarios, run end to end through SubAgent.run with scripted
// LLMs: what the LLM is sent each turn under compression, and what the trace keeps.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { renderSummary } from "../../src/history/summary.js";
import { compressedView } from "../../src/history/compressed.js";
import { summaryLegend } from "../../src/history/legend.js";
import { compressionReport } from "../../src/history/stats.js";
import { defaultViewOptions } from "../../src/history/view.js";

// Replies as models write them: a few sentences of reasoning, then the program.
const clj = (prose: string, code: string): string => `${prose} I will keep the program short, print only what I need to see next, and define names for everything I want to reuse in later turns.\n\n\`\`\`clojure\n${code}\n\`\`\``;

const products = [
  { name: "Laptop", price: 1200, category: "Electronics" },
  { name: "Mouse", price: 25, category: "Electronics" },
  { name: "Monitor", price: 300, category: "Electronics" },
  { name: "Desk", price: 250, category: "Furniture" },
];

let reviewCalls = 0;
const tools = {
  "search-reviews": tool({
    description: "Review summary for a category, as text.",
    input: z.object({ category: z.string() }),
    run: ({ category }) => {
      reviewCalls++;
      return `Customer Review Summary for ${category}:\n- Laptop: Average rating 4.5/5\n- Mouse: Average rating 3.2/5\n- Monitor: Average rating 4.7/5`;
    },
  }),
  "get-inventory": tool({
    description: "Inventory report as text.",
    run: () => "Warehouse Inventory Report:\nLaptop - 23 units in stock\nMouse - OUT OF STOCK\nMonitor - 8 units in stock",
  }),
};

const agent = SubAgent.create({
  prompt: "Find well-reviewed products in stock",
  tools,
  output: z.object({ products: z.array(z.string()) }),
  maxTurns: 5,
});

/** Roles and kinds of the messages sent for one turn: summary, full code (a reply as the model wrote it), feedback. */
/** The summaries an assistant message holds: consecutive summaries share one, a blank line apart; the first in a prompt is headed by the legend. */
const legends = [{}, { keepLatestFull: true }, { strictPrefix: true }].map((mode) => summaryLegend(mode) + "\n");
const summariesIn = (content: string): string[] => {
  const legend = legends.find((l) => content.startsWith(l));
  return (legend === undefined ? content : content.slice(legend.length)).split(/\n\n(?=; )/);
};

function shape(messages: ReadonlyArray<{ role: string; content: string }>, replies: readonly string[]): string[] {
  return messages.flatMap((m, i) => {
    if (i === 0) return ["system"];
    if (i === 1) return ["user"];
    if (m.role === "user") return ["feedback"];
    if (replies.includes(m.content)) return ["full"];
    return summariesIn(m.content).map((part) => {
      expect(part).toMatch(/^; (Function|Defined|Tool|Output|\(failed program omitted\)|\(no definitions)/);
      return "summary";
    });
  });
}

describe("scenario: successful multi-turn", () => {
  it("summarizes every successful turn as soon as the next starts (one that defined functions with their source for one prompt), and keeps the trace whole", async () => {
    const replies = [
      clj(
        "Let me look at the products.",
        `(def electronics "Electronics products" (filterv #(= (:category %) "Electronics") data/products))
(println "count:" (count electronics))`,
      ),
      clj(
        "Now the reports.",
        `(defn rated "Names with rating of at least 4" [text] (mapv second (filter #(>= (parse-double (nth % 2)) 4.0) (re-seq #"- (.+?): Average rating ([0-9.]+)/5" text))))
(def reviews (tool/search-reviews {:category "Electronics"}))
(def inventory (tool/get-inventory))`,
      ),
      clj("Compute the answer.", `(def good (rated reviews))\n(println "good:" good)`),
      clj("Done.", `(return {:products (filterv #(not (re-find (re-pattern (str % " - OUT OF STOCK")) inventory)) good)})`),
    ];
    const llm = scriptedLlm(replies);
    const step = await SubAgent.run(agent, { llm, context: { products }, compressHistory: true });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toEqual({ products: ["Laptop", "Monitor"] });
    const sent = llm.requests.map((r) => shape(r.messages, replies));
    expect(sent[0]).toEqual(["system", "user"]);
    // The summaries share one message: each prompt appends the newest to it, and the turn
    // lines between them are left out (the last feedback says which turn this is).
    expect(sent[1]).toEqual(["system", "user", "summary", "feedback"]);
    // Turn 2 defined a function the next turn builds on: its summary is followed by the
    // function's source for one prompt (what it defined without printing shows its type, which
    // fits beside that source where samples would not).
    expect(sent[2]).toEqual(["system", "user", "summary", "summary", "feedback"]);
    expect(sent[3]).toEqual(["system", "user", "summary", "summary", "summary", "feedback"]);
    expect(step.turns[3].view?.turnsFull).toEqual([]);
    expect(llm.requests[2].messages[2].content).toMatch(/; Defined: reviews = string\[\d+\]\n[\s\S]*\n```clojure\n\(defn rated "Names with rating of at least 4" \[text\][^\n]*\n```$/);
    expect(llm.requests[3].messages[2].content).not.toContain("(defn rated");
    // Every prompt extends the previous one up to its last feedback: a prefix cache serves all of it,
    for (let k = 1; k < 4; k++) {
      const [prev, next] = [llm.requests[k - 1].messages, llm.requests[k].messages];
      expect(next.slice(0, 2)).toEqual(prev.slice(0, 2));
      // less the note or the source the latest summary carries for one prompt, at its end.
      const tail = k > 1 ? String(prev[2].content).search(/\n(; Note: |```clojure\n)/) : -1;
      const base = k === 1 ? "" : tail >= 0 ? String(prev[2].content).slice(0, tail) : String(prev[2].content);
      if (k > 1) expect(String(next[2].content).startsWith(base)).toBe(true);
      expect(next).toHaveLength(4);
    }
    const last = llm.requests[3].messages;
    const [first] = summariesIn(last[2].content);
    // Turn 1 printed: its output moved into the summary, without samples.
    expect(first).toBe('; Defined: electronics - "Electronics products" = vector[3]\n; Output:\ncount: 3');
    expect(last[3].content).not.toContain("count: 3");
    expect(last[3].content).toMatch(/^Turn 4 of 5\. Next turn is your last/);
    // Turn 2's summary, had it paid: samples, the function with its docstring, and both tool calls with result shapes.
    const second = renderSummary(step.turns[1], { printsShown: 0 }, { sampleItems: defaultViewOptions.sampleItems, sampleChars: defaultViewOptions.sampleChars, toolCallsPerTurn: 10 }).text;
    expect(second).toContain('; Function: rated [text] - "Names with rating of at least 4"');
    expect(second).toMatch(/; Defined: reviews = string\[\d+\], sample: "Customer Review Summary/);
    expect(second).toContain('; Tool: search-reviews {:category "Electronics"} -> reviews');
    expect(second).toContain("; Tool: get-inventory -> inventory");
    // The trace keeps every full program and the exact messages sent.
    expect(step.turns.map((t) => t.program)).toEqual(replies.map((r) => r.split("```clojure\n")[1].split("\n```")[0]));
    expect(step.turns[3].messages).toEqual(last);
    const [, , third] = summariesIn(last[2].content);
    expect(third.startsWith("; Defined: good = vector[2]\n; Output:\ngood: [\"Laptop\" \"Monitor\"]\n; Note: Compute the answer. I will keep")).toBe(true);
    expect(step.turns[3].view?.turnsCompressed).toBe(3);
  });

  it("keeps the latest turn in full for one more prompt with keepLatestFull (the earlier timing)", async () => {
    const replies = [
      clj("Look.", `(def electronics (filterv #(= (:category %) "Electronics") data/products))\n(println (count electronics))`),
      clj("Reports.", `(def reviews (tool/search-reviews {:category "Electronics"}))`),
      clj("Done.", `(return {:products ["Laptop"]})`),
    ];
    const llm = scriptedLlm(replies);
    const step = await SubAgent.run(agent, { llm, context: { products }, compressHistory: true, view: { keepLatestFull: true } });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(shape(llm.requests[1].messages, replies)).toEqual(["system", "user", "full", "feedback"]);
    expect(shape(llm.requests[2].messages, replies)).toEqual(["system", "user", "summary", "feedback", "full", "feedback"]);
    // The latest turn defined without printing: its samples follow its feedback, not "No output" alone.
    expect(llm.requests[2].messages[5].content).toMatch(/^; Defined: reviews = string\[\d+\], sample: "Customer Review Summary/);
    expect(step.turns[2].view?.turnsFull).toEqual([{ turn: 2, reason: "latest" }]);
  });
});

describe("scenario: error recovery", () => {
  it("keeps the failing turn in full while the model fixes it", async () => {
    const replies = [
      clj("Explore.", `(def names (mapv :name data/products))\n(println names)`),
      clj("Prices.", `(def prices (into {} (map (juxt :name :price) data/products)))\n(println (count prices))`),
      clj("The total is the sum of each product's cost, which the catalog records next to its price; summing it once gives the figure the report needs. ".repeat(3), `(def total (reduce + (map :cost data/products)))\n(println total)`),
      clj("Fix the key.", `(def total (reduce + (map :price data/products)))\n(println total)`),
      clj("Done.", `(return {:products (filterv #(> (get prices %) 100) names)})`),
    ];
    const llm = scriptedLlm(replies);
    const step = await SubAgent.run(agent, { llm, context: { products }, compressHistory: true });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.turns[2].status).toBe("error");
    // The summaries before the error share a message, the turn line after them kept before the full turn.
    expect(shape(llm.requests[3].messages, replies)).toEqual(["system", "user", "summary", "summary", "feedback", "full", "feedback"]);
    expect(shape(llm.requests[4].messages, replies)).toEqual(["system", "user", "summary", "summary", "feedback", "full", "feedback", "summary", "feedback"]);
    expect(llm.requests[4].messages[3].content).toBe("Turn 3 of 5.");
    const errored = llm.requests[4].messages[4];
    expect(errored.content).toBe(replies[2]);
    expect(llm.requests[4].messages[5].content).toMatch(/Error/);
    expect(step.turns[4].view?.turnsFull).toEqual([{ turn: 3, reason: "error" }]);
    // One turn later the error is two turns back and was fixed since: with prompts left to repay
    // the rewrite (a 20-turn budget; its reasoning saved in each), its program is summarized and its feedback keeps the
    // error's first line; in the run's own 5-turn budget it stays as written.
    const at = (maxTurns: number) => compressedView({ system: step.trace.system, task: step.trace.task, turns: step.turns, maxTurns }, { ...defaultViewOptions, compressHistory: true });
    expect(at(5).stats.turnsFull).toEqual([{ turn: 3, reason: "cost" }]);
    const next = at(20);
    // The summarized error's feedback is more than a turn line: it ends the shared message.
    expect(shape(next.messages, replies)).toEqual(["system", "user", "summary", "summary", "summary", "feedback", "summary", "summary"]);
    expect(summariesIn(next.messages[2].content)[2]).toBe("; (failed program omitted)");
    expect(next.messages[3].content).toMatch(/^Error at line 1, column \d+: type_error: [^\n]+\n+Nothing from this program was stored\.\n+Turn 4 of 20\./);
    expect(llm.requests[4].messages[5].content).toMatch(/\n1 \| /);
    expect(compressedView({ system: step.trace.system, task: step.trace.task, turns: step.turns, maxTurns: 5 }, { ...defaultViewOptions, compressHistory: true, errorWindowTurns: 0 }).messages[4].content).toBe(replies[2]);
  });

  it("shows the turn before an error as written when the error happened in the function it defined and its source did not fit after its summary", async () => {
    const replies = [
      clj("Helper.", `(defn cost-of "Cost of a product" [p] (+ 1 (:cost p)))\n(println "ok")`),
      clj("Use it.", `(def costs (mapv cost-of data/products))\n(println costs)`),
      clj("Fix.", `(defn cost-of "Cost of a product" [p] (+ 1 (:price p)))\n(def costs (mapv cost-of data/products))\n(println (count costs))`),
      clj("Done.", `(return {:products (mapv :name data/products)})`),
    ];
    const llm = scriptedLlm(replies);
    const step = await SubAgent.run(agent, { llm, context: { products }, compressHistory: true });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.turns[1].error?.trace).toContain("cost-of");
    // In a run of 5 the source does not fit after the first summary (its tail owes the legend too):
    // the prompt that builds on cost-of shows turn 1 as written (before, its summary alone, and the
    // body that failed was in no line of it), and the next keeps it so (summarizing it would not repay
    // the rewrite): nothing before the error is written again.
    expect(shape(llm.requests[1].messages, replies)).toEqual(["system", "user", "full", "feedback"]);
    expect(shape(llm.requests[2].messages, replies)).toEqual(["system", "user", "full", "feedback", "full", "feedback"]);
    expect(step.turns[2].view?.turnsFull).toEqual([{ turn: 1, reason: "cost" }, { turn: 2, reason: "error" }]);
    expect(llm.requests[2].messages.slice(0, 4)).toEqual(llm.requests[1].messages.slice(0, 4));
  });
});

describe("scenario: tool-heavy workflow", () => {
  it("shows the tool output in the summary and keeps the processing turn full", async () => {
    reviewCalls = 0;
    const replies = [
      clj(
        "Fetch and print both reports.",
        `(def reviews (tool/search-reviews {:category "Electronics"}))
(def inventory (tool/get-inventory))
(println "Reviews:" reviews)
(println "Inventory:" inventory)`,
      ),
      clj("Answer from what I saw.", `(return {:products ["Laptop" "Monitor"]})`),
    ];
    const llm = scriptedLlm(replies);
    const step = await SubAgent.run(agent, { llm, context: { products }, compressHistory: true });
    expect(step.ok).toBe(true);
    expect(reviewCalls).toBe(1);
    // Turn 1 is summarized in the very next prompt, its output whole in the summary.
    expect(shape(llm.requests[1].messages, replies)).toEqual(["system", "user", "summary", "feedback"]);
    const usage = compressionReport(step.trace, { maxTurns: agent.maxTurns, toolsWithdrawn: true }, { ...defaultViewOptions, compressHistory: true });
    expect(usage.prompts).toHaveLength(2);
    const next = compressedView({ system: step.trace.system, task: step.trace.task, turns: step.turns, maxTurns: 5, toolsWithdrawn: true }, { ...defaultViewOptions, compressHistory: true });
    const [summary, after] = summariesIn(next.messages[2].content);
    expect(summary).toContain("Reviews: Customer Review Summary for Electronics:");
    expect(summary).toContain("Inventory: Warehouse Inventory Report:");
    expect(summary).toContain("; Defined: reviews = string[");
    expect(summary).not.toContain("sample:");
    expect(summary).toContain('; Tool: search-reviews {:category "Electronics"} -> reviews');
    // The run finished: no feedback follows, and the output is shown once, in the summary.
    expect(next.messages).toHaveLength(3);
    expect(after.split("\n")[0]).toBe("; (no definitions, tool calls or output)");
    expect(after.split("\n")[1]).toMatch(/^; Note: Answer from what I saw\./);
  });
});

describe("scenario: single-shot", () => {
  it("sends only the system prompt and the task", async () => {
    const single = SubAgent.create({ prompt: "Count the products", output: z.number(), maxTurns: 1 });
    const llm = scriptedLlm([clj("Count.", "(return (count data/products))")]);
    const step = await SubAgent.run(single, { llm, context: { products }, compressHistory: true });
    expect(step.ok).toBe(true);
    expect(step.value).toBe(4);
    expect(shape(llm.requests[0].messages, [])).toEqual(["system", "user"]);
    expect(step.turns[0].view?.turnsCompressed).toBe(0);
  });
});

describe("inheritance", () => {
  it("a nested agent compresses its history when its caller does", async () => {
    // A budget of 8 and reasoning the summaries leave out: enough to repay the legend.
    const child = SubAgent.create({ prompt: "Look up {{item}}", output: z.string(), maxTurns: 8 });
    const parent = SubAgent.create({ prompt: "Ask the helper", tools: { helper: SubAgent.asTool(child) }, output: z.string(), maxTurns: 2 });
    const replies = [
      clj("Ask.", `(def r (tool/helper {:item "x"}))\n(return r)`),
      clj("The child looks up the first value it needs and prints it, so that the next turn can add the second one.", `(def a 1)\n(println "a is" a)`),
      clj("The child looks up the second value and prints it too, so that the last turn can return the sum of both.", `(def b 2)\n(println "b is" b)`),
      clj("Child answers.", `(return (str "x=" (+ a b)))`),
    ];
    const llm = scriptedLlm(replies);
    const step = await SubAgent.run(parent, { llm, compressHistory: true });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toBe("x=3");
    // The child's third request: its turns 1 and 2 are summarized.
    expect(shape(llm.requests[3].messages, replies)).toEqual(["system", "user", "summary", "summary", "feedback"]);
  });
});
