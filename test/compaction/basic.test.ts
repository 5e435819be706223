import { describe, expect, it } from "vitest";
import { z } from "zod";
import { compact, compactionStrategies, createStrategy, finish, listStrategies } from "../../src/compaction/index.js";
import { roleOrderProblems } from "../../src/compaction/messages.js";
import { messageText } from "../../src/llm/messages.js";
import type { ChatMessage } from "../../src/llm/types.js";
import { assistant, call, chat, result, sys, user } from "./conversations.js";

describe("compact and the registry", () => {
  it("full returns every message unchanged", async () => {
    const messages = chat(4);
    const r = await compact(messages, "full");
    expect(r.messages).toEqual(messages);
    expect(r.stats.tokensOut).toBe(r.stats.tokensIn);
  });

  it("sliding-window keeps system, task and the last N rounds behind a marker", async () => {
    const messages = chat(6);
    const r = await compact(messages, { name: "sliding-window", options: { turns: 2 } });
    expect(r.messages[0]).toBe(messages[0]);
    expect(r.messages[1]).toBe(messages[1]);
    expect(r.messages[2].content).toBe("[7 earlier messages omitted]");
    expect(r.messages.slice(3)).toEqual(messages.slice(-4));
    expect(roleOrderProblems(r.messages)).toEqual([]);
    expect(r.stats.tokensOut).toBeLessThan(r.stats.tokensIn);
    expect(r.events[0]).toMatchObject({ kind: "compacted", replaced: 7 });
  });

  it("a projection sent as stored because it was not smaller reports no compaction", async () => {
    // The window drops one short message, and its marker outweighs it: the stored messages go out.
    const messages = [sys("You help."), user("Plan a trip across Europe with many stops."), user("hi?"), ...chat(3).slice(1)];
    const r = await compact(messages, { name: "sliding-window", options: { turns: 3 } });
    expect(r.messages).toEqual(messages);
    expect(r.events.map((e) => e.kind)).toEqual(["skipped"]);
  });

  it("sliding-window by steps never splits a tool call from its result", async () => {
    const messages = [sys("s"), user("fix the bug"), call("a", "read"), result("a", "x".repeat(50)), call("b", "edit"), result("b", "ok"), assistant("done")];
    const r = await compact(messages, { name: "sliding-window", options: { turns: 1, unit: "step" } });
    expect(r.messages.slice(-1)).toEqual(messages.slice(-1));
    expect(r.messages).toHaveLength(4);
    expect(r.messages[2].content).toBe("[4 earlier messages omitted]");
    expect(r.messages[2].role).toBe("system");
    expect(roleOrderProblems(r.messages)).toEqual([]);
  });

  it("a marker counts the messages it replaces, not the system messages it keeps", async () => {
    // The span's system messages stay (spliceSummary): counted in, the marker said 6 omitted where 4 were.
    const messages = [sys("s"), user("task"), assistant("a1"), sys("note: the build is green"), user("u2"), sys("note 2"), assistant("a2"), user("u3"), assistant("a3")];
    const r = await compact(messages, { name: "sliding-window", options: { turns: 1 } });
    const omitted = messages.filter((m) => !r.messages.includes(m)).length;
    expect(omitted).toBe(3);
    expect(r.messages.find((m) => typeof m.content === "string" && m.content.includes("omitted"))?.content).toBe(`[${omitted} earlier messages omitted]`);
    expect(r.events[0]).toMatchObject({ kind: "compacted", replaced: omitted });
    // The rolling summary's header, over messages long enough for a summary to pay.
    const long = messages.map((m) => (m.role === "assistant" ? assistant(`${messageText(m)}: ${"the catalogue lists the part as discontinued since spring. ".repeat(8)}`) : m));
    const rolling = await compact(long, { name: "rolling-summary", options: { roundsToCompress: 1, roundsToRetain: 1 } }, { force: true });
    expect(rolling.events.map((e) => e.kind)).toContain("compacted");
    expect(rolling.messages.find((m) => typeof m.content === "string" && m.content.startsWith("[Summary of"))?.content).toMatch(/^\[Summary of 3 earlier messages/);
  });

  it("rejects unknown strategies and bad options with clear messages", () => {
    expect(() => createStrategy({ name: "nope" })).toThrow(/unknown strategy "nope" \(known: .*sliding-window/);
    expect(() => createStrategy({ name: "sliding-window", options: { turns: 0 } })).toThrow(/invalid options for strategy "sliding-window"[\s\S]*turns/);
    expect(() => createStrategy({ name: "sliding-window", options: { window: 3 } })).toThrow(/window/);
  });

  it("takes OpenAI's developer and legacy function roles and custom tool calls, and gives the stored objects back", async () => {
    // A real OpenAI conversation: a developer prompt, a legacy function result, a freeform (custom) tool call.
    const developer = { role: "developer", content: "Answer tersely." };
    const fn = { role: "function", name: "weather", content: "sunny, 21 C" };
    const custom = { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "custom", custom: { name: "shell", input: "ls" } }] };
    const messages = [developer, user("weather in Oslo?"), { role: "assistant", content: null, function_call: { name: "weather", arguments: "{}" } }, fn, assistant("Sunny."), user("and files?"), custom, result("c1", "a.txt"), ...chat(4).slice(1)] as never as ChatMessage[];
    for (const name of ["full", "sliding-window", "rolling-summary", "observation-masking", "recap"]) {
      const r = await compact(messages, { name, options: name === "sliding-window" ? { turns: 1 } : {} });
      // Kept messages are the stored objects, roles and call shapes as the client wrote them.
      expect(r.messages[0]).toBe(developer);
      if (name === "full") expect(r.messages).toEqual(messages);
    }
    // The legacy call and its result went out of the window together.
    const window = await compact(messages, { name: "sliding-window", options: { turns: 1 } });
    expect(window.messages).not.toContain(fn);
    expect(window.messages.length).toBeLessThan(messages.length);
  });

  it("keeps a legacy function_call and its function result together, or drops both", async () => {
    // Before, the result was shown to the strategies as a system message: a window kept it and dropped its call.
    const fnCall = (name: string) => ({ role: "assistant", content: null, function_call: { name, arguments: '{"city":"Oslo"}' } });
    const fnResult = (name: string, content: string) => ({ role: "function", name, content });
    const legacy = [sys("s"), user("task: weather"), fnCall("weather"), fnResult("weather", "sunny ".repeat(50)), assistant("Sunny."), user("next"), fnCall("rain"), fnResult("rain", "none ".repeat(50)), fnCall("wind"), fnResult("wind", "calm ".repeat(50)), assistant("ok"), ...chat(3).slice(1)] as never as ChatMessage[];
    const isCall = (m: ChatMessage | undefined) => m !== undefined && m.role === "assistant" && "function_call" in m;
    const problems = (out: ChatMessage[]) =>
      out.flatMap((m, i) => {
        const prev = out[i - 1];
        const next = out[i + 1];
        if ((m.role as string) === "function" && !isCall(prev)) return [`${i}: function result without its call`];
        if (isCall(m) && (next?.role as string) !== "function") return [`${i}: function_call without its result`];
        return [];
      });
    expect(problems(legacy)).toEqual([]);
    for (const options of [{ turns: 1 }, { turns: 2 }, { turns: 3 }, { turns: 1, unit: "step" }, { turns: 3, unit: "step" }, { turns: 5, unit: "step" }]) {
      const r = await compact(legacy, { name: "sliding-window", options });
      expect(r.messages.length, JSON.stringify(options)).toBeLessThan(legacy.length);
      expect(problems(r.messages), JSON.stringify(options)).toEqual([]);
    }
    // Old legacy results are observations like tool results: masked, in their own role, after their call.
    const masked = await compact(legacy, { name: "observation-masking", options: { turns: 1, polling: 1 } });
    expect(masked.messages[3]).toMatchObject({ role: "function", name: "weather", content: expect.stringMatching(/^\[Old weather output omitted/) });
    expect(masked.messages[3]).not.toHaveProperty("tool_call_id");
    expect(masked.messages[2]).toBe(legacy[2]);
    expect(problems(masked.messages)).toEqual([]);
  });

  it("a message recap merges keeps the client's custom tool calls as written", async () => {
    // Recap folds the recap lines before a tool step into that step's message: a copy, whose calls were sent in the function shape.
    const output = Array.from({ length: 30 }, (_, i) => `line ${i} of the listing`).join("\n");
    const custom = (id: string, content: string) => ({ role: "assistant", content, tool_calls: [{ id, type: "custom", custom: { name: "shell", input: "ls" } }] });
    const messages = [user("task"), ...["a", "b", "c"].flatMap((id) => [custom(id, `recap - step ${id}\n${output}`), result(id, output)])] as never as ChatMessage[];
    const r = await compact(messages, { name: "recap", options: { minPreservedAssistantMessages: 1, batchSize: 2 } });
    const merged = r.messages[r.messages.length - 2];
    expect(merged.content).toMatch(/^recap - step a\nrecap - step b\n/);
    expect(merged.tool_calls).toEqual(messages[5].tool_calls);
  });

  it("rejects malformed messages", async () => {
    await expect(compact([{ role: "robot", content: "x" }] as never, "full")).rejects.toThrow(/message 0 has role "robot"/);
    await expect(compact("hi" as never, "full")).rejects.toThrow(/must be an array/);
    // Tool calls and content parts an app built wrong fail with the message named, not deep inside a strategy.
    const task = { role: "user", content: "task" };
    await expect(compact([task, { role: "assistant", content: null, tool_calls: [{}] }] as never, "full")).rejects.toThrow(/^compaction: message 1 has a tool call \(0\) without a function name and arguments string$/);
    await expect(compact([task, { role: "assistant", content: null, tool_calls: {} }] as never, "full")).rejects.toThrow(/^compaction: message 1 has tool_calls of type object \(expected an array\)$/);
    await expect(compact([task, { role: "assistant", content: null, tool_calls: [{ id: "1", type: "function", function: { name: "f", arguments: { a: 1 } } }] }] as never, "full")).rejects.toThrow(/message 1 has a tool call \(0\) without a function name and arguments string/);
    await expect(compact([{ role: "user", content: [{ type: "text", text: "hi" }, null] }] as never, "full")).rejects.toThrow(/^compaction: message 0 has a content part \(1\) that is not an object$/);
    // A name that is not text failed inside the tokenizer ("Model name must be provided...").
    await expect(compact([task, { role: "user", content: "x", name: 5 }] as never, "full")).rejects.toThrow(/^compaction: message 1 has name of type number \(expected a string\)$/);
    // Anthropic's tool blocks carry a call or a result the strategies would neither count nor keep paired: refused, with the way to write them.
    const use = { role: "assistant", content: [{ type: "text", text: "Running." }, { type: "tool_use", id: "tu1", name: "bash", input: { cmd: "ls" } }] };
    await expect(compact([task, use] as never, "full")).rejects.toThrow(/^compaction: message 1 has an Anthropic tool_use block \(content part 1\): give tool calls as the message's tool_calls and results as tool messages$/);
    await expect(compact([task, { role: "user", content: [{ type: "tool_result", tool_use_id: "tu1", content: "a.txt" }] }] as never, "full")).rejects.toThrow(/^compaction: message 1 has an Anthropic tool_result block \(content part 0\)/);
    // What the SDKs write for a message without tool calls or name is accepted.
    await expect(compact([task, { role: "assistant", content: "x", tool_calls: null, name: null }] as never, "full")).resolves.toMatchObject({ stats: { messagesOut: 2 } });
  });

  it("lists strategies with their defaults", () => {
    const list = listStrategies();
    expect(list.find((s) => s.name === "sliding-window")).toMatchObject({ usesLlm: false, defaults: { turns: 10, unit: "round" } });
  });

  it("registers a custom strategy in the caller's own registry, as docs/compaction.md shows", async () => {
    const registry = compactionStrategies.with({
      name: "drop-tool-output",
      description: "Replaces old tool results by a size note.",
      usesLlm: false,
      schema: z.object({ keep: z.number().int().min(0).default(3) }).strict(),
      create: (options) => ({
        name: "drop-tool-output",
        options,
        usesLlm: false,
        initialState: () => null,
        project(conversation, state, context) {
          const started = context.now?.() ?? performance.now();
          const tools = conversation.messages.flatMap((m, i) => (m.role === "tool" ? [i] : []));
          const old = new Set(tools.slice(0, Math.max(0, tools.length - options.keep)));
          const out = conversation.messages.map((m, i) => (old.has(i) ? { ...m, content: `[${String(m.content).length} characters omitted]` } : m));
          return finish(conversation, out, state, [], started, context);
        },
      }),
    });
    expect(listStrategies(registry).find((s) => s.name === "drop-tool-output")?.defaults).toEqual({ keep: 3 });
    // The default registry is not changed by it.
    expect(listStrategies().some((s) => s.name === "drop-tool-output")).toBe(false);
    const messages = [user("task"), call("a", "read"), result("a", "x".repeat(400)), assistant("ok")];
    const r = await compact(messages, { name: "drop-tool-output", options: { keep: 0 } }, { registry });
    expect(r.messages[2].content).toBe("[400 characters omitted]");
    expect(() => registry.with({ name: "full", description: "", usesLlm: false, schema: z.object({}), create: () => createStrategy("full") })).toThrow(/already registered/);
  });
});
