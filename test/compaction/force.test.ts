// `force`: compact now, whatever the strategy's trigger says (the proxy's "compact this
// conversation"), without rewriting the strategy into another one.
import { describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.js";
import type { Json } from "../../src/compaction/types.js";
import type { ChatMessage } from "../../src/llm/types.js";

const turn = (i: number): ChatMessage[] => [
  { role: "user", content: `question ${i}: what is the status of order ${i}?` },
  { role: "assistant", content: `order ${i} shipped on day ${i}; `.repeat(30) },
];
const chat: ChatMessage[] = [{ role: "system", content: "You help with orders." }, ...Array.from({ length: 8 }, (_, i) => turn(i)).flat()];

// cost-trigger compacts a conversation this size when it pays over the turns it expects; with none
// left it never pays, so only force compacts.
describe("force", () => {
  for (const name of [{ name: "usage-ratio" }, { name: "cost-trigger", options: { remainingTurns: 0 } }, { name: "rolling-summary", options: { roundsToCompress: 50 } }]) {
    it(`${name.name}: a small conversation its trigger leaves alone is compacted when forced`, async () => {
      const normal = await compact(chat, name, { model: "gpt-4o" });
      expect(normal.events.some((e) => e.kind === "compacted")).toBe(false);
      const forced = await compact(chat, name, { model: "gpt-4o", force: true });
      expect(forced.events.some((e) => e.kind === "compacted"), JSON.stringify(forced.events)).toBe(true);
      expect(forced.messages.length).toBeLessThan(chat.length);
      // The state is the strategy's own: the next, unforced call continues from it.
      const next = await compact([...chat, ...turn(9)], name, { model: "gpt-4o", state: forced.state });
      expect(next.messages.length).toBeLessThan(chat.length + 2);
    });
  }
});

describe("force with mask-then-summarize", () => {
  it("folds the masked turns into a summary though the masked prompt is under the trigger's budget", async () => {
    const run: ChatMessage[] = [{ role: "system", content: "You are a coding agent." }, { role: "user", content: "Fix the failing test." }];
    for (let i = 0; i < 14; i++) {
      run.push({ role: "assistant", content: `Step ${i}: listing part ${i}.`, tool_calls: [{ id: `c${i}`, type: "function", function: { name: "bash", arguments: `{"command":"ls part_${i}"}` } }] });
      run.push({ role: "tool", tool_call_id: `c${i}`, content: Array.from({ length: 40 }, (_, k) => `part_${i}/file_${k}.py`).join("\n") });
    }
    const spec = { name: "mask-then-summarize", options: { trigger: { name: "token-threshold", options: { maxTokens: 1_000_000 } } } };
    const normal = await compact(run, spec);
    expect(normal.events.some((e) => e.kind === "compacted" && e.detail === undefined)).toBe(false);
    const forced = await compact(run, spec, { force: true });
    // The masking's event carries a detail; the summary's does not.
    expect(forced.events.some((e) => e.kind === "compacted" && e.detail === undefined), JSON.stringify(forced.events)).toBe(true);
    expect(forced.stats.tokensOut).toBeLessThan(normal.stats.tokensOut);
  });
});

// A span with nothing worth keeping (blank messages, only pleasantries) made the facts summary
// empty, which was rejected as a failed summary: ten forced rounds of "   " / "\n\n" recorded
// three summary_failed and opened the breaker. Nothing to keep is no failure.
describe("a span with no facts", () => {
  for (const [label, user, assistant] of [
    ["blank", "   ", "\n\n"],
    ["pleasantries", "ok thanks", "Great!"],
  ] as const) {
    it(`${label} messages are skipped, not counted as failed summaries`, async () => {
      const messages: ChatMessage[] = [{ role: "system", content: "sys" }];
      let state: Json | undefined;
      const kinds: string[] = [];
      for (let r = 0; r < 10; r++) {
        messages.push({ role: "user", content: user }, { role: "assistant", content: assistant });
        const result = await compact(messages, "rolling-summary", { force: true, ...(state === undefined ? {} : { state }) });
        state = result.state;
        kinds.push(...result.events.map((e) => e.kind));
      }
      expect(kinds).not.toContain("summary_failed");
      expect(kinds).not.toContain("circuit_open");
      expect(kinds).toContain("skipped");
    });
  }
});
