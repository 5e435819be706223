// The admin plane, under /ext/context_compaction/: configuration, status and manual compaction.
// Every route needs the admin token (Bearer or x-admin-token); without a configured token the
// routes are disabled, never open. Status and compaction reports carry ids, counts and reasons,
// never message content; only a dry run returns messages, since that is what it is asked for.
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { redactConfig, redactUrl, type ProxyConfig } from "./config.js";
import { parseRequest, summarizerLlm } from "./chat.js";
import type { AnthropicRequest } from "./anthropic.js";
import { bodyText, type ChatRequest } from "./request.js";
import type { ResponsesRequest } from "./responses.js";
import { readBody, sendJson, sendTooLarge, type ProxyContext } from "./context.js";
import { sendError, sendStoreUnavailable } from "./errors.js";
import type { ConversationRecord } from "./store.js";
import { hashKey, issueVirtualKey } from "./tenancy.js";
import { jsonSyntaxError } from "../json/json-error.js";

export const ADMIN_PREFIX = "/ext/context_compaction/";

/**
 * Conversations one status answer lists unless `limit` says otherwise, and the most it may ask:
 * every conversation in one answer was every record read and sent at once (100,000 of them
 * with a shared store).
 */
const STATUS_PAGE = 1000;
const STATUS_PAGE_MAX = 10_000;

const digest = (s: string) => createHash("sha256").update(s).digest();

function authorized(ctx: ProxyContext, req: IncomingMessage): boolean {
  const token = ctx.adminToken;
  if (token === undefined) return false;
  const h = req.headers.authorization;
  const bearer = typeof h === "string" && /^bearer /i.test(h) ? h.slice(7).trim() : undefined;
  const header = req.headers["x-admin-token"];
  // Either one: a client's own Authorization (an SDK sends its key on every call) hid the x-admin-token beside it.
  // Compared as digests: equal length, constant time.
  const matches = (given: string | undefined) => given !== undefined && timingSafeEqual(digest(given), digest(token));
  return matches(bearer) || matches(typeof header === "string" ? header : undefined);
}

/** What status shows of a conversation: no content, no state, no hashes. */
function summary(ctx: ProxyContext, r: ConversationRecord) {
  const config = ctx.config.current;
  const settings = config.conversations[r.conversation];
  return {
    id: r.id,
    conversation: r.conversation,
    tenant: r.tenant,
    identitySource: r.source,
    model: r.model ?? null,
    strategy: settings?.disabled ? "disabled" : ctx.compactor.spec(config, r, r.model, config.compaction.reserveOutputTokens).name,
    messageCount: r.messageCount,
    usageRatio: Math.round(r.usageRatio * 1000) / 1000,
    estimatedTokens: r.estimatedTokens,
    reportedTokens: r.reportedTokens ?? null,
    calibration: r.calibration,
    contextWindow: ctx.compactor.window(config, r, r.model, config.compaction.reserveOutputTokens),
    flagged: r.flagged,
    compactions: r.compactions,
    failures: r.failures,
    upstreamTruncated: r.truncated,
    lastTokensBefore: r.lastTokensBefore ?? null,
    lastTokensAfter: r.lastTokensAfter ?? null,
    lastError: r.lastError ?? null,
    updatedAt: new Date(r.updatedAt).toISOString(),
  };
}

async function jsonBody(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const limit = ctx.config.current.maxBodyBytes;
  const raw = await readBody(req, res, limit, ctx.config.current.requestBodyTimeoutMs, ctx.bodies);
  if (raw === null) return undefined;
  if (raw === undefined) return sendTooLarge(req, res, limit);
  const decoded = bodyText(raw);
  if (!decoded.ok) {
    sendError(res, 400, decoded.error, "invalid_request_error", "invalid_json");
    return undefined;
  }
  const text = raw.length === 0 ? "{}" : decoded.text;
  try {
    return JSON.parse(text);
  } catch (e) {
    sendError(res, 400, `the request body is not valid JSON (${jsonSyntaxError(text, e)})`, "invalid_request_error", "invalid_json");
    return undefined;
  }
}

export async function handleAdmin(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse, route: string): Promise<void> {
  if (ctx.adminToken === undefined) {
    return sendError(res, 403, "the admin endpoints are disabled: start the proxy with --admin-token or PTC_PROXY_ADMIN_TOKEN", "permission_error", "admin_disabled");
  }
  if (!authorized(ctx, req)) return sendError(res, 401, "a valid admin token is required (Authorization: Bearer TOKEN)", "authentication_error", "invalid_admin_token");
  const method = req.method ?? "GET";
  if (route === "config" && method === "GET") return sendJson(res, 200, redactConfig(ctx.config.current));
  if (route === "config" && method === "POST") {
    const patch = await jsonBody(ctx, req, res);
    if (patch === undefined) return;
    const updated = await ctx.config.update(patch);
    if (!updated.ok) return sendError(res, 400, `configuration not changed: ${updated.error}`, "invalid_request_error", "invalid_config");
    ctx.log({ event: "config_updated", keys: Object.keys(patch as object).join(",") });
    return sendJson(res, 200, redactConfig(updated.value));
  }
  if (route === "status" && method === "GET") {
    const config = ctx.config.current;
    const query = new URL(req.url ?? "", "http://proxy").searchParams;
    const given = query.get("limit");
    const limit = given === null ? STATUS_PAGE : /^[0-9]{1,6}$/.test(given) ? Number(given) : 0;
    if (limit < 1 || limit > STATUS_PAGE_MAX) return sendError(res, 400, `'limit' must be a whole number from 1 to ${STATUS_PAGE_MAX}`, "invalid_request_error", "invalid_request", {}, "limit");
    return ctx.store.list({ after: query.get("after") ?? undefined, limit }).then(
      (records) =>
        sendJson(res, 200, {
          enabled: config.compaction.enabled,
          strategy: config.compaction.strategy,
          upstream: redactUrl(config.upstream) ?? null,
          conversations: records.map((r) => summary(ctx, r)),
          // The `after` of the next page; null on the last.
          next: records.length === limit ? records[records.length - 1].id : null,
        }),
      (e: unknown) => sendStoreUnavailable(res, ctx.log, e),
    );
  }
  if (route === "compact" && method === "POST") return compactNow(ctx, req, res);
  if (route === "keys" && method === "POST") return issueKey(ctx, req, res);
  return sendError(res, 404, `no admin route ${method} ${ADMIN_PREFIX}${route}`, "not_found_error", "not_found");
}

/** POST compact { conversation, dryRun? }: compacts the stored conversation now, or shows what would be sent. */
async function compactNow(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = (await jsonBody(ctx, req, res)) as { conversation?: unknown; dryRun?: unknown } | undefined;
  if (body === undefined) return;
  if (typeof body !== "object" || body === null || typeof body.conversation !== "string") return sendError(res, 400, "'conversation' (a conversation id) is required", "invalid_request_error", "invalid_request");
  if (body.dryRun !== undefined && typeof body.dryRun !== "boolean") return sendError(res, 400, "'dryRun' must be a boolean", "invalid_request_error", "invalid_request");
  if (!ctx.config.current.keepMessages) return sendError(res, 409, "compact on demand needs the stored messages, and keepMessages is off: the next request of the conversation compacts it", "invalid_request_error", "messages_not_kept");
  let stored: ConversationRecord | undefined;
  let raw: string | undefined;
  try {
    stored = await find(ctx, body.conversation);
    raw = stored === undefined ? undefined : await ctx.store.body(stored.id);
  } catch (e) {
    return sendStoreUnavailable(res, ctx.log, e);
  }
  // Read as its route read it: an Anthropic or Responses history is seen as the chat messages its requests are compacted as.
  const parsed = stored === undefined || raw === undefined ? undefined : parseRequest(stored.api ?? "chat", Buffer.from(raw));
  if (stored === undefined || parsed?.ok !== true) return sendError(res, 404, `no stored conversation ${JSON.stringify(body.conversation)}`, "not_found_error", "conversation_not_found");
  const request: ChatRequest = parsed.request;
  const messages = request.messages;
  const config = ctx.config.current;
  const dryRun = body.dryRun === true;
  // A dry run works on a copy, so nothing it does is kept.
  const record: ConversationRecord = dryRun ? structuredClone(stored) : stored;
  // Summaries use the configured key, or the key of the conversation's own virtual key, never another
  // tenant's; they are charged to that virtual key, as its own requests' summaries are.
  const name = record.tenant.startsWith("vk-") ? record.tenant.slice(3) : undefined;
  // Own keys only: a removed key named toString would be read from Object.prototype as one that exists.
  const vk = name === undefined || !Object.hasOwn(config.tenancy.virtualKeys, name) ? undefined : config.tenancy.virtualKeys[name];
  const outcome = await ctx.compactor.run(config, record, { messages, model: record.model, tools: request.tools, maxTokens: request.maxTokens, bodyBytes: 0 }, () => summarizerLlm(ctx, config, record.model, vk?.upstreamKey, vk === undefined ? undefined : name), { force: true, noDeadline: true, dryRun });
  const report = {
    conversation: record.id,
    dryRun,
    compacted: outcome.changed,
    messagesBefore: messages.length,
    messagesAfter: outcome.messages.length,
    tokensBefore: outcome.result?.stats.tokensIn ?? null,
    tokensAfter: outcome.result?.stats.tokensOut ?? null,
    summarizer: outcome.result?.summarizer ?? null,
    events: outcome.result?.events.map((e) => ({ kind: e.kind, ...(e.detail === undefined ? {} : { detail: e.detail }) })) ?? [],
    lastError: record.lastError ?? null,
  };
  if (dryRun) {
    // What would be sent, in the API's own form.
    const restore = "restore" in request ? (request as AnthropicRequest | ResponsesRequest).restore : undefined;
    const sent = restore === undefined ? outcome.messages : restore(outcome.messages);
    return sendJson(res, 200, { ...report, messages: Array.isArray(sent) ? sent : "input" in sent ? sent.input : sent.messages });
  }
  record.updatedAt = ctx.now();
  try {
    await ctx.store.put(record);
  } catch (e) {
    return sendStoreUnavailable(res, ctx.log, e, record.tenant);
  }
  return sendJson(res, 200, report);
}

/**
 * A conversation by store key, or by the client's id when only one tenant has it: the history last
 * sent under it (an id keeps one record per history, see headKey).
 */
export async function find(ctx: ProxyContext, id: string): Promise<ConversationRecord | undefined> {
  const exact = await ctx.store.get(id);
  if (exact !== undefined) return exact;
  const matches = await ctx.store.named(id);
  if (matches.some((r) => r.tenant !== matches[0].tenant)) return undefined;
  return matches.reduce<ConversationRecord | undefined>((latest, r) => (latest === undefined || r.updatedAt > latest.updatedAt ? r : latest), undefined);
}

/** POST keys { name, upstreamKey?, tokenBudget?, requestsPerMinute? }: a new virtual key, shown once; only its hash is kept. */
async function issueKey(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = (await jsonBody(ctx, req, res)) as Record<string, unknown> | undefined;
  if (body === undefined) return;
  if (typeof body !== "object" || body === null || typeof body.name !== "string") return sendError(res, 400, "'name' is required", "invalid_request_error", "invalid_request");
  const { name, ...settings } = body;
  // The config's parsing drops this key (it would replace an object's prototype): the key issued would never work.
  if (name === "__proto__") return sendError(res, 400, "'name' cannot be __proto__", "invalid_request_error", "invalid_request", {}, "name");
  const key = issueVirtualKey();
  // Checked in the update, on the settings read again under the config file's lock: another proxy
  // sharing the file may have issued this name since (its key was replaced, and stopped working).
  // Own keys only: "constructor" is a valid name, not Object.prototype's.
  const exists = (current: ProxyConfig) => (Object.hasOwn(current.tenancy.virtualKeys, name) ? `a virtual key named ${JSON.stringify(name)} exists; remove it first (POST config with null)` : undefined);
  const updated = await ctx.config.update({ tenancy: { virtualKeys: { [name]: { ...settings, keyHash: hashKey(key) } } } }, exists);
  if (!updated.ok) return "refused" in updated ? sendError(res, 409, updated.error, "invalid_request_error", "key_exists") : sendError(res, 400, `key not issued: ${updated.error}`, "invalid_request_error", "invalid_config");
  ctx.log({ event: "virtual_key_issued", name });
  return sendJson(res, 200, { name, key });
}
