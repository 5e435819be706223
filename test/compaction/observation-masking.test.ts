// Observation masking and the mask-then-summarize hybrid: what a placeholder keeps, which
// outputs age out, how often the prefix moves, the per-tool overrides, environment replies sent
// as user text, and the hybrid summarizing only when the masked prompt is still over budget.
import { describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.js";
import { createStrategy } from "../../src/compaction/registry.js";
import { placeholder } from "../../src/compaction/strategies/observation-masking.js";
import { cutMiddle } from "../../src/compaction/messages.js";
import { promptTokens } from "../../src/compaction/tokens.js";
import type { CompactionResult, Json } from "../../src/compaction/types.js";
import { SubAgent } from "../../src/agent/subagent.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import type { ChatMessage } from "../../src/llm/types.js";
import { call, result, sys, user } from "./conversations.js";

/** A coding run: the task, then `steps` bash calls each with a 30-line output; every 3rd output fails. */
function codingRun(steps: number, tool = (i: number) => (i % 4 === 3 ? "view" : "bash")): ChatMessage[] {
  const out: ChatMessage[] = [sys("You fix bugs."), user("Fix the failing test in utils.py.")];
  for (let i = 0; i < steps; i++) {
    out.push(call(`c${i}`, tool(i), JSON.stringify({ command: `cat file_${i}.py` }), `Step ${i}: I will look at file_${i}.py.`));
    const body = Array.from({ length: 30 }, (_, k) => `line ${k} of file_${i}.py: value_${i}_${k} = compute(${k})`).join("\n");
    out.push(result(`c${i}`, i % 3 === 2 ? `<returncode>1</returncode>\n<output>\n${body}\n</output>` : `${i}: contents of file_${i}.py\n${body}`));
  }
  return out;
}

const run = (messages: ChatMessage[], options: Record<string, Json> = {}, state?: Json): Promise<CompactionResult> =>
  compact(messages, { name: "observation-masking", options }, state === undefined ? {} : { state });

const maskedIndices = (before: readonly ChatMessage[], after: readonly ChatMessage[]): number[] => before.flatMap((m, i) => (after[i] !== m ? [i] : []));

describe("observation-masking", () => {
  it("masks tool results older than the last turns, keeping every assistant message and the tool pairing", async () => {
    const messages = codingRun(8);
    const r = await run(messages, { turns: 3, polling: 1 });
    expect(r.messages).toHaveLength(messages.length);
    messages.forEach((m, i) => {
      if (m.role !== "tool") expect(r.messages[i]).toBe(m);
      else expect(r.messages[i].tool_call_id).toBe(m.tool_call_id);
    });
    // 8 turns, the last 3 whole: the results of turns 0..4 are masked.
    expect(maskedIndices(messages, r.messages)).toEqual([3, 5, 7, 9, 11]);
    expect(r.messages[3].content).toBe("[Old bash output omitted: 31 lines; first line: 0: contents of file_0.py]");
    expect(r.messages[7].content).toBe("[Old bash output omitted: 33 lines; exit status 1]");
    expect(r.messages[9].content).toMatch(/^\[Old view output omitted/);
    expect(r.stats.tokensOut).toBeLessThan(r.stats.tokensIn);
    expect(r.events).toEqual([expect.objectContaining({ kind: "compacted", messageIndex: 3, replaced: 5 })]);
  });

  it("reads exit statuses in the usual spellings and cuts a long first line", () => {
    expect(placeholder("bash", "Command exited with code 2\nboom", 80)).toBe("[Old bash output omitted: 2 lines; exit status 2]");
    expect(placeholder("bash", "done\nexit status: 0\n", 80)).toBe("[Old bash output omitted: 2 lines; exit status 0]");
    expect(placeholder("search", "\n\n" + "x".repeat(200), 20)).toBe(`[Old search output omitted: 3 lines; first line: ${"x".repeat(19)}…]`);
    // Trailing newlines are not lines; a run of 50,000 blank lines inside is counted in one pass.
    expect(placeholder("bash", "a\n\n\n", 80)).toBe("[Old bash output omitted: 1 line; first line: a]");
    expect(placeholder("bash", `a${"\n".repeat(50_000)}b`, 80)).toBe("[Old bash output omitted: 50001 lines; first line: a]");
    // A cut never splits an emoji into a lone surrogate (Anthropic's API refuses such a request body).
    expect(placeholder("bash", `${"x".repeat(18)}🚀🚀 done`, 20)).toBe(`[Old bash output omitted: 1 line; first line: ${"x".repeat(18)}…]`);
    // Nor a character of several code points: a family emoji cut after a joiner, an accent cut from its letter, a flag's half, a skin tone.
    expect(placeholder("ls", `${"x".repeat(14)}👩‍👩‍👧 done`, 20)).toBe(`[Old ls output omitted: 1 line; first line: ${"x".repeat(14)}…]`);
    expect(placeholder("ls", `${"x".repeat(18)}e\u0301 done`, 20)).toBe(`[Old ls output omitted: 1 line; first line: ${"x".repeat(18)}…]`);
    expect(placeholder("ls", `${"x".repeat(17)}🇫🇷 done`, 20)).toBe(`[Old ls output omitted: 1 line; first line: ${"x".repeat(17)}…]`);
    expect(placeholder("ls", `${"x".repeat(17)}👍🏽 done`, 20)).toBe(`[Old ls output omitted: 1 line; first line: ${"x".repeat(17)}…]`);
  });

  it("cuts a long text in the middle between characters, not inside one (transcripts a summarizer reads)", () => {
    const text = `${"a".repeat(9)}👩‍👩‍👧${"b".repeat(20)}e\u0301${"c".repeat(11)}`;
    const [head, tail] = cutMiddle(text, 24).split(/\n\[… \d+ characters omitted …\]\n/);
    expect(head).toBe("a".repeat(9));
    expect(tail).toBe("c".repeat(11));
    expect([...new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(head + tail)].map((g) => g.segment).join("")).toBe(head + tail);
  });

  it("leaves an output alone when its placeholder would not be smaller", async () => {
    const messages = [user("task"), call("a", "bash"), result("a", "ok"), call("b", "bash"), result("b", "ok"), call("c", "bash")];
    const r = await run(messages, { turns: 0, polling: 1 });
    expect(r.messages).toEqual(messages);
    expect(r.events).toEqual([]);
  });

  it("with polling k, the boundary moves once per k turns, so the prompt extends the previous one in between", async () => {
    const messages = codingRun(40);
    let previous: ChatMessage[] | null = null;
    let breaks = 0;
    let masked = 0;
    for (let j = 3; j <= messages.length; j++) {
      if (messages[j - 1].role !== "tool") continue;
      const r = await run(messages.slice(0, j), { turns: 3, polling: 10 });
      if (previous !== null && previous.some((m, i) => r.messages[i] !== m)) breaks++;
      const count = maskedIndices(messages.slice(0, j), r.messages).length;
      // Between 3 and 12 turns stay whole, and the masked count is a multiple of 10.
      expect(count % 10).toBe(0);
      const turns = (j - 2) / 2;
      expect(turns - count).toBeGreaterThanOrEqual(Math.min(turns, 3));
      expect(turns - count).toBeLessThanOrEqual(12);
      masked = count;
      previous = r.messages;
    }
    expect(masked).toBe(30);
    // 40 requests, the boundary moved at turns 13, 23 and 33: three breaks, not one per request.
    expect(breaks).toBe(3);
    const every = await run(messages, { turns: 3, polling: 1 });
    expect(maskedIndices(messages, every.messages)).toHaveLength(37);
  });

  it("never masks the tools in neverMask, and masks those in alwaysMask once the model answered them", async () => {
    const messages = codingRun(8);
    const r = await run(messages, { turns: 3, polling: 1, neverMask: ["view"], alwaysMask: ["bash"] });
    const masked = maskedIndices(messages, r.messages);
    // view is turns 3 and 7 (results at 9 and 17); bash everywhere but the last turn (result 17 is view anyway).
    expect(masked).not.toContain(9);
    expect(masked).toEqual([3, 5, 7, 11, 13, 15]);
  });

  it("treats user messages as environment replies only when told to, and never masks the task", async () => {
    const output = Array.from({ length: 20 }, (_, k) => `Output line ${k}: some value ${k * 7}`).join("\n");
    const loop: ChatMessage[] = [sys("agent"), user("Add up the numbers in data/xs and return the total.")];
    for (let i = 0; i < 6; i++) loop.push({ role: "assistant", content: `(println (take ${i} data/xs))` }, user(`Turn ${i + 2} of 8.\n${output}`));
    const kept = await run(loop, { turns: 2, polling: 1 });
    expect(kept.messages).toEqual(loop);
    const r = await run(loop, { turns: 2, polling: 1, userReplies: "mask" });
    expect(maskedIndices(loop, r.messages)).toEqual([3, 5, 7, 9]);
    expect(r.messages[3]).toEqual({ role: "user", content: "[Old environment output omitted: 21 lines; first line: Turn 2 of 8.]" });
    expect(r.messages[1]).toBe(loop[1]);
    // A user message that follows another user message is a person, not the environment.
    const twice = [...loop.slice(0, 4), user("Also, please hurry. ".repeat(40)), ...loop.slice(4)];
    const r2 = await run(twice, { turns: 2, polling: 1, userReplies: "mask" });
    expect(r2.messages[4]).toBe(twice[4]);
  });

  it("rejects bad options with the option named", () => {
    expect(() => createStrategy({ name: "observation-masking", options: { neverMask: ["bash"], alwaysMask: ["bash"] } })).toThrow(/neverMask and alwaysMask/);
    expect(() => createStrategy({ name: "observation-masking", options: { polling: 0 } })).toThrow(/polling/);
    expect(() => createStrategy({ name: "observation-masking", options: { turns: "ten" } })).toThrow(/turns/);
  });

  it("is usable as SubAgent's history: older feedback is masked, the programs are kept", async () => {
    const code = (body: string): string => "```clojure\n" + body + "\n```";
    const programs = [0, 1, 2, 3, 4].map((i) => code(`(println (apply str (repeat 40 "line ${i} of a long printed output\\n")))`)).concat(code("(return 1)"));
    const agent = SubAgent.create({ prompt: "Print things, then return 1.", maxTurns: programs.length });
    const step = await SubAgent.run(agent, { llm: scriptedLlm(programs), history: { name: "observation-masking", options: { turns: 2, polling: 1, userReplies: "mask" } } });
    expect(step.ok).toBe(true);
    const last = step.messages.at(-1) ?? [];
    const full = await SubAgent.run(agent, { llm: scriptedLlm(programs) });
    const fullLast = full.messages.at(-1) ?? [];
    expect(last.filter((m) => m.role === "assistant")).toEqual(fullLast.filter((m) => m.role === "assistant"));
    const masked = last.filter((m) => m.role === "user" && String(m.content).startsWith("[Old environment output omitted"));
    expect(masked).toHaveLength(3);
    expect(promptTokens(last)).toBeLessThan(promptTokens(fullLast));
    expect(step.trace.settings?.strategy?.name).toBe("observation-masking");
  });
});

describe("mask-then-summarize", () => {
  const hybrid = (maxTokens: number): Record<string, Json> => ({ turns: 3, polling: 5, trigger: { name: "token-threshold", options: { maxTokens } } });

  async function replay(messages: readonly ChatMessage[], options: Record<string, Json>) {
    let state: Json | undefined;
    const results: CompactionResult[] = [];
    for (let j = 3; j <= messages.length; j++) {
      if (messages[j - 1].role !== "tool") continue;
      const r = await compact(messages.slice(0, j), { name: "mask-then-summarize", options }, state === undefined ? {} : { state });
      state = r.state;
      results.push(r);
    }
    return results;
  }

  it("is the masking alone while the masked prompt is under budget", async () => {
    const messages = codingRun(20);
    const masked = await run(messages, { turns: 3, polling: 5 });
    const r = await compact(messages, { name: "mask-then-summarize", options: hybrid(1_000_000) });
    expect(r.messages).toEqual(masked.messages);
    expect(r.events.some((e) => e.kind === "compacted" && e.detail?.includes("masked"))).toBe(true);
  });

  it("over budget, folds only masked turns into the summary; the tail stays as the masking leaves it; the state never resets", async () => {
    const messages = codingRun(30);
    const results = await replay(messages, hybrid(2_500));
    const summarized = results.filter((r) => r.messages.some((m) => String(m.content).startsWith("[Summary of")));
    expect(summarized.length).toBeGreaterThan(0);
    expect(results.flatMap((r) => r.events).filter((e) => e.detail?.includes("reset"))).toEqual([]);
    const last = results.at(-1);
    if (last === undefined) throw new Error("no requests");
    const masked = await run(messages, { turns: 3, polling: 5 });
    // The unmasked tail (at least 3 whole turns) is exactly the masking's tail.
    const tail = masked.messages.slice(-6);
    expect(last.messages.slice(-6)).toEqual(tail);
    expect(tail.filter((m) => m.role === "tool").every((m) => !String(m.content).startsWith("[Old"))).toBe(true);
    // Summarizing made the prompt smaller than masking alone.
    expect(last.stats.tokensOut).toBeLessThan(masked.stats.tokensOut);
    expect(last.summarizer).toBe("facts");
  });

  it("takes any trigger, and rejects an unknown one by name", async () => {
    const messages = codingRun(30);
    const r = await compact(messages, { name: "mask-then-summarize", options: { turns: 3, polling: 5, trigger: { name: "message-count", options: { maxMessages: 20 } } } });
    expect(r.messages.some((m) => String(m.content).startsWith("[Summary of"))).toBe(true);
    expect(() => createStrategy({ name: "mask-then-summarize", options: { trigger: { name: "whenever" } } })).toThrow(/unknown trigger "whenever"/);
  });
});

describe("observation-masking against awkward tool output", () => {
  it("never grows a prompt, never throws, and keeps pairs on arbitrary outputs, empty ones and content parts", async () => {
    const fc = (await import("fast-check")).default;
    const output = fc.oneof(
      fc.string({ maxLength: 400 }),
      fc.array(fc.string({ maxLength: 60 }), { maxLength: 30 }).map((lines) => lines.join("\n")),
      fc.constant(""),
      fc.constant("\n\n\n"),
      fc.constant("<returncode>-9</returncode>\n" + "x\n".repeat(50)),
    );
    const content = fc.oneof(output, fc.constant(null), output.map((text) => [{ type: "text", text }, { type: "image_url", image_url: { url: "data:," } }]));
    const toolName = fc.oneof(fc.constant("bash"), fc.string({ minLength: 1, maxLength: 300 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ name: toolName, content }), { minLength: 1, maxLength: 14 }), fc.integer({ min: 0, max: 4 }), fc.integer({ min: 1, max: 4 }), async (steps, turns, polling) => {
        const messages: ChatMessage[] = [user("task")];
        steps.forEach((s, i) => {
          messages.push({ role: "assistant", content: null, tool_calls: [{ id: `t${i}`, type: "function", function: { name: s.name, arguments: "{}" } }] });
          messages.push({ role: "tool", tool_call_id: `t${i}`, content: s.content as ChatMessage["content"] });
        });
        const r = await run(messages, { turns, polling });
        expect(r.stats.tokensOut).toBeLessThanOrEqual(r.stats.tokensIn);
        expect(r.messages.map((m) => [m.role, m.tool_call_id])).toEqual(messages.map((m) => [m.role, m.tool_call_id]));
        r.messages.forEach((m, i) => {
          if (m !== messages[i]) expect(String(m.content)).toMatch(/^\[Old .* output omitted: \d+ lines?; (exit status -?\d+|first line: .*)\]$/s);
        });
      }),
      { numRuns: 60 },
    );
  });
});

describe("mask-then-summarize's cache breakpoints", () => {
  it("mark the summary once there is one, and later prompts keep everything up to it until the next fold", async () => {
    const strategy = createStrategy({ name: "mask-then-summarize", options: { turns: 2, polling: 5, trigger: { name: "token-threshold", options: { maxTokens: 2_500 } } } });
    const messages = codingRun(30);
    let state = strategy.initialState();
    let previous: { messages: ChatMessage[]; mark: number } | undefined;
    let marked = 0;
    for (let j = 4; j <= messages.length; j += 2) {
      const r = await strategy.project({ messages: messages.slice(0, j) }, state, {});
      state = r.state;
      const marks = strategy.cacheBreakpoints?.(r.messages) ?? [];
      const summary = r.messages.findIndex((m) => String(m.content).startsWith("[Summary of"));
      if (summary >= 0) {
        expect(marks).toEqual([summary]);
        marked++;
        const folded = r.events.some((e) => e.kind === "compacted" && e.detail === undefined);
        if (previous !== undefined && !folded) expect(r.messages.slice(0, previous.mark + 1)).toEqual(previous.messages.slice(0, previous.mark + 1));
        previous = { messages: r.messages, mark: summary };
      }
    }
    expect(marked).toBeGreaterThan(3);
  });
});
