// Tool-heavy code search, the task where the reference implementation's compression lost
// track of what it had searched: many searches with refined queries, file reads, and
// following a call chain across files.
import { z } from "zod";
import { tool } from "../../../src/agent/tools.js";
import { reply, type Session } from "../session.js";

const files: Record<string, string[]> = {
  "src/net/client.ts": [
    "import { withRetry } from './retry';",
    "import { parseRetryAfter } from './headers';",
    "export class HttpClient {",
    "  constructor(private readonly base: string, private readonly opts: ClientOptions) {}",
    "  async get(path: string): Promise<Response> {",
    "    return withRetry(() => this.send('GET', path), this.opts.retry);",
    "  }",
    "  async post(path: string, body: unknown): Promise<Response> {",
    "    return withRetry(() => this.send('POST', path, body), this.opts.retry);",
    "  }",
    "  private async send(method: string, path: string, body?: unknown): Promise<Response> {",
    "    const res = await fetch(this.base + path, { method, body: JSON.stringify(body) });",
    "    if (res.status === 429) throw new RateLimited(parseRetryAfter(res.headers.get('retry-after')));",
    "    if (res.status >= 500) throw new ServerError(res.status);",
    "    return res;",
    "  }",
    "}",
  ],
  "src/net/retry.ts": [
    "import { computeBackoff } from './backoff';",
    "import { RateLimited, ServerError } from './errors';",
    "export interface RetryPolicy { attempts: number; baseMs: number; maxMs: number }",
    "export const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseMs: 200, maxMs: 20_000 };",
    "export async function withRetry<T>(call: () => Promise<T>, policy = DEFAULT_RETRY): Promise<T> {",
    "  for (let attempt = 1; ; attempt++) {",
    "    try {",
    "      return await call();",
    "    } catch (e) {",
    "      if (attempt >= policy.attempts || !(e instanceof RateLimited || e instanceof ServerError)) throw e;",
    "      const wait = e instanceof RateLimited && e.retryAfterMs !== undefined ? e.retryAfterMs : computeBackoff(attempt, policy);",
    "      await sleep(wait);",
    "    }",
    "  }",
    "}",
  ],
  "src/net/backoff.ts": [
    "import type { RetryPolicy } from './retry';",
    "// Full jitter: a random wait between 0 and the exponential cap (AWS architecture blog).",
    "export function computeBackoff(attempt: number, policy: RetryPolicy): number {",
    "  const cap = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));",
    "  return Math.floor(Math.random() * cap);",
    "}",
  ],
  "src/net/headers.ts": [
    "// Retry-After is either a number of seconds or an HTTP date.",
    "export function parseRetryAfter(value: string | null): number | undefined {",
    "  if (value === null) return undefined;",
    "  const seconds = Number(value);",
    "  if (Number.isFinite(seconds)) return seconds * 1000;",
    "  const date = Date.parse(value);",
    "  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());",
    "}",
  ],
  "src/net/errors.ts": [
    "export class RateLimited extends Error { constructor(readonly retryAfterMs?: number) { super('rate limited'); } }",
    "export class ServerError extends Error { constructor(readonly status: number) { super(`server error ${status}`); } }",
  ],
  "src/jobs/queue.ts": [
    "import { HttpClient } from '../net/client';",
    "// Jobs are retried by the queue itself, not by the HTTP client.",
    "export const MAX_JOB_RETRIES = 3;",
    "export function requeue(job: Job): void { if (job.tries < MAX_JOB_RETRIES) queue.push({ ...job, tries: job.tries + 1 }); }",
  ],
  "src/api/rate-limit.ts": [
    "// Server side: our own API answers 429 when a key exceeds 100 requests per minute.",
    "export const LIMIT_PER_MINUTE = 100;",
    "export function limited(key: string): boolean { return counter(key) > LIMIT_PER_MINUTE; }",
    "export function reject(res: ServerResponse): void { res.statusCode = 429; res.setHeader('Retry-After', '60'); res.end(); }",
  ],
  "docs/retries.md": [
    "# Retries",
    "Outgoing HTTP calls are retried on 429 and 5xx responses.",
    "The wait honours Retry-After when the server sends it; otherwise it backs off exponentially.",
    "See also the job queue, which retries failed jobs up to three times.",
  ],
  "test/net/retry.test.ts": [
    "import { withRetry } from '../../src/net/retry';",
    "it('retries 429 with Retry-After', async () => { /* ... */ });",
    "it('gives up after 5 attempts', async () => { /* ... */ });",
  ],
};

interface Hit {
  path: string;
  line: number;
  text: string;
}

function search(query: string): Hit[] {
  const q = query.toLowerCase();
  const hits: Hit[] = [];
  for (const [path, lines] of Object.entries(files)) lines.forEach((text, i) => text.toLowerCase().includes(q) && hits.push({ path, line: i + 1, text: text.trim() }));
  return hits;
}

const tools = {
  search: tool({
    description: "Case-insensitive substring search over the repository; returns matching lines with path and line number.",
    input: z.object({ query: z.string() }),
    run: ({ query }) => search(query),
  }),
  "read-file": tool({
    description: "Lines of a file (1-based, inclusive range; whole file when omitted), joined with newlines and numbered.",
    input: z.object({ path: z.string(), from: z.number().int().optional(), to: z.number().int().optional() }),
    run: ({ path, from, to }) => {
      const lines = files[path];
      if (lines === undefined) throw new Error(`no such file: ${path}`);
      const start = Math.max(1, from ?? 1);
      return lines
        .slice(start - 1, to ?? lines.length)
        .map((l, i) => `${start + i}: ${l}`)
        .join("\n");
    },
  }),
};

export const codeSearch: Session = {
  name: "code-search",
  kind: "tool-heavy",
  prompt: "In this repository, find out how outgoing HTTP requests that get a 429 response are retried: which function decides the wait, how the wait is computed when there is no Retry-After header, and how many attempts are made. Return the file and function names and the numbers.",
  tools,
  output: z.object({ file: z.string(), function: z.string(), strategy: z.string(), attempts: z.number(), "base-ms": z.number(), "max-ms": z.number() }),
  context: {},
  replies: [
    reply(
      "I don't know the layout of the repository yet. The status code 429 is the most specific thing to search for, so I'll start there and print every hit with its location.",
      `(def hits-429 (tool/search {:query "429"}))
(doseq [h hits-429] (println (:path h) (:line h) (:text h)))`,
    ),
    reply(
      "There are hits on both sides: src/api/rate-limit.ts is our own server answering 429, which is not what I'm after, while src/net/client.ts throws RateLimited on a 429 response. I'll search for retry-related code next.",
      `(def hits-retry (tool/search {:query "retry"}))
(println (count hits-retry) "hits in" (count (distinct (map :path hits-retry))) "files")
(doseq [[path hs] (group-by :path hits-retry)] (println path (mapv :line hs)))`,
    ),
    reply(
      "Retry code is spread over client.ts, retry.ts, headers.ts, the job queue and the docs. The client is where the 429 is detected, so I'll read it whole.",
      `(def client-src (tool/read-file {:path "src/net/client.ts"}))
(println client-src)`,
    ),
    reply(
      "The client wraps each request in withRetry and turns a 429 into a RateLimited error carrying the parsed Retry-After. I'll find where withRetry is defined.",
      `(def with-retry-hits (tool/search {:query "function withRetry"}))
(doseq [h with-retry-hits] (println (:path h) (:line h) (:text h)))`,
    ),
    reply(
      "It is in src/net/retry.ts. Let me read that file completely, since it will contain the loop and the policy.",
      `(def retry-src (tool/read-file {:path "src/net/retry.ts"}))
(println retry-src)`,
    ),
    reply(
      "withRetry uses e.retryAfterMs when the server sent Retry-After, and otherwise computeBackoff(attempt, policy). The default policy has 5 attempts, base 200 ms and max 20000 ms. I'll record those numbers and then look for computeBackoff.",
      `(def policy "DEFAULT_RETRY as read in retry.ts" {:attempts 5 :base-ms 200 :max-ms 20000})
(def backoff-hits (tool/search {:query "computeBackoff"}))
(doseq [h backoff-hits] (println (:path h) (:line h) (:text h)))`,
    ),
    reply(
      "computeBackoff is defined in src/net/backoff.ts. I'll read it to see the formula.",
      `(def backoff-src (tool/read-file {:path "src/net/backoff.ts"}))
(println backoff-src)`,
    ),
    reply(
      "The cap grows exponentially, baseMs * 2^(attempt-1) up to maxMs, and the wait is a random value between 0 and the cap: full jitter. Before concluding, I want to make sure no other code path retries HTTP 429s, for example the job queue mentioned in the docs.",
      `(def queue-src (tool/read-file {:path "src/jobs/queue.ts"}))
(println queue-src)`,
    ),
    reply(
      "The queue retries jobs, not HTTP requests, so it is not part of the answer. Let me check how Retry-After is parsed, to describe the case where the header is present correctly.",
      `(def headers-src (tool/read-file {:path "src/net/headers.ts"}))
(println headers-src)`,
    ),
    reply(
      "Retry-After is accepted as seconds or as an HTTP date. I'll also search for 'backoff' more broadly, in case there is a second implementation somewhere.",
      `(def backoff-any (tool/search {:query "backoff"}))
(doseq [h backoff-any] (println (:path h) (:line h) (:text h)))`,
    ),
    reply(
      "Only backoff.ts, retry.ts and the docs mention backoff. I'll look at the tests to confirm the attempt count.",
      `(def tests (tool/search {:query "attempts"}))
(doseq [h tests] (println (:path h) (:line h) (:text h)))`,
    ),
    reply(
      "The test 'gives up after 5 attempts' matches DEFAULT_RETRY. One more check: whether any caller passes a custom retry policy to the client.",
      `(def policy-uses (tool/search {:query "opts.retry"}))
(def client-options (tool/search {:query "ClientOptions"}))
(println "policy uses:" (count policy-uses) "ClientOptions mentions:" (count client-options))
(doseq [h (concat policy-uses client-options)] (println (:path h) (:line h) (:text h)))`,
    ),
    reply(
      "Callers can pass their own policy through ClientOptions, but nothing in the repository constructs one, so the defaults apply. Let me read the docs page to make sure the description matches the code.",
      `(def docs (tool/read-file {:path "docs/retries.md"}))
(println docs)`,
    ),
    reply(
      "The docs agree. Let me double check the errors file, to be sure RateLimited is the only 429 error type and what ServerError covers.",
      `(def errors-src (tool/read-file {:path "src/net/errors.ts"}))
(println errors-src)`,
    ),
    reply(
      "I have the whole chain: client.ts detects 429, retry.ts decides the wait in withRetry, backoff.ts computes the jittered exponential wait. I'll assemble the answer and print it once before returning.",
      `(def answer {:file "src/net/retry.ts" :function "withRetry"
             :strategy "Retry-After when present (seconds or HTTP date), otherwise computeBackoff in src/net/backoff.ts: full jitter, random wait between 0 and min(maxMs, baseMs * 2^(attempt-1))"
             :attempts (:attempts policy) :base-ms (:base-ms policy) :max-ms (:max-ms policy)})
(println answer)`,
    ),
    reply("The answer is complete.", "(return answer)"),
  ],
};
