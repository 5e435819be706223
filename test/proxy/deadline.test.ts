// No request is held hostage by compaction: a summarizer that hangs delays a request by the
// deadline at most (an injected clock decides when it passes, so nothing here depends on the
// machine's speed); the request goes out uncompacted, or with the last good summary, and the
// compaction finishes in the background for the next request. Summary calls per compaction are
// capped, and a learned context window never counts the reserved output.
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { defaultPromptTokens } from "../support/fake-openai.js";
import { longConversation, manualDeadline, rig, startSummarizer, stored, type Rig, type Summarizer } from "./setup.js";

let r: Rig | undefined;
let summarizer: Summarizer | undefined;
afterEach(async () => {
  await r?.close();
  await summarizer?.close();
  r = undefined;
  summarizer = undefined;
});

type Msg = { role: string; content: string | null };

const SMALL = { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 };
const chats = (x: Rig) => x.upstream.requests.filter((q) => q.path === "/v1/chat/completions" && !JSON.stringify(q.body).includes("ConversationSummary"));
const send = (x: Rig, messages: OpenAI.ChatCompletionMessageParam[], id: string) => x.client.chat.completions.create({ model: "fake-model", messages }, { headers: { "x-conversation-id": id } });

describe("proxy compaction deadline", () => {
  it("cuts a background compaction's hanging summary call when the proxy closes after its drain", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    const x = await rig({ proxy: { wait: clock.wait }, config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const pending = send(x, longConversation(30), "left-behind");
    await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
    clock.pass();
    await pending;
    // The summary call still hangs (for the summarizer's timeout, 120 s): a drain that gives up must not wait for it.
    expect(await x.proxy.drain(0)).toBe(false);
    await x.upstream.close();
    await expect.poll(() => summarizer?.abandoned, { timeout: 5000 }).toBe(1);
  });


  it("sends the request uncompacted when the summarizer hangs past the deadline, and compacts in the background", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const history = longConversation(30);
    const pending = send(r, history, "hostage");
    await expect.poll(() => summarizer?.calls, { timeout: 5000 }).toBe(1);
    await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
    expect(chats(r)).toHaveLength(0);
    clock.pass();
    const reply = await pending;
    expect(reply.choices[0].message.content).toContain("final question a");
    expect(chats(r)[0].body?.messages as Msg[]).toHaveLength(history.length);
    expect(r.proxy.context.metrics.get("ptc_proxy_compaction_deadline_total")).toBe(1);
    expect(r.logs.some((l) => l.event === "compaction_deadline")).toBe(true);

    // The summary arrives later: the background compaction stores it, and the next request uses it.
    summarizer.release();
    await expect.poll(async () => (await (r === undefined ? undefined : stored(r.proxy.context.store, "hostage")))?.compactions, { timeout: 5000 }).toBe(1);
    const next = [...history, { role: "assistant" as const, content: "ok" }, { role: "user" as const, content: "next" }];
    await send(r, next, "hostage");
    const sent = chats(r).at(-1)?.body?.messages as Msg[];
    expect(sent.length).toBeLessThan(next.length);
    expect(sent[2].content).toContain("[Summary of");
    expect(summarizer.calls).toBe(1);
  });

  it("sends the last good summary when a later compaction passes the deadline", async () => {
    summarizer = await startSummarizer("hold");
    summarizer.release();
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const history = longConversation(30);
    await send(r, history, "again");
    expect(summarizer.calls).toBe(1);
    const first = chats(r)[0].body?.messages as Msg[];
    await summarizer.close();
    // The summarizer now hangs: the conversation grows past the threshold again.
    summarizer = await startSummarizer("hold");
    await r.proxy.context.config.update({ compaction: { summarizer: { baseURL: summarizer.url } } });
    const longer = [...history, ...longConversation(20, 80, "z").slice(3)];
    const pending = send(r, longer, "again");
    await expect.poll(() => summarizer?.calls, { timeout: 5000 }).toBe(1);
    await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
    clock.pass();
    await pending;
    const sent = chats(r).at(-1)?.body?.messages as Msg[];
    expect(sent[2].content).toBe(first[2].content);
    expect(sent.length).toBeLessThan(longer.length);
  });

  it("keeps one compaction waiting per conversation while its summarizer hangs: requests that already went out do not queue theirs", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const base = longConversation(30);
    const rounds = longConversation(60, 80, "z").slice(3, -1);
    // Each request adds ten rounds: past the window again even after the summary before it.
    for (let k = 0; k < 6; k++) {
      const pending = send(r, [...base, { role: "assistant", content: "ok" }, ...rounds.slice(0, 20 * k), { role: "user", content: `next ${k}` }], "stuck");
      await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
      clock.pass();
      await pending;
    }
    expect(summarizer.calls).toBe(1);
    summarizer.release();
    await r.proxy.context.compactor.idle();
    // The hanging compaction, then the newest request's: not one per request that went out meanwhile.
    expect(summarizer.calls).toBe(2);
    const record = await stored(r.proxy.context.store, "stuck");
    expect(record?.compactions).toBe(2);
    expect(record?.messageCount).toBe(base.length + 2 + 100);
  });

  it("holds no request's messages for the compactions given way while its summarizer hangs", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const base = longConversation(30);
    const go = async (k: number) => {
      const pending = send(r as Rig, [...base, { role: "assistant", content: "ok" }, { role: "user", content: `${k} ${"y".repeat(500_000)}` }], "heavy");
      await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
      clock.pass();
      await pending;
    };
    await go(0);
    await go(1);
    // What the fake upstream keeps of each request is not the proxy's.
    r.upstream.requests.length = 0;
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let k = 2; k < 22; k++) await go(k);
    r.upstream.requests.length = 0;
    gc();
    // 20 requests of 0.5 MB went out while the first summary hung: one of them waits to compact.
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(5_000_000);
    expect(summarizer.calls).toBe(1);
  });

  it("sends nothing upstream for a client that went away while its request waited for compaction", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const gone = new AbortController();
    const pending = r.client.chat.completions.create({ model: "fake-model", messages: longConversation(30) }, { headers: { "x-conversation-id": "left" }, signal: gone.signal });
    await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
    gone.abort();
    await expect(pending).rejects.toThrow();
    // The proxy has seen the client go (the request is no longer in flight) before compaction ends.
    await expect.poll(() => r?.proxy.context.life.inFlight, { timeout: 5000 }).toBe(0);
    clock.pass();
    summarizer.release();
    await r.proxy.context.compactor.idle();
    // A later request goes through the same upstream after anything the abandoned one would have sent.
    await send(r, [{ role: "user", content: "after" }], "other");
    expect(chats(r).map((q) => (q.body?.messages as Msg[]).at(-1)?.content)).toEqual(["after"]);
  });

  it("keeps the compaction of a client that went away for its retry, when the conversation has no id too", async () => {
    summarizer = await startSummarizer("hold");
    r = await rig({ config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const history = longConversation(30);
    const gone = new AbortController();
    // The first request of a conversation found by its messages alone (no id): the client gives up during the summary.
    const pending = r.client.chat.completions.create({ model: "fake-model", messages: history }, { signal: gone.signal });
    await expect.poll(() => summarizer?.calls, { timeout: 5000 }).toBe(1);
    gone.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => r?.proxy.context.life.inFlight, { timeout: 5000 }).toBe(0);
    summarizer.release();
    await r.proxy.context.compactor.idle();
    await expect.poll(async () => (await r?.proxy.context.store.list())?.[0]?.lastLength, { timeout: 5000 }).toBe(history.length);
    // The retry finds the conversation and its summary. Before: a new conversation ("new") and a second summary call.
    const retry = await r.client.chat.completions.create({ model: "fake-model", messages: history }).withResponse();
    expect(retry.response.headers.get("x-ptc-conversation-source")).toBe("prefix");
    expect(summarizer.calls).toBe(1);
    expect((chats(r)[0].body?.messages as Msg[]).length).toBeLessThan(history.length);
  });

  it("counts the first compaction's wait in the deadline of the compaction a context-length error forces", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    const waits: number[] = [];
    const wait = (ms: number, signal: AbortSignal) => {
      waits.push(ms);
      return clock.wait(ms, signal);
    };
    // The upstream refuses the uncompacted prompt; the summary hangs past the deadline.
    r = await rig({ upstream: { contextTokens: 1500 }, proxy: { wait }, config: { compaction: { ...SMALL, deadlineMs: 40, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    const pending = send(r, longConversation(30), "twice").catch((e: unknown) => e);
    await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
    // Passed by the injected clock alone, at once: the wall clock has moved a few ms at most, so
    // what is left of the deadline must come from the compactor, not from elapsed time.
    clock.pass();
    // The forced compaction waits behind the hanging one: with nothing of the deadline left, not
    // for a whole deadline more. Before: a second wait of 40 ms (twice the promised bound).
    await expect.poll(() => waits.length, { timeout: 5000 }).toBe(2);
    expect(waits).toEqual([40, 0]);
    clock.pass();
    await pending;
    summarizer.release();
    await r.proxy.context.compactor.idle();
  });

  it("caps the summary calls of one compaction, retries included", async () => {
    summarizer = await startSummarizer("fail");
    r = await rig({ config: { compaction: { ...SMALL, maxSummaryCalls: 2, strategy: { name: "usage-ratio", options: { maxAttempts: 5 } }, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    await send(r, longConversation(30), "capped");
    expect(summarizer.calls).toBe(2);
    expect((await stored(r.proxy.context.store, "capped"))?.flagged).toBe(true);
  });

  it("does not count the reserved output in a learned window: a small window does not summarize on every request", async () => {
    // The upstream keeps at most 1500 prompt tokens and says so in its usage (it cuts the rest).
    r = await rig({ upstream: { promptTokens: (m) => Math.min(defaultPromptTokens(m), 1500) }, config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 }, reserveOutputTokens: 1000 } } });
    let history = longConversation(30);
    await send(r, history, "learn");
    expect((await stored(r.proxy.context.store, "learn"))?.truncated).toBe(true);
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) {
      history = [...history, { role: "assistant", content: `ok ${i}` }, { role: "user", content: `short ${i}` }];
      await send(r, history, "learn");
      counts.push(r.upstream.summaryCalls);
    }
    // One summary to fit the learned window, then none while the short turns fit.
    expect(counts[4] - counts[0]).toBe(0);
    expect(counts[0]).toBeGreaterThanOrEqual(1);
  });
});

describe("the body budget of a compaction that outlives its request", () => {
  const SUMMARY = (url: string) => ({ compaction: { ...SMALL, summarizer: { baseURL: url, apiKey: "sk-sum" } } });

  it("keeps a request's body counted in maxInFlightBodyBytes while its compaction goes on past the deadline", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { maxInFlightBodyBytes: 1_000_000, ...SUMMARY(summarizer.url) } });
    const bodies = r.proxy.context.bodies;
    const history = longConversation(30);
    const size = Buffer.byteLength(JSON.stringify({ model: "fake-model", messages: history }));
    const pending = send(r, history, "outlives");
    await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
    clock.pass();
    await pending;
    await expect.poll(() => r?.proxy.context.life.inFlight, { timeout: 5000 }).toBe(0);
    // The reply has gone; the summary call still holds the request's messages. Before: 0 here, and
    // any number of such requests (one per conversation) held their bodies past the total.
    expect(bodies.used).toBe(size);
    summarizer.release();
    await r.proxy.context.compactor.idle();
    await expect.poll(() => bodies.used, { timeout: 5000 }).toBe(0);
  });

  it("gives back the body of a compaction waiting its turn once a newer request's replaces it", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { maxInFlightBodyBytes: 10_000_000, ...SUMMARY(summarizer.url) } });
    const bodies = r.proxy.context.bodies;
    const base = longConversation(30);
    const sizes: number[] = [];
    for (let k = 0; k < 3; k++) {
      const messages: OpenAI.ChatCompletionMessageParam[] = [...base, { role: "assistant", content: "ok" }, ...longConversation(10 * k, 80, "z").slice(3), { role: "user", content: `next ${k}` }];
      sizes.push(Buffer.byteLength(JSON.stringify({ model: "fake-model", messages })));
      const pending = send(r, messages, "queued");
      await expect.poll(() => clock.pending, { timeout: 5000 }).toBe(1);
      clock.pass();
      await pending;
      await expect.poll(() => r?.proxy.context.life.inFlight, { timeout: 5000 }).toBe(0);
    }
    // The first compaction runs, the third waits behind it; the second gave way and holds nothing.
    expect(bodies.used).toBe(sizes[0] + sizes[2]);
    summarizer.release();
    await r.proxy.context.compactor.idle();
    await expect.poll(() => bodies.used, { timeout: 5000 }).toBe(0);
  });

  it("keeps the body of a client that left during its compaction counted until the compaction ends", async () => {
    summarizer = await startSummarizer("hold");
    const clock = manualDeadline();
    r = await rig({ proxy: { wait: clock.wait }, config: { maxInFlightBodyBytes: 1_000_000, ...SUMMARY(summarizer.url) } });
    const bodies = r.proxy.context.bodies;
    const history = longConversation(30);
    const size = Buffer.byteLength(JSON.stringify({ model: "fake-model", messages: history }));
    const gone = new AbortController();
    const pending = r.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "left-early" }, signal: gone.signal });
    await expect.poll(() => summarizer?.calls, { timeout: 5000 }).toBe(1);
    gone.abort();
    await expect(pending).rejects.toThrow();
    await expect.poll(() => r?.proxy.context.life.inFlight, { timeout: 5000 }).toBe(0);
    expect(bodies.used).toBe(size);
    // A second body from another conversation does not fit beside it.
    const refused = await fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json", "x-conversation-id": "second" }, body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "x".repeat(990_000) }] }) });
    expect(refused.status).toBe(503);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("body_budget_exceeded");
    clock.pass();
    summarizer.release();
    await r.proxy.context.compactor.idle();
    await expect.poll(() => bodies.used, { timeout: 5000 }).toBe(0);
  });
});
