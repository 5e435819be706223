// Pins the cost-payback trigger's decisions (and the reasons it gives, dollars included) on a few
// conversations, for models priced by name and for fixed prices with each provider's cache, so a
// change to how the trigger prices a request cannot pass unnoticed.
import { describe, expect, it } from "vitest";
import { createTrigger } from "../../src/compaction/triggers.js";
import { promptTokens } from "../../src/compaction/tokens.js";
import type { ChatMessage } from "../../src/llm/types.js";
import { call, chat, result, sys, user } from "./conversations.js";

/** A task, then `rounds` tool calls each returning a result of about `size` words. */
function toolHeavy(rounds: number, size: number): ChatMessage[] {
  const out = [sys("You are a careful analyst."), user("Find the three cheapest suppliers in the attached catalogue.")];
  for (let i = 1; i <= rounds; i++) {
    out.push(call(`c${i}`, "search", JSON.stringify({ page: i })));
    out.push(result(`c${i}`, Array.from({ length: size }, (_, k) => `supplier-${i}-${k} price ${(k * 7 + i) % 97}`).join("; ")));
  }
  return out;
}

const conversations: Record<string, readonly ChatMessage[]> = {
  "chat 3": chat(3),
  "chat 12": chat(12),
  "chat 40": chat(40),
  "tools 4x300": toolHeavy(4, 300),
  "tools 10x800": toolHeavy(10, 800),
};

const settings: Record<string, { model?: string; options: Record<string, unknown> }> = {
  "gpt-4o": { model: "gpt-4o", options: {} },
  "gpt-4o, 3 turns": { model: "gpt-4o", options: { remainingTurns: 3 } },
  "gpt-5": { model: "gpt-5", options: {} },
  "claude-sonnet-4-5": { model: "claude-sonnet-4-5", options: {} },
  "claude-sonnet-4-5, 20 turns, extractive": { model: "claude-sonnet-4-5", options: { remainingTurns: 20, summaryCall: false } },
  "fixed openai": { model: "gpt-4o", options: { price: { input: 2.5, output: 10 } } },
  "fixed anthropic": { options: { price: { input: 3, output: 15, provider: "anthropic" } } },
  "fixed anthropic-1h": { options: { price: { input: 3, output: 15, provider: "anthropic-1h" } } },
  "fixed gemini": { options: { price: { input: 0.3, output: 2.5, provider: "gemini" } } },
  "fixed none": { options: { price: { input: 1, output: 4, provider: "none" } } },
  "fixed free": { options: { price: { input: 0, output: 0 } } },
};

function decisions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [s, { model, options }] of Object.entries(settings)) {
    const trigger = createTrigger({ name: "cost-payback", options });
    for (const [c, messages] of Object.entries(conversations)) {
      const d = trigger.shouldCompact({ messages, model }, promptTokens(messages));
      out[`${s} / ${c}`] = `${d.compact ? "compact" : "keep"}: ${d.reason}`;
    }
  }
  return out;
}

describe("cost-payback trigger", () => {
  it("decides as pinned for models by name and fixed prices", () => {
    expect(decisions()).toEqual(PINNED);
  });

  it("counts as replaced only what the summary replaces: not a system message after the task, not a call batch the cut keeps whole", () => {
    const doc = sys(`Reference document:\n${Array.from({ length: 4000 }, (_, k) => `clause ${k} applies`).join("\n")}`);
    const plain = chat(40);
    // An app that injects a document as a system message after the task: the summary keeps it, so it saves nothing.
    const withDoc = [...plain.slice(0, 2), doc, ...plain.slice(2)];
    const trigger = createTrigger({ name: "cost-payback", options: {} });
    const decide = (messages: readonly ChatMessage[]) => trigger.shouldCompact({ messages, model: "gpt-5" }, promptTokens(messages));
    expect(decide(withDoc)).toEqual(decide(plain));
    expect(decide(withDoc).compact).toBe(false);
    // The last two messages are results of one batch of three calls: the cut keeps the whole batch.
    const batch: ChatMessage = { role: "assistant", content: null, tool_calls: ["a", "b", "c"].map((id) => ({ id, type: "function", function: { name: "read", arguments: `{"file":"${id}"}` } })) };
    const parallel = [...chat(12), user("read the three files"), batch, ...["a", "b", "c"].map((id) => result(id, `contents of ${id} `.repeat(2000)))];
    const keep = (keepLast: number) => createTrigger({ name: "cost-payback", options: { keepLast } }).shouldCompact({ messages: parallel, model: "gpt-4o" }, promptTokens(parallel));
    expect(keep(2)).toEqual(keep(4));
  });

  it("rejects a fixed price for a provider it has no cache model for", () => {
    expect(() => createTrigger({ name: "cost-payback", options: { price: { input: 1, output: 1, provider: "nowhere" } } })).toThrow(/unknown provider "nowhere"/);
  });
});

// Decisions of the trigger as it priced requests before the price models were folded into one
// (prices.ts): gpt-4o by name reads its cache at 0.5x, a fixed OpenAI price at 0.1x (gpt-5's).
const PINNED: Record<string, string> = {
  "gpt-4o / chat 3": "keep: only 97 tokens could be replaced",
  "gpt-4o / chat 12": "keep: saving $0.000309 over 12 turns <= cost $0.008370 (summary call and cache rewrite)",
  "gpt-4o / chat 40": "compact: saving $0.084204 over 40 turns > cost $0.012430 (summary call and cache rewrite)",
  "gpt-4o / tools 4x300": "compact: saving $0.037710 over 3 turns > cost $0.030496 (summary call and cache rewrite)",
  "gpt-4o / tools 10x800": "compact: saving $0.562800 over 6 turns > cost $0.178066 (summary call and cache rewrite)",
  "gpt-4o, 3 turns / chat 3": "keep: only 97 tokens could be replaced",
  "gpt-4o, 3 turns / chat 12": "keep: saving $0.000095 over 3 turns <= cost $0.008370 (summary call and cache rewrite)",
  "gpt-4o, 3 turns / chat 40": "keep: saving $0.008215 over 3 turns <= cost $0.012430 (summary call and cache rewrite)",
  "gpt-4o, 3 turns / tools 4x300": "compact: saving $0.037710 over 3 turns > cost $0.030496 (summary call and cache rewrite)",
  "gpt-4o, 3 turns / tools 10x800": "compact: saving $0.321600 over 3 turns > cost $0.178066 (summary call and cache rewrite)",
  "gpt-5 / chat 3": "keep: only 97 tokens could be replaced",
  "gpt-5 / chat 12": "keep: saving $0.000031 over 12 turns <= cost $0.007514 (summary call and cache rewrite)",
  "gpt-5 / chat 40": "keep: saving $0.008420 over 40 turns <= cost $0.009544 (summary call and cache rewrite)",
  "gpt-5 / tools 4x300": "keep: saving $0.003771 over 3 turns <= cost $0.019905 (summary call and cache rewrite)",
  "gpt-5 / tools 10x800": "keep: saving $0.056280 over 6 turns <= cost $0.095940 (summary call and cache rewrite)",
  "claude-sonnet-4-5 / chat 3": "keep: only 97 tokens could be replaced",
  "claude-sonnet-4-5 / chat 12": "keep: saving $0.000074 over 12 turns <= cost $0.013127 (summary call and cache rewrite)",
  "claude-sonnet-4-5 / chat 40": "compact: saving $0.020209 over 40 turns > cost $0.017999 (summary call and cache rewrite)",
  "claude-sonnet-4-5 / tools 4x300": "keep: saving $0.009050 over 3 turns <= cost $0.044856 (summary call and cache rewrite)",
  "claude-sonnet-4-5 / tools 10x800": "keep: saving $0.135072 over 6 turns <= cost $0.230715 (summary call and cache rewrite)",
  "claude-sonnet-4-5, 20 turns, extractive / chat 3": "keep: only 97 tokens could be replaced",
  "claude-sonnet-4-5, 20 turns, extractive / chat 12": "keep: saving $0.000120 over 20 turns <= cost $0.002270 (summary call and cache rewrite)",
  "claude-sonnet-4-5, 20 turns, extractive / chat 40": "compact: saving $0.010351 over 20 turns > cost $0.002270 (summary call and cache rewrite)",
  "claude-sonnet-4-5, 20 turns, extractive / tools 4x300": "compact: saving $0.047515 over 20 turns > cost $0.011430 (summary call and cache rewrite)",
  "claude-sonnet-4-5, 20 turns, extractive / tools 10x800": "compact: saving $0.405216 over 20 turns > cost $0.026955 (summary call and cache rewrite)",
  "fixed openai / chat 3": "keep: only 97 tokens could be replaced",
  "fixed openai / chat 12": "keep: saving $0.000062 over 12 turns <= cost $0.009028 (summary call and cache rewrite)",
  "fixed openai / chat 40": "compact: saving $0.016841 over 40 turns > cost $0.013088 (summary call and cache rewrite)",
  "fixed openai / tools 4x300": "keep: saving $0.007542 over 3 turns <= cost $0.033809 (summary call and cache rewrite)",
  "fixed openai / tools 10x800": "keep: saving $0.112560 over 6 turns <= cost $0.185879 (summary call and cache rewrite)",
  "fixed anthropic / chat 3": "keep: only 97 tokens could be replaced",
  "fixed anthropic / chat 12": "keep: saving $0.000074 over 12 turns <= cost $0.013127 (summary call and cache rewrite)",
  "fixed anthropic / chat 40": "compact: saving $0.020209 over 40 turns > cost $0.017999 (summary call and cache rewrite)",
  "fixed anthropic / tools 4x300": "keep: saving $0.009050 over 3 turns <= cost $0.044856 (summary call and cache rewrite)",
  "fixed anthropic / tools 10x800": "keep: saving $0.135072 over 6 turns <= cost $0.230715 (summary call and cache rewrite)",
  "fixed anthropic-1h / chat 3": "keep: only 97 tokens could be replaced",
  "fixed anthropic-1h / chat 12": "keep: saving $0.000074 over 12 turns <= cost $0.014608 (summary call and cache rewrite)",
  "fixed anthropic-1h / chat 40": "compact: saving $0.020209 over 40 turns > cost $0.019480 (summary call and cache rewrite)",
  "fixed anthropic-1h / tools 4x300": "keep: saving $0.009050 over 3 turns <= cost $0.052310 (summary call and cache rewrite)",
  "fixed anthropic-1h / tools 10x800": "keep: saving $0.135072 over 6 turns <= cost $0.248294 (summary call and cache rewrite)",
  "fixed gemini / chat 3": "keep: only 97 tokens could be replaced",
  "fixed gemini / chat 12": "keep: saving $0.000019 over 12 turns <= cost $0.001834 (summary call and cache rewrite)",
  "fixed gemini / chat 40": "compact: saving $0.005052 over 40 turns > cost $0.002321 (summary call and cache rewrite)",
  "fixed gemini / tools 4x300": "keep: saving $0.002263 over 3 turns <= cost $0.004688 (summary call and cache rewrite)",
  "fixed gemini / tools 10x800": "compact: saving $0.033768 over 6 turns > cost $0.022734 (summary call and cache rewrite)",
  "fixed none / chat 3": "keep: only 97 tokens could be replaced",
  "fixed none / chat 12": "keep: saving $0.000247 over 12 turns <= cost $0.003019 (summary call and cache rewrite)",
  "fixed none / chat 40": "compact: saving $0.067363 over 40 turns > cost $0.004643 (summary call and cache rewrite)",
  "fixed none / tools 4x300": "compact: saving $0.030168 over 3 turns > cost $0.010542 (summary call and cache rewrite)",
  "fixed none / tools 10x800": "compact: saving $0.450240 over 6 turns > cost $0.067320 (summary call and cache rewrite)",
  "fixed free / chat 3": "keep: only 97 tokens could be replaced",
  "fixed free / chat 12": "keep: saving $0.000000 over 12 turns <= cost $0.000000 (summary call and cache rewrite)",
  "fixed free / chat 40": "keep: saving $0.000000 over 40 turns <= cost $0.000000 (summary call and cache rewrite)",
  "fixed free / tools 4x300": "keep: saving $0.000000 over 3 turns <= cost $0.000000 (summary call and cache rewrite)",
  "fixed free / tools 10x800": "keep: saving $0.000000 over 6 turns <= cost $0.000000 (summary call and cache rewrite)",
};
