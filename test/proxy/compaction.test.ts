// Compaction through the proxy: long conversations are summarized before they would overflow
// and still answered; summaries are reused; a context-length error leads to exactly one
// compact-and-retry; failed summaries send the history as it is and open the breaker after
// repeated failures; an upstream that cuts prompts is detected; conversations never mix.
import { join } from "node:path";
import OpenAI from "openai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { defaultStrategies } from "../../src/history/registry.js";
import type { ChatMessage } from "../../src/llm/types.js";
import { prefixHashes } from "../../src/proxy/identity.js";
import type { ConversationRecord } from "../../src/proxy/store.js";
import { tenantOf } from "../../src/proxy/tenancy.js";
import { startProxy } from "../../src/proxy/index.js";
import { longConversation, never, rig, stored, type Rig, key, tempDir } from "./setup.js";
import { loopTurns } from "../support/loop-turns.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

// The fake model's window as the proxy knows it: the 30-round conversations below are ~6k tokens.
// A 3,000-token window under usage-ratio (stated: these tests are about the window, whatever the default strategy).
const SMALL = { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } };

type Msg = { role: string; content: string | null };
const chatRequests = (x: Rig) => x.upstream.requests.filter((q) => q.path === "/v1/chat/completions" && !JSON.stringify(q.body).includes("ConversationSummary"));
const sentMessages = (x: Rig, i: number) => (chatRequests(x).at(i)?.body?.messages ?? []) as Msg[];

async function send(x: Rig, messages: OpenAI.ChatCompletionMessageParam[], id?: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) {
  return x.client.chat.completions.create({ model: "fake-model", messages, ...extra }, id === undefined ? {} : { headers: { "x-conversation-id": id } });
}

describe("proxy compaction", () => {
  it("compacts a long conversation before forwarding and still answers it", async () => {
    r = await rig({ config: SMALL });
    const history = longConversation(30);
    const reply = await send(r, history, "long-1");
    expect(reply.choices[0].message.content).toBe("reply to final question a (5 messages)");
    const sent = sentMessages(r, 0);
    // System prompt, the task, the summary, the last message(s) kept.
    expect(sent[0]).toEqual({ role: "system", content: "You are a helpful assistant." });
    expect(sent[1].content).toBe("TASK-a: plan the migration of the billing service.");
    expect(sent[2].content).toContain("[Summary of");
    expect(sent.slice(-2).map((m) => m.content)).toEqual([history.at(-2)?.content, "final question a"]);
    expect(r.upstream.summaryCalls).toBe(1);
    // The summarizer was called on the upstream with the client's own key and model.
    const summaryCall = r.upstream.requests.find((q) => JSON.stringify(q.body).includes("ConversationSummary"));
    expect(summaryCall?.headers.authorization).toBe("Bearer sk-client-key");
    expect(summaryCall?.body?.model).toBe("fake-model");
    const log = r.logs.find((l) => l.event === "compaction");
    expect(log).toMatchObject({ conversation: "long-1", strategy: "usage-ratio", outcome: "succeeded" });
    expect(Number(log?.tokensBefore)).toBeGreaterThan(Number(log?.tokensAfter));
    expect(JSON.stringify(r.logs)).not.toContain("aword");

    // The next turn reuses the summary: no new summary call, the new messages are kept.
    const next = [...history, { role: "assistant" as const, content: reply.choices[0].message.content ?? "" }, { role: "user" as const, content: "one more thing" }];
    const again = await send(r, next, "long-1");
    expect(again.choices[0].message.content).toContain("one more thing");
    expect(r.upstream.summaryCalls).toBe(1);
    expect(sentMessages(r, 1).slice(-3).map((m) => m.content)).toEqual(["final question a", "reply to final question a (5 messages)", "one more thing"]);
    expect(sentMessages(r, 1)[2].content).toBe(sent[2].content);
  });

  // A reasoning model as the summarizer refuses the summarizer's temperature: learned once per process, not once per summary.
  it("learns once what the summarizer's model refuses, across requests and conversations", async () => {
    r = await rig({ config: SMALL, upstream: { refuseTemperature: true } });
    await send(r, longConversation(30, 80, "a"), "learn-a");
    await send(r, longConversation(30, 80, "b"), "learn-b");
    expect(r.upstream.summaryCalls).toBe(2);
    const refused = r.upstream.requests.filter((q) => q.body?.temperature !== undefined);
    expect(refused).toHaveLength(1);
  });

  it("counts tool schemas and the reserved output in the budget", async () => {
    r = await rig({ config: SMALL });
    const history = longConversation(3);
    await send(r, history, "small-no-tools");
    expect(sentMessages(r, 0)).toHaveLength(history.length);
    const tools: OpenAI.ChatCompletionTool[] = [{ type: "function", function: { name: "lookup", description: "d ".repeat(1500), parameters: { type: "object", properties: {} } } }];
    await send(r, history, "small-with-tools", { tools });
    expect(sentMessages(r, 1).length).toBeLessThan(history.length);
    await send(r, history, "small-with-reserve", { max_tokens: 1500 });
    expect(sentMessages(r, 2).length).toBeLessThan(history.length);
  });

  it("compacts a short body of remote images by what they cost, not by its bytes", async () => {
    // Twelve screenshots by URL: a body of 2 KB, a prompt of 12 x 765 tokens for a 3,000-token window.
    r = await rig({ config: SMALL });
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: "system", content: "You operate a browser." }, { role: "user", content: "Book a flight." }];
    for (let i = 0; i < 12; i++) {
      history.push({ role: "assistant", content: `step ${i}` });
      history.push({ role: "user", content: [{ type: "image_url", image_url: { url: `https://cdn.example.com/shot-${i}.png` } }] });
    }
    await send(r, history, "images");
    expect(sentMessages(r, 0).length).toBeLessThan(history.length);
  });

  it("does not take small remote images, billed below the size assumed for them, for a cut prompt", async () => {
    // Forty 256 x 256 thumbnails by URL: 255 tokens each as billed, 765 as assumed without their size.
    // A 40,000-token window: the prompt (about 31,000 tokens as estimated) is counted, and not compacted.
    r = await rig({ upstream: { promptTokens: (messages) => 40 * 255 + messages.length * 8 }, config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 40_000 }, reserveOutputTokens: 100 } } });
    const history: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: "Which of these are shoes?" }];
    for (let i = 0; i < 40; i++) history.push({ role: "user", content: [{ type: "text", text: `item ${i}` }, { type: "image_url", image_url: { url: `https://cdn.example.com/thumb-${i}.jpg` } }] });
    await send(r, history, "thumbs");
    await send(r, [...history, { role: "assistant", content: "items 3 and 7" }, { role: "user", content: "and boots?" }], "thumbs");
    const record = await stored(r.proxy.context.store, "thumbs");
    expect(record?.truncated).not.toBe(true);
    expect(record?.learnedLimit).toBeUndefined();
  });

  it("retries once after compacting on an upstream context-length error, never more", async () => {
    // The proxy believes the window is large; the upstream's is small.
    r = await rig({ upstream: { contextTokens: 2500 }, config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 } } } });
    const reply = await send(r, longConversation(30), "ctx-1");
    expect(reply.choices[0].message.content).toContain("final question a");
    expect(chatRequests(r)).toHaveLength(2);
    expect(sentMessages(r, 1).length).toBeLessThan(sentMessages(r, 0).length);
    expect(r.proxy.context.metrics.get("ptc_proxy_context_retries_total")).toBe(1);
    // The window it learned makes the next turn compact before sending: no error first.
    await send(r, [...longConversation(30), { role: "assistant", content: "ok" }, { role: "user", content: "more" }], "ctx-1");
    expect(chatRequests(r)).toHaveLength(3);
  });

  it("passes the context error on when even the compacted prompt does not fit", async () => {
    r = await rig({ upstream: { contextTokens: 20 }, config: { compaction: { contextLimits: { "fake-model": 1_000_000 } } } });
    const e = await send(r, longConversation(30), "ctx-2").catch((err: unknown) => err as { status?: number; code?: string });
    expect(e).toMatchObject({ status: 400, code: "context_length_exceeded" });
    expect(chatRequests(r)).toHaveLength(2);
  });

  it("sends the history as it is when the summary fails, flags the conversation, and opens the breaker", async () => {
    r = await rig({ upstream: { summary: () => "not json at all" }, config: { ...SMALL, compaction: { ...SMALL.compaction, strategy: { name: "usage-ratio", options: { maxFailures: 2, cooldown: 5 } } } } });
    const history = longConversation(30);
    for (let i = 0; i < 4; i++) {
      const reply = await send(r, history, "fails");
      expect(reply.choices[0].message.content).toContain("final question a");
      expect(sentMessages(r, i)).toHaveLength(history.length);
    }
    // Two failed compactions of two attempts each, then the breaker skips the summarizer.
    expect(r.upstream.summaryCalls).toBe(4);
    const record = await stored(r.proxy.context.store, "fails");
    expect(record?.flagged).toBe(true);
    expect(record?.lastError).toMatch(/summar/);
    expect(r.proxy.context.metrics.get("ptc_proxy_compactions_total", 'outcome="failed"')).toBe(2);
    expect(r.proxy.context.metrics.get("ptc_proxy_compactions_total", 'outcome="skipped"')).toBe(2);
  });

  it("backs off: each time the breaker reopens it stays open twice as long", async () => {
    r = await rig({ upstream: { summary: () => "" }, config: { ...SMALL, compaction: { ...SMALL.compaction, strategy: { name: "usage-ratio", options: { maxFailures: 1, cooldown: 1, maxAttempts: 1 } } } } });
    const history = longConversation(30);
    const calls: number[] = [];
    for (let i = 0; i < 7; i++) {
      await send(r, history, "backoff");
      calls.push(r.upstream.summaryCalls);
    }
    // Tries on requests 1, 3 and 6 (open for 1, then 2, then 4 requests); a fixed cooldown would try on 1, 3, 5, 7.
    expect(calls).toEqual([1, 1, 2, 2, 2, 3, 3]);
  });

  it("counts a prompt of megabytes that an upstream cut with turns of the event loop between its pieces", async () => {
    r = await rig({ upstream: { promptTokens: () => 400 }, config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 100_000_000 } } } });
    const loop = loopTurns();
    // From the reply's end (its time observed) to the record's write, the prompt is counted, the upstream having reported 400 tokens for 2 MB.
    const marks: number[] = [];
    const metrics = r.proxy.context.metrics;
    const observe = metrics.observe.bind(metrics);
    metrics.observe = (name, ms) => {
      if (name === "ptc_proxy_upstream_seconds") marks.push(loop.count());
      observe(name, ms);
    };
    const store = r.proxy.context.store;
    const put = store.put.bind(store);
    store.put = (...args) => {
      if (marks.length === 1) marks.push(loop.count());
      return put(...args);
    };
    try {
      const text = Array.from({ length: 200_000 }, (_, i) => `w${i} x`).join(" ");
      await send(r, [{ role: "user", content: text }], "cut-big");
    } finally {
      loop.stop();
    }
    expect((await stored(r.proxy.context.store, "cut-big"))?.truncated).toBe(true);
    // Before: 0, the whole prompt counted in one go.
    expect(marks[1] - marks[0]).toBeGreaterThanOrEqual(20);
  });

  it("detects an upstream that silently cuts the prompt and compacts to the window it really has", async () => {
    r = await rig({ upstream: { promptTokens: () => 400 }, config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 }, reserveOutputTokens: 100 } } });
    const history = longConversation(30);
    await send(r, history, "cut");
    const record = await stored(r.proxy.context.store, "cut");
    expect(record?.truncated).toBe(true);
    expect(record?.lastError).toContain("cut the prompt");
    expect(r.proxy.context.metrics.get("ptc_proxy_upstream_truncation_total")).toBe(1);
    await send(r, [...history, { role: "assistant", content: "ok" }, { role: "user", content: "and now?" }], "cut");
    expect(sentMessages(r, 1).length).toBeLessThan(history.length);
    expect(r.upstream.summaryCalls).toBe(1);
  });

  it("runs one compaction at a time per conversation; a request that arrives meanwhile keeps its new messages", async () => {
    r = await rig({ config: SMALL });
    const history = longConversation(30);
    const longer = [...history, { role: "assistant" as const, content: "reply" }, { role: "user" as const, content: "arrived during compaction" }];
    const [a, b] = await Promise.all([send(r, history, "one-at-a-time"), send(r, longer, "one-at-a-time")]);
    expect(a.choices[0].message.content).toContain("final question a");
    expect(b.choices[0].message.content).toContain("arrived during compaction");
    expect(r.upstream.summaryCalls).toBe(1);
    const forB = chatRequests(r).find((q) => JSON.stringify(q.body).includes("arrived during compaction"))?.body?.messages as Msg[];
    expect(forB.at(-1)?.content).toBe("arrived during compaction");
    expect(forB[2].content).toContain("[Summary of");
  });

  it("never mixes concurrent conversations, with explicit ids or by prefix", async () => {
    r = await rig({
      config: SMALL,
      upstream: { summary: (prompt) => JSON.stringify({ ConversationSummary: `Topics: ${[...new Set(prompt.match(/question [a-z]/g))].join(", ")}` }) },
    });
    const rig_ = r;
    const tags = ["b", "c", "d", "e", "f", "g"];
    const run = async (tag: string, i: number) => {
      const id = i % 2 === 0 ? `conv-${tag}` : undefined;
      let history = longConversation(30, 80, tag);
      for (let turn = 0; turn < 2; turn++) {
        const reply = await send(rig_, history, id);
        expect(reply.choices[0].message.content).toContain(`question ${tag}`);
        history = [...history, { role: "assistant", content: reply.choices[0].message.content ?? "" }, { role: "user", content: `next question ${tag}${turn}` }];
      }
    };
    await Promise.all(tags.map(run));
    for (const q of chatRequests(r)) {
      const text = JSON.stringify(q.body?.messages);
      const own = /TASK-([a-z])/.exec(text)?.[1];
      for (const other of tags.filter((t) => t !== own)) expect(text).not.toContain(`question ${other}`);
    }
    const status = await r.proxy.context.store.list();
    expect(status).toHaveLength(tags.length);
    expect(status.filter((c) => c.source === "prefix" || c.source === "new")).toHaveLength(3);
    expect(r.upstream.summaryCalls).toBe(tags.length);
  });

  /** Two 30-round histories sent alternately under one client-given id, `turns` requests each, through `clients` in turn. */
  async function alternate(clients: OpenAI[], turns: number, id: string): Promise<void> {
    const histories = [longConversation(30, 80, "a"), longConversation(30, 80, "b")];
    for (let i = 0; i < 2 * turns; i++) {
      const h = i % 2;
      const reply = await clients[Math.floor(i / 2) % clients.length].chat.completions.create({ model: "fake-model", messages: histories[h] }, { headers: { "x-conversation-id": id } });
      histories[h] = [...histories[h], { role: "assistant", content: reply.choices[0].message.content ?? "" }, { role: "user", content: `more ${h}-${i}` }];
    }
  }

  it("keeps apart two histories sent under one conversation id (an agent and its subagent): each keeps its own summary", async () => {
    r = await rig({ config: SMALL });
    await alternate([r.client], 5, "shared-session");
    // One summary per history, reused by its later requests: not one per request as each resets the other's.
    expect(r.upstream.summaryCalls).toBe(2);
    for (const q of chatRequests(r)) {
      const text = JSON.stringify(q.body?.messages);
      expect(text.includes("question a") && text.includes("question b")).toBe(false);
      expect(text).toContain("[Summary of");
    }
    const records = (await r.proxy.context.store.list()).filter((c) => c.conversation === "shared-session");
    expect(records).toHaveLength(2);
  });

  it("keeps apart two histories under one id with two proxies on one SQLite file", async () => {
    const dir = tempDir();
    const db = join(dir, "proxy.db");
    r = await rig({ config: SMALL, proxy: { db } });
    const other = await startProxy({ upstream: r.upstream.url, port: 0, logger: () => {}, wait: never, sleep: async () => {}, db, configFile: join(r.dir, "config.json") });
    try {
      const second = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: "sk-client-key", maxRetries: 0, timeout: 5000 });
      // Each proxy sees both histories in turn and serves the summary the other stored: one per history, as one proxy makes.
      await alternate([r.client, second], 6, "shared-session");
      expect(r.upstream.summaryCalls).toBe(2);
    } finally {
      await other.close();
    }
  });

  it("reuses the summary of a conversation stored under its bare id, as versions before heads kept it", async () => {
    r = await rig({ config: SMALL });
    const history = longConversation(30);
    await send(r, history, "upgraded");
    expect(r.upstream.summaryCalls).toBe(1);
    const old = await stored(r.proxy.context.store, "upgraded");
    const again = await rig({ config: SMALL });
    try {
      await again.proxy.context.store.put({ ...(old as ConversationRecord), id: key("upgraded") });
      await send(again, [...history, { role: "assistant", content: "ok" }, { role: "user", content: "go on" }], "upgraded");
      expect(again.upstream.summaryCalls).toBe(0);
      expect(sentMessages(again, 0)[2].content).toContain("[Summary of");
    } finally {
      await again.close();
    }
  });

  it("compacts a conversation with custom (freeform) tool calls, and counts it when no usage comes back", async () => {
    r = await rig({ config: SMALL });
    // OpenAI's custom tools: a call carries `custom` (name, input), no `function`.
    const custom = (i: number) => [
      { role: "assistant", content: null, tool_calls: [{ id: `call_${i}`, type: "custom", custom: { name: "apply_patch", input: `*** patch ${i} ***` } }] },
      { role: "tool", tool_call_id: `call_${i}`, content: `applied ${i}` },
    ];
    const history = [...longConversation(30).slice(0, -1), ...custom(1), ...custom(2), { role: "user", content: "final question a" }] as OpenAI.ChatCompletionMessageParam[];
    await send(r, history, "custom-tools");
    expect(sentMessages(r, 0)[2].content).toContain("[Summary of");
    expect(JSON.stringify(sentMessages(r, 0))).toContain('"custom":{"name":"apply_patch","input":"*** patch 2 ***"}');
    expect(r.logs.filter((l) => l.event === "compaction_error")).toEqual([]);
    // Streamed with no usage chunk: the prompt is counted locally after the reply, and the stream ends whole.
    const stream = await r.client.chat.completions.create({ model: "fake-model", messages: history, stream: true, stream_options: { include_usage: false } }, { headers: { "x-conversation-id": "custom-tools" } });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toContain("final question a");
    expect(r.logs.filter((l) => l.event === "internal_error" || l.event === "store_error")).toEqual([]);
  });

  it("tells apart conversations that share their opening, without ids", async () => {
    r = await rig();
    const opening: OpenAI.ChatCompletionMessageParam[] = [{ role: "system", content: "s" }, { role: "user", content: "hello" }];
    const first = await r.client.chat.completions.create({ model: "fake-model", messages: opening }).withResponse();
    const second = await r.client.chat.completions.create({ model: "fake-model", messages: opening }).withResponse();
    const idA = first.response.headers.get("x-ptc-conversation-id");
    expect(second.response.headers.get("x-ptc-conversation-id")).toBe(idA);
    const a = await r.client.chat.completions.create({ model: "fake-model", messages: [...opening, { role: "assistant", content: "A" }, { role: "user", content: "a?" }] }).withResponse();
    const b = await r.client.chat.completions.create({ model: "fake-model", messages: [...opening, { role: "assistant", content: "B" }, { role: "user", content: "b?" }] }).withResponse();
    expect(a.response.headers.get("x-ptc-conversation-id")).toBe(idA);
    const idB = b.response.headers.get("x-ptc-conversation-id");
    expect(idB).not.toBe(idA);
    // Each continues its own line from now on.
    const a2 = await r.client.chat.completions.create({ model: "fake-model", messages: [...opening, { role: "assistant", content: "A" }, { role: "user", content: "a?" }, { role: "assistant", content: "x" }, { role: "user", content: "y" }] }).withResponse();
    const b2 = await r.client.chat.completions.create({ model: "fake-model", messages: [...opening, { role: "assistant", content: "B" }, { role: "user", content: "b?" }, { role: "assistant", content: "x" }, { role: "user", content: "y" }] }).withResponse();
    expect(a2.response.headers.get("x-ptc-conversation-id")).toBe(idA);
    expect(b2.response.headers.get("x-ptc-conversation-id")).toBe(idB);
  });

  it("forks an edited turn from the conversation with its summary, and keeps the prefix index bounded", async () => {
    r = await rig({ config: SMALL });
    let history = longConversation(30);
    const first = await r.client.chat.completions.create({ model: "fake-model", messages: history }).withResponse();
    const id = first.response.headers.get("x-ptc-conversation-id");
    expect(r.upstream.summaryCalls).toBe(1);
    for (let i = 0; i < 20; i++) {
      history = [...history, { role: "assistant", content: `ok ${i}` }, { role: "user", content: `more ${i}` }];
      const next = await r.client.chat.completions.create({ model: "fake-model", messages: history }).withResponse();
      expect(next.response.headers.get("x-ptc-conversation-id")).toBe(id);
    }
    const record = await r.proxy.context.store.get(key(id ?? ""));
    expect(record?.indexed).toHaveLength(16);
    expect(await r.proxy.context.store.longestPrefix([prefixHashes(longConversation(30) as ChatMessage[], tenantOf("sk-client-key")).at(-1) ?? ""])).toBeUndefined();
    // The user edits the last question: a new conversation, which starts from the stored summary.
    const edited = [...history.slice(0, -1), { role: "user" as const, content: "more 19, edited" }];
    const fork = await r.client.chat.completions.create({ model: "fake-model", messages: edited }).withResponse();
    expect(fork.response.headers.get("x-ptc-conversation-id")).not.toBe(id);
    expect(fork.response.headers.get("x-ptc-conversation-source")).toBe("prefix");
    expect(r.upstream.summaryCalls).toBe(1);
    expect((chatRequests(r).at(-1)?.body?.messages as Msg[])[2].content).toContain("[Summary of");
  });

  it("lets short requests through without building a strategy for each conversation's window", async () => {
    // Five models, five windows: a strategy built per window would be five (and a cache of them churned by many conversations).
    const limits = Object.fromEntries([1, 2, 3, 4, 5].map((i) => [`model-${i}`, 3000 + i * 100]));
    r = await rig({ config: { ...SMALL, compaction: { ...SMALL.compaction, contextLimits: limits } } });
    const create = vi.spyOn(defaultStrategies, "create");
    try {
      for (let i = 1; i <= 5; i++) await send(r, [{ role: "user", content: "hi" }], `short-${i}`, { model: `model-${i}` });
      expect(create.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      create.mockRestore();
    }
    expect(r.upstream.summaryCalls).toBe(0);
  });

  it("compacts a request that has no conversation (prefix matching off) and keeps nothing of it", async () => {
    r = await rig({ config: { ...SMALL, identity: { prefixMatch: false } } });
    const { response } = await r.client.chat.completions.create({ model: "fake-model", messages: longConversation(30) }).withResponse();
    expect(response.headers.get("x-ptc-conversation-source")).toBe("none");
    expect(sentMessages(r, 0)[2].content).toContain("[Summary of");
    expect(await r.proxy.context.store.count()).toBe(0);
    // Nor in the prefix index, where nothing would ever expire it.
    expect(await r.proxy.context.store.longestPrefix(prefixHashes(longConversation(30) as ChatMessage[], tenantOf("sk-client-key")))).toBeUndefined();
  });
});

describe("cost-trigger with a configured summarizer model", () => {
  // The strategy weighs the summary call against what it saves: it priced the call at the request's
  // model, never hearing of compaction.summarizer.model. A summary by claude-opus-4-1 of a
  // gpt-4o-mini conversation was made as if it cost gpt-4o-mini's prices.
  it.each([
    ["claude-opus-4-1", 0],
    ["gpt-4o-mini", 1],
    // A model no price table knows (a local one) is priced as the request's, as before, not at the mid-range fallback.
    ["qwen2.5:7b", 1],
  ])("prices the summary call at the summarizer's model (%s: %i summary calls)", async (model, calls) => {
    r = await rig({ config: { compaction: { strategy: { name: "cost-trigger", options: { remainingTurns: 4 } }, summarizer: { model } } } });
    await r.client.chat.completions.create({ model: "gpt-4o-mini", messages: longConversation(30) }, { headers: { "x-conversation-id": "priced" } });
    expect(r.upstream.summaryCalls).toBe(calls);
  });
});
