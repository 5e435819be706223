// A fake HTTP server on 127.0.0.1 for one test file: listening before its tests, its connections
// closed and its script reset after each test (a test that leaves a request hanging can't hold
// the next), closed after them all. The handler gets each request with its whole body read.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";

/** Answers one request, its body read to the end as UTF-8 text. */
export type BodyHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

export function localServer(handle: BodyHandler, hooks: { listening: (origin: string) => void; reset: () => void }): void {
  let server: Server;
  beforeAll(async () => {
    server = createServer((req, res) => {
      // No keep-alive: a pooled socket that afterEach closed would fail the next test as a connection error.
      res.shouldKeepAlive = false;
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (chunk: string) => (body += chunk));
      req.on("end", () => handle(req, res, body));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    hooks.listening(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterEach(async () => {
    server.closeAllConnections();
    hooks.reset();
    // A socket can still sit in the client's pool (a request aborted before it was written). The
    // close reaches the client's side at once on loopback; one poll phase of the event loop lets
    // the pool see it, before the next test sends on a dead socket and reads a connection error.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
}
