// A summarizer's or goal detector's client that reports usage no provider would (a negative
// count, NaN, a string) had it added as it came: the spend of a compaction read -10 input tokens
// or NaN, and a string concatenated into the total, so ptc compare priced the strategy at NaN or
// below nothing. Such a figure is not a count: the call is measured instead, as the agent does.
import { describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.js";
import type { Llm, LlmUsage } from "../../src/llm/types.js";
import { chat } from "./conversations.js";

const reporting = (usage: unknown, content: string): Llm => ({ name: "odd", complete: () => Promise.resolve({ content, usage: usage as LlmUsage }) });
const summary = JSON.stringify({ ConversationSummary: "[done] the user asked about trains" });

describe("usage a client reports that is no count", () => {
  it.each([
    ["negative and NaN", { inputTokens: -5, outputTokens: Number.NaN }],
    ["strings", { inputTokens: "120", outputTokens: "9" }],
    ["infinite", { inputTokens: Number.POSITIVE_INFINITY, outputTokens: 3 }],
  ])("the summary call's spend is measured when the usage is %s", async (_label, usage) => {
    const r = await compact(chat(8), { name: "rolling-summary", options: { summarizer: "llm", maxAttempts: 1 } }, { llm: reporting(usage, summary), force: true });
    expect(r.stats.llmCalls).toBe(1);
    for (const n of [r.stats.llmInputTokens, r.stats.llmOutputTokens]) {
      expect(typeof n).toBe("number");
      expect(Number.isFinite(n) && n > 0).toBe(true);
    }
  });

  it("the goal detector's calls likewise", async () => {
    const r = await compact(chat(8), { name: "goal-boundary", options: { detector: "llm", summarizer: "facts" } }, { llm: reporting({ inputTokens: -5, outputTokens: "x" }, "CONTINUE"), force: true });
    expect(r.stats.llmCalls).toBeGreaterThan(0);
    for (const n of [r.stats.llmInputTokens, r.stats.llmOutputTokens]) {
      expect(typeof n).toBe("number");
      expect(Number.isFinite(n) && n > 0).toBe(true);
    }
  });
});
