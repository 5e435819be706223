// Metrics that add up: every request is counted once with its status (rejected ones too), a dry
// run is counted apart from real compactions, token totals per model and per tenant equal what
// the upstream reported to the clients, the source header says how this request was matched,
// and /health is answered by the proxy itself.
import OpenAI from "openai";
import { afterEach, describe, expect, it } from "vitest";
import { inputTokens } from "../../src/compaction/measure.js";
import type { ChatMessage } from "../../src/llm/types.js";
import { MAX_MODEL_LABELS, MAX_TENANT_LABELS, Metrics } from "../../src/proxy/metrics.js";
import { tenantOf } from "../../src/proxy/tenancy.js";
import { longConversation, rig, type Rig } from "./setup.js";

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

const scrape = async (x: Rig) => (await fetch(`${x.proxy.url}/metrics`)).text();
const sample = (text: string, name: string, labels = ""): number => {
  const line = text.split("\n").find((l) => l.startsWith(labels === "" ? `${name} ` : `${name}{${labels}} `));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
};
const sum = (text: string, name: string): number =>
  text
    .split("\n")
    .filter((l) => l.startsWith(`${name}{`))
    .reduce((a, l) => a + Number(l.split(" ").at(-1)), 0);

describe("proxy metrics", () => {
  it("counts and logs a virtual key's spend change the store gave up on", async () => {
    r = await rig();
    r.proxy.context.store.onLost?.({ virtualKey: "team-a", tokens: 1234, addIf: "aborted" });
    // Before: the PostgreSQL store dropped the change with no log line and no metric.
    expect(await scrape(r)).toMatch(/^ptc_proxy_spend_changes_lost_total 1$/m);
    expect(r.logs).toContainEqual({ event: "spend_change_lost", tenant: "vk-team-a", tokens: 1234, addIf: "aborted" });
  });

  // The model is the client's name for it: an upstream that serves any name must not let each new one add series.
  it("keeps a bounded number of model names as labels, counting the rest as other, totals unchanged", () => {
    const m = new Metrics();
    for (let i = 0; i < MAX_MODEL_LABELS + 50; i++) m.tokens(`model-${i}`, "t", 1, 2);
    const series = m.render({}).split("\n").filter((l) => l.startsWith("ptc_proxy_tokens_total{"));
    expect(series).toHaveLength(2 * (MAX_MODEL_LABELS + 1));
    expect(m.get("ptc_proxy_tokens_total", 'model="model-0",kind="prompt"')).toBe(1);
    expect(m.get("ptc_proxy_tokens_total", 'model="other",kind="completion"')).toBe(100);
    expect(sum(m.render({}), "ptc_proxy_tokens_total")).toBe(3 * (MAX_MODEL_LABELS + 50));
  });

  // Each credential is a tenant: behind an upstream that takes any key (Ollama, llama.cpp), each new key must not add series.
  it("keeps a bounded number of credential tenants as labels, counting the rest as other, and every virtual key", () => {
    const m = new Metrics();
    for (let i = 0; i < MAX_TENANT_LABELS + 50; i++) m.tokens("m", tenantOf(`sk-random-${i}`), 1, 2);
    m.tokens("m", "vk-team", 5, 5);
    const series = m.render({}).split("\n").filter((l) => l.startsWith("ptc_proxy_tenant_tokens_total{"));
    expect(series).toHaveLength(2 * (MAX_TENANT_LABELS + 2));
    expect(m.get("ptc_proxy_tenant_tokens_total", `tenant="${tenantOf("sk-random-0")}",kind="prompt"`)).toBe(1);
    expect(m.get("ptc_proxy_tenant_tokens_total", 'tenant="other",kind="completion"')).toBe(100);
    expect(m.get("ptc_proxy_tenant_tokens_total", 'tenant="vk-team",kind="prompt"')).toBe(5);
    expect(sum(m.render({}), "ptc_proxy_tenant_tokens_total")).toBe(3 * (MAX_TENANT_LABELS + 50) + 10);
  });

  it("counts every request once with its status, rejected ones included", async () => {
    r = await rig({ proxy: { adminToken: "admin" }, config: { maxBodyBytes: 4096 } });
    const base = r.proxy.url;
    const statuses: number[] = [];
    const hit = async (p: Promise<Response>) => statuses.push((await p).status);
    await hit(fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }) }));
    await hit(fetch(`${base}/v1/chat/completions`, { method: "POST", body: JSON.stringify({ messages: [] }) }));
    await hit(fetch(`${base}/v1/chat/completions`, { method: "POST", body: "x".repeat(5000) }));
    await hit(fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "x-fake-mode": "json429" }, body: JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "hi" }] }) }));
    await hit(fetch(`${base}/v1/models`));
    await hit(fetch(`${base}/nowhere`));
    await hit(fetch(`${base}/ext/context_compaction/status`));
    await hit(fetch(`${base}/health`));
    expect(statuses).toEqual([200, 400, 413, 429, 200, 400, 401, 200]);
    const text = await scrape(r);
    expect(sum(text, "ptc_proxy_requests_total")).toBe(statuses.length);
    expect(sample(text, "ptc_proxy_requests_total", 'route="chat",status="2xx"')).toBe(1);
    expect(sample(text, "ptc_proxy_requests_total", 'route="chat",status="4xx"')).toBe(2);
    expect(sample(text, "ptc_proxy_requests_total", 'route="rejected",status="4xx"')).toBe(2);
    expect(sample(text, "ptc_proxy_requests_total", 'route="admin",status="4xx"')).toBe(1);
    expect(sample(text, "ptc_proxy_requests_total", 'route="local",status="2xx"')).toBe(1);
    // /health never reached the upstream.
    expect(r.upstream.requests.some((q) => q.path.includes("health"))).toBe(false);
  });

  it("counts a dry-run compaction apart from real ones", async () => {
    // usage-ratio with a window the conversation never nears: only the admin's compactions count.
    r = await rig({ proxy: { adminToken: "admin" }, config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 } } } });
    await r.client.chat.completions.create({ model: "fake-model", messages: longConversation(30) }, { headers: { "x-conversation-id": "dry" } });
    const compact = (dryRun: boolean) => fetch(`${r?.proxy.url}/ext/context_compaction/compact`, { method: "POST", headers: { authorization: "Bearer admin" }, body: JSON.stringify({ conversation: "dry", dryRun }) });
    expect((await compact(true)).status).toBe(200);
    let text = await scrape(r);
    expect(sample(text, "ptc_proxy_compactions_total", 'outcome="succeeded"')).toBe(0);
    expect(sample(text, "ptc_proxy_dry_runs_total")).toBe(1);
    expect(r.logs.filter((l) => l.event === "compaction")).toHaveLength(0);
    expect(r.logs.filter((l) => l.event === "compaction_dry_run")).toHaveLength(1);
    await compact(false);
    text = await scrape(r);
    expect(sample(text, "ptc_proxy_compactions_total", 'outcome="succeeded"')).toBe(1);
    expect(sample(text, "ptc_proxy_dry_runs_total")).toBe(1);
  });

  it("counts the prompt with the shared measure when the upstream reports no usage", async () => {
    r = await rig();
    // A stream where the client asked for no usage: the upstream sends none, so none is reported.
    const stream = await r.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "count me" }], stream: true, stream_options: { include_usage: false } });
    for await (const chunk of stream) void chunk;
    const text = await scrape(r);
    expect(sample(text, "ptc_proxy_estimated_prompt_tokens_total")).toBe(inputTokens([{ role: "user", content: "count me" }]));
    expect(sample(text, "ptc_proxy_tokens_total", 'model="fake-model",kind="prompt"')).toBe(0);
  });

  it("charges the images of a prompt whose stream reports no usage (ten screenshots by URL: 7,650 tokens)", async () => {
    r = await rig();
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: "user", content: Array.from({ length: 10 }, (_, i) => ({ type: "image_url" as const, image_url: { url: `https://cdn.example.com/s${i}.png` } })) }];
    const stream = await r.client.chat.completions.create({ model: "fake-model", messages, stream: true, stream_options: { include_usage: false } });
    for await (const chunk of stream) void chunk;
    const charged = sample(await scrape(r), "ptc_proxy_estimated_prompt_tokens_total");
    expect(charged).toBe(inputTokens(messages as ChatMessage[]));
    expect(charged).toBeGreaterThan(7_650);
  });

  it("totals tokens per model and per tenant as the upstream reported them, and says how each request was matched", async () => {
    r = await rig();
    const other = new OpenAI({ baseURL: `${r.proxy.url}/v1`, apiKey: "sk-other", maxRetries: 0 });
    let prompt = 0;
    let completion = 0;
    const history = longConversation(3);
    const first = await r.client.chat.completions.create({ model: "fake-model", messages: history }).withResponse();
    expect(first.response.headers.get("x-ptc-conversation-source")).toBe("new");
    const next = [...history, { role: "assistant" as const, content: first.data.choices[0].message.content ?? "" }, { role: "user" as const, content: "and then?" }];
    const second = await r.client.chat.completions.create({ model: "fake-model", messages: next }).withResponse();
    expect(second.response.headers.get("x-ptc-conversation-source")).toBe("prefix");
    const third = await other.chat.completions.create({ model: "other-model", messages: history }, { headers: { "x-conversation-id": "x" } }).withResponse();
    expect(third.response.headers.get("x-ptc-conversation-source")).toBe("header:x-conversation-id");
    for (const x of [first, second]) {
      prompt += x.data.usage?.prompt_tokens ?? 0;
      completion += x.data.usage?.completion_tokens ?? 0;
    }
    const text = await scrape(r);
    expect(sample(text, "ptc_proxy_tokens_total", 'model="fake-model",kind="prompt"')).toBe(prompt);
    expect(sample(text, "ptc_proxy_tokens_total", 'model="fake-model",kind="completion"')).toBe(completion);
    expect(sample(text, "ptc_proxy_tokens_total", 'model="other-model",kind="prompt"')).toBe(third.data.usage?.prompt_tokens);
    expect(sample(text, "ptc_proxy_tenant_tokens_total", `tenant="${tenantOf("sk-client-key")}",kind="prompt"`)).toBe(prompt);
    expect(sample(text, "ptc_proxy_tenant_tokens_total", `tenant="${tenantOf("sk-other")}",kind="prompt"`)).toBe(third.data.usage?.prompt_tokens);
    expect(sample(text, "ptc_proxy_estimated_prompt_tokens_total")).toBe(0);
    expect(text).toContain("# TYPE ptc_proxy_overhead_seconds histogram");
    expect(sample(text, "ptc_proxy_overhead_seconds_count")).toBe(3);
  });
});

describe("proxy metrics: request bodies held", () => {
  // maxInFlightBodyBytes refuses requests with 503 past its total, and docs/proxy.md asks for it to
  // be sized to the proxy's memory: without a gauge of what is held, neither could be seen.
  it("reports the bytes of request bodies held against maxInFlightBodyBytes, and the total", async () => {
    r = await rig({ config: { maxInFlightBodyBytes: 5_000_000 } });
    const body = JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: "x".repeat(10_000) }] });
    const held = fetch(`${r.proxy.url}/v1/chat/completions`, { method: "POST", headers: { authorization: "Bearer sk-client-key", "content-type": "application/json", "x-fake-mode": "hold" }, body });
    await expect.poll(() => r?.upstream.held).toBe(1);
    const text = await scrape(r);
    expect(sample(text, "ptc_proxy_body_bytes_in_flight")).toBe(Buffer.byteLength(body));
    expect(sample(text, "ptc_proxy_body_bytes_limit")).toBe(5_000_000);
    expect(text).toContain("# TYPE ptc_proxy_body_bytes_in_flight gauge");
    r.upstream.release();
    expect((await held).status).toBe(200);
    await expect.poll(async () => sample(await scrape(r as Rig), "ptc_proxy_body_bytes_in_flight")).toBe(0);
  });
});
