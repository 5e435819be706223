// A store, a strategy or a driver may reject with anything. The proxy logs what a rejection says
// with the one reader of thrown values (errorText): a value String() cannot convert
// (no prototype, a throwing toString, a revoked Proxy) is logged as unreadable, never rethrown
// from the handler that was to report it.
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { sendStoreUnavailable } from "../../src/proxy/errors.js";

const revoked = Proxy.revocable({}, {});
revoked.revoke();
const UNREADABLE: Array<[string, unknown]> = [
  ["no prototype", Object.create(null)],
  ["a throwing toString", { toString: () => { throw new Error("sk-secret"); } }],
  ["a revoked Proxy", revoked.proxy],
];

describe("proxy: a rejection that cannot be read", () => {
  it.each(UNREADABLE)("is logged as unreadable and answered 503 (%s)", (_, e) => {
    const logged: Array<Record<string, unknown>> = [];
    let status = 0;
    const res = { headersSent: false, writeHead: (s: number) => void (status = s), end: () => undefined } as unknown as ServerResponse;
    sendStoreUnavailable(res, (entry) => void logged.push(entry), e, "t1");
    expect(status).toBe(503);
    expect(logged).toEqual([{ event: "store_error", tenant: "t1", error: "a thrown value that cannot be read" }]);
  });
});
