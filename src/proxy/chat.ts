// POST /v1/chat/completions: resolve the conversation, compact if its budget says so, forward,
// and pass the reply back (streams chunk by chunk) while reading its usage. An upstream
// "context length exceeded" answer leads to one forced compaction and one retry, never more.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { PassThrough, pipeline, type Readable } from "node:stream";
import type { ChatMessage, Llm } from "../llm/types.js";
import { errorText, LlmError } from "../llm/errors.js";
import { openaiLlm } from "../llm/openai.js";
import { inputTokens } from "../compaction/measure.js";
import { SummaryRefused } from "../compaction/summarizers/engine.js";
import type { ProxyConfig } from "./config.js";
import type { CompactionOutcome } from "./compactor.js";
import { decodeBody, decodedStream, undecodableCoding, type ProxyContext } from "./context.js";
import { isContextLengthError, sendError, sendStoreUnavailable, refuseUndecodable, streamErrorEvent, upstreamErrorBody } from "./errors.js";
import { explicitIdentity, MAX_ID_LENGTH, overlongIdentityHeader, prefixHashes, prefixIdentity, repeatedIdentityHeader, scopedKey, type Identity } from "./identity.js";
import { hiddenKeys, KeyMasker, maskKeys, refusalHeaders, upstreamAuth, type Tenant } from "./tenancy.js";
import { parseMessagesRequest, type AnthropicRequest } from "./anthropic.js";
import { ReplyUsage, usageOf } from "./reply-usage.js";
import { clientPromptTokensYielding, parseChatRequest, serializeBody, type ChatRequest, type ParsedRequest } from "./request.js";
import { parseResponsesRequest, type ResponsesRequest } from "./responses.js";
import { sendWithRetries } from "./retry.js";
import { SseTap, type StreamUsage } from "./sse.js";
import type { ChatApi, ConversationRecord } from "./store.js";
import { MAX_ERROR_BYTES, MAX_REPLY_BYTES, readBuffer, responseHeaders, upstreamBase, upstreamUrl, type UpstreamResult } from "./upstream.js";
import { learnFromUsage } from "./usage.js";

const INDEXED_PER_CONVERSATION = 16;

export const CONVERSATION_HEADER = "x-ptc-conversation-id";
export const SOURCE_HEADER = "x-ptc-conversation-source";
/** How many upstream requests the reply took (set when more than one: retries, fallback). */
export const ATTEMPTS_HEADER = "x-ptc-upstream-attempts";

export function newRecord(identity: Identity, tenant: string, now: number, from: ConversationRecord | undefined): ConversationRecord {
  return {
    id: identity.key,
    tenant,
    conversation: identity.id,
    source: identity.source,
    createdAt: now,
    updatedAt: now,
    messageCount: 0,
    // A fork starts from the state of the conversation it shares an opening with; the strategy
    // checks that state against the messages, so a summary of other messages is never applied.
    strategy: from?.strategy ?? "",
    state: from?.state ?? null,
    compactions: 0,
    failures: 0,
    flagged: false,
    usageRatio: 0,
    estimatedTokens: 0,
    calibration: from?.calibration ?? 1,
    ...(from?.learnedLimit === undefined ? {} : { learnedLimit: from.learnedLimit }),
    truncated: false,
    lastHash: "",
    lastLength: 0,
    indexed: [],
  };
}

/** Summarizer clients a proxy keeps (ProxyContext.summarizers); past this, the oldest goes. */
const MAX_SUMMARIZERS = 64;

/**
 * A summarizer client taken on first use only (most requests never summarize), one per setting
 * across requests. Each call's tokens are charged to `virtualKey`, whose conversation it
 * summarizes: the key's budget bounds what is spent upstream on its behalf.
 */
export function summarizerLlm(ctx: ProxyContext, config: ProxyConfig, model: string | undefined, key: string | undefined, virtualKey: string | undefined): Llm | undefined {
  const s = config.compaction.summarizer;
  const name = s.model ?? model;
  const upstream = upstreamBase(config);
  const base = s.baseURL ?? (upstream === undefined ? undefined : upstreamUrl(upstream, "/v1").href);
  if (name === undefined || base === undefined) return undefined;
  const apiKey = s.apiKey ?? key ?? "unused";
  const id = JSON.stringify([name, base, apiKey, s.timeoutMs]);
  return {
    name: `summarizer:${name}`,
    complete(request) {
      let llm = ctx.summarizers.get(id);
      if (llm === undefined) {
        if (ctx.summarizers.size >= MAX_SUMMARIZERS) ctx.summarizers.delete(ctx.summarizers.keys().next().value as string);
        // No client-side retries: the compactor counts every call against maxSummaryCalls.
        llm = openaiLlm({ model: name, baseURL: base, apiKey, maxRetries: 0, timeoutMs: s.timeoutMs, temperature: 0.3, env: {} });
        ctx.summarizers.set(id, llm);
      }
      if (virtualKey === undefined) return llm.complete(request);
      const client = llm;
      const settle = (tokens: number, reserved: number) => ctx.tenants.charge(virtualKey, tokens, reserved)?.catch((e: unknown) => ctx.log({ event: "store_error", tenant: `vk-${virtualKey}`, error: errorText(e) }));
      // Its prompt is reserved against the key's budget before it goes out, as a request's is:
      // requests of one key sent together would otherwise each make a summary call past it.
      const prompt = inputTokens({ messages: request.messages });
      // A store that cannot reserve (the database unreachable) refuses the call as a spent budget
      // does: the summarizer did not fail, so the blip must neither be retried nor open the breaker.
      const reserving = ctx.tenants.reserveFor(config, virtualKey, () => prompt).catch((e: unknown) => {
        ctx.log({ event: "store_error", tenant: `vk-${virtualKey}`, error: errorText(e) });
        throw new SummaryRefused(`the token budget of virtual key "${virtualKey}" could not be checked (the state store failed)`);
      });
      return reserving.then((reserved) => {
        if (typeof reserved !== "number") throw new SummaryRefused(reserved.message);
        return client.complete(request).then(
          (reply) => {
            // A reply without usage is charged its prompt, counted by the one measure, as a chat reply is.
            settle(reply.usage === undefined ? prompt : reply.usage.inputTokens + reply.usage.outputTokens, reserved);
            return reply;
          },
          (e: unknown) => {
            // A server that answered unusably, took the prompt and never answered in time, or began
            // a reply it did not finish, may have billed it: charged as a chat request's is. Any
            // other failure gives it back.
            settle(e instanceof LlmError && (e.kind === "malformed" || e.kind === "timeout" || e.details.delivered === true) ? prompt : 0, reserved);
            throw e;
          },
        );
      });
    },
  };
}

/** The conversation of a request, within its tenant only. */
export async function resolveConversation(ctx: ProxyContext, config: ProxyConfig, tenant: Tenant, headers: IncomingMessage["headers"], body: Record<string, unknown>, messages: ChatMessage[]): Promise<{ record: ConversationRecord; identity: Identity; hashes: string[] | undefined }> {
  const now = ctx.now();
  let hashes: string[] | undefined;
  let identity = explicitIdentity(tenant.id, headers, body, config.identity.headers, config.identity.bodyFields, messages);
  // Hashed only to be matched: a request with no conversation (prefix matching off) leaves nothing in the index.
  if (identity === undefined && config.identity.prefixMatch) {
    hashes = prefixHashes(messages, tenant.id);
    identity = await prefixIdentity(tenant.id, hashes, ctx.store);
  }
  if (identity === undefined) {
    // Its own key, not one per millisecond: requests sharing a key compact one behind the other.
    const id = `conv-once-${randomUUID()}`;
    identity = { key: scopedKey(tenant.id, id), id, source: "none" };
  }
  let record = identity.record ?? (identity.source === "none" ? undefined : await ctx.store.get(identity.key));
  if (record === undefined) {
    // A record kept under the bare id (before heads were) still seeds its history's state; the strategy re-checks it.
    const from = identity.forkedFrom ?? (identity.legacy === undefined ? undefined : await ctx.store.get(identity.legacy));
    const created = newRecord(identity, tenant.id, now, from);
    record = created;
    // Stored at once, so concurrent requests of a new conversation share one record (and its
    // summary); one found by its messages is indexed at once too, so a client's retry sent while
    // this request still compacts finds it and waits for its summary instead of paying for another.
    const last = hashes?.at(-1);
    if (last !== undefined) {
      record.lastHash = last;
      record.lastLength = (hashes as string[]).length;
      record.indexed.push(last);
    }
    if (identity.source !== "none") {
      await ctx.store.put(record);
      // An index the file cannot take now (a full disk) costs only that early match: remember() writes it again.
      if (last !== undefined) await ctx.store.addPrefix(last, record.id).catch((e: unknown) => ctx.log({ event: "store_error", conversation: created.conversation, tenant: tenant.id, error: errorText(e) }));
    }
  }
  return { record, identity, hashes };
}

/**
 * The id as a header value: a body field (`user`) may hold what no header can carry (beyond Latin-1,
 * a line break), and writing it would throw after the upstream answered. Such an id is percent-encoded.
 */
const headerSafe = (id: string): string => (/^[\x20-\x7e]*$/.test(id) ? id : encodeURIComponent(id));

/** A request body of `api`, read as the compaction sees it (chat messages), or the 400 to answer. */
export function parseRequest(api: ChatApi, raw: Buffer): ParsedRequest {
  return api === "messages" ? parseMessagesRequest(raw) : api === "responses" ? parseResponsesRequest(raw) : parseChatRequest(raw);
}

export async function handleChat(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse, raw: Buffer, started: number, tenant: Tenant, target: string, api: ChatApi = "chat"): Promise<void> {
  const repeated = repeatedIdentityHeader(req.rawHeaders, ctx.config.current.identity.headers);
  if (repeated !== undefined) return sendError(res, 400, `the request sends the ${repeated} header more than once: send one conversation id`, "invalid_request_error", "repeated_conversation_id");
  const overlong = overlongIdentityHeader(req.headers, ctx.config.current.identity.headers);
  if (overlong !== undefined) return sendError(res, 400, `the ${overlong.name} header is ${overlong.length} characters long: a conversation id has at most ${MAX_ID_LENGTH}`, "invalid_request_error", "invalid_conversation_id");
  const parsed = parseRequest(api, raw);
  if (!parsed.ok) return sendError(res, 400, parsed.error, "invalid_request_error", "invalid_request", {}, parsed.param ?? null);
  const request = parsed.request;
  const restore = "restore" in request ? (request as AnthropicRequest | ResponsesRequest).restore : undefined;
  const config = ctx.config.current;
  const base = upstreamBase(config);
  if (base === undefined) return sendError(res, 502, "the proxy has no upstream configured (--upstream or \"upstream\" in the config file)", "upstream_error", "no_upstream");
  let resolved: Awaited<ReturnType<typeof resolveConversation>>;
  try {
    resolved = await resolveConversation(ctx, config, tenant, req.headers, request.body, request.messages);
  } catch (e) {
    return sendStoreUnavailable(res, ctx.log, e, tenant.id);
  }
  const { record, identity, hashes } = resolved;
  // Orders this request's turn against others on the conversation: a reply that finishes after a
  // later request's does not undo it. Past the turn it read (a logical clock): a request sent after
  // another was answered comes after it, whatever the replicas' clocks say.
  const arrived = ctx.turns.arrive(record.id, record.turnAt);
  // The source of this request's id: a follow-up found by prefix says so, whatever started the conversation.
  const echo: Record<string, string> = { [CONVERSATION_HEADER]: headerSafe(record.conversation), [SOURCE_HEADER]: identity.source };
  // Summaries of this conversation go out with the configured summarizer key or this tenant's own.
  const llm = () => summarizerLlm(ctx, config, request.model, tenant.upstreamKey, tenant.virtualKey);
  const input = { messages: request.messages, model: request.model, tools: request.tools, maxTokens: request.maxTokens, bodyBytes: raw.length };
  const reserved = request.maxTokens ?? config.compaction.reserveOutputTokens;

  // Listened for from the start: a client can give up while its request waits for compaction.
  const clientGone = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) clientGone.abort();
  });
  const compactStart = performance.now();
  let outcome: CompactionOutcome = await ctx.compactor.run(config, record, input, llm);
  // A compaction past the deadline holds the request's messages after its reply: its body stays counted.
  if (outcome.background !== undefined) ctx.bodies.keep(res, outcome.background);
  let compactMs = performance.now() - compactStart;
  // Ask for usage in streams only when the client left it unset, and then hide it from the client.
  const streamOptions = request.body.stream_options as { include_usage?: unknown } | null | undefined;
  // Anthropic streams always carry usage.
  const inject = api === "chat" && request.stream && (streamOptions === undefined || streamOptions === null || streamOptions.include_usage === undefined);
  const bodyFor = (o: CompactionOutcome): Buffer =>
    !o.changed && !inject
      ? raw
      : Buffer.from(serializeBody(restore !== undefined ? { ...request.body, ...restore(o.messages) } : { ...request.body, messages: o.messages, ...(inject ? { stream_options: { ...streamOptions, include_usage: true } } : {}) }, request.body));
  // The body goes out decoded: the client's content-encoding no longer describes it.
  const headers = { "accept-encoding": "identity", "content-encoding": "", ...upstreamAuth(tenant) };
  let upstreamMs = 0;
  // The prompt as the budget counts it: what the compaction left, or the request's whole input when
  // it got none (its estimate, of no messages, is then no estimate of the prompt).
  const promptTokens = (o: CompactionOutcome) => clientPromptTokensYielding(o.changed ? o.messages : (request.uncompacted ?? o.messages), request.tools);
  const estimatedTokens = (o: CompactionOutcome) => (request.uncompacted === undefined ? o.estimatedTokens : 0) || promptTokens(o);
  // Tokens reserved against the virtual key's budget before forwarding, settled by finish.
  let reservation = 0;
  // Resolves once the conversation is written: a reply ends after that, so the next request, on
  // whichever replica, sees it.
  const finish = async (usage: { promptTokens: number; completionTokens: number } | undefined, answered = false): Promise<void> => {
    const total = performance.now() - started;
    if (upstreamMs > 0) {
      ctx.metrics.observe("ptc_proxy_upstream_seconds", upstreamMs);
      ctx.metrics.observe("ptc_proxy_overhead_seconds", Math.max(0, total - upstreamMs - compactMs));
    }
    let used = 0;
    if (usage !== undefined) {
      used = usage.promptTokens + usage.completionTokens;
      ctx.metrics.tokens(request.model ?? "unknown", tenant.id, usage.promptTokens, usage.completionTokens);
    } else if (answered) {
      // No usage reported (an upstream that sends none, or a stream cut before its usage chunk): the prompt is
      // counted by the one measure (issue 18), apart from reported tokens, and charged, so leaving a stream
      // early is no way around a budget.
      used = await promptTokens(outcome);
      ctx.metrics.inc("ptc_proxy_estimated_prompt_tokens_total", "", used);
    }
    // Settles the reservation: a request that never reached the upstream gives it back.
    const charged = ctx.tenants.charge(tenant.virtualKey, used, reservation);
    return Promise.all([charged, remember(ctx, config, record, api, request, hashes, outcome, raw, reserved, usage, arrived)]).then(undefined, (e: unknown) => {
      // The reply stands; the record is written again by the conversation's next request.
      ctx.log({ event: "store_error", conversation: record.conversation, tenant: record.tenant, error: errorText(e) });
    });
  };
  // Nobody is waiting for the reply: nothing is sent, but the compaction and the request are
  // stored (and indexed by prefix) for the client's retry.
  if (clientGone.signal.aborted) return finish(undefined);
  let budget: Awaited<ReturnType<typeof ctx.tenants.reserve>>;
  try {
    budget = await ctx.tenants.reserve(config, tenant, () => estimatedTokens(outcome));
  } catch (e) {
    sendStoreUnavailable(res, ctx.log, e, tenant.id);
    return finish(undefined);
  }
  if (typeof budget !== "number") {
    sendError(res, budget.status, budget.message, "rate_limit_error", budget.code, { ...echo, ...refusalHeaders(budget) });
    return finish(undefined);
  }
  reservation = budget;

  // An error body is held, counted as a whole reply is, until the reply is sent.
  const take = (n: number) => ctx.bodies.takeReply(res, n);
  let attempt = await sendWithRetries(ctx, config, "POST", target, req.headers, bodyFor(outcome), headers, clientGone.signal, res);
  let hidden = hiddenKeys(tenant, config, attempt.fallback);
  let result: UpstreamResult = attempt.result;
  let attempts = attempt.attempts;
  let upstreamText: string | undefined;
  if (result.ok && result.response.statusCode !== undefined && result.response.statusCode >= 400) {
    upstreamText = (await readErrorText(result.response, hidden, take)).text;
    if (isContextLengthError(result.response.statusCode, upstreamText) && config.compaction.enabled && config.conversations[record.conversation]?.disabled !== true) {
      // The window is smaller than the estimate thought: learn it, compact to fit, try once more.
      const sent = await estimatedTokens(outcome);
      // What the prompt alone may take (the reserved output is added back per request).
      record.learnedLimit = Math.min(record.learnedLimit ?? Infinity, Math.max(1, sent - 1));
      const t = performance.now();
      // Within what is left of the request's deadline: none when the first compaction waited it all
      // (told by the compactor, whose deadline clock may not be the wall clock compactMs reads).
      const left = outcome.deadlinePassed === true ? 0 : Math.max(0, config.compaction.deadlineMs - compactMs);
      const retry = await ctx.compactor.run(config, record, input, llm, { force: true, deadlineMs: left });
      if (retry.background !== undefined) ctx.bodies.keep(res, retry.background);
      compactMs += performance.now() - t;
      if (retry.changed) {
        ctx.metrics.inc("ptc_proxy_context_retries_total");
        outcome = retry;
        upstreamText = undefined;
        attempt = await sendWithRetries(ctx, config, "POST", target, req.headers, bodyFor(outcome), headers, clientGone.signal, res);
        result = attempt.result;
        hidden = hiddenKeys(tenant, config, attempt.fallback);
        attempts += attempt.attempts;
        if (result.ok && (result.response.statusCode ?? 500) >= 400) upstreamText = (await readErrorText(result.response, hidden, take)).text;
      } else {
        record.flagged = true;
        record.lastError = "the upstream's context is exceeded and nothing is left to compact";
      }
    }
  }
  if (attempts > 1) echo[ATTEMPTS_HEADER] = String(attempts);

  if (!result.ok) {
    // A request the upstream had whole is charged its prompt, whether the client cancelled it (like
    // a stream left early: leaving before the reply is no way around a budget) or the upstream
    // timed out on it: it may have worked on it, and billed it, all the same.
    if (clientGone.signal.aborted) return finish(undefined, result.delivered);
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", `kind="${result.kind}"`);
    sendError(res, result.kind === "timeout" ? 504 : 502, result.message, "upstream_error", result.kind === "timeout" ? "upstream_timeout" : "upstream_unreachable", echo);
    return finish(undefined, result.delivered);
  }
  const response = result.response;
  const status = response.statusCode ?? 502;
  if (upstreamText !== undefined) {
    upstreamMs = performance.now() - result.startedAt;
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="status"');
    // Masked (by readErrorText) before it is cut to what is shown: else a key across the cut showed its start.
    const body = upstreamErrorBody(status, upstreamText);
    res.writeHead(status, { ...decodedHeaders(response, hidden), ...echo, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
    res.end(body);
    return finish(undefined);
  }
  if (status >= 300 && status < 400) {
    // Followed by no one: node:http follows none, and a client that did would reach the upstream past the proxy.
    response.resume();
    upstreamMs = performance.now() - result.startedAt;
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="status"');
    const location = response.headers.location;
    sendError(res, 502, `the upstream answered HTTP ${status}${location === undefined ? "" : ` with a redirect to ${maskKeys(location, hidden)}`}, which the proxy does not follow: set the upstream to the URL that answers`, "upstream_error", "upstream_redirect", echo);
    return finish(undefined);
  }
  const coding = new KeyMasker(hidden).active ? undecodableCoding(response.headers["content-encoding"]) : undefined;
  if (coding !== undefined) {
    upstreamMs = performance.now() - result.startedAt;
    refuseUndecodable(res, response, coding, ctx.metrics, echo);
    // It answered, so it had the prompt (and may have billed it).
    return finish(undefined, true);
  }
  const isStream = request.stream && String(response.headers["content-type"] ?? "").includes("text/event-stream");
  if (isStream) {
    // What it holds back of an unfinished event counts beside the request bodies, as a whole reply does.
    const tap = new SseTap(inject, (n) => ctx.bodies.takeReply(res, n));
    // Read decoded, as a whole reply is (the upstream may compress though asked for identity): else the tap finds no usage in it.
    const decoded = decodedStream(response, response.headers["content-encoding"]);
    res.writeHead(status, { ...(decoded === undefined ? responseHeaders(response.headers, false, hidden) : decodedHeaders(response, hidden)), ...echo });
    res.flushHeaders();
    // A 200 stream may still quote the key it was sent with, in an error event.
    const ended = await pipeStream(decoded ?? response, res, tap, new KeyMasker(hidden), api === "messages");
    upstreamMs = performance.now() - result.startedAt;
    if (ended === undefined) {
      if (!clientGone.signal.aborted) ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="stream_cut"');
      return finish(tap.usage, true);
    }
    await finish(tap.usage, true);
    res.end(ended);
    return;
  }
  // Held whole only within maxInFlightBodyBytes, beside the request bodies: 6 replies of 42 MB at
  // once took 413 MB under a total of 1 MiB.
  const read = await readDecoded(response, MAX_REPLY_BYTES, (n) => ctx.bodies.takeReply(res, n));
  if (read?.refused === true) {
    // Past what the proxy may hold: passed on as it comes, as the upstream sent it (not checked
    // for being JSON), its usage read as it passes.
    const masker = new KeyMasker(hidden);
    // A compressed reply to mask (the proxy asked for identity) is decoded as it passes: sent as it
    // came, the client undid the coding and read the key in it. The masks change its length.
    const { "content-encoding": encoding, ...plain } = response.headers;
    const decoded = masker.active && encoding !== undefined ? decodedPassage(read.body, response, read.ended === true, encoding) : undefined;
    const tap = new ReplyUsage(decoded === undefined ? response.headers : plain);
    const headers = responseHeaders(decoded === undefined ? response.headers : plain, !masker.active, hidden);
    res.writeHead(status, { ...headers, ...echo });
    const last = decoded === undefined ? await passOn(read.body, response, read.ended === true, res, tap, masker.active ? masker : undefined) : await passOn(Buffer.alloc(0), decoded, false, res, tap, masker);
    upstreamMs = performance.now() - result.startedAt;
    if (last === undefined) {
      if (!clientGone.signal.aborted) ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="stream_cut"');
      return finish(tap.cut(), true);
    }
    const usage = await tap.end();
    await finish(usage === "unread" ? undefined : usage, true);
    res.end(last);
    return;
  }
  upstreamMs = performance.now() - result.startedAt;
  if (read?.cut === true) {
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="too_large"');
    sendError(res, 502, `the upstream's reply is larger than the ${MAX_REPLY_BYTES} bytes the proxy reads whole: ask for a stream`, "upstream_error", "upstream_reply_too_large", echo);
    // It had answered, so it had the prompt.
    return finish(undefined, true);
  }
  const text = read?.body;
  if (text === undefined) {
    // The client cancelled (its signal cut the upstream): nobody to answer, and no fault of the
    // upstream's. The upstream had answered, so it had the prompt: charged as a stream left early is.
    if (clientGone.signal.aborted) return finish(undefined, true);
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="timeout"');
    sendError(res, 504, "the upstream stopped in the middle of its reply", "upstream_error", "upstream_timeout", echo);
    // It had answered, so it had the prompt.
    return finish(undefined, true);
  }
  const usage = completionUsage(text);
  if (usage === "malformed") {
    ctx.metrics.inc("ptc_proxy_upstream_errors_total", 'kind="malformed"');
    // Its start, with what may hold a key that starts there masked before it is cut: the upstream may quote the key it refused.
    const start = maskKeys(text.toString("utf8", 0, 60 + Math.max(0, ...hidden.map((k) => k.length))), hidden).slice(0, 60);
    sendError(res, 502, `the upstream's reply is not a JSON ${api === "chat" ? "chat completion" : api === "messages" ? "message" : "response"} (it starts with ${JSON.stringify(start)})`, "upstream_error", "upstream_malformed", echo);
    // It answered 200, so it had the prompt (and may have billed it).
    return finish(undefined, true);
  }
  // A 200 reply may still quote the key it was sent with (a gateway's error with status 200).
  const shown = KeyMasker.mask(text, hidden);
  res.writeHead(status, { ...decodedHeaders(response, hidden), ...echo, "content-length": String(shown.length) });
  await finish(usage, true);
  res.end(shown);
}

/** What a reply teaches beyond its own turn (learnFromUsage): kept from a reply that finished after a later request's. */
const LEARNED = ["calibration", "learnedLimit", "truncated", "flagged", "lastError"] as const;
/** What learnFromUsage records of the request's own prompt: part of its turn. */
const PROMPT_FIGURES = ["usageRatio", "estimatedTokens", "reportedTokens"] as const;

/**
 * After the reply: what the usage taught, the prefix index, and the record, written through. The
 * turn (the TURN_FIELDS of merge.ts, and the stored body) is this request's only when no request
 * on the conversation that arrived after it has been remembered already: two requests at once
 * (a client's retry, an agent's parallel calls) otherwise left the record, and the body the admin
 * `compact` reads, at whichever reply finished last, an earlier history over a later one.
 */
async function remember(ctx: ProxyContext, config: ProxyConfig, record: ConversationRecord, api: ChatApi, request: ChatRequest, hashes: string[] | undefined, outcome: CompactionOutcome, raw: Buffer, reserved: number, usage: { promptTokens: number; completionTokens: number } | undefined, arrived: number): Promise<void> {
  const window = ctx.compactor.window(config, record, request.model, reserved);
  // Learned on a copy (another request may be remembered meanwhile): what it learned is taken
  // back, and its prompt's figures only when its turn is the latest.
  const before = { ...record };
  const learner = { ...record };
  const truncated = await learnFromUsage(learner, config, { messages: outcome.messages, tools: request.tools, bodyBytes: raw.length, estimatedTokens: outcome.estimatedTokens, reserved, window }, usage?.promptTokens);
  if (truncated) ctx.metrics.inc("ptc_proxy_upstream_truncation_total");
  const target = record as unknown as Record<string, unknown>;
  for (const k of LEARNED) if (learner[k] !== before[k]) target[k] = learner[k];
  const latest = arrived >= (record.turnAt ?? -Infinity);
  record.updatedAt = ctx.now();
  if (latest) {
    for (const k of PROMPT_FIGURES) {
      if (learner[k] === undefined) delete target[k];
      else target[k] = learner[k];
    }
    record.turnAt = arrived;
    record.messageCount = request.messages.length;
    // The stored body is read with its API's parser (the admin `compact`).
    record.api = api;
    if (request.model !== undefined) record.model = request.model;
  }
  // The writes touch different rows, so they go at once: the reply waits for them, and on a
  // shared store each is a round trip.
  const writes: Array<Promise<void>> = [];
  // Only requests without an explicit id are matched by prefix, so only theirs are hashed.
  if (hashes !== undefined && hashes.length > 0) {
    const last = hashes[hashes.length - 1];
    if (latest) {
      record.lastHash = last;
      record.lastLength = hashes.length;
    }
    writes.push(ctx.store.addPrefix(last, record.id));
    // Older requests stay findable (an edited or regenerated turn forks from them with the
    // summary), but only the last few: the index grows with conversations, not with requests.
    if (!record.indexed.includes(last)) record.indexed.push(last);
    while (record.indexed.length > INDEXED_PER_CONVERSATION) writes.push(ctx.store.removePrefix(record.indexed.shift() as string, record.id));
  }
  // Without keepMessages only hashes, counts and the strategy's summary are kept at rest.
  if (record.source !== "none") writes.push(ctx.store.put(record, config.keepMessages && latest ? raw.toString("utf8") : undefined));
  await Promise.all(writes);
}

/**
 * Usage of a whole (non-streamed) reply, undefined when it has none, "malformed" when it is not a
 * JSON object.
 */
function completionUsage(body: Buffer): StreamUsage | undefined | "malformed" {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString("utf8"));
  } catch {
    return "malformed";
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return "malformed";
  return usageOf(parsed);
}

/**
 * The usage a forwarded reply reports, read as it passes (the caller pipes it), holding none of
 * it: from its usage event when it is a stream, else from its JSON body's `usage`; "unread" for one
 * in a coding this Node cannot undo.
 */
export function replyUsage(response: IncomingMessage): Promise<StreamUsage | undefined | "unread"> {
  const tap = new ReplyUsage(response.headers);
  response.on("data", (c: Buffer) => tap.push(c));
  return new Promise((resolve) => {
    response.on("end", () => void tap.end().then(resolve));
    // Cut off: what a stream reported before it broke still counts.
    response.on("close", () => {
      if (!response.complete) resolve(tap.cut());
    });
  });
}

/**
 * A whole reply, as readBuffer reads it, decoded by its content-encoding: the proxy asks for
 * identity, but an upstream may compress all the same (its bytes were quoted as a malformed reply,
 * or sent as plain text under content-encoding: gzip). One that does not decode comes as it is.
 */
async function readDecoded(response: IncomingMessage, limit: number, take?: (n: number) => boolean): Promise<{ body: Buffer; cut: boolean; refused?: true; ended?: true } | undefined> {
  const read = await readBuffer(response, limit, take);
  const encoding = response.headers["content-encoding"];
  if (read === undefined || read.cut || read.refused === true || encoding === undefined) return read;
  const decoded = await decodeBody(read.body, encoding, limit, take);
  // Read whole, but its decoded copy does not fit beside it, or it is in a coding this Node cannot
  // undo (zstd before Node 22.15; read as not JSON, the reply the upstream made and billed was
  // lost to a 502): it goes on as it came, its usage unread.
  if (!decoded.ok && (decoded.status === 503 || decoded.status === 415)) return { body: read.body, cut: false, refused: true, ended: true };
  return decoded.ok ? { body: decoded.body, cut: false } : { body: decoded.head ?? read.body, cut: decoded.status === 413 };
}

/**
 * A reply of which `head` was read already, `response` giving the rest unless `ended`, with its
 * `coding` undone as it passes (one this Node undoes: the others were refused before). An error
 * or early end of the reply reaches the returned stream as an error.
 */
function decodedPassage(head: Buffer, response: IncomingMessage, ended: boolean, coding: string | string[]): Readable {
  const raw = new PassThrough();
  raw.write(head);
  if (ended) raw.end();
  else pipeline(response, raw, () => {});
  return decodedStream(raw, coding) as Readable;
}

/**
 * Passes a reply on as it comes, `head` (what was read of it already) first, its bytes as the
 * upstream sent them, each piece read for its usage by `tap`. Resolves with its last piece, held
 * back for the caller to send once the conversation is written, or undefined when the upstream
 * broke off or the client went away (the reply is cut then).
 */
function passOn(head: Buffer, response: Readable, ended: boolean, res: ServerResponse, tap: ReplyUsage, masker?: KeyMasker): Promise<Buffer | undefined> {
  tap.push(head);
  const shown = (c: Buffer) => (masker === undefined ? c : masker.push(c));
  if (ended) return Promise.resolve(masker === undefined ? head : Buffer.concat([shown(head), masker.end()]));
  let held = shown(head);
  return new Promise((resolve) => {
    let done = false;
    const stop = (last: Buffer | undefined) => {
      if (done) return;
      done = true;
      if (last === undefined) res.destroy();
      resolve(last);
    };
    response.on("data", (c: Buffer) => {
      tap.push(c);
      const out = held;
      held = shown(c);
      if (!res.write(out)) {
        response.pause();
        res.once("drain", () => response.resume());
      }
    });
    response.on("end", () => stop(masker === undefined ? held : Buffer.concat([held, masker.end()])));
    response.on("error", () => stop(undefined));
    response.on("aborted", () => stop(undefined));
    res.on("close", () => {
      if (done) return;
      response.destroy();
      stop(undefined);
    });
    response.resume();
  });
}

/**
 * An upstream error body as text, decoded, with `hidden` masked, read up to MAX_ERROR_BYTES, each
 * piece offered to `take` (a BodyBudget's takeReply): past what it takes, only the start read so
 * far is kept (the rest of the reply dropped). `whole` is false for a body cut (by the limit, the
 * budget or its connection), whose end, which may hold the start of a key, is left out.
 */
export async function readErrorText(response: IncomingMessage, hidden: readonly string[], take?: (n: number) => boolean): Promise<{ text: string; whole: boolean }> {
  const read = await readBuffer(response, MAX_ERROR_BYTES, take);
  if (read === undefined) return { text: "", whole: false };
  if (read.refused === true) response.destroy();
  let whole = !read.cut && read.refused !== true && response.complete;
  let body = read.body;
  const encoding = response.headers["content-encoding"];
  if (encoding !== undefined) {
    // A coded body cut short does not decode.
    if (!whole) return { text: "", whole };
    const decoded = await decodeBody(body, encoding, MAX_ERROR_BYTES, take);
    whole = decoded.ok;
    body = decoded.ok ? decoded.body : (decoded.head ?? Buffer.alloc(0));
  }
  // A KeyMasker keeps back an end that may start a key: what it holds back is left out.
  return whole ? { text: maskKeys(body.toString("utf8"), hidden), whole } : { text: new KeyMasker(hidden).push(body).toString("utf8"), whole };
}

/** Reply headers for a body the proxy read whole and sends decoded. */
function decodedHeaders(response: IncomingMessage, hidden: readonly string[]): Record<string, string | string[]> {
  const headers = responseHeaders(response.headers, false, hidden);
  delete headers["content-encoding"];
  return headers;
}

/**
 * Streams upstream to the client through the tap. Resolves with the stream's last bytes, left for
 * the caller to send once the conversation is written, or undefined when the upstream broke off
 * or the client went away (the reply is ended or cut then).
 */
function pipeStream(response: Readable, res: ServerResponse, tap: SseTap, masker: KeyMasker, anthropic: boolean): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    let done = false;
    const stop = (ok: boolean, clientGone = false) => {
      if (done) return;
      done = true;
      if (ok) return resolve(masker.active ? Buffer.concat([masker.push(tap.end()), masker.end()]) : tap.end());
      if (clientGone) res.destroy();
      // The upstream broke off mid-stream: its unfinished event is dropped, and an error event
      // ends the stream, which the SDKs raise. The blank line closes an event passed on unfinished
      // for its size.
      else res.end(`\n\n${streamErrorEvent("the upstream stream broke off before it was complete", "upstream_stream_cut", anthropic)}`);
      resolve(undefined);
    };
    response.on("data", (chunk: Buffer) => {
      const out = masker.active ? masker.push(tap.push(chunk)) : tap.push(chunk);
      if (out.length > 0 && !res.write(out)) {
        response.pause();
        res.once("drain", () => response.resume());
      }
    });
    response.on("end", () => stop(true));
    response.on("error", () => stop(false));
    response.on("aborted", () => stop(false));
    // The client went away: stop reading the upstream too.
    res.on("close", () => {
      if (!done) {
        response.destroy();
        stop(false, true);
      }
    });
  });
}
