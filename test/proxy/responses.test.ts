// OpenAI's /v1/responses through the proxy with the official client: a long input is compacted by
// the same machinery as chat completions (instructions kept, the summary reused on the next turn),
// function calls stay with their outputs and their reasoning items, and a request continuing a stored response passes as it is.
import type OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { rig, stored, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const SMALL = { compaction: { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } };
type Item = { type?: string; role?: string; content?: unknown; call_id?: string };
const sent = (x: Rig) => x.upstream.requests.filter((q) => q.path === "/v1/responses").map((q) => q.body as { input: Item[]; instructions?: string });

function longInput(turns: number): OpenAI.Responses.ResponseInputItem[] {
  const filler = (i: number) => Array.from({ length: 80 }, (_, j) => `rword${(i * 7 + j) % 50}`).join(" ");
  const out: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "TASK-r: plan the migration." }];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: `question ${i}: ${filler(i)}` });
    out.push({ type: "function_call", call_id: `call_${i}`, name: "lookup", arguments: `{"q":${i}}` });
    out.push({ type: "function_call_output", call_id: `call_${i}`, output: `result ${i}: ${filler(i + 1)}` });
  }
  out.push({ role: "user", content: "final question r" });
  return out;
}

describe("proxy /v1/responses", () => {
  it("masks an old function_call_output as an output of its call, so every call keeps its output", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "observation-masking", options: { turns: 1, polling: 1 } } } } });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Find why the build fails." }];
    for (let i = 0; i < 4; i++) {
      input.push({ type: "function_call", call_id: `b${i}`, name: "bash", arguments: `{"command":"make t${i}"}` });
      input.push({ type: "function_call_output", call_id: `b${i}`, output: Array.from({ length: 40 }, (_, k) => `make[${i}]: building object_${k}.o`).join("\n") });
    }
    await r.client.responses.create({ model: "fake-model", input }, { headers: { "x-conversation-id": "mask" } });
    const items = sent(r)[0].input;
    expect(items).toHaveLength(input.length);
    const outputs = items.filter((x) => x.type === "function_call_output" || x.role === "user").slice(1);
    expect(outputs.map((x) => [x.type, x.call_id])).toEqual([0, 1, 2, 3].map((i) => ["function_call_output", `b${i}`]));
    expect(JSON.stringify(outputs[0])).toContain("Old bash output omitted");
  });

  it("counts the screenshots a computer-use loop returns by their size, and compacts before they overflow the window", async () => {
    // Five function_call_outputs, each a remote screenshot (765 tokens): 3,825 tokens for a 3,000-token window.
    r = await rig({ config: { compaction: { ...SMALL.compaction, strategy: { name: "usage-ratio", options: {} } } } });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Book the flight." }];
    for (let i = 0; i < 5; i++) {
      input.push({ type: "function_call", call_id: `c${i}`, name: "screenshot", arguments: "{}" });
      input.push({ type: "function_call_output", call_id: `c${i}`, output: [{ type: "input_image", image_url: `https://cdn.example.com/s${i}.png`, detail: "auto" }] });
    }
    input.push({ role: "user", content: [{ type: "input_text", text: "what now?" }] });
    await r.client.responses.create({ model: "fake-model", input }, { headers: { "x-conversation-id": "shots" } });
    expect(sent(r)[0].input.length).toBeLessThan(input.length);
  });

  it("compacts a long input, keeps instructions and call/output pairs, and reuses the summary", async () => {
    r = await rig({ config: SMALL });
    const input = longInput(25);
    const reply = await r.client.responses.create({ model: "fake-model", instructions: "Be terse.", input }, { headers: { "x-conversation-id": "resp-1" } });
    expect(reply.output_text).toBe("reply to final question r (" + String(sent(r)[0].input.length) + " items)");
    const first = sent(r)[0];
    expect(first.instructions).toBe("Be terse.");
    expect(first.input.length).toBeLessThan(input.length);
    expect(first.input[0]).toEqual(input[0]);
    expect(JSON.stringify(first.input)).toContain("[Summary of");
    first.input.forEach((item, i) => {
      if (item.type === "function_call_output") expect(first.input[i - 1], `output ${item.call_id}`).toMatchObject({ type: "function_call", call_id: item.call_id });
    });
    expect(r.upstream.summaryCalls).toBe(1);
    expect((await stored(r.proxy.context.store, "resp-1"))?.reportedTokens).toBeGreaterThan(0);
    await r.client.responses.create({ model: "fake-model", instructions: "Be terse.", input: [...input, { role: "assistant", content: "ok" }, { role: "user", content: "more" }] }, { headers: { "x-conversation-id": "resp-1" } });
    expect(r.upstream.summaryCalls).toBe(1);
    expect(sent(r)[1].input.length).toBeLessThan(input.length);
  });

  it("keeps the function calls of a step that recap merged its older recap lines into", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "recap", options: { minPreservedAssistantMessages: 1, batchSize: 2 } } } } });
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: "user", content: "Fix the failing test." }];
    for (let i = 0; i < 3; i++) {
      input.push({ role: "assistant", content: `recap - read file ${i}\nI read file ${i} next, since the failing assertion may come from it or from what it imports.` });
      input.push({ type: "function_call", call_id: `c${i}`, name: "bash", arguments: `{"command":"cat f${i}.py"}` });
      input.push({ type: "function_call_output", call_id: `c${i}`, output: `contents of f${i}.py` });
    }
    await r.client.responses.create({ model: "fake-model", input }, { headers: { "x-conversation-id": "recap-steps" } });
    const out = sent(r)[0].input;
    // Before: each recap line was merged into the call after it and went out as a message, the call gone, its output orphaned.
    expect(out.filter((x) => x.type === "function_call").map((x) => x.call_id)).toEqual(["c0", "c1", "c2"]);
    expect(out.slice(0, 4)).toEqual([input[0], { role: "assistant", content: "recap - read file 0" }, input[2], input[3]]);
    out.forEach((item, i) => {
      if (item.type === "function_call_output") expect(out[i - 1], `call of ${item.call_id}`).toMatchObject({ type: "function_call", call_id: item.call_id });
    });
  });

  it("never keeps a function call or a message without the reasoning item before it (the upstream refuses one)", async () => {
    r = await rig({ config: SMALL });
    // As a reasoning model's client (Codex) resends its history: each call and each reply after its reasoning item.
    const reasoning = (id: string) => ({ type: "reasoning", id: `rs_${id}`, summary: [], encrypted_content: `enc-${id}` }) as unknown as OpenAI.Responses.ResponseInputItem;
    const input: OpenAI.Responses.ResponseInputItem[] = [];
    for (const item of longInput(25)) {
      if (item.type === "function_call") input.push(reasoning(item.call_id), { ...item, id: `fc_${item.call_id}` });
      else input.push(item);
    }
    input.push(reasoning("last"), { type: "message", role: "assistant", id: "msg_last", status: "completed", content: [{ type: "output_text", text: "done", annotations: [] }] }, { role: "user", content: "and now?" });
    // Then two calls at once, each after its own reasoning item (as some gateways send them), and their outputs.
    const call = (id: string) => ({ type: "function_call", id: `fc_${id}`, call_id: id, name: "lookup", arguments: "{}" }) as OpenAI.Responses.ResponseInputItem;
    const output = (id: string) => ({ type: "function_call_output", call_id: id, output: `out ${id}` }) as OpenAI.Responses.ResponseInputItem;
    const parallel = [...input, reasoning("p1"), call("p1"), reasoning("p2"), call("p2"), output("p1"), output("p2")];
    for (const request of [input, parallel]) await r.client.responses.create({ model: "fake-model", input: request }, { headers: { "x-conversation-id": "reasoning" } });
    for (const [n, kept] of [[0, "msg_last"], [1, "fc_p1"]] as const) {
      const out = sent(r)[n].input as (Item & { id?: string })[];
      expect(out.length).toBeLessThan((n === 0 ? input : parallel).length);
      expect(out.some((c) => c.id === kept)).toBe(true);
      out.forEach((item, i) => {
        if (item.type === "function_call") expect(out[i - 1], `before ${item.call_id}`).toMatchObject({ type: "reasoning", id: `rs_${item.call_id}` });
        if (item.id === "msg_last") expect(out[i - 1]).toMatchObject({ type: "reasoning", id: "rs_last" });
        if (item.type === "reasoning") expect(out[i + 1]?.type === "function_call" || out[i + 1]?.id === "msg_last", `after ${item.id}`).toBe(true);
        if (item.type === "function_call_output") expect(out.slice(0, i).some((c) => c.type === "function_call" && c.call_id === item.call_id), `call of ${item.call_id}`).toBe(true);
      });
    }
  });

  it("compacts a streamed request and passes its event stream through byte for byte", async () => {
    r = await rig({ config: SMALL });
    const input = longInput(25);
    const stream = await r.client.responses.create({ model: "fake-model", instructions: "Be terse.", input, stream: true }, { headers: { "x-conversation-id": "resp-stream" } });
    const types: string[] = [];
    let text = "";
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
      if (event.type === "response.completed") completed = event.response;
    }
    const first = sent(r)[0];
    expect(JSON.stringify(first.input)).toContain("[Summary of");
    expect(first.input.length).toBeLessThan(input.length);
    expect(r.upstream.summaryCalls).toBe(1);
    expect(text).toBe(`reply to final question r (${first.input.length} items)`);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(completed?.usage?.input_tokens).toBeGreaterThan(0);
    // The usage of the stream's last event reached the conversation's record.
    expect((await stored(r.proxy.context.store, "resp-stream"))?.reportedTokens).toBe(completed?.usage?.input_tokens);
    // The next turn, read as raw bytes: exactly what the upstream sent, with the summary reused.
    const raw = await fetch(`${r.proxy.url}/v1/responses`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-client-key", "x-conversation-id": "resp-stream" },
      body: JSON.stringify({ model: "fake-model", instructions: "Be terse.", input: [...input, { role: "assistant", content: text }, { role: "user", content: "and then?" }], stream: true }),
    });
    expect(raw.headers.get("content-type")).toContain("text/event-stream");
    expect(await raw.text()).toBe(r.upstream.streams[1]);
    expect(r.upstream.summaryCalls).toBe(1);
    expect(JSON.stringify(sent(r)[1].input)).toContain("[Summary of");
  });

  it("passes a request that continues a stored response as it is", async () => {
    r = await rig({ config: SMALL });
    const input = longInput(25);
    await r.client.responses.create({ model: "fake-model", previous_response_id: "resp_0", input }, { headers: { "x-conversation-id": "cont" } });
    expect(sent(r)[0].input).toHaveLength(input.length);
    expect(r.upstream.summaryCalls).toBe(0);
  });
});

describe("proxy /v1/responses: function calls without their name or ids", () => {
  // Read with asText, a missing name became the tool name "undefined" in the compaction's tool calls.
  it.each([
    ["a function_call without a name", [{ type: "function_call", call_id: "c1", arguments: "{}" }, { type: "function_call_output", call_id: "c1", output: "ok" }], "input[1].name"],
    ["a function_call without a call_id", [{ type: "function_call", name: "bash", arguments: "{}" }, { type: "function_call_output", call_id: "c1", output: "ok" }], "input[1].call_id"],
    ["a function_call whose arguments are not a string", [{ type: "function_call", call_id: "c1", name: "bash", arguments: { a: 1 } }, { type: "function_call_output", call_id: "c1", output: "ok" }], "input[1].arguments"],
    ["a function_call_output without a call_id", [{ type: "function_call", call_id: "c1", name: "bash", arguments: "{}" }, { type: "function_call_output", output: "ok" }], "input[2].call_id"],
  ])("answers 400 naming the field for %s, and forwards nothing", async (_what, items, param) => {
    r = await rig();
    const res = await fetch(`${r.proxy.url}/v1/responses`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json" }, body: JSON.stringify({ model: "fake-model", input: [{ role: "user", content: "go" }, ...items] }) });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; param: string; message: string } };
    expect(body.error).toMatchObject({ code: "invalid_request", param });
    expect(body.error.message).toContain(param);
    expect(r.upstream.requests).toHaveLength(0);
  });
});
