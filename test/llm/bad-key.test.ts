// A key no header can carry (a secrets file of two lines read whole, a pasted control character):
// fetch refuses the header quoting its whole value, the key and whatever came after it.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { describe, expect, it } from "vitest";
import { llmFailure as failure } from "../support/llm.js";
import { aiSdkLlm } from "../../src/llm/ai-sdk.js";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { openaiLlm } from "../../src/llm/openai.js";

// Port 9 (discard) is never reached: the request fails as its headers are built.
const base = "http://127.0.0.1:9";

describe("an API key that no header can carry", () => {
  for (const apiKey of ["sk-first-0123456789\nsk-second-SECRET2", "plainkey0123\u0000tail-SECRET2"]) {
    it(`is a config error that quotes neither part (${JSON.stringify(apiKey)})`, async () => {
      const clients = [
        openaiLlm({ model: "m", baseURL: `${base}/v1`, apiKey, maxRetries: 2, retryBaseMs: 1, env: {} }),
        anthropicLlm({ model: "m", baseURL: base, apiKey, maxRetries: 2, retryBaseMs: 1, env: {} }),
        aiSdkLlm({ model: createOpenAICompatible({ name: "f", baseURL: `${base}/v1`, apiKey }).chatModel("m"), maxRetries: 2, retryBaseMs: 1 }),
      ];
      for (const client of clients) {
        const e = await failure(client.complete({ messages: [{ role: "user", content: "hi" }] }));
        expect([client.name, e.kind]).toEqual([client.name, "config"]);
        expect(e.message).toContain("cannot be sent as a header");
        expect(e.message).not.toMatch(/SECRET2|0123/);
      }
    });
  }
});
