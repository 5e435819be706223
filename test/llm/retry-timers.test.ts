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

  it("the SDKs' backstop timeout stays within a timer", () => {
    expect(sdkBackstopMs(DAYS_30)).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(sdkBackstopMs(1000)).toBe(7000);
  });
});
