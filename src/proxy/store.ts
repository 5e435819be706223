// Where the proxy keeps what it knows about conversations. One interface, two backends: an
// embedded SQLite file (the default: one process) and PostgreSQL (replicas sharing state). Every
// method is async so a networked backend fits; the SQLite one answers from memory and resolves at
// once. Both drivers are optional peer dependencies, loaded when a store opens (driver.ts).
import type { Json } from "../compaction/types.js";

/** Where a conversation's id came from: a header or body field by name, or the prefix match. */
export type IdentitySource = string;

/** Which API a compacted request speaks: OpenAI chat completions, Anthropic messages, or OpenAI responses. */
export type ChatApi = "chat" | "messages" | "responses";

/** What the proxy knows about one conversation. Never holds message content. */
export interface ConversationRecord {
  /** The store key: "<tenant>:<conversation>", with "#<head>" for a client-given id (heads.ts). */
  readonly id: string;
  /** Whose conversation this is (see tenancy.ts): never a key, only its hash or a virtual key's name. */
  readonly tenant: string;
  /** The id the client knows. */
  readonly conversation: string;
  source: IdentitySource;
  /** The API of its last request, which its stored body is read with; absent: chat (records written before it was kept). */
  api?: ChatApi;
  model?: string;
  createdAt: number;
  updatedAt: number;
  /**
   * When the request this record's turn fields describe (the TURN_FIELDS of merge.ts, and the stored
   * body) arrived (ms since epoch): a slower reply to an earlier request, finishing after a later
   * one's, leaves them as the later request set them. Absent in records written before it was kept.
   */
  turnAt?: number;
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

/** A page of `list`: records in id order after `after` (not included), at most `limit`. */
export interface ListPage {
  readonly after?: string;
  readonly limit: number;
}

/** A prefix-index hit: the position in the hashes given, and the conversation that sent that prefix. */
export interface PrefixHit {
  readonly index: number;
  readonly id: string;
}

export interface ConversationStore {
  /** "sqlite" keeps state for one process; "postgres" shares it between replicas. */
  readonly kind: "sqlite" | "postgres";
  /** The stored record; a shared store reads the latest version, which `put` then checks against. */
  get(id: string): Promise<ConversationRecord | undefined>;
  /**
   * Brings `record` up to the stored version (another replica may have written it since it was
   * read), keeping the changes made to it here on top. Reads nothing while no other process wrote.
   */
  refresh(record: ConversationRecord): Promise<void>;
  /**
   * Stores the record, and the request's body when given (the messages are read from it when
   * needed). When another replica wrote the record since it was read, the two are merged field by
   * field, so neither write is lost; `record` is updated to what was stored.
   */
  put(record: ConversationRecord, body?: string): Promise<void>;
  /** The body of the conversation's last request, as its API wrote it (`api` on the record). */
  body(id: string): Promise<string | undefined>;
  /** The longest of `hashes` (a request's prefix hashes, shortest first) that a stored conversation sent. */
  longestPrefix(hashes: readonly string[]): Promise<PrefixHit | undefined>;
  addPrefix(hash: string, id: string): Promise<void>;
  /** Drops `hash` from the index if it still points at conversation `id`. */
  removePrefix(hash: string, id: string): Promise<void>;
  /**
   * The records of a client's conversation id, under every tenant and head (in no set order): read
   * by an index, not by reading every record (admin `compact` names a conversation by it).
   */
  named(conversation: string): Promise<ConversationRecord[]>;
  /** Every record (in no set order), or one page of them. */
  list(page?: ListPage): Promise<ConversationRecord[]>;
  count(): Promise<number>;
  /**
   * Deletes conversations not updated since `before` (ms since epoch), and under each client-given
   * id all but the HEADS_PER_ID most recently updated (heads.ts); returns how many.
   */
  expire(before: number): Promise<number>;
  /** Runs `fn` holding the conversation's compaction lock: across every process sharing the store. */
  locked<T>(id: string, fn: () => Promise<T>): Promise<T>;
  /** Adds tokens (negative: gives them back) to a virtual key's spend, shared by every process on the store. */
  addSpend(virtualKey: string, tokens: number): Promise<void>;
  /**
   * Adds tokens to a virtual key's spend unless it already reached `budget`, in one step for every
   * process on the store (requests sent together cannot all pass a check made before any is
   * charged); false when it had.
   */
  reserve(virtualKey: string, tokens: number, budget: number): Promise<boolean>;
  spent(virtualKey: string): Promise<number>;
  /** Writes pending changes now. */
  flush(): Promise<void>;
  /**
   * Told of a spend change given up on (PostgreSQL: its transaction's outcome still unknown when
   * too many others were), so the operator learns the key's spend is off by its tokens.
   */
  onLost?: ((change: LostChange) => void) | undefined;
  /** Open and writing: false once closed, or while writes fail. */
  readonly open: boolean;
  /** Why writes fail, while they do. */
  readonly writeError: string | undefined;
  close(): Promise<void>;
}

/** A spend change dropped unsettled: `tokens` were to be added to the key's spend had its transaction `addIf`. */
export interface LostChange {
  readonly virtualKey: string;
  readonly tokens: number;
  readonly addIf: "committed" | "aborted";
}

/** A PostgreSQL connection string selects the shared backend; anything else is a SQLite file. */
export const isPostgresUrl = (db: string): boolean => /^postgres(ql)?:\/\//i.test(db);

/** Opens the store `db` names: a postgres:// URL, a SQLite file, or ":memory:". */
export async function openStore(db: string): Promise<ConversationStore> {
  if (isPostgresUrl(db)) {
    const { PostgresStore } = await import("./pg-store.js");
    return PostgresStore.open(db);
  }
  const { SqliteStore } = await import("./sqlite-store.js");
  return new SqliteStore(db);
}
