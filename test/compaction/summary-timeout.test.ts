// A summarizer's model client that never answers (a custom Llm, a dead connection) held
// compact() for ever when the caller passed no signal; the summary call has its own bound.
import { describe, expect, it } from "vitest";
import { compact } from "../../src/compaction/compact.js";
import type { Llm } from "../../src/llm/types.js";
import { chat } from "./conversations.js";

describe("the LLM summary's time bound", () => {
  const seen: Array<AbortSignal | undefined> = [];
  // Ignores the signal it is given, as a careless client would.
  const silent: Llm = {
    name: "silent",
    complete: (request) => {
      seen.push(request.signal);
      return new Promise(() => undefined);
    },
  };

  it("gives up on a client that never answers after summaryTimeoutMs: a failed summary, the history unchanged", async () => {
    const messages = chat(8);
    const r = await compact(messages, { name: "rolling-summary", options: { summaryTimeoutMs: 20, maxAttempts: 1 } }, { llm: silent, force: true });
    expect(r.messages).toEqual(messages);
    const failed = r.events.filter((e) => e.kind === "summary_failed");
    expect(failed).toHaveLength(1);
    expect(failed[0].detail).toContain("no reply within 20 ms");
    // The client was given a signal that fired, so one that listens stops too.
    expect(seen.at(-1)?.aborted).toBe(true);
  }, 20_000);

  it("stops at the caller's abort even when the client ignores it", async () => {
    const ctl = new AbortController();
    const pending = compact(chat(8), "rolling-summary", { llm: silent, force: true, signal: ctl.signal });
    ctl.abort();
    await expect(pending).rejects.toThrow(/abort/i);
  }, 20_000);
});

describe("the LLM goal detector's time bound", () => {
  // It asked with no bound of its own: a client that never answers held goal-boundary's compact() for ever.
  const silent: Llm = { name: "silent", complete: () => new Promise(() => undefined) };

  it("gives up after summaryTimeoutMs, and the goal continues as on any detector error", async () => {
    const messages = chat(8);
    const r = await compact(messages, { name: "goal-boundary", options: { detector: "llm", summarizer: "facts", summaryTimeoutMs: 20 } }, { llm: silent });
    expect(r.messages).toEqual(messages);
    expect(r.events.some((e) => e.kind === "goal_boundary")).toBe(false);
  }, 20_000);

  it("stops at the caller's abort even when the client ignores it", async () => {
    const ctl = new AbortController();
    const pending = compact(chat(8), { name: "goal-boundary", options: { detector: "llm" } }, { llm: silent, signal: ctl.signal });
    ctl.abort();
    await expect(pending).rejects.toThrow(/abort/i);
  }, 20_000);
});
