// `force`: compact now, whatever the strategy's trigger says (the proxy's "compact this
// conversation"), without rewriting the strategy into another one.
import { describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.js";
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
