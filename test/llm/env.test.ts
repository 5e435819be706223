// The clients' `env` option: where their defaults come from, in place of process.env. The SDKs
// read their own variables from process.env for any option left undefined, so a client given
// its own env must leave them none undefined. Requests go to a stubbed fetch (no network): it
// records where each would have gone and with which headers.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { anthropicLlm } from "../../src/llm/anthropic.js";
import { openaiLlm } from "../../src/llm/openai.js";
import type { ChatMessage } from "../../src/llm/types.js";

const messages: ChatMessage[] = [{ role: "user", content: "hi" }];
const STRAY = ["OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "ANTHROPIC_BASE_URL", "OPENAI_CUSTOM_HEADERS", "OPENAI_LOG", "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_LOG"] as const;

let sent: Array<{ url: string; headers: Headers }> = [];
const saved = new Map<string, string | undefined>();

beforeEach(() => {
  sent = [];
  for (const k of STRAY) saved.set(k, process.env[k]);
  // The process's own settings, for another server and another account than the client's.
  process.env.OPENAI_BASE_URL = "http://127.0.0.1:9/stray/v1";
  process.env.OPENAI_ORG_ID = "org-stray";
  process.env.OPENAI_PROJECT_ID = "proj-stray";
  process.env.ANTHROPIC_BASE_URL = "http://127.0.0.1:9/stray";
  // Read by the SDKs whatever the client is given: headers added to every request (an
  // Authorization one replaces the client's key), and a log level that writes each request's body.
  process.env.OPENAI_CUSTOM_HEADERS = "Authorization: Bearer sk-host-stray\nX-Stray: openai";
  process.env.OPENAI_LOG = "debug";
  process.env.ANTHROPIC_CUSTOM_HEADERS = "X-Api-Key: sk-ant-host-stray\nX-Stray: anthropic";
  process.env.ANTHROPIC_LOG = "debug";
  vi.stubGlobal("fetch", async (url: string | URL, init: RequestInit) => {
    sent.push({ url: String(url), headers: new Headers(init.headers) });
    const anthropic = String(url).includes("/messages");
    const body = anthropic
      ? { id: "m", type: "message", role: "assistant", model: "m", content: [{ type: "text", text: "ok" }], stop_reason: "end_turn", usage: { input_tokens: 1, output_tokens: 1 } }
      : { id: "c", object: "chat.completion", created: 0, model: "m", choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }] };
    return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
  });
});

afterEach(() => {
  vi.unstubAllGlobals();
  for (const [k, v] of saved) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe("a client given its own env reads nothing from process.env", () => {
  it("openaiLlm: the base URL, organization and project come from env, else the SDK's defaults", async () => {
    await openaiLlm({ env: { OPENAI_MODEL: "m", OPENAI_API_KEY: "sk-mine" } }).complete({ messages });
    await openaiLlm({ env: { OPENAI_MODEL: "m", OPENAI_API_KEY: "sk-mine", OPENAI_BASE_URL: "http://127.0.0.1:9/mine/v1", OPENAI_ORG_ID: "org-mine", OPENAI_PROJECT_ID: "proj-mine" } }).complete({ messages });
    expect(sent.map((s) => [s.url, s.headers.get("authorization"), s.headers.get("openai-organization"), s.headers.get("openai-project")])).toEqual([
      ["https://api.openai.com/v1/chat/completions", "Bearer sk-mine", null, null],
      ["http://127.0.0.1:9/mine/v1/chat/completions", "Bearer sk-mine", "org-mine", "proj-mine"],
    ]);
  });

  it("custom headers and the log level come from env too: the process's neither reach a request nor the console", async () => {
    const logged = vi.spyOn(console, "debug").mockImplementation(() => {});
    const infos = vi.spyOn(console, "info").mockImplementation(() => {});
    try {
      await openaiLlm({ env: { OPENAI_MODEL: "m", OPENAI_API_KEY: "sk-mine" } }).complete({ messages: [{ role: "user", content: "a private message" }] });
      await anthropicLlm({ env: { ANTHROPIC_MODEL: "m", ANTHROPIC_API_KEY: "sk-ant-mine" } }).complete({ messages: [{ role: "user", content: "a private message" }] });
      await openaiLlm({ env: { OPENAI_MODEL: "m", OPENAI_API_KEY: "sk-mine", OPENAI_CUSTOM_HEADERS: "X-Mine: yes" } }).complete({ messages });
      // Before: Bearer sk-host-stray and X-Stray on both, and each body written by console.debug.
      expect(sent.map((s) => [s.headers.get("authorization") ?? s.headers.get("x-api-key"), s.headers.get("x-stray"), s.headers.get("x-mine")])).toEqual([
        ["Bearer sk-mine", null, null],
        ["Bearer sk-ant-mine", null, null],
        ["Bearer sk-mine", null, "yes"],
      ]);
      expect(JSON.stringify([...logged.mock.calls, ...infos.mock.calls])).not.toContain("a private message");
    } finally {
      logged.mockRestore();
      infos.mockRestore();
    }
  });

  it("openaiLlm without env still reads process.env", async () => {
    await openaiLlm({ model: "m", apiKey: "sk-mine" }).complete({ messages });
    expect(sent.map((s) => [s.url, s.headers.get("openai-organization"), s.headers.get("openai-project")])).toEqual([["http://127.0.0.1:9/stray/v1/chat/completions", "org-stray", "proj-stray"]]);
  });

  it("anthropicLlm: the base URL comes from env, else Anthropic's API", async () => {
    await anthropicLlm({ env: { ANTHROPIC_MODEL: "m", ANTHROPIC_API_KEY: "sk-ant-mine" } }).complete({ messages });
    await anthropicLlm({ model: "m", apiKey: "sk-ant-mine" }).complete({ messages });
    expect(sent.map((s) => [s.url, s.headers.get("authorization")])).toEqual([
      ["https://api.anthropic.com/v1/messages", "Bearer sk-ant-mine"],
      ["http://127.0.0.1:9/stray/v1/messages", "Bearer sk-ant-mine"],
    ]);
  });
});
