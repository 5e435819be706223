// An unknown virtual key makes the proxy look at the config file again (another proxy sharing it
// may have issued the key since): each such request read the whole file, so anyone who could reach
// the proxy made it read the file once per request, on the event loop.
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startProxy } from "../../src/proxy/index.js";
import { rig, type Rig } from "./setup.js";

const reads = vi.hoisted(() => ({ configFile: 0 }));
vi.mock("../../src/json/text-input.js", async (original) => {
  const actual = await original<typeof import("../../src/json/text-input.js")>();
  return {
    ...actual,
    readText: (...args: Parameters<typeof actual.readText>) => {
      if (args[0].endsWith("config.json")) reads.configFile++;
      return actual.readText(...args);
    },
  };
});

let open: Rig | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

describe("requests with an unknown virtual key", () => {
  it("read the config file only when it changed, and still honour a key another proxy issued", async () => {
    open = await rig({ config: {}, proxy: { adminToken: "admin", watchIntervalMs: 3_600_000 } });
    const x = open;
    const unknown = { authorization: "Bearer ptc-vk-0123456789abcdef0123456789abcdef" };
    const before = reads.configFile;
    for (let i = 0; i < 20; i++) expect((await fetch(`${x.proxy.url}/v1/models`, { headers: unknown })).status).toBe(401);
    // Before: 20 reads, one per request.
    expect(reads.configFile - before).toBeLessThanOrEqual(1);
    const other = await startProxy({ upstream: x.upstream.url, port: 0, logger: () => {}, db: ":memory:", configFile: join(x.dir, "config.json"), adminToken: "admin", watchIntervalMs: 3_600_000 });
    try {
      const issued = await fetch(`${other.url}/ext/context_compaction/keys`, { method: "POST", headers: { authorization: "Bearer admin" }, body: JSON.stringify({ name: "alpha" }) });
      const { key } = (await issued.json()) as { key: string };
      expect((await fetch(`${x.proxy.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});
