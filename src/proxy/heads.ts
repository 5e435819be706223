// The keys of the histories sent under one client-given id. Apart from store.ts, which loads the
// backends that read these: a backend importing its loader would make a cycle.

/**
 * Histories sent under one client-given id (an agent and its subagents share a session id; an app
 * may send one `user` for all of a user's chats) are kept apart by their head, so each keeps its
 * own summary: the key is "<tenant>:<id>#<head>", the head HEAD_LENGTH base64url characters
 * (identity.ts). Distinct heads never share a record, so replicas adding them at once never
 * contend; the bound per id is kept by expiry, which deletes the least recently updated.
 */
export const headKey = (key: string, head: string): string => `${key}#${head}`;
export const HEAD_LENGTH = 16;
/** Records kept per client-given id (a batch job sending a new task on each request keeps this many). */
export const HEADS_PER_ID = 8;
/** A key with a head (what is before the suffix is the id's key); the same pattern both stores match. */
export const HEAD_SUFFIX = `#[A-Za-z0-9_-]{${HEAD_LENGTH}}$`;
