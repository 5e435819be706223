// Retries before the first byte: 429/5xx answers are retried with back-off, a retry-after the
// upstream sends is honoured (and one too long is passed to the client instead of waited for),
// then the fallback upstream takes over. The waits are recorded, not slept: nothing here depends
// on the machine's speed.
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-openai.js";
import { rig, type Rig } from "./setup.js";

let r: Rig | undefined;
let fallback: FakeUpstream | undefined;
afterEach(async () => {
  await r?.close();
  await fallback?.close();
  r = undefined;
  fallback = undefined;
});

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "hello" }];
const chats = (u: FakeUpstream) => u.requests.filter((q) => q.path === "/v1/chat/completions");

describe("proxy retries and fallback", () => {
  it("retries a 503 honouring retry-after, for plain and streamed replies", async () => {
    const slept: number[] = [];
    r = await rig({ upstream: { failFirst: { count: 2, status: 503, headers: { "retry-after": "3" } } }, proxy: { sleep: async (ms) => void slept.push(ms) } });
    const reply = await r.client.chat.completions.create({ model: "fake-model", messages }).withResponse();
    expect(reply.data.choices[0].message.content).toBe("reply to hello (1 messages)");
    expect(reply.response.headers.get("x-ptc-upstream-attempts")).toBe("3");
    expect(slept).toEqual([3000, 3000]);
    expect(chats(r.upstream)).toHaveLength(3);
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_retries_total")).toBe(2);
    const stream = await r.client.chat.completions.create({ model: "fake-model", messages, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("reply to hello (1 messages)");
  });

  it("backs off exponentially without retry-after, and passes a retry-after longer than maxDelayMs to the client", async () => {
    const slept: number[] = [];
    r = await rig({ upstream: { failFirst: { count: 2, status: 429 } }, proxy: { sleep: async (ms) => void slept.push(ms) } });
    await r.client.chat.completions.create({ model: "fake-model", messages });
    expect(slept).toEqual([250, 500]);
    await r.close();
    slept.length = 0;
    r = await rig({ upstream: { failFirst: { count: 5, status: 429, headers: { "retry-after": "120" } } }, proxy: { sleep: async (ms) => void slept.push(ms) } });
    const e = (await r.client.chat.completions.create({ model: "fake-model", messages }).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(429);
    expect(e.headers?.get("retry-after")).toBe("120");
    expect(slept).toEqual([]);
    expect(chats(r.upstream)).toHaveLength(1);
  });

  it("retries every 5xx, such as Anthropic's 529 overloaded and a CDN's 520", async () => {
    for (const status of [529, 520]) {
      r = await rig({ upstream: { failFirst: { count: 1, status } } });
      // Before: passed to the client at once, as a 400 would be.
      const reply = await r.client.chat.completions.create({ model: "fake-model", messages }).withResponse();
      expect(reply.data.choices[0].message.content, String(status)).toBe("reply to hello (1 messages)");
      expect(reply.response.headers.get("x-ptc-upstream-attempts"), String(status)).toBe("2");
      await r.close();
      r = undefined;
    }
  });

  it("does not retry a client error", async () => {
    r = await rig({ upstream: { failFirst: { count: 1, status: 400 } } });
    const e = (await r.client.chat.completions.create({ model: "fake-model", messages }).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).toBe(400);
    expect(chats(r.upstream)).toHaveLength(1);
  });

  it("falls back to the other upstream, with its own key, once the first one's retries are used up", async () => {
    fallback = await startFakeUpstream();
    const slept: number[] = [];
    r = await rig({ upstream: { failFirst: { count: 100, status: 500 } }, proxy: { sleep: async (ms) => void slept.push(ms) }, config: { retries: { fallbackUpstream: fallback.url, fallbackApiKey: "sk-fallback" } } });
    const reply = await r.client.chat.completions.create({ model: "fake-model", messages }).withResponse();
    expect(reply.data.choices[0].message.content).toBe("reply to hello (1 messages)");
    expect(chats(r.upstream)).toHaveLength(3);
    expect(chats(fallback)).toHaveLength(1);
    expect(chats(fallback)[0].headers.authorization).toBe("Bearer sk-fallback");
    expect(reply.response.headers.get("x-ptc-upstream-attempts")).toBe("4");
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_fallbacks_total")).toBe(1);
  });
});
