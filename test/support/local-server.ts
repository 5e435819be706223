// A fake HTTP server on 127.0.0.1 for one test file: listening before its tests, its connections
// closed and its script reset after each test (a test that leaves a request hanging can't hold
// the next), closed after them all.
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll } from "vitest";

export function localServer(handle: RequestListener, hooks: { listening: (origin: string) => void; reset: () => void }): void {
  let server: Server;
  beforeAll(async () => {
    server = createServer(handle);
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
