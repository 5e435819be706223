// Observation masking behind the proxy, named in its configuration: old tool results reach the
// upstream as one-line placeholders, the assistant's calls and the latest result unchanged.
import type OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { rig, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

function toolLoop(steps: number): OpenAI.ChatCompletionMessageParam[] {
  const out: OpenAI.ChatCompletionMessageParam[] = [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: "Find why the build fails." },
  ];
  for (let i = 0; i < steps; i++) {
    out.push({ role: "assistant", content: `Step ${i}.`, tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "bash", arguments: JSON.stringify({ command: `make target_${i}` }) } }] });
    out.push({ role: "tool", tool_call_id: `call_${i}`, content: Array.from({ length: 40 }, (_, k) => `make[${i}]: building object_${k}.o from source_${k}.c`).join("\n") });
  }
  return out;
}

describe("observation-masking through the proxy", () => {
  it("masks old tool results by name from the configuration", async () => {
    r = await rig({ config: { compaction: { strategy: { name: "observation-masking", options: { turns: 1, polling: 1 } } } } });
    const history = toolLoop(4);
    await r.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "mask-1" } });
    const sent = (r.upstream.requests.find((q) => q.path === "/v1/chat/completions")?.body?.messages ?? []) as Array<{ role: string; content: string | null; tool_call_id?: string }>;
    expect(sent).toHaveLength(history.length);
    const tools = sent.filter((m) => m.role === "tool");
    expect(tools.slice(0, 3).map((m) => m.content)).toEqual([0, 1, 2].map((i) => `[Old bash output omitted: 40 lines; first line: make[${i}]: building object_0.o from source_0.c]`));
    expect(tools[3].content).toBe(history.at(-1)?.content);
    expect(sent.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual(["Step 0.", "Step 1.", "Step 2.", "Step 3."]);
    expect(tools.map((m) => m.tool_call_id)).toEqual(["call_0", "call_1", "call_2", "call_3"]);
  });

  it("refuses a bad masking option when the configuration is loaded", async () => {
    await expect(rig({ config: { compaction: { strategy: { name: "observation-masking", options: { neverMask: ["bash"], alwaysMask: ["bash"] } } } } })).rejects.toThrow(/neverMask and alwaysMask/);
  });
});
