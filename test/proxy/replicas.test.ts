// Two `ptc proxy` processes on one PostgreSQL database, as two replicas behind a load balancer:
// a conversation moves between them at every request (the official openai client against a fake
// upstream on 127.0.0.1) and the upstream sees exactly what one proxy would have sent; two
// replicas compacting the same conversation at once make one summary between them; a replica whose
// database stops answering says so (503 store_unavailable, not ready) instead of answering blind.
import { spawn, type ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { explicitIdentity } from "../../src/proxy/identity.js";
import type { ChatMessage } from "../../src/llm/types.js";
import { openStore } from "../../src/proxy/store.js";
import { hashKey, tenantOf } from "../../src/proxy/tenancy.js";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-openai.js";
import { freshDatabase, postgresUrl } from "../support/postgres.js";
import { longConversation, manualDeadline, rig, stored, tempDir } from "./setup.js";

const pgAdmin = postgresUrl();
const ROOT = join(import.meta.dirname, "../..");
// The fake model's window as the proxy knows it: the 30-round conversations below are ~6k tokens.
const SMALL = { compaction: { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } };

const children: ChildProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill("SIGKILL");
  for (const f of cleanups.splice(0).reverse()) await f();
});

/** `ptc proxy` from the sources in its own process; resolves with its URL once it listens. */
async function replica(upstream: FakeUpstream, db: string): Promise<string> {
  const config = join(tempDir(), "config.json");
  writeFileSync(config, JSON.stringify(SMALL));
  const p = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "proxy", "--port", "0", "--upstream", upstream.url, "--db", db, "--config", config], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PTC_PROXY_ADMIN_TOKEN: "" },
  });
  children.push(p);
  let out = "";
  let err = "";
  p.stdout?.on("data", (c: Buffer) => (out += c.toString()));
  p.stderr?.on("data", (c: Buffer) => (err += c.toString()));
  await expect.poll(() => out + (p.exitCode === null ? "" : `exited: ${err}`), { timeout: 150_000, interval: 50 }).toMatch(/listening on|exited/);
  const url = /listening on (http:\/\/[^/\s]+)/.exec(out)?.[1];
  if (url === undefined) throw new Error(`the proxy did not start: ${err}`);
  return url;
}

const client = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: "sk-client-key", maxRetries: 0, timeout: 20_000 });
const chatBodies = (u: FakeUpstream) => u.requests.filter((q) => q.path === "/v1/chat/completions").map((q) => JSON.stringify(q.body?.messages));

/** A conversation of `turns` requests, each resending the history with the last reply and a new question. */
async function converse(pick: (turn: number) => OpenAI, turns: number, id?: string): Promise<{ ids: string[]; sources: string[] }> {
  let history = longConversation(30);
  const ids: string[] = [];
  const sources: string[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const { data, response } = await pick(turn)
      .chat.completions.create({ model: "fake-model", messages: history }, id === undefined ? {} : { headers: { "x-conversation-id": id } })
      .withResponse();
    ids.push(response.headers.get("x-ptc-conversation-id") ?? "");
    sources.push(response.headers.get("x-ptc-conversation-source") ?? "");
    history = [...history, { role: "assistant", content: data.choices[0].message.content ?? "" }, { role: "user", content: `follow-up ${turn}: ${"detail ".repeat(40)}` }];
  }
  return { ids, sources };
}

/** Two proxy processes on a fresh database, both sending to one fake upstream. */
async function replicaPair() {
  const db = await freshDatabase(pgAdmin as string);
  cleanups.push(db.drop);
  const upstream = await startFakeUpstream();
  cleanups.push(() => upstream.close());
  const [a, b] = await Promise.all([replica(upstream, db.url), replica(upstream, db.url)]);
  return { db, upstream, a, b };
}

describe.skipIf(pgAdmin === undefined)("proxy replicas on PostgreSQL", { timeout: 400_000 }, () => {
  it("moves a conversation between two proxy processes at every request, sending what one proxy would", async () => {
    // What one proxy sends upstream for the conversation (in process, embedded store).
    const single = await rig({ config: SMALL });
    cleanups.push(() => single.close());
    const alone = await converse(() => single.client, 8);
    const expected = chatBodies(single.upstream);
    expect(single.upstream.summaryCalls).toBeGreaterThan(0);

    const { db, upstream, a, b } = await replicaPair();
    const clients = [client(a), client(b)];
    // No conversation id: found by prefix on whichever replica the request lands.
    const moved = await converse((turn) => clients[turn % 2], 8);
    expect(new Set(moved.ids).size).toBe(1);
    expect(moved.sources).toEqual(alone.sources);
    expect(chatBodies(upstream)).toEqual(expected);
    expect(upstream.summaryCalls).toBe(single.upstream.summaryCalls);

    // The same with an explicit id, starting on the other replica.
    const before = upstream.summaryCalls;
    const named = await converse((turn) => clients[(turn + 1) % 2], 4, "named");
    expect(named.ids).toEqual(["named", "named", "named", "named"]);
    const store = await openStore(db.url);
    cleanups.push(() => store.close());
    expect((await stored(store, "named"))?.messageCount).toBe(longConversation(30).length + 6);
    expect((await stored(store, "named"))?.compactions).toBe(upstream.summaryCalls - before);
  });

  it("two replicas compacting one conversation at once make one summary between them", async () => {
    const { db, upstream, a, b } = await replicaPair();
    const history = longConversation(30);
    const ask = (url: string) => client(url).chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "race" } });
    const replies = await Promise.all([ask(a), ask(b), ask(a), ask(b)]);
    for (const r of replies) expect(r.choices[0].message.content).toContain("final question a");
    expect(upstream.summaryCalls).toBe(1);
    // Every request went out compacted, with the one summary.
    const sent = upstream.requests.filter((q) => q.path === "/v1/chat/completions" && !JSON.stringify(q.body).includes("ConversationSummary"));
    expect(sent).toHaveLength(4);
    for (const q of sent) expect(JSON.stringify(q.body?.messages)).toContain("[Summary of");
    const store = await openStore(db.url);
    cleanups.push(() => store.close());
    expect((await stored(store, "race"))?.compactions).toBe(1);
  });

  it("keeps apart two histories sent under one conversation id across replicas, each with its own summary", async () => {
    /** Two histories, alternately, 5 requests each, through `pick`; `ids` names each history's conversation. */
    const alternate = async (pick: (i: number) => OpenAI, ids: [string, string]) => {
      const histories = [longConversation(30, 80, "a"), longConversation(30, 80, "b")];
      for (let i = 0; i < 10; i++) {
        const h = i % 2;
        const reply = await pick(i).chat.completions.create({ model: "fake-model", messages: histories[h] }, { headers: { "x-conversation-id": ids[h] } });
        histories[h] = [...histories[h], { role: "assistant", content: reply.choices[0].message.content ?? "" }, { role: "user", content: `more ${h}-${i}` }];
      }
    };
    // What the two histories cost under ids of their own, on one proxy.
    const single = await rig({ config: SMALL });
    cleanups.push(() => single.close());
    await alternate(() => single.client, ["own-a", "own-b"]);
    expect(single.upstream.summaryCalls).toBeGreaterThan(0);

    const { upstream, a, b } = await replicaPair();
    const clients = [client(a), client(b)];
    // Each replica sees both histories in turn, as a balancer would send them.
    await alternate((i) => clients[Math.floor(i / 2) % 2], ["shared", "shared"]);
    expect(upstream.summaryCalls).toBe(single.upstream.summaryCalls);
  });

  it("answers 503 store_unavailable, and is not ready, while its database does not answer", async () => {
    const db = await freshDatabase(pgAdmin as string);
    cleanups.push(db.drop);
    const r = await rig({ proxy: { db: db.url, adminToken: "admin-secret" } });
    cleanups.push(() => r.close());
    await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-conversation-id": "gone" } });
    expect((await fetch(`${r.proxy.url}/readyz`)).status).toBe(200);
    await db.drop();
    const failed = await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "again" }] }, { headers: { "x-conversation-id": "gone" } }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ status: 503, code: "store_unavailable" });
    // The admin routes that read the store say so too, not "internal proxy error".
    const admin = { authorization: "Bearer admin-secret" };
    const status = await fetch(`${r.proxy.url}/ext/context_compaction/status`, { headers: admin });
    expect(status.status).toBe(503);
    expect(((await status.json()) as { error: { code: string } }).error.code).toBe("store_unavailable");
    const compact = await fetch(`${r.proxy.url}/ext/context_compaction/compact`, { method: "POST", headers: admin, body: JSON.stringify({ conversation: "gone" }) });
    expect(compact.status).toBe(503);
    expect(r.logs.some((l) => l.event === "internal_error")).toBe(false);
    const ready = await fetch(`${r.proxy.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { store: string }).store).toBe("write failing");
    expect(r.logs.some((l) => l.event === "store_not_ready" && /database/.test(String(l.error)))).toBe(true);
    // Nor does /metrics, open too, quote the database's error.
    const metrics = await fetch(`${r.proxy.url}/metrics`);
    expect(metrics.status).toBe(503);
    expect(await metrics.text()).not.toMatch(/database/);
    expect(r.logs.some((l) => l.event === "store_error")).toBe(true);
  });

  it("answers 503 store_unavailable, not an internal error, to a budgeted virtual key while its database does not answer", async () => {
    const db = await freshDatabase(pgAdmin as string);
    cleanups.push(db.drop);
    const r = await rig({ proxy: { db: db.url }, config: { tenancy: { virtualKeys: { team: { keyHash: hashKey("ptc-vk-team"), tokenBudget: 1_000_000 } } } } });
    cleanups.push(() => r.close());
    const team = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: "ptc-vk-team", maxRetries: 0, timeout: 20_000 });
    await team.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }, { headers: { "x-conversation-id": "budgeted" } });
    await db.drop();
    // Its budget is read from the database before anything else: chat, and a path forwarded untouched.
    const chat = await team.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "again" }] }, { headers: { "x-conversation-id": "budgeted" } }).catch((e: unknown) => e);
    expect(chat).toMatchObject({ status: 503, code: "store_unavailable" });
    const models = await fetch(`${r.proxy.url}/v1/models`, { headers: { authorization: "Bearer ptc-vk-team" } });
    expect(models.status).toBe(503);
    expect(models.headers.get("retry-after")).toBe("1");
    expect(r.logs.some((l) => l.event === "internal_error")).toBe(false);
    expect(r.logs.some((l) => l.event === "store_error")).toBe(true);
  });
});

// Two proxies on one SQLite file (two on the default state directory): each keeps records in
// memory, and each must serve what the other wrote, not its own stale copy.
describe("two proxies on one SQLite file", { timeout: 60_000 }, () => {
  it("moves a conversation between them at every request, sending what one proxy would and keeping one record", async () => {
    const single = await rig({ config: SMALL });
    cleanups.push(() => single.close());
    await converse(() => single.client, 8, "named");
    const expected = chatBodies(single.upstream);
    expect(single.upstream.summaryCalls).toBeGreaterThan(0);

    const db = join(tempDir(), "proxy.db");
    const a = await rig({ config: SMALL, proxy: { db } });
    cleanups.push(() => a.close());
    // Both send to a's upstream, so it sees everything either proxy sent.
    const b = await rig({ config: SMALL, proxy: { db, upstream: a.upstream.url } });
    cleanups.push(() => b.close());
    const clients = [a.client, b.client];
    await converse((turn) => clients[turn % 2], 8, "named");
    expect(chatBodies(a.upstream)).toEqual(expected);
    expect(a.upstream.summaryCalls).toBe(single.upstream.summaryCalls);
    await a.proxy.close();
    await b.proxy.close();
    const store = await openStore(db);
    cleanups.push(() => store.close());
    expect((await stored(store, "named"))?.compactions).toBe(single.upstream.summaryCalls);
    expect((await stored(store, "named"))?.messageCount).toBe(longConversation(30).length + 14);
  });
});


describe.skipIf(pgAdmin === undefined)("a replica drained while a compaction waits for another replica's compaction lock", { timeout: 120_000 }, () => {
  // The wait is a query on a connection of its own (pg_advisory_lock, no timeout): closing the
  // store waited for that connection, so a drain past its timeout never ended, nor the process.
  it("ends at its drain timeout, the wait cut", async () => {
    const db = await freshDatabase(pgAdmin as string);
    cleanups.push(db.drop);
    const clock = manualDeadline();
    const r = await rig({ proxy: { db: db.url, wait: clock.wait }, config: SMALL });
    cleanups.push(() => r.upstream.close());
    const history = longConversation(30);
    // The other replica: holds the conversation's lock, as one running its summary does.
    const id = explicitIdentity(tenantOf("sk-client-key"), { "x-conversation-id": "held" }, {}, ["x-conversation-id"], [], history as ChatMessage[]);
    const holder = new pg.Client({ connectionString: db.url });
    await holder.connect();
    cleanups.push(() => holder.end());
    await holder.query("SELECT pg_advisory_lock(7369827, hashtext($1))", [id?.key]);
    const reply = r.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "held" } });
    await expect.poll(async () => (await holder.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n, { timeout: 60_000 }).toBe(1);
    // Its deadline passes: the request goes out with no summary, the compaction still waiting.
    clock.pass();
    expect((await reply).choices[0].message.content).toContain("final question a");
    let safety: NodeJS.Timeout | undefined;
    const drained = await Promise.race([r.proxy.drain(50), new Promise<string>((resolve) => (safety = setTimeout(() => resolve("still draining after 30 s"), 30_000)))]);
    clearTimeout(safety);
    // Before: "still draining after 30 s" (and for as long as the other replica held the lock).
    expect(drained).toBe(false);
  });
});
