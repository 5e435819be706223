// OpenAI's /v1/responses through the proxy with the official client: a long input is compacted by
// the same machinery as chat completions (instructions kept, the summary reused on the next turn),
// function calls stay with their outputs, and a request continuing a stored response passes as it is.
import type OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { key, rig, type Rig } from "./setup.js";

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
    expect((await r.proxy.context.store.get(key("resp-1")))?.reportedTokens).toBeGreaterThan(0);
    await r.client.responses.create({ model: "fake-model", instructions: "Be terse.", input: [...input, { role: "assistant", content: "ok" }, { role: "user", content: "more" }] }, { headers: { "x-conversation-id": "resp-1" } });
    expect(r.upstream.summaryCalls).toBe(1);
    expect(sent(r)[1].input.length).toBeLessThan(input.length);
  });

  it("passes a request that continues a stored response as it is", async () => {
    r = await rig({ config: SMALL });
    const input = longInput(25);
    await r.client.responses.create({ model: "fake-model", previous_response_id: "resp_0", input }, { headers: { "x-conversation-id": "cont" } });
    expect(sent(r)[0].input).toHaveLength(input.length);
    expect(r.upstream.summaryCalls).toBe(0);
  });
});
