// Tenants kept apart: a conversation id is scoped by the caller's credential, so client B naming
// client A's id (or resending A's messages) starts its own conversation and cannot read, change
// or reset A's state; summaries go out with the configured key or the conversation's own
// tenant's key; virtual keys carry their own upstream key, token budget and request rate.
import { createServer, request, type IncomingHttpHeaders, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import zlib, { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from "node:zlib";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { countTokens } from "../../src/compaction/tokens.js";
import { LlmError } from "../../src/llm/errors.js";
import { openaiLlm } from "../../src/llm/openai.js";
import { startProxy, type RunningProxy } from "../../src/proxy/index.js";
import { clientPromptTokens } from "../../src/proxy/request.js";
import { hashKey, KeyMasker } from "../../src/proxy/tenancy.js";
import { defaultPromptTokens, startFakeUpstream, type FakeUpstream } from "../support/fake-openai.js";
import { longConversation, never, rig, startSummarizer, stored, tempDir, type Rig } from "./setup.js";
import { loopTurns } from "../support/loop-turns.js";

let r: Rig | undefined;
let fallback: FakeUpstream | undefined;
afterEach(async () => {
  await r?.close();
  await fallback?.close();
  r = undefined;
  fallback = undefined;
});

const SMALL = { compaction: { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } };
type Msg = { role: string; content: string | null };
const isSummary = (q: { body?: Record<string, unknown> }) => JSON.stringify(q.body).includes("ConversationSummary");
/** Asks the proxy (admin token "adm") to compact `conversation` now: its report. */
async function compactReport(x: Rig, conversation: string): Promise<{ compacted: boolean; events: { kind: string; detail?: string }[] }> {
  const res = await fetch(`${x.proxy.url}/ext/context_compaction/compact`, { method: "POST", headers: { authorization: "Bearer adm", "content-type": "application/json" }, body: JSON.stringify({ conversation }) });
  expect(res.status).toBe(200);
  return (await res.json()) as { compacted: boolean; events: { kind: string; detail?: string }[] };
}
/** Whether the upstream's reply (its headers) has reached the proxy since this was called. */
function whenAnswered(x: Rig): () => boolean {
  const upstream = x.proxy.context.upstream;
  const send = upstream.send.bind(upstream);
  let answered = false;
  upstream.send = async (...args) => {
    const result = await send(...args);
    answered = result.ok;
    return result;
  };
  return () => answered;
}
const client = (x: Rig, apiKey: string) => new OpenAI({ baseURL: `${x.proxy.url}/v1`, apiKey, maxRetries: 0, timeout: 5000 });
const ask = (c: OpenAI, messages: OpenAI.ChatCompletionMessageParam[], id?: string, extra: Partial<OpenAI.ChatCompletionCreateParamsNonStreaming> = {}) =>
  c.chat.completions.create({ model: "fake-model", messages, ...extra }, id === undefined ? {} : { headers: { "x-conversation-id": id } }).withResponse();

describe("proxy tenancy", () => {
  it("keeps another key's request under the same conversation id out of the first one's state", async () => {
    r = await rig({ upstream: { contextTokens: 2500 }, config: SMALL });
    const a = client(r, "sk-tenant-a");
    const b = client(r, "sk-tenant-b");
    const history = longConversation(30);
    await ask(a, history, "shared");
    const before = structuredClone(await stored(r.proxy.context.store, "shared", "sk-tenant-a"));
    const keyA = before?.id ?? "";
    expect(before?.compactions).toBe(1);
    const summaries = r.upstream.summaryCalls;

    // B uses A's id with a short conversation: it gets its own, with none of A's summary in it.
    const small = await ask(b, [{ role: "user", content: "hello from b" }], "shared");
    expect(small.response.headers.get("x-ptc-conversation-id")).toBe("shared");
    const sentB = r.upstream.requests.filter((q) => !isSummary(q)).at(-1)?.body?.messages as Msg[];
    expect(sentB).toEqual([{ role: "user", content: "hello from b" }]);
    // B overflows the upstream under A's id: B's record learns, A's does not.
    await ask(b, longConversation(40, 80, "b"), "shared");
    const after = await r.proxy.context.store.get(keyA);
    expect(after?.learnedLimit).toBe(before?.learnedLimit);
    expect(after?.messageCount).toBe(before?.messageCount);
    expect(after?.state).toEqual(before?.state);
    expect(after?.compactions).toBe(1);
    expect((await stored(r.proxy.context.store, "shared", "sk-tenant-b"))?.messageCount).toBe(longConversation(40, 80, "b").length);

    // A continues with its stored summary: no new summary call on A's behalf.
    const calls = r.upstream.summaryCalls;
    await ask(a, [...history, { role: "assistant", content: "ok" }, { role: "user", content: "go on" }], "shared");
    expect(r.upstream.summaryCalls).toBe(calls);
    expect((r.upstream.requests.filter((q) => !isSummary(q)).at(-1)?.body?.messages as Msg[])[2].content).toContain("[Summary of");
    // Every summary call went out with the key of the tenant whose conversation it summarized.
    const summaryKeys = r.upstream.requests.filter(isSummary).map((q) => q.headers.authorization);
    expect(summaryKeys.slice(0, summaries)).toEqual(Array(summaries).fill("Bearer sk-tenant-a"));
    expect(summaryKeys.slice(summaries).every((k) => k === "Bearer sk-tenant-b")).toBe(true);
  });

  it("never matches another tenant's conversation by prefix", async () => {
    r = await rig({ config: SMALL });
    const a = client(r, "sk-tenant-a");
    const b = client(r, "sk-tenant-b");
    const history = longConversation(30);
    const first = await ask(a, history);
    const idA = first.response.headers.get("x-ptc-conversation-id");
    const follow = [...history, { role: "assistant" as const, content: "ok" }, { role: "user" as const, content: "next" }];
    const same = await ask(a, follow);
    expect(same.response.headers.get("x-ptc-conversation-id")).toBe(idA);
    expect(same.response.headers.get("x-ptc-conversation-source")).toBe("prefix");
    // B sends A's very messages: a new conversation of B's, summarized with B's key, not A's summary reused.
    const calls = r.upstream.summaryCalls;
    const other = await ask(b, follow);
    expect(other.response.headers.get("x-ptc-conversation-id")).not.toBe(idA);
    expect(other.response.headers.get("x-ptc-conversation-source")).toBe("new");
    expect(r.upstream.summaryCalls).toBe(calls + 1);
    expect(r.upstream.requests.filter(isSummary).at(-1)?.headers.authorization).toBe("Bearer sk-tenant-b");
  });

  it("sends summary calls with the configured summarizer key when there is one", async () => {
    r = await rig({ config: { compaction: { ...SMALL.compaction, summarizer: { apiKey: "sk-summarizer" } } } });
    await ask(client(r, "sk-tenant-a"), longConversation(30), "s");
    const call = r.upstream.requests.find(isSummary);
    expect(call?.headers.authorization).toBe("Bearer sk-summarizer");
  });

  it("charges a virtual key for a stream it leaves before the usage chunk", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { leaver: { keyHash: hashKey("ptc-vk-leaver"), tokenBudget: 1_000_000 } } } } });
    const gone = new AbortController();
    const stream = await client(r, "ptc-vk-leaver").chat.completions.create(
      { model: "fake-model", messages: longConversation(5), stream: true },
      { headers: { "x-fake-mode": "hold" }, signal: gone.signal },
    );
    // Take the first chunk, then leave: the usage chunk, at the end, never comes.
    for await (const _ of stream) break;
    gone.abort();
    await expect.poll(() => r?.upstream.abandoned, { timeout: 5000 }).toBe(1);
    await expect.poll(() => r?.proxy.context.tenants.spentBy("leaver"), { timeout: 5000 }).toBeGreaterThan(0);
  });

  it("charges a virtual key for a request it leaves while the upstream works on it, before any reply", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { quitter: { keyHash: hashKey("ptc-vk-quitter"), tokenBudget: 1_000_000 } } } } });
    const gone = new AbortController();
    const asked = client(r, "ptc-vk-quitter")
      .chat.completions.create({ model: "fake-model", messages: longConversation(5) }, { headers: { "x-fake-mode": "hold" }, signal: gone.signal })
      .catch((e: unknown) => e);
    // The upstream has the whole prompt (and bills it) when the client leaves.
    await expect.poll(() => r?.upstream.held, { timeout: 5000 }).toBe(1);
    gone.abort();
    await asked;
    await expect.poll(() => r?.upstream.abandoned, { timeout: 5000 }).toBe(1);
    // Before: 0, so a client leaving each request before its reply spent the upstream's tokens past any budget.
    await expect.poll(() => r?.proxy.context.tenants.spentBy("quitter"), { timeout: 5000 }).toBeGreaterThan(0);
  });

  it("charges a virtual key for a request the upstream had whole but never answered in time (504), on the chat path and forwarded ones", async () => {
    // A short upstream timeout against an upstream that never answers: the 504 comes whatever the machine's load.
    r = await rig({ config: { upstreamTimeoutMs: 300, tenancy: { virtualKeys: { slow: { keyHash: hashKey("ptc-vk-slow"), tokenBudget: 1_000_000 } } } } });
    const headers = { authorization: "Bearer ptc-vk-slow", "content-type": "application/json" };
    // Too short to compact: no summary call is charged.
    const chat = JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "a prompt ".repeat(100) }] });
    // The spend is settled before the 504 is sent (the store counts in memory, at once).
    const spent = async (path: string, mode: string, body: string) => {
      const res = await fetch(`${r?.proxy.url}/v1/${path}`, { method: "POST", headers: { ...headers, "x-fake-mode": mode }, body });
      expect(res.status).toBe(504);
      await res.text();
      return r?.proxy.context.tenants.spentBy("slow");
    };
    // Before: 0 each time, the reservation given back, though the upstream may have worked on (and billed) the prompt.
    const afterChat = (await spent("chat/completions", "hang", chat)) ?? 0;
    expect(afterChat).toBeGreaterThan(0);
    // Headers, then nothing: the upstream answered, so it had the prompt.
    const afterMidway = (await spent("chat/completions", "json-headers-then-hang", chat)) ?? 0;
    expect(afterMidway).toBeGreaterThan(afterChat);
    expect(await spent("embeddings", "hang", JSON.stringify({ model: "fake-embed", input: "a passage ".repeat(100) }))).toBeGreaterThan(afterMidway);
  });

  it("charges a virtual key for a 200 reply that is not JSON (502 upstream_malformed): the upstream answered, so it had the prompt", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { garbled: { keyHash: hashKey("ptc-vk-garbled"), tokenBudget: 1_000_000 } } } } });
    const res = await fetch(`${r.proxy.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: "Bearer ptc-vk-garbled", "content-type": "application/json", "x-fake-mode": "malformed" },
      body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "a prompt ".repeat(100) }] }),
    });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("upstream_malformed");
    // Before: 0, the reservation given back.
    await expect.poll(() => r?.proxy.context.tenants.spentBy("garbled")).toBe(clientPromptTokens([{ role: "user", content: "a prompt ".repeat(100) }], undefined));
  });

  it("charges a virtual key for a whole (not streamed) reply it leaves after the upstream's headers, before its body", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { midway: { keyHash: hashKey("ptc-vk-midway"), tokenBudget: 1_000_000 } } } } });
    // Told when the upstream's reply (its headers) reached the proxy.
    const answered = whenAnswered(r);
    const gone = new AbortController();
    // The fake sends its headers and a first piece, then nothing more.
    const asked = client(r, "ptc-vk-midway")
      .chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "a prompt ".repeat(100) }] }, { headers: { "x-fake-mode": "headers-then-hang" }, signal: gone.signal })
      .catch((e: unknown) => e);
    await expect.poll(answered, { timeout: 5000 }).toBe(true);
    gone.abort();
    await asked;
    await expect.poll(() => r?.upstream.abandoned, { timeout: 5000 }).toBe(1);
    // The request is over once its conversation is written (the reservation is settled just before).
    await expect.poll(async () => (await r?.proxy.context.store.list())?.some((c) => c.messageCount > 0), { timeout: 5000 }).toBe(true);
    // Before: 0 (its reservation given back), as if the upstream never had the prompt.
    expect(await r.proxy.context.tenants.spentBy("midway")).toBeGreaterThan(0);
  });

  it("answers a virtual key's requests, streamed or not, when its spend cannot be written (a full disk), and keeps serving", async () => {
    const db = join(tempDir(), "proxy.db");
    r = await rig({ proxy: { db }, config: { tenancy: { virtualKeys: { full: { keyHash: hashKey("ptc-vk-full"), tokenBudget: 1_000_000 } } } } });
    const other = new Database(db);
    other.exec("DROP TABLE spend");
    other.close();
    const c = client(r, "ptc-vk-full");
    const plain = await ask(c, [{ role: "user", content: "hello" }]);
    expect(plain.data.choices[0].message.content).toContain("hello");
    const stream = await c.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "streamed" }], stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
    expect(text).toContain("streamed");
    expect((await fetch(`${r.proxy.url}/healthz`)).status).toBe(200);
    expect(r.logs.filter((l) => l.event === "store_error").length).toBeGreaterThanOrEqual(2);
  });

  it("gives a virtual key its own upstream key, request rate and token budget", async () => {
    let now = 1_000_000;
    const key = "ptc-vk-team-one-secret";
    r = await rig({
      proxy: { now: () => now, adminToken: "admin" },
      config: { tenancy: { virtualKeys: { team1: { keyHash: hashKey(key), upstreamKey: "sk-upstream-team1", requestsPerMinute: 2 }, small: { keyHash: hashKey("ptc-vk-small"), tokenBudget: 50 } } } },
    });
    const vk = client(r, key);
    await ask(vk, [{ role: "user", content: "one" }]);
    expect(r.upstream.requests.at(-1)?.headers.authorization).toBe("Bearer sk-upstream-team1");
    expect(JSON.stringify(r.upstream.requests.map((q) => q.headers))).not.toContain(key);
    await vk.models.list();
    // The third request inside a minute is refused with a retry-after, before reaching the upstream.
    const seen = r.upstream.requests.length;
    const e = (await ask(vk, [{ role: "user", content: "three" }]).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(e).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number(e.headers?.get("retry-after"))).toBeGreaterThan(0);
    expect(r.upstream.requests.length).toBe(seen);
    now += 30_000;
    await ask(vk, [{ role: "user", content: "after a while" }]);

    // A budget of 50 tokens: the first reply spends them, the next request is refused.
    const small = client(r, "ptc-vk-small");
    await ask(small, longConversation(2));
    const over = (await ask(small, [{ role: "user", content: "more" }]).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(over.status).toBe(429);
    expect(over.message).toContain("budget");
    // An unknown virtual key is refused; the virtual key's secrets never show in config or metrics.
    const bad = (await ask(client(r, "ptc-vk-made-up"), [{ role: "user", content: "x" }]).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
    expect(bad.status).toBe(401);
    const config = await (await fetch(`${r.proxy.url}/ext/context_compaction/config`, { headers: { authorization: "Bearer admin" } })).text();
    expect(config).not.toContain("sk-upstream-team1");
    const metrics = await (await fetch(`${r.proxy.url}/metrics`)).text();
    expect(metrics).toMatch(/ptc_proxy_tenant_tokens_total\{tenant="vk-team1",kind="prompt"\} \d+/);
    expect(metrics).not.toContain("sk-");
  });

  it("tells clients not to retry a used-up budget (x-should-retry: false), which no wait restores: the SDKs and ptc's own client send it once", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { spent: { keyHash: hashKey("ptc-vk-spent"), tokenBudget: 50 } } } } });
    await ask(client(r, "ptc-vk-spent"), longConversation(2));
    let sent = 0;
    const counting: typeof fetch = (...args) => {
      sent++;
      return fetch(...args);
    };
    // As an app has it: the SDK's default retries.
    const sdk = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: "ptc-vk-spent", maxRetries: 2, timeout: 5000, fetch: counting });
    for (const call of [() => ask(sdk, [{ role: "user", content: "more" }]), () => sdk.embeddings.create({ model: "fake-embed", input: "a passage" })]) {
      sent = 0;
      const e = (await call().catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
      expect(e.status).toBe(429);
      expect((e.error as { code?: string }).code).toBe("budget_exceeded");
      expect(e.headers?.get("x-should-retry")).toBe("false");
      // Before: 3 requests (and 2 back-off waits) for the one refusal.
      expect(sent).toBe(1);
    }
    // ptc's own client (an agent run through the proxy) does not retry it either.
    const refused = () => (r as Rig).proxy.context.metrics.get("ptc_proxy_requests_total", 'route="rejected",status="4xx"');
    const before = refused();
    const retried: number[] = [];
    const llm = openaiLlm({ model: "fake-model", baseURL: `${r.proxy.url}/v1`, apiKey: "ptc-vk-spent", env: {}, maxRetries: 2, retryBaseMs: 1, onRetry: (i) => void retried.push(i.attempt) });
    const failure = (await llm.complete({ messages: [{ role: "user", content: "more" }] }).catch((err: unknown) => err)) as LlmError;
    expect(failure).toBeInstanceOf(LlmError);
    expect(failure.kind).toBe("http");
    expect(retried).toEqual([]);
    await expect.poll(refused).toBe(before + 1);
  });

  it("refuses a virtual key's request until a whole one has refilled, and asks for the wait rounded up", async () => {
    let now = 10_000_000;
    r = await rig({ proxy: { now: () => now }, config: { tenancy: { virtualKeys: { paced: { keyHash: hashKey("ptc-vk-paced"), requestsPerMinute: 2 } } } } });
    const vk = client(r, "ptc-vk-paced");
    const answer = () =>
      vk.models
        .list()
        .then(() => "ok")
        .catch((e: unknown) => `${(e as InstanceType<typeof OpenAI.APIError>).status} retry-after ${(e as InstanceType<typeof OpenAI.APIError>).headers?.get("retry-after")}`);
    expect([await answer(), await answer(), await answer()]).toEqual(["ok", "ok", "429 retry-after 30"]);
    // 15.5 s later 0.52 of a request has refilled (one every 30 s): the rest comes in 14.5 s.
    now += 15_500;
    expect(await answer()).toBe("429 retry-after 15");
    now += 14_500;
    expect(await answer()).toBe("ok");
  });

  it("refuses a virtual key whose spend has reached its budget exactly", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { exact: { keyHash: hashKey("ptc-vk-exact"), tokenBudget: 50 } } } } });
    await r.proxy.context.store.addSpend("exact", 50);
    const refused = await client(r, "ptc-vk-exact")
      .models.list()
      .then(() => "ok")
      .catch((e: unknown) => `${(e as InstanceType<typeof OpenAI.APIError>).status} ${(e as InstanceType<typeof OpenAI.APIError>).code}`);
    expect(refused).toBe("429 budget_exceeded");
  });

  it("keeps a virtual key's request rate when the clock steps back (an NTP correction)", async () => {
    let now = 10_000_000;
    r = await rig({ proxy: { now: () => now }, config: { tenancy: { virtualKeys: { steady: { keyHash: hashKey("ptc-vk-steady"), requestsPerMinute: 60 } } } } });
    const vk = client(r, "ptc-vk-steady");
    await vk.models.list();
    now -= 3_600_000;
    // Before: 429 rate_limited with retry-after 3542 (the hour back taken as 3,600 requests made),
    // and every request refused for that hour.
    const after = await vk.models
      .list()
      .then(() => "ok")
      .catch((e: unknown) => `${(e as InstanceType<typeof OpenAI.APIError>).status} retry-after ${(e as InstanceType<typeof OpenAI.APIError>).headers?.get("retry-after")}`);
    expect(after).toBe("ok");
  });

  it("holds a virtual key's budget against requests sent together: each reserves its prompt before it goes upstream", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { burst: { keyHash: hashKey("ptc-vk-burst"), tokenBudget: 1000 } } } } });
    const c = client(r, "ptc-vk-burst");
    // About 400 tokens each by the local count, which is what a request reserves: a budget of 1000 lets three go.
    const prompt = "x ".repeat(400);
    expect(clientPromptTokens([{ role: "user", content: `0: ${prompt}` }], undefined)).toBeGreaterThan(334);
    expect(clientPromptTokens([{ role: "user", content: `0: ${prompt}` }], undefined)).toBeLessThan(500);
    const statuses: number[] = [];
    let reported = 0;
    const asks = Array.from({ length: 6 }, (_, i) =>
      c.chat.completions
        .create({ model: "fake-model", messages: [{ role: "user", content: `${i}: ${prompt}` }] }, { headers: { "x-fake-mode": "hold", "x-conversation-id": `burst-${i}` } })
        .then(
          (reply) => {
            statuses.push(200);
            reported += reply.usage?.total_tokens ?? 0;
          },
          (e: unknown) => statuses.push((e as InstanceType<typeof OpenAI.APIError>).status ?? 0),
        ),
    );
    // Every request is either held by the upstream or already refused: nothing has been charged yet.
    await expect.poll(() => (r?.upstream.held ?? 0) + statuses.length, { timeout: 5000 }).toBe(6);
    // Before: all 6 passed the check (nothing spent yet) and reached the upstream, spending 2.6x the budget.
    expect(r.upstream.held).toBe(3);
    r.upstream.release();
    await Promise.all(asks);
    expect(statuses.sort()).toEqual([200, 200, 200, 429, 429, 429]);
    // Each reservation settled to what the upstream reported; the refused ones reserved nothing.
    expect(reported).toBeGreaterThan(0);
    expect(await r.proxy.context.tenants.spentBy("burst")).toBe(reported);
  });

  it("holds a virtual key's budget against requests forwarded untouched sent together (embeddings): each reserves its body, counted, before it goes upstream", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { rag: { keyHash: hashKey("ptc-vk-rag"), tokenBudget: 1000 } } } } });
    // The fake's /v1/echo answers the body it got: an embeddings reply reporting 7 tokens, about 400 by the local count.
    const body = JSON.stringify({ model: "fake-model", input: "x ".repeat(400), usage: { prompt_tokens: 7, total_tokens: 7 } });
    const statuses: number[] = [];
    const asks = Array.from({ length: 6 }, () =>
      fetch(`${r?.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-rag", "content-type": "application/json", "x-fake-mode": "hold" }, body }).then(async (res) => {
        await res.arrayBuffer();
        statuses.push(res.status);
      }),
    );
    await expect.poll(() => (r?.upstream.held ?? 0) + statuses.length, { timeout: 5000 }).toBe(6);
    // Before: all 6 passed the check on arrival (nothing spent yet) and reached the upstream.
    expect(r.upstream.held).toBe(3);
    r.upstream.release();
    await Promise.all(asks);
    expect(statuses.sort()).toEqual([200, 200, 200, 429, 429, 429]);
    // Each reservation settled to what the upstream reported.
    await expect.poll(() => r?.proxy.context.tenants.spentBy("rag")).toBe(21);
    // A reply the upstream refuses gives its reservation back; one the client leaves while the upstream has it keeps it.
    expect((await fetch(`${r.proxy.url}/v1/embeddings`, { method: "POST", headers: { authorization: "Bearer ptc-vk-rag", "content-type": "application/json", "x-fake-mode": "html500" }, body })).status).toBe(500);
    expect(await r.proxy.context.tenants.spentBy("rag")).toBe(21);
    const gone = new AbortController();
    const left = fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-rag", "content-type": "application/json", "x-fake-mode": "hold" }, body, signal: gone.signal }).catch(() => undefined);
    await expect.poll(() => r?.upstream.held).toBe(1);
    gone.abort();
    await left;
    await expect.poll(() => r?.upstream.abandoned).toBe(1);
    await expect.poll(() => r?.proxy.context.tenants.spentBy("rag")).toBeGreaterThan(21 + 300);
    const kept = await r.proxy.context.tenants.spentBy("rag");
    // And one it leaves after the reply's headers, before its end: the upstream had it whole.
    const answered = whenAnswered(r);
    // Told when the request's reservation is settled, as it ends.
    const tenants = r.proxy.context.tenants;
    const charge = tenants.charge.bind(tenants);
    let settled = 0;
    tenants.charge = (...args) => {
      settled++;
      return charge(...args);
    };
    const midway = new AbortController();
    const cut = fetch(`${r.proxy.url}/v1/embeddings`, { method: "POST", headers: { authorization: "Bearer ptc-vk-rag", "content-type": "application/json", "x-fake-mode": "json-headers-then-hang" }, body, signal: midway.signal })
      .then((res) => res.text())
      .catch(() => undefined);
    await expect.poll(answered).toBe(true);
    midway.abort();
    await cut;
    await expect.poll(() => settled).toBe(1);
    // Before: its reservation was given back.
    expect(await tenants.spentBy("rag")).toBeGreaterThan(kept + 300);
  });

  it("counts a prompt of megabytes with turns of the event loop between its pieces: a budgeted key's reservation on the chat, messages and responses routes, and the count before a compaction", async () => {
    // Distinct words, about 2 MB: some 30 pieces of 64 K characters.
    const text = (tag: string) => Array.from({ length: 200_000 }, (_, i) => `${tag}${i} x`).join(" ");
    const loop = loopTurns();
    /** Turns of the event loop between the first call of the store's `from` and the next call of its `to`. */
    const between = (from: string, to: string) => {
      const store = r?.proxy.context.store as unknown as Record<string, (...args: unknown[]) => unknown>;
      const marks = { from: -1, to: -1 };
      for (const [name, mark] of [[from, "from"], [to, "to"]] as const) {
        const real = store[name].bind(store);
        store[name] = (...args: unknown[]) => {
          if (marks[mark] === -1 && (mark === "from" || marks.from !== -1)) marks[mark] = loop.count();
          return real(...args);
        };
      }
      return () => {
        const n = marks.to - marks.from;
        marks.from = marks.to = -1;
        return n;
      };
    };
    try {
      r = await rig({ config: { compaction: { enabled: false }, tenancy: { virtualKeys: { big: { keyHash: hashKey("ptc-vk-big"), tokenBudget: 1e12 } } } } });
      // From the budget check on arrival (the spend read) to the reservation, the prompt is counted.
      const counted = between("spent", "reserve");
      const bodies: Record<string, unknown> = {
        "chat/completions": { model: "fake-model", messages: [{ role: "user", content: text("c") }] },
        messages: { model: "fake-model", max_tokens: 10, messages: [{ role: "user", content: text("m") }] },
        responses: { model: "fake-model", input: [{ role: "user", content: text("r") }] },
      };
      const seen: Record<string, boolean> = {};
      for (const [path, body] of Object.entries(bodies)) {
        const res = await fetch(`${r.proxy.url}/v1/${path}`, { method: "POST", headers: { authorization: "Bearer ptc-vk-big", "content-type": "application/json" }, body: JSON.stringify(body) });
        await res.arrayBuffer();
        expect(res.status).toBe(200);
        seen[path] = counted() >= 20;
      }
      // Before: 0 turns on each, the whole prompt counted in one go.
      expect(seen).toEqual({ "chat/completions": true, messages: true, responses: true });
      await r.close();
      // A compaction counts the messages too: from the conversation's lookup to the compaction's lock.
      r = await rig();
      const compacted = between("get", "locked");
      await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: text("k") }] }, { headers: { "x-conversation-id": "huge" } });
      expect(compacted()).toBeGreaterThanOrEqual(20);
    } finally {
      loop.stop();
    }
  });

  it("reserves a Responses request's input against the budget when it is not compacted: a string input, or one continuing a stored response", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { resp: { keyHash: hashKey("ptc-vk-resp"), tokenBudget: 1_000_000 } } } } });
    const store = r.proxy.context.store as unknown as Record<string, (...args: unknown[]) => unknown>;
    const reserved: number[] = [];
    const reserve = store.reserve.bind(store);
    store.reserve = (name: unknown, tokens: unknown, budget: unknown) => {
      reserved.push(tokens as number);
      return reserve(name, tokens, budget);
    };
    const input = "a long question about the billing service ".repeat(100);
    const bodies = [
      { model: "fake-model", input },
      { model: "fake-model", input: [{ role: "user", content: input }], previous_response_id: "resp_0" },
      { model: "fake-model", input: [{ role: "user", content: input }] },
    ];
    for (const body of bodies) {
      const res = await fetch(`${r.proxy.url}/v1/responses`, { method: "POST", headers: { authorization: "Bearer ptc-vk-resp", "content-type": "application/json" }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // Before: 3 tokens for the first two (an empty prompt), so requests sent together passed the budget whatever their input.
    const least = countTokens(input);
    expect(reserved.map((n) => n > least)).toEqual([true, true, true]);
  });

  it("charges a virtual key for the summary calls made compacting its conversations", async () => {
    r = await rig({ config: { ...SMALL, tenancy: { virtualKeys: { summed: { keyHash: hashKey("ptc-vk-summed"), tokenBudget: 1_000_000 } } } } });
    const reply = await ask(client(r, "ptc-vk-summed"), longConversation(30), "sum");
    const summaries = r.upstream.requests.filter(isSummary);
    expect(summaries.length).toBeGreaterThan(0);
    // The fake reports a prompt of 4 characters a token, and at least one token of reply.
    const summaryTokens = summaries.reduce((n, q) => n + defaultPromptTokens(q.body?.messages as unknown[]) + 1, 0);
    const chat = reply.data.usage?.total_tokens ?? 0;
    expect(chat).toBeGreaterThan(0);
    // Before: only the reply's own usage was charged, so compaction spent upstream tokens past the budget.
    expect(await r.proxy.context.tenants.spentBy("summed")).toBeGreaterThanOrEqual(chat + summaryTokens);
  });

  it("charges a virtual key for a summary call whose server answered but not with a usable reply, dropped its reply midway, or never answered in time", async () => {
    // A summarizer that reads the whole prompt, then answers 200 with what no client can parse, or nothing at all.
    let mode = "garbled";
    let calls = 0;
    const bad = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        calls++;
        if (mode === "garbled") {
          res.writeHead(200, { "content-type": "application/json" });
          res.end("<html>overloaded</html>");
        } else if (mode === "cut") {
          // Starts its reply, then drops the connection: a load balancer's idle cut, a crash.
          res.writeHead(200, { "content-type": "application/json", "content-length": "10000" });
          res.write('{"id":"x","choices":[');
          setImmediate(() => res.destroy());
        }
      });
    });
    await new Promise<void>((resolve) => bad.listen(0, "127.0.0.1", resolve));
    try {
      const summarizer = { baseURL: `http://127.0.0.1:${(bad.address() as AddressInfo).port}/v1`, timeoutMs: 300 };
      r = await rig({ config: { compaction: { ...SMALL.compaction, summarizer }, tenancy: { virtualKeys: { failing: { keyHash: hashKey("ptc-vk-failing"), tokenBudget: 10_000_000 } } } } });
      let total = 0;
      for (const [tag, next] of [["g", "cut"], ["c", "hang"], ["t", "hang"]]) {
        const before = calls;
        const reply = await ask(client(r, "ptc-vk-failing"), longConversation(30, 80, tag), `failing-${tag}`);
        expect(calls, mode).toBeGreaterThan(before);
        total += reply.data.usage?.total_tokens ?? 0;
        // Before: only the reply's own usage, the summary's reservation given back though the server had its prompt.
        await expect.poll(() => r?.proxy.context.tenants.spentBy("failing"), { message: mode }).toBeGreaterThan(total + 1000);
        total = (await r.proxy.context.tenants.spentBy("failing")) ?? 0;
        mode = next;
      }
    } finally {
      await r?.close();
      r = undefined;
      bad.closeAllConnections();
      await new Promise((resolve) => bad.close(resolve));
    }
  });

  it("holds a virtual key's budget against the summary calls of requests sent together: each summary reserves its prompt before it goes out", async () => {
    const summarizer = await startSummarizer("hold");
    try {
      r = await rig({ config: { compaction: { ...SMALL.compaction, summarizer: { baseURL: summarizer.url } }, tenancy: { virtualKeys: { thrifty: { keyHash: hashKey("ptc-vk-thrifty"), tokenBudget: 1000 } } } } });
      const c = client(r, "ptc-vk-thrifty");
      const statuses: number[] = [];
      // Three conversations of ~15k tokens each, at once: nothing is spent yet, so each passes the check on arrival.
      const asks = ["p", "q", "s"].map((tag) =>
        ask(c, longConversation(30, 80, tag), `thrift-${tag}`).then(
          () => statuses.push(200),
          (e: unknown) => statuses.push((e as InstanceType<typeof OpenAI.APIError>).status ?? 0),
        ),
      );
      // Every request's summary call is either held by the summarizer or its request already answered.
      await expect.poll(() => summarizer.calls + statuses.length, { timeout: 10_000 }).toBe(3);
      // Before: all three summary calls went out (3 x ~15k tokens on a budget of 1000).
      expect(summarizer.calls).toBe(1);
      summarizer.release();
      await Promise.all(asks);
      expect(statuses).toEqual([429, 429, 429]);
      // The one summary, settled to what the summarizer reported: the budget is passed by one call, not three.
      const spent = await r.proxy.context.tenants.spentBy("thrifty");
      expect(spent).toBeGreaterThan(1000);
      expect(spent).toBeLessThan(20_000);
    } finally {
      await summarizer.close();
    }
  });

  it("does not count a summary its virtual key's budget refused as a failed summary: the breaker stays closed, and summaries resume once the budget is raised", async () => {
    r = await rig({ proxy: { adminToken: "adm" }, config: { ...SMALL, compaction: { ...SMALL.compaction, enabled: false }, tenancy: { virtualKeys: { tight: { keyHash: hashKey("ptc-vk-tight"), tokenBudget: 50 } } } } });
    const config = r.proxy.context.config;
    // Sent whole while compaction is off: its ~15k tokens use up the budget of 50.
    await ask(client(r, "ptc-vk-tight"), longConversation(30, 80, "tight"), "tight");
    expect((await config.update({ compaction: { enabled: true } })).ok).toBe(true);
    const compactNow = () => compactReport(r as Rig, "tight");
    for (let i = 0; i < 4; i++) {
      const report = await compactNow();
      expect(report.compacted).toBe(false);
      // Before: "summary_failed" (the refusal as the summarizer's failure), then "circuit_open" from the third on.
      expect(report.events.map((e) => e.kind)).toEqual(["skipped"]);
      expect(report.events[0].detail).toMatch(/token budget of virtual key "tight"/);
    }
    expect(r.upstream.summaryCalls).toBe(0);
    const record = (await r.proxy.context.store.list()).find((x) => x.conversation === "tight");
    expect(record?.failures).toBe(0);
    expect((await config.update({ tenancy: { virtualKeys: { tight: { tokenBudget: 10_000_000 } } } })).ok).toBe(true);
    // Before: the open breaker skipped the summary for 4 more compactions after the budget was raised.
    expect((await compactNow()).compacted).toBe(true);
    expect(r.upstream.summaryCalls).toBe(1);
  });

  it("does not count a summary whose budget reservation the store failed to make as a failed summary: the breaker stays closed, and summaries resume once the store answers", async () => {
    r = await rig({ proxy: { adminToken: "adm" }, config: { ...SMALL, compaction: { ...SMALL.compaction, enabled: false }, tenancy: { virtualKeys: { blip: { keyHash: hashKey("ptc-vk-blip"), tokenBudget: 10_000_000 } } } } });
    const config = r.proxy.context.config;
    await ask(client(r, "ptc-vk-blip"), longConversation(30, 80, "blip"), "blip");
    expect((await config.update({ compaction: { enabled: true } })).ok).toBe(true);
    const store = r.proxy.context.store as unknown as Record<string, (...args: unknown[]) => unknown>;
    const reserve = store.reserve.bind(store);
    store.reserve = () => Promise.reject(new Error("connection terminated unexpectedly"));
    const compactNow = () => compactReport(r as Rig, "blip");
    for (let i = 0; i < 4; i++) {
      const report = await compactNow();
      expect(report.compacted).toBe(false);
      // Before: "summary_failed" (the store's blip as the summarizer's failure), then "circuit_open" from the third on.
      expect(report.events.map((e) => e.kind)).toEqual(["skipped"]);
    }
    expect(r.upstream.summaryCalls).toBe(0);
    expect(r.logs.some((e) => e.event === "store_error" && String(e.error).includes("connection terminated"))).toBe(true);
    const record = (await r.proxy.context.store.list()).find((x) => x.conversation === "blip");
    expect(record?.failures).toBe(0);
    store.reserve = reserve;
    // Before: the open breaker skipped the summary for 5 more compactions after the store came back.
    expect((await compactNow()).compacted).toBe(true);
    expect(r.upstream.summaryCalls).toBe(1);
  });

  it("takes a chat path spelled with percent-encoded letters as the chat path, so a stream without usage is still charged", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { spelled: { keyHash: hashKey("ptc-vk-spelled"), tokenBudget: 1_000_000 } } } } });
    // The upstream decodes the path (ASGI servers such as vLLM and LiteLLM do), so this is its chat route.
    const res = await fetch(`${r.proxy.url}/v1/chat/%63ompletions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer ptc-vk-spelled" },
      body: JSON.stringify({ model: "fake-model", stream: true, stream_options: { include_usage: false }, messages: [{ role: "user", content: "free tokens?" }] }),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain("data: [DONE]");
    // Before: forwarded untouched as an unknown path (never compacted), and a stream reporting no usage charged nothing.
    expect(res.headers.get("x-ptc-conversation-source")).not.toBeNull();
    expect(r.upstream.requests.at(-1)?.path).toBe("/v1/chat/completions");
    expect(await r.proxy.context.tenants.spentBy("spelled")).toBeGreaterThan(0);
  });

  it("holds a virtual key's budget across two proxy processes on one SQLite file", async () => {
    const db = join(tempDir(), "proxy.db");
    r = await rig({ proxy: { db }, config: { tenancy: { virtualKeys: { small: { keyHash: hashKey("ptc-vk-small"), tokenBudget: 50 } } } } });
    const other = await startProxy({ upstream: r.upstream.url, port: 0, logger: () => {}, wait: never, sleep: async () => {}, db, configFile: join(r.dir, "config.json") });
    try {
      // The other process opened the file before anything was spent: it must still see the spend.
      await ask(client(r, "ptc-vk-small"), longConversation(2));
      expect(await r.proxy.context.tenants.spentBy("small")).toBeGreaterThan(50);
      const second = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: "ptc-vk-small", maxRetries: 0, timeout: 5000 });
      const seen = r.upstream.requests.length;
      // Before: the second process answered 200 from its own count (0), so N processes allowed N budgets.
      const over = (await ask(second, [{ role: "user", content: "more" }]).catch((err: unknown) => err)) as InstanceType<typeof OpenAI.APIError>;
      expect(over.status).toBe(429);
      expect(over.message).toContain("budget");
      expect(r.upstream.requests.length).toBe(seen);
      // And what it charges adds to the same count: the first process sees it.
      expect(await other.context.tenants.spentBy("small")).toBe(await r.proxy.context.tenants.spentBy("small"));
    } finally {
      await other.close();
    }
  });

  it("never passes back a virtual key's upstream key or the fallback key that an upstream quotes in its error", async () => {
    fallback = await startFakeUpstream();
    r = await rig({ config: { retries: { attempts: 0, fallbackUpstream: fallback.url, fallbackApiKey: "sk-fallback-secret-42" }, tenancy: { virtualKeys: { team: { keyHash: hashKey("ptc-vk-team"), upstreamKey: "sk-upstream-secret-42" } } } } });
    const call = (path: string, mode: string, body: Record<string, unknown>, apiKey = "ptc-vk-team") =>
      fetch(`${r?.proxy.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "x-fake-mode": mode }, body: JSON.stringify(body) }).then(async (res) => ({ status: res.status, text: `${JSON.stringify([...res.headers])}${await res.text()}` }));
    const chat = { model: "fake-model", messages: [{ role: "user", content: "hi" }] };
    const replies = [
      await call("/v1/chat/completions", "quote-key", chat),
      await call("/v1/chat/completions", "quote-key", { ...chat, stream: true }),
      await call("/v1/messages", "quote-key", { model: "fake-model", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
      await call("/v1/embeddings", "quote-key", { model: "fake-model", input: "hi" }),
      await call("/v1/chat/completions", "quote-key-text", chat),
      await call("/v1/embeddings", "quote-key-text", { model: "fake-model", input: "hi" }),
    ];
    // The fallback's key: the primary fails (502), the fallback quotes its own key.
    replies.push(await call("/v1/chat/completions", "quote-key-text", chat, "sk-client-own-key"));
    expect(replies.map((x) => x.status)).toEqual([401, 401, 401, 401, 502, 502, 502]);
    expect(fallback.requests.length).toBeGreaterThan(0);
    for (const reply of replies) {
      // Before: the whole reply, body and headers, quoted the key the client was never given.
      expect(reply.text).not.toContain("secret-42");
      expect(reply.text).toMatch(/\[api key\]/);
    }
  });

  it("masks an upstream key a text error quotes where the 500 characters shown of it end, and in the start of a reply that is not JSON", async () => {
    const key = "sk-upstream-secret-42-abcdefghijklmnop";
    const quoting: RequestListener = (req, res) => {
      req.resume();
      // The key starts 20 characters before the cut ("upstream answered HTTP 401: " comes first).
      const page = req.headers["x-ok"] === undefined ? `${"x".repeat(480)}bad key ${key}` : `bad key ${key}`;
      res.writeHead(req.headers["x-ok"] === undefined ? 401 : 200, { "content-type": "text/plain", "content-length": String(Buffer.byteLength(page)) });
      res.end(page);
    };
    await withUpstream(quoting, key, async (proxy) => {
      for (const path of ["/v1/chat/completions", "/v1/embeddings"]) {
        const res = await fetch(`${proxy.url}${path}`, { method: "POST", headers: { authorization: "Bearer ptc-vk-team", "content-type": "application/json" }, body: JSON.stringify({ model: "m", input: "hi", messages: [{ role: "user", content: "hi" }] }) });
        const text = await res.text();
        expect(res.status, path).toBe(401);
        // Before: the 12 characters of the key before the cut, "sk-upstream-", reached the client.
        expect(text, path).not.toContain("sk-upstream-");
        expect(text, path).toContain("bad key [api key]");
      }
      // A 200 that is not JSON is quoted by its first 60 characters: before, unmasked, the key's first 52.
      const res = await fetch(`${proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer ptc-vk-team", "content-type": "application/json", "x-ok": "1" }, body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }) });
      const text = await res.text();
      expect(res.status).toBe(502);
      expect(text).toContain("upstream_malformed");
      expect(text).not.toContain("sk-upstream-");
      expect(text).toContain("bad key [api key]");
    });
  });

  it("masks a key cut anywhere between two pieces of a stream, and holds back nothing of an event's end", () => {
    const key = "sk-upstream-secret-42-abcdefghijklmnop";
    const event = `data: {"error":{"message":"Incorrect API key provided: ${key}; again ${key}"}}\n\n`;
    const whole = event.replaceAll(key, "[api key]");
    for (let cut = 0; cut <= event.length; cut++) {
      const masker = new KeyMasker([key, "sk-fallback-secret-42"]);
      const first = masker.push(Buffer.from(event.slice(0, cut)));
      const second = masker.push(Buffer.from(event.slice(cut)));
      // Nothing held back once the event has ended: its bytes reach the client as they come.
      expect(masker.end().length, String(cut)).toBe(0);
      expect(Buffer.concat([first, second]).toString(), String(cut)).toBe(whole);
    }
  });

  it("masks a virtual key's upstream key that a 200 reply quotes, streamed (whole or split across chunks) or not, on every route", async () => {
    const key = "sk-upstream-secret-42-abcdefghijklmnop";
    // A gateway that answers 200 and reports the refused key inside the reply: an error event in a
    // stream (after the headers, so no status says so), or a JSON error with status 200.
    const quoting: RequestListener = (req, res) => {
      req.resume();
      const split = req.headers["x-split"] === "1";
      if (req.headers["x-stream"] === "1") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const event = `data: {"error":{"message":"Incorrect API key provided: ${key}","type":"invalid_request_error"}}\n\n`;
        if (!split) return void res.end(event);
        // The key cut in two, in two reads of the proxy.
        const at = event.indexOf(key) + 10;
        res.write(event.slice(0, at));
        setTimeout(() => res.end(event.slice(at)), 50);
        return;
      }
      const body = JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } });
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    };
    await withUpstream(quoting, key, async (proxy) => {
      const bodies: Record<string, Record<string, unknown>> = {
        "/v1/chat/completions": { model: "m", messages: [{ role: "user", content: "hi" }] },
        "/v1/messages": { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
        "/v1/responses": { model: "m", input: [{ role: "user", content: "hi" }] },
        "/v1/completions": { model: "m", prompt: "hi" },
      };
      const seen: string[] = [];
      for (const [path, body] of Object.entries(bodies)) {
        for (const mode of [{ stream: "0", split: "0" }, { stream: "1", split: "0" }, { stream: "1", split: "1" }]) {
          const res = await fetch(`${proxy.url}${path}`, { method: "POST", headers: { authorization: "Bearer ptc-vk-team", "content-type": "application/json", "x-stream": mode.stream, "x-split": mode.split }, body: JSON.stringify({ ...body, ...(mode.stream === "1" ? { stream: true } : {}) }) });
          const text = await res.text();
          const label = `${path} ${JSON.stringify(mode)}`;
          expect(res.status, label).toBe(200);
          if (text.includes("secret-42") || text.includes("sk-upstream") || !text.includes("[api key]")) seen.push(label);
        }
      }
      // Before: 12 of 12 replies carried the key (or, split, its two halves) to a client holding only ptc-vk-team.
      expect(seen).toEqual([]);
    });
  });

  it("masks a compressed reply it cannot hold whole (the in-flight total is taken), not passing it on compressed and unmasked", async () => {
    const key = "sk-upstream-secret-42-abcdefghijklmnop";
    const holding: Array<() => void> = [];
    // An upstream that gzips though asked for identity, quoting the key it was sent; x-hold waits.
    const upstream = createServer((req, res) => {
      req.resume();
      if (req.headers["x-hold"] === "1") return void holding.push(() => res.end());
      const body = gzipSync(JSON.stringify({ id: "c", object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: `echoing ${key} ${"x".repeat(3000)}` }, finish_reason: "stop" }] }));
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(body.length) });
      res.end(body);
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const x = await rig({ proxy: { upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` }, config: { maxInFlightBodyBytes: 4096, retries: { attempts: 0 }, tenancy: { virtualKeys: { team: { keyHash: hashKey("ptc-vk-team"), upstreamKey: key } } } } });
    try {
      const chat = (content: string, hold: boolean) => rawPost(x.proxy.url, "/v1/chat/completions", { authorization: "Bearer ptc-vk-team", ...(hold ? { "x-hold": "1" } : {}) }, JSON.stringify({ model: "m", messages: [{ role: "user", content }] }));
      // A request whose body takes most of the total until its reply comes.
      const held = chat("y".repeat(3500), true);
      await expect.poll(() => holding.length).toBe(1);
      const res = await chat("hi", false);
      // Before: 200 with the gzip bytes as sent (content-encoding: gzip), the key inside them.
      const shown = res.headers["content-encoding"] === "gzip" ? gunzipSync(Buffer.from(res.body, "latin1")).toString() : res.body;
      expect(shown).not.toContain("secret-42");
      // Passed on decoded, as it comes, the key masked.
      expect(res.status).toBe(200);
      expect(res.headers["content-encoding"]).toBeUndefined();
      expect(res.body).toContain("echoing [api key] xxx");
      for (const release of holding) release();
      await held;
    } finally {
      await x.close();
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it("asks for an uncompressed reply (one it could mask) only where the fallback key was sent: a client's own key keeps its accept-encoding on the primary", async () => {
    fallback = await startFakeUpstream();
    r = await rig({ config: { retries: { attempts: 0, fallbackUpstream: fallback.url, fallbackApiKey: "sk-fallback-secret-42" } } });
    const echo = (mode?: string) => rawPost(r?.proxy.url ?? "", "/v1/echo", { authorization: "Bearer sk-client-own-key", "accept-encoding": "gzip, br", "x-echo-encoding": "compress", ...(mode === undefined ? {} : { "x-fake-mode": mode }) }, JSON.stringify({ model: "fake-model", input: "hi" }));
    const own = await echo();
    // Before: the primary was asked for identity (the client's gzip, br dropped for every client)
    // as though its reply could quote the fallback's key, which only the fallback is sent.
    expect(r.upstream.requests.at(-1)?.headers["accept-encoding"]).toBe("gzip, br");
    expect(own.status).toBe(200);
    expect(own.headers["content-encoding"]).toBe("compress");
    // The primary fails: the fallback, sent the fallback key, is asked for a reply it can mask.
    await echo("html500");
    expect(fallback.requests.at(-1)?.headers["accept-encoding"]).toBe("identity");
    expect(fallback.requests.at(-1)?.headers.authorization).toBe("Bearer sk-fallback-secret-42");
  });

  it("refuses a reply that must be masked but comes in a coding the proxy cannot undo (502 upstream_undecodable), on every route, and passes it on when nothing needs masking", async () => {
    const key = "sk-upstream-secret-42-abcdefghijklmnop";
    // An upstream that ignores accept-encoding: identity and answers in a coding no Node undoes
    // ("compress"; zstd before Node 22.15 is the same case), its bytes quoting the key it was sent.
    const quoting: RequestListener = (req, res) => {
      req.resume();
      const stream = req.headers["x-stream"] === "1";
      const body = stream ? `data: {"error":{"message":"Incorrect API key provided: ${key}"}}\n\n` : JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } });
      res.writeHead(200, { "content-type": stream ? "text/event-stream" : "application/json", "content-encoding": "compress", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    };
    await withUpstream(quoting, key, async (proxy) => {
      const bodies: Record<string, Record<string, unknown>> = {
        "/v1/chat/completions": { model: "m", messages: [{ role: "user", content: "hi" }] },
        "/v1/messages": { model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] },
        "/v1/responses": { model: "m", input: [{ role: "user", content: "hi" }] },
        "/v1/embeddings": { model: "m", input: "hi" },
      };
      const leaked: string[] = [];
      const passed: string[] = [];
      for (const [path, body] of Object.entries(bodies)) {
        for (const stream of ["0", "1"]) {
          const res = await rawPost(proxy.url, path, { authorization: "Bearer ptc-vk-team", "x-stream": stream }, JSON.stringify({ ...body, ...(stream === "1" ? { stream: true } : {}) }));
          const label = `${path} stream=${stream}`;
          // Before: 200 with the upstream's bytes as they came, the key in them, on 8 of 8.
          if (res.body.includes("secret-42")) leaked.push(label);
          if (res.status !== 502 || !res.body.includes("upstream_undecodable")) passed.push(label);
        }
      }
      expect({ leaked, passed }).toEqual({ leaked: [], passed: [] });
      // A client's own key is not hidden from it: its reply passes on as the upstream sent it.
      const own = await rawPost(proxy.url, "/v1/embeddings", { authorization: "Bearer sk-client-own" }, JSON.stringify(bodies["/v1/embeddings"]));
      expect(own.status).toBe(200);
      expect(own.headers["content-encoding"]).toBe("compress");
    });
  });

  it("says how many attempts a refused undecodable reply took, on a forwarded route as on the chat routes", async () => {
    const key = "sk-upstream-secret-42-abcdefghijklmnop";
    let seen = 0;
    // The first attempt fails (503, retried), the second comes in a coding no Node undoes.
    const upstream = createServer((req, res) => {
      req.resume();
      if (seen++ % 2 === 0) return void res.writeHead(503, { "content-type": "application/json" }).end('{"error":{"message":"busy"}}');
      const body = JSON.stringify({ error: { message: `Incorrect API key provided: ${key}` } });
      res.writeHead(200, { "content-type": "application/json", "content-encoding": "compress", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const x = await rig({ proxy: { upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`, sleep: async () => undefined }, config: { retries: { attempts: 1 }, tenancy: { virtualKeys: { team: { keyHash: hashKey("ptc-vk-team"), upstreamKey: key } } } } });
    try {
      const attempts: Record<string, unknown> = {};
      for (const [path, body] of [["/v1/chat/completions", { model: "m", messages: [{ role: "user", content: "hi" }] }], ["/v1/embeddings", { model: "m", input: "hi" }]] as const) {
        const res = await rawPost(x.proxy.url, path, { authorization: "Bearer ptc-vk-team" }, JSON.stringify(body));
        expect(res.status, path).toBe(502);
        expect(res.body, path).toContain("upstream_undecodable");
        attempts[path] = res.headers["x-ptc-upstream-attempts"];
      }
      // Before: the embeddings route's 502 said nothing of its 2 attempts.
      expect(attempts).toEqual({ "/v1/chat/completions": "2", "/v1/embeddings": "2" });
    } finally {
      await x.close();
      upstream.closeAllConnections();
      await new Promise((resolve) => upstream.close(resolve));
    }
  });

  it("charges a virtual key the usage reported on any path it forwards (embeddings, legacy completions), whole or streamed", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { rag: { keyHash: hashKey("ptc-vk-rag"), tokenBudget: 1_000_000 } } } } });
    // The fake upstream's /v1/echo answers the body it got, with its content type: a reply of our choosing.
    const echo = (type: string, body: string) => fetch(`${r?.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-rag", "content-type": type }, body }).then((res) => res.text());
    const embeddings = JSON.stringify({ object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }], usage: { prompt_tokens: 7, total_tokens: 7 } });
    expect(await echo("application/json", embeddings)).toBe(embeddings);
    await expect.poll(() => r?.proxy.context.tenants.spentBy("rag")).toBe(7);
    const stream = `data: ${JSON.stringify({ choices: [{ index: 0, text: "hi" }] })}\n\ndata: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 5 } })}\n\ndata: [DONE]\n\n`;
    // Passed through byte for byte, usage chunk included.
    expect(await echo("text/event-stream", stream)).toBe(stream);
    // Before: 0 and 7, whatever the upstream reported: only the chat routes were charged.
    await expect.poll(() => r?.proxy.context.tenants.spentBy("rag")).toBe(32);
    // A compressed reply (the client's accept-encoding goes upstream on these paths) is read too.
    const res = await fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-rag", "content-type": "application/json", "x-echo-encoding": "gzip" }, body: gzipSync(embeddings) });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    await expect.poll(() => r?.proxy.context.tenants.spentBy("rag")).toBe(39);
    // A token count's JSON reply (Anthropic's count_tokens) reports no usage and costs nothing.
    await echo("application/json", JSON.stringify({ input_tokens: 600, messages: [{ role: "user", content: "count me ".repeat(300) }] }));
    // A stream that reports no usage (legacy completions without include_usage) is charged its request, counted.
    const legacy = JSON.stringify({ model: "fake-model", prompt: "a prompt of some length ".repeat(20), stream: true });
    const streamed = await fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-rag", "content-type": "application/json", "x-echo-type": "text/event-stream" }, body: legacy });
    expect(await streamed.text()).toBe(legacy);
    // Before: 39, so such a path spent past any budget.
    await expect.poll(() => r?.proxy.context.tenants.spentBy("rag")).toBeGreaterThan(39 + 80);
    expect(await r.proxy.context.tenants.spentBy("rag")).toBeLessThan(39 + 200);
  });

  it("charges a virtual key the usage of a compressed stream forwarded untouched (the client's accept-encoding went upstream)", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { zipped: { keyHash: hashKey("ptc-vk-zipped"), tokenBudget: 1_000_000 } } } } });
    const stream = `data: ${JSON.stringify({ choices: [{ index: 0, text: "hi" }] })}\n\ndata: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 20, completion_tokens: 5 } })}\n\ndata: [DONE]\n\n`;
    for (const [encoding, zip] of [["gzip", gzipSync], ["br", brotliCompressSync], ["deflate", deflateSync]] as const) {
      const before = await r.proxy.context.tenants.spentBy("zipped");
      const res = await fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-zipped", "content-type": "application/octet-stream", "x-echo-type": "text/event-stream", "x-echo-encoding": encoding }, body: zip(stream) });
      // fetch undoes the coding: the client gets the stream as the upstream sent it.
      expect(await res.text(), encoding).toBe(stream);
      // Before: 0 each time, the compressed bytes searched for a usage event.
      await expect.poll(() => r?.proxy.context.tenants.spentBy("zipped"), { message: encoding }).toBe(before + 25);
    }
  });

  it("charges a virtual key the usage of a whole reply forwarded untouched however long (a big embeddings batch), and its request when the reply's coding cannot be undone", async () => {
    // An embeddings reply of 2 MB, past maxBodyBytes (1 MB), its usage at the end.
    const big = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        const reply = JSON.stringify({ object: "list", data: [{ object: "embedding", index: 0, embedding: Array.from({ length: 200_000 }, (_, i) => i / 7) }], usage: { prompt_tokens: 900, total_tokens: 900 } });
        // Compressed when asked: 2 MB that inflate past the limit from well under it; or in a coding no Node undoes.
        const zip = String(req.headers["x-zip"] ?? "") || undefined;
        const sent = zip === "gzip" ? gzipSync(reply) : Buffer.from(reply);
        res.writeHead(200, { "content-type": "application/json", "content-length": sent.length, ...(zip === undefined ? {} : { "content-encoding": zip }) });
        res.end(sent);
      });
    });
    await new Promise<void>((resolve) => big.listen(0, "127.0.0.1", resolve));
    try {
      r = await rig({ proxy: { upstream: `http://127.0.0.1:${(big.address() as AddressInfo).port}/v1` }, config: { maxBodyBytes: 1 << 20, tenancy: { virtualKeys: { batch: { keyHash: hashKey("ptc-vk-batch"), tokenBudget: 1_000_000 } } } } });
      const body = JSON.stringify({ model: "fake-embed", input: "a passage of text ".repeat(200) });
      const res = await fetch(`${r.proxy.url}/v1/embeddings`, { method: "POST", headers: { authorization: "Bearer ptc-vk-batch", "content-type": "application/json" }, body });
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1 << 20);
      // Read as it passed, not held whole: what the upstream reported (before: the request's body counted as text).
      await expect.poll(() => r?.proxy.context.tenants.spentBy("batch")).toBe(900);
      const zipped = await fetch(`${r.proxy.url}/v1/embeddings`, { method: "POST", headers: { authorization: "Bearer ptc-vk-batch", "content-type": "application/json", "x-zip": "gzip" }, body });
      expect((await zipped.arrayBuffer()).byteLength).toBeGreaterThan(1 << 20);
      await expect.poll(() => r?.proxy.context.tenants.spentBy("batch")).toBe(1800);
      const unknown = await fetch(`${r.proxy.url}/v1/embeddings`, { method: "POST", headers: { authorization: "Bearer ptc-vk-batch", "content-type": "application/json", "accept-encoding": "identity", "x-zip": "x-unknown" }, body });
      await unknown.arrayBuffer();
      await expect.poll(() => r?.proxy.context.tenants.spentBy("batch")).toBe(1800 + countTokens(body));
    } finally {
      await r?.close();
      r = undefined;
      await new Promise((resolve) => big.close(resolve));
    }
  });

  it("refuses a virtual key's body forwarded untouched that it cannot decode to count (a coding this Node lacks, corrupt, inflating past maxBodyBytes), and forwards another client's as it came", async () => {
    r = await rig({ config: { maxBodyBytes: 4096, tenancy: { virtualKeys: { packed: { keyHash: hashKey("ptc-vk-packed"), tokenBudget: 1_000_000 } } } } });
    const json = JSON.stringify({ model: "fake-model", input: "some words to embed ".repeat(20), stream: true });
    const send = (auth: string, encoding: string, body: Buffer) => fetch(`${r?.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: `Bearer ${auth}`, "content-type": "application/json", "content-encoding": encoding, "x-echo-type": "text/event-stream" }, body });
    // zstd where this Node's zlib has none (before 22.15), and a coding no Node has.
    const unknown = ["compress", ...("zstdDecompress" in zlib ? [] : ["zstd"])];
    const cases: Array<[string, Buffer, number, string]> = [
      ...unknown.map((c): [string, Buffer, number, string] => [c, Buffer.from(json), 415, "unsupported_content_encoding"]),
      ["gzip", Buffer.from("not gzip at all"), 400, "invalid_content_encoding"],
      ["gzip", gzipSync(" ".repeat(100_000)), 413, "body_too_large"],
    ];
    for (const [encoding, body, status, code] of cases) {
      const res = await send("ptc-vk-packed", encoding, body);
      const text = await res.text();
      // Before: forwarded, reserving 1 token and charging 0 (nothing could be counted).
      expect({ encoding, status: res.status }).toEqual({ encoding, status });
      expect(text).toContain(`"code":"${code}"`);
    }
    expect(r.upstream.requests).toHaveLength(0);
    // A body it can decode is forwarded as it came and counted decoded.
    const gz = await send("ptc-vk-packed", "gzip", gzipSync(json));
    expect(gz.status).toBe(200);
    await gz.arrayBuffer();
    await expect.poll(() => r?.proxy.context.tenants.spentBy("packed")).toBe(countTokens(json));
    // Another client's body is no one's spend: forwarded untouched, whatever its coding.
    const plain = await send("sk-client-key", "compress", Buffer.from(json));
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe(json);
  });

  it("counts a JSON request forwarded untouched as JSON whatever its content type says (servers that parse it without one)", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { untyped: { keyHash: hashKey("ptc-vk-untyped"), tokenBudget: 1_000_000 } } } } });
    // Legacy completions streamed without include_usage: the stream reports none, so the request is charged, counted.
    const legacy = JSON.stringify({ model: "fake-model", prompt: "a prompt of some length ".repeat(20), stream: true });
    let spent = 0;
    for (const type of [undefined, "text/plain"]) {
      // A byte body: fetch sets no content type of its own.
      const res = await fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-untyped", "x-echo-type": "text/event-stream", ...(type === undefined ? {} : { "content-type": type }) }, body: Buffer.from(legacy) });
      expect(await res.text()).toBe(legacy);
      // Before: 0 (a FastAPI server such as vLLM parses a body without content type as JSON: a way past the budget).
      await expect.poll(() => r?.proxy.context.tenants.spentBy("untyped"), { message: String(type) }).toBe(spent + countTokens(legacy));
      spent += countTokens(legacy);
    }
    // A body that is not JSON (an audio upload) still reserves 1 token and is charged nothing for it.
    const audio = await fetch(`${r.proxy.url}/v1/echo`, { method: "POST", headers: { authorization: "Bearer ptc-vk-untyped", "content-type": "audio/wav", "x-echo-type": "text/event-stream" }, body: Buffer.from("RIFF....WAVEfmt ") });
    await audio.arrayBuffer();
    await expect.poll(() => r?.proxy.context.tenants.spentBy("untyped")).toBe(spent);
  });

  it("issues a virtual key through the admin API, keeping only its hash", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: {} });
    const res = await fetch(`${r.proxy.url}/ext/context_compaction/keys`, { method: "POST", headers: { authorization: "Bearer admin", "content-type": "application/json" }, body: JSON.stringify({ name: "ci", upstreamKey: "sk-up-ci", requestsPerMinute: 100 }) });
    expect(res.status).toBe(200);
    const { key } = (await res.json()) as { key: string };
    expect(key).toMatch(/^ptc-vk-/);
    expect(JSON.stringify(r.proxy.context.config.current)).not.toContain(key);
    await ask(client(r, key), [{ role: "user", content: "hi" }]);
    expect(r.upstream.requests.at(-1)?.headers.authorization).toBe("Bearer sk-up-ci");
    const again = await fetch(`${r.proxy.url}/ext/context_compaction/keys`, { method: "POST", headers: { authorization: "Bearer admin" }, body: JSON.stringify({ name: "ci" }) });
    expect(again.status).toBe(409);
  });

  it("charges no removed virtual key for an admin compact of its conversation, whatever its name (toString, constructor as plain)", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 } } } });
    const post = (path: string, body: unknown) => fetch(`${r?.proxy.url}/ext/context_compaction/${path}`, { method: "POST", headers: { authorization: "Bearer admin", "content-type": "application/json" }, body: JSON.stringify(body) });
    const spent: Record<string, number> = {};
    for (const name of ["plain", "toString", "constructor"]) {
      const { key } = (await (await post("keys", { name })).json()) as { key: string };
      await ask(client(r, key), longConversation(30, 80, name), `conv-${name}`);
      const before = await r.proxy.context.tenants.spentBy(name);
      expect((await post("config", { tenancy: { virtualKeys: { [name]: null } } })).status).toBe(200);
      const calls = r.upstream.summaryCalls;
      const compacted = await post("compact", { conversation: `conv-${name}` });
      expect(((await compacted.json()) as { compacted: boolean }).compacted).toBe(true);
      expect(r.upstream.summaryCalls).toBe(calls + 1);
      spent[name] = (await r.proxy.context.tenants.spentBy(name)) - before;
    }
    // Before: toString and constructor were read from Object.prototype as keys that still exist, and charged the summary.
    expect(spent).toEqual({ plain: 0, toString: 0, constructor: 0 });
  });

  it("issues a virtual key whose name is also an Object.prototype member (constructor), and refuses __proto__ as a name", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: {} });
    const issue = (name: string) => fetch(`${r?.proxy.url}/ext/context_compaction/keys`, { method: "POST", headers: { authorization: "Bearer admin" }, body: JSON.stringify({ name, upstreamKey: `sk-up-${name}` }) });
    for (const name of ["constructor", "toString"]) {
      const res = await issue(name);
      // Before: 409 'a virtual key named "constructor" exists', read from the prototype.
      expect(res.status).toBe(200);
      const { key } = (await res.json()) as { key: string };
      await ask(client(r, key), [{ role: "user", content: "hi" }]);
      expect(r.upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer sk-up-${name}`);
      expect((await issue(name)).status).toBe(409);
    }
    const proto = await issue("__proto__");
    expect(proto.status).toBe(400);
    expect(await proto.text()).toContain("__proto__");
  });
  it("refuses a request that repeats its credential header (two x-api-key, two Authorization) with 400 before any tenant or budget lookup, on the chat path and forwarded ones", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { spent: { keyHash: hashKey("ptc-vk-spent"), upstreamKey: "sk-up-spent", tokenBudget: 1 } } } } });
    const x = r;
    const send = (path: string, headers: Record<string, string | string[]>) => postHi(x.proxy.url, path, headers);
    // The virtual key's budget is used up: a raw key next to it must not get around that.
    expect((await send("/v1/chat/completions", { authorization: "Bearer ptc-vk-spent" })).status).toBe(200);
    expect((await send("/v1/chat/completions", { authorization: "Bearer ptc-vk-spent" })).status).toBe(429);
    const resolve = x.proxy.context.tenants.resolve.bind(x.proxy.context.tenants);
    let lookups = 0;
    x.proxy.context.tenants.resolve = (...args) => {
      lookups++;
      return resolve(...args);
    };
    const sent = x.upstream.requests.length;
    const repeats: [string, Record<string, string[]>][] = [
      // Before: a tenant of its own keyed "sk-a, sk-b", sent upstream as that (Node joins x-api-key).
      ["x-api-key", { "x-api-key": ["sk-a", "sk-b"] }],
      ["x-api-key", { "x-api-key": ["sk-a", "ptc-vk-spent"] }],
      // Before: the first kept and the second dropped without a word (Node keeps one Authorization).
      ["authorization", { authorization: ["Bearer sk-a", "Bearer sk-b"] }],
      ["authorization", { authorization: ["Bearer sk-a", "Bearer ptc-vk-spent"] }],
      ["authorization", { authorization: ["Bearer ptc-vk-spent", "Bearer sk-a"] }],
    ];
    for (const path of ["/v1/chat/completions", "/v1/embeddings"]) {
      for (const [name, headers] of repeats) {
        const res = await send(path, headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(400);
        const error = (JSON.parse(res.body) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe("repeated_credential");
        expect(error.message).toContain(name);
      }
    }
    expect(lookups).toBe(0);
    expect(x.upstream.requests.length).toBe(sent);
    // One of each is not a repeat: answered as before.
    expect((await send("/v1/chat/completions", { authorization: "Bearer sk-a", "x-api-key": "sk-a" })).status).toBe(200);
  });
  it("refuses a chat request that repeats an identity header (two x-conversation-id, two session-id) with 400 repeated_conversation_id, on every chat API, and sends nothing upstream", async () => {
    r = await rig({ config: { identity: { headers: ["x-conversation-id", "X-My-Session"] } } });
    const x = r;
    const sent = x.upstream.requests.length;
    const repeats: [string, Record<string, string[]>][] = [
      // Before: 200, one conversation "conv-a, conv-b" that neither client named (Node joins the values).
      ["x-conversation-id", { "x-conversation-id": ["conv-a", "conv-b"] }],
      ["x-conversation-id", { "x-conversation-id": ["conv-a", "conv-a"] }],
      // A configured name is matched whatever its case.
      ["x-my-session", { "x-my-session": ["s1", "s2"] }],
    ];
    for (const path of ["/v1/chat/completions", "/v1/messages", "/v1/responses"]) {
      for (const [name, headers] of repeats) {
        const res = await postHi(x.proxy.url, path, { ...headers, "x-api-key": "sk-a", "anthropic-version": "2023-06-01" });
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(400);
        const error = (JSON.parse(res.body) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe("repeated_conversation_id");
        expect(error.message).toContain(name);
      }
    }
    expect(x.upstream.requests.length).toBe(sent);
    expect(await x.proxy.context.store.count()).toBe(0);
    // One of each is no repeat, and a header the identity does not read may repeat.
    const one = await postHi(x.proxy.url, "/v1/chat/completions", { "x-conversation-id": "conv-a", "x-my-session": "s1", "x-other": ["1", "2"] });
    expect(one.status).toBe(200);
    expect((await x.proxy.context.store.list()).map((c) => c.conversation)).toEqual(["conv-a"]);
  });
  it("refuses a chat request whose identity header is over 256 characters with 400 invalid_conversation_id, on every chat API, and sends nothing upstream", async () => {
    r = await rig({ config: { identity: { headers: ["x-conversation-id", "X-My-Session"] } } });
    const x = r;
    const sent = x.upstream.requests.length;
    const long = "c".repeat(257);
    // Before: 200 with x-ptc-conversation-source "new": the id named was dropped without a word and
    // the request matched by prefix (or by the next header, a conversation the client did not name).
    const cases: [string, Record<string, string>][] = [
      ["x-conversation-id", { "x-conversation-id": long }],
      ["x-conversation-id", { "x-conversation-id": long, "x-my-session": "s1" }],
      ["x-my-session", { "x-my-session": long }],
    ];
    for (const path of ["/v1/chat/completions", "/v1/messages", "/v1/responses"]) {
      for (const [name, headers] of cases) {
        const res = await postHi(x.proxy.url, path, { ...headers, "x-api-key": "sk-a", "anthropic-version": "2023-06-01" });
        expect(res.status, `${path} ${name}`).toBe(400);
        const error = (JSON.parse(res.body) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe("invalid_conversation_id");
        expect(error.message).toContain(name);
        expect(error.message).toContain("257");
      }
    }
    expect(x.upstream.requests.length).toBe(sent);
    expect(await x.proxy.context.store.count()).toBe(0);
    // 256 characters is an id.
    const ok = await postHi(x.proxy.url, "/v1/chat/completions", { "x-conversation-id": "c".repeat(256) });
    expect(ok.status).toBe(200);
    expect((await x.proxy.context.store.list()).map((c) => c.conversation)).toEqual(["c".repeat(256)]);
  });
  it("never forwards a virtual key upstream: one in either credential header is the tenant, and one beside a different credential is refused 400 ambiguous_credential", async () => {
    r = await rig({ config: { tenancy: { virtualKeys: { small: { keyHash: hashKey("ptc-vk-small"), upstreamKey: "sk-up-small", tokenBudget: 1_000_000 } } } } });
    const x = r;
    const send = (path: string, headers: Record<string, string>) => postHi(x.proxy.url, path, headers);
    const leaked = () => x.upstream.requests.filter((q) => JSON.stringify(q.headers).includes("ptc-vk-"));
    const spent = () => x.proxy.context.store.spent("small");
    const sent = x.upstream.requests.length;
    // Before: 200, the tenant taken from Authorization (sk-a) and ptc-vk-small sent upstream in x-api-key.
    const ambiguous: Record<string, string>[] = [
      { authorization: "Bearer sk-a", "x-api-key": "ptc-vk-small" },
      { "x-api-key": "ptc-vk-small", authorization: "Bearer sk-a" },
      { authorization: "Bearer ptc-vk-small", "x-api-key": "sk-a" },
      { "x-api-key": "sk-a", authorization: "Bearer ptc-vk-small" },
      // Not a bearer credential, still a virtual key beside another.
      { authorization: "ptc-vk-small", "x-api-key": "sk-a" },
      { authorization: "Basic dXNlcjpwdw==", "x-api-key": "ptc-vk-small" },
    ];
    for (const path of ["/v1/chat/completions", "/v1/embeddings"]) {
      for (const headers of ambiguous) {
        const res = await send(path, headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(400);
        expect((JSON.parse(res.body) as { error: { code: string; type: string } }).error).toMatchObject({ code: "ambiguous_credential", type: "invalid_request_error" });
      }
    }
    expect(x.upstream.requests.length).toBe(sent);
    expect(await spent()).toBe(0);
    // A virtual key in x-api-key alone, or the same key in both headers: charged to it, its upstream key sent instead.
    for (const headers of [{ "x-api-key": "ptc-vk-small" }, { authorization: "Bearer ptc-vk-small", "x-api-key": "ptc-vk-small" }] as Record<string, string>[]) {
      const before = await spent();
      expect((await send("/v1/chat/completions", headers)).status, JSON.stringify(headers)).toBe(200);
      expect(await spent()).toBeGreaterThan(before);
      expect(x.upstream.requests.at(-1)?.headers.authorization).toBe("Bearer sk-up-small");
    }
    // A virtual key under another scheme is no credential the proxy reads: refused, not forwarded as the anonymous tenant's.
    expect((await send("/v1/chat/completions", { authorization: "Token ptc-vk-small" })).status).toBe(401);
    expect(leaked()).toEqual([]);
  });
});

/** A proxy on `handler` as its upstream, whose virtual key ptc-vk-team holds `upstreamKey` there, for `use`; both closed after. */
async function withUpstream(handler: RequestListener, upstreamKey: string, use: (proxy: RunningProxy) => Promise<void>): Promise<void> {
  const upstream = createServer(handler);
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  const x = await rig({ proxy: { upstream: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1` }, config: { retries: { attempts: 0 }, tenancy: { virtualKeys: { team: { keyHash: hashKey("ptc-vk-team"), upstreamKey } } } } });
  try {
    await use(x.proxy);
  } finally {
    await x.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  }
}


/**
 * POSTs a one-message chat body (with an `input` too, for the embeddings path) to the proxy with
 * exactly these headers: node:http, as fetch would join or refuse a repeated header.
 */
function postHi(proxyUrl: string, path: string, headers: Record<string, string | string[]>): Promise<{ status: number; body: string }> {
  const url = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const q = request({ host: url.hostname, port: url.port, path, method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    q.on("error", reject);
    q.end(JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }], input: "hi" }));
  });
}

/** POSTs `body` to the proxy with node:http, which undoes no content-encoding: the bytes the proxy sent. */
function rawPost(proxyUrl: string, path: string, headers: Record<string, string>, body: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const url = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const q = request({ host: url.hostname, port: url.port, path, method: "POST", headers: { "content-type": "application/json", ...headers } }, (res) => {
      let text = "";
      // As latin1: the bytes of a compressed reply can be taken back from it.
      res.on("data", (c: Buffer) => (text += c.toString("latin1")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    q.on("error", reject);
    q.end(body);
  });
}
