// Conversation state that survives a restart: one SQLite file (better-sqlite3, WAL). Records and
// the prefix index are also held in memory, so the request path reads no disk. Changes are
// written in one transaction per turn of the event loop (a burst of requests costs one commit),
// and at close. Message history is kept on disk only (admin `compact` reads it).
// better-sqlite3 is an optional peer dependency, loaded when a store opens: it is a native
// module, and only proxy users should have to build it.
import { chmodSync, closeSync, openSync } from "node:fs";
import { createRequire } from "node:module";
import type Database from "better-sqlite3";
import type { Json } from "../compaction/types.js";
import type { ChatMessage } from "../llm/types.js";

/** Where a conversation's id came from: a header or body field by name, or the prefix match. */
export type IdentitySource = string;

/** What the proxy knows about one conversation. Never holds message content. */
export interface ConversationRecord {
  /** The store key: "<tenant>:<conversation>". */
  readonly id: string;
  /** Whose conversation this is (see tenancy.ts): never a key, only its hash or a virtual key's name. */
  readonly tenant: string;
  /** The id the client knows. */
  readonly conversation: string;
  source: IdentitySource;
  model?: string;
  createdAt: number;
  updatedAt: number;
  /** Messages in the last request. */
  messageCount: number;
  /** The strategy whose state `state` is (reset when the strategy changes). */
  strategy: string;
  state: Json | null;
  compactions: number;
  /** Summary failures in a row. */
  failures: number;
  /** The last compaction attempt failed: the next request tries again. */
  flagged: boolean;
  lastError?: string;
  /** (prompt + reserved output) / context limit of the last request as sent. */
  usageRatio: number;
  /** Local estimate of the last prompt sent, and what the upstream reported for it. */
  estimatedTokens: number;
  reportedTokens?: number;
  /** reported / estimated, the largest of recent requests, clamped to 0.7..1.3. */
  calibration: number;
  /** A context window learned from the upstream (a context-length error or a truncated prompt). */
  learnedLimit?: number;
  /** The upstream reported far fewer prompt tokens than were sent: it cut the prompt. */
  truncated: boolean;
  lastTokensBefore?: number;
  lastTokensAfter?: number;
  /** Hash of the messages of the last request, and how many there were (prefix matching). */
  lastHash: string;
  lastLength: number;
  /** The hashes this conversation has in the prefix index, oldest first (a bounded number). */
  indexed: string[];
}

export interface ConversationStore {
  get(id: string): ConversationRecord | undefined;
  /** Stores the record, and the request's body when given (the messages are read from it when needed). */
  put(record: ConversationRecord, body?: string): void;
  /** The messages of the conversation's last request. */
  messages(id: string): ChatMessage[] | undefined;
  /** The conversation that sent a request whose messages hash to `hash`. */
  byPrefix(hash: string): string | undefined;
  addPrefix(hash: string, id: string): void;
  removePrefix(hash: string): void;
  list(): ConversationRecord[];
  /** Deletes conversations not updated since `before` (ms since epoch); returns how many. */
  expire(before: number): number;
  /** Writes pending changes now. */
  flush(): void;
  /** Open and writing: false once closed, or while writes fail. */
  readonly open: boolean;
  /** Why writes fail, while they do. */
  readonly writeError: string | undefined;
  close(): void;
}

/** Thrown when better-sqlite3 is not installed; the message says what to run. */
export class MissingSqliteError extends Error {
  override readonly name = "MissingSqliteError";
}

const nodeRequire = createRequire(import.meta.url);

/** better-sqlite3, loaded on first use (a CommonJS package, so `require` loads it synchronously, once). */
export function loadSqlite(require: (id: string) => unknown = nodeRequire): typeof Database {
  try {
    return require("better-sqlite3") as typeof Database;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (/could not locate the bindings file/i.test((e as Error).message)) {
      throw new MissingSqliteError("better-sqlite3 is installed but its native module was not built (were install scripts skipped?): run `npm rebuild better-sqlite3`");
    }
    if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") throw e;
    throw new MissingSqliteError(
      "the proxy keeps its state in SQLite through better-sqlite3, an optional dependency that is not installed: run `npm install better-sqlite3` (it compiles a native module), then start the proxy again",
    );
  }
}

export class SqliteStore implements ConversationStore {
  private readonly db: Database.Database;
  private readonly records = new Map<string, ConversationRecord>();
  private readonly prefixes = new Map<string, string>();
  private readonly statements;
  private closed = false;
  // Records and request bodies waiting for the next flush; the latest body per conversation wins.
  private readonly dirty = new Map<string, string | undefined>();
  private flushing: NodeJS.Immediate | undefined;
  /** Why the last write failed (disk full, file removed...): readiness reports it until a write succeeds. */
  writeError: string | undefined;

  /** Opens (creating if needed) the database at `file`; ":memory:" for a store that does not persist. */
  constructor(file: string) {
    // Created (or tightened) to 0600 before SQLite opens it: its -wal and -shm files take the same mode.
    if (file !== ":memory:") {
      closeSync(openSync(file, "a", 0o600));
      chmodSync(file, 0o600);
    }
    const Sqlite = loadSqlite();
    this.db = new Sqlite(file);
    this.db.pragma("journal_mode = WAL");
    // A crash may lose the last write, never corrupt the file: the right trade for a cache of summaries.
    this.db.pragma("synchronous = NORMAL");
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS conversations (id TEXT PRIMARY KEY, updated_at INTEGER NOT NULL, record TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, messages TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS prefixes (hash TEXT PRIMARY KEY, id TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS prefixes_id ON prefixes (id);
    `);
    this.statements = {
      put: this.db.prepare("INSERT INTO conversations (id, updated_at, record) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at, record = excluded.record"),
      putMessages: this.db.prepare("INSERT INTO messages (id, messages) VALUES (?, ?) ON CONFLICT(id) DO UPDATE SET messages = excluded.messages"),
      messages: this.db.prepare<[string], { messages: string }>("SELECT messages FROM messages WHERE id = ?"),
      addPrefix: this.db.prepare("INSERT INTO prefixes (hash, id) VALUES (?, ?) ON CONFLICT(hash) DO UPDATE SET id = excluded.id"),
      removePrefix: this.db.prepare("DELETE FROM prefixes WHERE hash = ?"),
      stale: this.db.prepare<[number], { id: string }>("SELECT id FROM conversations WHERE updated_at < ?"),
      delete: [
        this.db.prepare("DELETE FROM conversations WHERE id = ?"),
        this.db.prepare("DELETE FROM messages WHERE id = ?"),
        this.db.prepare("DELETE FROM prefixes WHERE id = ?"),
      ],
    };
    for (const row of this.db.prepare<[], { record: string }>("SELECT record FROM conversations").all()) {
      const record = JSON.parse(row.record) as ConversationRecord;
      this.records.set(record.id, record);
    }
    for (const row of this.db.prepare<[], { hash: string; id: string }>("SELECT hash, id FROM prefixes").all()) this.prefixes.set(row.hash, row.id);
  }

  get open(): boolean {
    return !this.closed && this.db.open && this.writeError === undefined;
  }

  get(id: string): ConversationRecord | undefined {
    return this.records.get(id);
  }

  put(record: ConversationRecord, body?: string): void {
    this.records.set(record.id, record);
    this.dirty.set(record.id, body ?? this.dirty.get(record.id));
    this.flushing ??= setImmediate(() => this.flush());
  }

  /** Writes every pending change in one transaction. A failed write is kept for the next try and reported by `open`. */
  flush(): void {
    if (this.flushing !== undefined) clearImmediate(this.flushing);
    this.flushing = undefined;
    if (this.dirty.size === 0 || this.closed) return;
    try {
      this.db.transaction(() => {
        for (const [id, body] of this.dirty) {
          const record = this.records.get(id);
          if (record === undefined) continue;
          this.statements.put.run(id, record.updatedAt, JSON.stringify(record));
          if (body !== undefined) this.statements.putMessages.run(id, body);
        }
      })();
    } catch (e) {
      // Requests go on from memory meanwhile.
      this.writeError = e instanceof Error ? e.message : String(e);
      return;
    }
    this.dirty.clear();
    this.writeError = undefined;
  }

  messages(id: string): ChatMessage[] | undefined {
    this.flush();
    const row = this.statements.messages.get(id);
    if (row === undefined) return undefined;
    const body = JSON.parse(row.messages) as { messages?: ChatMessage[] };
    return Array.isArray(body.messages) ? body.messages : undefined;
  }

  byPrefix(hash: string): string | undefined {
    return this.prefixes.get(hash);
  }

  addPrefix(hash: string, id: string): void {
    if (this.prefixes.get(hash) === id) return;
    this.prefixes.set(hash, id);
    this.statements.addPrefix.run(hash, id);
  }

  removePrefix(hash: string): void {
    if (this.prefixes.delete(hash)) this.statements.removePrefix.run(hash);
  }

  list(): ConversationRecord[] {
    return [...this.records.values()];
  }

  expire(before: number): number {
    this.flush();
    const stale = this.statements.stale.all(before).map((r) => r.id);
    if (stale.length === 0) return 0;
    const gone = new Set(stale);
    this.db.transaction(() => {
      for (const id of stale) for (const s of this.statements.delete) s.run(id);
    })();
    for (const id of stale) this.records.delete(id);
    for (const [hash, id] of this.prefixes) if (gone.has(id)) this.prefixes.delete(hash);
    return stale.length;
  }

  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.db.close();
  }
}
