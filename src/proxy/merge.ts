// Two processes that wrote one conversation record from the same version: both stores (replicas
// on PostgreSQL, processes on one SQLite file) merge the stored version into their own this way,
// and read a stored record, an older version's included, through readRecord.
import type { ConversationRecord } from "./store.js";

/** Fields a merge adds up: both replicas' increments count. */
const COUNTERS = new Set(["compactions"]);
/** Fields that name the record: never merged. */
const FIXED = new Set(["id", "tenant", "conversation"]);
/**
 * What the conversation's latest request set (its history's length and last hash, its API and
 * model, its prompt's estimate and usage), with `turnAt`, when it arrived: taken together from the
 * side whose request arrived later, so a slow reply to an earlier turn does not overwrite them.
 */
export const TURN_FIELDS: ReadonlySet<string> = new Set(["turnAt", "messageCount", "api", "model", "lastHash", "lastLength", "usageRatio", "estimatedTokens", "reportedTokens"]);

/**
 * Three-way merge of one record: fields only `mine` changed since `base` take mine, fields only
 * `theirs` changed take theirs; when both changed, counters add both increments, `updatedAt` takes
 * the later, the prefix-index list takes both sides' entries (mergeIndexed), the TURN_FIELDS those
 * of the side whose request arrived later, and anything else takes mine (the later write, as it
 * would without a conflict).
 */
export function mergeRecords(base: Record<string, unknown>, mine: Record<string, unknown>, theirs: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...theirs };
  const turn = laterTurn(mine.turnAt, theirs.turnAt);
  if (turn === "mine") {
    for (const k of TURN_FIELDS) {
      if (mine[k] === undefined) delete out[k];
      else out[k] = mine[k];
    }
  }
  for (const k of new Set([...Object.keys(mine), ...Object.keys(base)])) {
    if (FIXED.has(k) || (turn !== undefined && TURN_FIELDS.has(k))) continue;
    const m = JSON.stringify(mine[k]);
    const b = JSON.stringify(base[k]);
    if (m === b) continue;
    const t = JSON.stringify(theirs[k]);
    if (t !== b && COUNTERS.has(k)) out[k] = (theirs[k] as number) + ((mine[k] as number) - ((base[k] as number | undefined) ?? 0));
    else if (t !== b && k === "updatedAt") out[k] = Math.max(mine[k] as number, theirs[k] as number);
    else if (t !== b && k === "indexed") out[k] = mergeIndexed(base[k], mine[k], theirs[k]);
    else if (mine[k] === undefined) delete out[k];
    else out[k] = mine[k];
  }
  return out;
}

/** Which side's request arrived later (a record without `turnAt` is older than one with it); undefined: neither. */
function laterTurn(mine: unknown, theirs: unknown): "mine" | "theirs" | undefined {
  const m = typeof mine === "number" ? mine : -Infinity;
  const t = typeof theirs === "number" ? theirs : -Infinity;
  return m > t ? "mine" : t > m ? "theirs" : undefined;
}

/**
 * Both sides indexed prefixes: each hash either added is in the index under this id, so it stays
 * listed (the list is how a later request trims the index; an unlisted hash stayed until expiry),
 * and each either trimmed is gone. Oldest first: theirs, then mine's additions.
 */
function mergeIndexed(base: unknown, mine: unknown, theirs: unknown): string[] {
  const b = (base as string[] | undefined) ?? [];
  const m = (mine as string[] | undefined) ?? [];
  const t = (theirs as string[] | undefined) ?? [];
  const trimmed = (h: string) => b.includes(h) && !m.includes(h);
  return [...t.filter((h) => !trimmed(h)), ...m.filter((h) => !b.includes(h) && !t.includes(h))];
}

/** Makes the caller's own record object equal to `value`, keeping the fields that name it. */
export function assign(record: ConversationRecord, value: Record<string, unknown>): void {
  const target = record as unknown as Record<string, unknown>;
  for (const k of Object.keys(target)) if (!(k in value) && !FIXED.has(k)) delete target[k];
  for (const k of Object.keys(value)) if (!FIXED.has(k)) target[k] = value[k];
}

/**
 * A stored record's text as this version reads it. A record written before tenancy (keyed by the
 * client's id alone) has no tenant, conversation or prefix list: it gets the anonymous tenant, its
 * key as its id and an empty list, so status and admin `compact` read it as any other.
 */
export function readRecord(text: string): ConversationRecord {
  const record = JSON.parse(text) as Partial<ConversationRecord> & { id: string };
  return { ...record, tenant: record.tenant ?? "anon", conversation: record.conversation ?? record.id, indexed: record.indexed ?? [] } as ConversationRecord;
}
