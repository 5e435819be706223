// Many clients and more than one process on one store: two proxies on one SQLite file (two on the
// default state directory) or replicas on PostgreSQL. Every step that must happen while another
// is in flight is held by a barrier (a summarizer that holds its calls, a hook on the store), so
// nothing here depends on the machine's speed.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadSqlite } from "../../src/proxy/sqlite-store.js";
import { openStore, type ConversationStore } from "../../src/proxy/store.js";
import { loopTurns } from "../support/loop-turns.js";
import { freshDatabase, postgresUrl } from "../support/postgres.js";
import { longConversation, manualDeadline, rig, startSummarizer, stored, tempDir, type Rig, type Summarizer } from "./setup.js";

const ROOT = join(import.meta.dirname, "../..");
const pgAdmin = postgresUrl();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanups.splice(0).reverse()) await f();
});

const SMALL = { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 };
const send = (x: Rig, messages: ReturnType<typeof longConversation>, id: string) => x.client.chat.completions.create({ model: "fake-model", messages }, { headers: { "x-conversation-id": id } });

/** Resolves once `store.locked` has been called (and made its first attempt at the lock). */
function onLocked(store: ConversationStore): Promise<void> {
  const original = store.locked.bind(store);
  return new Promise((resolve) => {
    store.locked = <T>(id: string, fn: () => Promise<T>): Promise<T> => {
      const held = original(id, fn);
      resolve();
      return held;
    };
  });
}

/** Two proxies on one SQLite file, summarizing through `summarizer`; both send to a's upstream. */
async function pairOnFile(summarizer: Summarizer, db = join(tempDir(), "proxy.db")) {
  const config = { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } };
  const a = await rig({ config, proxy: { db } });
  cleanups.push(() => a.close());
  const b = await rig({ config, proxy: { db, upstream: a.upstream.url } });
  cleanups.push(() => b.close());
  return { a, b, db };
}

describe("two proxies on one SQLite file", { timeout: 60_000 }, () => {
  it("compact one conversation once between them: the second waits for the first's summary", async () => {
    const summarizer = await startSummarizer("hold");
    cleanups.push(() => summarizer.close());
    const { a, b, db } = await pairOnFile(summarizer);
    const history = longConversation(30);
    const first = send(a, history, "race");
    await expect.poll(() => summarizer.calls, { timeout: 10_000 }).toBe(1);
    // b's compaction asks for the lock while a's summary call is held.
    const asked = onLocked(b.proxy.context.store);
    const second = send(b, history, "race");
    await asked;
    summarizer.release();
    const replies = await Promise.all([first, second]);
    for (const r of replies) expect(r.choices[0].message.content).toContain("final question a");
    expect(summarizer.calls).toBe(1);
    // Both requests went out with the one summary.
    const sent = a.upstream.requests.filter((q) => q.path === "/v1/chat/completions");
    expect(sent).toHaveLength(2);
    for (const q of sent) expect(JSON.stringify(q.body?.messages)).toContain("[Summary of");
    await a.proxy.close();
    await b.proxy.close();
    const store = await openStore(db);
    cleanups.push(() => store.close());
    expect((await stored(store, "race"))?.compactions).toBe(1);
  });
});

describe("conversation store: a process on the same SQLite file killed mid-work", { timeout: 60_000 }, () => {
  it("leaves its compaction lease to be taken over at once, and a file the others keep using", async () => {
    const dir = tempDir();
    const db = join(dir, "s.db");
    // A process that holds a conversation's lease, then writes records in a loop until it is killed.
    const script = join(dir, "holder.mts");
    writeFileSync(
      script,
      `import { SqliteStore } from ${JSON.stringify(join(ROOT, "src/proxy/sqlite-store.ts"))};
const store = new SqliteStore(${JSON.stringify(db)});
void store.locked("t:held", () => {
  process.stdout.write("held\\n");
  let i = 0;
  const more = () => {
    for (let k = 0; k < 50; k++) { i++; void store.put({ id: "t:c" + (i % 200), tenant: "t", conversation: "c" + (i % 200), source: "header", createdAt: i, updatedAt: i, messageCount: i, strategy: "", state: { summary: "x".repeat(2000) }, compactions: 0, failures: 0, flagged: false, usageRatio: 0, estimatedTokens: 0, calibration: 1, truncated: false, lastHash: "", lastLength: 0, indexed: [] }, "b".repeat(5000)); }
    void store.flush();
    if (i === 500) process.stdout.write("writing\\n");
    setImmediate(more);
  };
  more();
  return new Promise(() => {});
});
`,
    );
    // Open before the holder starts, and used after it is killed.
    const store = await openStore(db);
    cleanups.push(() => store.close());
    const child = spawn(process.execPath, ["--import", "tsx", script], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    await expect.poll(() => out, { timeout: 30_000 }).toContain("writing");
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGKILL");
    await exited;
    // Taken over at once: its holder no longer runs.
    expect(await store.locked("t:held", async () => "mine")).toBe("mine");
    const check = new (loadSqlite())(db, { readonly: true });
    expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    check.close();
    expect(await store.count()).toBeGreaterThan(0);
    const r = (await store.list())[0];
    r.messageCount = -1;
    await store.put(r);
    await store.flush();
    expect(store.writeError).toBeUndefined();
  });
});

describe("conversation store: a lease left in the SQLite file by an earlier process with this one's pid", () => {
  it("is taken over at once (a container's proxy restarted as pid 1 on the same host name)", async () => {
    const db = join(tempDir(), "s.db");
    const store = await openStore(db);
    cleanups.push(() => store.close());
    const file = new (loadSqlite())(db);
    file.prepare("INSERT INTO leases (id, owner, host, pid, expires) VALUES (?, ?, ?, ?, ?)").run("t:left", "an-earlier-process", hostname(), process.pid, Date.now() + 3_600_000);
    file.close();
    let ran = false;
    // The first attempt at the lease is made at the call: taken, fn runs before locked returns.
    const done = store.locked("t:left", async () => {
      ran = true;
    });
    // Before: taken for this process's own, the lease was waited for until it ran out (30 s, here an hour).
    expect(ran).toBe(true);
    await done;
  });
});

describe("clients on one conversation at once", { timeout: 60_000 }, () => {
  it("a retry of a new conversation's first request (no id), sent while its summary runs, waits for that summary instead of making its own", async () => {
    const summarizer = await startSummarizer("hold");
    cleanups.push(() => summarizer.close());
    const clock = manualDeadline();
    const x = await rig({ proxy: { wait: clock.wait }, config: { compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    cleanups.push(() => x.close());
    const history = longConversation(30);
    const first = x.client.chat.completions.create({ model: "fake-model", messages: history }).withResponse();
    await expect.poll(() => summarizer.calls, { timeout: 10_000 }).toBe(1);
    // The client gives up waiting and sends the same request again: it reaches compaction (its deadline is waited for).
    const retry = x.client.chat.completions.create({ model: "fake-model", messages: history }).withResponse();
    await expect.poll(() => clock.pending, { timeout: 10_000 }).toBe(2);
    summarizer.release();
    const replies = await Promise.all([first, retry]);
    // Before: the retry started a conversation of its own and paid a second summary call.
    expect(summarizer.calls).toBe(1);
    const ids = replies.map((r) => r.response.headers.get("x-ptc-conversation-id"));
    expect(ids[1]).toBe(ids[0]);
    for (const q of x.upstream.requests.filter((q) => q.path === "/v1/chat/completions")) expect(JSON.stringify(q.body?.messages)).toContain("[Summary of");
  });
  it("compacts two unrelated requests with no conversation (prefix matching off) at once, not one behind the other's summary", async () => {
    const summarizer = await startSummarizer("hold");
    cleanups.push(() => summarizer.close());
    const clock = manualDeadline();
    // Both arrive within one millisecond of the clock (here: a clock that stands still).
    const x = await rig({ proxy: { wait: clock.wait, now: () => 1_700_000_000_000 }, config: { identity: { prefixMatch: false }, compaction: { ...SMALL, summarizer: { baseURL: summarizer.url, apiKey: "sk-sum" } } } });
    cleanups.push(() => x.close());
    const one = x.client.chat.completions.create({ model: "fake-model", messages: longConversation(30, 80, "a") });
    await expect.poll(() => summarizer.calls, { timeout: 10_000 }).toBe(1);
    const two = x.client.chat.completions.create({ model: "fake-model", messages: longConversation(30, 80, "b") });
    await expect.poll(() => clock.pending, { timeout: 10_000 }).toBe(2);
    // Before: both were keyed conv-once-<ms>, so the second waited behind the first's summary call
    // (and, past the deadline, went out uncompacted).
    await expect.poll(() => summarizer.calls, { timeout: 10_000 }).toBe(2);
    summarizer.release();
    await Promise.all([one, two]);
    for (const q of x.upstream.requests.filter((q) => q.path === "/v1/chat/completions")) expect(JSON.stringify(q.body?.messages)).toContain("[Summary of");
  });

  it("answers a new conversation without an id while the SQLite file takes no writes (its prefix index cannot be written)", async () => {
    const db = join(tempDir(), "proxy.db");
    const x = await rig({ proxy: { db } });
    cleanups.push(() => x.close());
    const other = new (loadSqlite())(db);
    other.exec("DROP TABLE prefixes");
    other.close();
    const reply = await x.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "hello" }] }).withResponse();
    expect(reply.data.choices[0].message.content).toContain("hello");
    expect(reply.response.headers.get("x-ptc-conversation-source")).toBe("new");
    expect(x.logs.some((l) => l.event === "store_error")).toBe(true);
  });
});

describe("conversation store: a SQLite file another connection keeps locked past the busy timeout", { timeout: 60_000 }, () => {
  it("skips the compaction with an error instead of running it without the lease", async () => {
    const db = join(tempDir(), "s.db");
    const store = await openStore(db);
    cleanups.push(() => store.close());
    // Another process's long write transaction (a backup, a sqlite3 shell left in BEGIN IMMEDIATE).
    const other = new (loadSqlite())(db);
    other.exec("BEGIN IMMEDIATE");
    let ran = false;
    // Before: SQLITE_BUSY was taken for a full disk and fn ran unlocked, so the other process
    // could take the lease meanwhile and both make a summary call for one conversation.
    const busy = store.locked("t:busy", async () => {
      ran = true;
    });
    await expect(busy).rejects.toThrow(/locked by another connection/);
    expect(ran).toBe(false);
    other.exec("ROLLBACK");
    other.close();
    // The file free again, the lease is taken as usual.
    expect(await store.locked("t:busy", async () => "mine")).toBe("mine");
  });
});

describe("virtual key budget: a SQLite file another connection keeps locked past the busy timeout", { timeout: 60_000 }, () => {
  it("refuses to reserve (the request is answered store_unavailable) instead of passing on a stale spend", async () => {
    const db = join(tempDir(), "s.db");
    const store = await openStore(db);
    cleanups.push(() => store.close());
    expect(await store.reserve("small", 10, 100)).toBe(true);
    // Another proxy on the file spends the rest of the budget, then its connection keeps the write lock.
    const other = new (loadSqlite())(db);
    other.prepare("UPDATE spend SET tokens = 100 WHERE name = ?").run("small");
    other.exec("BEGIN IMMEDIATE");
    // Before: SQLITE_BUSY was taken for a full disk and the reservation passed against the spend
    // last seen here (10 of 100), so the key went over its budget.
    await expect(store.reserve("small", 10, 100)).rejects.toThrow(/locked/);
    other.exec("ROLLBACK");
    other.close();
    expect(await store.reserve("small", 10, 100)).toBe(false);
    expect(await store.spent("small")).toBe(100);
  });
});

describe("a SQLite file another process holds the write lock of for a while", { timeout: 60_000 }, () => {
  /** Another process in a write transaction (a second proxy's long commit, a sqlite3 shell in BEGIN IMMEDIATE) until `release`. */
  async function lockHolder(db: string) {
    const script = `const db = new (require("better-sqlite3"))(${JSON.stringify(db)});
db.exec("BEGIN IMMEDIATE");
process.stdout.write("held\\n");
process.stdin.once("data", () => { db.exec("COMMIT"); db.close(); process.exit(0); });`;
    const child = spawn(process.execPath, ["-e", script], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
    const ended = new Promise((resolve) => child.once("exit", resolve));
    cleanups.push(async () => {
      child.kill();
      await ended;
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    await expect.poll(() => out, { timeout: 30_000 }).toContain("held");
    return {
      release: async () => {
        child.stdin.write("go\n");
        await ended;
      },
    };
  }

  it("keeps the event loop turning while its writes wait for the lock, and makes them once it is free", async () => {
    const db = join(tempDir(), "s.db");
    const store = await openStore(db);
    cleanups.push(() => store.close());
    const holder = await lockHolder(db);
    const turns = loopTurns();
    const record = { id: "t:c", tenant: "t", conversation: "c", source: "header", createdAt: 1, updatedAt: 1, messageCount: 1, strategy: "", state: null, compactions: 0, failures: 0, flagged: false, usageRatio: 0, estimatedTokens: 0, calibration: 1, truncated: false, lastHash: "", lastLength: 0, indexed: [] };
    // Before: each write waited for the lock inside the event loop (better-sqlite3's 5 s busy
    // timeout), so no other request, stream or /healthz was served meanwhile, and then failed
    // with SQLITE_BUSY (the request body of the put was dropped).
    const writes: Promise<unknown>[] = [store.addPrefix("h-c", "t:c"), store.reserve("k", 10, 100), store.addSpend("k", 5), store.put(record, "body").then(() => store.flush()), store.locked("t:c", async () => "ran")];
    let settled = 0;
    for (const w of writes) void w.then(() => settled++, () => settled++);
    await expect.poll(() => turns.count(), { timeout: 30_000 }).toBeGreaterThan(200);
    expect(settled).toBe(0);
    await holder.release();
    const results = await Promise.all(writes);
    turns.stop();
    expect(results[1]).toBe(true);
    expect(results[4]).toBe("ran");
    expect(store.writeError).toBeUndefined();
    expect(await store.spent("k")).toBe(15);
    const reopened = await openStore(db);
    cleanups.push(() => reopened.close());
    expect(await reopened.body("t:c")).toBe("body");
    expect(await reopened.longestPrefix(["h-c"])).toEqual({ index: 0, id: "t:c" });
    expect(await reopened.spent("k")).toBe(15);
  });
});

describe("conversation store: closed while a compaction waits for another connection's lock on the SQLite file", () => {
  it("does not run the compaction once the store is closed", async () => {
    const db = join(tempDir(), "s.db");
    const store = await openStore(db);
    const other = new (loadSqlite())(db);
    other.exec("BEGIN IMMEDIATE");
    let ran = false;
    const waiting = store.locked("t:c", async () => {
      ran = true;
    });
    await store.close();
    other.exec("ROLLBACK");
    other.close();
    await expect(waiting).rejects.toThrow(/closed/);
    expect(ran).toBe(false);
  });
});

describe("a slow reply to an earlier turn, finishing after a later turn's", { timeout: 60_000 }, () => {
  // One proxy, two proxies on one SQLite file, two replicas on one PostgreSQL database: turn N is
  // held upstream on the first, turn N+1 answered on the second (the same proxy when there is one).
  const where: { name: string; db?: () => Promise<string>; two: boolean }[] = [
    { name: "one proxy", two: false },
    { name: "two proxies on one SQLite file", db: async () => join(tempDir(), "proxy.db"), two: true },
    ...(pgAdmin === undefined ? [] : [{ name: "two replicas on PostgreSQL", two: true, db: async () => {
      const db = await freshDatabase(pgAdmin);
      cleanups.push(db.drop);
      return db.url;
    } }]),
  ];
  it.each(where)("leaves the record and the stored body at the later turn: $name", async ({ db, two }) => {
    // Arrival order told by a clock both proxies share, one tick per reading.
    let tick = 1_700_000_000_000;
    const now = () => ++tick;
    const at = await db?.();
    const a = await rig({ proxy: { now, ...(at === undefined ? {} : { db: at }) } });
    cleanups.push(() => a.close());
    const b = two ? await rig({ proxy: { now, db: at, upstream: a.upstream.url } }) : a;
    if (two) cleanups.push(() => b.close());
    const turnN: ReturnType<typeof longConversation> = [{ role: "user", content: "task T" }, { role: "assistant", content: "a1" }, { role: "user", content: "q2" }];
    const turnN1: ReturnType<typeof longConversation> = [...turnN, { role: "assistant", content: "a2" }, { role: "user", content: "q3" }];
    const slow = a.client.chat.completions.create({ model: "fake-model", messages: turnN }, { headers: { "x-conversation-id": "c1", "x-fake-mode": "hold" } });
    await expect.poll(() => a.upstream.held, { timeout: 10_000 }).toBe(1);
    await send(b, turnN1, "c1");
    a.upstream.release();
    await slow;
    for (const x of [a, b]) {
      const record = (await stored(x.proxy.context.store, "c1")) as NonNullable<Awaited<ReturnType<typeof stored>>>;
      // Before: 3 and turn N's body, the later turn's lost.
      expect(record.messageCount).toBe(5);
      const body = JSON.parse((await x.proxy.context.store.body(record.id)) ?? "{}") as { messages?: unknown[] };
      expect(body.messages).toEqual(turnN1);
    }
  });
  it.each(where.filter((w) => w.two))("leaves them at the later of two turns sent one after the other, from a replica whose clock is behind: $name", async ({ db }) => {
    const at = await db?.();
    // a's clock runs a minute ahead of b's.
    let tick = 1_700_000_000_000;
    const a = await rig({ proxy: { now: () => ++tick + 60_000, db: at } });
    cleanups.push(() => a.close());
    const b = await rig({ proxy: { now: () => ++tick, db: at, upstream: a.upstream.url } });
    cleanups.push(() => b.close());
    const turnN: ReturnType<typeof longConversation> = [{ role: "user", content: "task T" }, { role: "assistant", content: "a1" }, { role: "user", content: "q2" }];
    const turnN1: ReturnType<typeof longConversation> = [...turnN, { role: "assistant", content: "a2" }, { role: "user", content: "q3" }];
    await send(a, turnN, "c2");
    await send(b, turnN1, "c2");
    const record = (await stored(b.proxy.context.store, "c2")) as NonNullable<Awaited<ReturnType<typeof stored>>>;
    expect(record.messageCount).toBe(5);
    expect((JSON.parse((await b.proxy.context.store.body(record.id)) ?? "{}") as { messages?: unknown[] }).messages).toEqual(turnN1);
  });
  it.each(where.filter((w) => w.two))("leaves them at the later turn when a slow reply finishes last on a replica whose clock is behind: $name", async ({ db }) => {
    const at = await db?.();
    // a's clock runs a minute ahead of b's: b's two turns after a's are both stamped past a's.
    let tick = 1_700_000_000_000;
    const a = await rig({ proxy: { now: () => ++tick + 60_000, db: at } });
    cleanups.push(() => a.close());
    const b = await rig({ proxy: { now: () => ++tick, db: at, upstream: a.upstream.url } });
    cleanups.push(() => b.close());
    const turn1: ReturnType<typeof longConversation> = [{ role: "user", content: "task T" }];
    const turnN: ReturnType<typeof longConversation> = [...turn1, { role: "assistant", content: "a1" }, { role: "user", content: "q2" }];
    const turnN1: ReturnType<typeof longConversation> = [...turnN, { role: "assistant", content: "a2" }, { role: "user", content: "q3" }];
    await send(a, turn1, "c3");
    const slow = b.client.chat.completions.create({ model: "fake-model", messages: turnN }, { headers: { "x-conversation-id": "c3", "x-fake-mode": "hold" } });
    await expect.poll(() => a.upstream.held, { timeout: 10_000 }).toBe(1);
    await send(b, turnN1, "c3");
    a.upstream.release();
    await slow;
    const record = (await stored(b.proxy.context.store, "c3")) as NonNullable<Awaited<ReturnType<typeof stored>>>;
    // Before: 3 and turn N's body (both of b's turns were stamped a's turn + 1).
    expect(record.messageCount).toBe(5);
    expect((JSON.parse((await b.proxy.context.store.body(record.id)) ?? "{}") as { messages?: unknown[] }).messages).toEqual(turnN1);
  });
});
