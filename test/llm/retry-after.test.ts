// The one reading of a server's requested delay, shared by the LLM clients and the proxy: both
// used to parse it, one with parseFloat ("12abc" waited 12 s) and one with Number (it did not).
import { describe, expect, it } from "vitest";
import { retryAfterMs, statusError } from "../../src/llm/retry.js";
import { upstreamRetryAfter } from "../../src/proxy/retry.js";

const NOW = Date.parse("2026-11-25T12:00:00Z");
const cases: Array<[Record<string, string>, number | undefined]> = [
  [{ "retry-after-ms": "250" }, 250],
  [{ "retry-after-ms": "1.5" }, 1.5],
  [{ "retry-after": "3" }, 3000],
  [{ "retry-after": " 3 " }, 3000],
  [{ "retry-after": "0" }, 0],
  [{ "retry-after": "Wed, 25 Nov 2026 12:00:10 GMT" }, 10_000],
  [{ "retry-after": "Wed, 25 Nov 2026 11:59:00 GMT" }, 0],
  [{ "retry-after-ms": "soon", "retry-after": "2" }, 2000],
  [{ "retry-after-ms": "-5", "retry-after": "2" }, 2000],
  // More digits than a double holds: as long as can be said, never Infinity ("retry after Infinity s").
  [{ "retry-after": "9".repeat(400) }, Number.MAX_SAFE_INTEGER],
  [{ "retry-after-ms": "9".repeat(400) }, Number.MAX_SAFE_INTEGER],
  // Not a number of seconds, not a date: no request to wait.
  [{ "retry-after": "12abc" }, undefined],
  [{ "retry-after": "-3" }, undefined],
  [{ "retry-after": "" }, undefined],
  [{ "retry-after": "   " }, undefined],
  [{ "retry-after": "Infinity" }, undefined],
  [{ "retry-after-ms": "" }, undefined],
  [{}, undefined],
  // The other two date forms HTTP allows (RFC 850, asctime).
  [{ "retry-after": "Wednesday, 25-Nov-26 12:00:20 GMT" }, 20_000],
  [{ "retry-after": "Wed Nov 25 12:00:30 2026" }, 30_000],
  // Text that is no HTTP date, which Date.parse reads all the same as a day of 2001 (a wait of
  // 0: every retry at once, with no backoff), or as the time now: no request to wait.
  [{ "retry-after": "x 5" }, undefined],
  [{ "retry-after": "May 5" }, undefined],
  [{ "retry-after": "Mon 1" }, undefined],
];

describe("retry-after", () => {
  it.each(cases)("%j -> %s", (headers, want) => {
    expect(retryAfterMs((name) => headers[name], NOW)).toBe(want);
    // The proxy reads Node's header object (lower-case names, repeated headers as arrays).
    expect(upstreamRetryAfter(headers, NOW)).toBe(want);
  });

  // HTTP dates are in GMT, the asctime form's too, which names no zone: Date.parse read it in the
  // host's time zone, hours off (a wait of 30 s read as 5 h, beyond any cap, in New York).
  it.each(["America/New_York", "Asia/Tokyo", "UTC"])("reads each date form as GMT in the time zone %s", (zone) => {
    const saved = process.env.TZ;
    process.env.TZ = zone;
    try {
      for (const date of ["Wed, 25 Nov 2026 12:00:30 GMT", "Wednesday, 25-Nov-26 12:00:30 GMT", "Wed Nov 25 12:00:30 2026", "Wed Nov 25 12:00:30 2026 GMT", "Wed, 25 Nov 2026 21:00:30 +0900"]) {
        expect([date, retryAfterMs((name) => (name === "retry-after" ? date : undefined), NOW)]).toEqual([date, 30_000]);
      }
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it("an LLM client's HTTP error carries it", () => {
    const e = statusError("fake", 429, "slow down", new Headers({ "retry-after": "12abc" }));
    expect(e.details.retryAfterMs).toBeUndefined();
    expect(statusError("fake", 429, "slow down", new Headers({ "retry-after": "2" })).details.retryAfterMs).toBe(2000);
  });
});
