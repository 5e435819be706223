// Anthropic-style /v1/messages through the proxy with the official @anthropic-ai/sdk client: long
// conversations are compacted by the same identity, budget and summary machinery as chat
// completions, the summary carries a cache_control breakpoint and stays byte-identical on later
// turns (so the provider's cache keeps serving it), tool_use/tool_result pairs are never split,
// streams pass through with their usage read, and tenants stay apart.
import Anthropic from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { rig, stored, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

// A 3,000-token window under usage-ratio, stated rather than left to the default strategy.
const SMALL = { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "claude-test": 3000 }, reserveOutputTokens: 200 } };
type Block = { type: string; text?: string; id?: string; tool_use_id?: string; cache_control?: unknown };
type Sent = { role: string; content: string | Block[] };
const client = (x: Rig, apiKey = "sk-client-key") => new Anthropic({ baseURL: x.proxy.url, apiKey, maxRetries: 0, timeout: 5000 });
const sentMessages = (x: Rig) => x.upstream.requests.filter((q) => q.path === "/v1/messages");

function longHistory(turns: number, tag = "a"): Anthropic.MessageParam[] {
  const filler = (i: number) => Array.from({ length: 80 }, (_, j) => `${tag}word${(i * 7 + j) % 50}`).join(" ");
  const out: Anthropic.MessageParam[] = [{ role: "user", content: `TASK-${tag}: plan the migration.` }, { role: "assistant", content: "Understood." }];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: `question ${tag}${i}: ${filler(i)}` });
    out.push({ role: "assistant", content: [{ type: "text", text: `answer ${tag}${i}: ${filler(i + 1)}` }] });
  }
  out.push({ role: "user", content: `final question ${tag}` });
  return out;
}

describe("proxy /v1/messages", () => {
  it("counts a tool_use input once: a prompt at half the window is not compacted", async () => {
    // Claude Code's Write calls: each input (a file of ~210 tokens) is sent once, so the prompt is
    // 1,332 tokens of a 3,000-token window; counted twice it looked like 2,600 and was summarized.
    r = await rig({ config: SMALL });
    const file = (i: number) => Array.from({ length: 20 }, (_, j) => `const v${i}_${j} = ${j};`).join("\n");
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "Write the modules." }];
    for (let i = 0; i < 6; i++) {
      history.push({ role: "assistant", content: [{ type: "tool_use", id: `w${i}`, name: "Write", input: { path: `m${i}.ts`, content: file(i) } }] });
      history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `w${i}`, content: "ok" }] });
    }
    history.push({ role: "user", content: "now test them" });
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "writes" } });
    expect(r.upstream.summaryCalls).toBe(0);
    expect((sentMessages(r)[0].body as { messages: Sent[] }).messages).toHaveLength(history.length);
  });

  it("masks an old tool result as a tool_result block, so every tool_use keeps its result", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "observation-masking", options: { turns: 1, polling: 1 } } } } });
    const output = (i: number) => Array.from({ length: 40 }, (_, k) => `make[${i}]: building object_${k}.o`).join("\n");
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "Find why the build fails." }];
    for (let i = 0; i < 4; i++) {
      history.push({ role: "assistant", content: [{ type: "tool_use", id: `b${i}`, name: "bash", input: { command: `make t${i}` } }] });
      history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `b${i}`, content: output(i) }] });
    }
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "mask" } });
    const sent = (sentMessages(r)[0].body as { messages: Sent[] }).messages;
    expect(sent).toHaveLength(history.length);
    const results = sent.filter((m) => m.role === "user" && Array.isArray(m.content)).map((m) => (m.content as Block[])[0]);
    expect(results.map((b) => [b.type, b.tool_use_id])).toEqual([0, 1, 2, 3].map((i) => ["tool_result", `b${i}`]));
    expect(JSON.stringify(results[0])).toContain("Old bash output omitted");
  });

  it("masks an old tool result, never the words the person sent with it", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "observation-masking", options: { turns: 1, polling: 1 } } } } });
    const output = (i: number) => Array.from({ length: 40 }, (_, k) => `make[${i}]: building object_${k}.o`).join("\n");
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "Find why the build fails." }];
    for (let i = 0; i < 4; i++) {
      history.push({ role: "assistant", content: [{ type: "tool_use", id: `b${i}`, name: "bash", input: { command: `make t${i}` } }] });
      const results: Anthropic.ContentBlockParam[] = [{ type: "tool_result", tool_use_id: `b${i}`, content: output(i) }];
      // Claude Code sends what the person typed while a tool ran in the turn of its result.
      if (i === 1) results.push({ type: "text", text: "Never touch the migrations folder." });
      history.push({ role: "user", content: results });
    }
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "mask-words" } });
    const sent = (sentMessages(r)[0].body as { messages: Sent[] }).messages;
    expect(sent).toHaveLength(history.length);
    // Before: the whole turn became the placeholder, the instruction gone from every later request.
    expect(sent[4].content).toEqual([{ type: "tool_result", tool_use_id: "b1", content: "[Old bash output omitted: 40 lines; first line: make[1]: building object_0.o]" }, { type: "text", text: "Never touch the migrations folder." }]);
    expect(sent.at(-1)).toEqual(history.at(-1));
  });

  it("masks the results of parallel tool calls as one tool_result block per call", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "observation-masking", options: { turns: 1, polling: 1 } } } } });
    const output = (i: number) => Array.from({ length: 40 }, (_, k) => `grep[${i}]: src/file_${k}.ts: match`).join("\n");
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "Find every caller." }];
    for (let i = 0; i < 4; i++) {
      history.push({ role: "assistant", content: [0, 1].map((j) => ({ type: "tool_use" as const, id: `p${i}${j}`, name: "grep", input: { pattern: `f${i}${j}` } })) });
      history.push({ role: "user", content: [0, 1].map((j) => ({ type: "tool_result" as const, tool_use_id: `p${i}${j}`, content: output(i) })) });
    }
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "mask-parallel" } });
    const sent = (sentMessages(r)[0].body as { messages: Sent[] }).messages;
    expect(sent).toHaveLength(history.length);
    const answered = sent.filter((m) => m.role === "user" && Array.isArray(m.content)).map((m) => (m.content as Block[]).map((b) => b.tool_use_id));
    expect(answered).toEqual([0, 1, 2, 3].map((i) => [`p${i}0`, `p${i}1`]));
    expect(JSON.stringify(sent[2])).toContain("omitted");
  });

  it("counts a plain-text document by its text, and compacts before it overflows the window", async () => {
    // A pasted contract of about 3,000 tokens for a 3,000-token window (it counted as "[document]").
    r = await rig({ config: SMALL });
    const contract = Array.from({ length: 300 }, (_, i) => `Clause ${i}: the supplier delivers lot ${i * 7} by day ${i % 28}.`).join("\n");
    const history: Anthropic.MessageParam[] = [
      { role: "user", content: [{ type: "document", source: { type: "text", media_type: "text/plain", data: contract } }, { type: "text", text: "Summarize the delivery terms." }] },
      { role: "assistant", content: "They deliver by lot." },
      { role: "user", content: "Which lots are late?" },
      { role: "assistant", content: "None yet." },
      { role: "user", content: "And the penalties?" },
    ];
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "contract" } });
    expect(r.upstream.summaryCalls).toBe(1);
  });

  it("counts the screenshots in tool results by their size, and compacts before they overflow the window", async () => {
    // Three 1920 x 1080 PNG screenshots (the header is all the measure reads): 1,600 tokens each for a 3,000-token window.
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 7, 128, 0, 0, 4, 56, 8, 6, 0, 0, 0]).toString("base64");
    r = await rig({ config: SMALL });
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "Book the flight." }];
    for (let i = 0; i < 3; i++) {
      history.push({ role: "assistant", content: [{ type: "tool_use", id: `s${i}`, name: "screenshot", input: {} }] });
      history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `s${i}`, content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: png } }] }] });
    }
    history.push({ role: "user", content: "what now?" });
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "shots" } });
    expect((sentMessages(r)[0].body as { messages: Sent[] }).messages.length).toBeLessThan(history.length);
  });

  it("counts PDF documents as the measure counts a file, and compacts before they overflow the window", async () => {
    // Three PDFs (1,500 tokens each by the measure's rule) for a 3,000-token window: they were
    // "[document]" placeholders of a few tokens, and the request went out whole.
    r = await rig({ config: SMALL });
    const pdf = Buffer.from("%PDF-1.7 a contract").toString("base64");
    const history: Anthropic.MessageParam[] = [];
    for (let i = 0; i < 3; i++) {
      history.push({ role: "user", content: [{ type: "document", source: { type: "base64", media_type: "application/pdf", data: pdf } }, { type: "text", text: `Read contract ${i}.` }] });
      history.push({ role: "assistant", content: `Contract ${i} read.` });
    }
    history.push({ role: "user", content: "Which one is longest?" });
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "pdfs" } });
    expect((sentMessages(r)[0].body as { messages: Sent[] }).messages.length).toBeLessThan(history.length);
  });

  it("compacts a long conversation with a cached summary, and reuses it byte for byte", async () => {
    r = await rig({ config: SMALL });
    const c = client(r);
    const history = longHistory(30);
    const reply = await c.messages.create({ model: "claude-test", max_tokens: 200, system: "You are terse.", messages: history }, { headers: { "x-conversation-id": "anth-1" } });
    expect(reply.content[0]).toMatchObject({ type: "text" });
    const first = sentMessages(r)[0].body as { system: string; messages: Sent[] };
    expect(first.system).toBe("You are terse.");
    expect(first.messages.length).toBeLessThan(history.length);
    expect(first.messages[0]).toEqual(history[0]);
    const summary = first.messages.find((m) => Array.isArray(m.content) && m.content.some((b) => b.text?.includes("[Summary of")));
    expect(summary).toBeDefined();
    expect((summary?.content as Block[])[0].cache_control).toEqual({ type: "ephemeral" });
    expect(first.messages.at(-1)).toEqual({ role: "user", content: "final question a" });
    expect(r.upstream.summaryCalls).toBe(1);
    expect((await stored(r.proxy.context.store, "anth-1"))?.reportedTokens).toBeGreaterThan(0);

    const next: Anthropic.MessageParam[] = [...history, { role: "assistant", content: "ok" }, { role: "user", content: "one more" }];
    await c.messages.create({ model: "claude-test", max_tokens: 200, system: "You are terse.", messages: next }, { headers: { "x-conversation-id": "anth-1" } });
    expect(r.upstream.summaryCalls).toBe(1);
    const second = sentMessages(r)[1].body as { messages: Sent[] };
    expect(JSON.stringify(second.messages.slice(0, first.messages.indexOf(summary as Sent) + 1))).toBe(JSON.stringify(first.messages.slice(0, first.messages.indexOf(summary as Sent) + 1)));
  });

  it("gives the summary's breakpoint a TTL the upstream accepts when the client caches for an hour", async () => {
    r = await rig({ config: SMALL });
    const hour = { type: "ephemeral", ttl: "1h" } as const;
    // An agent that caches everything for an hour: its system prompt and its latest message.
    const history = longHistory(30);
    history[history.length - 1] = { role: "user", content: [{ type: "text", text: "final question a", cache_control: hour }] };
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, system: [{ type: "text", text: "You are terse.", cache_control: hour }], messages: history }, { headers: { "x-conversation-id": "anth-ttl" } });
    const sent = sentMessages(r)[0].body as { system: Block[]; messages: Sent[] };
    expect(sent.messages.length).toBeLessThan(history.length);
    // Anthropic refuses a 1-hour breakpoint after a 5-minute one (in the order system, messages).
    const ttls = [...sent.system, ...sent.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []))].flatMap((b) => (b.cache_control === undefined ? [] : [(b.cache_control as { ttl?: string }).ttl ?? "5m"]));
    expect(ttls.length).toBeGreaterThan(2);
    // Before: ["1h", "5m", "1h"], the summary's default 5-minute breakpoint before the client's 1-hour one.
    expect(ttls.slice(ttls.indexOf("5m") === -1 ? ttls.length : ttls.indexOf("5m"))).not.toContain("1h");
  });

  it("never separates a tool_use from its tool_result", async () => {
    r = await rig({ config: SMALL });
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "TASK: look things up." }];
    const filler = Array.from({ length: 120 }, (_, j) => `w${j}`).join(" ");
    for (let i = 0; i < 25; i++) {
      history.push({ role: "assistant", content: [{ type: "text", text: `calling ${i}` }, { type: "tool_use", id: `tu_${i}`, name: "lookup", input: { q: i } }] });
      history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `tu_${i}`, content: `result ${i}: ${filler}` }] });
    }
    history.push({ role: "assistant", content: "done looking" });
    history.push({ role: "user", content: "summarize" });
    await client(r).messages.create({ model: "claude-test", max_tokens: 100, messages: history }, { headers: { "x-conversation-id": "tools" } });
    const sent = (sentMessages(r)[0].body as { messages: Sent[] }).messages;
    expect(sent.length).toBeLessThan(history.length);
    sent.forEach((m, i) => {
      if (!Array.isArray(m.content)) return;
      for (const b of m.content.filter((x) => x.type === "tool_result")) {
        const prev = sent[i - 1];
        expect(Array.isArray(prev.content) && prev.content.some((x) => x.type === "tool_use" && x.id === b.tool_use_id), `result ${b.tool_use_id}`).toBe(true);
      }
    });
  });

  it("keeps the tool_use blocks of a step that recap merged its older recap lines into", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "recap", options: { minPreservedAssistantMessages: 1, batchSize: 2 } } } } });
    const history: Anthropic.MessageParam[] = [{ role: "user", content: "Fix the failing test." }];
    for (let i = 0; i < 5; i++) {
      history.push({ role: "assistant", content: [{ type: "text", text: `recap - read file ${i}\nI read file ${i} next, since the failing assertion may come from it or from what it imports.` }, { type: "tool_use", id: `tu_${i}`, name: "bash", input: { command: `cat f${i}.py` } }] });
      history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: `tu_${i}`, content: `contents of f${i}.py` }] });
    }
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, messages: history }, { headers: { "x-conversation-id": "recap-steps" } });
    const sent = (sentMessages(r)[0].body as { messages: Sent[] }).messages;
    expect(JSON.stringify(sent)).toContain("recap - read file 0");
    // Before: the last step went out as one text block, its tool_use gone, and tu_4's result had no call.
    sent.forEach((m, i) => {
      if (!Array.isArray(m.content)) return;
      for (const b of m.content.filter((x) => x.type === "tool_result")) {
        const prev = sent[i - 1];
        expect(Array.isArray(prev.content) && prev.content.some((x) => x.type === "tool_use" && x.id === b.tool_use_id), `result ${b.tool_use_id}`).toBe(true);
      }
    });
    expect(sent.at(-2)?.content).toEqual([{ type: "text", text: "recap - read file 0\nrecap - read file 1\nrecap - read file 2\nrecap - read file 3" }, ...(history.at(-2)?.content as Block[])]);
  });

  it("marks one breakpoint for the messages the compaction wrote, so a request stays within Anthropic's four", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "recap", options: { minPreservedAssistantMessages: 1, batchSize: 2 } } } } });
    const history: Anthropic.MessageParam[] = [];
    for (let i = 0; i < 8; i++) {
      history.push({ role: "user", content: `question ${i}: what does item ${i} cost?` });
      history.push({ role: "assistant", content: `recap - item ${i} costs ${i} EUR\nItem ${i} costs ${i} EUR; it is in stock, ships in ${i} days and comes in three colours.` });
    }
    history.push({ role: "user", content: [{ type: "text", text: "and item 8?", cache_control: { type: "ephemeral" } }] });
    await client(r).messages.create({ model: "claude-test", max_tokens: 200, system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }], messages: history }, { headers: { "x-conversation-id": "recap-marks" } });
    const body = sentMessages(r)[0].body as { messages: Sent[] };
    const recaps = body.messages.filter((m) => m.role === "assistant" && Array.isArray(m.content));
    expect(recaps.map((m) => (m.content as Block[])[0].text)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `recap - item ${i} costs ${i} EUR`));
    // Before: each of the six recaps carried one, 8 in all, and Anthropic refuses more than 4.
    expect(JSON.stringify(body).match(/"cache_control"/g)).toHaveLength(3);
    expect((recaps.at(-1)?.content as Block[])[0].cache_control).toEqual({ type: "ephemeral" });
  });

  it("streams through the SDK, reads the usage, and keeps tenants apart", async () => {
    r = await rig({ config: SMALL });
    const stream = client(r).messages.stream({ model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: "stream please" }] }, { headers: { "x-conversation-id": "s" } });
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: "text", text: "reply to stream please (1 messages)" });
    expect((await stored(r.proxy.context.store, "s"))?.reportedTokens).toBeGreaterThan(0);
    // Another key under the same id: a conversation of its own.
    await client(r, "sk-other").messages.create({ model: "claude-test", max_tokens: 100, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-conversation-id": "s" } });
    expect((await stored(r.proxy.context.store, "s"))?.messageCount).toBe(1);
    expect((await stored(r.proxy.context.store, "s", "sk-other"))?.messageCount).toBe(1);
    const bad = await client(r).messages.create({ model: "claude-test", max_tokens: 100, messages: [] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
  });

  it("ends a stream the upstream broke off with an error event the Anthropic SDK raises", async () => {
    r = await rig({ config: SMALL });
    const stream = await client(r).messages.create({ model: "claude-test", max_tokens: 100, stream: true, messages: [{ role: "user", content: "hi" }] }, { headers: { "x-fake-mode": "cut" } });
    let text = "";
    const e = await (async () => {
      for await (const ev of stream) if (ev.type === "content_block_delta" && ev.delta.type === "text_delta") text += ev.delta.text;
    })().then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(text).toBe("partial ");
    // Before: the SDK skipped the unnamed error event and the cut reply ended as if complete.
    expect(e).toBeInstanceOf(Anthropic.APIError);
    expect((e as Error).message).toContain("upstream stream broke off");
  });
});

describe("proxy /v1/messages: tool blocks without their name or ids", () => {
  // Read with asText, a missing name became the tool name "undefined" in the compaction's tool
  // calls and in the summarizer's prompt ("[tool call undefined]"); the chat route answers 400.
  const post = (x: Rig, messages: unknown[]) => fetch(`${x.proxy.url}/v1/messages`, { method: "POST", headers: { "x-api-key": "sk-client-key", "content-type": "application/json" }, body: JSON.stringify({ model: "claude-test", max_tokens: 100, messages }) });
  it.each([
    ["a tool_use without a name", [{ type: "tool_use", id: "t1", input: {} }], { type: "tool_result", tool_use_id: "t1", content: "ok" }, "messages[1].content[0].name"],
    ["a tool_use whose name is not a string", [{ type: "tool_use", id: "t1", name: 7, input: {} }], { type: "tool_result", tool_use_id: "t1", content: "ok" }, "messages[1].content[0].name"],
    ["a tool_use without an id", [{ type: "text", text: "running" }, { type: "tool_use", name: "bash", input: {} }], { type: "tool_result", tool_use_id: "t1", content: "ok" }, "messages[1].content[1].id"],
    ["a tool_result without its tool_use_id", [{ type: "tool_use", id: "t1", name: "bash", input: {} }], { type: "tool_result", content: "ok" }, "messages[2].content[0].tool_use_id"],
  ])("answers 400 naming the field for %s, and forwards nothing", async (_what, call, result, param) => {
    r = await rig({ config: SMALL });
    const res = await post(r, [{ role: "user", content: "go" }, { role: "assistant", content: call }, { role: "user", content: [result] }]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(body.error).toMatchObject({ code: "invalid_request", param });
    expect(body.error.message).toContain(param);
    expect(sentMessages(r)).toHaveLength(0);
  });
});
