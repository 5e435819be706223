// A fake HTTP server on 127.0.0.1 for one test file: listening before its tests, its connections
// closed and its script reset after each test (a test that leaves a request hanging can't hold
// the next), closed after them all. The handler gets each request with its whole body read.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";

/** Answers one request, its body read to the end as UTF-8 text. */
export type BodyHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/**
 * `keepAlive` leaves the server's default on: test/agent/llm.test.ts has always run so, and its
 * half-sent-body timeout test reads a connection error now and then without it.
 */
export function localServer(handle: BodyHandler, hooks: { listening: (origin: string) => void; reset: () => void; keepAlive?: boolean }): void {
  let server: Server;
  beforeAll(async () => {
    server = createServer((req, res) => {
      // No keep-alive: a pooled socket that afterEach closed would fail the next test as a connection error.
      if (hooks.keepAlive !== true) res.shouldKeepAlive = false;
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => handle(req, res, body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    hooks.listening(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterEach(() => {
    server.closeAllConnections();
    hooks.reset();
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}
