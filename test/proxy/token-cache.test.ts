// A budgeted key's body forwarded untouched is counted once and never again: it is kept out of the
// token count's cache, where bodies of tens of kilobytes pushed out the conversations' messages,
// which the chat route counts again at every turn. The tokenizer is watched for the texts it counts.
import { afterEach, describe, expect, it, vi } from "vitest";
import { countTokens } from "../../src/compaction/tokens.js";
import { hashKey } from "../../src/proxy/tenancy.js";
import { rig, type Rig } from "./setup.js";

const watched = vi.hoisted(() => ({ counts: 0 }));
vi.mock("gpt-tokenizer", async (importOriginal) => {
  const real = await importOriginal<typeof import("gpt-tokenizer")>();
  return {
    ...real,
    countTokens: (...args: Parameters<typeof real.countTokens>) => {
      if (typeof args[0] === "string" && args[0].startsWith("MARK")) watched.counts++;
      return real.countTokens(...args);
    },
  };
});

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe("the token count's cache on the request path", () => {
  it("keeps a conversation's messages counted while a budgeted key sends bodies forwarded untouched", async () => {
    r = await rig({ config: { compaction: { enabled: false }, tenancy: { virtualKeys: { rag: { keyHash: hashKey("ptc-vk-rag"), tokenBudget: 1e12 } } } } });
    const headers = { authorization: "Bearer ptc-vk-rag", "content-type": "application/json" };
    const message = `MARK ${"the plan for the billing service migration ".repeat(20)}`;
    const chat = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers, body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: message }] }) });
    expect(chat.status).toBe(200);
    await chat.arrayBuffer();
    // Counted for the request's reservation.
    expect(watched.counts).toBe(1);
    // 150 distinct embeddings bodies of 60 K characters each: 9 M, past what the cache holds.
    for (let i = 0; i < 150; i++) {
      const body = JSON.stringify({ model: "fake-model", input: `${i} ${"words to embed ".repeat(4000)}` });
      const res = await fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers, body });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    countTokens(message);
    // Before: 2, the bodies had filled the cache and it was cleared.
    expect(watched.counts).toBe(1);
  }, 60_000);
});
