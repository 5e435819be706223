// Timeouts past what a timer holds: Node fires a setTimeout of more than 2^31 - 1 ms after 1 ms,
// so a "no timeout to speak of" (30 days) failed every attempt at once.
import { describe, expect, it } from "vitest";
import { retrySettings, sdkBackstopMs, withRetries } from "../../src/llm/retry.js";
import { LlmError } from "../../src/llm/errors.js";

const DAYS_30 = 30 * 24 * 3600 * 1000;

describe("timeouts longer than a timer holds", () => {
  it("an attempt with a 30-day timeout is not cut after 1 ms", async () => {
    const s = retrySettings("fake", { timeoutMs: DAYS_30, maxRetries: 0 });
    // The reply comes after a 20 ms timer: an overflowed 1 ms timeout would fire first.
    const send = (signal: AbortSignal) =>
      new Promise<{ content: string }>((resolve, reject) => {
        const t = setTimeout(() => resolve({ content: "ok" }), 20);
        signal.addEventListener("abort", () => (clearTimeout(t), reject(signal.reason as Error)), { once: true });
      });
    const r = await withRetries("fake", s, { messages: [] }, send, (e) => (e instanceof LlmError ? e : new LlmError("malformed", String(e))));
    expect(r.content).toBe("ok");
  });

  // A cap past a timer ("no cap to speak of") let a server's wait of weeks through to a timer that fired after 1 ms: it is waited.
  it("a server's wait past what a timer holds is not retried after 1 ms, whatever retryMaxMs says", async () => {
    const s = retrySettings("fake", { retryMaxMs: 10 * DAYS_30, maxRetries: 1 });
    let sent = 0;
    const send = () => {
      sent++;
      return Promise.reject(new LlmError("rate_limit", "fake: HTTP 429: slow down", { status: 429, retryAfterMs: DAYS_30 }));
    };
    const ctl = new AbortController();
    const run = withRetries("fake", s, { messages: [], signal: ctl.signal }, send, (e) => e as LlmError).then(
      () => "answered",
      (e: unknown) => (e as LlmError).kind,
    );
    // It waits: nothing more is sent until the abort ends the wait.
    const early = await Promise.race([run, new Promise<string>((resolve) => setTimeout(() => resolve("waiting"), 100))]);
    ctl.abort();
    expect([early, await run, sent]).toEqual(["waiting", "aborted", 1]);
  });

  // A logging hook, like the agent's onEvent: a logger that throws (a closed stream) must not end the request.
  it("a retry goes ahead when onRetry throws", async () => {
    let sent = 0;
    const s = retrySettings("fake", { retryBaseMs: 1, onRetry: () => { throw new Error("log stream closed"); } });
    const send = () => (++sent === 1 ? Promise.reject(new LlmError("server", "fake: HTTP 503: busy", { status: 503 })) : Promise.resolve({ content: "ok" }));
    const r = await withRetries("fake", s, { messages: [] }, send, (e) => e as LlmError);
    expect([r.content, sent]).toEqual(["ok", 2]);
  });

  it("the SDKs' backstop timeout stays within a timer", () => {
    expect(sdkBackstopMs(DAYS_30)).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(sdkBackstopMs(1000)).toBe(7000);
  });
});
