// Who is calling. Every conversation belongs to a tenant: the caller's credential, hashed (so a
// key is never stored or logged), or a virtual key the proxy issued, which carries its own
// upstream key, token budget and request rate. A conversation id is only looked up within its
// tenant, so one client naming another's id starts its own conversation instead of reading,
// changing or resetting the other's.
import { createHash, randomBytes } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { ProxyConfig } from "./config.js";
import { KEY_MASK, maskKey, quotedKey } from "../llm/retry.js";
import type { ConversationStore } from "./store.js";

export const VIRTUAL_KEY_PREFIX = "ptc-vk-";

export interface Tenant {
  /** "anon", "t-<hash of the credential>" or "vk-<name>". */
  readonly id: string;
  /** The key the upstream sees from this tenant (its own, or its virtual key's upstream key). */
  readonly upstreamKey: string | undefined;
  /** Set for a virtual key: the Authorization header sent upstream instead of the client's. */
  readonly replaceAuth: boolean;
  readonly virtualKey?: string;
}

/** `final`: no wait changes the answer (a used-up budget), so no client should retry it (refusalHeaders). */
export type TenantResult = { ok: true; tenant: Tenant } | { ok: false; status: number; message: string; code: string; retryAfterSeconds?: number; final?: true };

/**
 * The headers of a refusal: when to come back (a request rate), or `x-should-retry: false` for one
 * that no wait changes (a used-up budget), which the OpenAI and Anthropic SDKs and ptc's LLM
 * clients honour: a 429 is otherwise retried as a rate limit, each refusal sent again and again.
 */
export function refusalHeaders(r: TenantResult & { ok: false }): Record<string, string> {
  if (r.final === true) return { "x-should-retry": "false" };
  return r.retryAfterSeconds === undefined ? {} : { "retry-after": String(r.retryAfterSeconds) };
}

/** The client's credential: `Authorization: Bearer` (OpenAI clients) or `x-api-key` (Anthropic clients). */
export function credential(headers: IncomingHttpHeaders): string | undefined {
  const h = headers.authorization;
  if (typeof h === "string" && /^bearer /i.test(h)) return h.slice(7).trim() || undefined;
  const k = headers["x-api-key"];
  return typeof k === "string" && k.length > 0 ? k : undefined;
}

/**
 * Why a request that carries a virtual key cannot be taken as that key's, or undefined. One beside
 * a different credential in the other header is ambiguous: taking the tenant from either would
 * charge the other or send the virtual key upstream (a non-virtual tenant's headers go as they
 * are). One in Authorization under another scheme than Bearer is not read as a credential, and
 * would go upstream too.
 */
export function virtualKeyConflict(headers: IncomingHttpHeaders): (TenantResult & { ok: false }) | undefined {
  const auth = typeof headers.authorization === "string" && headers.authorization.length > 0 ? headers.authorization : undefined;
  const k = headers["x-api-key"];
  const key = typeof k === "string" && k.length > 0 ? k : undefined;
  const bearer = auth !== undefined && /^bearer /i.test(auth) ? auth.slice(7).trim() : undefined;
  if (!(bearer?.startsWith(VIRTUAL_KEY_PREFIX) || key?.startsWith(VIRTUAL_KEY_PREFIX) || (bearer === undefined && auth?.includes(VIRTUAL_KEY_PREFIX)))) return undefined;
  if (auth !== undefined && key !== undefined && bearer !== key) {
    return { ok: false, status: 400, message: "the request carries a virtual key and a different credential (Authorization and x-api-key): send one", code: "ambiguous_credential" };
  }
  if (auth !== undefined && bearer === undefined) return { ok: false, status: 401, message: "a virtual key goes in Authorization: Bearer or in x-api-key", code: "invalid_virtual_key" };
  return undefined;
}

/**
 * The credential header a request sends more than once, or undefined. Node keeps the first
 * Authorization and joins repeated x-api-key values with ", ", so such a request would become a
 * tenant of its own, its choice of key made silently: it is refused instead. Read from the raw
 * headers (names only, each compared once its length matches), which the joined ones hide.
 */
export function repeatedCredential(rawHeaders: readonly string[]): string | undefined {
  let auth = false;
  let key = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length === 13 && name.toLowerCase() === "authorization") {
      if (auth) return "authorization";
      auth = true;
    } else if (name.length === 9 && name.toLowerCase() === "x-api-key") {
      if (key) return "x-api-key";
      key = true;
    }
  }
  return undefined;
}

export const hashKey = (key: string): string => createHash("sha256").update(key).digest("hex");

/** The tenant of a plain (not virtual) credential. */
export const tenantOf = (cred: string | undefined): string => (cred === undefined ? "anon" : `t-${createHash("sha256").update(cred).digest("base64url").slice(0, 16)}`);

/** A new virtual key; only its hash is kept in the configuration. */
export const issueVirtualKey = (): string => VIRTUAL_KEY_PREFIX + randomBytes(24).toString("base64url");

const byHash = new WeakMap<ProxyConfig, Map<string, string>>();

function virtualKeyName(config: ProxyConfig, key: string): string | undefined {
  let map = byHash.get(config);
  if (map === undefined) {
    map = new Map(Object.entries(config.tenancy.virtualKeys).map(([name, vk]) => [vk.keyHash, name]));
    byHash.set(config, map);
  }
  return map.get(hashKey(key));
}

/**
 * Request rate (a token bucket per virtual key, per process) and tokens spent (in the store, so
 * replicas on one database share a virtual key's budget).
 */
export class Tenants {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly now: () => number,
    private readonly store: ConversationStore,
  ) {}

  /** The request's tenant, or why it is refused (unknown virtual key, rate or budget exceeded). */
  async resolve(config: ProxyConfig, headers: IncomingHttpHeaders): Promise<TenantResult> {
    const conflict = virtualKeyConflict(headers);
    if (conflict !== undefined) return conflict;
    const cred = credential(headers);
    const name = cred === undefined ? undefined : virtualKeyName(config, cred);
    if (name === undefined) {
      if (config.tenancy.requireVirtualKey || cred?.startsWith(VIRTUAL_KEY_PREFIX)) {
        return { ok: false, status: 401, message: "a valid virtual key issued by this proxy is required", code: "invalid_virtual_key" };
      }
      return { ok: true, tenant: { id: tenantOf(cred), upstreamKey: cred, replaceAuth: false } };
    }
    const vk = config.tenancy.virtualKeys[name];
    if (vk.tokenBudget !== undefined && (await this.store.spent(name)) >= vk.tokenBudget) return overBudget(name, vk.tokenBudget);
    if (vk.requestsPerMinute !== undefined) {
      const wait = this.take(name, vk.requestsPerMinute);
      if (wait > 0) return { ok: false, status: 429, message: `virtual key "${name}" is limited to ${vk.requestsPerMinute} requests per minute`, code: "rate_limited", retryAfterSeconds: Math.ceil(wait / 1000) };
    }
    return { ok: true, tenant: { id: `vk-${name}`, upstreamKey: vk.upstreamKey, replaceAuth: true, virtualKey: name } };
  }

  /**
   * Reserves a request's estimated tokens against its virtual key's budget before it goes
   * upstream (the check on arrival charges nothing, so requests sent together would all pass it):
   * the tokens reserved (0 without a budget, and `estimate` is then never counted), or the 429
   * when the budget is used up. `charge` settles the reservation when the reply ends.
   */
  reserve(config: ProxyConfig, tenant: Tenant, estimate: () => number | Promise<number>): Promise<number | TenantResult & { ok: false }> {
    return this.reserveFor(config, tenant.virtualKey, estimate);
  }

  /** `reserve` for a virtual key by name (a summary call made for its conversation); nothing is reserved without one. */
  async reserveFor(config: ProxyConfig, virtualKey: string | undefined, estimate: () => number | Promise<number>): Promise<number | TenantResult & { ok: false }> {
    const budget = virtualKey === undefined ? undefined : config.tenancy.virtualKeys[virtualKey]?.tokenBudget;
    if (virtualKey === undefined || budget === undefined) return 0;
    const tokens = Math.max(1, await estimate());
    return (await this.store.reserve(virtualKey, tokens, budget)) ? tokens : overBudget(virtualKey, budget);
  }

  /** Adds the tokens a reply (or a summary call made for the key) used to a virtual key's spend, less what its request reserved. */
  charge(virtualKey: string | undefined, tokens: number, reserved = 0): Promise<void> | undefined {
    return virtualKey !== undefined && tokens !== reserved ? this.store.addSpend(virtualKey, tokens - reserved) : undefined;
  }

  spentBy(name: string): Promise<number> {
    return this.store.spent(name);
  }

  /** Takes one request from the bucket; returns 0, or the ms until one is available. */
  private take(name: string, perMinute: number): number {
    const now = this.now();
    const rate = perMinute / 60_000;
    const b = this.buckets.get(name) ?? { tokens: perMinute, at: now };
    // A clock stepped back (an NTP correction) refills nothing, and takes nothing either: an hour back
    // read as 3,600 requests made, refusing the key for that hour.
    b.tokens = Math.min(perMinute, b.tokens + Math.max(0, now - b.at) * rate);
    b.at = now;
    this.buckets.set(name, b);
    if (b.tokens < 1) return (1 - b.tokens) / rate;
    b.tokens -= 1;
    return 0;
  }
}

const overBudget = (name: string, budget: number): TenantResult & { ok: false } => ({ ok: false, status: 429, message: `the token budget of virtual key "${name}" (${budget} tokens) is used up`, code: "budget_exceeded", final: true });

/** Headers to send upstream for this tenant: a virtual key is replaced by its upstream key. */
export function upstreamAuth(tenant: Tenant): Record<string, string> {
  if (!tenant.replaceAuth) return {};
  return tenant.upstreamKey === undefined ? { authorization: "", "x-api-key": "" } : { authorization: `Bearer ${tenant.upstreamKey}`, "x-api-key": tenant.upstreamKey };
}

const NO_KEYS: readonly string[] = [];

/**
 * Keys the proxy put on this tenant's upstream request that the client never gave it (a virtual
 * key's upstream key; the fallback's key when `fromFallback`, the reply the fallback's): an
 * upstream may quote the key it refused in its error body or headers, and what it says goes back
 * to the client. The primary is never sent the fallback's key, so its replies cannot quote it.
 */
export function hiddenKeys(tenant: Tenant, config: ProxyConfig, fromFallback: boolean): readonly string[] {
  const own = tenant.replaceAuth ? tenant.upstreamKey : undefined;
  const fallback = fromFallback ? config.retries.fallbackApiKey : undefined;
  if (own === undefined) return fallback === undefined ? NO_KEYS : [fallback];
  return fallback === undefined ? [own] : [own, fallback];
}

/** `text` with each of `keys` (hiddenKeys) shown as [api key]. */
export function maskKeys(text: string, keys: readonly string[]): string {
  for (const key of keys) text = maskKey(text, key);
  return text;
}

const MASK_BYTES = Buffer.from(KEY_MASK);
const NOTHING = Buffer.alloc(0);

/**
 * maskKeys for a body that passes in pieces (a stream, a reply passed on as it comes), as bytes:
 * a key cut between two pieces is masked too. Only a piece's end that may begin a key is held
 * back for the next piece (at most a key's length), so an event's last bytes are not delayed.
 */
export class KeyMasker {
  private readonly keys: Buffer[] = [];
  private carry = NOTHING;

  constructor(keys: readonly string[]) {
    for (const key of keys) {
      const sent = quotedKey(key);
      if (sent !== undefined) this.keys.push(Buffer.from(sent));
    }
  }

  /** Whether it masks anything: without a key to mask, a caller need not pass bytes through it. */
  get active(): boolean {
    return this.keys.length > 0;
  }

  /** The bytes of `chunk` to send now, masked. */
  push(chunk: Buffer): Buffer {
    let buf = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    for (const key of this.keys) buf = replaceBytes(buf, key);
    let keep = 0;
    for (const key of this.keys) keep = Math.max(keep, keyStartAtEnd(buf, key));
    this.carry = keep === 0 ? NOTHING : Buffer.from(buf.subarray(buf.length - keep));
    return keep === 0 ? buf : buf.subarray(0, buf.length - keep);
  }

  /** What is held back, at the body's end. */
  end(): Buffer {
    const rest = this.carry;
    this.carry = NOTHING;
    return rest;
  }

  /** A whole body, masked. */
  static mask(body: Buffer, keys: readonly string[]): Buffer {
    const masker = new KeyMasker(keys);
    if (!masker.active) return body;
    const head = masker.push(body);
    const rest = masker.end();
    return rest.length === 0 ? head : Buffer.concat([head, rest]);
  }
}

/** `buf` with every `key` in it replaced by the mask (`buf` itself when it holds none). */
function replaceBytes(buf: Buffer, key: Buffer): Buffer {
  let at = buf.indexOf(key);
  if (at === -1) return buf;
  const parts: Buffer[] = [];
  let from = 0;
  while (at !== -1) {
    parts.push(buf.subarray(from, at), MASK_BYTES);
    from = at + key.length;
    at = buf.indexOf(key, from);
  }
  parts.push(buf.subarray(from));
  return Buffer.concat(parts);
}

/** The length of the longest end of `buf` that is the start of `key` (shorter than it), or 0. */
function keyStartAtEnd(buf: Buffer, key: Buffer): number {
  for (let i = Math.max(0, buf.length - key.length + 1); i < buf.length; i++) {
    if (buf[i] === key[0] && buf.subarray(i).equals(key.subarray(0, buf.length - i))) return buf.length - i;
  }
  return 0;
}
