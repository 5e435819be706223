// Two requests on one conversation that arrive within one millisecond: the one that arrived later
// keeps the turn, whichever reply finishes last.
import { afterEach, describe, expect, it, vi } from "vitest";
import { TurnClock } from "../../src/proxy/context.js";
import { rig, stored, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

describe("turn order within one millisecond", { timeout: 60_000 }, () => {
  it("keeps the later request's turn when the earlier one's reply finishes last", async () => {
    // A clock that does not move: every request arrives in the same millisecond.
    r = await rig({ proxy: { now: () => 1_700_000_000_000 } });
    const x = r;
    const first = [{ role: "user" as const, content: "first question" }];
    const later = [...first, { role: "assistant" as const, content: "an answer" }, { role: "user" as const, content: "second question" }];
    const held = x.client.chat.completions.create({ model: "fake-model", messages: first }, { headers: { "x-conversation-id": "tie", "x-fake-mode": "hold" } });
    await expect.poll(() => x.upstream.held, { timeout: 10_000 }).toBe(1);
    await x.client.chat.completions.create({ model: "fake-model", messages: later }, { headers: { "x-conversation-id": "tie" } });
    expect((await stored(x.proxy.context.store, "tie"))?.messageCount).toBe(later.length);
    x.upstream.release();
    await held;
    // Before: 1, the earlier request's history written over the later one's (a tie went to the last to finish).
    expect((await stored(x.proxy.context.store, "tie"))?.messageCount).toBe(later.length);
  });
});

describe("TurnClock", () => {
  it("stamps a conversation's arrivals in order past the turn read, and forgets stamps the clock has passed", () => {
    let now = 1_000;
    const clock = new TurnClock(() => now);
    expect(clock.arrive("a", undefined)).toBe(1_000);
    expect(clock.arrive("a", undefined)).toBe(1_001);
    // A replica behind the one that stamped the turn read: past that turn, then in arrival order.
    expect(clock.arrive("b", 5_000)).toBe(5_001);
    expect(clock.arrive("b", 5_000)).toBe(5_002);
    for (let i = 0; i < TurnClock.MIN_PRUNE; i++) clock.arrive(`c${i}`, undefined);
    now = 2_000;
    for (let i = 0; i < TurnClock.MIN_PRUNE; i++) clock.arrive(`d${i}`, undefined);
    // Pruned once the map doubled: "b"'s stamps, still ahead of the clock, and the "d"s are kept;
    // "a" and the "c"s, which the clock has passed, are gone.
    expect(clock.size).toBe(1 + TurnClock.MIN_PRUNE);
    expect(clock.arrive("b", 5_000)).toBe(5_003);
  });

  it("does not scan its stamps on every arrival while they stay ahead of a clock that is behind", () => {
    const clock = new TurnClock(() => 0);
    const scans = vi.spyOn(Map.prototype, Symbol.iterator);
    try {
      for (let i = 0; i < 20_000; i++) clock.arrive(`id${i}`, 1_000_000);
      // Before: a scan of the whole map on every arrival from the 1,024th on (18,977 scans).
      expect(scans.mock.calls.length).toBeLessThanOrEqual(Math.ceil(Math.log2(20_000 / TurnClock.MIN_PRUNE)) + 1);
    } finally {
      scans.mockRestore();
    }
    expect(clock.size).toBe(20_000);
  });
});
