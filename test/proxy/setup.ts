// Starts a fake upstream and a proxy in front of it, with an official `openai` client pointed at
// the proxy as an app would be. Everything listens on 127.0.0.1 with port 0 and is closed after.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { startProxy, type ProxyOptions, type RunningProxy } from "../../src/proxy/index.js";
import type { LogEvent } from "../../src/proxy/log.js";
import type { ConversationRecord, ConversationStore } from "../../src/proxy/store.js";
import { tenantOf } from "../../src/proxy/tenancy.js";
import { startFakeUpstream, type FakeUpstream, type FakeUpstreamOptions } from "../support/fake-openai.js";

export interface Rig {
  upstream: FakeUpstream;
  proxy: RunningProxy;
  client: OpenAI;
  logs: LogEvent[];
  dir: string;
  close(): Promise<void>;
}

/** A compaction deadline that never passes: tests that want one pass their own clock. */
export const never = (_ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve) => signal.addEventListener("abort", () => resolve()));

/** The store key of a conversation the rig's client (key sk-client-key) started under `id`. */
export const key = (id: string, apiKey = "sk-client-key"): string => `${tenantOf(apiKey)}:${id}`;

/** The record of the history last sent under the client id `id` (each history under an id has its own: headKey). */
export async function stored(store: ConversationStore, id: string, apiKey = "sk-client-key"): Promise<ConversationRecord | undefined> {
  const tenant = tenantOf(apiKey);
  const records = (await store.list()).filter((c) => c.tenant === tenant && c.conversation === id);
  return records.sort((x, y) => y.updatedAt - x.updatedAt)[0];
}

export const tempDir = () => mkdtempSync(join(tmpdir(), "ptc-proxy-"));

export async function rig(options: { upstream?: FakeUpstreamOptions; proxy?: Partial<ProxyOptions>; config?: Record<string, unknown>; dir?: string } = {}): Promise<Rig> {
  const upstream = await startFakeUpstream(options.upstream);
  const dir = options.dir ?? tempDir();
  let configFile = options.proxy?.configFile;
  if (options.config !== undefined) {
    configFile = join(dir, "config.json");
    writeFileSync(configFile, JSON.stringify(options.config));
  }
  const logs: LogEvent[] = [];
  const proxy = await startProxy({ upstream: upstream.url, port: 0, logger: (e) => logs.push(e), wait: never, sleep: async () => {}, ...options.proxy, ...(configFile === undefined ? {} : { configFile }) });
  const client = new OpenAI({ baseURL: `${proxy.url}/v1`, apiKey: "sk-client-key", maxRetries: 0, timeout: 5000 });
  return {
    upstream,
    proxy,
    client,
    logs,
    dir,
    async close() {
      await proxy.close();
      await upstream.close();
    },
  };
}

/** A long conversation: a system prompt, a task, then `turns` question/answer rounds of about `words` words each. */
export function longConversation(turns: number, words = 80, tag = "a"): OpenAI.ChatCompletionMessageParam[] {
  const filler = (i: number) => Array.from({ length: words }, (_, j) => `${tag}word${(i * 7 + j) % 50}`).join(" ");
  const out: OpenAI.ChatCompletionMessageParam[] = [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: `TASK-${tag}: plan the migration of the billing service.` },
    { role: "assistant", content: "Understood. Tell me more." },
  ];
  for (let i = 0; i < turns; i++) {
    out.push({ role: "user", content: `question ${tag}${i}: ${filler(i)}` });
    out.push({ role: "assistant", content: `answer ${tag}${i}: ${filler(i + 1)}` });
  }
  out.push({ role: "user", content: `final question ${tag}` });
  return out;
}
