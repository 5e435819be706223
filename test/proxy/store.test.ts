// One suite for every store backend: the embedded SQLite store (in memory and in a file) and
// PostgreSQL (a fresh database on the globalSetup's server). What only a shared store promises
// (no lost update between replicas, one compaction at a time across processes, a record moved
// between processes) runs against PostgreSQL with two store instances, as two replicas would be.
import { randomBytes } from "node:crypto";
import { createServer, connect, type Socket } from "node:net";
import { renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { newRecord } from "../../src/proxy/chat.js";
import { find } from "../../src/proxy/admin.js";
import type { ProxyContext } from "../../src/proxy/context.js";
import { mergeRecords } from "../../src/proxy/merge.js";
import { PostgresStore } from "../../src/proxy/pg-store.js";
import { HEAD_LENGTH, headKey, HEADS_PER_ID } from "../../src/proxy/heads.js";
import { openStore, type ConversationRecord, type ConversationStore } from "../../src/proxy/store.js";
import { freshDatabase, postgresUrl } from "../support/postgres.js";
import { tempDir } from "./setup.js";

const pgAdmin = postgresUrl();
const dropped: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const drop of dropped) await drop();
});

interface Backend {
  name: string;
  shared: boolean;
  /** A new empty store location; `open` may be called more than once on it (replicas). */
  location(): Promise<string>;
}

const backends: Backend[] = [
  { name: "sqlite in memory", shared: false, location: () => Promise.resolve(":memory:") },
  { name: "sqlite file", shared: false, location: () => Promise.resolve(join(tempDir(), "s.db")) },
  {
    name: "postgres",
    shared: true,
    async location() {
      const db = await freshDatabase(pgAdmin as string);
      dropped.push(db.drop);
      return db.url;
    },
  },
];

/** How many records a SQLite store reads back from its file from now on (its `records` statement, counted). */
function recordsRead(store: ConversationStore): () => number {
  const statements = (store as unknown as { statements: { records: { all(): { id: string; record: string }[] } } }).statements;
  const all = statements.records;
  let read = 0;
  statements.records = {
    all() {
      const rows = all.all();
      read += rows.length;
      return rows;
    },
  };
  return () => read;
}

/** How many record rows a store reads from now on: from PostgreSQL, or from a SQLite file (its record-reading statements). */
function rowsRead(store: ConversationStore): () => number {
  let read = 0;
  if (store.kind === "postgres") {
    const pool = (store as unknown as { pool: { query(...args: unknown[]): Promise<{ rows?: { record?: unknown }[] }> } }).pool;
    const query = pool.query.bind(pool);
    pool.query = async (...args: unknown[]) => {
      const result = await query(...args);
      read += result.rows?.filter((r) => r.record !== undefined).length ?? 0;
      return result;
    };
    return () => read;
  }
  const statements = (store as unknown as { statements: Record<string, { all(...args: unknown[]): unknown[] }> }).statements;
  for (const name of ["records", "named"]) {
    const real = statements[name];
    if (real === undefined) continue;
    statements[name] = {
      all(...args: unknown[]) {
        const rows = real.all(...args);
        read += rows.length;
        return rows;
      },
    };
  }
  return () => read;
}

const record = (id: string, now = 1000): ConversationRecord => newRecord({ key: `t:${id}`, id, source: "header:x-conversation-id" }, "t", now, undefined);

describe.each(backends.filter((b) => b.name !== "postgres" || pgAdmin !== undefined))("conversation store: $name", (backend) => {
  const open = async (where?: string): Promise<{ store: ConversationStore; where: string }> => {
    const at = where ?? (await backend.location());
    return { store: await openStore(at), where: at };
  };

  it("lists a page at a time in id order, each going on after the last", async () => {
    const { store } = await open();
    for (const id of ["d", "a", "c", "e", "b"]) await store.put(record(id));
    const pages: string[][] = [];
    let after: string | undefined;
    for (;;) {
      const page = (await store.list({ after, limit: 2 })).map((r) => r.id);
      if (page.length === 0) break;
      pages.push(page);
      after = page[page.length - 1];
    }
    expect(pages).toEqual([["t:a", "t:b"], ["t:c", "t:d"], ["t:e"]]);
    await store.close();
  });

  it("keeps records, message bodies and counts, and reads them back after a reopen", async () => {
    const { store, where } = await open();
    expect(store.kind).toBe(backend.shared ? "postgres" : "sqlite");
    const r = record("a");
    r.state = { summary: "S", covered: 3 };
    r.learnedLimit = 4000;
    await store.put(r, JSON.stringify({ messages: [{ role: "user", content: "hi" }] }));
    await store.put(record("b"));
    expect((await store.get("t:a"))?.state).toEqual({ summary: "S", covered: 3 });
    expect(await store.body("t:a")).toBe(JSON.stringify({ messages: [{ role: "user", content: "hi" }] }));
    expect(await store.body("t:b")).toBeUndefined();
    expect(await store.get("t:none")).toBeUndefined();
    expect(await store.count()).toBe(2);
    expect((await store.list()).map((x) => x.id).sort()).toEqual(["t:a", "t:b"]);
    await store.close();
    if (where === ":memory:") return;
    const again = await openStore(where);
    expect((await again.get("t:a"))?.learnedLimit).toBe(4000);
    expect(await again.body("t:a")).toBe(JSON.stringify({ messages: [{ role: "user", content: "hi" }] }));
    await again.close();
  });

  it("finds the longest stored prefix, and removes an index entry only for its own conversation", async () => {
    const { store } = await open();
    await store.addPrefix("h1", "t:a");
    await store.addPrefix("h3", "t:b");
    expect(await store.longestPrefix(["h1", "h2", "h3", "h4"])).toEqual({ index: 2, id: "t:b" });
    expect(await store.longestPrefix(["h1", "h2"])).toEqual({ index: 0, id: "t:a" });
    expect(await store.longestPrefix(["x"])).toBeUndefined();
    expect(await store.longestPrefix([])).toBeUndefined();
    await store.removePrefix("h3", "t:a");
    expect(await store.longestPrefix(["h3"])).toEqual({ index: 0, id: "t:b" });
    await store.removePrefix("h3", "t:b");
    expect(await store.longestPrefix(["h3"])).toBeUndefined();
    await store.close();
  });

  it("expires idle conversations with their messages and index entries", async () => {
    const { store } = await open();
    await store.put(record("old", 1000), JSON.stringify({ messages: [] }));
    await store.put(record("new", 5000));
    await store.addPrefix("h-old", "t:old");
    expect(await store.expire(2000)).toBe(1);
    expect(await store.get("t:old")).toBeUndefined();
    expect(await store.body("t:old")).toBeUndefined();
    expect(await store.longestPrefix(["h-old"])).toBeUndefined();
    expect(await store.get("t:new")).toBeDefined();
    expect(await store.expire(2000)).toBe(0);
    await store.close();
  });

  it("re-indexes every prefix of a conversation expired while one of its requests ran, when that request writes it back", async () => {
    const { store } = await open();
    // Three requests matched by prefix, each indexing its last hash (as remember does).
    const r = record("run", 1000);
    for (const h of ["h1", "h2", "h3"]) {
      r.indexed.push(h);
      await store.addPrefix(h, r.id);
    }
    r.lastHash = "h3";
    r.lastLength = 3;
    await store.put(r);
    await store.flush();
    // A fourth request reads it, then expiry deletes it (idle since 1000) while the request runs.
    const running = (await store.get(r.id)) as ConversationRecord;
    expect(await store.expire(2000)).toBe(1);
    // Meanwhile a new conversation sent the first request's messages again, and took its hash.
    await store.addPrefix("h1", "t:other");
    // The request ends: remember() indexes its own hash and writes the record back.
    running.updatedAt = 3000;
    running.lastHash = "h4";
    running.lastLength = 4;
    running.indexed.push("h4");
    await Promise.all([store.addPrefix("h4", running.id), store.put(running)]);
    await store.flush();
    // An edited turn that forks from the second request still finds the conversation (and its summary).
    expect(await store.longestPrefix(["h1", "h2", "x3"])).toEqual({ index: 1, id: r.id });
    expect(await store.longestPrefix(["h1", "h2", "h3", "h4"])).toEqual({ index: 3, id: r.id });
    // A hash another conversation took meanwhile stays that conversation's.
    expect(await store.longestPrefix(["h1", "x2"])).toEqual({ index: 0, id: "t:other" });
    await store.close();
  });

  it("finds the records of a client's conversation id (admin compact) by an index, reading no other record", async () => {
    const { store, where } = await open();
    for (let i = 0; i < 200; i++) await store.put(record(`c${i}`));
    const heads = [{ ...record("ops", 2000), id: "t:ops#aaaaaaaaaaaa" }, { ...record("ops", 3000), id: "t:ops#bbbbbbbbbbbb" }];
    for (const r of heads) await store.put(r);
    await store.flush();
    // Another process on the SQLite file writes too (then records are read from the file, as replicas read theirs).
    const other = backend.shared || where === ":memory:" ? undefined : await openStore(where);
    await other?.put(record("z"));
    await other?.close();
    const read = rowsRead(store);
    const found = await find({ store } as unknown as ProxyContext, "ops");
    expect(found?.id).toBe("t:ops#bbbbbbbbbbbb");
    // Before: every record, 203 rows, at each call.
    expect(read()).toBeLessThanOrEqual(heads.length);
    if (backend.shared) {
      // By the index, once the table is large enough for the planner to prefer it.
      const client = new pg.Client({ connectionString: where });
      await client.connect();
      await client.query("SET enable_seqscan = off");
      const plan = await client.query<{ "QUERY PLAN": string }>("EXPLAIN SELECT version, record FROM ptc_conversations WHERE record::json ->> 'conversation' = 'ops'");
      await client.end();
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain("ptc_conversations_named");
    } else if (where !== ":memory:") {
      const db = new Database(where, { readonly: true });
      const plan = db.prepare("EXPLAIN QUERY PLAN SELECT id, record FROM conversations WHERE json_extract(record, '$.conversation') = 'ops'").all() as { detail: string }[];
      db.close();
      expect(plan.map((r) => r.detail).join("\n")).toContain("conversations_named");
    }
    await store.close();
  });

  it("keeps the most recently updated heads under one client id, and every other conversation", async () => {
    const { store } = await open();
    const head = (id: string, i: number) => headKey(`t:${id}`, `h${String(i).padStart(HEAD_LENGTH - 1, "0")}`);
    // Twelve heads under "batch", written out of order of their times; three under "small"; and a bare id.
    for (const i of [3, 11, 0, 7, 1, 10, 4, 9, 2, 8, 5, 6]) await store.put({ ...record("batch", 10_000 + i), id: head("batch", i) }, JSON.stringify({ messages: [] }));
    for (let i = 0; i < 3; i++) await store.put({ ...record("small", 10_000 + i), id: head("small", i) });
    await store.put(record("plain", 10_000));
    expect(await store.expire(0)).toBe(12 - HEADS_PER_ID);
    const kept = (await store.list()).map((c) => c.id);
    expect(kept.filter((id) => id.startsWith("t:batch#")).sort()).toEqual(Array.from({ length: HEADS_PER_ID }, (_, k) => head("batch", 12 - HEADS_PER_ID + k)).sort());
    expect(kept.filter((id) => id.startsWith("t:small#"))).toHaveLength(3);
    expect(kept).toContain("t:plain");
    expect(await store.body(head("batch", 0))).toBeUndefined();
    expect(await store.expire(0)).toBe(0);
    await store.close();
  });

  it("adds up a virtual key's spend, and keeps it across a reopen", async () => {
    const { store, where } = await open();
    expect(await store.spent("vk")).toBe(0);
    await Promise.all([store.addSpend("vk", 100), store.addSpend("vk", 23), store.addSpend("other", 5)]);
    expect(await store.spent("vk")).toBe(123);
    await store.close();
    // Kept at rest, as conversations are (in memory, nothing is).
    if (where === ":memory:") return;
    const again = await openStore(where);
    expect(await again.spent("vk")).toBe(123);
    await again.addSpend("vk", 7);
    expect(await again.spent("vk")).toBe(130);
    await again.close();
  });

  it("reserves against a virtual key's budget in one step, for every process on the store", async () => {
    const { store: a, where } = await open();
    // Two processes on one file or database (in memory there is only the one).
    const b = where === ":memory:" ? a : await openStore(where);
    // Six reservations of 40 made at once against a budget of 100: each is taken only while the
    // spend is below it, so three are (0, 40, 80), whichever process makes them.
    const taken = await Promise.all(Array.from({ length: 6 }, (_, i) => (i % 2 === 0 ? a : b).reserve("vk", 40, 100)));
    expect(taken.filter(Boolean)).toHaveLength(3);
    expect(await b.spent("vk")).toBe(120);
    // Settled: one request used 10 of its 40, and the budget has room again.
    await a.addSpend("vk", -30);
    expect(await a.spent("vk")).toBe(90);
    expect(await b.reserve("vk", 40, 100)).toBe(true);
    expect(await a.reserve("vk", 40, 100)).toBe(false);
    // A key's first reservation makes its row.
    expect(await a.reserve("new", 500, 100)).toBe(true);
    expect(await b.spent("new")).toBe(500);
    await a.close();
    if (b !== a) await b.close();
  });

  it("reports itself closed", async () => {
    const { store } = await open();
    expect(store.open).toBe(true);
    await store.close();
    expect(store.open).toBe(false);
  });

  // Only a shared backend has replicas: the SQLite runs of this suite have no such tests (rather than skipped ones).
  if (backend.shared) {
    describe("shared between replicas", () => {
      it("loses no update when two replicas write the same conversation from the same version", async () => {
        const { store: a, where } = await open();
        const b = await openStore(where);
        await a.put(record("race"));
        // Both replicas read version 1 of the conversation...
        const ra = (await a.get("t:race")) as ConversationRecord;
        const rb = (await b.get("t:race")) as ConversationRecord;
        // ...A compacts (a summary, a compaction counted), B answers a request (usage learned).
        ra.state = { summary: "from A", covered: 10 };
        ra.strategy = "rolling";
        ra.compactions++;
        rb.reportedTokens = 777;
        rb.messageCount = 12;
        rb.compactions++;
        rb.updatedAt = 9000;
        await Promise.all([a.put(ra), b.put(rb)]);
        const stored = (await a.get("t:race")) as ConversationRecord;
        expect(stored.state).toEqual({ summary: "from A", covered: 10 });
        expect(stored.strategy).toBe("rolling");
        expect(stored.reportedTokens).toBe(777);
        expect(stored.messageCount).toBe(12);
        expect(stored.compactions).toBe(2);
        expect(stored.updatedAt).toBe(9000);
        // After a refresh each replica's own object holds what was stored.
        await Promise.all([a.refresh(ra), b.refresh(rb)]);
        expect(ra.reportedTokens).toBe(777);
        expect(rb.state).toEqual({ summary: "from A", covered: 10 });
        await Promise.all([a.close(), b.close()]);
      });

      it("keeps every increment when many writers race on one record", async () => {
        const { store: a, where } = await open();
        const b = await openStore(where);
        await a.put(record("counter"));
        const bump = async (s: ConversationStore) => {
          const r = (await s.get("t:counter")) as ConversationRecord;
          r.compactions++;
          await s.put(r);
        };
        // More writers at once than a writer once had attempts (16): each may lose to every other.
        await Promise.all(Array.from({ length: 48 }, (_, i) => bump(i % 2 === 0 ? a : b)));
        expect((await b.get("t:counter"))?.compactions).toBe(48);
        await Promise.all([a.close(), b.close()]);
      });

      it("two replicas creating one conversation at once end with one record", async () => {
        const { store: a, where } = await open();
        const b = await openStore(where);
        const ra = record("both");
        const rb = record("both");
        rb.source = "body:user";
        await Promise.all([a.put(ra), b.put(rb)]);
        expect(await a.count()).toBe(1);
        // The loser adopted the stored record: both objects agree.
        expect(ra.source).toBe(rb.source);
        await Promise.all([a.close(), b.close()]);
      });

      it("refresh brings in another replica's summary and keeps this one's changes", async () => {
        const { store: a, where } = await open();
        const b = await openStore(where);
        await a.put(record("moved"));
        const mine = (await a.get("t:moved")) as ConversationRecord;
        mine.calibration = 1.2;
        const theirs = (await b.get("t:moved")) as ConversationRecord;
        theirs.state = { summary: "B's", covered: 4 };
        await b.put(theirs);
        await a.refresh(mine);
        expect(mine.state).toEqual({ summary: "B's", covered: 4 });
        expect(mine.calibration).toBe(1.2);
        await a.put(mine);
        expect((await b.get("t:moved"))?.calibration).toBe(1.2);
        await Promise.all([a.close(), b.close()]);
      });

      it("runs one compaction per conversation at a time across replicas, and others freely", async () => {
        const { store: a, where } = await open();
        const b = await openStore(where);
        const order: string[] = [];
        let release = () => {};
        const gate = new Promise<void>((resolve) => (release = resolve));
        const first = a.locked("t:c", async () => {
          order.push("a start");
          await gate;
          order.push("a end");
        });
        await expect.poll(() => order).toEqual(["a start"]);
        const second = b.locked("t:c", async () => {
          order.push("b");
        });
        // B is waiting on the server for A's lock (seen in pg_locks, not by waiting a while)...
        const admin = new pg.Client({ connectionString: where });
        await admin.connect();
        await expect.poll(async () => (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n).toBe(1);
        // ...while another conversation's lock is free.
        await b.locked("t:other", async () => {
          order.push("other");
        });
        release();
        await Promise.all([first, second]);
        expect(order).toEqual(["a start", "other", "a end", "b"]);
        await admin.end();
        await Promise.all([a.close(), b.close()]);
      });

      it("survives the database cutting the connection a waited-for lock is held on while its holder runs", async () => {
        const { store: a, where } = await open();
        const b = await openStore(where);
        let releaseA = () => {};
        const gateA = new Promise<void>((resolve) => (releaseA = resolve));
        let releaseB = () => {};
        const gateB = new Promise<void>((resolve) => (releaseB = resolve));
        let inB = false;
        const first = a.locked("t:cut", () => gateA);
        const admin = new pg.Client({ connectionString: where });
        await admin.connect();
        const granted = async () => (await admin.query<{ pid: number }>("SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")).rows.map((r) => r.pid);
        await expect.poll(granted).toHaveLength(1);
        // B waits for A's lock on a connection of its own, and holds it there once A lets go.
        const second = b.locked("t:cut", async () => {
          inB = true;
          await gateB;
          return "b's result";
        });
        await expect.poll(async () => (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n).toBe(1);
        releaseA();
        await first;
        await expect.poll(() => inB).toBe(true);
        const [holder] = await granted();
        // A server restart, a failover or an administrator cuts that connection while B's summary runs.
        await admin.query("SELECT pg_terminate_backend($1)", [holder]);
        await expect.poll(granted).toHaveLength(0);
        // Before: the connection, checked out with no listener, threw its error and ended the process.
        releaseB();
        expect(await second).toBe("b's result");
        // The lock is free again, and the store goes on.
        await a.locked("t:cut", async () => {});
        await b.put(record("after"));
        expect((await a.get("t:after"))?.conversation).toBe("after");
        await admin.end();
        await Promise.all([a.close(), b.close()]);
      });

      it("survives the database cutting the connection of an expiry in its transaction", async () => {
        const { store, where } = await open();
        await store.put(record("old", 1));
        const admin = new pg.Client({ connectionString: where });
        await admin.connect();
        const blocker = new pg.Client({ connectionString: where });
        await blocker.connect();
        // Another transaction holds the row, so the expiry waits inside its own.
        await blocker.query("BEGIN");
        await blocker.query("SELECT * FROM ptc_conversations FOR UPDATE");
        const expiring = store.expire(10).catch((e: unknown) => e);
        const waiting = async () => (await admin.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()")).rows.map((r) => r.pid);
        await expect.poll(waiting).toHaveLength(1);
        await admin.query("SELECT pg_terminate_backend($1)", [(await waiting())[0]]);
        // Before: the checked-out connection's error event ended the process.
        expect(await expiring).toBeInstanceOf(Error);
        await blocker.query("ROLLBACK");
        expect(await store.expire(10)).toBe(1);
        await Promise.all([admin.end(), blocker.end(), store.close()]);
      });

      it("keeps a compaction lock while its holder runs on a database that cuts idle sessions (idle_session_timeout)", async () => {
        const where = await backend.location();
        const admin = new pg.Client({ connectionString: where });
        await admin.connect();
        await admin.query(`ALTER DATABASE ${new URL(where).pathname.slice(1)} SET idle_session_timeout = '100ms'`);
        await admin.end();
        const a = await openStore(where);
        const b = await openStore(where);
        // The watcher's own session is exempt from the timeout: on a loaded machine it may sit idle
        // past 100 ms between its polls, and a cut watcher failed the test.
        const watch = new pg.Client({ connectionString: where, options: "-c idle_session_timeout=0" });
        const order: string[] = [];
        let release = () => {};
        const gate = new Promise<void>((resolve) => (release = resolve));
        const first = a.locked("t:idle", async () => {
          order.push("a start");
          await gate;
          order.push("a end");
        });
        await expect.poll(() => order).toEqual(["a start"]);
        // A session that goes idle after A's lock session did is cut: the timeout has passed for A's too.
        const idle = new pg.Client({ connectionString: where });
        const cut = new Promise<void>((resolve) => idle.on("error", () => resolve()));
        await idle.connect();
        await cut;
        const second = b.locked("t:idle", async () => {
          order.push("b");
        });
        watch.on("error", () => {});
        await watch.connect();
        const waits = async () => (await watch.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rows[0].n;
        // B waits on the server for A's lock, or (before: A's lock session was cut, and its lock with it) runs at once.
        await expect.poll(async () => order.includes("b") || (await waits()) === 1, { interval: 20 }).toBe(true);
        expect(order).toEqual(["a start"]);
        release();
        await Promise.all([first, second]);
        expect(order).toEqual(["a start", "a end", "b"]);
        await Promise.all([watch.end(), a.close(), b.close()]);
      });

      it("holds the locks of more conversations at once than it has connections for them (each compaction holds its lock for its summary call)", async () => {
        const { store, where } = await open();
        let release = () => {};
        const gate = new Promise<void>((resolve) => (release = resolve));
        let holding = 0;
        const runs = Array.from({ length: 20 }, (_, i) =>
          store.locked(`t:many-${i}`, async () => {
            holding++;
            await gate;
          }),
        );
        // Every one holds its lock at once: none waits for another conversation's summary to end.
        await expect.poll(() => holding, { timeout: 5000 }).toBe(20);
        release();
        await Promise.all(runs);
        // And the locks were let go: another store takes each at once.
        const other = await openStore(where);
        await Promise.all(Array.from({ length: 20 }, (_, i) => other.locked(`t:many-${i}`, async () => {})));
        await Promise.all([store.close(), other.close()]);
      });

      it("opens as a user with only reads and writes once the tables exist (no CREATE on the schema)", async () => {
        const db = await freshDatabase(pgAdmin as string);
        await (await openStore(db.url)).close();
        const role = `ptc_rw_${randomBytes(6).toString("hex")}`;
        const owner = new pg.Client({ connectionString: db.url });
        await owner.connect();
        await owner.query(`CREATE ROLE ${role} LOGIN PASSWORD 'rw'`);
        // Made by a version before the client-id index: it cannot add it, and starts all the same.
        await owner.query("DROP INDEX ptc_conversations_named");
        await owner.query("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
        await owner.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
        await owner.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
        await owner.end();
        const url = new URL(db.url);
        url.username = role;
        url.password = "rw";
        try {
          const store = await openStore(url.href);
          await store.put(record("rw"));
          expect((await store.get("t:rw"))?.conversation).toBe("rw");
          expect((await store.named("rw")).map((r) => r.id)).toEqual(["t:rw"]);
          await store.close();
        } finally {
          await db.drop();
          const admin = new pg.Client({ connectionString: pgAdmin });
          await admin.connect();
          await admin.query(`DROP ROLE IF EXISTS ${role}`);
          await admin.end();
        }
      });

      it("refuses to open a database it cannot reach", async () => {
        await expect(openStore("postgres://nobody@127.0.0.1:1/none")).rejects.toThrow();
      });
    });
  }
});

describe("conversation store: sqlite file whose tables fail", () => {
  it("answers every call with a rejected promise, never a throw (a caller's .then would not catch it)", async () => {
    const where = join(tempDir(), "s.db");
    const store = await openStore(where);
    await store.put(record("a"), JSON.stringify({ messages: [] }));
    await store.flush();
    // Another process (or a full disk) makes every statement fail.
    const other = new Database(where);
    other.exec("DROP TABLE conversations; DROP TABLE messages; DROP TABLE prefixes; DROP TABLE spend");
    other.close();
    const calls: Array<() => Promise<unknown>> = [() => store.expire(0), () => store.body("t:a"), () => store.addPrefix("h", "t:a"), () => store.removePrefix("h", "t:a"), () => store.addSpend("vk", 1)];
    for (const call of calls) {
      let promise: Promise<unknown> | undefined;
      expect(() => (promise = call())).not.toThrow();
      await expect(promise).rejects.toThrow(/no such table/);
    }
    await store.close();
  });
});

describe("conversation store: sqlite file that stops taking writes (a full disk)", () => {
  it("keeps a conversation used since its last write when expiry runs while writes fail", async () => {
    const where = join(tempDir(), "s.db");
    const store = await openStore(where);
    const r = record("busy", 1000);
    r.state = { summary: "S", covered: 4 };
    await store.put(r);
    await store.flush();
    // Hook: the record write fails (a full disk) while the conversation goes on from memory.
    const statements = (store as unknown as { statements: Record<"put", { run(...args: unknown[]): unknown }> }).statements;
    const real = statements.put;
    statements.put = {
      run() {
        throw new Error("database or disk is full");
      },
    };
    r.updatedAt = 5000;
    await store.put(r);
    await store.flush();
    expect(store.writeError).toMatch(/disk is full/);
    // Idle by the file's time (1000), not by the newer version waiting to be written (5000).
    expect(await store.expire(2000)).toBe(0);
    statements.put = real;
    await store.flush();
    expect(store.writeError).toBeUndefined();
    expect((await store.get("t:busy"))?.state).toEqual({ summary: "S", covered: 4 });
    await store.close();
    const reopened = await openStore(where);
    expect((await reopened.get("t:busy"))?.updatedAt).toBe(5000);
    await reopened.close();
  });

  // Each failed charge set the key's unwritten tokens to what it had read plus its own: two that
  // failed in one turn of the event loop (requests ending together) both read the same count,
  // and the second set it over the first's.
  it("keeps every charge and reservation that met a full disk together, to be written when it takes writes again", async () => {
    const where = join(tempDir(), "s.db");
    const store = await openStore(where);
    expect(await store.reserve("team", 10, 1000)).toBe(true);
    const statements = (store as unknown as { statements: Record<"addSpend" | "reserve", { get(...args: unknown[]): unknown }> }).statements;
    const real = { addSpend: statements.addSpend, reserve: statements.reserve };
    const full = {
      get() {
        throw new Error("database or disk is full");
      },
    };
    statements.addSpend = full;
    statements.reserve = full;
    const charges = await Promise.all([store.addSpend("team", 100).catch(() => "failed"), store.addSpend("team", 200).catch(() => "failed")]);
    expect(charges).toEqual(["failed", "failed"]);
    // Two reservations: both within the budget as counted here, both counted.
    expect(await Promise.all([store.reserve("team", 40, 1000), store.reserve("team", 50, 1000)])).toEqual([true, true]);
    // Before: 260 (the 100 and the 40 lost).
    expect(await store.spent("team")).toBe(400);
    statements.addSpend = real.addSpend;
    statements.reserve = real.reserve;
    expect(await store.reserve("team", 1, 1000)).toBe(true);
    await store.close();
    const reopened = await openStore(where);
    expect(await reopened.spent("team")).toBe(401);
    await reopened.close();
  });

  it("writes a prefix entry whose first write failed when it is added again", async () => {
    const where = join(tempDir(), "s.db");
    const store = await openStore(where);
    await store.put(record("p"));
    // Hook: the index write fails once (a full disk), as a statement that throws.
    const statements = (store as unknown as { statements: Record<"addPrefix" | "removePrefix", { run(...args: unknown[]): unknown }> }).statements;
    for (const name of ["addPrefix", "removePrefix"] as const) {
      const real = statements[name];
      let failed = false;
      statements[name] = {
        run(...args: unknown[]) {
          if (failed) return real.run(...args);
          failed = true;
          throw new Error("database or disk is full");
        },
      };
    }
    await expect(store.addPrefix("h-1", "t:p")).rejects.toThrow(/disk is full/);
    await store.addPrefix("h-1", "t:p");
    await store.addPrefix("h-2", "t:p");
    await expect(store.removePrefix("h-2", "t:p")).rejects.toThrow(/disk is full/);
    await store.removePrefix("h-2", "t:p");
    await store.close();
    const reopened = await openStore(where);
    expect(await reopened.longestPrefix(["h-1"])).toEqual({ index: 0, id: "t:p" });
    expect(await reopened.longestPrefix(["h-2"])).toBeUndefined();
    await reopened.close();
  });

  it("does not hold every conversation's request body in memory while its writes fail", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const where = join(tempDir(), "s.db");
    const store = await openStore(where);
    await store.put(record("before"), JSON.stringify({ messages: [] }));
    await store.flush();
    const other = new Database(where);
    other.exec("DROP TABLE messages");
    other.close();
    gc();
    const before = process.memoryUsage().heapUsed;
    // 100 conversations go on from memory, each with a 1 MB request body that cannot be written.
    for (let i = 0; i < 100; i++) {
      await store.put(record(`c${i}`), JSON.stringify({ messages: [{ role: "user", content: `${i} ${"x".repeat(1_000_000)}` }] }));
      await store.flush();
    }
    expect(store.writeError).toMatch(/no such table/);
    gc();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20_000_000);
    // The records themselves are kept, and written once the file takes writes again.
    expect((await store.get("t:c99"))?.conversation).toBe("c99");
    const again = new Database(where);
    again.exec("CREATE TABLE messages (id TEXT PRIMARY KEY, messages TEXT NOT NULL)");
    again.close();
    await store.put(record("after"), JSON.stringify({ messages: [] }));
    await store.flush();
    expect(store.writeError).toBeUndefined();
    await store.close();
    const reopened = await openStore(where);
    expect((await reopened.list()).map((r) => r.conversation)).toContain("c99");
    await reopened.close();
  });
});

describe("conversation store: sqlite file removed or replaced while the store is open", () => {
  // A state directory cleaned, or a backup restored over the file, while the proxy runs: SQLite
  // goes on writing to the file it opened, which no path names any more. Every write after it
  // was lost at the next start (and a second proxy started on the path shared nothing with this
  // one, virtual keys' spend included) while /readyz answered ready.
  it.each([
    ["removed", (where: string) => ["", "-wal", "-shm"].forEach((s) => rmSync(where + s, { force: true }))],
    [
      "replaced",
      (where: string) => {
        const fresh = `${where}.new`;
        new Database(fresh).close();
        renameSync(fresh, where);
      },
    ],
  ] as const)("reports its writes failing once the file is %s", async (_, change) => {
    const where = join(tempDir(), "s.db");
    const store = await openStore(where);
    await store.put(record("before"), JSON.stringify({ messages: [] }));
    await store.flush();
    expect(store.open).toBe(true);
    change(where);
    await store.put(record("after"), JSON.stringify({ messages: [] }));
    await store.flush();
    expect(store.writeError).toMatch(/removed or replaced/);
    expect(store.open).toBe(false);
    // Requests go on from memory meanwhile.
    expect((await store.get("t:after"))?.conversation).toBe("after");
    await store.close();
  });
});

// Two proxies on one SQLite file (two on the default state directory, as the spend already
// promises): each holds records in memory, so each must notice what the other wrote to the file.
describe("conversation store: sqlite file with very many idle conversations", () => {
  // Deleted in one synchronous transaction: 100,000 took 2.7 s (measured once), the event loop
  // blocked meanwhile (every request and stream of the proxy stalled), and another process on the
  // file waited as long for its writes (SQLITE_BUSY past 5 s).
  it("expires them in batches, letting the event loop run between them, and keeps a conversation used meanwhile", async () => {
    const where = join(tempDir(), "s.db");
    const store = await openStore(where);
    const n = 5000;
    for (let i = 0; i < n; i++) {
      const r = record(`idle-${i}`);
      r.indexed.push(`h-${i}`);
      await store.put(r, JSON.stringify({ messages: [i] }));
      await store.addPrefix(`h-${i}`, r.id);
    }
    await store.flush();
    const statements = (store as unknown as { statements: { deleteIdle: { run(id: string, bound: number): { changes: number } } } }).statements;
    const deleteIdle = statements.deleteIdle;
    let sinceTurn = 0;
    let most = 0;
    statements.deleteIdle = {
      run(id, bound) {
        most = Math.max(most, ++sinceTurn);
        return deleteIdle.run(id, bound);
      },
    };
    let turns = 0;
    let ticking = true;
    const tick = () => {
      sinceTurn = 0;
      turns++;
      // The last conversation is used again (a request wrote it) once the expiry is under way.
      if (turns === 2) {
        const last = { ...record(`idle-${n - 1}`), updatedAt: 9000 };
        void store.put(last, JSON.stringify({ messages: ["again"] }));
      }
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const expired = await store.expire(5000);
    ticking = false;
    expect(expired).toBe(n - 1);
    // Before: 5000 deletions with no turn of the event loop between them.
    expect(most).toBeLessThanOrEqual(1000);
    await store.flush();
    expect(await store.count()).toBe(1);
    expect(await store.body(`t:idle-${n - 1}`)).toBe(JSON.stringify({ messages: ["again"] }));
    expect((store as unknown as { prefixes: Map<string, string> }).prefixes.size).toBe(1);
    await store.close();
    const reopened = await openStore(where);
    expect((await reopened.list()).map((c) => c.id)).toEqual([`t:idle-${n - 1}`]);
    await reopened.close();
  });
});

describe("conversation store: two processes on one sqlite file", () => {
  it("serves a conversation alternately from both without losing either's summary, count or new conversations", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    // Started on a after b opened: b must find it in the file.
    const r = record("shared");
    r.state = { summary: "S1", covered: 3 };
    r.compactions = 1;
    await a.put(r, JSON.stringify({ messages: ["one"] }));
    await a.flush();
    const seen = await b.get("t:shared");
    expect(seen?.state).toEqual({ summary: "S1", covered: 3 });
    // b compacts again; a's next request must start from b's summary, not its own copy.
    seen!.state = { summary: "S2", covered: 6 };
    seen!.compactions += 1;
    seen!.updatedAt = 2000;
    await b.put(seen!, JSON.stringify({ messages: ["two"] }));
    await b.flush();
    const back = await a.get("t:shared");
    expect(back?.state).toEqual({ summary: "S2", covered: 6 });
    expect(back?.compactions).toBe(2);
    // a writes a field of its own from its copy read before b's write: b's summary is kept.
    back!.messageCount = 9;
    back!.updatedAt = 3000;
    await a.put(back!);
    await a.flush();
    const reopened = await openStore(where);
    const final = await reopened.get("t:shared");
    expect(final).toMatchObject({ state: { summary: "S2", covered: 6 }, compactions: 2, messageCount: 9, updatedAt: 3000 });
    // Status on either process lists what the other wrote.
    expect((await b.list()).find((c) => c.id === "t:shared")?.messageCount).toBe(9);
    await Promise.all([a.close(), b.close(), reopened.close()]);
  });

  it("merges two processes' writes of one record made from the same version", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    await a.put(record("race"));
    await a.flush();
    const ra = (await a.get("t:race"))!;
    const rb = (await b.get("t:race"))!;
    ra.compactions += 1;
    ra.state = { summary: "from a", covered: 2 };
    rb.compactions += 1;
    rb.learnedLimit = 5000;
    await a.put(ra);
    await a.flush();
    await b.put(rb);
    await b.flush();
    const reopened = await openStore(where);
    expect(await reopened.get("t:race")).toMatchObject({ compactions: 2, state: { summary: "from a", covered: 2 }, learnedLimit: 5000 });
    await Promise.all([a.close(), b.close(), reopened.close()]);
  });

  it("trims the heads under one client id by the times in the file, not by another process's stale copies", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const head = (i: number) => headKey("t:batch", `h${String(i).padStart(HEAD_LENGTH - 1, "0")}`);
    for (let i = 0; i <= HEADS_PER_ID; i++) await a.put({ ...record("batch", 10_000 + i), id: head(i) }, JSON.stringify({ messages: [i] }));
    await a.flush();
    // b opens holding every head as it was; then a uses the oldest head again.
    const b = await openStore(where);
    const oldest = (await a.get(head(0)))!;
    oldest.updatedAt = 20_000;
    await a.put(oldest, JSON.stringify({ messages: ["again"] }));
    await a.flush();
    expect(await b.expire(0)).toBe(1);
    const reopened = await openStore(where);
    const kept = (await reopened.list()).map((c) => c.id);
    expect(kept).toContain(head(0));
    expect(kept).not.toContain(head(1));
    expect(await reopened.body(head(0))).toBe(JSON.stringify({ messages: ["again"] }));
    await Promise.all([a.close(), b.close(), reopened.close()]);
  });

  it("keeps a conversation another process refreshed after expire picked it as stale", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    await a.put(record("busy", 1000), JSON.stringify({ messages: ["kept"] }));
    await a.addPrefix("h-busy", "t:busy");
    await a.flush();
    // Hook: b has just read the stale ids from the file when a (another process) uses the
    // conversation again and commits its new time.
    const statements = (b as unknown as { statements: { stale: { all(before: number): { id: string }[] } } }).statements;
    const stale = statements.stale;
    statements.stale = {
      all(before: number) {
        const rows = stale.all(before);
        const fresh = { ...record("busy", 1000), updatedAt: 5000 };
        void a.put(fresh, JSON.stringify({ messages: ["fresh"] }));
        void a.flush();
        expect(a.writeError).toBeUndefined();
        return rows;
      },
    };
    expect(await b.expire(2000)).toBe(0);
    const reopened = await openStore(where);
    expect((await reopened.get("t:busy"))?.updatedAt).toBe(5000);
    expect(await reopened.body("t:busy")).toBe(JSON.stringify({ messages: ["fresh"] }));
    expect(await reopened.longestPrefix(["h-busy"])).toEqual({ index: 0, id: "t:busy" });
    expect((await b.get("t:busy"))?.updatedAt).toBe(5000);
    await Promise.all([a.close(), b.close(), reopened.close()]);
  });

  it("forgets the prefix entries of conversations the other process expired, as it forgets their records", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    for (let i = 0; i < 1000; i++) {
      const r = record(`idle-${i}`);
      r.indexed.push(`h-${i}`);
      await a.put(r);
      await a.addPrefix(`h-${i}`, r.id);
    }
    await a.flush();
    // b's expiry runs first (each process runs its own every minute): a finds nothing left to delete.
    expect(await b.expire(5000)).toBe(1000);
    expect(await a.expire(5000)).toBe(0);
    expect(await a.count()).toBe(0);
    // Before: 1000 entries held for good, growing with every conversation the other process expired.
    expect((a as unknown as { prefixes: Map<string, string> }).prefixes.size).toBe(0);
    await Promise.all([a.close(), b.close()]);
  });

  it("counts the conversations (each /metrics scrape) without reading every record back from the file", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    for (let i = 0; i < 300; i++) await a.put(record(`c-${i}`));
    await a.flush();
    await b.put(record("own"));
    const read = recordsRead(b);
    // a keeps writing (one conversation): b's copy of every record may be stale.
    const one = (await a.get("t:c-1"))!;
    one.messageCount = 5;
    await a.put(one);
    await a.flush();
    expect(await b.count()).toBe(301);
    await a.expire(5000);
    expect(await b.count()).toBe(0);
    // Before: 301 records read and parsed for the first count (4 s a scrape at 100,000 conversations with 2 KB summaries, measured once).
    expect(read()).toBe(0);
    await Promise.all([a.close(), b.close()]);
  });

  it("lists a page of status without reading every record back from the file, each as the other process last wrote it", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    for (let i = 0; i < 300; i++) await a.put(record(`c-${String(i).padStart(3, "0")}`, 1000 + i));
    await a.flush();
    await b.put(record("c-own", 5000));
    const read = recordsRead(b);
    // a changes one conversation and another expires one: b's copies may be stale.
    const one = (await a.get("t:c-001"))!;
    one.messageCount = 7;
    await a.put(one);
    await a.flush();
    const other = new Database(where);
    other.prepare("DELETE FROM conversations WHERE id = ?").run("t:c-002");
    other.close();
    const page = await b.list({ limit: 3 });
    expect(page.map((r) => r.id)).toEqual(["t:c-000", "t:c-001", "t:c-003"]);
    expect(page[1].messageCount).toBe(7);
    expect((await b.list({ after: "t:c-298", limit: 3 })).map((r) => r.id)).toEqual(["t:c-299", "t:c-own"]);
    // Before: all 301 read and compared for each page (340 ms a page at 100,000 conversations).
    expect(read()).toBe(0);
    await Promise.all([a.close(), b.close()]);
  });

  it("expires (every minute) without reading every record back from the file", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    for (let i = 0; i < 300; i++) await a.put(record(`c-${i}`, 1000 + i));
    await a.flush();
    expect(await b.count()).toBe(300);
    const read = recordsRead(b);
    const one = (await a.get("t:c-1"))!;
    one.messageCount = 5;
    await a.put(one);
    await a.flush();
    expect(await b.expire(1100)).toBe(100);
    // Before: all 300 read and compared (4 s a minute at 100,000 conversations with 2 KB summaries).
    expect(read()).toBe(0);
    expect(await b.count()).toBe(200);
    expect(await b.get("t:c-1")).toBeUndefined();
    expect((await b.get("t:c-100"))?.updatedAt).toBe(1100);
    await Promise.all([a.close(), b.close()]);
  });

  it("finds a conversation by the prefix another process indexed", async () => {
    const where = join(tempDir(), "s.db");
    const a = await openStore(where);
    const b = await openStore(where);
    await a.put(record("p"));
    await a.addPrefix("h-1", "t:p");
    await a.flush();
    expect(await b.longestPrefix(["h-0", "h-1", "h-2"])).toEqual({ index: 1, id: "t:p" });
    await Promise.all([a.close(), b.close()]);
  });
});

// A server that stops answering (a partition, a stalled failover) sends nothing back, neither
// an answer nor an error: without timeouts every request waited on it forever.
describe.skipIf(pgAdmin === undefined)("conversation store: a PostgreSQL server that stops answering", () => {
  it("fails its calls after the store's timeout, so requests answer store_unavailable instead of waiting", async () => {
    const db = await freshDatabase(pgAdmin as string);
    dropped.push(db.drop);
    const target = new URL(db.url);
    // A relay in front of the server that, once frozen, swallows everything both ways.
    let frozen = false;
    const sockets: Socket[] = [];
    const relay = createServer((client) => {
      const server = connect(Number(target.port || 5432), target.hostname);
      sockets.push(client, server);
      client.on("data", (d) => frozen || server.write(d));
      server.on("data", (d) => frozen || client.write(d));
      client.on("error", () => server.destroy());
      server.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const via = new URL(db.url);
    via.hostname = "127.0.0.1";
    via.port = String((relay.address() as { port: number }).port);
    // Long enough that the calls before the freeze never time out on a loaded machine.
    const store = await PostgresStore.open(via.href, 3000);
    await store.put(record("a"), JSON.stringify({ messages: [] }));
    frozen = true;
    const calls: Array<() => Promise<unknown>> = [() => store.get("t:a"), () => store.put(record("b"), JSON.stringify({ messages: [] })), () => store.count(), () => store.expire(0), () => store.spent("vk")];
    await Promise.all(calls.map((call) => expect(call()).rejects.toThrow(/timeout/i)));
    for (const s of sockets) s.destroy();
    await store.close();
    await new Promise((resolve) => relay.close(resolve));
  });
});

// The commit of a reservation reached the server, its answer never reached the proxy (the
// connection cut by a failover, a balancer, an administrator): the request was answered 503
// store_unavailable, and the key stayed charged the tokens of a request that never went out.
describe.skipIf(pgAdmin === undefined)("virtual key budget: more spend changes of unknown outcome than the store keeps", () => {
  it("tells the operator of each one dropped: the key, the tokens and whether they were to be added on commit or on abort", async () => {
    const db = await freshDatabase(pgAdmin as string);
    dropped.push(db.drop);
    const store = await PostgresStore.open(db.url);
    const lost: { virtualKey: string; tokens: number; addIf: string }[] = [];
    store.onLost = (change) => lost.push(change);
    const keep = (store as unknown as { keep(change: { xid: string; addIf: "committed" | "aborted"; virtualKey: string; tokens: number }): void }).keep.bind(store);
    // Each change's transaction outcome is unknown (its commit's answer was lost in an outage).
    for (let i = 0; i < 1001; i++) keep({ xid: String(1_000_000 + i), addIf: "aborted", virtualKey: `vk-${i}`, tokens: 10 + i });
    // Before: the oldest was dropped with no call, no log and no metric.
    expect(lost).toEqual([{ virtualKey: "vk-0", tokens: 10, addIf: "aborted" }]);
    await store.close();
  });
});

describe.skipIf(pgAdmin === undefined)("virtual key budget: a PostgreSQL connection cut as a reservation commits", () => {
  /**
   * A relay in front of the database that, once armed, drops the first answer that ends a
   * transaction (ReadyForQuery, idle: after the commit) on the connection that sent a
   * reservation, and cuts that connection; while `down`, it cuts every new connection. Once
   * `freeze` is set, the next connection that commits a reservation passes nothing more either
   * way from its COMMIT on (its replica stopped, or the network between them).
   */
  async function cuttingRelay(url: string) {
    const target = new URL(url);
    const COMMITTED = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
    // `match`: what marks the connection whose commit is cut (the reservation's statement by default).
    const state = { armed: false, cut: 0, down: false, freeze: false, frozen: 0, match: "ptc_spend.tokens <" };
    const sockets: Socket[] = [];
    const relay = createServer((client) => {
      if (state.down) return client.destroy();
      const server = connect(Number(target.port || 5432), target.hostname);
      sockets.push(client, server);
      let mine = false;
      let frozen = false;
      client.on("data", (d) => {
        if (state.armed && d.includes(state.match)) mine = true;
        if (state.freeze && d.includes("COMMIT")) {
          state.freeze = false;
          state.frozen++;
          frozen = true;
        }
        if (!frozen) server.write(d);
      });
      server.on("data", (d) => {
        if (frozen) return;
        if (mine && d.includes(COMMITTED)) {
          state.armed = mine = false;
          state.cut++;
          client.destroy();
          server.destroy();
          return;
        }
        client.write(d);
      });
      client.on("error", () => server.destroy());
      server.on("error", () => client.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
    const via = new URL(url);
    via.hostname = "127.0.0.1";
    via.port = String((relay.address() as { port: number }).port);
    return {
      url: via.href,
      state,
      /** Cuts every connection open now (a database restart, a failover). */
      cutAll() {
        for (const s of sockets.splice(0)) s.destroy();
      },
      async close() {
        for (const s of sockets) s.destroy();
        await new Promise((resolve) => relay.close(resolve));
      },
    };
  }

  /** A fresh database behind a cutting relay: a store through the relay, and one straight to the database. */
  async function relayed() {
    const db = await freshDatabase(pgAdmin as string);
    dropped.push(db.drop);
    const relay = await cuttingRelay(db.url);
    const store = await PostgresStore.open(relay.url);
    const direct = await PostgresStore.open(db.url);
    return { relay, store, direct };
  }

  it("charges the key exactly when the reservation is taken", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 100)).toBe(true);
    relay.state.armed = true;
    const taken = await store.reserve("team", 30, 100).catch(() => false);
    expect(relay.state.cut).toBe(1);
    // Before: false (503 to the client) with 40 charged: the 30 of a request never sent were lost for good.
    expect({ taken, spent: await direct.spent("team") }).toEqual({ taken, spent: taken ? 40 : 10 });
    expect(taken).toBe(true);
    // The name goes into the statement as a literal: any name is one name.
    const odd = "it's \\ 'odd'; DROP TABLE ptc_spend; --";
    expect(await store.reserve(odd, 5, 100)).toBe(true);
    expect(await direct.spent(odd)).toBe(5);
    expect(await direct.spent("team")).toBe(40);
    await Promise.all([store.close(), direct.close()]);
    await relay.close();
  });

  it("does not leave the key locked for the others when a replica stops between its reservation and its commit", async () => {
    const db = await freshDatabase(pgAdmin as string);
    dropped.push(db.drop);
    const relay = await cuttingRelay(db.url);
    const stopped = await PostgresStore.open(relay.url, 1000);
    const other = await PostgresStore.open(db.url, 20_000);
    expect(await stopped.reserve("team", 10, 100)).toBe(true);
    relay.state.freeze = true;
    const lost = stopped.reserve("team", 10, 100).catch(() => "failed");
    await expect.poll(() => relay.state.frozen).toBe(1);
    // Before: the row stayed locked by the stopped replica's open transaction (until the server
    // noticed the dead connection: hours, with TCP keepalive's defaults), so this timed out.
    expect(await other.reserve("team", 10, 100)).toBe(true);
    expect(await other.spent("team")).toBe(20);
    await Promise.all([other.close(), relay.close()]);
    expect(await lost).toBe("failed");
    await stopped.close();
  });

  it("gives such a reservation back as the store closes (a replica stopped once the database answers again)", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 100)).toBe(true);
    relay.state.armed = true;
    relay.state.down = true;
    await expect(store.reserve("team", 30, 100)).rejects.toThrow();
    relay.state.down = false;
    await store.close();
    // Before: 40, the reservation forgotten with the store.
    expect(await direct.spent("team")).toBe(10);
    await direct.close();
    await relay.close();
  });

  it("gives the reservation back once the database can tell it committed, when it could not at once", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 100)).toBe(true);
    relay.state.armed = true;
    relay.state.down = true;
    await expect(store.reserve("team", 30, 100)).rejects.toThrow();
    expect(relay.state.cut).toBe(1);
    expect(await direct.spent("team")).toBe(40);
    relay.state.down = false;
    await store.spent("team");
    // Before: 40 for good.
    await expect.poll(() => direct.spent("team"), { timeout: 20_000 }).toBe(10);
    expect(await store.reserve("team", 90, 100)).toBe(true);
    expect(await direct.spent("team")).toBe(100);
    await Promise.all([store.close(), direct.close()]);
    await relay.close();
  });

  // The final charge of a request (what the upstream reported, less its reservation) met a
  // database blip: it was only logged, and the key kept its reservation for good.
  it("charges a request's usage once the database answers again, when the charge met a blip", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 1000)).toBe(true);
    relay.state.down = true;
    relay.cutAll();
    await expect(store.addSpend("team", 500)).rejects.toThrow();
    expect(await direct.spent("team")).toBe(10);
    relay.state.down = false;
    await store.spent("team");
    // Before: 10 for good, the 500 tokens of a long completion never charged.
    await expect.poll(() => direct.spent("team"), { timeout: 20_000 }).toBe(510);
    // Charged once: later settlements add nothing.
    await store.spent("team");
    expect(await store.reserve("team", 1, 1000)).toBe(true);
    expect(await direct.spent("team")).toBe(511);
    await Promise.all([store.close(), direct.close()]);
    await relay.close();
  });

  it("charges once a charge whose commit was answered to nobody, whether the database tells at once or later", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 1000)).toBe(true);
    relay.state.match = "ptc_spend.tokens + excluded";
    relay.state.armed = true;
    await store.addSpend("team", 100).catch(() => {});
    expect(relay.state.cut).toBe(1);
    expect(await direct.spent("team")).toBe(110);
    // A connection in the pool again, for the next charge to go out on while no new one can open.
    await store.spent("team");
    relay.state.armed = true;
    relay.state.down = true;
    await expect(store.addSpend("team", 100)).rejects.toThrow();
    expect(relay.state.cut).toBe(2);
    relay.state.down = false;
    await store.spent("team");
    expect(await store.reserve("team", 1, 1000)).toBe(true);
    await store.close();
    expect(await direct.spent("team")).toBe(211);
    await direct.close();
    await relay.close();
  });

  // Two failures in a row: the reservation's commit went unanswered (kept to be given back), then
  // so did the commit of that give-back. Written in one bare statement, it was kept and written
  // again: the key was credited twice.
  it("gives a reservation back once when the commit of its give-back is answered to nobody too", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 100)).toBe(true);
    relay.state.armed = true;
    relay.state.down = true;
    await expect(store.reserve("team", 30, 100)).rejects.toThrow();
    expect(await direct.spent("team")).toBe(40);
    relay.state.down = false;
    // The give-back goes out with the next read of a spend; its commit's answer is cut.
    relay.state.match = "ptc_spend.tokens + excluded";
    relay.state.armed = true;
    await store.spent("team");
    await expect.poll(() => relay.state.cut, { timeout: 20_000 }).toBe(2);
    // Later settlements (each read, reservation and the close) add nothing more. Before: -20.
    await expect.poll(() => direct.spent("team"), { timeout: 20_000 }).toBe(10);
    await store.spent("team");
    expect(await store.reserve("team", 1, 100)).toBe(true);
    await store.close();
    expect(await direct.spent("team")).toBe(11);
    await direct.close();
    await relay.close();
  });

  it("keeps every charge that met an outage, however many requests ended during it", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 100_000)).toBe(true);
    relay.state.down = true;
    relay.cutAll();
    // 1,200 requests end while the database does not answer, 100 at a time.
    for (let k = 0; k < 12; k++) {
      const failed = await Promise.all(Array.from({ length: 100 }, () => store.addSpend("team", 1).then(() => false, () => true)));
      expect(failed.every(Boolean)).toBe(true);
    }
    relay.state.down = false;
    await store.close();
    // Before: 1,010, the oldest 200 charges dropped past the 1,000 kept.
    expect(await direct.spent("team")).toBe(1210);
    await direct.close();
    await relay.close();
  });

  it("charges at close a charge that met a blip, once the database answers", async () => {
    const { relay, store, direct } = await relayed();
    expect(await store.reserve("team", 10, 1000)).toBe(true);
    relay.state.down = true;
    relay.cutAll();
    await expect(store.addSpend("team", 500)).rejects.toThrow();
    relay.state.down = false;
    await store.close();
    expect(await direct.spent("team")).toBe(510);
    await direct.close();
    await relay.close();
  });
});

describe("three-way merge of a record", () => {
  it("keeps each side's changes, adds counters, takes the later time, and mine on a clash", () => {
    const base = { id: "x", compactions: 1, updatedAt: 10, a: 1, b: 1, c: 1, gone: 1 };
    const mine = { id: "x", compactions: 2, updatedAt: 30, a: 2, b: 1, c: 5 };
    const theirs = { id: "x", compactions: 3, updatedAt: 20, a: 1, b: 3, c: 9, gone: 1 };
    expect(mergeRecords(base, mine, theirs)).toEqual({ id: "x", compactions: 4, updatedAt: 30, a: 2, b: 3, c: 5 });
  });

  it("lists both sides' prefix-index entries when both changed the list, minus what either trimmed", () => {
    // Both indexed a new request; mine also trimmed h1 (removed from the index), theirs trimmed h2.
    const base = { id: "x", indexed: ["h1", "h2", "h3"] };
    const mine = { id: "x", indexed: ["h2", "h3", "m4"] };
    const theirs = { id: "x", indexed: ["h1", "h3", "t4"] };
    expect(mergeRecords(base, mine, theirs).indexed).toEqual(["h3", "t4", "m4"]);
  });
});
