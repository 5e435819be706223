// The shared store: PostgreSQL (the `pg` driver), so several proxy processes behind a load
// balancer share conversations, summaries (and the breaker state inside them), the prefix index
// and virtual keys' spend. Nothing is cached across requests: each request reads its record, so a
// conversation can move between replicas at any request.
// No lost update: every record carries a version. A write names the version it was read at; when
// another replica wrote in between, the two are merged field by field against what was read (a
// three-way merge: each side's changes are kept, counters add up) and the write is tried again.
// One compaction per conversation at a time across processes: a session advisory lock. A free one
// is taken on one session kept for that (any number of conversations compact at once); one that
// another replica holds is waited for on a connection of a pool of its own, so replicas waiting
// for locks never starve ordinary queries.
// `pg` is pure JavaScript but only replicas need it, so it is an optional peer dependency too.
import type { ClientBase, Pool, PoolClient, QueryResult } from "pg";
import { loadDriver } from "./driver.js";
import { HEAD_LENGTH, HEAD_SUFFIX, HEADS_PER_ID } from "./heads.js";
import { assign, mergeRecords, readRecord } from "./merge.js";
import type { ConversationRecord, ConversationStore, ListPage, LostChange, PrefixHit } from "./store.js";
import { errorText } from "../llm/errors.js";

type PgModule = typeof import("pg");

/** pg, loaded on first use. */
export const loadPg = (require?: (id: string) => unknown): PgModule => loadDriver("pg", "replicas keep their state in PostgreSQL through pg", require) as PgModule;

/** How long a connection or a query may wait for the server. */
const DEFAULT_TIMEOUT_MS = 10_000;

/** First key of every advisory lock the proxy takes ("ptc" in ASCII), so other users of the database are not blocked. */
const LOCK_SPACE = 0x707463;
/**
 * Attempts at a write that keeps meeting newer versions (each attempt merges the newest one).
 * Every lost attempt is another writer's success, so a writer among N at once can lose N - 1
 * times in a row: 16 attempts with no pause failed with 20 writers on one record on a loaded
 * machine. Lost attempts now wait a random pause, growing to WRITE_PAUSE_MS, so writers in
 * step fall out of it.
 */
const MAX_WRITE_ATTEMPTS = 64;
const WRITE_PAUSE_MS = 32;

/** Turns idle_session_timeout off for this connection; a server before 14 has no such setting, and no rows. */
const KEEP_IDLE_SESSION = "SELECT set_config(name, '0', false) FROM pg_settings WHERE name = 'idle_session_timeout'";

const TABLES = ["ptc_conversations", "ptc_messages", "ptc_prefixes", "ptc_spend"];
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS ptc_conversations (id TEXT PRIMARY KEY, version BIGINT NOT NULL, updated_at BIGINT NOT NULL, record TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS ptc_conversations_updated ON ptc_conversations (updated_at);
  CREATE TABLE IF NOT EXISTS ptc_messages (id TEXT PRIMARY KEY, messages TEXT NOT NULL);
  CREATE TABLE IF NOT EXISTS ptc_prefixes (hash TEXT PRIMARY KEY, id TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS ptc_prefixes_id ON ptc_prefixes (id);
  CREATE TABLE IF NOT EXISTS ptc_spend (name TEXT PRIMARY KEY, tokens BIGINT NOT NULL);
`;
/** A client's conversation id (admin compact), found without reading every record; NAMED's WHERE must match its expression. */
const NAMED_INDEX = "ptc_conversations_named";
const CREATE_NAMED = `CREATE INDEX IF NOT EXISTS ${NAMED_INDEX} ON ptc_conversations ((record::json ->> 'conversation'))`;
const NAMED = "SELECT version, record FROM ptc_conversations WHERE record::json ->> 'conversation' = $1";

// A record and its request body in one round trip; the body is written only with the record.
const WITH_BODY = "m AS (INSERT INTO ptc_messages (id, messages) SELECT $1, $4::text FROM w WHERE $4::text IS NOT NULL ON CONFLICT (id) DO UPDATE SET messages = excluded.messages)";
// A record created again after expiry deleted it (with its index entries) while a request of it
// ran: its older prefixes are indexed again, else an edited turn forking from one of them started
// a conversation of its own, without the summary. A hash another conversation took since stays its.
const REINDEX = "p AS (INSERT INTO ptc_prefixes (hash, id) SELECT h, $1 FROM w, unnest($5::text[]) AS h ON CONFLICT (hash) DO NOTHING)";
const INSERT_RECORD = `WITH w AS (INSERT INTO ptc_conversations (id, version, updated_at, record) VALUES ($1, 1, $2, $3) ON CONFLICT (id) DO NOTHING RETURNING version), ${WITH_BODY}, ${REINDEX} SELECT version FROM w`;
const UPDATE_RECORD = `WITH w AS (UPDATE ptc_conversations SET version = version + 1, updated_at = $2, record = $3 WHERE id = $1 AND version = $5 RETURNING version), ${WITH_BODY} SELECT version FROM w`;

// Idle records, and under each client-given id the least recently updated heads beyond the bound.
const EXPIRE = `DELETE FROM ptc_conversations WHERE updated_at < $1 OR id IN (
  SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY left(id, -$3::int) ORDER BY updated_at DESC) AS n FROM ptc_conversations WHERE id ~ $2) t WHERE n > $4
) RETURNING id`;

/**
 * Checked and added in one statement; the conflicting row is locked before the condition is read,
 * so replicas reserving at once take turns. Its transaction id tells later whether it committed.
 * Sent with the statements that open its transaction, in one round trip: so it is written out
 * (the name quoted as a literal; numbers print as nothing but a number).
 */
const reserveStatement = (escape: (s: string) => string, name: string, tokens: number, budget: number): string =>
  `INSERT INTO ptc_spend (name, tokens) VALUES (${escape(name)}, ${Number(tokens)}) ON CONFLICT (name) DO UPDATE SET tokens = ptc_spend.tokens + excluded.tokens WHERE ptc_spend.tokens < ${Number(budget)} RETURNING txid_current()::text AS xid`;
/** A charge, in a transaction of its own for the same reason (reserveStatement). */
const chargeStatement = (escape: (s: string) => string, name: string, tokens: number): string =>
  `INSERT INTO ptc_spend (name, tokens) VALUES (${escape(name)}, ${Number(tokens)}) ON CONFLICT (name) DO UPDATE SET tokens = ptc_spend.tokens + excluded.tokens RETURNING txid_current()::text AS xid`;

/**
 * A change of spend whose outcome the server could not tell at once, to be written once it can:
 * a reservation whose commit went unanswered (its request was refused) is given back (`tokens`
 * negative) if it committed; a charge that failed (a database blip) is written if it did not.
 * `xid` undefined: `tokens` is to be added now.
 */
interface Unsettled {
  xid: string | undefined;
  /** The outcome of `xid` that calls for adding `tokens`. */
  readonly addIf: "committed" | "aborted";
  readonly virtualKey: string;
  tokens: number;
}
/**
 * Unsettled changes kept at most: past it the oldest is dropped (a reservation left charged, a
 * charge lost). Those to add now are summed per key, so only outcomes still unknown count toward it.
 */
const MAX_UNSETTLED = 1000;

/** The version a record was read at and its stored text: the base of a merge. */
interface Base {
  version: number;
  json: string;
}

/** A connection checked out of a pool, and why it must not go back to it (then it is closed). */
interface Held {
  readonly client: PoolClient;
  broken: Error | undefined;
}

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/**
 * Runs `fn` on a connection of `pool`. Checked out, a connection has no pool listener: cut by the
 * server meanwhile (a restart, a failover, an administrator), even in the middle of a query, its
 * error event would end the process. Heard here, it is closed at release, as is one `fn` marks broken.
 */
async function withClient<T>(pool: Pool, fn: (held: Held) => Promise<T>): Promise<T> {
  const held: Held = { client: await pool.connect(), broken: undefined };
  const cut = (e: Error) => (held.broken ??= e);
  held.client.on("error", cut);
  try {
    return await fn(held);
  } finally {
    held.client.off("error", cut);
    held.client.release(held.broken);
  }
}

export class PostgresStore implements ConversationStore {
  readonly kind = "postgres";
  // The version and text each record object was read at (records are the callers' own objects).
  private readonly bases = new WeakMap<ConversationRecord, Base>();
  private closed = false;
  /**
   * Connections waiting for a lock another replica holds. The wait has no timeout (it lasts as long
   * as the holder's summary), so closing cuts them: the pool's end waited for them, and a drain past
   * its timeout never ended while the other replica held the lock.
   */
  private readonly waiting = new Set<PoolClient>();
  private readonly unsettled: Unsettled[] = [];
  /** The settle under way, if any. */
  private settling: Promise<void> | undefined;
  writeError: string | undefined;
  /** Told of each unsettled change dropped past MAX_UNSETTLED: a virtual key's spend is then off by its tokens. */
  onLost: ((change: LostChange) => void) | undefined;

  private constructor(
    private readonly pool: Pool,
    private readonly locks: Pool,
    /** One connection, never closed while idle: the session that holds the locks taken without waiting. */
    private readonly session: Pool,
    /**
     * Starts a reservation's transaction. Its row stays locked until the commit: a replica that stops
     * in between (frozen, or cut off without the server noticing, for hours with TCP keepalive's
     * defaults) would hold every other replica's reservation for that key. The server ends a
     * session left idle in it after half the store's timeout, so the others' waits outlast it. In the same round trip as BEGIN, and
     * SET LOCAL, not a startup parameter, which a pooler such as PgBouncer refuses.
     */
    private readonly begin: string,
  ) {}

  /**
   * Connects, and creates the tables when any is missing (one replica at a time). A connection or
   * a query that waits past `timeoutMs` fails: a server that stops answering (a partition, a
   * stalled failover) gives store_unavailable, which a balancer retries elsewhere, not requests
   * that wait forever. Advisory locks wait as long as their holder needs.
   */
  static async open(url: string, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<PostgresStore> {
    const pg = loadPg();
    // BIGINT columns hold ms timestamps, versions and token counts: well inside a double's exact
    // range, so they are read as numbers (for these pools only, not for other users of pg).
    const types = { getTypeParser: ((oid: number, format?: "text" | "binary") => (oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser };
    const pool = new pg.Pool({ connectionString: url, max: 10, types, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
    // A lock lives as long as its connection, which sits idle while the summary runs: a server that
    // cuts idle sessions (idle_session_timeout, PostgreSQL 14 and later) would let go of the lock,
    // and another replica would compact the same conversation at once. Off for these connections.
    const onConnect = (client: ClientBase) => client.query(KEEP_IDLE_SESSION);
    const locks = new pg.Pool({ connectionString: url, max: 8, types, connectionTimeoutMillis: timeoutMs, onConnect });
    // An idle session closed by the pool would let go of the locks it holds while their summaries run.
    const session = new pg.Pool({ connectionString: url, max: 1, types, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, idleTimeoutMillis: 0, onConnect });
    // An idle connection the server dropped is replaced on next use; without a listener it would throw.
    pool.on("error", () => {});
    locks.on("error", () => {});
    session.on("error", () => {});
    try {
      await withClient(pool, async ({ client }) => {
        try {
          await client.query("BEGIN");
          await client.query("SELECT pg_advisory_xact_lock($1, 0)", [LOCK_SPACE]);
          // Created only when missing: CREATE ... IF NOT EXISTS needs the CREATE privilege even when
          // the tables exist, and a user with only reads and writes must be able to start a replica.
          const missing = await client.query<{ n: number }>("SELECT count(*)::int AS n FROM unnest($1::text[]) AS t(name) WHERE to_regclass(t.name) IS NULL", [TABLES]);
          if (missing.rows[0].n > 0) await client.query(SCHEMA);
          // Added to databases made before it by a user that may create it; one that may not (only
          // reads and writes) still starts, and the server scans for a conversation id instead.
          if ((await client.query<{ n: number }>("SELECT count(*)::int AS n WHERE to_regclass($1) IS NULL", [NAMED_INDEX])).rows[0].n > 0) {
            await client.query("SAVEPOINT named");
            await client.query(CREATE_NAMED).then(
              () => client.query("RELEASE SAVEPOINT named"),
              () => client.query("ROLLBACK TO SAVEPOINT named"),
            );
          }
          await client.query("COMMIT");
        } catch (e) {
          await client.query("ROLLBACK").catch(() => {});
          throw e;
        }
      });
    } catch (e) {
      await Promise.all([pool.end(), locks.end(), session.end()]);
      throw e;
    }
    return new PostgresStore(pool, locks, session, `BEGIN; SET LOCAL idle_in_transaction_session_timeout = ${Math.max(1, Math.floor(timeoutMs / 2))}`);
  }

  get open(): boolean {
    return !this.closed && this.writeError === undefined;
  }

  /** Runs a query, tracking whether the database answers (readiness reports it). */
  private async query<R extends Record<string, unknown>>(text: string, values: unknown[]): Promise<R[]> {
    try {
      const result = await this.pool.query<R>(text, values);
      this.writeError = undefined;
      return result.rows;
    } catch (e) {
      this.writeError = errorText(e);
      throw e;
    }
  }

  /** The stored version of a record and its text. */
  private async latest(id: string): Promise<{ version: number; record: string } | undefined> {
    const rows = await this.query<{ version: number; record: string }>("SELECT version, record FROM ptc_conversations WHERE id = $1", [id]);
    return rows[0];
  }

  async get(id: string): Promise<ConversationRecord | undefined> {
    const row = await this.latest(id);
    if (row === undefined) return undefined;
    const record = readRecord(row.record);
    this.bases.set(record, { version: row.version, json: row.record });
    return record;
  }

  async refresh(record: ConversationRecord): Promise<void> {
    const base = this.bases.get(record);
    const row = await this.latest(record.id);
    if (row === undefined || row.version === base?.version) return;
    this.adopt(record, base, row);
  }

  /** Merges the stored version into `record` (keeping the changes made here) and makes it the new base. */
  private adopt(record: ConversationRecord, base: Base | undefined, latest: { version: number; record: string }): void {
    const theirs = readRecord(latest.record) as unknown as Record<string, unknown>;
    const mine = record as unknown as Record<string, unknown>;
    // A record never read from the store was just made here: the stored one started first and wins.
    assign(record, base === undefined ? theirs : mergeRecords(JSON.parse(base.json) as Record<string, unknown>, mine, theirs));
    this.bases.set(record, { version: latest.version, json: latest.record });
  }

  async put(record: ConversationRecord, body?: string): Promise<void> {
    const turn = record.turnAt;
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(WRITE_PAUSE_MS, 2 ** attempt)));
      // The body is the turn's: one merged under a later request's turn keeps that request's body.
      if (record.turnAt !== turn) body = undefined;
      const base = this.bases.get(record);
      const json = JSON.stringify(record);
      const written =
        base === undefined
          ? await this.query<{ version: number }>(INSERT_RECORD, [record.id, record.updatedAt, json, body ?? null, record.indexed])
          : await this.query<{ version: number }>(UPDATE_RECORD, [record.id, record.updatedAt, json, body ?? null, base.version]);
      if (written.length === 1) {
        this.bases.set(record, { version: written[0].version, json });
        return;
      }
      // Another replica wrote it since (or created it first: then its record wins), or expiry deleted it.
      const row = await this.latest(record.id);
      if (row === undefined) this.bases.delete(record);
      else this.adopt(record, base, row);
    }
    throw new Error(`conversation ${record.conversation} was written by other replicas ${MAX_WRITE_ATTEMPTS} times while this one tried to write it`);
  }

  async body(id: string): Promise<string | undefined> {
    const rows = await this.query<{ messages: string }>("SELECT messages FROM ptc_messages WHERE id = $1", [id]);
    return rows[0]?.messages;
  }

  async longestPrefix(hashes: readonly string[]): Promise<PrefixHit | undefined> {
    if (hashes.length === 0) return undefined;
    const rows = await this.query<{ hash: string; id: string }>("SELECT hash, id FROM ptc_prefixes WHERE hash = ANY($1)", [hashes]);
    let best: PrefixHit | undefined;
    for (const row of rows) {
      const index = hashes.lastIndexOf(row.hash);
      if (best === undefined || index > best.index) best = { index, id: row.id };
    }
    return best;
  }

  async addPrefix(hash: string, id: string): Promise<void> {
    await this.query("INSERT INTO ptc_prefixes (hash, id) VALUES ($1, $2) ON CONFLICT (hash) DO UPDATE SET id = excluded.id", [hash, id]);
  }

  async removePrefix(hash: string, id: string): Promise<void> {
    await this.query("DELETE FROM ptc_prefixes WHERE hash = $1 AND id = $2", [hash, id]);
  }

  async named(conversation: string): Promise<ConversationRecord[]> {
    return (await this.query<{ version: number; record: string }>(NAMED, [conversation])).map((row) => {
      const record = readRecord(row.record);
      this.bases.set(record, { version: row.version, json: row.record });
      return record;
    });
  }

  async list(page?: ListPage): Promise<ConversationRecord[]> {
    const rows =
      page === undefined
        ? await this.query<{ version: number; record: string }>("SELECT version, record FROM ptc_conversations ORDER BY id", [])
        : await this.query<{ version: number; record: string }>("SELECT version, record FROM ptc_conversations WHERE id > $1 ORDER BY id LIMIT $2", [page.after ?? "", page.limit]);
    return rows.map((row) => {
      const record = readRecord(row.record);
      this.bases.set(record, { version: row.version, json: row.record });
      return record;
    });
  }

  async count(): Promise<number> {
    const rows = await this.query<{ n: number }>("SELECT count(*)::int AS n FROM ptc_conversations", []);
    return rows[0].n;
  }

  expire(before: number): Promise<number> {
    return withClient(this.pool, async (held) => {
      const { client } = held;
      try {
        await client.query("BEGIN");
        const gone = await client.query<{ id: string }>(EXPIRE, [before, HEAD_SUFFIX, HEAD_LENGTH + 1, HEADS_PER_ID]);
        const ids = gone.rows.map((r) => r.id);
        if (ids.length > 0) {
          await client.query("DELETE FROM ptc_messages WHERE id = ANY($1)", [ids]);
          await client.query("DELETE FROM ptc_prefixes WHERE id = ANY($1)", [ids]);
        }
        await client.query("COMMIT");
        return ids.length;
      } catch (e) {
        // A connection whose query timed out may still be busy: dropped, not handed to the next user.
        held.broken ??= asError(e);
        await client.query("ROLLBACK").catch(() => {});
        throw e;
      }
    });
  }

  async locked<T>(id: string, fn: () => Promise<T>): Promise<T> {
    // Free (the usual case): taken on the shared session, so it holds no connection of its own
    // for as long as the summary call takes.
    if (await this.onSession("SELECT pg_try_advisory_lock($1, hashtext($2)) AS ok", id)) {
      try {
        return await fn();
      } finally {
        await this.onSession("SELECT pg_advisory_unlock($1, hashtext($2)) AS ok", id).catch(() => {});
      }
    }
    // Another replica holds it: wait for it on a connection of its own.
    return withClient(this.locks, async (held) => {
      try {
        if (this.closed) throw new Error("the conversation store is closed");
        this.waiting.add(held.client);
        try {
          await held.client.query("SELECT pg_advisory_lock($1, hashtext($2))", [LOCK_SPACE, id]);
        } finally {
          this.waiting.delete(held.client);
        }
        return await fn();
      } finally {
        // A connection that cannot unlock is dropped: the server releases its locks when it goes.
        await held.client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [LOCK_SPACE, id]).catch((e: unknown) => {
          held.broken ??= asError(e);
        });
      }
    });
  }

  /**
   * A lock query on the shared session. A session whose query failed (timed out, perhaps still
   * running on the server) is dropped: the server lets go of what it holds, so no lock is left
   * behind with nobody to release it.
   */
  private onSession(query: string, id: string): Promise<boolean> {
    return withClient(this.session, async (held) => {
      try {
        return (await held.client.query<{ ok: boolean }>(query, [LOCK_SPACE, id])).rows[0].ok;
      } catch (e) {
        held.broken ??= asError(e);
        throw e;
      }
    });
  }

  /**
   * A charge that fails (a database blip once the upstream answered) is written once the database
   * answers again: only logged, the key kept its reservation instead of what the upstream
   * reported.
   */
  async addSpend(virtualKey: string, tokens: number): Promise<void> {
    if (this.unsettled.length > 0) void this.settle();
    await this.write(virtualKey, tokens);
  }

  /**
   * Adds `tokens` to a key's spend in a transaction of its own, as a reservation is, so one whose
   * commit went unanswered is written once, not twice. When it fails, what is left to do is kept
   * (unsettled) and the error thrown: a charge, and a settlement's own write (a reservation given
   * back), whose answer a second blip cut, credited the key twice.
   */
  private async write(virtualKey: string, tokens: number): Promise<void> {
    let xid: string | undefined;
    try {
      await withClient(this.pool, async (held) => {
        const { client } = held;
        try {
          const results = (await client.query(`${this.begin}; ${chargeStatement((t) => client.escapeLiteral(t), virtualKey, tokens)}`)) as unknown as QueryResult<{ xid: string }>[];
          xid = results[2].rows[0].xid;
          await client.query("COMMIT");
        } catch (e) {
          held.broken ??= asError(e);
          throw e;
        }
      });
      this.writeError = undefined;
    } catch (e) {
      this.writeError = errorText(e);
      // Cut before its commit was sent: nothing was charged.
      if (xid === undefined) {
        this.keep({ xid: undefined, addIf: "aborted", virtualKey, tokens });
        throw e;
      }
      const status = await this.status(xid).catch(() => undefined);
      if (status === "committed") {
        this.writeError = undefined;
        return;
      }
      if (status !== null) this.keep({ xid: status === "aborted" ? undefined : xid, addIf: "aborted", virtualKey, tokens });
      throw e;
    }
  }

  /**
   * In a transaction of its own, so a commit whose answer is lost (the connection cut as it
   * committed) can be told from one that never happened: in one statement, the request was
   * refused (503) while the key stayed charged its tokens for good.
   */
  async reserve(virtualKey: string, tokens: number, budget: number): Promise<boolean> {
    if (this.unsettled.length > 0) void this.settle();
    let xid: string | undefined;
    try {
      const taken = await withClient(this.pool, async (held) => {
        const { client } = held;
        try {
          // BEGIN, SET LOCAL, the reservation: three results.
          const results = (await client.query(`${this.begin}; ${reserveStatement((t) => client.escapeLiteral(t), virtualKey, tokens, budget)}`)) as unknown as QueryResult<{ xid: string }>[];
          const rows = results[2].rows;
          if (rows.length === 0) {
            await client.query("ROLLBACK");
            return false;
          }
          xid = rows[0].xid;
          await client.query("COMMIT");
          return true;
        } catch (e) {
          // Dropped, not handed on: the server rolls back what it had not committed when it goes.
          held.broken ??= asError(e);
          throw e;
        }
      });
      this.writeError = undefined;
      return taken;
    } catch (e) {
      this.writeError = errorText(e);
      // Cut before its commit was sent: nothing was charged.
      if (xid === undefined) throw e;
      const status = await this.status(xid).catch(() => undefined);
      if (status === "committed") {
        this.writeError = undefined;
        return true;
      }
      if (status !== "aborted" && status !== null) this.keep({ xid, addIf: "committed", virtualKey, tokens: -tokens });
      throw e;
    }
  }

  /** What the server says of a transaction: "committed", "aborted", "in progress", or null when too old to tell. */
  private async status(xid: string): Promise<string | null> {
    const rows = await this.query<{ status: string | null }>("SELECT txid_status($1::bigint) AS status", [xid]);
    return rows[0].status;
  }

  private keep(change: Unsettled): void {
    // A long outage ends many requests: one entry per key to add, not one per request, so none is dropped.
    if (change.xid === undefined) {
      const same = this.unsettled.find((u) => u.xid === undefined && u.virtualKey === change.virtualKey);
      if (same !== undefined) {
        same.tokens += change.tokens;
        return;
      }
    }
    if (this.unsettled.length >= MAX_UNSETTLED) {
      const lost = this.unsettled.shift() as Unsettled;
      this.onLost?.({ virtualKey: lost.virtualKey, tokens: lost.tokens, addIf: lost.addIf });
    }
    this.unsettled.push(change);
  }

  /**
   * Gives back the unsettled reservations that committed and writes the charges that did not;
   * those the server cannot tell of yet are kept. One run at a time, beside the requests (which do not wait for it), and it stops at the
   * first failure: a database that does not answer is tried again at the next reservation or read
   * of a spend, not once per reservation kept.
   */
  private settle(): Promise<void> {
    this.settling ??= this.settleAll().finally(() => {
      this.settling = undefined;
    });
    return this.settling;
  }

  private async settleAll(): Promise<void> {
    const pending = this.unsettled.splice(0);
    for (let i = 0; i < pending.length; i++) {
      const r = pending[i];
      try {
        if (r.xid !== undefined) {
          const status = await this.status(r.xid);
          if (status !== r.addIf) {
            if (status === "in progress") this.keep(r);
            continue;
          }
        }
      } catch {
        for (const rest of pending.slice(i)) this.keep(rest);
        return;
      }
      try {
        await this.write(r.virtualKey, r.tokens);
      } catch {
        // write kept what is left of this one.
        for (const rest of pending.slice(i + 1)) this.keep(rest);
        return;
      }
    }
  }

  async spent(virtualKey: string): Promise<number> {
    if (this.unsettled.length > 0) void this.settle();
    const rows = await this.query<{ tokens: number }>("SELECT tokens FROM ptc_spend WHERE name = $1", [virtualKey]);
    return rows[0]?.tokens ?? 0;
  }

  /** Every write goes to the database at once: nothing is pending. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Given back now, or never: they are kept in this process only.
    await this.settling;
    if (this.unsettled.length > 0) await this.settle();
    this.closed = true;
    // Cut: its query fails, and the connection is dropped at release (its unlock fails too).
    for (const client of this.waiting) void client.end().catch(() => {});
    await Promise.all([this.pool.end(), this.locks.end(), this.session.end()]);
  }
}
