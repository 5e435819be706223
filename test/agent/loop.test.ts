// The SubAgent turn loop end to end, with scripted LLMs.
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { AgentDefinitionError } from "../../src/agent/errors.js";
import { renderFeedback, renderPrints } from "../../src/trace/feedback.js";
import { scriptedLlm, type ScriptedReply } from "../../src/llm/scripted.js";
import type { Llm } from "../../src/llm/types.js";
import { LlmError } from "../../src/llm/errors.js";
import { messageText } from "../../src/llm/messages.js";
import { SubAgent, type AgentDefinition, type RunOptions } from "../../src/agent/subagent.js";
import { tool } from "../../src/agent/tools.js";
import { evaluate } from "../../src/lisp/evaluate.js";
import { UNKEPT_ARGS } from "../../src/lisp/interop.js";
import type { Turn } from "../../src/trace/trace.js";
import { saveRun } from "../../src/agent/resume.js";
import { runStateToJson } from "../../src/trace/run-state.js";

const code = (body: string): string => "```clojure\n" + body + "\n```";

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      reject(new Error("stopped"));
    });
  });

const REVIEWS = [
  { product: "Laptop", rating: 4.5 },
  { product: "Mouse", rating: 3.2 },
  { product: "Monitor", rating: 4.8 },
];

const searchReviews = tool({
  description: "Review summaries for a category.",
  input: z.object({ category: z.string() }),
  output: z.array(z.object({ product: z.string(), rating: z.number() })),
  run: async ({ category }) => (category === "Electronics" ? REVIEWS : []),
});

const products = z.object({ products: z.array(z.string()) });

function agentWith(def: Partial<AgentDefinition<typeof products>> = {}) {
  return SubAgent.create({
    prompt: "Find well-reviewed products in stock among data/products",
    tools: { "search-reviews": searchReviews },
    output: products,
    maxTurns: 5,
    ...def,
  });
}

async function run(replies: ScriptedReply[], def: Partial<AgentDefinition<typeof products>> = {}, options: Partial<RunOptions> = {}) {
  const llm = scriptedLlm(replies);
  const step = await SubAgent.run(agentWith(def), { llm, context: { products: ["Laptop", "Monitor", "Keyboard"] }, ...options });
  return { step, llm };
}

describe("a successful run", () => {
  it("explores, stores definitions, then returns a validated value", async () => {
    const { step, llm } = await run([
      code('(def reviews "Electronics reviews" (tool/search-reviews {:category "Electronics"}))\n(println (count reviews) (first reviews))'),
      code("(defn good? \"rated above 4\" [r] (> (:rating r) 4))\n(return {:products (filterv #(contains? (set data/products) %) (map :product (filter good? reviews)))})"),
    ]);
    expect(step.fail?.message).toBeUndefined();
    expect(step.ok).toBe(true);
    expect(step.value).toEqual({ products: ["Laptop", "Monitor"] });
    expect(step.turns.map((t) => t.status)).toEqual(["ok", "returned"]);
    expect(llm.remaining).toBe(0);

    const [t1, t2] = step.turns;
    expect(t1.program).toContain("(def reviews");
    expect(t1.prints).toEqual(['3 {:product "Laptop" :rating 4.5}']);
    expect(t1.toolCalls).toMatchObject([{ name: "search-reviews", args: { category: "Electronics" }, result: REVIEWS }]);
    expect(t1.definitions).toMatchObject([{ name: "reviews", doc: "Electronics reviews", kind: "value", type: "vector", size: 3 }]);
    expect(t1.definitions[0].edn).toBe('[{:product "Laptop" :rating 4.5} {:product "Mouse" :rating 3.2} {:product "Monitor" :rating 4.8}]');
    expect(t1.definitions[0].source).toContain("(def reviews");
    expect(t1.feedback).toBe('Output:\n3 {:product "Laptop" :rating 4.5}\n\nStored: reviews\n\nTurn 2 of 5.');
    expect(t2.feedback).toBeUndefined();
    expect(t2.definitions).toMatchObject([{ name: "good?", kind: "function", params: "[r]", doc: "rated above 4" }]);
    expect(t2.memory.map((d) => d.name)).toEqual(["reviews", "good?"]);
    expect(t2.value).toBe('{:products ["Laptop" "Monitor"]}');

    expect([...step.memory.keys()]).toEqual(["reviews", "good?"]);
    expect(step.memory.get("good?")?.doc).toBe("rated above 4");
  });

  it("sends the full history: system, task, then each reply and its feedback", async () => {
    const { step, llm } = await run([code("(println 1)"), code("(println 2)"), code('(return {:products ["Laptop"]})')]);
    expect(step.ok).toBe(true);
    const m3 = step.messages[2];
    expect(m3.map((m) => m.role)).toEqual(["system", "user", "assistant", "user", "assistant", "user"]);
    expect(m3[2].content).toBe(code("(println 1)"));
    expect(m3[3].content).toContain("Output:\n1");
    expect(m3[5].content).toContain("Turn 3 of 5.");
    expect(step.messages).toEqual(step.turns.map((t) => t.messages));
    expect(llm.requests.map((r) => r.messages)).toEqual(step.messages);
  });

  // A reply with no text (a reasoning model that spent its output limit thinking) fails the run,
  // but the provider billed it: its usage travels on the LlmError and was dropped, 0 tokens.
  it("counts the usage a failed request was billed for", async () => {
    const billed = { inputTokens: 1000, outputTokens: 4000, cachedTokens: 200 };
    const fails: Llm = { name: "billed", complete: () => Promise.reject(new LlmError("malformed", "billed: the reply has no text content (finish_reason: length)", { usage: billed })) };
    const unbilled: Llm = { name: "unbilled", complete: () => Promise.reject(new LlmError("http", "unbilled: 500")) };
    const agent = SubAgent.create({ prompt: "Count the orders.", maxTurns: 3 });
    const a = await SubAgent.run(agent, { llm: fails });
    expect([a.ok, a.usage.inputTokens, a.usage.outputTokens, a.usage.cachedTokens, a.usage.llmRequests]).toEqual([false, 1000, 4000, 200, 1]);
    const b = await SubAgent.run(agent, { llm: unbilled });
    expect([b.ok, b.usage.inputTokens, b.usage.outputTokens, b.usage.llmRequests]).toEqual([false, 0, 0, 1]);
  });

  it("keeps the system prompt and task byte-identical across turns", async () => {
    const { step } = await run([code("(println 1)"), code("(println 2)"), code('(return {:products []})')]);
    const systems = step.messages.map((m) => m[0].content);
    expect(new Set(systems).size).toBe(1);
    expect(systems[0]).toBe(step.trace.system);
    expect(new Set(step.messages.map((m) => m[1].content)).size).toBe(1);
    expect(step.messages[1][1].content).toBe(step.trace.task);
    expect(step.trace.task).toContain("Find well-reviewed products in stock");
  });

  it("adds up usage per turn and in total", async () => {
    const usage = (i: number) => ({ inputTokens: 100 * i, outputTokens: 10 * i, cachedTokens: 5 * i });
    const { step } = await run([
      { content: code("(println 1)"), usage: usage(1) },
      { content: code('(return {:products []})'), usage: usage(2) },
    ]);
    expect(step.usage).toMatchObject({ inputTokens: 300, outputTokens: 30, cachedTokens: 15, totalTokens: 330, llmRequests: 2 });
    expect(step.usage.perTurn.map((u) => [u.turn, u.inputTokens, u.outputTokens, u.cachedTokens])).toEqual([
      [1, 100, 10, 5],
      [2, 200, 20, 10],
    ]);
    expect(step.usage.durationMs).toBeGreaterThanOrEqual(step.usage.llmMs + step.usage.execMs - 1);
    expect(step.usage.compression).toMatchObject({ enabled: false, latest: { turnsCompressed: 0 } });
  });

  it("measures a turn itself when the client's usage holds no token counts, so the token budget still holds", async () => {
    // A host's adapter mapping a provider that left the counts out (undefined), or gave garbage.
    const blank = { inputTokens: undefined, outputTokens: Number.NaN, cachedTokens: undefined } as never;
    const { step } = await run([{ content: code("(println 1)"), usage: blank }, { content: code("(println 2)"), usage: blank }, { content: code("(return {:products []})"), usage: blank }], {}, { tokenBudget: 1000 });
    expect(step.turns[0].usage.source).toBe("local");
    expect(step.turns[0].usage.inputTokens).toBeGreaterThan(1000);
    expect(step.fail?.reason).toBe("token_budget_exceeded");
    expect(step.turns).toHaveLength(1);
  });

  it("accepts any value without an output schema, and returns zod's parsed output with one", async () => {
    const free = await SubAgent.run(SubAgent.create({ prompt: "Anything" }), { llm: scriptedLlm([code("(return [1 :a nil])")]) });
    expect(free.value).toEqual([1, "a", null]);
    const coerced = await SubAgent.run(SubAgent.create({ prompt: "Count", output: z.object({ n: z.coerce.number() }) }), { llm: scriptedLlm([code('(return {:n "42"})')]) });
    expect(coerced.value).toEqual({ n: 42 });
  });
});

describe("recovery from mistakes", () => {
  it("feeds an error back with line:column, caret excerpt and hint, and the next turn fixes it", async () => {
    const { step } = await run([code('(def a 1)\n(println (+ a "2"))'), code('(return {:products [(str 1)]})')]);
    expect(step.ok).toBe(true);
    const t1 = step.turns[0];
    expect(t1.status).toBe("error");
    expect(t1.error).toMatchObject({ kind: "type_error", line: 2, column: 10 });
    const fb = t1.feedback as string;
    expect(fb).toContain("Error at line 2, column 10: type_error:");
    expect(fb).toContain('2 | (println (+ a "2"))\n  |          ^');
    expect(fb).toContain("Hint: ");
    expect(fb).toContain("Nothing from this program was stored.");
    expect(fb).toContain("Turn 2 of 5.");
    expect(step.turns[1].status).toBe("returned");
    expect(step.value).toEqual({ products: ["1"] });
  });

  it("rolls back a failed turn's definitions", async () => {
    const { step } = await run([code("(def a 1)"), code("(def b 2)\n(def c (/ b 0))"), code("(println b)"), code('(return {:products [(str a)]})')]);
    const [t1, t2, t3] = step.turns;
    expect(t1.memory.map((d) => d.name)).toEqual(["a"]);
    expect(t2.status).toBe("error");
    expect(t2.definitions).toEqual([]);
    expect(t2.memory.map((d) => d.name)).toEqual(["a"]);
    expect(t3.status).toBe("error");
    expect(t3.error?.kind).toBe("unbound_var");
    expect(t2.feedback).toContain("Stored: a");
    expect([...step.memory.keys()]).toEqual(["a"]);
    expect(step.ok).toBe(true);
  });

  it("feeds back a return that fails the output schema, naming the field, and lets the next turn retry", async () => {
    const { step } = await run([code('(return {:products ["Laptop" 42]})'), code('(return {:products ["Laptop" "42"]})')]);
    const t1 = step.turns[0];
    expect(t1.status).toBe("invalid_return");
    expect(t1.error?.kind).toBe("value_error");
    expect(t1.feedback).toContain("does not match the expected output");
    expect(t1.feedback).toContain("[:products 1]: expected string, received number");
    expect(t1.feedback).toContain("Turn 2 of 5.");
    expect(step.ok && step.value).toEqual({ products: ["Laptop", "42"] });
  });

  it("names a missing key of the returned map", async () => {
    const { step } = await run([code("(return {:items []})"), code("(return {:products []})")]);
    expect(step.turns[0].feedback).toContain("missing :products (expected array)");
    expect(step.ok).toBe(true);
  });

  it("tells the model, and the trace, when its reply was cut at the output token limit, rather than only that its program does not parse", async () => {
    const agent = SubAgent.create({ prompt: "Add up.", maxTurns: 3 });
    const cut = { content: "I will build the table first.\n```clojure\n(def rows (map (fn [x] {:a x", truncated: true };
    const step = await SubAgent.run(agent, { llm: scriptedLlm([cut, code("(def a 1)"), code("(return a)")]), isolation: "none" });
    expect(step.value).toBe(1);
    const [first, second] = step.turns;
    expect([first.truncated, first.error?.kind, second.truncated]).toEqual([true, "parse_error", undefined]);
    expect(first.feedback).toMatch(/^Note: your reply was cut off at the output limit \(max tokens\), so only what came before the cut was read\./);
    expect(second.feedback).not.toContain("cut off");
  });

  it("answers a reply without code, and the run goes on", async () => {
    const { step } = await run(["The products are Laptop and Monitor.", code('(return {:products ["Laptop"]})')]);
    const t1 = step.turns[0];
    expect(t1.status).toBe("no_code");
    expect(t1.program).toBeNull();
    expect(t1.feedback).toContain("no PTC-Lisp program found");
    expect(t1.feedback).toContain("```clojure");
    expect(step.ok).toBe(true);
  });

  it("rejects a reply with several code blocks, running none of them", async () => {
    const reply = `${code('(def x (tool/search-reviews "Electronics"))')}\nand then\n${code("(println x)")}`;
    const { step } = await run([reply, code('(return {:products ["x"]})')]);
    const t1 = step.turns[0];
    expect(t1.status).toBe("no_code");
    expect(t1.toolCalls).toEqual([]);
    expect(t1.feedback).toContain("2 code blocks");
    expect(step.ok).toBe(true);
  });

  it("repairs smart quotes and invisible characters, runs the program, and says so", async () => {
    const { step } = await run([code("(println \u201Cchecked\u201D\u200B)"), code('(return {:products []})')]);
    const t1 = step.turns[0];
    expect(t1.status).toBe("ok");
    expect(t1.prints).toEqual(["checked"]);
    expect(t1.notes).toEqual(["replaced 2 smart quotes with ASCII quotes", "removed 1 invisible character"]);
    expect(t1.feedback).toContain("Note: your program was repaired before it ran: replaced 2 smart quotes");
  });

  it("says when nothing was printed", async () => {
    const { step } = await run([code("(+ 1 2)"), code('(return {:products []})')]);
    expect(step.turns[0].feedback).toContain("No output");
  });

  it("bounds println output in feedback and says it was cut", async () => {
    const { step } = await run([code('(dotimes [i 200] (println "line" i (apply str (repeat 40 "x"))))'), code('(return {:products []})')], {}, { maxPrintChars: 1000 });
    const fb = step.turns[0].feedback as string;
    expect(fb.length).toBeLessThan(1400);
    expect(fb).toMatch(/\[output cut: showing \d+ of \d+ characters/);
    expect(step.turns[0].prints.length).toBe(200);
  });
});

describe("tools in the loop", () => {
  it("feeds back a tool's error", async () => {
    const flaky = tool({ description: "Fails.", run: () => Promise.reject(new Error("service unavailable")) });
    const { step } = await run([code("(tool/flaky)"), code('(return {:products []})')], { tools: { flaky } });
    expect(step.turns[0].toolCalls).toMatchObject([{ name: "flaky", error: "service unavailable" }]);
    expect(step.turns[0].feedback).toContain("tool/flaky failed: service unavailable");
  });

  it("takes a tool timeout past setTimeout's range (2^31 ms) as none, instead of timing the call out after 1 ms", async () => {
    // A 1 ms timer set before the tool's 20 ms one fires first: the old code timed the call out.
    const answer = (): Promise<number> => new Promise((resolve) => setTimeout(() => resolve(7), 20));
    const own = tool({ description: "Slow.", timeoutMs: 2 ** 31, run: answer });
    const inherited = tool({ description: "Slow.", run: answer });
    const agent = SubAgent.create({ prompt: "Go", tools: { own, inherited }, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return [(tool/own) (tool/inherited)])")]), toolTimeoutMs: 2 ** 32, isolation: "none" });
    expect([step.turns[0].error?.message, step.value]).toEqual([undefined, [7, 7]]);
  });

  it("feeds back a tool timeout", async () => {
    const slow = tool({ description: "Slow.", timeoutMs: 20, run: (_a, signal) => sleep(5000, signal) });
    const { step } = await run([code("(tool/slow)"), code('(return {:products []})')], { tools: { slow } });
    expect(step.turns[0].feedback).toContain("tool/slow gave no answer within 20 ms");
    expect(step.ok).toBe(true);
  });

  it("uses the run's toolTimeoutMs for tools without their own", async () => {
    const slow = tool({ description: "Slow.", run: (_a, signal) => sleep(5000, signal) });
    const { step } = await run([code("(tool/slow)"), code('(return {:products []})')], { tools: { slow } }, { toolTimeoutMs: 15 });
    expect(step.turns[0].feedback).toContain("no answer within 15 ms");
  });

  it("feeds back invalid tool arguments naming the field", async () => {
    const { step } = await run([code("(tool/search-reviews {:category 7})"), code('(tool/search-reviews {:categry "x"})'), code('(return {:products []})')]);
    expect(step.turns[0].feedback).toContain("invalid arguments: :category: expected string, received number");
    expect(step.turns[1].feedback).toContain("missing :category");
  });

  it("enforces a per-run call cap across turns", async () => {
    let calls = 0;
    const lookup = tool({ description: "Looks up.", maxCalls: 2, run: () => ++calls });
    const { step } = await run([code("(println (tool/lookup))"), code("(println (tool/lookup))"), code("(println (tool/lookup))"), code('(return {:products []})')], { tools: { lookup } });
    expect(calls).toBe(2);
    expect(step.turns[2].feedback).toContain("call limit reached: tool/lookup may be called at most 2 times per run");
  });

  it("withdraws tools on the final turn, warning the turn before, with the system prompt unchanged", async () => {
    let calls = 0;
    const fetcher = tool({ description: "Fetches.", run: () => ++calls });
    const { step } = await run([code("(println (tool/fetcher))"), code("(println (tool/fetcher))"), code("(return {:products [(str (tool/fetcher))]})")], { tools: { fetcher }, maxTurns: 3 });
    expect(calls).toBe(2);
    expect(step.turns[0].feedback).toContain("Turn 2 of 3. Next turn is your last and tools will be withdrawn then");
    expect(step.turns[1].feedback).toContain("Turn 3 of 3. This is your LAST turn and tools are now withdrawn");
    const last = step.turns[2];
    expect(last.status).toBe("error");
    expect(last.error?.message).toContain("tools are withdrawn on the final turn");
    expect(step.fail?.reason).toBe("max_turns_exceeded");
    expect(new Set(step.messages.map((m) => m[0].content)).size).toBe(1);
  });

  it("keeps tools on a single-turn run", async () => {
    const { step } = await run([code('(return {:products (mapv :product (tool/search-reviews "Electronics"))})')], { maxTurns: 1 });
    expect(step.ok && step.value).toEqual({ products: ["Laptop", "Mouse", "Monitor"] });
    expect(step.trace.system).toContain("# One turn");
  });

  it("runs independent tool calls in pmap concurrently", async () => {
    let active = 0;
    let peak = 0;
    const wait = tool({
      description: "Waits.",
      input: z.object({ id: z.string() }),
      run: async ({ id }) => {
        peak = Math.max(peak, ++active);
        await sleep(50);
        active--;
        return id;
      },
    });
    const { step } = await run([code('(return {:products (pmap #(tool/wait %) ["a" "b" "c"])})')], { tools: { wait } });
    expect(step.value).toEqual({ products: ["a", "b", "c"] });
    expect(peak).toBe(3);
    expect(step.turns[0].toolCalls).toHaveLength(3);
  });
});

describe("context", () => {
  it("makes _ keys readable as data/_key but never shows them in any prompt", async () => {
    const llm = scriptedLlm([code("(println (count data/_token))"), code("(return {:products [data/_token]})")]);
    const step = await SubAgent.run(agentWith(), { llm, context: { products: ["Laptop"], _token: "sk-very-secret" } });
    expect(step.ok && step.value).toEqual({ products: ["sk-very-secret"] });
    expect(step.turns[0].prints).toEqual(["14"]);
    // The model's own replies mention data/_token, as it wrote them; nothing else may.
    const sent = JSON.stringify(llm.requests.flatMap((r) => r.messages.filter((m) => m.role !== "assistant")));
    expect(sent).toContain("data/products");
    expect(sent).not.toContain("_token");
    expect(sent).not.toContain("sk-very-secret");
  });

  it("fills the mission's {{placeholders}} from the context", async () => {
    const agent = SubAgent.create({ prompt: "Find {{category}} products rated above {{min}}", maxTurns: 1 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), context: { category: "Electronics", min: 4 } });
    expect(step.trace.task).toContain("Find Electronics products rated above 4");
  });
});

describe("endings", () => {
  // Programs run in worker threads; the deadline tests below measure a program, not a thread starting.
  beforeAll(async () => {
    await evaluate("nil", { isolation: "worker" });
  });

  it("ends with the program's (fail reason)", async () => {
    const { step } = await run([code('(fail "no products in stock")')]);
    expect(step.ok).toBe(false);
    expect(step.fail).toEqual({ reason: "failed", message: "no products in stock", details: "no products in stock" });
    expect(step.turns).toHaveLength(1);
    expect(step.turns[0].status).toBe("failed");
  });

  it("ends with max_turns_exceeded, keeping every turn", async () => {
    const { step } = await run([code("(println 1)"), code("(println 2)")], { maxTurns: 2 });
    expect(step.fail?.reason).toBe("max_turns_exceeded");
    expect(step.turns).toHaveLength(2);
    expect(step.turns[1].feedback).toBeUndefined();
    expect(step.turns[0].feedback).toContain("This is your LAST turn");
  });

  // Deadlines here are seconds long with a stall after them, so a loaded machine can't reach
  // the deadline before the work the test means it to cut (it did at 100-500 ms, under load 20).
  it("ends with deadline_exceeded when the LLM is too slow", async () => {
    let calls = 0;
    const stalling: Llm = { name: "stalling", complete: () => (++calls === 1 ? Promise.resolve({ content: code("(println 1)") }) : new Promise(() => undefined)) };
    const step = await SubAgent.run(agentWith(), { llm: stalling, context: {}, deadlineMs: 4_000 });
    expect(step.fail?.reason).toBe("deadline_exceeded");
    expect(calls).toBe(2);
    expect(step.turns).toHaveLength(1);
    expect(step.turns[0].status).toBe("ok");
  });

  it("ends with deadline_exceeded while a tool runs, recording the interrupted turn", async () => {
    const slow = tool({ description: "Slow.", timeoutMs: Infinity, run: () => new Promise(() => undefined) });
    const { step } = await run([code("(tool/slow)")], { tools: { slow } }, { deadlineMs: 3_000 });
    expect(step.fail?.reason).toBe("deadline_exceeded");
    expect(step.turns).toHaveLength(1);
    expect(step.turns[0].toolCalls).toMatchObject([{ name: "slow", error: "aborted" }]);
  });

  it("cuts a busy program's time limit to what is left of the deadline", async () => {
    const t0 = performance.now();
    // In process, the cut time limit is the only thing that can stop the loop (in a worker the
    // deadline's abort may end it first, as "aborted"); uncut, it would run for a minute.
    const { step } = await run([code("(loop [i 0] (recur (inc i)))")], {}, { deadlineMs: 3_000, isolation: "none", limits: { timeoutMs: 60_000, maxFuel: 1e15, maxLoopIterations: 1e15 } });
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(step.fail?.reason).toBe("deadline_exceeded");
    expect(step.turns).toHaveLength(1);
    expect(step.turns[0].error?.kind).toBe("timeout");
  });

  it("ends with token_budget_exceeded once usage reaches the budget", async () => {
    const big = { inputTokens: 800, outputTokens: 100, cachedTokens: 0 };
    const { step, llm } = await run(
      [
        { content: code("(println 1)"), usage: big },
        { content: code("(println 2)"), usage: big },
        { content: code("(return {:products []})"), usage: big },
      ],
      {},
      { tokenBudget: 1500 },
    );
    expect(step.fail?.reason).toBe("token_budget_exceeded");
    expect(step.fail?.message).toContain("1800");
    expect(step.turns).toHaveLength(2);
    expect(step.turns[1].prints).toEqual(["2"]);
    expect(llm.remaining).toBe(1);
  });

  it("counts what the history strategy's summarizer spent against the token budget, a rejected summary's too, before the next LLM call", async () => {
    let asked = 0;
    const historyLlm: Llm = { name: "summarizer", complete: () => (asked++, Promise.resolve({ content: "Summary: printed a number.", usage: { inputTokens: 1000, outputTokens: 50, cachedTokens: 0 } })) };
    const history = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } };
    const small = { inputTokens: 100, outputTokens: 10, cachedTokens: 0 };
    const { step, llm } = await run(
      [1, 2, 3, 4].map((i) => ({ content: code(i === 4 ? "(return {:products []})" : `(println ${i})`), usage: small })),
      {},
      { tokenBudget: 1500, history, historyLlm },
    );
    expect(asked).toBeGreaterThan(0);
    expect(step.usage.summaries).toEqual({ inputTokens: asked * 1000, outputTokens: asked * 50, cachedTokens: 0, llmRequests: asked });
    expect(step.fail?.reason).toBe("token_budget_exceeded");
    // The summaries of turn 2's prompt spent the budget: its LLM call was not made.
    expect(step.turns).toHaveLength(1);
    expect(llm.remaining).toBe(3);
  });

  it("ends with aborted when the signal fires during the LLM call", async () => {
    const ac = new AbortController();
    const llm = scriptedLlm([code("(println 1)"), code("(return {:products []})")], { delayMs: 120_000 });
    setTimeout(() => ac.abort(), 50);
    const t0 = performance.now();
    const step = await SubAgent.run(agentWith(), { llm, signal: ac.signal });
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(step.fail?.reason).toBe("aborted");
    expect(step.turns).toEqual([]);
    expect(step.trace.system.length).toBeGreaterThan(0);
  });

  it("stops waiting for an LLM client that ignores the signal", async () => {
    const ac = new AbortController();
    const deaf: Llm = { name: "deaf", complete: () => new Promise(() => undefined) };
    setTimeout(() => ac.abort(), 30);
    const step = await SubAgent.run(agentWith(), { llm: deaf, signal: ac.signal });
    expect(step.fail?.reason).toBe("aborted");
  });

  it("ends with aborted mid-tool, aborting the tool and keeping the earlier turns", async () => {
    const ac = new AbortController();
    let toolAborted = false;
    const slow = tool({
      description: "Slow.",
      timeoutMs: Infinity,
      run: async (_a, signal) => {
        signal.addEventListener("abort", () => (toolAborted = true));
        setTimeout(() => ac.abort(), 20);
        await sleep(5000, signal);
      },
    });
    const { step } = await run([code("(def a 1)"), code("(def b (tool/slow))"), code("(return {:products []})")], { tools: { slow } }, { signal: ac.signal });
    expect(step.fail?.reason).toBe("aborted");
    expect(toolAborted).toBe(true);
    expect(step.turns.map((t) => t.status)).toEqual(["ok", "error"]);
    expect(step.turns[1].error?.kind).toBe("aborted");
    expect([...step.memory.keys()]).toEqual(["a"]);
  });

  it.each([
    ["ignores the signal", (): Promise<never> => new Promise(() => undefined)],
    ["honours the signal", (signal?: AbortSignal): Promise<never> => new Promise((_, reject) => signal?.addEventListener("abort", () => reject(Object.assign(new Error("stopped"), { name: "AbortError" }))))],
  ])("ends with aborted, not internal_error or a hang, when the signal fires while the history strategy's summarizer %s", async (_, answer) => {
    const ac = new AbortController();
    const historyLlm: Llm = {
      name: "summarizer",
      complete: ({ signal }) => {
        ac.abort();
        return answer(signal);
      },
    };
    const history = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } };
    const { step } = await run([code("(println 1)"), code("(println 2)"), code("(println 3)"), code("(return {:products []})")], {}, { signal: ac.signal, history, historyLlm });
    expect(step.fail?.reason).toBe("aborted");
    expect(step.turns.map((t) => t.status)).toEqual(["ok"]);
  });

  it("ends with deadline_exceeded when the history strategy's summarizer never answers", async () => {
    let asked = 0;
    const historyLlm: Llm = { name: "summarizer", complete: () => (asked++, new Promise(() => undefined)) };
    const history = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } };
    const { step } = await run([code("(println 1)"), code("(println 2)"), code("(println 3)"), code("(return {:products []})")], {}, { deadlineMs: 3_000, history, historyLlm });
    expect(step.fail?.reason).toBe("deadline_exceeded");
    expect(asked).toBe(1);
  });

  // A host strategy whose project() threw put its text in the failure ("internal error: db password
  // hunter2"), which the saved state and the trace's exports keep.
  it("ends with internal_error naming the history strategy, without the host's text, when its project() throws", async () => {
    const agent = SubAgent.create({ prompt: "Go." });
    const project = (): never => {
      throw new Error("db password hunter2");
    };
    const history = { name: "mine", options: {}, usesLlm: false, initialState: () => null, project } as unknown as RunOptions["history"];
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return 1)")]), history });
    expect(step.fail?.reason).toBe("internal_error");
    expect(step.fail?.message).toMatch(/^internal error: the history strategy "mine" threw building the prompt of turn 1 \(its message is left out/);
    expect(runStateToJson(saveRun(step, agent))).not.toContain("hunter2");
  });

  // A host strategy is given the run's turn records to read: what it does to them must not change
  // what the trace, the step and the saved state say happened.
  it("gives a host strategy the turn records to read, not to rewrite: the trace keeps what happened", async () => {
    const agent = SubAgent.create({ prompt: "Go.", tools: { f: tool({ description: "f", run: () => ({ rows: [1, 2] }) }) }, maxTurns: 4 });
    const project = (c: { messages: unknown[]; records?: { turns: Array<Record<string, unknown>> } }) => {
      for (const t of c.records?.turns ?? []) {
        t.program = "(forged)";
        t.prints = ["forged"];
        (t.toolCalls as Array<Record<string, unknown>>).push({ name: "forged", args: {}, durationMs: 0 });
        for (const call of t.toolCalls as Array<{ result?: { rows?: number[] } }>) call.result?.rows?.push(99);
      }
      const n = c.messages.length;
      return { messages: c.messages, state: null, events: [], stats: { messagesIn: n, tokensIn: 0, messagesOut: n, tokensOut: 0, llmCalls: 0, llmInputTokens: 0, llmOutputTokens: 0, durationMs: 0 } };
    };
    const history = { name: "meddler", options: {}, usesLlm: false, initialState: () => null, project } as unknown as RunOptions["history"];
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(def r (tool/f))\n(println "one")'), code("(println 2)"), code("(return 1)")]), history });
    expect(step.fail?.message).toBeUndefined();
    // Before: the first turn's program read "(forged)", with three forged calls and rows [1, 2, 99, 99].
    expect(step.turns[0].program).toBe('(def r (tool/f))\n(println "one")');
    expect(step.turns[0].prints).toEqual(["one"]);
    expect(step.turns[0].toolCalls).toMatchObject([{ name: "f", result: { rows: [1, 2] } }]);
    expect(runStateToJson(saveRun(step, agent))).not.toContain("forged");
  });

  it("ends with aborted when the signal fires while the output schema's async refinement never settles", async () => {
    const ac = new AbortController();
    const output = z.number().refine(() => (ac.abort(), new Promise<boolean>(() => undefined)));
    const step = await SubAgent.run(SubAgent.create({ prompt: "Count.", output, maxTurns: 2 }), { llm: scriptedLlm([code("(return 1)")]), signal: ac.signal });
    expect(step.fail?.reason).toBe("aborted");
    expect(step.turns).toHaveLength(1);
  });

  it("returns at once for a signal aborted before the run", async () => {
    const llm = scriptedLlm([code("(return {:products []})")]);
    const step = await SubAgent.run(agentWith(), { llm, signal: AbortSignal.abort() });
    expect(step.fail?.reason).toBe("aborted");
    expect(llm.requests).toHaveLength(0);
  });

  it("ends with llm_error when the client fails, keeping the trace", async () => {
    const { step } = await run([code("(println 1)")]);
    expect(step.fail?.reason).toBe("llm_error");
    expect(step.fail?.message).toContain("turn 2");
    expect(step.turns).toHaveLength(1);
  });

  it.each([
    [{ llm: undefined }, "no llm"],
    [{ context: [1, 2] as unknown as Record<string, unknown> }, "plain object"],
    [{ deadlineMs: -5 }, "deadlineMs"],
    [{ tokenBudget: 0 }, "tokenBudget"],
    [{ limits: { timeoutMs: -1 } }, "timeoutMs"],
    [{ limits: { bogus: 1 } as never }, "unknown limit"],
    [{ view: { sampleItems: -1 } }, "view.sampleItems: Too small"],
    // Copied as {} before they were checked, a Map of limits or of view options was no options at all: every default, silently.
    [{ limits: new Map([["maxCollectionSize", 3]]) as never }, "limits must be an object of limits ({ timeoutMs: 5000 }), got a Map"],
    [{ view: new Map([["sampleItems", 2]]) as never }, "view must be an object of prompt-view options"],
    [{ view: { colour: "red" } as never }, "unknown view option 'colour'"],
    [{ context: { loop: null as unknown } }, ""],
    // The run's own limits bound the prompt's reading of the context, not the defaults.
    [{ context: { xs: Array.from({ length: 500 }, (_, i) => i) }, limits: { maxBoundaryValues: 100 } }, "data/xs holds more than 100 values"],
  ])("fails a run with invalid input %# with invalid_input, not an exception", async (options, word) => {
    const o = options as Partial<RunOptions>;
    if ("loop" in (o.context ?? {})) {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      o.context = { loop: cyclic };
    }
    const llm = scriptedLlm([code("(return {:products []})")]);
    const step = await SubAgent.run(agentWith(), { llm, ...o });
    expect(step.ok).toBe(false);
    expect(step.fail?.reason).toBe("invalid_input");
    expect(step.fail?.message).toContain(word);
    expect(llm.requests).toHaveLength(0);
  });

  it("fails a run whose context is a revoked Proxy with invalid_input, not internal_error", async () => {
    // An immer draft after its producer returned is one; reading whether it is an array threw.
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const step = await SubAgent.run(agentWith(), { llm: scriptedLlm([]), context: proxy });
    expect(step.fail).toEqual({ reason: "invalid_input", message: "context must be a plain object of key → data" });
  });

  it("fails a mission whose placeholder is missing from the context", async () => {
    const step = await SubAgent.run(SubAgent.create({ prompt: "Find {{category}}" }), { llm: scriptedLlm([]) });
    expect(step.fail).toMatchObject({ reason: "invalid_input", message: expect.stringContaining("{{category}}") });
  });
});

describe("prompt views", () => {
  it("builds prompts with the compressed view when compressHistory is on, recording its stats", async () => {
    const { step } = await run([code('(def r (tool/search-reviews "Electronics"))\n(println (count r))'), code("(println 2)"), code("(return {:products []})")], {}, { compressHistory: true });
    expect(step.ok).toBe(true);
    expect(step.usage.compression.enabled).toBe(true);
    expect(step.turns.every((t) => t.view !== undefined)).toBe(true);
    expect(step.usage.compression.latest).toEqual(step.turns[2].view);
    const sum = step.turns.reduce((n, t) => n + (t.view?.turnsCompressed ?? 0), 0);
    expect(step.usage.compression.totals.turnsCompressed).toBe(sum);
    // The trace never shrinks: every reply is there in full.
    expect(step.turns[0].reply).toContain("(def r (tool/search-reviews");
  });
});

describe("nested agents", () => {
  const rate = SubAgent.create({
    prompt: "Rate the product {{product}}",
    output: z.object({ score: z.number() }),
    maxTurns: 2,
    description: "Rates one product from 0 to 5.",
  });

  // The input's keys become the nested run's context keys: one that is not a name after data/
  // could never be read by the nested agent's programs (its prompt says "cannot be read").
  it.each([
    ["bad key", 'SubAgent.asTool input key "bad key" is not a name a program can read as data/<key>; rename it (a name such as product-id: no spaces, brackets or quotes, not starting with a digit)'],
    ["", 'SubAgent.asTool input key "" is not a name a program can read as data/<key>; rename it (a name such as product-id: no spaces, brackets or quotes, not starting with a digit)'],
    ["1st", 'SubAgent.asTool input key "1st" is not a name a program can read as data/<key>; rename it (a name such as product-id: no spaces, brackets or quotes, not starting with a digit)'],
    ["k".repeat(1_000_000) + " ", 'SubAgent.asTool input key "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…" (1000001 characters) is not a name a program can read as data/<key>; rename it (a name such as product-id: no spaces, brackets or quotes, not starting with a digit)'],
  ])("refuses an input key %# that no program could read", (key, message) => {
    expect(() => SubAgent.asTool(rate, { input: z.object({ [key]: z.string() }) })).toThrow(new AgentDefinitionError(message));
  });

  // data/<key> must fit in a program (maxSourceChars): a longer key could never be read. The
  // agent's own limit is the nested run's; an inherited one is the caller's, unknown here.
  it("refuses an input key longer than the agent's own maxSourceChars lets a program name", () => {
    const small = SubAgent.create({ prompt: "Echo.", maxTurns: 1, limits: { maxSourceChars: 1000 } });
    expect(() => SubAgent.asTool(small, { input: z.object({ ["k".repeat(996)]: z.string() }) })).toThrow(
      new AgentDefinitionError('SubAgent.asTool input key "kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…" (996 characters) is longer than a program may name as data/<key> under the agent\'s limits.maxSourceChars (1000); shorten it'),
    );
    expect(SubAgent.asTool(small, { input: z.object({ ["k".repeat(995)]: z.string() }) }).input.shape).toHaveProperty("k".repeat(995));
    // Inherited, the limit is the caller's (which may raise it): the key is not refused here.
    expect(SubAgent.asTool(rate, { input: z.object({ ["k".repeat(250_000)]: z.string() }) }).input.shape).toHaveProperty("k".repeat(250_000));
  });

  it("accepts input keys a program reads as data/<key>", () => {
    expect(SubAgent.asTool(rate, { input: z.object({ product: z.string(), "a/b": z.string(), "in-stock?": z.boolean() }) }).input.shape).toHaveProperty("in-stock?");
  });

  it("runs an agent as a tool, inheriting the llm, recording its trace and usage", async () => {
    const parent = SubAgent.create({ prompt: "Rate the laptop", tools: { rate: SubAgent.asTool(rate) }, maxTurns: 3 });
    const llm = scriptedLlm([
      { content: code('(def s (tool/rate {:product "Laptop"}))\n(println s)'), usage: { inputTokens: 10, outputTokens: 1, cachedTokens: 0 } },
      { content: code("(return {:score 4.5})"), usage: { inputTokens: 100, outputTokens: 10, cachedTokens: 0 } },
      { content: code("(return (:score s))"), usage: { inputTokens: 10, outputTokens: 1, cachedTokens: 0 } },
    ]);
    const step = await SubAgent.run(parent, { llm });
    expect(step.ok && step.value).toBe(4.5);
    const t1 = step.turns[0];
    expect(t1.prints).toEqual(["{:score 4.5}"]);
    expect(t1.nested).toHaveLength(1);
    expect(t1.nested?.[0]).toMatchObject({ tool: "rate", ok: true });
    expect(t1.nested?.[0].trace.task).toContain("Rate the product Laptop");
    expect(step.usage.nested).toEqual({ inputTokens: 100, outputTokens: 10, cachedTokens: 0, llmRequests: 1, runs: 1 });
    expect(step.usage.inputTokens).toBe(20);
    expect(step.trace.system).toContain("tool/rate {:product string} -> {:score number}\n  Rates one product from 0 to 5.");
  });

  it("lets the nested agent's own llm win over the inherited one", async () => {
    const own = scriptedLlm([code("(return {:score 1})")]);
    const child = SubAgent.create({ prompt: "Rate {{product}}", output: z.object({ score: z.number() }), llm: own });
    const parent = SubAgent.create({ prompt: "Go", tools: { rate: SubAgent.asTool(child) } });
    const llm = scriptedLlm([code('(return (tool/rate "X"))')]);
    const step = await SubAgent.run(parent, { llm });
    expect(step.value).toEqual({ score: 1 });
    expect(own.requests).toHaveLength(1);
    expect(llm.requests).toHaveLength(1);
  });

  it("runs on its own when a host calls the tool's run directly, without a calling run", async () => {
    const own = scriptedLlm([code("(return {:score (count data/product)})")]);
    const child = SubAgent.create({ prompt: "Rate {{product}}", output: z.object({ score: z.number() }), llm: own, maxTurns: 1 });
    const run = SubAgent.asTool(child).run as (args: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;
    await expect(run({ product: "Laptop" }, new AbortController().signal)).resolves.toEqual({ score: 6 });
    // Without an llm of its own the failure says what is missing, as SubAgent.run does.
    const bare = SubAgent.asTool(SubAgent.create({ prompt: "Rate {{product}}" })).run as typeof run;
    await expect(bare({ product: "Laptop" }, new AbortController().signal)).rejects.toThrow(/^invalid_input: no llm/);
  });

  it("hands the parent the nested run's parsed value, described by its output type", async () => {
    const scorer = SubAgent.create({ prompt: "Score {{product}}", output: z.object({ score: z.number() }).transform((o) => o.score * 2), maxTurns: 1 });
    const parent = SubAgent.create({ prompt: "Go", tools: { score: SubAgent.asTool(scorer) } });
    const llm = scriptedLlm([code('(return (tool/score "X"))'), code("(return {:score 2})")]);
    const step = await SubAgent.run(parent, { llm });
    expect(step.value).toBe(4);
    // A transform's result type is unknown to zod, so the prompt says any rather than guess.
    expect(step.trace.system).toContain("tool/score {:product string} -> any");
  });

  it("checks a returned value against an output schema that refines asynchronously", async () => {
    const known = new Set(["acme"]);
    const output = z.object({ id: z.string() }).refine(async (o) => known.has(o.id), "unknown id");
    const agent = SubAgent.create({ prompt: "Pick a customer", output, maxTurns: 2 });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(return {:id "nobody"})'), code('(return {:id "acme"})')]) });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toEqual({ id: "acme" });
    expect(step.turns[0].error?.message).toContain("unknown id");
  });

  it("takes an output schema that throws as a failed check the model can fix, its message hiding hidden values", async () => {
    // A host's transform that throws (rather than adding an issue), quoting the value it got.
    const output = z.string().transform((s) => {
      if (s.includes("PIN")) throw new Error(`cannot use ${s}`);
      return s.length;
    });
    const agent = SubAgent.create({ prompt: "Answer", output, maxTurns: 2 });
    const llm = scriptedLlm([code("(return (str data/_pin))"), code('(return "abc")')]);
    const step = await SubAgent.run(agent, { llm, context: { _pin: "s3cr3tPIN" } });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.value).toBe(3);
    expect(step.turns[0].status).toBe("invalid_return");
    expect(step.turns[0].error?.message).toContain("the output check failed on the (return ...) value: cannot use <hidden string from data/_pin>");
    expect(JSON.stringify({ trace: step.trace, requests: llm.requests })).not.toContain("s3cr3t");
  });

  it("turns a nested failure into a tool error the parent can see", async () => {
    const parent = SubAgent.create({ prompt: "Go", tools: { rate: SubAgent.asTool(rate) }, maxTurns: 2 });
    const llm = scriptedLlm([code('(tool/rate "X")'), code('(fail "cannot rate")'), code('(return "gave up")')]);
    const step = await SubAgent.run(parent, { llm });
    expect(step.turns[0].feedback).toContain("tool/rate failed: failed: cannot rate");
    expect(step.turns[0].nested?.[0].ok).toBe(false);
    expect(step.value).toBe("gave up");
  });

  it("limits nesting depth", async () => {
    const leaf = SubAgent.create({ prompt: "Leaf", maxTurns: 1 });
    const middle = SubAgent.create({ prompt: "Middle", tools: { leaf: SubAgent.asTool(leaf) }, maxTurns: 1 });
    const top = SubAgent.create({ prompt: "Top", tools: { middle: SubAgent.asTool(middle) }, maxTurns: 2 });
    const llm = scriptedLlm([code("(return (tool/middle))"), code("(return (tool/leaf))"), code('(return "done")')]);
    const step = await SubAgent.run(top, { llm, maxDepth: 1 });
    const middleRun = step.turns[0].nested?.[0];
    expect(middleRun?.ok).toBe(false);
    expect(middleRun?.trace.turns[0].error?.message).toContain("tool/leaf failed: max_depth_exceeded: agents may nest at most 1 levels deep");
    expect(middleRun?.trace.turns[0].nested).toBeUndefined();
    expect(step.turns[0].error?.message).toContain("max_depth_exceeded");
    expect(step.value).toBe("done");
  });

  it("keeps a nested agent's own maxDepth within the limit its callers set", async () => {
    // The host limits the tree to one level; the middle agent's own maxDepth 10 must not reopen it.
    const leaf = SubAgent.create({ prompt: "Leaf", maxTurns: 1 });
    const middle = SubAgent.create({ prompt: "Middle", tools: { leaf: SubAgent.asTool(leaf) }, maxTurns: 1, maxDepth: 10 });
    const top = SubAgent.create({ prompt: "Top", tools: { middle: SubAgent.asTool(middle) }, maxTurns: 1 });
    const llm = scriptedLlm([code("(return (tool/middle))"), code("(return (tool/leaf))"), code('(return "leaf ran")')]);
    const step = await SubAgent.run(top, { llm, maxDepth: 1 });
    expect(llm.requests).toHaveLength(2);
    expect(step.ok).toBe(false);
    expect(step.turns[0].nested?.[0].trace.turns[0].error?.message).toContain("tool/leaf failed: max_depth_exceeded: agents may nest at most 1 levels deep");
    // A nested agent may still lower the limit for the agents below it.
    const strict = SubAgent.create({ prompt: "Middle", tools: { leaf: SubAgent.asTool(leaf) }, maxTurns: 1, maxDepth: 1 });
    const top2 = SubAgent.create({ prompt: "Top", tools: { middle: SubAgent.asTool(strict) }, maxTurns: 1 });
    const llm2 = scriptedLlm([code("(return (tool/middle))"), code("(return (tool/leaf))"), code('(return "leaf ran")')]);
    const step2 = await SubAgent.run(top2, { llm: llm2, maxDepth: 5 });
    expect(llm2.requests).toHaveLength(2);
    expect(step2.turns[0].nested?.[0].trace.turns[0].error?.message).toContain("max_depth_exceeded: agents may nest at most 1 levels deep");
  });

  // An agent that calls itself on each of N items: every level multiplies the runs (and the workers they hold).
  // N=5 over three levels (maxDepth 3) started 155 nested runs; over two, 30 at once held 1.9 GB resident.
  function fanOut(n: number, own: Partial<AgentDefinition> = {}) {
    const program = code(`(return (count (filter pos? (pmap (fn [i] (try (tool/self {:x (str i)}) (catch e (println (:message e)) 0))) (range ${n})))))`);
    const llm: Llm = { name: "fan-out", complete: async () => ({ content: program, usage: { inputTokens: 1, outputTokens: 1, cachedTokens: 0 } }) };
    const me: { tool?: ReturnType<typeof SubAgent.asTool> } = {};
    const self = tool({ description: "The same agent.", input: z.object({ x: z.string() }), run: (a, signal, ctx) => me.tool?.run(a, signal, ctx) });
    const agent = SubAgent.create({ prompt: "Go {{x}}", maxTurns: 1, tools: { self }, ...own });
    me.tool = SubAgent.asTool(agent);
    return { agent, llm };
  }
  const refusals = (trace: { turns: Turn[] }): number =>
    trace.turns.reduce((n, t) => n + t.prints.filter((p) => p.includes("nested_runs_exceeded")).length + (t.nested ?? []).reduce((m, r) => m + refusals(r.trace), 0), 0);

  it("bounds the nested runs of the whole tree with maxNestedRuns, a nested agent's own unable to raise it", async () => {
    const { agent, llm } = fanOut(3, { maxNestedRuns: 100 });
    // 3 children, 9 grandchildren: 12 runs wanted, 5 allowed.
    const step = await SubAgent.run(agent, { llm, context: { x: "top" }, maxDepth: 2, maxNestedRuns: 5, isolation: "none" });
    expect(step.ok, JSON.stringify(step.fail)).toBe(true);
    expect(step.usage.nested.runs).toBe(5);
    expect(refusals(step.trace)).toBe(7);
    expect(JSON.stringify(step.trace)).toContain("nested_runs_exceeded: the run may start at most 5 nested agent runs in all (maxNestedRuns)");
  });

  // view.compressHistory was checked as a boolean, the top-level shorthand not: "true" from an
  // environment variable built every prompt with the full history, silently.
  it.each([
    ["true", "a string of 4 characters"],
    [1, "a number"],
    [null, "null"],
  ])("refuses a compressHistory of %j, which ran with the full history", async (value, got) => {
    const message = `compressHistory must be true or false, got ${got}`;
    expect(() => SubAgent.create({ prompt: "x", compressHistory: value as never })).toThrow(new AgentDefinitionError(message));
    const llm = scriptedLlm([code("(return 1)")]);
    const step = await SubAgent.run(SubAgent.create({ prompt: "x" }), { llm, compressHistory: value as never });
    expect(step.fail).toEqual({ reason: "invalid_input", message });
    expect(llm.requests).toHaveLength(0);
  });

  it("refuses a maxNestedRuns that is not a non-negative integer", async () => {
    expect(() => SubAgent.create({ prompt: "x", maxNestedRuns: 1.5 })).toThrow(new AgentDefinitionError("maxNestedRuns must be a non-negative integer, got 1.5"));
    const step = await SubAgent.run(SubAgent.create({ prompt: "x" }), { llm: scriptedLlm([]), maxNestedRuns: -1 });
    expect(step.fail).toEqual({ reason: "invalid_input", message: "maxNestedRuns must be a non-negative integer, got -1" });
  });

  it("starts at most 50 nested runs by default", async () => {
    const { agent, llm } = fanOut(8);
    // 8 + 64 wanted at once over two levels.
    const step = await SubAgent.run(agent, { llm, context: { x: "top" }, maxDepth: 2, isolation: "none" });
    expect(step.usage.nested.runs).toBe(50);
    expect(refusals(step.trace)).toBe(22);
  });

  it("gives a nested run the parent's remaining token budget", async () => {
    const parent = SubAgent.create({ prompt: "Go", tools: { rate: SubAgent.asTool(rate) }, maxTurns: 2 });
    const u = (n: number) => ({ inputTokens: n, outputTokens: 0, cachedTokens: 0 });
    const llm = scriptedLlm([
      { content: code('(tool/rate "X")'), usage: u(60) },
      { content: code("(println 1)"), usage: u(50) },
      { content: code("(return {:score 2})"), usage: u(10) },
    ]);
    const step = await SubAgent.run(parent, { llm, tokenBudget: 100 });
    expect(step.turns[0].nested?.[0].ok).toBe(false);
    expect(step.turns[0].error?.message).toContain("token_budget_exceeded");
    expect(step.fail?.reason).toBe("token_budget_exceeded");
  });

  it("shares the parent's token budget among nested runs going at once", async () => {
    // Two nested runs started together by pmap: each first reply waits for the other's, so
    // both spend 60 of the 100 tokens the parent had (90 left after its own 10). Once they
    // have, the budget is spent: neither may ask the model again.
    const child = SubAgent.create({ prompt: "Work on {{item}}", maxTurns: 5 });
    const parent = SubAgent.create({ prompt: "Go", tools: { work: SubAgent.asTool(child) }, maxTurns: 2 });
    let arrived = 0;
    let release: () => void = () => undefined;
    const together = new Promise<void>((resolve) => (release = resolve));
    let nestedCalls = 0;
    const llm: Llm = {
      name: "budget",
      async complete(request) {
        if (messageText(request.messages[0]).includes("tool/work")) {
          return { content: code('(pmap (fn [i] (try (tool/work i) (catch e (:message e)))) ["a" "b"])'), usage: { inputTokens: 10, outputTokens: 0, cachedTokens: 0 } };
        }
        nestedCalls++;
        if (request.turn === 1 && ++arrived === 2) release();
        if (request.turn === 1) await together;
        return { content: code("(println 1)"), usage: { inputTokens: 60, outputTokens: 0, cachedTokens: 0 } };
      },
    };
    const step = await SubAgent.run(parent, { llm, tokenBudget: 100 });
    expect(step.fail?.reason).toBe("token_budget_exceeded");
    expect(nestedCalls).toBe(2);
    expect(step.usage.nested).toMatchObject({ inputTokens: 120, llmRequests: 2, runs: 2 });
    expect(step.turns[0].nested?.map((n) => n.ok)).toEqual([false, false]);
  });

  for (const isolation of ["none", "worker"] as const) {
    it(`keeps the trace of a nested run the caller's abort cut short (isolation ${isolation})`, async () => {
      const child = SubAgent.create({ prompt: "Work on {{item}}", maxTurns: 2 });
      const parent = SubAgent.create({ prompt: "Go", tools: { work: SubAgent.asTool(child) }, maxTurns: 2, isolation });
      let asked!: () => void;
      const nestedAsked = new Promise<void>((resolve) => (asked = resolve));
      const llm = scriptedLlm([
        code('(tool/work {:item "a"})'),
        // The nested run's model answers only when told to stop.
        (request) => {
          asked();
          return new Promise((_resolve, reject) => request.signal?.addEventListener("abort", () => reject(new Error("stopped"))));
        },
      ]);
      const controller = new AbortController();
      const running = SubAgent.run(parent, { llm, signal: controller.signal });
      await nestedAsked;
      controller.abort();
      const step = await running;
      expect(step.fail?.reason).toBe("aborted");
      expect(step.usage.nested).toMatchObject({ llmRequests: 1, runs: 1 });
      expect(step.turns[0].nested?.map((n) => [n.tool, n.ok])).toEqual([["work", false]]);
    });
  }
});

describe("SubAgent.create", () => {
  it.each([
    [{ prompt: "" }, "prompt"],
    [{ prompt: "x", maxTurns: 0 }, "maxTurns"],
    [{ prompt: "x", tools: { "bad name": searchReviews } }, "bad name"],
    [{ prompt: "x", tools: { f: () => 1 } }, "tool({"],
    [{ prompt: "x", output: { parse: () => 1 } }, "zod"],
    [{ prompt: "x", limits: { nope: 1 } }, "unknown limit"],
    [{ prompt: "x", llm: {} }, "complete"],
  ])("rejects an invalid definition %#", (def, word) => {
    expect(() => SubAgent.create(def as never)).toThrow(AgentDefinitionError);
    expect(() => SubAgent.create(def as never)).toThrow(word);
  });

  it("freezes the agent", () => {
    const a = agentWith();
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.tools)).toBe(true);
    expect(a.maxTurns).toBe(5);
  });
});

describe("renderFeedback", () => {
  const base: Turn = {
    number: 2,
    messages: [],
    reply: "",
    program: '(def a 1)\n(println "hi")',
    status: "ok",
    prints: ["hi", "there"],
    toolCalls: [],
    definitions: [],
    memory: [
      { name: "zeta", kind: "value", type: "integer", sample: "1" },
      { name: "alpha", kind: "value", type: "integer", sample: "2" },
    ],
    usage: { inputTokens: 0, outputTokens: 0, cachedTokens: 0, llmMs: 0, execMs: 0 },
  };

  it("renders output, sorted stored names and the next turn", () => {
    expect(renderFeedback(base, { maxTurns: 6 }, { prints: true })).toBe("Output:\nhi\nthere\n\nStored: alpha, zeta\n\nTurn 3 of 6.");
  });

  it("leaves the println output out when asked, as a separable part", () => {
    const without = renderFeedback(base, { maxTurns: 6 }, { prints: false });
    expect(without).toBe("Stored: alpha, zeta\n\nTurn 3 of 6.");
    expect(renderFeedback(base, { maxTurns: 6 }, { prints: true })).toBe(`${renderPrints(base.prints)}\n\n${without}`);
  });

  it("warns the turn before the last, and announces the last turn, with or without tool withdrawal", () => {
    expect(renderFeedback(base, { maxTurns: 4 }, { prints: false })).toContain("Turn 3 of 4. Next turn is your last: get ready to (return ...).");
    expect(renderFeedback(base, { maxTurns: 4, toolsWithdrawn: true }, { prints: false })).toContain("tools will be withdrawn then");
    expect(renderFeedback(base, { maxTurns: 3 }, { prints: false })).toContain("Turn 3 of 3. This is your LAST turn: finish with (return value)");
    expect(renderFeedback(base, { maxTurns: 3, toolsWithdrawn: true }, { prints: false })).toContain("tools are now withdrawn (tool calls fail)");
    expect(renderFeedback(base, { maxTurns: 2 }, { prints: false })).not.toContain("Turn");
  });

  it("renders an error with position, excerpt, call trail and hint", () => {
    const turn: Turn = {
      ...base,
      status: "error",
      prints: [],
      error: { kind: "type_error", message: "+ expects numbers", phase: "runtime", line: 3, column: 5, excerpt: "3 | (+ 1 x)\n  |     ^", trace: ["f", "g"], hint: "use str" },
    };
    expect(renderFeedback(turn, { maxTurns: 5 }, { prints: true })).toBe(
      "Error at line 3, column 5: type_error: + expects numbers\n3 | (+ 1 x)\n  |     ^\nin: f <- g\nHint: use str\n\nNothing from this program was stored.\n\nStored: alpha, zeta\n\nTurn 3 of 5.",
    );
  });

  it("cuts long output on a line boundary and says how much was shown", () => {
    const text = renderPrints(Array.from({ length: 100 }, (_, i) => `line ${i} ${"x".repeat(30)}`), 500);
    const shown = text.split("\n").slice(1, -1);
    expect(shown.length).toBeGreaterThan(5);
    expect(shown.every((l) => /^line \d+ x{30}$/.test(l))).toBe(true);
    expect(text).toMatch(/\[output cut: showing \d+ of 3889 characters/);
  });

  it("caps a very long list of stored names", () => {
    const memory = Array.from({ length: 100 }, (_, i) => ({ name: `n${String(i).padStart(3, "0")}`, kind: "value" as const, type: "integer", sample: "1" }));
    const text = renderFeedback({ ...base, prints: [], memory }, { maxTurns: 5 }, { prints: false });
    expect(text).toContain("n059, ... (40 more)");
  });
});

describe("onTurn and onStep", () => {
  it("reports every turn as it ends, with usage so far and the prompt's compression stats, then the step", async () => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const events: Array<{ number: number; status: string; requests: number; compressed: boolean | null; feedback: boolean }> = [];
    const steps: boolean[] = [];
    const step = await SubAgent.run(agent, {
      llm: scriptedLlm([code("(def a 1)"), code('(println "a is" a)'), code("(return (+ a 1))")]),
      compressHistory: true,
      onTurn: (e) => events.push({ number: e.turn.number, status: e.turn.status, requests: e.totals.llmRequests, compressed: e.compression !== null && Array.isArray(e.compression.turnsFull), feedback: e.turn.feedback !== undefined }),
      onStep: (s) => steps.push(s.ok),
    });
    expect(step.ok).toBe(true);
    expect(events).toEqual([
      { number: 1, status: "ok", requests: 1, compressed: true, feedback: true },
      { number: 2, status: "ok", requests: 2, compressed: true, feedback: true },
      // The last turn ends the run: it has no feedback.
      { number: 3, status: "returned", requests: 3, compressed: true, feedback: false },
    ]);
    expect(steps).toEqual([true]);
  });

  // A hook that edited the turn it was told changed the next prompt (the history is built from
  // the same record) and the trace: a logger trimming turn.feedback rewrote the conversation.
  it("gives onTurn and onEvent their own copy of the turn: editing it changes neither the next prompt nor the trace", async () => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const replies = [code('(println "hello")'), code("(return 1)")];
    const plain = scriptedLlm(replies);
    const untouched = await SubAgent.run(agent, { llm: plain, isolation: "none" });
    const llm = scriptedLlm(replies);
    const vandal = (turn: Turn): void => {
      turn.feedback = "INJECTED";
      turn.prints.push("INJECTED");
      turn.program = "(INJECTED)";
      turn.messages.length = 0;
    };
    const step = await SubAgent.run(agent, {
      llm,
      isolation: "none",
      onTurn: (e) => vandal(e.turn),
      onEvent: (e) => {
        if (e.type === "turn-finish") vandal(e.turn);
      },
    });
    expect(step.ok).toBe(true);
    expect(llm.requests[1].messages).toEqual(plain.requests[1].messages);
    expect(JSON.stringify(llm.requests)).not.toContain("INJECTED");
    expect(step.trace.turns.map((t) => [t.program, t.feedback, t.prints, t.messages.length])).toEqual(untouched.trace.turns.map((t) => [t.program, t.feedback, t.prints, t.messages.length]));
  });

  // The tool-call events carried the call's recorded arguments themselves: an onEvent that edited
  // them rewrote the trace's record (in process), which resume then matches calls against.
  it("gives onEvent its own copy of a tool call's arguments: editing them leaves the trace's record", async () => {
    const agent = SubAgent.create({ prompt: "Double.", tools: { twice: tool({ description: "Doubles.", input: z.object({ n: z.number() }), run: ({ n }) => n * 2 }) } });
    const step = await SubAgent.run(agent, {
      llm: scriptedLlm([code("(println (tool/twice {:n 1}))"), code("(return 1)")]),
      isolation: "none",
      onEvent: (e) => {
        if (e.type === "tool-call" || e.type === "tool-result") (e.args as { n: number }).n = 999;
      },
    });
    expect(step.ok).toBe(true);
    expect(step.trace.turns[0].toolCalls.map((c) => c.args)).toEqual([{ n: 1 }]);
  });

  // The host's text went into the failure ("internal error: logger down sk-host-secret"), which
  // the saved state, the trace's export and the viewer keep: a host's error may quote its secrets.
  it.each(["none", "worker"] as const)("ends the run with internal_error when onTurn throws, naming the hook without its text (isolation %s)", async (isolation) => {
    const agent = SubAgent.create({ prompt: "Add up." });
    const step = await SubAgent.run(agent, {
      llm: scriptedLlm([code("(def a 1)"), code("(return a)")]),
      isolation,
      onTurn: () => {
        throw new Error("logger down sk-host-secret");
      },
    });
    expect(step.ok).toBe(false);
    expect(step.fail).toEqual({ reason: "internal_error", message: "internal error: the onTurn hook threw (its message is left out of the run's record: a host's text may hold secrets)" });
    expect(step.turns).toHaveLength(1);
    expect(runStateToJson(saveRun(step, agent))).not.toContain("sk-host-secret");
  });

  // An onStep that threw made SubAgent.run reject with the host's error (and SubAgent.stream's step and its
  // reader), though run never throws and the run had ended: its result was lost.
  it("ignores what onStep throws: the run has ended, and its step is the result", async () => {
    const onStep = (): void => {
      throw new Error("log sink down");
    };
    const step = await SubAgent.run(SubAgent.create({ prompt: "Add up." }), { llm: scriptedLlm([code("(return 1)")]), isolation: "none", onStep });
    expect(step.value).toBe(1);
    const stream = SubAgent.stream(SubAgent.create({ prompt: "Add up." }), { llm: scriptedLlm([code("(return 2)")]), isolation: "none", onStep });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe("run-finish");
    expect((await stream.step).value).toBe(2);
  });

  it("ignores the rejection of an async onTurn, onEvent or onStep, which unheard would end the host's process", async () => {
    const unhandled: unknown[] = [];
    const note = (e: unknown): void => void unhandled.push(e);
    process.on("unhandledRejection", note);
    try {
      const rejects = async (): Promise<void> => {
        throw new Error("log sink down");
      };
      const step = await SubAgent.run(SubAgent.create({ prompt: "Add up." }), {
        llm: scriptedLlm([code("(def a 1)"), code("(return a)")]),
        isolation: "none",
        onTurn: rejects,
        onEvent: rejects,
        onStep: rejects,
      });
      expect(step.value).toBe(1);
      // Node reports an unhandled rejection once the microtasks have run: before the next macrotask.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", note);
    }
  });

  // Whatever the host throws, the run returns a Step: a value that cannot even be read is named so.
  it.each([
    ["an error whose message getter throws", () => Object.defineProperty(new Error(), "message", { get: () => { throw new Error("no"); } })],
    ["an object with no prototype, which String() cannot convert", () => Object.create(null) as object],
  ])("ends the run with internal_error when onTurn throws %s", async (_what, thrown) => {
    const step = await SubAgent.run(SubAgent.create({ prompt: "Add up." }), {
      llm: scriptedLlm([code("(def a 1)"), code("(return a)")]),
      onTurn: () => {
        throw thrown();
      },
    });
    expect(step.fail).toEqual({ reason: "internal_error", message: "internal error: the onTurn hook threw (its message is left out of the run's record: a host's text may hold secrets)" });
  });
});

describe("the output check", () => {
  // The output check's message went to the next prompt whole, where a tool's error is cut at 500 characters: a host's
  // transform that threw a 5 MB message sent 5 MB; a strict schema listed each of 20,000 unknown keys (280 KB).
  it.each([
    ["a host's transform that throws a huge message", z.number().transform((): number => { throw new Error("z".repeat(100_000)); }), "1"],
    ["a strict schema given thousands of unknown keys", z.strictObject({ a: z.number() }), "(merge {:a 1} (zipmap (map #(keyword (str \"key-\" %)) (range 20000)) (range 20000)))"],
    ["a custom issue message quoting a huge value", z.string().refine(() => false, { error: (issue) => `not allowed: ${String(issue.input)}` }), '(apply str (repeat 100000 "q"))'],
  ])("bounds the output check's message fed back for %s", async (_what, output, value) => {
    const agent = SubAgent.create({ prompt: "x", maxTurns: 2, output: output as z.ZodType });
    const llm = scriptedLlm([code(`(return ${value})`), code("(fail :stop)")]);
    const step = await SubAgent.run(agent, { llm, isolation: "none", limits: { timeoutMs: 60_000 } });
    expect(step.turns[0].status).toBe("invalid_return");
    expect(step.turns[0].error?.message.length).toBeLessThan(2_000);
    expect(messageText(llm.requests[1].messages.at(-1)!).length).toBeLessThan(3_000);
  });

  it("takes a returned map without an optional key named like an Object.prototype member, which zod read from the prototype", async () => {
    const agent = SubAgent.create({ prompt: "Add up.", maxTurns: 1, output: z.object({ total: z.number(), constructor: z.string().optional() }) });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return {:total 1})")]), isolation: "none" });
    expect(step.value).toEqual({ total: 1 });
  });

  // Only the top-level map was read without its prototype: a nested map without the optional
  // key failed ("missing [:a :constructor] (expected string)"), which no program could fix.
  it("takes a nested map without an optional key named like an Object.prototype member, and gives the host plain objects", async () => {
    const output = z.object({ a: z.object({ constructor: z.string().optional(), b: z.number() }), rows: z.array(z.object({ toString: z.string().optional() })), raw: z.any() });
    const agent = SubAgent.create({ prompt: "Add up.", maxTurns: 1, output });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return {:a {:b 1} :rows [{}] :raw {:x {:y 1}}})")]), isolation: "none" });
    expect(step.value).toEqual({ a: { b: 1 }, rows: [{}], raw: { x: { y: 1 } } });
    const value = step.value as { raw: { x: object } };
    expect([Object.getPrototypeOf(value.raw), Object.getPrototypeOf(value.raw.x)]).toEqual([Object.prototype, Object.prototype]);
  });

  it("names a few of a returned map's unknown keys, not every one: 20,000 extra keys made a 369,159-character feedback, 500 keys 3,500", async () => {
    const agent = SubAgent.create({ prompt: "Add up.", maxTurns: 2, output: z.strictObject({ total: z.number() }) });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code('(return (into {:total 1} (map (fn [i] [(keyword (str "k" i)) i]) (range 500))))'), code("(return {:total 1})")]), isolation: "none", limits: { timeoutMs: 60_000 } });
    expect(step.value).toEqual({ total: 1 });
    const error = step.turns[0].error?.message ?? "";
    expect(error).toMatch(/^the \(return \.\.\.\) value does not match the expected output:\n- the value: unknown keys (:k\d+, ){8}and 492 more$/);
    expect(step.turns[0].feedback?.length).toBeLessThan(1000);
  });

  it("gives back a map a schema passes through as a plain object", async () => {
    const agent = SubAgent.create({ prompt: "Add up.", maxTurns: 1, output: z.any() });
    const step = await SubAgent.run(agent, { llm: scriptedLlm([code("(return {:total 1})")]), isolation: "none" });
    expect(Object.getPrototypeOf(step.value)).toBe(Object.prototype);
  });
});

describe("run options of the wrong type", () => {
  // SubAgent.run never throws for an agent made by create: a signal or callback that is not one is invalid_input, before any LLM call.
  it.each([
    ["signal", {}, "signal must be an AbortSignal"],
    ["signal", "stop", "signal must be an AbortSignal"],
    ["onTurn", 5, "onTurn must be a function, got number"],
    ["onEvent", "log", "onEvent must be a function, got string"],
    ["onStep", {}, "onStep must be a function, got object"],
  ])("%s: %j ends the run with invalid_input", async (option, value, message) => {
    const llm = scriptedLlm([code("(return 1)")]);
    const step = await SubAgent.run(SubAgent.create({ prompt: "Add up." }), { llm, isolation: "none", [option]: value } as never);
    expect(step.fail).toEqual({ reason: "invalid_input", message });
    expect(llm.requests).toHaveLength(0);
  });
});

// Every tool call's arguments and result are kept in the trace for the whole run: 100 calls
// returning 8 MB each ran a 1 GB heap out of memory, whatever the time limit. maxToolResultSize
// bounds what a run (with its nested runs) keeps; scaled down here.
describe("maxToolResultSize", () => {
  const big = (calls: { n: number }) =>
    tool({
      description: "Big.",
      input: z.object({}),
      run: () => {
        calls.n++;
        return "x".repeat(999);
      },
    });
  for (const isolation of ["none", "worker"] as const) {
    it(`refuses calls once the run has kept that much of tool results (${isolation})`, async () => {
      const calls = { n: 0 };
      const llm = scriptedLlm([code("(dotimes [i 4] (tool/big {}))"), code("(tool/big {})\n(tool/big {})"), code("(return 1)")]);
      const agent = SubAgent.create({ prompt: "Fetch.", llm, tools: { big: big(calls) }, maxTurns: 3, isolation, maxToolResultSize: 4500 });
      const step = await SubAgent.run(agent, {});
      // 1,000 a result (999 characters and the string): the fifth call passes the bound, the sixth is refused.
      expect(calls.n).toBe(5);
      expect(step.turns[1].error).toMatchObject({ kind: "tool_limit_exceeded", message: "the run has kept 5000 of tool results (characters plus one per value), more than maxToolResultSize (4500); use the results you already have" });
      expect(step.ok && step.value).toBe(1);
    });
  }

  // A program's arguments are kept as well (a worker's arrive flattened: 78 calls of 19 MB each
  // held 1,537 MB of the host's heap after three turns, measured).
  for (const isolation of ["none", "worker"] as const) {
    it(`counts the arguments the trace keeps (${isolation})`, async () => {
      const calls = { n: 0 };
      const put = tool({
        description: "Put.",
        input: z.object({ s: z.string() }),
        run: () => {
          calls.n++;
          return null;
        },
      });
      // A program catching the refusal cannot go on adding refused calls' arguments: a limit stops it.
      const llm = scriptedLlm([code('(dotimes [i 10] (try (tool/put {:s (str (apply str (repeat 999 "x")) i)}) (catch e nil)))'), code("(return 1)")]);
      const agent = SubAgent.create({ prompt: "Put.", llm, tools: { put }, maxTurns: 2, isolation, maxToolResultSize: 4500 });
      const step = await SubAgent.run(agent, {});
      // About 1,000 a call (the 1,000-character argument, its key and map, the nil): the sixth is refused.
      expect(calls.n).toBe(5);
      expect(step.turns[0].error?.kind).toBe("tool_limit_exceeded");
      expect(step.turns[0].toolCalls).toHaveLength(6);
      expect(step.turns[0].error?.message).toMatch(/^the run has kept \d+ of tool results .*more than maxToolResultSize \(4500\)/);
    });
  }

  // Calls made at once (pmap) were counted only as each ended, so all were admitted before the
  // first counted; a held call (approval) never ends: 200 calls sharing one argument kept 99
  // times the bound, and a paused state that size could not be serialized. Now each call's
  // arguments count as it is admitted.
  for (const isolation of ["none", "worker"] as const) {
    for (const needsApproval of [false, true]) {
      it(`counts parallel calls' arguments as they are admitted (${isolation}${needsApproval ? ", held for approval" : ""})`, async () => {
        const calls = { n: 0 };
        const put = tool({
          description: "Put.",
          input: z.object({ s: z.array(z.string()) }),
          needsApproval,
          run: async () => {
            calls.n++;
            await new Promise((r) => setTimeout(r, 1));
            return null;
          },
        });
        const program = '(def big (apply str (repeat 9900 "x")))\n(pmap (fn [i] (tool/put {:s (vec (repeat 5 big))})) (range 200))';
        const llm = scriptedLlm([code(program), code("(return 1)"), code("(return 1)")]);
        const agent = SubAgent.create({ prompt: "Put.", llm, tools: { put }, maxTurns: 3, isolation, maxToolResultSize: 100_000 });
        const step = await SubAgent.run(agent, {});
        const [turn] = step.turns;
        // About 49,500 a call: the third passes the bound, and the others are refused, keeping
        // no arguments (all 200 were made before the first refusal could stop the program).
        const kept = turn.toolCalls.reduce((sum, c) => sum + (c.size ?? 0), 0);
        expect(kept).toBe(148_521 + (needsApproval ? 0 : 3));
        const refused = turn.toolCalls.filter((c) => c.args === UNKEPT_ARGS);
        expect(refused).toHaveLength(197);
        expect(refused[0]).toMatchObject({ size: 0, errorKind: "tool_limit_exceeded" });
        expect(refused[0].error).toContain("more than maxToolResultSize (100000)");
        if (needsApproval) {
          // The three admitted wait for the host (a worker's may pause one at a time: a branch still
          // on its way pauses at the next resume); the state holds them, not the refused calls' arguments.
          expect(calls.n).toBe(0);
          expect(step.paused?.approvals.length).toBeGreaterThanOrEqual(1);
          expect(step.paused?.approvals.length).toBeLessThanOrEqual(3);
          expect(JSON.stringify(runStateToJson(step.paused?.state as never)).length).toBeLessThan(500_000);
        } else {
          expect(calls.n).toBe(3);
          expect(turn.error).toMatchObject({ kind: "tool_limit_exceeded", line: 2 });
          expect(turn.error?.message).toContain("more than maxToolResultSize (100000)");
        }
      });
    }
  }

  it("bounds nested runs by their callers' limit", async () => {
    const calls = { n: 0 };
    const child = SubAgent.create({ prompt: "Fetch.", tools: { big: big(calls) }, maxTurns: 1, output: z.number() });
    const llm = scriptedLlm([code("(dotimes [i 3] (tool/fetch {}))"), code("(dotimes [i 3] (tool/big {}))\n(return 1)"), code("(dotimes [i 3] (tool/big {}))\n(return 1)"), code("(return 2)")]);
    const parent = SubAgent.create({ prompt: "Go.", tools: { fetch: SubAgent.asTool(child, { input: z.object({}) }) }, maxTurns: 2, isolation: "none", maxToolResultSize: 4500 });
    const step = await SubAgent.run(parent, { llm });
    // The first nested run keeps 3,000; the second passes 4,500 at its second call and is refused its third.
    expect(calls.n).toBe(5);
    expect(step.turns[0].error?.message).toContain("more than maxToolResultSize (4500)");
  });

  it("is a positive number", async () => {
    const step = await SubAgent.run(SubAgent.create({ prompt: "Go." }), { llm: scriptedLlm([]), maxToolResultSize: 0 });
    expect(step.fail).toEqual({ reason: "invalid_input", message: "maxToolResultSize must be a positive number, got 0" });
  });
});

// Run options are host code: a getter or Proxy trap that throws while the run reads them made
// SubAgent.run reject with the host's Error (or end with internal_error quoting it), and host
// text may hold a secret. Each is now invalid_input naming the option, without the host's text.
describe("run options that throw when read", () => {
  const boom = (): never => {
    throw new Error("sk-secret");
  };
  const getter = (name: string): RunOptions => Object.defineProperty({}, name, { get: boom, enumerable: true }) as RunOptions;
  const trap = new Proxy({}, { get: boom, ownKeys: boom, getOwnPropertyDescriptor: boom });
  it.each<[string, () => RunOptions, string]>([
    ["a limits getter", () => getter("limits"), "options.limits could not be read (reading it threw)"],
    ["a deadlineMs getter", () => getter("deadlineMs"), "options.deadlineMs could not be read (reading it threw)"],
    ["a tokenBudget getter", () => getter("tokenBudget"), "options.tokenBudget could not be read (reading it threw)"],
    ["an onTurn getter", () => getter("onTurn"), "options.onTurn could not be read (reading it threw)"],
    ["a context getter", () => getter("context"), "options.context could not be read (reading it threw)"],
    ["options that are a throwing Proxy", () => trap as RunOptions, "options.llm could not be read (reading it threw)"],
    ["limits that are a throwing Proxy", () => ({ limits: trap }) as RunOptions, "options.limits could not be read (reading it threw)"],
    ["a view whose getter throws", () => ({ view: Object.defineProperty({}, "sampleItems", { get: boom, enumerable: true }) }) as RunOptions, "options.view could not be read (reading it threw)"],
    ["a signal that is a throwing Proxy", () => ({ signal: new Proxy(new AbortController().signal, { get: boom }) }), "signal must be an AbortSignal"],
  ])("%s ends the run with invalid_input, no host text", async (_, options, message) => {
    const llm = scriptedLlm([code("(return 1)")]);
    const agent = SubAgent.create({ prompt: "Add up.", llm, isolation: "none" });
    const step = await SubAgent.run(agent, options());
    expect(step.fail).toEqual({ reason: "invalid_input", message });
    expect(JSON.stringify(step)).not.toContain("sk-secret");
    expect(llm.requests).toHaveLength(0);
  });
});

describe("a failed program's side effects", () => {
  it("feedback lists the tool calls that completed before the error, so a retry does not repeat them", async () => {
    const sent: string[] = [];
    const sendEmail = tool({
      description: "Sends an email.",
      input: z.object({ to: z.string(), subject: z.string() }),
      run: async ({ to }) => {
        sent.push(to);
        return { sent: true };
      },
    });
    const agent = SubAgent.create({ prompt: "Email the customer.", tools: { "send-email": sendEmail } });
    const step = await SubAgent.run(agent, {
      llm: scriptedLlm([code('(tool/send-email {:to "ann@example.com" :subject "Hi"})\n(+ 1 "oops")'), code("(return :done)")]),
    });
    expect(step.ok).toBe(true);
    const feedback = step.turns[0].feedback ?? "";
    expect(feedback).toContain("Nothing from this program was stored.");
    expect(feedback).toContain("These tool calls completed before the error");
    expect(feedback).toContain('tool/send-email {"to":"ann@example.com","subject":"Hi"}');
    // The second prompt carries it.
    expect(step.messages[1].at(-1)?.content).toContain("tool/send-email");
    expect(sent).toEqual(["ann@example.com"]);
  });
});
