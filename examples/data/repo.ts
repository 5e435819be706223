// A small source tree for the code-search example: an HTTP client with its retry policy
// split across files, and a few files that mention "retry" without computing anything.

export const repo: Readonly<Record<string, string>> = {
  "src/http/client.ts": `import { withRetry } from "./retry.js";
import { parseBody } from "./body.js";

export interface RequestOptions {
  method: string;
  url: string;
  body?: unknown;
  /** Attempts including the first; see retry.ts for the delays. */
  retries?: number;
}

export async function request(opts: RequestOptions): Promise<unknown> {
  return withRetry(() => send(opts), opts.retries ?? 3);
}

async function send(opts: RequestOptions): Promise<unknown> {
  const res = await fetch(opts.url, { method: opts.method, body: JSON.stringify(opts.body) });
  if (res.status >= 500) throw new RetryableError(res.status);
  return parseBody(res);
}

export class RetryableError extends Error {
  constructor(readonly status: number) {
    super(\`server error \${status}\`);
  }
}
`,
  "src/http/retry.ts": `import { RetryableError } from "./client.js";
import { backoffDelay } from "./backoff.js";

/** Runs fn, retrying retryable failures with backoff. */
export async function withRetry<T>(fn: () => Promise<T>, attempts: number): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof RetryableError) || attempt >= attempts) throw e;
      await new Promise((r) => setTimeout(r, backoffDelay(attempt)));
    }
  }
}
`,
  "src/http/backoff.ts": `// Exponential backoff with full jitter, capped.
export const BASE_DELAY_MS = 250;
export const MAX_DELAY_MS = 8000;

/** Delay before retry number \`attempt\` (1-based): base * 2^(attempt-1), capped, with jitter. */
export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const exp = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** (attempt - 1));
  return Math.round(exp * random());
}
`,
  "src/http/body.ts": `export async function parseBody(res: Response): Promise<unknown> {
  const type = res.headers.get("content-type") ?? "";
  return type.includes("json") ? res.json() : res.text();
}
`,
  "src/jobs/queue.ts": `// Background jobs. Failed jobs are retried by the scheduler, not here.
export interface Job {
  id: string;
  run(): Promise<void>;
  retryCount: number;
}

export function requeue(job: Job): Job {
  return { ...job, retryCount: job.retryCount + 1 };
}
`,
  "src/jobs/scheduler.ts": `import type { Job } from "./queue.js";

const RETRY_LIMIT = 5;
/** Fixed pause between job retries; jobs do not use the HTTP backoff. */
const RETRY_PAUSE_MS = 60_000;

export function shouldRetry(job: Job): boolean {
  return job.retryCount < RETRY_LIMIT;
}

export function nextRunAt(job: Job, now: number): number {
  return now + RETRY_PAUSE_MS;
}
`,
  "docs/http.md": `# HTTP client

Requests are retried on 5xx responses. The retry delay doubles each time (see the backoff module).
Configure the number of attempts with the \`retries\` option.
`,
  "test/http/retry.test.ts": `import { backoffDelay } from "../../src/http/backoff.js";

test("delays double and stop growing", () => {
  const noJitter = () => 1;
  expect(backoffDelay(1, noJitter)).toBe(250);
  expect(backoffDelay(2, noJitter)).toBe(500);
  expect(backoffDelay(10, noJitter)).toBe(8000);
});
`,
};
