// Starts a fake upstream and a proxy in front of it, with an official `openai` client pointed at
// the proxy as an app would be. Everything listens on 127.0.0.1 with port 0 and is closed after.
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
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

/** A summarizer server that holds every call until released, or fails them all. */
export interface Summarizer {
  url: string;
  calls: number;
  /** Held calls whose client went away before an answer. */
  abandoned: number;
  release(): void;
  close(): Promise<void>;
}

export async function startSummarizer(mode: "hold" | "fail"): Promise<Summarizer> {
  const held: [ServerResponse, number][] = [];
  let released = false;
  // Reports a prompt of a token per 4 bytes of the request, as an upstream counts it roughly.
  const answer = (res: ServerResponse, bytes: number) => {
    const prompt = Math.ceil(bytes / 4);
    const body = JSON.stringify({ id: "s", object: "chat.completion", created: 1, model: "m", choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify({ ConversationSummary: "Earlier turns: questions answered." }) }, finish_reason: "stop" }], usage: { prompt_tokens: prompt, completion_tokens: 10, total_tokens: prompt + 10 } });
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
    res.end(body);
  };
  const s: Summarizer = { url: "", calls: 0, abandoned: 0, release: () => {}, close: async () => {} };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let bytes = 0;
    req.on("data", (c: Buffer) => (bytes += c.length));
    req.on("end", () => {
      s.calls++;
      if (mode === "fail") {
        res.writeHead(500, { "content-type": "application/json" });
        return res.end('{"error":{"message":"down"}}');
      }
      if (released) answer(res, bytes);
      else {
        held.push([res, bytes]);
        res.on("close", () => {
          if (!res.writableFinished) s.abandoned++;
        });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  s.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  s.release = () => {
    released = true;
    for (const [res, bytes] of held.splice(0)) answer(res, bytes);
  };
  s.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return s;
}

/** A clock for the deadline that the test moves: each wait resolves when `pass` is called. */
export function manualDeadline() {
  const waiting: (() => void)[] = [];
  return {
    wait: (_ms: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        waiting.push(resolve);
        signal.addEventListener("abort", () => {
          waiting.splice(waiting.indexOf(resolve), 1);
          resolve();
        });
      }),
    get pending() {
      return waiting.length;
    },
    pass() {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}
