// Which conversation a request belongs to. Explicit ids first, in the configured order (headers,
// then body fields), each history under one id kept apart by its task (heads.ts); otherwise the
// stored conversation whose last request is the longest prefix of this one's messages (a client
// resending its history always extends its previous request). Never a hash of the first message
// alone without an id: identical openings would collide. Two conversations that share an opening
// are split at the first request where they differ. Everything is scoped by tenant: the stored
// key starts "<tenant>:<id>", and the prefix hashes are seeded with the tenant, so one tenant's
// messages never match another's conversation.
import { createHash, randomUUID } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { ChatMessage } from "../llm/types.js";
import { HEAD_LENGTH, headKey } from "./heads.js";
import type { ConversationRecord, ConversationStore } from "./store.js";

export interface Identity {
  /** The store key: tenant and conversation id. */
  readonly key: string;
  /** The id the client knows (and gets back in x-ptc-conversation-id). */
  readonly id: string;
  /** "header:NAME", "body:FIELD", "prefix" (matched a stored conversation) or "new". */
  readonly source: string;
  /** The conversation this one was split from (prefix matching only). */
  readonly forkedFrom?: ConversationRecord;
  /** The stored record, when finding the identity already read it. */
  readonly record?: ConversationRecord;
  /** Where a client-given id's record was kept before heads were (its state seeds a new head's record). */
  readonly legacy?: string;
}

export const scopedKey = (tenant: string, id: string): string => `${tenant}:${id}`;

/** The longest id taken from a request (it is stored, indexed and echoed in a header). */
export const MAX_ID_LENGTH = 256;

/** An id from the request itself, or undefined when it carries none; its record is the one of the messages' head (see headKey). */
export function explicitIdentity(tenant: string, headers: IncomingHttpHeaders, body: Record<string, unknown>, headerNames: readonly string[], fields: readonly string[], messages: readonly ChatMessage[]): Identity | undefined {
  const named = (id: string, source: string): Identity => ({ key: headKey(scopedKey(tenant, id), headHash(messages)), id, source, legacy: scopedKey(tenant, id) });
  for (const name of headerNames) {
    const v = headers[name];
    const id = Array.isArray(v) ? v[0] : v;
    if (typeof id === "string" && id.length > 0 && id.length <= MAX_ID_LENGTH) return named(id, `header:${name}`);
  }
  for (const field of fields) {
    const v = body[field];
    // A body field is the client's own (an app's `user`), not an id sent for the proxy: a long one is no id.
    if (typeof v === "string" && v.length > 0 && v.length <= MAX_ID_LENGTH) return named(v, `body:${field}`);
  }
  return undefined;
}

/**
 * The first of `names` (lowercase) the raw headers carry more than once, or undefined. Node joins a
 * repeated custom header into one "a, b" value: an id neither conversation has, or a way to reach
 * one by adding a header to a request that names another.
 */
export function repeatedIdentityHeader(rawHeaders: readonly string[], names: readonly string[]): string | undefined {
  if (names.length === 0) return undefined;
  let seen: string[] | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i].toLowerCase();
    if (!names.includes(name)) continue;
    if (seen?.includes(name)) return name;
    (seen ??= []).push(name);
  }
  return undefined;
}

/**
 * The first of `names` whose value is longer than MAX_ID_LENGTH, with its length, or undefined. A
 * header is sent for the proxy to name the conversation: skipping it would attach the request to
 * one the client did not name (by prefix, or by the next header).
 */
export function overlongIdentityHeader(headers: IncomingHttpHeaders, names: readonly string[]): { name: string; length: number } | undefined {
  for (const name of names) {
    const v = headers[name];
    const id = Array.isArray(v) ? v[0] : v;
    if (typeof id === "string" && id.length > MAX_ID_LENGTH) return { name, length: id.length };
  }
  return undefined;
}

/**
 * The head of a history: its first user message (the task). Not the system messages, which apps
 * fill with the date or retrieved context; a task that changes changes every summary's
 * fingerprint anyway, so a record of its own costs no summary that could have been reused.
 */
function headHash(messages: readonly ChatMessage[]): string {
  const task = messages.find((m) => m.role === "user");
  return createHash("sha256")
    .update(task === undefined ? "" : canonical(task))
    .digest("base64url")
    .slice(0, HEAD_LENGTH);
}

/** The parts of a message that identify it; fields clients add or drop on a resend (refusal: null...) are left out. */
function canonical(m: ChatMessage): string {
  const calls = m.tool_calls?.map((c) => [c.id, c.function?.name, c.function?.arguments]);
  return JSON.stringify([m.role, m.content ?? null, m.name ?? null, m.tool_call_id ?? null, calls ?? null]);
}

/** Hash chains of every prefix of `messages`, seeded with the tenant: entry k is the hash of the first k + 1 messages. */
export function prefixHashes(messages: readonly ChatMessage[], tenant: string): string[] {
  const out = new Array<string>(messages.length);
  let previous = tenant;
  for (let i = 0; i < messages.length; i++) {
    previous = createHash("sha256").update(previous).update(canonical(messages[i])).digest("base64url").slice(0, 24);
    out[i] = previous;
  }
  return out;
}

/**
 * Finds the conversation a request without an explicit id extends: the longest prefix of its
 * messages that a stored conversation sent. When that conversation has since moved on along other
 * messages, the request starts a new conversation (forked, so it may reuse the shared summary).
 */
export async function prefixIdentity(tenant: string, hashes: readonly string[], store: ConversationStore): Promise<Identity> {
  const hit = await store.longestPrefix(hashes);
  const record = hit === undefined ? undefined : await store.get(hit.id);
  // The seed already keeps tenants apart; the check guards a hash collision or a stale index.
  if (hit !== undefined && record !== undefined && record.tenant === tenant) {
    const continues = record.lastLength <= hashes.length && record.lastLength > 0 && hashes[record.lastLength - 1] === record.lastHash;
    if (continues) return { key: hit.id, id: record.conversation, source: "prefix", record };
    const id = newConversationId();
    return { key: scopedKey(tenant, id), id, source: "prefix", forkedFrom: record };
  }
  const id = newConversationId();
  return { key: scopedKey(tenant, id), id, source: "new" };
}

export const newConversationId = (): string => `conv-${randomUUID()}`;
