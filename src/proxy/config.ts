// The proxy's settings: one zod schema gives the defaults, validates the config file and every
// API update (a bad value is rejected whole, with the path of what is wrong), and marks the one
// secret (the summarizer's API key) that GET /config must never show.
import { z } from "zod";
import { defaultStrategies } from "../history/registry.js";
import { MAX_TIMER_MS } from "../lisp/index.js";
import { MAX_JSON_DEPTH, nestedDeeperThan } from "../json/depth.js";
import { errorText } from "../llm/errors.js";

/** Headers that carry a conversation id, in the order they are consulted (see docs/proxy.md). */
export const DEFAULT_IDENTITY_HEADERS = ["x-conversation-id", "x-claude-code-session-id", "session-id", "session_id", "x-session-id", "x-session-affinity"];
/** Body fields consulted after the headers. */
export const DEFAULT_IDENTITY_FIELDS = ["prompt_cache_key", "user"];

export const REDACTED = "[redacted]";

/**
 * A wait in milliseconds that a timer keeps: past MAX_TIMER_MS setTimeout fires after 1 ms, so a
 * drain timeout of 99999999999 cut in-flight requests at once.
 */
const timerMs = (min: number) => z.number().int().min(min).max(MAX_TIMER_MS);

/**
 * A server's base URL. Requests go to its origin and path only: a user name and password or a
 * query in it were dropped without a word (a gateway's basic auth, Azure's api-version), so they
 * are refused. The message never quotes the URL: it holds the password.
 */
const baseUrl = z.url({ protocol: /^https?$/ }).superRefine((url, ctx) => {
  if (!URL.canParse(url)) return;
  const u = new URL(url);
  if (u.username !== "" || u.password !== "") ctx.addIssue({ code: "custom", message: "a user name or password in the URL is not sent: give the key as the client's Authorization, a virtual key's upstreamKey or the summarizer's apiKey" });
  if (u.search !== "") ctx.addIssue({ code: "custom", message: "a query in the URL (?...) is not sent: clients' own query strings are forwarded" });
});

const strategySpec = z
  .object({ name: z.string().min(1), options: z.record(z.string(), z.json()).default({}) })
  .strict()
  .superRefine((spec, ctx) => {
    // The registry's own validation, so an unknown strategy or option fails here, not on a request.
    try {
      defaultStrategies.create(spec);
    } catch (e) {
      ctx.addIssue({ code: "custom", message: errorText(e) });
    }
  });

const conversationSettings = z
  .object({
    /** Never compact this conversation. */
    disabled: z.boolean().default(false),
    /** A strategy for this conversation only. */
    strategy: strategySpec.optional(),
    /** Shorthand for the usage-ratio threshold of this conversation. */
    threshold: z.number().gt(0).max(1).optional(),
  })
  .strict();

const virtualKey = z
  .object({
    /** sha256 (hex) of the key the client presents; the key itself is shown once, when issued. */
    keyHash: z.string().regex(/^[0-9a-f]{64}$/, "a sha256 hex digest"),
    /** The key sent upstream for this virtual key's requests. A secret: never shown. */
    upstreamKey: z.string().min(1).optional(),
    /** Prompt plus completion tokens this key may use (as the upstream reports them). */
    tokenBudget: z.number().int().min(1).optional(),
    requestsPerMinute: z.number().int().min(1).optional(),
  })
  .strict();

export const configSchema = z
  .object({
    /** Base URL of the OpenAI-compatible server requests go to (e.g. http://127.0.0.1:11434/v1). */
    upstream: baseUrl.optional(),
    /** Bound on waiting for the upstream: no byte for this long fails the request with 504. */
    upstreamTimeoutMs: timerMs(1).default(600_000),
    retries: z
      .object({
        /** Retries after the first request, per upstream, for 429, 5xx and unreachable upstreams (before any byte reached the client). */
        attempts: z.number().int().min(0).max(10).default(2),
        /** Back-off of the first retry, doubled for each next one, when the upstream sends no retry-after. */
        baseDelayMs: timerMs(0).default(250),
        /** Longest wait for one retry: a longer retry-after goes to the fallback, or to the client. */
        maxDelayMs: timerMs(0).default(20_000),
        /** Tried the same way when the upstream's retries are used up. */
        fallbackUpstream: baseUrl.optional(),
        /** Key for the fallback upstream (default: the one the primary got). A secret: never shown. */
        fallbackApiKey: z.string().min(1).optional(),
      })
      .strict()
      .default({ attempts: 2, baseDelayMs: 250, maxDelayMs: 20_000 }),
    /** On SIGTERM/SIGINT, how long in-flight requests and streams may take to finish before they are cut. */
    drainTimeoutMs: timerMs(0).default(30_000),
    /** How long a request body may take to arrive after its headers: past it, 408 and the connection closed. */
    requestBodyTimeoutMs: timerMs(1).default(60_000),
    /** Largest request body accepted, on any path. */
    maxBodyBytes: z.number().int().min(1024).default(32 * 1024 * 1024),
    /** Largest total of request bodies held at once (as read, and again decoded): past it, 503 with retry-after. */
    maxInFlightBodyBytes: z.number().int().min(1024).default(128 * 1024 * 1024),
    compaction: z
      .object({
        enabled: z.boolean().default(true),
        strategy: strategySpec.default({ name: "cost-trigger", options: {} }),
        /** Reserved output when a request sets no max_tokens / max_completion_tokens. */
        reserveOutputTokens: z.number().int().min(0).default(4096),
        /** Context windows by model-name prefix, added to (and overriding) the built-in table. */
        contextLimits: z.record(z.string(), z.number().int().min(1)).default({}),
        /** Upstream reports below this share of the local estimate mean it cut the prompt. */
        truncationRatio: z.number().gt(0).lt(1).default(0.5),
        /** Longest a request waits for compaction (all summary calls counted); past it, it goes out without and compaction finishes in the background. */
        deadlineMs: timerMs(0).default(3000),
        /** Summary calls one compaction may make, retries included. */
        maxSummaryCalls: z.number().int().min(1).max(10).default(2),
        summarizer: z
          .object({
            /** Model for summaries; default: the request's own model. */
            model: z.string().min(1).optional(),
            /** Server for summaries; default: the upstream. */
            baseURL: baseUrl.optional(),
            /** Key for that server; default: the client's own Authorization. A secret: never shown. */
            apiKey: z.string().min(1).optional(),
            timeoutMs: timerMs(1).default(120_000),
          })
          .strict()
          .default({ timeoutMs: 120_000 }),
      })
      .strict()
      .default({ enabled: true, strategy: { name: "cost-trigger", options: {} }, reserveOutputTokens: 4096, contextLimits: {}, truncationRatio: 0.5, deadlineMs: 3000, maxSummaryCalls: 2, summarizer: { timeoutMs: 120_000 } }),
    identity: z
      .object({
        headers: z.array(z.string().min(1).toLowerCase()).default(DEFAULT_IDENTITY_HEADERS),
        bodyFields: z.array(z.string().min(1)).default(DEFAULT_IDENTITY_FIELDS),
        /** Without an explicit id, attach a request to the stored conversation it extends. */
        prefixMatch: z.boolean().default(true),
      })
      .strict()
      .default({ headers: DEFAULT_IDENTITY_HEADERS, bodyFields: DEFAULT_IDENTITY_FIELDS, prefixMatch: true }),
    tenancy: z
      .object({
        /** Keys the proxy issued, by name (POST /ext/context_compaction/keys). */
        virtualKeys: z.record(z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/), virtualKey).default({}),
        /** Refuse every request without a virtual key. */
        requireVirtualKey: z.boolean().default(false),
      })
      .strict()
      .default({ virtualKeys: {}, requireVirtualKey: false }),
    /** Keep each conversation's last request (for the admin `compact`); off: only hashes, counts and summaries are stored. */
    keepMessages: z.boolean().default(true),
    /** Conversations unused for this long are deleted. */
    idleTtlSeconds: z.number().int().min(1).default(7 * 24 * 3600),
    /** Per-conversation settings, by conversation id. */
    conversations: z.record(z.string().min(1), conversationSettings).default({}),
  })
  .strict();

export type ProxyConfig = z.output<typeof configSchema>;
export type ConversationSettings = z.output<typeof conversationSettings>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** Validates a whole configuration (file contents, or defaults merged with an update). */
export function parseConfig(raw: unknown): Parsed<ProxyConfig> {
  // The schema recurses once per level (a strategy's options take any JSON): thousands of levels
  // overflowed the stack, and an edit of the config file killed the proxy from its watcher.
  if (nestedDeeperThan(raw)) return { ok: false, error: `the settings nest more than ${MAX_JSON_DEPTH} levels deep` };
  const r = configSchema.safeParse(raw ?? {});
  return r.success ? { ok: true, value: r.data } : { ok: false, error: z.prettifyError(r.error) };
}

const isPlain = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * A partial update applied over the current settings: objects merge key by key, anything else
 * replaces, null removes a key. A redacted secret (or URL) sent back unchanged keeps the stored one.
 */
export function mergeConfig(current: unknown, patch: unknown): unknown {
  if (!isPlain(patch) || !isPlain(current)) return patch;
  const out: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if (v === REDACTED || (typeof v === "string" && shownAs(current[k], v))) continue;
    else {
      const own = Object.hasOwn(current, k) ? current[k] : undefined;
      // Defined, not assigned: `out.__proto__ = v` (JSON.parse gives "__proto__" as an own key) made
      // the patch the settings' prototype, read through by the schema; as an own key it is refused.
      Object.defineProperty(out, k, { value: isPlain(v) && isPlain(own) && k !== "strategy" ? mergeConfig(own, v) : v, enumerable: true, writable: true, configurable: true });
    }
  }
  return out;
}

/** A query parameter that carries a credential (libpq's `password` and `sslpassword`, `key`, `api_key`, `access_token`), up to its value. */
const SECRET_PARAM = /([?&](?:[^=&#]*[_-])?(?:(?:ssl)?pass(?:word|wd)?|secret|token|(?:api)?key)=)[^&#]*/gi;

/**
 * A URL with the user name and password it may carry, and the values of query parameters named
 * as credentials (`?password=`, which PostgreSQL URLs take), shown as `[redacted]`, for logs,
 * status and GET /config; one that does not parse (a password with an unencoded `#` or `/`)
 * hidden up to its last `@`. Sent back in an update it keeps them (mergeConfig), as a redacted
 * key does; a URL sent without credentials drops them.
 */
export function redactUrl(url: string | undefined): string | undefined {
  if (url === undefined || (!url.includes("@") && !url.includes("?"))) return url;
  if (!URL.canParse(url)) return url.replace(/^([a-z][a-z\d+.-]*:\/\/)?[^]*@/i, `$1${REDACTED}@`).replace(SECRET_PARAM, `$1${REDACTED}`);
  const u = new URL(url);
  const search = u.search.replace(SECRET_PARAM, `$1${REDACTED}`);
  if (u.username === "" && u.password === "" && search === u.search) return url;
  return `${u.protocol}//${u.username === "" && u.password === "" ? "" : `${REDACTED}@`}${u.host}${u.pathname}${search}${u.hash}`;
}

/** Whether `given` is how redactUrl shows the stored value: an update that sends it back changes nothing. */
const shownAs = (stored: unknown, given: string): boolean => given.includes(REDACTED) && typeof stored === "string" && redactUrl(stored) === given;

/** The configuration as GET /config shows it: the key and any credentials in URLs replaced. */
export function redactConfig(config: ProxyConfig): ProxyConfig {
  const s = config.compaction.summarizer;
  const summarizer = { ...s, ...(s.apiKey === undefined ? {} : { apiKey: REDACTED }), ...(s.baseURL === undefined ? {} : { baseURL: redactUrl(s.baseURL) }) };
  const virtualKeys = Object.fromEntries(Object.entries(config.tenancy.virtualKeys).map(([name, vk]) => [name, vk.upstreamKey === undefined ? vk : { ...vk, upstreamKey: REDACTED }]));
  const r = config.retries;
  const retries = { ...r, ...(r.fallbackUpstream === undefined ? {} : { fallbackUpstream: redactUrl(r.fallbackUpstream) }), ...(r.fallbackApiKey === undefined ? {} : { fallbackApiKey: REDACTED }) };
  return { ...config, ...(config.upstream === undefined ? {} : { upstream: redactUrl(config.upstream) }), compaction: { ...config.compaction, summarizer }, tenancy: { ...config.tenancy, virtualKeys }, retries };
}
