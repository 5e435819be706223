// The embedded store: one SQLite file (better-sqlite3, WAL) for one proxy process. Records and the
// prefix index are also held in memory, so the request path reads no disk and every call resolves
// at once. Another process may open the same file (two proxies on the default state directory):
// SQLite's data_version tells when one committed, and only then are records read back from the
// file, merged with this process's changes as replicas merge theirs (merge.ts), and the prefix
// index looked up there. Records and request bodies are written in one transaction per turn of
// the event loop (a burst of requests costs one commit), and at close; index and spend changes are written as they
// come. Virtual keys' spend is read from the file at each check (one primary-key lookup): other
// processes on the same file (two proxies on the default state directory) charge the same keys.
// Message history is kept on disk only (admin `compact` reads it). better-sqlite3 is a native
// module, so it is an optional peer dependency, loaded when a store opens: only proxy users should
// have to build it.
import { randomUUID } from "node:crypto";
import { chmodSync, closeSync, openSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { setImmediate as nextTurn, setTimeout as pause } from "node:timers/promises";
import type Database from "better-sqlite3";
import { loadDriver } from "./driver.js";
import { alive, HOST } from "./lock.js";
import { HEAD_LENGTH, HEAD_SUFFIX, HEADS_PER_ID } from "./heads.js";
import { assign, mergeRecords, readRecord } from "./merge.js";
import type { ConversationRecord, ConversationStore, ListPage, PrefixHit } from "./store.js";
import { errorText } from "../llm/errors.js";

type SqliteModule = typeof Database;

/** better-sqlite3, loaded on first use. */
export const loadSqlite = (require?: (id: string) => unknown): SqliteModule =>
  loadDriver("better-sqlite3", "the proxy keeps its state in SQLite through better-sqlite3 (it compiles a native module)", require) as SqliteModule;

const DONE = Promise.resolve();
const HEAD = new RegExp(HEAD_SUFFIX);

/**
 * A compaction lease lasts this long unless renewed: its holder renews it while its summary call
 * runs, so it runs out only when the holder stopped (killed on another host, or frozen).
 */
const LEASE_MS = 30_000;
/** Conversations expiry deletes in one transaction, between turns of the event loop. */
const EXPIRE_BATCH = 500;
/** How often a process waiting for another's lease looks again (SQLite tells no one of a commit). */
const LEASE_POLL_MS = 50;
/**
 * The lease owners of this process's open stores. A lease of this host and pid owned by none of
 * them was left by an earlier process that had the same pid (a container's proxy is pid 1 after
 * every restart).
 */
const OWNERS = new Set<string>();
/**
 * How long a write keeps trying while another connection holds the file's write lock (another
 * proxy's commit, a sqlite3 shell left in BEGIN IMMEDIATE) before it fails with SQLITE_BUSY.
 */
const BUSY_TIMEOUT_MS = 5_000;
/**
 * How long one try waits for the lock. SQLite waits inside the statement, so the event loop stops
 * meanwhile: with the whole BUSY_TIMEOUT_MS there, every request, stream and /healthz of the proxy
 * stalled 5 s per write. Short, with the event loop running between tries (BUSY_PAUSE_MS apart).
 */
const BUSY_WAIT_MS = 5;
const BUSY_PAUSE_MS = 20;


/** SQLITE_BUSY and its extended codes: the file is locked by another connection, not unwritable. */
const busy = (e: unknown): boolean => typeof (e as { code?: unknown } | null)?.code === "string" && (e as { code: string }).code.startsWith("SQLITE_BUSY");

export class SqliteStore implements ConversationStore {
  private readonly db: Database.Database;
  private readonly records = new Map<string, ConversationRecord>();
  private readonly prefixes = new Map<string, string>();
  /** Each record's text as last read from or written to the file: the base of a merge with another process's write. */
  private readonly bases = new Map<string, string>();
  /** The file's data_version when last looked at: it changes when another connection commits. */
  private seen: number;
  /** Records known to hold every other process's write since `seen`; undefined: all of them. */
  private current: Set<string> | undefined;
  /** Another process has written the file since it was opened: the prefix index is read from the file. */
  private shared = false;
  /** Each key's spend as last read from or written to the file: the answer while the file cannot be read. */
  private readonly spend = new Map<string, number>();
  /** Tokens whose write failed (a full disk): counted here so the budget still holds, and written with the next charge. */
  private readonly unwritten = new Map<string, number>();
  private readonly statements;
  private closed = false;
  /** Names this store's compaction leases in the file (two stores in one process are two owners). */
  private readonly owner = randomUUID();
  // Records and request bodies waiting for the next flush; the latest body per conversation wins.
  private readonly dirty = new Map<string, string | undefined>();
  private flushing: NodeJS.Immediate | undefined;
  /** Since when pending writes have met another connection's lock (they are tried again on `retry`); undefined: they have not. */
  private busySince: number | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** Why the last write failed (disk full, file removed...): readiness reports it until a write succeeds. */
  writeError: string | undefined;
  /** The file opened at `file` (undefined in memory): writes go to it even once the path names another, or none. */
  private readonly opened: { readonly dev: number; readonly ino: number } | undefined;
  private readonly file: string;

  /** Opens (creating if needed) the database at `file`; ":memory:" for a store that does not persist. */
  constructor(file: string) {
    // Created (or tightened) to 0600 before SQLite opens it: its -wal and -shm files take the same mode.
    if (file !== ":memory:") {
      closeSync(openSync(file, "a", 0o600));
      chmodSync(file, 0o600);
    }
    const Sqlite = loadSqlite();
    // Opened once, at start: waiting there for another connection's lock stalls no request.
    this.db = new Sqlite(file, { timeout: BUSY_TIMEOUT_MS });
    // The path as opened, whatever the working directory later.
    this.file = resolve(file);
    this.opened = file === ":memory:" ? undefined : statSync(file);
    this.db.pragma("journal_mode = WAL");
    // A crash may lose the last write, never corrupt the file: the right trade for a cache of summaries.
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, updated_at INTEGER NOT NULL, record TEXT NOT NULL);
      -- Expiry's reads (idle ids, every id's time) from the index alone, not the records' pages.
      CREATE INDEX IF NOT EXISTS conversations_times ON conversations (updated_at, id);
      -- A client's conversation id (admin compact) found without reading every record.
      CREATE INDEX IF NOT EXISTS conversations_named ON conversations (json_extract(record, '$.conversation'));
      CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, messages TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS prefixes (hash TEXT PRIMARY KEY, id TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS prefixes_id ON prefixes (id);
      CREATE TABLE IF NOT EXISTS spend (name TEXT PRIMARY KEY, tokens INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL, expires INTEGER NOT NULL);
    `);
    this.statements = {
      put: this.db.prepare("INSERT INTO conversations (id, updated_at, record) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at, record = excluded.record"),
      putMessages: this.db.prepare("INSERT INTO messages (id, messages) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET messages = excluded.messages"),
      messages: this.db.prepare<[string], { messages: string }>("SELECT messages FROM messages WHERE id = ?"),
      addPrefix: this.db.prepare("INSERT INTO prefixes (hash, id) VALUES (?, ?) ON CONFLICT(hash) DO UPDATE SET id = excluded.id"),
      removePrefix: this.db.prepare("DELETE FROM prefixes WHERE hash = ? AND id = ?"),
      reindex: this.db.prepare("INSERT INTO prefixes (hash, id) VALUES (?, ?) ON CONFLICT(hash) DO NOTHING"),
      addSpend: this.db.prepare<[string, number], { tokens: number }>("INSERT INTO spend (name, tokens) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET tokens = tokens + excluded.tokens RETURNING tokens"),
      // Checked and added in one statement: another process on the file may be reserving at once.
      reserve: this.db.prepare<[string, number, number], { tokens: number }>("INSERT INTO spend (name, tokens) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET tokens = spend.tokens + excluded.tokens WHERE spend.tokens < ? RETURNING tokens"),
      spent: this.db.prepare<[string], { tokens: number }>("SELECT tokens FROM spend WHERE name = ?"),
      record: this.db.prepare<[string], { record: string }>("SELECT record FROM conversations WHERE id = ?"),
      records: this.db.prepare<[], { id: string; record: string }>("SELECT id, record FROM conversations"),
      named: this.db.prepare<[string], { id: string; record: string }>("SELECT id, record FROM conversations WHERE json_extract(record, '$.conversation') = ?"),
      count: this.db.prepare<[], number>("SELECT count(*) FROM conversations").pluck(),
      ids: this.db.prepare<[], string>("SELECT id FROM conversations").pluck(),
      times: this.db.prepare<[], { id: string; updated_at: number }>("SELECT id, updated_at FROM conversations"),
      prefixesOf: this.db.prepare<[string], { hash: string; id: string }>("SELECT hash, id FROM prefixes WHERE hash IN (SELECT value FROM json_each(?))"),
      // Taken when free or run out; renewed and let go only by its owner.
      lease: this.db.prepare<[string, string, string, number, number, number], { owner: string }>(
        "INSERT INTO leases (id, owner, host, pid, expires) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, host = excluded.host, pid = excluded.pid, expires = excluded.expires WHERE leases.expires < ? RETURNING owner",
      ),
      holder: this.db.prepare<[string], { owner: string; host: string; pid: number }>("SELECT owner, host, pid FROM leases WHERE id = ?"),
      renew: this.db.prepare("UPDATE leases SET expires = ? WHERE id = ? AND owner = ?"),
      unlease: this.db.prepare("DELETE FROM leases WHERE id = ? AND owner = ?"),
      dataVersion: this.db.prepare<[], number>("PRAGMA data_version").pluck(),
      stale: this.db.prepare<[number], { id: string }>("SELECT id FROM conversations WHERE updated_at < ?"),
      // Checked again as it deletes: another process may have used the conversation since it was picked.
      deleteIdle: this.db.prepare<[string, number]>("DELETE FROM conversations WHERE id = ? AND updated_at < ?"),
      delete: [this.db.prepare("DELETE FROM messages WHERE id = ?"), this.db.prepare("DELETE FROM prefixes WHERE id = ?")],
    };
    OWNERS.add(this.owner);
    this.seen = this.statements.dataVersion.get() as number;
    for (const row of this.statements.records.all()) {
      this.records.set(row.id, readRecord(row.record));
      this.bases.set(row.id, row.record);
    }
    for (const row of this.db.prepare<[], { hash: string; id: string }>("SELECT hash, id FROM prefixes").all()) this.prefixes.set(row.hash, row.id);
    for (const row of this.db.prepare<[], { name: string; tokens: number }>("SELECT name, tokens FROM spend").all()) this.spend.set(row.name, row.tokens);
    this.db.pragma(`busy_timeout = ${BUSY_WAIT_MS}`);
  }

  /**
   * Runs `fn` (statements that write), trying again while another connection holds the file's
   * write lock, the event loop running between tries, for up to BUSY_TIMEOUT_MS; then its last
   * SQLITE_BUSY is thrown. An unlocked file runs `fn` once, at once.
   */
  private async retrying<T>(fn: () => T): Promise<T> {
    let deadline: number | undefined;
    for (;;) {
      try {
        return fn();
      } catch (e) {
        if (!busy(e)) throw e;
        deadline ??= Date.now() + BUSY_TIMEOUT_MS;
        if (Date.now() >= deadline) throw e;
      }
      await pause(BUSY_PAUSE_MS);
    }
  }

  readonly kind = "sqlite";

  get open(): boolean {
    return !this.closed && this.db.open && this.writeError === undefined;
  }

  async get(id: string): Promise<ConversationRecord | undefined> {
    this.sync(id);
    return this.records.get(id);
  }

  async refresh(record: ConversationRecord): Promise<void> {
    this.sync(record.id);
  }

  /** Looks whether another process committed to the file since the last look: then any record may be stale. */
  private others(): void {
    const version = this.statements.dataVersion.get() as number;
    if (version === this.seen) return;
    this.seen = version;
    this.current = new Set();
    this.shared = true;
  }

  /**
   * Brings the record of `id` up to the file's, when another process may have written it. A file
   * that cannot be read (its table gone, an I/O error) leaves requests going on from memory, as
   * one that takes no writes does; the record is read again at its next use.
   */
  private sync(id: string): void {
    let stored: string | undefined;
    try {
      this.others();
      if (this.current === undefined || this.current.has(id)) return;
      stored = this.statements.record.get(id)?.record;
    } catch {
      return;
    }
    this.reconcile(id, stored);
    this.current.add(id);
  }

  /** Takes the file's text of a record (undefined: deleted) into memory, keeping this process's changes since its base. */
  private reconcile(id: string, stored: string | undefined): void {
    const base = this.bases.get(id);
    if (stored === base) return;
    const mine = this.records.get(id);
    if (stored === undefined) {
      // Expired by the other process: forgotten here too, unless this one has a change to write.
      this.bases.delete(id);
      if (this.dirty.has(id)) return;
      this.records.delete(id);
      // With its index entries (the file's went with it): else they stayed in memory for good.
      for (const hash of mine?.indexed ?? []) if (this.prefixes.get(hash) === id) this.prefixes.delete(hash);
      return;
    }
    const theirs = readRecord(stored) as unknown as Record<string, unknown>;
    // A record never written here was just made here: the stored one started first and wins.
    if (mine === undefined) this.records.set(id, theirs as unknown as ConversationRecord);
    else {
      const turn = mine.turnAt;
      assign(mine, base === undefined ? theirs : mergeRecords(JSON.parse(base) as Record<string, unknown>, mine as unknown as Record<string, unknown>, theirs));
      // A body waiting to be written is its turn's: under another process's later request, that request's body stays.
      if (mine.turnAt !== turn && this.dirty.has(id)) this.dirty.set(id, undefined);
    }
    this.bases.set(id, stored);
  }

  /** Writes pending changes, then takes in every record another process wrote or deleted since the last look. */
  private syncAll(): void {
    this.write();
    let stored: Map<string, string>;
    try {
      this.others();
      if (this.current === undefined) return;
      stored = new Map(this.statements.records.all().map((row) => [row.id, row.record]));
    } catch {
      // Unreadable: what is in memory is the answer meanwhile (see sync).
      return;
    }
    for (const id of this.records.keys()) if (!stored.has(id)) this.reconcile(id, undefined);
    for (const [id, text] of stored) this.reconcile(id, text);
    this.current = undefined;
  }

  put(record: ConversationRecord, body?: string): Promise<void> {
    this.records.set(record.id, record);
    this.dirty.set(record.id, body ?? this.dirty.get(record.id));
    this.flushing ??= setImmediate(() => this.write());
    return DONE;
  }

  flush(): Promise<void> {
    this.write();
    return this.busySince === undefined ? DONE : this.settle();
  }

  /** Resolves once pending writes are written, or failed (writeError), another connection's lock waited out. */
  private async settle(): Promise<void> {
    this.write();
    while (this.busySince !== undefined && !this.closed) {
      await pause(BUSY_PAUSE_MS);
      this.write();
    }
  }

  /** Writes every pending change in one transaction. A failed write is kept for the next try and reported by `open`. */
  private write(): void {
    if (this.flushing !== undefined) clearImmediate(this.flushing);
    this.flushing = undefined;
    clearTimeout(this.retry);
    this.retry = undefined;
    if (this.dirty.size === 0 || this.closed) {
      this.busySince = undefined;
      return;
    }
    const written: [string, string][] = [];
    const reindexed: ConversationRecord[] = [];
    try {
      // Written there, they would be lost at the next start, and another proxy opening the path would share nothing with this one.
      if (this.moved()) throw new Error(`the store file ${this.file} was removed or replaced while the proxy ran: nothing more is written to it (restart the proxy to open the file now at that path)`);
      // Immediate: holding the write lock, another process's last commit is what the merge sees.
      this.db
        .transaction(() => {
          this.others();
          for (const id of this.dirty.keys()) {
            if (this.current !== undefined && !this.current.has(id)) this.reconcile(id, this.statements.record.get(id)?.record);
            const record = this.records.get(id);
            const body = this.dirty.get(id);
            if (record === undefined) continue;
            const text = JSON.stringify(record);
            // Not in the file: new, or expired (with its index entries) while a request of it ran.
            // Its older prefixes are indexed again, else an edited turn forking from one of them
            // started a conversation of its own, without the summary. A hash another conversation
            // took since stays its.
            if (!this.bases.has(id) && record.indexed.length > 0) {
              for (const hash of record.indexed) this.statements.reindex.run(hash, id);
              reindexed.push(record);
            }
            this.statements.put.run(id, record.updatedAt, text);
            if (body !== undefined) this.statements.putMessages.run(id, body);
            written.push([id, text]);
          }
        })
        .immediate();
    } catch (e) {
      if (busy(e)) {
        const now = Date.now();
        this.busySince ??= now;
        // Another connection's lock: tried again shortly, everything pending kept, the event loop running meanwhile.
        if (now - this.busySince < BUSY_TIMEOUT_MS) {
          this.retry = setTimeout(() => this.write(), BUSY_PAUSE_MS);
          return;
        }
      }
      this.busySince = undefined;
      // Requests go on from memory meanwhile. The records are kept for the next try (they are in
      // memory anyway); the bodies are not: held until the disk takes writes again, every
      // conversation's last request would pile up in memory. Its next request brings a new one.
      this.writeError = errorText(e);
      for (const id of this.dirty.keys()) this.dirty.set(id, undefined);
      return;
    }
    for (const record of reindexed) for (const hash of record.indexed) if (!this.prefixes.has(hash)) this.prefixes.set(hash, record.id);
    // Bases move only once committed: a failed write leaves the file at the old ones.
    for (const [id, text] of written) {
      this.bases.set(id, text);
      this.current?.add(id);
    }
    this.dirty.clear();
    this.busySince = undefined;
    this.writeError = undefined;
  }

  /** The store's path names no file any more, or another than the one opened (a state directory cleaned, a backup restored over it). */
  private moved(): boolean {
    if (this.opened === undefined) return false;
    const now = statSync(this.file, { throwIfNoEntry: false });
    return now === undefined || now.ino !== this.opened.ino || now.dev !== this.opened.dev;
  }

  // Async, as every method that touches the file: a failing statement (a full disk, another
  // process's lock) rejects, where a throw would escape a caller's .then and end the process.
  async body(id: string): Promise<string | undefined> {
    // One not written yet (another connection holds the lock, or a write failed) is the latest.
    return this.dirty.get(id) ?? this.statements.messages.get(id)?.messages;
  }

  async longestPrefix(hashes: readonly string[]): Promise<PrefixHit | undefined> {
    let rows: { hash: string; id: string }[] | undefined;
    try {
      this.others();
      // Another process indexes its conversations in the file: look there, as a replica does.
      if (this.shared) rows = this.statements.prefixesOf.all(JSON.stringify(hashes));
    } catch {
      // Unreadable: the index in memory answers meanwhile (see sync).
    }
    if (rows !== undefined) {
      let best: PrefixHit | undefined;
      for (const row of rows) {
        const index = hashes.lastIndexOf(row.hash);
        if (best === undefined || index > best.index) best = { index, id: row.id };
      }
      return best;
    }
    for (let k = hashes.length - 1; k >= 0; k--) {
      const id = this.prefixes.get(hashes[k]);
      if (id !== undefined) return { index: k, id };
    }
    return undefined;
  }

  async addPrefix(hash: string, id: string): Promise<void> {
    if (this.prefixes.get(hash) === id && !this.shared) return;
    // Written first: an entry that failed to reach the file is not taken as written, and the next add retries it.
    await this.retrying(() => this.statements.addPrefix.run(hash, id));
    this.prefixes.set(hash, id);
  }

  async removePrefix(hash: string, id: string): Promise<void> {
    const held = this.prefixes.get(hash) === id;
    if (!held && !this.shared) return;
    // Deleted from the file first, for the same reason as addPrefix.
    await this.retrying(() => this.statements.removePrefix.run(hash, id));
    if (held) this.prefixes.delete(hash);
  }

  async named(conversation: string): Promise<ConversationRecord[]> {
    this.write();
    let rows: { id: string; record: string }[] | undefined;
    try {
      this.others();
      // Another process writes the file: its conversations are there (see list).
      if (this.shared) rows = this.statements.named.all(conversation);
    } catch {
      // Unreadable: what is in memory is the answer meanwhile (see sync).
    }
    if (rows === undefined) return [...this.records.values()].filter((r) => r.conversation === conversation);
    const ids = new Set<string>();
    for (const row of rows) {
      this.reconcile(row.id, row.record);
      this.current?.add(row.id);
      ids.add(row.id);
    }
    // Written here but not yet to the file (a failed write).
    for (const id of this.dirty.keys()) if (this.records.get(id)?.conversation === conversation) ids.add(id);
    const records: ConversationRecord[] = [];
    for (const id of ids) {
      const record = this.records.get(id);
      if (record !== undefined) records.push(record);
    }
    return records;
  }

  async list(page?: ListPage): Promise<ConversationRecord[]> {
    if (page === undefined) {
      this.syncAll();
      return [...this.records.values()];
    }
    // A page reads back only its own records (sync): once another process writes the file,
    // syncAll read every record for each page, 340 ms a page at 100,000 conversations.
    this.write();
    let ids: Iterable<string> = this.records.keys();
    try {
      this.others();
      if (this.shared) {
        const stored = new Set(this.statements.ids.all());
        // Expired by the other process: forgotten here too (see reconcile).
        for (const id of [...this.records.keys()]) if (!stored.has(id)) this.reconcile(id, undefined);
        for (const id of this.records.keys()) stored.add(id);
        ids = stored;
      }
    } catch {
      // Unreadable: what is in memory is the answer meanwhile (see sync).
    }
    const after: string[] = [];
    for (const id of ids) if (page.after === undefined || id > page.after) after.push(id);
    // Ordered as `>` compares (UTF-16 code units), so a page goes on where the last one ended.
    after.sort();
    const records: ConversationRecord[] = [];
    for (const id of after) {
      if (records.length === page.limit) break;
      this.sync(id);
      const record = this.records.get(id);
      if (record !== undefined) records.push(record);
    }
    return records;
  }

  /**
   * Counted in the file once another process writes it (each /metrics scrape asks): reading every
   * record back, as list does, took 4 s at 100,000 conversations. Records whose write is pending
   * (a full disk) and that the file does not hold are added.
   */
  async count(): Promise<number> {
    this.write();
    let stored: number;
    try {
      this.others();
      if (!this.shared) return this.records.size;
      stored = this.statements.count.get() as number;
    } catch {
      // Unreadable: what is in memory is the answer meanwhile (see sync).
      return this.records.size;
    }
    for (const id of this.dirty.keys()) if (!this.bases.has(id)) stored++;
    return stored;
  }

  async expire(before: number): Promise<number> {
    this.write();
    // Each conversation's time: in the file once another process writes it (its conversations
    // included), read without the records (reading them all back took 4 s at 100,000).
    let times: Iterable<[string, number]> = [...this.records].map(([id, record]) => [id, record.updatedAt]);
    this.others();
    if (this.shared) {
      const file = new Map(this.statements.times.all().map((r) => [r.id, r.updated_at]));
      // Expired by the other process: forgotten here too (see reconcile).
      for (const id of [...this.records.keys()]) if (!file.has(id)) this.reconcile(id, undefined);
      times = file;
    }
    // Each id with the time it must still be older than when deleted.
    const stale: [string, number][] = this.statements.stale.all(before).map((r) => [r.id, before]);
    const idle = new Set(stale.map(([id]) => id));
    // Under each client-given id, the least recently updated heads beyond the bound.
    const heads = new Map<string, [string, number][]>();
    for (const [id, time] of times) {
      if (idle.has(id) || !HEAD.test(id)) continue;
      const base = id.slice(0, -HEAD_LENGTH - 1);
      const group = heads.get(base);
      if (group === undefined) heads.set(base, [[id, time]]);
      else group.push([id, time]);
    }
    for (const group of heads.values()) {
      if (group.length <= HEADS_PER_ID) continue;
      group.sort((x, y) => y[1] - x[1]);
      // Trimmed only if not used since it was ranked.
      for (const [id, time] of group.slice(HEADS_PER_ID)) stale.push([id, time + 1]);
    }
    if (stale.length === 0) return 0;
    const gone = new Set<string>();
    // In batches, the event loop running between them: in one transaction, 100,000 idle
    // conversations held up every request for 2.7 s, and another process's writes as long.
    for (let start = 0; start < stale.length; start += EXPIRE_BATCH) {
      if (start > 0) await nextTurn();
      if (this.closed) break;
      // A conversation used meanwhile is written first: its new time keeps it (deleteIdle checks).
      await this.settle();
      const deleted: string[] = [];
      await this.retrying(() =>
        this.db.transaction(() => {
          deleted.length = 0;
          for (const [id, bound] of stale.slice(start, start + EXPIRE_BATCH)) {
            // Used since, its newer version still waiting to be written (writes fail): deleted, it was lost.
            if (this.dirty.has(id) && (this.records.get(id)?.updatedAt ?? 0) >= bound) continue;
            if (this.statements.deleteIdle.run(id, bound).changes === 0) continue;
            for (const s of this.statements.delete) s.run(id);
            deleted.push(id);
          }
        }).immediate(),
      );
      // Forgotten once committed: a failed batch leaves them in the file.
      for (const id of deleted) {
        gone.add(id);
        this.records.delete(id);
        this.bases.delete(id);
      }
    }
    // Not those of one written back meanwhile (see write).
    for (const [hash, id] of this.prefixes) if (gone.has(id) && !this.records.has(id)) this.prefixes.delete(hash);
    return gone.size;
  }

  /**
   * A lease row in the file, so another process on it (two proxies on the default state directory)
   * does not summarize the same conversation at once: the second would pay for a summary call
   * whose result the first's replaces. One that another process holds is waited for, looking again
   * every LEASE_POLL_MS; one whose holder died (a process of this host that no longer runs) or
   * stopped renewing it is taken over. The holder's writes are committed before it lets go, so
   * the next holder starts from its summary. A file that takes no writes (a full disk) runs `fn`
   * unlocked, as requests go on from memory meanwhile; one that another connection keeps locked
   * past the busy timeout rejects, and the compaction is skipped.
   */
  async locked<T>(id: string, fn: () => Promise<T>): Promise<T> {
    for (;;) {
      if (this.closed) throw new Error("the conversation store is closed");
      const taken = this.lease(id);
      if (typeof taken === "boolean" ? taken : await taken) break;
      await pause(LEASE_POLL_MS);
    }
    const renew = setInterval(() => {
      try {
        this.statements.renew.run(Date.now() + LEASE_MS, id, this.owner);
      } catch {
        // Not written (a full disk): tried again at the next renewal; the lease is long enough.
      }
    }, LEASE_MS / 3);
    renew.unref();
    try {
      return await fn();
    } finally {
      clearInterval(renew);
      await this.settle();
      try {
        if (!this.closed) await this.retrying(() => this.statements.unlease.run(id, this.owner));
      } catch {
        // Left in the file: it runs out after LEASE_MS, or is taken over once this process has ended.
      }
    }
  }

  /** Takes the lease of `id` when free, run out, or held by a process of this host that has ended; false while another holds it. */
  private lease(id: string): boolean | Promise<boolean> {
    // Tried at the call (a free lease is taken before locked returns); again, yielding, only while another connection holds the file's lock.
    try {
      return this.leaseOnce(id);
    } catch (e) {
      if (!busy(e)) return true;
    }
    return this.retrying(() => this.leaseOnce(id)).catch((e: unknown) => {
      // Closed while it waited: its statements fail as a full disk's would, but nothing is to run now.
      if (this.closed) throw new Error("the conversation store is closed");
      // Another connection held the file's write lock through the whole busy timeout (a long
      // transaction, a backup): it may be a proxy that takes this lease next, so running unlocked
      // could pay for a second summary call.
      if (busy(e)) throw new Error(`the conversation store's SQLite file stayed locked by another connection for ${BUSY_TIMEOUT_MS} ms: compaction skipped`);
      // The file takes no writes (a full disk): compactions go on unlocked, as requests go on from memory.
      return true;
    });
  }

  private leaseOnce(id: string): boolean {
    const take = () => {
      const now = Date.now();
      return this.statements.lease.get(id, this.owner, HOST, process.pid, now + LEASE_MS, now) !== undefined;
    };
    if (take()) return true;
    const holder = this.statements.holder.get(id);
    if (holder === undefined || holder.host !== HOST || (holder.pid === process.pid ? OWNERS.has(holder.owner) : alive(holder.pid))) return false;
    this.statements.unlease.run(id, holder.owner);
    return take();
  }

  async addSpend(virtualKey: string, tokens: number): Promise<void> {
    let row: { tokens: number } | undefined;
    try {
      // What could not be written yet is read at each try: another charge of the key may write it while this one waits for the lock.
      row = await this.retrying(() => {
        const written = this.statements.addSpend.get(virtualKey, tokens + (this.unwritten.get(virtualKey) ?? 0));
        this.unwritten.delete(virtualKey);
        return written;
      });
    } catch (e) {
      // Added to what is unwritten now, not set to what this one read: another charge that failed
      // since (requests ending together) read the same count, and is in it.
      this.unwritten.set(virtualKey, (this.unwritten.get(virtualKey) ?? 0) + tokens);
      throw e;
    }
    if (row !== undefined) this.spend.set(virtualKey, row.tokens);
  }

  async reserve(virtualKey: string, tokens: number, budget: number): Promise<boolean> {
    let row: { tokens: number } | undefined;
    try {
      // What could not be written yet counts against the budget, and is written with this (read
      // at each try, as addSpend reads it).
      row = await this.retrying(() => {
        const pending = this.unwritten.get(virtualKey) ?? 0;
        const written = this.statements.reserve.get(virtualKey, tokens + pending, budget - pending);
        if (written !== undefined) this.unwritten.delete(virtualKey);
        return written;
      });
    } catch (e) {
      // Another connection holds the write lock (another proxy on the file may be charging this key
      // meanwhile): the last count seen is no bound, so the request is refused (503 store_unavailable).
      if (busy(e)) throw new Error(`the conversation store's SQLite file stayed locked by another connection for ${BUSY_TIMEOUT_MS} ms: the virtual key's budget cannot be checked`);
      // The file takes no writes (a full disk): the last count seen holds the budget here, and the
      // reservation is written with the key's next charge (which reports the failure). What is
      // unwritten is read now: another reservation that failed since is in it.
      const pending = this.unwritten.get(virtualKey) ?? 0;
      if ((this.spend.get(virtualKey) ?? 0) + pending >= budget) return false;
      this.unwritten.set(virtualKey, pending + tokens);
      return true;
    }
    if (row === undefined) return false;
    this.spend.set(virtualKey, row.tokens);
    return true;
  }

  /** From the file, where every process on it adds its charges; what could not be written yet is added. */
  async spent(virtualKey: string): Promise<number> {
    try {
      this.spend.set(virtualKey, this.statements.spent.get(virtualKey)?.tokens ?? 0);
    } catch {
      // The file cannot be read (its table gone, an I/O error): the last count seen still holds the budget here.
    }
    return (this.spend.get(virtualKey) ?? 0) + (this.unwritten.get(virtualKey) ?? 0);
  }

  close(): Promise<void> {
    if (this.closed) return DONE;
    this.write();
    return this.busySince === undefined ? this.shut() : this.settle().then(() => this.shut());
  }

  private shut(): Promise<void> {
    if (this.closed) return DONE;
    this.closed = true;
    clearTimeout(this.retry);
    OWNERS.delete(this.owner);
    try {
      // A compaction still running (cut by the close) lets go of its lease for the other processes.
      this.db.prepare("DELETE FROM leases WHERE owner = ?").run(this.owner);
    } catch {
      // They run out after LEASE_MS, or are taken over once this process has ended.
    }
    this.db.close();
    return DONE;
  }
}
