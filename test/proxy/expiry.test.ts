// Expiry as the running proxy schedules it: one run at a time, however long a run takes (a file
// locked by another process makes each batch wait up to the busy timeout).
import { afterEach, describe, expect, it, vi } from "vitest";
import { SqliteStore } from "../../src/proxy/sqlite-store.js";
import { rig, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await r?.close();
  r = undefined;
});

describe("proxy expiry schedule", () => {
  it("starts no run of expiry while the last one still runs", async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    vi.spyOn(SqliteStore.prototype, "expire").mockImplementation(async () => {
      calls++;
      running++;
      most = Math.max(most, running);
      // The run at start answers at once; the next one is slow.
      if (calls > 1) await held;
      running--;
      return 0;
    });
    // idleTtlSeconds 1: a run every 100 ms.
    r = await rig({ config: { idleTtlSeconds: 1 } });
    await vi.waitFor(() => expect(calls).toBe(2), { timeout: 10_000, interval: 10 });
    // Ten of the schedule's periods pass, counted by a timer of the same period started after it.
    await new Promise<void>((resolve) => {
      let ticks = 0;
      const t = setInterval(() => {
        if (++ticks < 10) return;
        clearInterval(t);
        resolve();
      }, 100);
    });
    expect(most).toBe(1);
    expect(calls).toBe(2);
    release();
    // The schedule goes on once the slow run ends.
    await vi.waitFor(() => expect(calls).toBeGreaterThan(2), { timeout: 10_000, interval: 10 });
    expect(most).toBe(1);
  });
});
