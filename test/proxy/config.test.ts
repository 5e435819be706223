// The settings' schema: every value it accepts must mean what it says once in use.
import { describe, expect, it } from "vitest";
import { MAX_TIMER_MS } from "../../src/lisp/index.js";
import { parseConfig } from "../../src/proxy/config.js";

describe("a setting in milliseconds that a timer waits for", () => {
  // Past the longest timer Node keeps, setTimeout fires after 1 ms (with a TimeoutOverflowWarning
  // on stderr): a drainTimeoutMs of 99999999999 cut every in-flight request at once on SIGTERM,
  // as --drain-timeout did before it was bounded.
  it.each([
    [{ drainTimeoutMs: MAX_TIMER_MS + 1 }, "drainTimeoutMs"],
    [{ upstreamTimeoutMs: MAX_TIMER_MS + 1 }, "upstreamTimeoutMs"],
    [{ retries: { maxDelayMs: MAX_TIMER_MS + 1 } }, "retries.maxDelayMs"],
    [{ retries: { baseDelayMs: MAX_TIMER_MS + 1 } }, "retries.baseDelayMs"],
    [{ compaction: { deadlineMs: MAX_TIMER_MS + 1 } }, "compaction.deadlineMs"],
    [{ compaction: { summarizer: { timeoutMs: MAX_TIMER_MS + 1 } } }, "compaction.summarizer.timeoutMs"],
  ])("is refused past the longest timer: %j", (raw, path) => {
    const parsed = parseConfig(raw);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).toContain(path);
      expect(parsed.error).toContain(String(MAX_TIMER_MS));
    }
  });
  it("is taken up to the longest timer", () => {
    const parsed = parseConfig({ drainTimeoutMs: MAX_TIMER_MS, upstreamTimeoutMs: MAX_TIMER_MS, retries: { maxDelayMs: MAX_TIMER_MS, baseDelayMs: MAX_TIMER_MS }, compaction: { deadlineMs: MAX_TIMER_MS, summarizer: { timeoutMs: MAX_TIMER_MS } } });
    expect(parsed.ok).toBe(true);
  });
});
