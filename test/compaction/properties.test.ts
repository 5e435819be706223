// One property suite over every registered strategy, with and without a (scripted) LLM: tool
// pairs intact, order kept, never larger, deterministic, stored history unchanged, system
// messages and task kept, valid role order, state survives JSON and continues identically.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createStrategy, listStrategies } from "../../src/compaction/index.js";
import { defaultStrategies } from "../../src/history/registry.js";
import { roleOrderProblems, taskIndex } from "../../src/compaction/messages.js";
import { promptTokens } from "../../src/compaction/tokens.js";
import type { CompactionContext, Json } from "../../src/compaction/types.js";
import { scriptedLlm, type ScriptedReply } from "../../src/llm/scripted.js";
import type { ChatMessage } from "../../src/llm/types.js";

const WORDS = ["book", "table", "restaurant", "taxi", "hotel", "price", "file", "test", "error", "fixed", "station", "train", "cheap", "north", "centre", "python", "list", "value", "tomorrow", "seven"];
const line = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 20 }).map((w) => w.join(" "));
const text = fc.array(line, { minLength: 1, maxLength: 4 }).map((l) => l.join("\n"));

type Reply = { kind: "plain"; recap: boolean; body: string } | { kind: "tools"; steps: Array<{ calls: number; results: string[] }>; final: string };

const reply: fc.Arbitrary<Reply> = fc.oneof(
  fc.record({ kind: fc.constant("plain" as const), recap: fc.boolean(), body: text }),
  fc.record({
    kind: fc.constant("tools" as const),
    steps: fc.array(fc.record({ calls: fc.integer({ min: 1, max: 2 }), results: fc.array(text, { minLength: 2, maxLength: 2 }) }), { minLength: 1, maxLength: 3 }),
    final: text,
  }),
);

const conversation: fc.Arbitrary<ChatMessage[]> = fc
  .record({
    system: fc.boolean(),
    rounds: fc.array(fc.record({ user: text, reply, midSystem: fc.boolean() }), { minLength: 0, maxLength: 12 }),
  })
  .map(({ system, rounds }) => {
    const out: ChatMessage[] = system ? [{ role: "system", content: "You are a helpful assistant." }] : [];
    let id = 0;
    rounds.forEach((r, n) => {
      if (r.midSystem && n % 4 === 3) out.push({ role: "system", content: "Note: the user's time zone is UTC." });
      out.push({ role: "user", content: r.user });
      if (r.reply.kind === "plain") out.push({ role: "assistant", content: r.reply.recap ? `recap - ${r.reply.body.slice(0, 30)}\n${r.reply.body}` : r.reply.body });
      else {
        for (const step of r.reply.steps) {
          const ids = Array.from({ length: step.calls }, () => `call_${id++}`);
          out.push({ role: "assistant", content: null, tool_calls: ids.map((c) => ({ id: c, type: "function" as const, function: { name: "lookup", arguments: `{"q":"${c}"}` } })) });
          ids.forEach((c, k) => out.push({ role: "tool", tool_call_id: c, content: step.results[k] }));
        }
        out.push({ role: "assistant", content: r.reply.final });
      }
    });
    return out;
  });

// Options that make each strategy actually compact the small generated conversations.
const OPTIONS: Record<string, Record<string, Json>> = {
  "sliding-window": { turns: 2 },
  recap: { minPreservedAssistantMessages: 1, batchSize: 2 },
  "rolling-summary": { roundsToCompress: 1, roundsToRetain: 2 },
  "usage-ratio": { contextLimit: 300 },
  "goal-boundary": { overlap: 0.5 },
  "cost-trigger": { remainingTurns: 200, price: { input: 3, output: 15, provider: "anthropic" }, summaryMaxTokens: 60 },
  "observation-masking": { turns: 1, polling: 2, firstLineChars: 12 },
  "mask-then-summarize": { turns: 1, polling: 1, firstLineChars: 12, trigger: { name: "token-threshold", options: { maxTokens: 150 } } },
};

// A deterministic stand-in for the summarizer's model: it answers whatever it is asked, from the request alone.
const answer: ScriptedReply = (request) => {
  const prompt = String(request.messages[0]?.content ?? "");
  if (prompt.includes("NEW or CONTINUE")) return prompt.length % 3 === 0 ? "NEW" : "CONTINUE";
  if (prompt.length % 5 === 0) return "not json";
  return JSON.stringify({ ConversationSummary: `[done] the user asked about ${WORDS[prompt.length % WORDS.length]}` });
};
const llmContext = (): CompactionContext => ({ llm: scriptedLlm(Array<ScriptedReply>(500).fill(answer)), now: () => 0 });
const offline = (): CompactionContext => ({ now: () => 0 });

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

async function project(name: string, messages: readonly ChatMessage[], state: Json | undefined, context: CompactionContext) {
  const strategy = createStrategy({ name, options: OPTIONS[name] ?? {} }, defaultStrategies);
  return strategy.project({ messages, records: { knownNames: ["orders", "total"] } }, state === undefined ? strategy.initialState() : state, context);
}

// Every shipped strategy, the interpreter-aware one included.
const strategies = listStrategies(defaultStrategies).map((s) => s.name);

describe.each(strategies)("strategy %s", (name) => {
  describe.each([
    ["offline", offline],
    ["with an llm", llmContext],
  ] as const)("%s", (_label, makeContext) => {
    it("keeps pairs, order, system messages and task; never grows; leaves history alone; is deterministic", async () => {
      await fc.assert(
        fc.asyncProperty(conversation, async (messages) => {
          const snapshot = structuredClone(messages);
          deepFreeze(messages);
          const r = await project(name, messages, undefined, makeContext());
          expect(messages).toEqual(snapshot);
          expect(roleOrderProblems(r.messages)).toEqual([]);
          expect(promptTokens(r.messages)).toBeLessThanOrEqual(promptTokens(messages));
          expect(r.stats.tokensOut).toBe(promptTokens(r.messages));
          let last = -1;
          for (const m of r.messages) {
            const at = messages.indexOf(m);
            if (at < 0) continue;
            expect(at).toBeGreaterThan(last);
            last = at;
          }
          for (const m of messages) if (m.role === "system") expect(r.messages).toContain(m);
          const task = taskIndex(messages);
          if (task >= 0) expect(r.messages).toContain(messages[task]);
          const again = await project(name, messages, undefined, makeContext());
          expect(again.messages).toEqual(r.messages);
          expect(again.state).toEqual(r.state);
        }),
        { numRuns: 30 },
      );
    });

    it("stores JSON state, and a restored state continues exactly like the live one", async () => {
      await fc.assert(
        fc.asyncProperty(conversation, fc.integer({ min: 1, max: 6 }), async (messages, extra) => {
          const cut = Math.max(0, messages.length - extra);
          const first = await project(name, messages.slice(0, cut), undefined, makeContext());
          const restored = JSON.parse(JSON.stringify(first.state)) as Json;
          expect(restored).toEqual(first.state);
          const live = await project(name, messages, first.state, makeContext());
          const resumed = await project(name, messages, restored, makeContext());
          expect(resumed.messages).toEqual(live.messages);
          expect(resumed.state).toEqual(live.state);
          expect(roleOrderProblems(live.messages)).toEqual([]);
          expect(promptTokens(live.messages)).toBeLessThanOrEqual(promptTokens(messages));
        }),
        { numRuns: 20 },
      );
    });
  });
});

describe("the generated conversations", () => {
  it("are valid input and make every summarizing strategy compact somewhere", async () => {
    const compacted = new Set<string>();
    await fc.assert(
      fc.asyncProperty(conversation, async (messages) => {
        expect(roleOrderProblems(messages)).toEqual([]);
        for (const name of strategies) {
          const r = await project(name, messages, undefined, offline());
          if (r.events.some((e) => e.kind === "compacted")) compacted.add(name);
        }
      }),
      { numRuns: 40, seed: 7 },
    );
    // The interpreter strategy summarizes from PTC-Lisp turn records, which a generic chat has none of (test/history covers it).
    expect([...compacted].sort()).toEqual(strategies.filter((n) => n !== "full" && n !== "interpreter-summaries").sort());
  });
});
