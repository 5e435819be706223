// A drain that runs out cuts the streams still going: what their requests learned must still be
// written before the store closes.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openStore } from "../../src/proxy/store.js";
import { rig, stored, tempDir, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe("a stream cut by the drain timeout", { timeout: 60_000 }, () => {
  it("keeps its conversation's record update in the store", async () => {
    const db = join(tempDir(), "p.db");
    r = await rig({ proxy: { db } });
    const x = r;
    const messages = [
      { role: "system" as const, content: "be brief" },
      { role: "user" as const, content: "a question" },
    ];
    const stream = await x.client.chat.completions.create({ model: "fake-model", messages, stream: true }, { headers: { "x-conversation-id": "cut", "x-fake-mode": "hold" } });
    const reading = (async () => {
      try {
        for await (const _ of stream) void _;
      } catch {
        // Cut by the drain.
      }
    })();
    await expect.poll(() => x.upstream.held, { timeout: 10_000 }).toBe(1);
    expect(await x.proxy.drain(0)).toBe(false);
    await reading;
    const store = await openStore(db);
    try {
      const record = await stored(store, "cut");
      expect(record?.messageCount).toBe(2);
      expect(x.logs.filter((e) => e.event === "store_error")).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
