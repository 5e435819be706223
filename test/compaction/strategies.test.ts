import { describe, expect, expectTypeOf, it } from "vitest";
import {
  budgetUsage,
  compact,
  contextLimit,
  createStrategy,
  createTrigger,
  estimatePromptTokens,
  extractiveSummary,
  FALLBACK_CONTEXT_LIMIT,
  heuristicGoalDetector,
  payback,
  providerPrice,
  recapOptionsFromEnv,
  summaryProblem,
} from "../../src/compaction/index.js";
import { requestPrice, sharedPrefix } from "../../src/compaction/measure.js";
import { DEFAULT_PRICES, FALLBACK_MODEL_PRICE, modelPrice } from "../../src/compaction/prices.js";
import { knownNamesOf, type Conversation, type Json, type KnownNames } from "../../src/compaction/types.js";
import { roleOrderProblems } from "../../src/compaction/messages.js";
import { promptTokens, TOKENS_PER_REPLY } from "../../src/compaction/tokens.js";
import { scriptedLlm } from "../../src/llm/scripted.js";
import { LlmError } from "../../src/llm/errors.js";
import { messageText } from "../../src/llm/messages.js";
import type { ChatMessage, Llm } from "../../src/llm/types.js";
import { assistant, call, chat, result, sys, user } from "./conversations.js";

const summaryReply = (text: string): string => JSON.stringify({ ConversationSummary: text });

describe("recap", () => {
  it("compacts the seed's example: 7 assistant messages, 3 preserved, one batch of 4", async () => {
    const messages = chat(7);
    const r = await compact(messages, "recap");
    // Users between compacted assistant messages stay, so the roles still alternate.
    const recaps = r.messages.filter((m) => typeof m.content === "string" && /^recap - [^\n]*$/.test(m.content));
    expect(recaps.map((m) => m.content)).toEqual([1, 2, 3, 4].map((i) => `recap - looked up item ${i}`));
    expect(r.messages.slice(-6)).toEqual(messages.slice(-6));
    expect(r.stats.compressionRatio).toBeLessThan(1);
    expect(roleOrderProblems(r.messages)).toEqual([]);
  });

  // Merging a recap line into the next reply rebuilt that reply as { role, content }: its name,
  // audio and refusal were dropped; with tool calls it kept them, but its refusal was also copied
  // into the content, so the model was shown (and billed for) the refusal twice.
  it("keeps the fields of a reply a recap line is merged into, and its refusal once", async () => {
    const messages = [sys("s"), user("go"), assistant("recap - step one\ndetails"), assistant("recap - step two\nmore")];
    const named = { role: "assistant", content: "I can't do that part.", name: "planner", refusal: "I can't help with that.", audio: { id: "audio_1" } } as ChatMessage;
    const stepping = { ...call("c9", "lookup", '{"q":9}', "Looking."), refusal: "Not that one." } as ChatMessage;
    for (const kept of [named, stepping]) {
      const all = [...messages, kept, ...(kept.tool_calls ? [result("c9", "ok")] : [])];
      const r = await compact(all, { name: "recap", options: { minPreservedAssistantMessages: 0, batchSize: 1 } }, { force: true });
      const merged = r.messages.find((m) => m.role === "assistant" && messageText(m).includes("recap - step two"));
      expect(merged).toBeDefined();
      const text = messageText(merged as ChatMessage);
      expect(text.split(String((kept as { refusal?: unknown }).refusal)).length - 1).toBe(1);
      expect(text.endsWith(`\n${messageText(kept)}`)).toBe(true);
      const { content: _c, ...fields } = kept;
      expect(merged).toMatchObject(fields);
    }
  });

  it("waits for a full batch and keeps messages without a recap line in full", async () => {
    expect((await compact(chat(6), "recap")).messages).toEqual(chat(6));
    const messages = chat(7);
    messages[4] = assistant("no recap here\njust text");
    const r = await compact(messages, "recap");
    expect(r.messages).toContain(messages[4]);
  });

  it("reports no compaction when no compacted message has a recap line (recorded transcripts)", async () => {
    const messages = chat(8).map((m) => (m.role === "assistant" && m.tool_calls === undefined ? assistant(messageText(m).replace(/^recap - .*\n?/m, "")) : m));
    const r = await compact(messages, { name: "recap", options: { minPreservedAssistantMessages: 1, batchSize: 1 } });
    expect(r.messages).toEqual(messages);
    expect(r.events.filter((e) => e.kind === "compacted")).toEqual([]);
  });

  it("keeps a follow-up user message sent before the first reply", async () => {
    // The user adds a constraint before the assistant answers: it is the user's words, not a reply to cut to its recap line.
    const messages = [sys("s"), user("Plan my trip."), user("Also: budget 300 EUR, answer in French."), ...chat(7).slice(2)];
    const r = await compact(messages, "recap");
    expect(r.messages).toContain(messages[2]);
    expect(r.stats.compressionRatio).toBeLessThan(1);
    // Without recap lines nothing is compacted, so nothing is sent otherwise.
    const plain = messages.map((m) => (m.role === "assistant" ? assistant(messageText(m).replace(/^recap - .*\n?/m, "")) : m));
    const p = await compact(plain, "recap");
    expect(p.messages).toEqual(plain);
    expect(p.events.filter((e) => e.kind === "compacted")).toEqual([]);
  });

  it("drops a compacted message's tool calls together with their results", async () => {
    const messages = [user("task"), call("a", "read", "{}", "recap - read the file"), result("a", "contents"), assistant("recap - done\nmore"), user("next"), assistant("x"), user("more"), assistant("y")];
    const r = await compact(messages, { name: "recap", options: { minPreservedAssistantMessages: 2, batchSize: 2 } });
    expect(r.messages.some((m) => m.role === "tool")).toBe(false);
    expect(r.messages[1]).toEqual({ role: "assistant", content: "recap - read the file\nrecap - done" });
    expect(roleOrderProblems(r.messages)).toEqual([]);
  });

  it("keeps the roles alternating when the message after a compacted tool step is another tool step", async () => {
    // An agent loop: every reply calls a tool, so the next message after a compacted step (its results dropped) is an assistant with tool calls.
    const output = Array.from({ length: 30 }, (_, i) => `line ${i} of the listing`).join("\n");
    const messages = [user("task")];
    for (const id of ["a", "b", "c"]) messages.push(call(id, "bash", "{}", `recap - step ${id}\n${output}`), result(id, output));
    const r = await compact(messages, { name: "recap", options: { minPreservedAssistantMessages: 1, batchSize: 2 } });
    expect(r.stats.compressionRatio).toBeLessThan(1);
    expect(roleOrderProblems(r.messages)).toEqual([]);
    expect(r.messages.slice(-2)).toEqual([{ ...messages[5], content: `recap - step a\nrecap - step b\n${messages[5].content as string}` }, messages[6]]);
  });

  it("keeps the roles alternating and every result with its call when system messages sit among the tool steps", async () => {
    // Agent frameworks add notes between steps (the time, a reminder), or even between a call and its result.
    const output = Array.from({ length: 30 }, (_, i) => `line ${i} of the listing`).join("\n");
    const between = sys("Reminder: the time is 10:00.");
    const inside = sys("Note: the output below was truncated.");
    const messages = [sys("s"), user("task")];
    for (const id of ["a", "b", "c", "d"]) {
      messages.push(call(id, "bash", "{}", `recap - step ${id}\n${output}`));
      if (id === "b") messages.push(inside);
      messages.push(result(id, output));
      if (id === "a") messages.push(between);
    }
    expect(roleOrderProblems(messages)).toEqual([]);
    const r = await compact(messages, { name: "recap", options: { minPreservedAssistantMessages: 1, batchSize: 1 } });
    expect(r.stats.compressionRatio).toBeLessThan(1);
    expect(roleOrderProblems(r.messages)).toEqual([]);
    expect(r.messages).toContain(between);
    expect(r.messages).toContain(inside);
    expect(r.messages.filter((m) => m.role === "assistant").map((m) => messageText(m).split("\n").slice(0, 3).join("|"))).toEqual(["recap - step a|recap - step b|recap - step c"]);
  });

  it("reads the seed's environment variables", () => {
    expect(recapOptionsFromEnv({})).toEqual({ enabled: true, minPreservedAssistantMessages: 3, batchSize: 4 });
    expect(recapOptionsFromEnv({ LLM_COMPACTION_ENABLED: "false", LLM_COMPACTION_BATCH_SIZE: "2" })).toMatchObject({ enabled: false, batchSize: 2 });
    expect(() => recapOptionsFromEnv({ LLM_COMPACTION_BATCH_SIZE: "four" })).toThrow(/LLM_COMPACTION_BATCH_SIZE must be a whole number/);
    expect(() => recapOptionsFromEnv({ LLM_COMPACTION_BATCH_SIZE: "0" })).toThrow(/batchSize/);
    expect(() => recapOptionsFromEnv({ LLM_COMPACTION_ENABLED: "maybe" })).toThrow(/LLM_COMPACTION_ENABLED/);
  });
});

describe("rolling-summary", () => {
  it("folds rounds once compress + retain are unsummarized, and never summarizes a round twice", async () => {
    const llm = scriptedLlm([summaryReply("[done] items 1 and 2 priced"), summaryReply("[done] items 1 to 4 priced")]);
    const strategy = createStrategy("rolling-summary");
    const at = (n: number) => chat(n);
    let state = strategy.initialState();
    const r4 = await strategy.project({ messages: at(4) }, state, { llm });
    expect(r4.events).toEqual([]);
    const r5 = await strategy.project({ messages: at(5) }, r4.state, { llm });
    expect(r5.summarizer).toBe("llm");
    expect(r5.stats.llmCalls).toBe(1);
    expect(r5.messages[2].content).toMatch(/items 1 and 2 priced/);
    expect(r5.messages.slice(3)).toEqual(at(5).slice(-6));
    state = r5.state;
    const r6 = await strategy.project({ messages: at(6) }, state, { llm });
    expect(r6.stats.llmCalls).toBe(0);
    const r7 = await strategy.project({ messages: at(7) }, r6.state, { llm });
    expect(r7.stats.llmCalls).toBe(1);
    // The second summary call saw the first summary, and only rounds 3 and 4.
    const prompt = String(llm.requests[1].messages[0].content);
    expect(prompt).toContain("items 1 and 2 priced");
    expect(prompt).toContain("Request 3");
    expect(prompt).not.toContain("Request 2:");
  });

  it("falls back to the previous summary and full rounds on a bad reply, then opens the breaker", async () => {
    const llm = scriptedLlm(Array(20).fill("not json"));
    const strategy = createStrategy({ name: "rolling-summary", options: { maxFailures: 2, cooldown: 3, maxAttempts: 2 } });
    let state = strategy.initialState();
    const calls: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await strategy.project({ messages: chat(8) }, state, { llm });
      expect(r.messages).toEqual(chat(8));
      calls.push(r.stats.llmCalls);
      state = r.state;
    }
    expect(calls).toEqual([2, 2, 0, 0, 0, 2]);
  });

  // A span of a few short messages was sent to the summarizer although no summary could shrink the
  // prompt: each such request paid maxAttempts calls, whose 'not smaller' rejections counted toward
  // the breaker (a few small spans in a row paused the summaries of the large ones after them).
  it("sends no span to the summarizer that no summary could make the prompt smaller, and counts no failure for it", async () => {
    const tiny: ChatMessage[] = [sys("You are helpful."), user("ok"), assistant("Okay."), user("yes"), assistant("Okay.")];
    const llm = scriptedLlm(Array(4).fill(summaryReply("The user said ok and then yes; the assistant said okay.")));
    const strategy = createStrategy({ name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1, maxFailures: 1 } });
    const r = await strategy.project({ messages: tiny }, strategy.initialState(), { llm });
    expect(r.stats.llmCalls).toBe(0);
    expect(llm.requests).toHaveLength(0);
    expect(r.events).toEqual([{ kind: "skipped", messageIndex: 2, detail: "the span is too small for a summary to make the prompt smaller" }]);
    expect((r.state as { breaker: unknown }).breaker).toEqual({ failures: 0, skip: 0 });
    // The breaker stays closed, so the first span worth summarizing is summarized.
    const grown = [...tiny, ...chat(3).slice(1)];
    const next = await strategy.project({ messages: grown }, r.state, { llm });
    expect(next.events.map((e) => e.kind)).toEqual(["compacted"]);
    expect(next.stats.llmCalls).toBe(1);
  });

  it("counts a summarizer that rejects with no error at all (undefined, null) as a failed summary, not a crash", async () => {
    for (const reason of [undefined, null]) {
      const llm = { name: "bare", complete: () => Promise.reject(reason as unknown as Error) };
      const r = await compact(chat(8), { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } }, { llm });
      expect(r.messages).toEqual(chat(8));
      expect(r.events.filter((e) => e.kind === "summary_failed").map((e) => e.detail)).toEqual([`llm summary failed: ${String(reason)}`, `llm summary failed: ${String(reason)}`]);
    }
  });

  it("counts a summarizer that rejects with a value that cannot be read as a failed summary, not the host's TypeError", async () => {
    // String() of these threw out of compact(): "Cannot convert object to primitive value", or the
    // value's own error (with whatever it quoted).
    const unreadable = [Object.create(null) as object, { toString: () => { throw new Error("sk-secret"); } }, new Proxy({}, { get: () => { throw new Error("sk-secret"); } })];
    for (const reason of unreadable) {
      const llm = { name: "odd", complete: () => Promise.reject(reason as Error) };
      const r = await compact(chat(8), { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } }, { llm });
      expect(r.messages).toEqual(chat(8));
      expect(r.events.filter((e) => e.kind === "summary_failed").map((e) => e.detail)).toEqual(["llm summary failed: a thrown value that cannot be read", "llm summary failed: a thrown value that cannot be read"]);
    }
  });

  it("rejects a summary that names a variable that does not exist (code template)", async () => {
    const llm = scriptedLlm([summaryReply("computed `totals` from `orders`"), summaryReply("computed `orders`")]);
    const r = await compact(chat(5), { name: "rolling-summary", options: { template: "code" } }, { llm, records: { knownNames: ["orders"] } });
    expect(r.events.find((e) => e.kind === "summary_failed")?.detail).toMatch(/`totals`, which is not a known variable/);
    expect(r.messages[2].content).toMatch(/computed `orders`\nVariables: orders$/);
    expect(String(llm.requests[0].messages[0].content)).toContain("orders");
  });

  it("keeps the generic conversation free of interpreter fields: known names travel in the typed records", () => {
    // Checked by tsc (the test files are type-checked): a new interpreter-only field fails here.
    expectTypeOf<keyof Conversation>().toEqualTypeOf<"messages" | "model" | "tools" | "reservedOutputTokens" | "records" | "reportedPromptTokens">();
    expectTypeOf<Conversation<KnownNames>["records"]>().toEqualTypeOf<KnownNames | undefined>();
    expect(knownNamesOf({ knownNames: ["a"] })).toEqual(["a"]);
    expect(knownNamesOf({ knownNames: [1] })).toBeUndefined();
    expect(knownNamesOf({ system: "a PTC-Lisp view input" })).toBeUndefined();
  });

  it("bounds the summarizer's prompt on long spans", async () => {
    const long = [user("task")];
    for (let i = 0; i < 60; i++) long.push(assistant(`step ${i} `.repeat(400)), user(`go on ${i}`));
    long.push(assistant("last"));
    const llm = scriptedLlm([summaryReply("[done] sixty steps")]);
    await compact(long, "rolling-summary", { llm });
    expect(String(llm.requests[0].messages[0].content).length).toBeLessThan(80_000);
  });

  it("serves a repeated summary from its cache", async () => {
    const llm = scriptedLlm([summaryReply("[done] priced")]);
    const strategy = createStrategy("rolling-summary");
    const a = await strategy.project({ messages: chat(5) }, strategy.initialState(), { llm });
    const b = await strategy.project({ messages: chat(5) }, strategy.initialState(), { llm });
    expect([a.stats.llmCalls, b.stats.llmCalls]).toEqual([1, 0]);
    expect(b.messages).toEqual(a.messages);
  });

  it("resets its state when the stored conversation was edited", async () => {
    const strategy = createStrategy("rolling-summary");
    const r = await strategy.project({ messages: chat(5) }, strategy.initialState(), {});
    const edited = chat(5);
    edited[3] = user("something else entirely");
    const again = await strategy.project({ messages: edited }, r.state, {});
    expect(again.events[0].detail).toMatch(/state reset/);
  });

  it("keeps its summary when a system prompt changes from request to request (a clock, injected context), and still resets when one is added", async () => {
    // The system prompt carries the time: each request's differed, the fingerprint never matched,
    // and every request summarized everything again (8 summary calls over 12 requests instead of 4).
    const run = async (system: (t: number) => string): Promise<number[]> => {
      const llm = scriptedLlm(Array.from({ length: 12 }, (_, k) => summaryReply(`[done] items up to ${k} priced`)));
      const stored: ChatMessage[] = [sys(""), user("I need prices for catalogue items.")];
      let state: Json | undefined;
      const calls: number[] = [];
      for (let t = 1; t <= 12; t++) {
        stored[0] = sys(system(t));
        if (t > 1) stored.push(user(`Request ${t}: please look up item ${t} and report its price in euros with availability.`));
        const r = await compact(stored, "rolling-summary", { llm, ...(state === undefined ? {} : { state }) });
        expect(r.events.filter((e) => /reset/.test(e.detail ?? ""))).toEqual([]);
        state = r.state;
        calls.push(r.stats.llmCalls);
        stored.push(assistant(`Item ${t} costs ${t * 10} euros. It is in stock and ships within ${t} days from the main warehouse.`));
      }
      return calls;
    };
    const fixed = await run(() => "You are helpful.");
    expect(await run((t) => `You are helpful. Current time: 10:${String(t).padStart(2, "0")}`)).toEqual(fixed);
    expect(fixed.reduce((a, b) => a + b)).toBe(4);
    // A system message added before the summarized messages moves them: that is still an edit.
    const strategy = createStrategy("rolling-summary");
    const r = await strategy.project({ messages: chat(5) }, strategy.initialState(), {});
    const moved = [sys("Note."), ...chat(5)];
    expect((await strategy.project({ messages: moved }, r.state, {})).events[0].detail).toMatch(/state reset/);
  });

  it("summarizes with the facts summarizer without an llm; the copy baseline still writes one line per message, marking answered requests done", async () => {
    const r = await compact(chat(5), "rolling-summary");
    expect(r.summarizer).toBe("facts");
    const copy = await compact(chat(5), { name: "rolling-summary", options: { summarizer: "copy" } });
    expect(copy.summarizer).toBe("extractive");
    expect(copy.messages[2].content).toMatch(/\[done\] User: Request 2/);
  });

  it("explains [done] marks in the summary's header only when the summary has them (a short dialogue pays for every header word)", async () => {
    const facts = await compact(chat(5), "rolling-summary");
    expect(String(facts.messages[2].content).split("\n")[0]).toBe("[Summary of 3 earlier messages]");
    const copy = await compact(chat(5), { name: "rolling-summary", options: { summarizer: "copy" } });
    expect(String(copy.messages[2].content).split("\n")[0]).toMatch(/^\[Summary of 3 earlier messages\. Requests marked \[done\] were already carried out/);
  });
  it("takes a summary it wrote that the app stored back as its previous summary: compacting again neither re-summarizes it nor drops its facts", async () => {
    const spec = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 2 } };
    const first = await compact(chat(6), spec);
    const summary = String(first.messages[2].content);
    expect(summary).toMatch(/^\[Summary of 7 earlier messages\]\n/);
    // Stored as sent and sent again: nothing new to fold, so nothing changes.
    const again = await compact(first.messages, spec);
    expect(again.events.filter((e) => e.kind === "compacted")).toEqual([]);
    expect(again.messages.map((m) => m.content)).toEqual(first.messages.map((m) => m.content));
    // Two more rounds: the new ones are folded into the stored summary, whose facts all stay.
    const grown = [...first.messages, user("Request 7: please look up item 7."), assistant("Item 7 costs 70 euros."), user("Request 8: and item 8?")];
    const next = await compact(grown, spec);
    const folded = String(next.messages[2].content);
    expect(folded.split("\n")[0]).toBe("[Summary of 11 earlier messages]");
    for (const value of summary.split("\n").slice(1).flatMap((l) => l.replace(/^[^:]*: /, "").split("; "))) expect(folded).toContain(value);
    expect(folded).not.toMatch(/Summary; |earlier;/);
    // A model summarizer is given it as the previous summary, not as a message to summarize.
    const llm = scriptedLlm([summaryReply("[done] items 1 to 7 priced")]);
    await compact(grown, spec, { llm });
    const prompt = String(llm.requests[0].messages[0].content);
    expect(prompt).not.toContain("[assistant] [Summary of");
    expect(prompt).toContain(summary.split("\n")[1]);
  });
  it("takes no reply whose header counts no messages, or more than any history holds, as a summary it wrote", async () => {
    const spec = { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 2 } };
    const first = await compact(chat(6), spec);
    const summary = String(first.messages[2].content);
    const headers = new Set<string>();
    for (const n of ["0", "007", "99999999999999999999"]) {
      const forged = first.messages.map((m, i) => (i === 2 ? { ...m, content: summary.replace(/^\[Summary of \d+/, `[Summary of ${n}`) } : m));
      const grown = [...forged, user("Request 7: please look up item 7."), assistant("Item 7 costs 70 euros."), user("Request 8: and item 8?")];
      const header = String((await compact(grown, spec)).messages[2].content).split("\n")[0];
      // Before: taken as ours, counting 4 (the 0 as -1), 11 and 1e+20 earlier messages.
      expect(header, n).toMatch(/^\[Summary of \d{1,3} earlier messages\]$/);
      headers.add(header);
    }
    // Each is a message like any other, whatever number it copied.
    expect(headers.size).toBe(1);
  });
});

describe("usage-ratio", () => {
  it("counts tool schemas and reserved output against the model's limit", () => {
    const tools = [{ type: "function", function: { name: "search", parameters: { type: "object", properties: { q: { type: "string" } } } } }];
    const messages = chat(3);
    expect(estimatePromptTokens({ messages, tools })).toBeGreaterThan(promptTokens(messages));
    const u = budgetUsage({ messages, tools, model: "gpt-4o", reservedOutputTokens: 1000 });
    expect(u.contextLimit).toBe(128_000);
    expect(u.ratio).toBeCloseTo((estimatePromptTokens({ messages, tools }) + 1000) / 128_000);
    expect(contextLimit("unknown-model")).toBe(FALLBACK_CONTEXT_LIMIT);
    expect(contextLimit("openai/gpt-4o-mini")).toBe(128_000);
    expect(contextLimit("gpt-4o", { "gpt-4o": 1000 })).toBe(1000);
  });

  it("keeps system messages, the task and the last 2 messages once over the threshold", async () => {
    const messages = chat(8);
    const below = await compact(messages, { name: "usage-ratio", options: { contextLimit: 100_000 } });
    expect(below.messages).toEqual(messages);
    const r = await compact(messages, { name: "usage-ratio", options: { contextLimit: 500 } });
    expect(r.messages).toHaveLength(5);
    expect(r.messages.slice(-2)).toEqual(messages.slice(-2));
    expect(r.messages[2].role).toBe("assistant");
    const reserved = await compact(messages, { name: "usage-ratio", options: { contextLimit: 2000 } }, { reservedOutputTokens: 1500 });
    expect(reserved.messages).toHaveLength(5);
  });

  it("never marks done a request the agent is still working on (only tool calls so far), by any summarizer", async () => {
    const lookup = "reservation ABC123: SFO-JFK on 2024-05-14, paid with card 4242, status confirmed. ".repeat(20);
    const messages = [
      sys("You are an airline agent."),
      user("Hi, I need help with my booking."),
      assistant("Sure, what can I do?"),
      user("Is my seat on ABC123 still 14C?"),
      assistant("Yes, seat 14C."),
      user("Cancel reservation ABC123, then refund it to my card ending 4242."),
      call("c1", "get_reservation", '{"id":"ABC123"}'),
      result("c1", lookup),
      call("c2", "cancel_reservation", '{"id":"ABC123"}'),
      result("c2", "cancelled"),
    ];
    const options = { contextLimit: 500 };
    const copy = await compact(messages, { name: "usage-ratio", options: { ...options, summarizer: "copy" } });
    expect(copy.events.map((e) => e.kind)).toContain("compacted");
    expect(copy.messages[2].content).toMatch(/\[open\] User: Cancel reservation ABC123/);
    expect(copy.messages[2].content).not.toMatch(/\[done\] User: Cancel/);
    const facts = await compact(messages, { name: "usage-ratio", options });
    expect(facts.messages[2].content).toMatch(/user \[open\]:/);
    const llm = scriptedLlm([summaryReply("[open] cancel ABC123, refund to card 4242")]);
    await compact(messages, { name: "usage-ratio", options }, { llm });
    const prompt = messageText(llm.requests[0].messages[0]);
    expect(prompt).toContain("[user] Cancel reservation ABC123");
    expect(prompt).not.toContain("[user (done)] Cancel");
    // A request the assistant did reply to stays done.
    expect(prompt).toContain("[user (done)] Is my seat on ABC123 still 14C?");
    // Folded again once the agent has replied, the copy summary no longer calls the request open.
    const later = [...messages, assistant("Cancelled ABC123 and refunded 420 USD to card 4242."), user("Thanks. Any vouchers on my account?"), call("c3", "get_vouchers"), result("c3", lookup), assistant("None.")];
    const again = await compact(later, { name: "usage-ratio", options: { ...options, summarizer: "copy" } }, { state: copy.state });
    expect(again.events.map((e) => e.kind)).toContain("compacted");
    expect(again.messages[2].content).toMatch(/\[done\] User: Cancel reservation ABC123/);
    expect(again.messages[2].content).not.toMatch(/\[open\] User: Cancel/);
  });

  it("never cuts between a tool call and its result when a system message sits between them", async () => {
    const output = Array.from({ length: 60 }, (_, i) => `line ${i} of the build log`).join("\n");
    const messages = [user("Build the project."), assistant(`Which target? The Makefile has these:\n${output}`), user("The release one."), call("c1", "bash", '{"cmd":"make release"}'), sys("Note: the tool output below was truncated."), result("c1", output), assistant("Built.")];
    for (const name of ["usage-ratio", "cost-trigger"]) {
      const r = await compact(messages, { name, options: name === "usage-ratio" ? { contextLimit: 100 } : {} }, { force: true });
      expect(r.events.map((e) => e.kind)).toContain("compacted");
      expect(roleOrderProblems(r.messages)).toEqual([]);
      expect(r.messages).toContain(messages[4]);
    }
  });
});

const multiGoalHead: ChatMessage[] = [
  sys("You book travel."),
  user("I need a cheap Italian restaurant in the centre for tonight."),
  assistant("Pasta Palace is Italian, in the centre, and cheap."),
  user("Book Pasta Palace for two people at seven please."),
  assistant("Booked Pasta Palace for 2 at 19:00, reference PP42."),
];

describe("goal-boundary", () => {
  const multiGoal: ChatMessage[] = [
    sys("You book travel."),
    user("I need a cheap Italian restaurant in the centre for tonight."),
    assistant("Pasta Palace is Italian, in the centre, and cheap.\nIt is open from 12:00 to 23:00, takes bookings for up to eight people, and has vegetarian options.\nTwo other Italian places nearby are full tonight."),
    user("Book Pasta Palace for two people at seven please."),
    assistant("Booked Pasta Palace for 2 at 19:00, reference PP42.\nThe table is held for fifteen minutes; cancellations are free until 17:00.\nThe address is 12 Market Street, a short walk from the central square."),
    user("Thanks! Now I need a taxi from the station to get there."),
    assistant("A taxi is booked from the station, arriving 18:40."),
    user("What car is the taxi?"),
    assistant("A white Skoda."),
  ];

  it("the heuristic detector finds the switch and ignores follow-ups", async () => {
    const d = heuristicGoalDetector();
    const at = async (i: number, start: number) => (await d.isNewGoal(multiGoal, i, start, {})).newGoal;
    expect(await at(3, 1)).toBe(false);
    expect(await at(5, 1)).toBe(true);
    expect(await at(7, 5)).toBe(false);
  });

  // A goal too small for any summary to shrink the prompt (a greeting and its reply) was left
  // verbatim, and the loop stopped there: no later goal was ever summarized (MultiWOZ, first 100,
  // heuristic detector: 206,833 input tokens, 22.6% saved). It is folded into the next goal's
  // summary, without a summary call of its own.
  it("folds a goal too small to summarize into the next one instead of stopping every later summary", async () => {
    const greeting: ChatMessage[] = [sys("You book travel."), user("Hi there!"), assistant("Hello! How can I help you today?"), ...multiGoal.slice(1)];
    const r = await compact(greeting, { name: "goal-boundary", options: { detector: "heuristic" } });
    expect((r.state as { boundaries: number[] }).boundaries).toEqual([3, 7]);
    expect(r.events.find((e) => e.kind === "skipped")?.detail).toMatch(/too small .*folded into the next goal's summary/);
    expect(r.events.filter((e) => e.kind === "compacted")).toEqual([{ kind: "compacted", messageIndex: 2, replaced: 5 }]);
    expect(r.messages.slice(0, 2)).toEqual(greeting.slice(0, 2));
    expect(r.messages[2].content).toMatch(/^\[Summary of 2 earlier goals\]\nGoals 1-2:\n[\s\S]*PP42/);
    expect(r.messages.slice(3)).toEqual(greeting.slice(7));
    expect(r.stats.tokensOut).toBeLessThan(r.stats.tokensIn);
    // With a model, the greeting costs no summary call: one call summarizes both goals.
    const llm = scriptedLlm([summaryReply("[done] booked Pasta Palace for 2 at 19:00 (PP42)")]);
    const paid = await compact(greeting, { name: "goal-boundary", options: { detector: "heuristic" } }, { llm });
    expect(paid.stats.llmCalls).toBe(1);
    expect(String(llm.requests[0].messages[0].content)).toContain("How can I help you today?");
    expect(paid.messages[2].content).toMatch(/Goals 1-2:\n\[done\] booked Pasta Palace/);
    // The next request keeps both: nothing is summarized again.
    const later = [...greeting, user("Is the taxi paid?"), assistant("Yes, by card.")];
    const again = await compact(later, { name: "goal-boundary", options: { detector: "heuristic" } }, { llm: scriptedLlm([]), state: paid.state });
    expect(again.stats.llmCalls).toBe(0);
    expect(again.messages[2]).toEqual(paid.messages[2]);
  });

  it("counts the messages a goal summary replaces, not the system messages it keeps", async () => {
    const noted = [...multiGoal.slice(0, 3), sys("note: the restaurant confirmed by phone"), ...multiGoal.slice(3)];
    const r = await compact(noted, "goal-boundary");
    const omitted = noted.filter((m) => !r.messages.includes(m)).length;
    expect(omitted).toBe(3);
    expect(r.events.find((e) => e.kind === "compacted")).toMatchObject({ replaced: omitted });
  });

  it("summarizes the finished goal and keeps the current one verbatim", async () => {
    const r = await compact(multiGoal, "goal-boundary");
    expect(r.events.filter((e) => e.kind === "goal_boundary").map((e) => e.messageIndex)).toEqual([5]);
    expect(r.messages.slice(0, 2)).toEqual(multiGoal.slice(0, 2));
    expect(r.messages[2].content).toMatch(/Goal 1:[\s\S]*PP42|Goal 1:[\s\S]*Booked/);
    expect(r.messages.slice(3)).toEqual(multiGoal.slice(5));
  });

  it("uses an LLM detector when given an llm, and the budget variant only while over budget", async () => {
    const llm = scriptedLlm(["CONTINUE", "NEW", "CONTINUE", summaryReply("[done] booked Pasta Palace for 2 at 19:00 (PP42)")]);
    const r = await compact(multiGoal, "goal-boundary", { llm });
    expect(r.stats.llmCalls).toBe(4);
    expect(r.messages[2].content).toMatch(/PP42/);
    const roomy = await compact(multiGoal, { name: "goal-boundary", options: { maxTokens: 10_000 } });
    expect(roomy.messages).toEqual(multiGoal);
    expect(roomy.state).toMatchObject({ boundaries: [5], summaries: [] });
    const triggered = await compact(multiGoal, { name: "goal-boundary", options: { trigger: { name: "usage-ratio", options: { contextLimit: 200 } } } });
    expect(triggered.state).toMatchObject({ summaries: [expect.stringContaining("PP42")] });
    const quiet = await compact(multiGoal, { name: "goal-boundary", options: { trigger: { name: "message-count", options: { maxMessages: 50 } } } });
    expect(quiet.messages).toEqual(multiGoal);
  });

  it("an edited last message keeps the finished goals' boundaries and summaries: only the current goal is checked again", async () => {
    // The fingerprint covered every message, so editing the newest one (a chat UI's "edit")
    // reset the whole state: every user message went through the detector again and every goal
    // was summarized again.
    const llm = scriptedLlm(["CONTINUE", "NEW", "CONTINUE", summaryReply("[done] booked Pasta Palace for 2 at 19:00 (PP42)")]);
    const first = await compact(multiGoal, "goal-boundary", { llm });
    expect(first.stats.llmCalls).toBe(4);
    const edited = [...multiGoal.slice(0, -2), user("What colour is the taxi?")];
    const again = await compact(edited, "goal-boundary", { llm: scriptedLlm(["CONTINUE"]), state: first.state });
    expect(again.stats.llmCalls).toBe(1);
    expect(again.state).toMatchObject({ boundaries: [5], summaries: [expect.stringContaining("PP42")] });
    expect(again.messages.slice(3)).toEqual(edited.slice(5));
    // An edited message that started the current goal: only it is checked again, and the goal it ended summarized again.
    const toTaxi = multiGoal.slice(0, 6);
    const taxi = await compact(toTaxi, "goal-boundary", { llm: scriptedLlm(["CONTINUE", "NEW", summaryReply("[done] booked Pasta Palace (PP42)")]) });
    const retold = [...toTaxi.slice(0, 5), user("Thanks! Now I need a taxi from the hotel instead.")];
    const redone = await compact(retold, "goal-boundary", { llm: scriptedLlm(["NEW", summaryReply("[done] booked Pasta Palace (PP42)")]), state: taxi.state });
    expect(redone.stats.llmCalls).toBe(2);
    expect(redone.state).toMatchObject({ boundaries: [5], summaries: [expect.stringContaining("PP42")] });
    // An edit inside a summarized goal still resets.
    const early = [...multiGoal.slice(0, 3), user("Book it for four people at eight please."), ...multiGoal.slice(4)];
    const reset = await compact(early, "goal-boundary", { state: first.state });
    expect(reset.events[0]).toMatchObject({ kind: "skipped", detail: expect.stringContaining("goal state reset") });
  });

  // An app keeps what it was sent: the goal summary came back as a message after the task, and
  // was summarized as one more goal ("Goal 1:\nassistant: Summary; 1 earlier; 1; PP42"): its header
  // words became facts and its facts were lost (20 of 30 SGD dialogues replayed so ended so).
  it("takes a summary it wrote that the app stored back as its earlier goals: compacting again neither re-summarizes it nor drops its facts", async () => {
    const first = await compact(multiGoal, "goal-boundary");
    const summary = String(first.messages[2].content);
    expect(summary).toMatch(/^\[Summary of 1 earlier goal\]\nGoal 1:\n/);
    // Stored as sent and sent again: no goal has ended since, so nothing changes.
    const again = await compact(first.messages, "goal-boundary");
    expect(again.events.filter((e) => e.kind === "compacted")).toEqual([]);
    expect(again.messages.map((m) => m.content)).toEqual(first.messages.map((m) => m.content));
    // A third goal: the taxi's is summarized after the stored one, which stays as written.
    const grown = [...first.messages, user("Great. Now find me a hotel near the museum for two nights."), assistant("The Museum Inn has a double for two nights at 90 pounds a night, booking HX7.")];
    const next = await compact(grown, "goal-boundary");
    expect(next.events.filter((e) => e.kind === "compacted")).toEqual([{ kind: "compacted", messageIndex: 3, replaced: 4 }]);
    const folded = String(next.messages[2].content);
    expect(folded).toMatch(/^\[Summary of 2 earlier goals\]\nGoal 1:\n/);
    expect(folded).toContain(`${summary.split("\n").slice(1).join("\n")}\nGoal 2:\n`);
    expect(folded).not.toMatch(/Summary; |earlier;/);
    expect(next.messages.slice(3)).toEqual(grown.slice(7));
    // Given the state of the first pass (a proxy keeps it), which no longer fits the history: the same.
    expect((await compact(grown, "goal-boundary", { state: first.state })).messages).toEqual(next.messages);
    // A model summarizer is not given it to summarize.
    const llm = scriptedLlm([summaryReply("[done] taxi from the station booked, a white Skoda")]);
    const paid = await compact(grown, { name: "goal-boundary", options: { detector: "domain" } }, { llm });
    expect(llm.requests).toHaveLength(1);
    expect(String(llm.requests[0].messages[0].content)).not.toContain("[Summary of");
    expect(String(paid.messages[2].content)).toMatch(/^\[Summary of 2 earlier goals\. Requests marked \[done\] .*\]\nGoal 1:\n[\s\S]*\nGoal 2:\n\[done\] taxi from the station booked/);
  });
});

describe("goal-boundary's LLM detector", () => {
  it("sends a bounded prompt whatever the size of the new message, keeping both of its ends", async () => {
    // The new user message went to the detector whole: a pasted 1.2 MB log made a 1.2 MB question, at every check.
    const pasted = `Now a taxi please. ${"log line with data 123 ".repeat(50_000)}Ends at the station.`;
    const messages = [...multiGoalHead, user(pasted)];
    const llm = scriptedLlm(["CONTINUE", "NEW", summaryReply("[done] booked Pasta Palace (PP42)")]);
    await compact(messages, "goal-boundary", { llm });
    const question = llm.requests[1].messages[0].content;
    expect(question.length).toBeLessThan(6_000);
    expect(question).toContain("Now a taxi please.");
    expect(question).toContain("Ends at the station.");
    expect(question).toMatch(/characters omitted/);
  });
});

describe("goal-boundary's LLM detector when the model fails", () => {
  // A failed detector call read as "no new goal" and said nothing: with the model down,
  // goal-boundary never summarized and ptc compare called it "never triggered" at 1.017x.
  it("reports each failed call as a failed compaction call, with the message it was about", async () => {
    const down: Llm = { name: "down", complete: () => Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:9")) };
    const messages = [...multiGoalHead, user("Thanks! Now I need a taxi from the station."), assistant("A taxi is booked.")];
    const r = await compact(messages, "goal-boundary", { llm: down });
    expect(r.messages).toEqual(messages);
    // The first failed call ends the checking for this request (see the rows below).
    expect(r.events.filter((e) => e.kind === "summary_failed")).toEqual([{ kind: "summary_failed", messageIndex: 3, detail: "llm goal detector failed: connect ECONNREFUSED 127.0.0.1:9" }]);
    // Charged as a failed summary call is: what the provider reported, here nothing (it charged
    // each refused call as made, its prompt as paid: 23 calls and 1.017x full on 3 SGD dialogues).
    expect([r.stats.llmCalls, r.stats.llmInputTokens, r.stats.llmOutputTokens]).toEqual([0, 0, 0]);
    const billed: Llm = { name: "billed", complete: () => Promise.reject(new LlmError("malformed", "no text in the reply", { usage: { inputTokens: 700, outputTokens: 5, cachedTokens: 0 } })) };
    const paid = await compact(messages, "goal-boundary", { llm: billed });
    expect([paid.stats.llmCalls, paid.stats.llmInputTokens, paid.stats.llmOutputTokens]).toEqual([1, 700, 5]);
  });

  // Each user message not yet checked got its own call, each waiting out summaryTimeoutMs (120 s
  // by default) with a model that never answers: the first compaction of a conversation of 8 user
  // messages took 7 timeouts (14 minutes at the default).
  it("makes one call per compaction with a model that never answers, not one per unchecked message", async () => {
    let calls = 0;
    const hangs: Llm = { name: "hangs", complete: ({ signal }) => (calls++, new Promise((_, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted"))))) };
    const long = [sys("You book travel."), ...Array.from({ length: 8 }, (_, i) => [user(`Request ${i}: book trip ${i}`), assistant(`Trip ${i} booked.`)]).flat()];
    const r = await compact(long, { name: "goal-boundary", options: { summaryTimeoutMs: 20 } }, { llm: hangs });
    expect(calls).toBe(1);
    expect(r.events.filter((e) => e.kind === "summary_failed").map((e) => e.messageIndex)).toEqual([3]);
    expect(r.messages).toEqual(long);
  });

  // Detector calls were outside the circuit breaker that bounds summary calls: with the model down
  // every compaction made one more call, each waiting out its timeout.
  it("opens the circuit breaker after maxFailures failed detector calls, and tries again after the cooldown", async () => {
    let calls = 0;
    const down: Llm = { name: "down", complete: () => (calls++, Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:9"))) };
    let messages = [...multiGoalHead];
    let state: Json | undefined;
    const perCompaction: number[] = [];
    const opened: boolean[] = [];
    for (let k = 0; k < 10; k++) {
      messages = [...messages, user(`And request ${k}, please.`), assistant(`Request ${k} done.`)];
      const before = calls;
      const r = await compact(messages, { name: "goal-boundary", options: { maxFailures: 3, cooldown: 5 } }, { llm: down, ...(state === undefined ? {} : { state }) });
      perCompaction.push(calls - before);
      opened.push(r.events.some((e) => e.kind === "circuit_open"));
      expect(r.messages).toEqual(messages);
      state = r.state;
    }
    // 3 failures open it (the third says so); 5 compactions skipped; then one more try, which fails and opens it again.
    expect(perCompaction).toEqual([1, 1, 1, 0, 0, 0, 0, 0, 1, 0]);
    expect(opened).toEqual([false, false, true, true, true, true, true, true, true, true]);
  });

  // A failed call decided "no new goal" for good: the message was never asked about again, so one
  // refused connection merged two goals for the rest of the conversation.
  it("asks again about the message a failed call was about, at the next compaction", async () => {
    const messages = [...multiGoalHead, user("Thanks! Now I need a taxi from the station."), assistant("A taxi is booked for 18:30.")];
    let fail = true;
    const scripted = scriptedLlm(["CONTINUE", "NEW", summaryReply("[done] booked Pasta Palace for 2 at 19:00 (PP42)")]);
    const flaky: Llm = { name: "flaky", complete: (req) => (fail ? ((fail = false), Promise.reject(new Error("503 overloaded"))) : scripted.complete(req)) };
    const first = await compact(messages, "goal-boundary", { llm: flaky });
    expect(first.events.filter((e) => e.kind === "summary_failed").map((e) => e.messageIndex)).toEqual([3]);
    expect(first.messages).toEqual(messages);
    expect(first.state).toMatchObject({ boundaries: [], checked: 3 });
    const again = await compact(messages, "goal-boundary", { llm: flaky, state: first.state });
    expect(again.events.filter((e) => e.kind === "goal_boundary").map((e) => e.messageIndex)).toEqual([5]);
    expect(again.state).toMatchObject({ boundaries: [5], checked: messages.length });
  });
});

describe("cost model and cost-trigger", () => {
  it("prices a fixed price with its provider's cache from the one table", () => {
    const p = providerPrice(3, 15, "anthropic");
    expect(p.cache).toMatchObject({ kind: "breakpoint", read: 0.1, write: 1.25 });
    expect(requestPrice(p, { inputTokens: 1_000_000, cachedTokens: 500_000, writtenTokens: 250_000, outputTokens: 0 })).toBeCloseTo(0.15 + 0.9375 + 0.75);
    expect(providerPrice(2.5, 10).cache).toMatchObject({ kind: "token-prefix", read: 0.1 });
    expect(() => providerPrice(1, 1, "nowhere")).toThrow(/unknown provider "nowhere"/);
    expect(() => providerPrice(1, 1, "toString")).toThrow(/unknown provider "toString"/);
  });

  it("modelPrice prices every table model (and a provider-qualified and an unknown one) from the table", () => {
    for (const model of Object.keys(DEFAULT_PRICES)) expect(modelPrice(model)).toBe(DEFAULT_PRICES[model]);
    expect(modelPrice("openai/gpt-4o-2024-08-06")).toBe(DEFAULT_PRICES["gpt-4o"]);
    expect(modelPrice("no-such-model")).toBe(FALLBACK_MODEL_PRICE);
    expect(modelPrice("claude-sonnet-4-5").input * 1.25).toBeCloseTo(3.75);
  });

  it("counts the tokens two prompts share from the start", async () => {
    const messages = chat(8);
    const r = await compact(messages, { name: "sliding-window", options: { turns: 2 } });
    // The one measure's definition (src/compaction/measure.ts).
    expect(sharedPrefix(messages, messages).tokens).toBe(promptTokens(messages) - TOKENS_PER_REPLY);
    expect(sharedPrefix(messages, r.messages).messages).toBe(2);
    expect(sharedPrefix(messages, [{ role: "user", content: "other" }])).toEqual({ messages: 0, chars: 0, tokens: 0 });
  });

  it("pays back only with enough prompts to carry the saving, and strictly", () => {
    const p = providerPrice(3, 15, "anthropic");
    const base = { savedTokens: 40_000, rewrittenTokens: 5_000, summaryInputTokens: 40_000, summaryOutputTokens: 600 };
    expect(payback(p, { ...base, prompts: 2 }).pays).toBe(false);
    expect(payback(p, { ...base, prompts: 31 }).pays).toBe(true);
    // (2 x 40,000 x 0.1 x $3) saved against 5,000 x (1.25 - 0.1) x $3 + 40,000 x $3 + 600 x $15 spent.
    expect(payback(p, { ...base, prompts: 2 })).toMatchObject({ saving: expect.closeTo(0.024, 9), cost: expect.closeTo(0.01725 + 0.12 + 0.009, 9) });
    // Break-even does not pay: a free model never compacts for its price.
    expect(payback(providerPrice(0, 0), { ...base, prompts: 50 })).toEqual({ saving: 0, cost: 0, pays: false });
  });

  it("compacts when it pays and not when it does not", async () => {
    const messages = chat(12);
    const never = await compact(messages, { name: "cost-trigger", options: { remainingTurns: 0 } });
    expect(never.messages).toEqual(messages);
    const pays = await compact(messages, { name: "cost-trigger", options: { remainingTurns: 500, summaryMaxTokens: 100 } });
    expect(pays.stats.tokensOut).toBeLessThan(pays.stats.tokensIn);
  });

  // The summary call was priced at the conversation's model whatever summaryModel said, and charged
  // to offline summaries that make none: on tau-bench (20, gpt-4o-mini) with claude-opus-4-1
  // summarizing, cost-trigger cost 8.27x full; a facts summary never fired where it pays.
  it("prices the summary call at its own model, and charges none to an offline summarizer", async () => {
    const messages = chat(12);
    const compacts = async (options: Record<string, Json>) => {
      const r = await compact(messages, { name: "cost-trigger", options: { remainingTurns: 10, summaryMaxTokens: 100, ...options } }, { model: "gpt-4o-mini" });
      return r.stats.tokensOut < r.stats.tokensIn;
    };
    expect(await compacts({})).toBe(true);
    expect(await compacts({ summaryModel: "claude-opus-4-1" })).toBe(false);
    expect(await compacts({ summaryModel: "gpt-4o-mini" })).toBe(true);
    // One turn left: a paid summary does not pay back, a free one does (its rewrite alone is paid).
    expect(await compacts({ remainingTurns: 1 })).toBe(false);
    expect(await compacts({ remainingTurns: 1, summarizer: "facts" })).toBe(true);
    expect(await compacts({ remainingTurns: 1, summarizer: "copy" })).toBe(true);
    expect(createTrigger({ name: "cost-payback", options: { summaryModel: "gpt-4o" } }).options).toMatchObject({ summaryModel: "gpt-4o" });
  });

  it("a message-count trigger counts the messages sent, so it folds again only when the prompt is over the count again", async () => {
    // On the stored messages it fired on every request once the conversation passed the count: a summary call per request.
    for (const name of ["rolling-summary", "mask-then-summarize"]) {
      const trigger = { name: "message-count", options: { maxMessages: 10 } };
      const strategy = createStrategy({ name, options: name === "rolling-summary" ? { roundsToCompress: 100, roundsToRetain: 2, trigger } : { turns: 1, polling: 1, trigger } });
      const llm = scriptedLlm(Array(40).fill(summaryReply("[done] items priced")));
      const all = chat(30);
      let state = strategy.initialState();
      let calls = "";
      for (let end = 2; end <= all.length; end += 2) {
        const r = await strategy.project({ messages: all.slice(0, end) }, state, { llm, now: () => 0 });
        expect(r.messages.length).toBeLessThanOrEqual(10);
        calls += String(r.stats.llmCalls);
        state = r.state;
      }
      expect(calls).toBe(`00000${"100".repeat(8)}1`);
    }
  });

  it("reads tool_calls: null (what the SDKs write for a reply without calls) as no calls", async () => {
    // The facts summary threw on it, so nothing was ever summarized; a result after it threw in compact().
    const sdk = (m: ChatMessage): ChatMessage => (m.role === "assistant" ? ({ ...m, tool_calls: null } as unknown as ChatMessage) : m);
    const messages = chat(8).map(sdk);
    const r = await compact(messages, { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 2 } });
    expect(r.events.filter((e) => e.kind === "summary_failed")).toEqual([]);
    expect(r.stats.tokensOut).toBe((await compact(chat(8), { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 2 } })).stats.tokensOut);
    const orphan = [...chat(6), result("gone", "a result whose call was dropped"), ...chat(6).slice(1)].map(sdk);
    for (const force of [false, true]) {
      const c = await compact(orphan, { name: "cost-trigger", options: { remainingTurns: 500, summaryMaxTokens: 60 } }, { force });
      expect(c.messages).toContain(orphan[orphan.length - 1]);
    }
  });

  it("triggers say why", () => {
    const c = { messages: chat(3), model: "gpt-4o" };
    expect(createTrigger({ name: "token-threshold", options: { maxTokens: 10 } }).shouldCompact(c, 50)).toEqual({ compact: true, reason: "prompt 50 tokens > 10" });
    expect(createTrigger({ name: "message-count", options: { maxMessages: 100 } }).shouldCompact(c, 50).compact).toBe(false);
    expect(createTrigger({ name: "usage-ratio" }).shouldCompact(c, 120_000).reason).toMatch(/usage 0\.94 of 128000 >= 0\.8/);
    expect(createTrigger({ name: "usage-ratio" }).shouldCompact({ ...c, reportedPromptTokens: 110_000 }, 50).compact).toBe(true);
    expect(() => createTrigger({ name: "sometimes" })).toThrow(/unknown trigger "sometimes"/);
  });

  it("triggers decide at their edges as their reasons say, counting tool schemas and the reserved reply", () => {
    const c = { messages: chat(3), model: "gpt-4o" };
    const threshold = createTrigger({ name: "token-threshold", options: { maxTokens: 1000 } });
    expect([threshold.shouldCompact(c, 1000).compact, threshold.shouldCompact(c, 1001).compact]).toEqual([false, true]);
    const ratio = createTrigger({ name: "usage-ratio", options: { contextLimit: 1000 } });
    expect([ratio.shouldCompact(c, 799).compact, ratio.shouldCompact(c, 800).compact]).toEqual([false, true]);
    // The schemas go out with every request: 700 tokens of messages and 100 or more of tools pass 0.8 of 1,000.
    const tools = [{ type: "function", function: { name: "lookup", description: "Looks a booking up by its reference. ".repeat(20), parameters: { type: "object", properties: { ref: { type: "string" } } } } }];
    expect(ratio.shouldCompact({ ...c, tools }, 700).compact).toBe(true);
    expect(ratio.shouldCompact({ ...c, reservedOutputTokens: 100 }, 700).compact).toBe(true);
    expect(ratio.shouldCompact(c, 700).compact).toBe(false);
  });

  // A trigger's options were checked only when the strategy built it: the error named the trigger
  // alone ('invalid options for trigger "token-threshold"'), so with several strategies given
  // (ptc compare, a proxy configuration) nothing said whose trigger was wrong.
  it("a bad trigger in a strategy's options fails naming the strategy and the option's path", () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ["rolling-summary", { trigger: { name: "token-threshold", options: { maxTokens: -1 } } }, /→ at trigger\.options\.maxTokens/],
      ["goal-boundary", { trigger: { name: "message-count", options: { maxMessages: "x" } } }, /→ at trigger\.options\.maxMessages/],
      ["mask-then-summarize", { trigger: { name: "token-threshold", options: { bogus: 1 } } }, /Unrecognized key: "bogus"\n {2}→ at trigger\.options/],
      ["rolling-summary", { trigger: { name: "sometimes" } }, /unknown trigger "sometimes" \(known: [^)]+\)\n {2}→ at trigger\.name/],
      ["goal-boundary", { trigger: { name: "x".repeat(5000) } }, /unknown trigger \(a name of 5000 characters\)/],
    ];
    for (const [name, options, why] of cases) {
      expect(() => createStrategy({ name, options })).toThrow(new RegExp(`^compaction: invalid options for strategy "${name}":`));
      expect(() => createStrategy({ name, options })).toThrow(why);
    }
  });
});

describe("summaries", () => {
  it("the extractive summary fits its budget by dropping the oldest lines", () => {
    const text = extractiveSummary({ messages: chat(20).slice(1), maxTokens: 60 });
    expect(promptTokens([{ role: "assistant", content: text }])).toBeLessThan(70);
    expect(text).toContain("Request 20");
    expect(text).not.toContain("Request 1:");
  });

  it("validation rejects empty, oversized and growing summaries", () => {
    const request = { messages: [user("short")], maxTokens: 50 };
    expect(summaryProblem("  ", request)).toMatch(/empty/);
    expect(summaryProblem("word ".repeat(80), { ...request, maxTokens: 20 })).toMatch(/over its budget/);
    expect(summaryProblem("a much longer text than the message itself", request)).toMatch(/not smaller/);
  });

  it("sends the summarizer at most maxInputChars of transcript, whatever the number of messages or the size of a call's arguments", async () => {
    // 1,500 tool steps gave each message its 200-character floor: a 438,940-character prompt (about
    // 110k tokens) where 60,000 is the stated bound; a call's arguments went in whole, uncut.
    const many: ChatMessage[] = [sys("s"), user("Keep the server healthy.")];
    for (let i = 0; i < 1500; i++) many.push(call(`c${i}`, "bash", `{"cmd":"check ${i}"}`), result(`c${i}`, `status ${i}: ok ${"x ".repeat(600)}`));
    const written = [sys("s"), user("Write the report."), call("w", "write_file", JSON.stringify({ path: "r.md", text: "The figures rose by 12 percent. ".repeat(8_000) })), result("w", "ok"), assistant("Written."), user("Thanks.")];
    // The template around the transcript is under 2,000 characters.
    const template = 2_000;
    for (const messages of [many, written]) {
      const llm = scriptedLlm([summaryReply("[done] checked and written")]);
      await compact(messages, { name: "usage-ratio", options: { contextLimit: 2_000 } }, { llm });
      const prompt = messageText(llm.requests[0].messages[0]);
      expect(prompt.length).toBeLessThan(60_000 + template);
      // Both ends of the span are still there.
      expect(prompt).toMatch(/check 0|write_file/);
    }
  });

  it("asks for an llm when told to use one", async () => {
    await expect(compact(chat(6), { name: "rolling-summary", options: { summarizer: "llm" } })).rejects.toThrow(/needs an llm/);
  });

  it("an abort stops the summary call instead of counting as a failure", async () => {
    const controller = new AbortController();
    controller.abort();
    const llm = scriptedLlm([summaryReply("[done] priced")]);
    await expect(compact(chat(6), "rolling-summary", { llm, signal: controller.signal })).rejects.toThrow(/abort/i);
  });
});
