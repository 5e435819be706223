// The admin plane, health and metrics, state across restarts, expiry and configuration updates:
// admin routes refuse without the token and are disabled without one, config updates are
// validated whole and atomic under concurrent requests, status carries no message content, and
// compact (with a dry run) works on a stored conversation.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigFile } from "../../src/proxy/config-file.js";
import { newRecord } from "../../src/proxy/chat.js";
import { startProxy } from "../../src/proxy/index.js";
import { openStore } from "../../src/proxy/store.js";
import { fragments } from "../support/hidden.js";
import { longConversation, rig, stored, tempDir, type Rig, key } from "./setup.js";

let rigs: Rig[] = [];
afterEach(async () => {
  for (const x of rigs) await x.close();
  rigs = [];
});

async function start(options: Parameters<typeof rig>[0] = {}): Promise<Rig> {
  const x = await rig({ ...options, proxy: { adminToken: "admin-secret", ...options.proxy } });
  rigs.push(x);
  return x;
}

// A 3,000-token window under usage-ratio, stated rather than left to the default strategy.
const SMALL = { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } };
const auth = { authorization: "Bearer admin-secret" };

async function admin(x: Rig, path: string, body?: unknown, headers: Record<string, string> = auth): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${x.proxy.url}/ext/context_compaction/${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("proxy admin, health and state", () => {
  it("disables the admin routes without a token and refuses a wrong one", async () => {
    const open = await start({ proxy: { adminToken: undefined } });
    for (const path of ["config", "status"]) {
      const r = await admin(open, path);
      expect(r.status).toBe(403);
      expect(JSON.stringify(r.json)).toContain("disabled");
    }
    expect((await admin(open, "compact", { conversation: "x" })).status).toBe(403);
    const guarded = await start();
    expect((await admin(guarded, "status", undefined, {})).status).toBe(401);
    expect((await admin(guarded, "status", undefined, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await admin(guarded, "config", { compaction: { enabled: false } }, { "x-admin-token": "nope" })).status).toBe(401);
    expect(guarded.proxy.context.config.current.compaction.enabled).toBe(true);
    expect((await admin(guarded, "status", undefined, { "x-admin-token": "admin-secret" })).status).toBe(200);
    // x-admin-token beside a client's own Authorization (an SDK sends its key on every call): before, 401.
    expect((await admin(guarded, "status", undefined, { authorization: "Bearer sk-client-key", "x-admin-token": "admin-secret" })).status).toBe(200);
    expect((await admin(guarded, "status", undefined, { authorization: "Bearer admin-secret", "x-admin-token": "nope" })).status).toBe(200);
    expect((await admin(guarded, "status", undefined, { authorization: "Bearer sk-client-key", "x-admin-token": "nope" })).status).toBe(401);
  });

  it("answers health, readiness and Prometheus metrics", async () => {
    const x = await start({ config: SMALL });
    expect((await fetch(`${x.proxy.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${x.proxy.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ store: "open" });
    // Balancers often probe with HEAD (HAProxy's httpchk examples): before, it answered 400 invalid_path.
    for (const path of ["/healthz", "/health", "/readyz"]) expect((await fetch(`${x.proxy.url}${path}`, { method: "HEAD" })).status, path).toBe(200);
    await x.client.chat.completions.create({ model: "fake-model", messages: longConversation(30) }, { headers: { "x-conversation-id": "m" } });
    const text = await (await fetch(`${x.proxy.url}/metrics`)).text();
    expect(text).toContain('ptc_proxy_requests_total{route="chat",status="2xx"} 1');
    expect(text).toContain('ptc_proxy_compactions_total{outcome="succeeded"} 1');
    expect(text).toMatch(/ptc_proxy_compaction_tokens_before_total \d+/);
    expect(text).toContain("# TYPE ptc_proxy_upstream_seconds histogram");
    expect(text).toMatch(/ptc_proxy_overhead_seconds_count 1/);
    expect(text).toContain("ptc_proxy_conversations 1");
  });

  it("shows config with secrets redacted and rejects a bad update whole", async () => {
    const x = await start({ config: { compaction: { summarizer: { apiKey: "sk-summary-secret", baseURL: "http://127.0.0.1:9/v1" } } } });
    const shown = await admin(x, "config");
    expect(JSON.stringify(shown.json)).not.toContain("sk-summary-secret");
    expect(JSON.stringify(x.logs)).not.toContain("secret");
    expect(JSON.stringify(shown.json)).toContain("[redacted]");
    const bad = await admin(x, "config", { idleTtlSeconds: 60, compaction: { strategy: { name: "no-such-strategy" } } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.json)).toContain('unknown strategy \\"no-such-strategy\\"');
    expect(x.proxy.context.config.current.idleTtlSeconds).toBe(7 * 24 * 3600);
    const badOption = await admin(x, "config", { compaction: { strategy: { name: "sliding-window", options: { turns: -1 } } } });
    expect(badOption.status).toBe(400);
    // Sending the redacted value back keeps the secret; the file is rewritten with it.
    const ok = await admin(x, "config", { idleTtlSeconds: 60, compaction: { summarizer: { apiKey: "[redacted]" } } });
    expect(ok.status).toBe(200);
    const file = JSON.parse(readFileSync(join(x.dir, "config.json"), "utf8")) as { idleTtlSeconds: number; compaction: { summarizer: { apiKey: string } } };
    expect(file.idleTtlSeconds).toBe(60);
    expect(file.compaction.summarizer.apiKey).toBe("sk-summary-secret");
  });

  it("applies config updates atomically while requests run", async () => {
    const x = await start({ config: SMALL });
    const strategies = [
      { name: "sliding-window", options: { turns: 2 } },
      { name: "usage-ratio", options: { threshold: 0.5 } },
    ];
    const requests = Array.from({ length: 30 }, (_, i) =>
      x.client.chat.completions.create({ model: "fake-model", messages: longConversation(4 + (i % 5), 20, "q") }, { headers: { "x-conversation-id": `c${i}` } }),
    );
    const updates = Array.from({ length: 20 }, (_, i) => admin(x, "config", { compaction: { strategy: strategies[i % 2], reserveOutputTokens: 100 + i } }));
    const [replies, results] = await Promise.all([Promise.all(requests), Promise.all(updates)]);
    expect(replies.every((r) => r.choices[0].message.content?.startsWith("reply to final question q"))).toBe(true);
    expect(results.every((r) => r.status === 200)).toBe(true);
    const file = JSON.parse(readFileSync(join(x.dir, "config.json"), "utf8")) as { compaction: { reserveOutputTokens: number; strategy: { name: string } } };
    const live = x.proxy.context.config.current;
    expect(file.compaction.reserveOutputTokens).toBe(live.compaction.reserveOutputTokens);
    expect(file.compaction.strategy).toEqual(live.compaction.strategy);
    // Each request saw one whole configuration: a sliding window's state, or a usage-ratio one, never a mix.
    for (const c of await x.proxy.context.store.list()) expect(["", "sliding-window", "usage-ratio"]).toContain(c.strategy);
  });

  it("reloads an edited config file, and keeps the running settings when the edit is invalid", async () => {
    const x = await start({ config: {}, proxy: { watchIntervalMs: 20 } });
    const file = join(x.dir, "config.json");
    writeFileSync(file, JSON.stringify({ idleTtlSeconds: 120 }));
    await expect.poll(() => x.proxy.context.config.current.idleTtlSeconds, { timeout: 2000 }).toBe(120);
    writeFileSync(file, JSON.stringify({ idleTtlSeconds: "soon" }));
    await expect.poll(() => x.logs.some((l) => l.event === "config_reload_rejected"), { timeout: 2000 }).toBe(true);
    expect(x.proxy.context.config.current.idleTtlSeconds).toBe(120);
  });

  it("keeps the virtual keys two proxies sharing one config file issue between their polls of it", async () => {
    // Polls far apart: each proxy writes before it has seen the other's write.
    const x = await start({ config: {}, proxy: { adminToken: "admin", watchIntervalMs: 3_600_000 } });
    const other = await startProxy({ upstream: x.upstream.url, port: 0, logger: () => {}, db: ":memory:", configFile: join(x.dir, "config.json"), adminToken: "admin", watchIntervalMs: 3_600_000 });
    try {
      const issue = async (url: string, name: string) => {
        const res = await fetch(`${url}/ext/context_compaction/keys`, { method: "POST", headers: { authorization: "Bearer admin" }, body: JSON.stringify({ name }) });
        return { status: res.status, key: ((await res.json()) as { key?: string }).key };
      };
      const alpha = await issue(x.proxy.url, "alpha");
      const beta = await issue(other.url, "beta");
      expect([alpha.status, beta.status]).toEqual([200, 200]);
      // Before: the second write was built on what that proxy had read, and dropped "alpha" from the file.
      const file = JSON.parse(readFileSync(join(x.dir, "config.json"), "utf8")) as { tenancy: { virtualKeys: Record<string, unknown> } };
      expect(Object.keys(file.tenancy.virtualKeys).sort()).toEqual(["alpha", "beta"]);
      expect(Object.keys(other.context.config.current.tenancy.virtualKeys).sort()).toEqual(["alpha", "beta"]);
      // A name the other proxy issued meanwhile is taken: no key silently replaces another.
      expect((await issue(x.proxy.url, "beta")).status).toBe(409);
      // A key issued on one proxy works on the other at once, not only after its next poll (before: 401 until then).
      const gamma = await issue(x.proxy.url, "gamma");
      const vk = await fetch(`${other.url}/v1/models`, { headers: { authorization: `Bearer ${gamma.key}` } });
      expect(vk.status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it("keeps every secret when the configuration GET shows is sent back, and refuses credentials in URLs without quoting them", async () => {
    const secrets = {
      upstream: "http://127.0.0.1:9/v1",
      retries: { fallbackUpstream: "https://127.0.0.1:10/v1", fallbackApiKey: "sk-fallback-secret" },
      compaction: { summarizer: { apiKey: "sk-summary-secret", baseURL: "http://127.0.0.1:11/v1" } },
    };
    const x = await start({ config: secrets });
    const before = structuredClone(x.proxy.context.config.current);
    const shown = await admin(x, "config");
    expect(JSON.stringify(shown.json)).not.toMatch(/secret/);
    // A host that reads the configuration, changes one setting and writes it all back.
    const sent = await admin(x, "config", { ...shown.json, idleTtlSeconds: 60 });
    expect(sent.status).toBe(200);
    expect(x.proxy.context.config.current).toEqual({ ...before, idleTtlSeconds: 60 });
    // A user name and password in a URL would not be sent: refused, and not echoed.
    for (const update of [{ upstream: "http://gw-user:upstream-url-secret@127.0.0.1:9/v1" }, { retries: { fallbackUpstream: "https://fb-user:fallback-url-secret@127.0.0.1:10/v1" } }, { compaction: { summarizer: { baseURL: "http://sum-user:summary-url-secret@127.0.0.1:11/v1" } } }]) {
      const refused = await admin(x, "config", update);
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.json)).toContain("user name or password in the URL is not sent");
      expect(JSON.stringify(refused.json)).not.toMatch(/secret|-user/);
    }
    expect(x.proxy.context.config.current).toEqual({ ...before, idleTtlSeconds: 60 });
  });

  it("refuses an update that is not UTF-8, saying where, and changes nothing (a Latin-1 conversation id was stored as \"Z\\uFFFDrich\")", async () => {
    const x = await start();
    const before = structuredClone(x.proxy.context.config.current);
    const res = await fetch(`${x.proxy.url}/ext/context_compaction/config`, { method: "POST", headers: { "content-type": "application/json", ...auth }, body: Buffer.from('{"conversations":{"Z\xfcrich":{"disabled":true}}}', "latin1") });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe("the request body is not UTF-8: byte 0xFC at line 1, column 21");
    expect(x.proxy.context.config.current).toEqual(before);
  });

  it("says where a config file is not JSON without quoting it: the text around the mistake may be a key", () => {
    const secret = "sk-live-Q7vX2mP9rT4w";
    const file = join(tempDir(), "config.json");
    // Unquoted (a template filled in raw), single-quoted, near the end of the file, and a file too short to be cut.
    const cases: Array<[string, string]> = [
      [`{\n  "compaction": {\n    "summarizer": { "apiKey": ${secret} }\n  }\n}\n`, "Unexpected token 's' at line 3, column 31"],
      [`{\n  "retries": { "fallbackApiKey": '${secret}' }\n}\n`, "Unexpected token ''' at line 2, column 34"],
      [`{"apiKey": ${secret.slice(0, 9)}}`, "Unexpected token 's' at line 1, column 12"],
      [`{"a":${secret.slice(0, 8)}}`, "Unexpected token 's'"],
    ];
    for (const [text, problem] of cases) {
      writeFileSync(file, text);
      const opened = ConfigFile.open(file);
      const error = opened.ok ? "" : opened.error;
      expect(error).toBe(`the config file ${file} is not valid JSON: ${problem}`);
      for (const f of fragments([secret.slice(0, 9)])) expect(error).not.toContain(f);
    }
  });

  it("reports status without message content, and compacts a conversation on demand, with a dry run", async () => {
    const x = await start({ config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 } } } });
    const history = longConversation(30);
    await x.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "ops" } });
    const status = await admin(x, "status");
    const conv = (status.json.conversations as Record<string, unknown>[])[0];
    expect(conv).toMatchObject({ id: expect.stringMatching(`^${key("ops")}#`), conversation: "ops", identitySource: "header:x-conversation-id", messageCount: history.length, compactions: 0, flagged: false, strategy: "usage-ratio" });
    expect(typeof conv.usageRatio).toBe("number");
    expect(JSON.stringify(status.json)).not.toContain("aword");
    expect(JSON.stringify(status.json)).not.toContain("TASK-a");

    const dry = await admin(x, "compact", { conversation: "ops", dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ dryRun: true, compacted: true, messagesBefore: history.length });
    const preview = dry.json.messages as { content: string }[];
    expect(preview.length).toBeLessThan(history.length);
    expect(preview[2].content).toContain("[Summary of");
    expect((await stored(x.proxy.context.store, "ops"))?.compactions).toBe(0);

    const real = await admin(x, "compact", { conversation: "ops" });
    expect(real.json).toMatchObject({ dryRun: false, compacted: true });
    expect(real.json.messages).toBeUndefined();
    expect((await stored(x.proxy.context.store, "ops"))?.compactions).toBe(1);
    // The next request of that conversation goes out compacted, without another summary.
    const calls = x.upstream.summaryCalls;
    await x.client.chat.completions.create({ model: "fake-model", messages: [...history, { role: "assistant", content: "ok" }, { role: "user", content: "go on" }] }, { headers: { "x-conversation-id": "ops" } });
    const last = x.upstream.requests.at(-1)?.body?.messages as { content: string }[];
    expect(last.length).toBeLessThan(history.length);
    expect(x.upstream.summaryCalls).toBe(calls);

    expect((await admin(x, "compact", { conversation: "nope" })).status).toBe(404);
    expect((await admin(x, "compact", {})).status).toBe(400);
  });

  it("lists status a page at a time, in id order, so one call does not carry every conversation", async () => {
    const db = join(tempDir(), "proxy.db");
    const filler = await openStore(db);
    const n = 2500;
    for (let i = 0; i < n; i++) await filler.put(newRecord({ key: `t:c${i}`, id: `c${i}`, source: "header:x-conversation-id" }, "t", Date.now(), undefined));
    await filler.close();
    const x = await start({ proxy: { db } });
    // Before: all 2,500 in one answer (with 100,000 conversations, one answer of every record), no "next".
    const first = await admin(x, "status");
    expect((first.json.conversations as unknown[]).length).toBe(1000);
    const seen: string[] = [];
    let page = first;
    for (;;) {
      seen.push(...(page.json.conversations as { id: string }[]).map((c) => c.id));
      if (page.json.next === null) break;
      page = await admin(x, `status?limit=1000&after=${encodeURIComponent(page.json.next as string)}`);
    }
    expect(seen).toHaveLength(n);
    expect(new Set(seen).size).toBe(n);
    expect(seen).toEqual([...seen].sort());
    expect(((await admin(x, "status?limit=3")).json.conversations as unknown[]).length).toBe(3);
    for (const bad of ["0", "-1", "1.5", "abc", "100001"]) {
      const r = await admin(x, `status?limit=${bad}`);
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.json)).toMatch(/limit/);
    }
  });

  it("compacts on demand a conversation of the Anthropic messages or Responses API, so its next request goes out compacted", async () => {
    const x = await start({ config: { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 } } } });
    const history = longConversation(30).filter((m) => m.role !== "system");
    const post = (path: string, body: unknown, id: string) => fetch(`${x.proxy.url}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "sk-client-key", "x-conversation-id": id }, body: JSON.stringify(body) }).then((res) => res.text());
    const anthropic = history.map((m) => ({ role: m.role, content: [{ type: "text", text: m.content as string }] }));
    const more = [{ role: "assistant", content: "ok" }, { role: "user", content: "go on" }];
    await post("/v1/messages", { model: "fake-model", max_tokens: 100, system: "sys", messages: anthropic }, "anth");
    await post("/v1/responses", { model: "fake-model", instructions: "sys", input: history }, "resp");
    for (const [id, path, body, sent] of [
      ["anth", "/v1/messages", { model: "fake-model", max_tokens: 100, system: "sys", messages: [...anthropic, ...more] }, (b: Record<string, unknown> | undefined) => b?.messages],
      ["resp", "/v1/responses", { model: "fake-model", instructions: "sys", input: [...history, ...more] }, (b: Record<string, unknown> | undefined) => b?.input],
    ] as const) {
      // Before: the Anthropic one answered "compacted" from its blocks read as chat messages, a summary the next request could not use (it went out whole); the Responses one 404.
      const dry = await admin(x, "compact", { conversation: id, dryRun: true });
      expect(dry.json, id).toMatchObject({ compacted: true, messagesBefore: history.length + 1 });
      // The preview is what would be sent, in the API's own form.
      expect(JSON.stringify(dry.json.messages), id).toContain("[Summary of");
      expect((await admin(x, "compact", { conversation: id })).json, id).toMatchObject({ compacted: true });
      const calls = x.upstream.summaryCalls;
      await post(path, body, id);
      expect((sent(x.upstream.requests.at(-1)?.body) as unknown[]).length, id).toBeLessThan(history.length);
      expect(x.upstream.summaryCalls, id).toBe(calls);
    }
  });

  it("compacts on demand through the conversation's own strategy and its keep rules, whatever it is", async () => {
    // A big window: no request compacts by itself, only the admin compact does.
    const x = await start({ config: { compaction: { contextLimits: { "fake-model": 1_000_000 } } } });
    await admin(x, "config", {
      conversations: {
        rounds: { strategy: { name: "rolling-summary", options: { roundsToRetain: 4, roundsToCompress: 50 } } },
        recaps: { strategy: { name: "recap", options: { minPreservedAssistantMessages: 3 } } },
      },
    });
    const history = longConversation(20);
    // Five replies with recap lines: 2 older than the 3 kept, under one batch of 4, so only a forced pass compacts them.
    const recapped = longConversation(4).map((m) => (m.role === "assistant" ? { ...m, content: `recap - did ${String(m.content).slice(0, 12)}\n${String(m.content)}` } : m));
    await x.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "rounds" } });
    await x.client.chat.completions.create({ model: "fake-model", messages: recapped }, { headers: { "x-conversation-id": "recaps" } });
    expect((x.upstream.requests.at(-1)?.body?.messages as unknown[]).length).toBe(recapped.length);
    expect(x.upstream.summaryCalls).toBe(0);
    // rolling-summary keeps its last 4 rounds verbatim, the final question's included (a usage-ratio stand-in kept 2 messages).
    const rounds = await admin(x, "compact", { conversation: "rounds", dryRun: true });
    expect(rounds.json).toMatchObject({ compacted: true });
    const kept = (rounds.json.messages as { content: string }[]).map((m) => m.content);
    for (const i of [17, 18, 19]) expect(kept.some((c) => c.startsWith(`question a${i}:`))).toBe(true);
    expect(kept.some((c) => c.startsWith("question a16:"))).toBe(false);
    // A strategy without a rolling summary compacts too (it was refused by a list of names).
    const recaps = await admin(x, "compact", { conversation: "recaps" });
    expect(recaps.json).toMatchObject({ compacted: true });
    expect(recaps.json.events).toEqual([expect.objectContaining({ kind: "compacted" })]);
    expect((await stored(x.proxy.context.store, "rounds"))?.strategy).toBe("rolling-summary");
    expect((await stored(x.proxy.context.store, "recaps"))?.strategy).toBe("recap");
  });

  it("keeps a summary stored under the name older versions used for every rolling strategy", async () => {
    const x = await start({ config: SMALL });
    const history = longConversation(30);
    await x.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "old" } });
    expect(x.upstream.summaryCalls).toBe(1);
    const record = await stored(x.proxy.context.store, "old");
    if (record === undefined) throw new Error("no record");
    // As a proxy before this version stored it.
    await x.proxy.context.store.put({ ...record, strategy: "rolling" });
    await x.client.chat.completions.create({ model: "fake-model", messages: [...history, { role: "assistant", content: "ok" }, { role: "user", content: "go on" }] }, { headers: { "x-conversation-id": "old" } });
    expect((x.upstream.requests.at(-1)?.body?.messages as unknown[]).length).toBeLessThan(history.length);
    expect(x.upstream.summaryCalls).toBe(1);
    expect((await stored(x.proxy.context.store, "old"))?.strategy).toBe("usage-ratio");
  });

  it("honours per-conversation settings: disabled, threshold and strategy", async () => {
    const x = await start({ config: SMALL });
    await admin(x, "config", { conversations: { off: { disabled: true }, window: { strategy: { name: "sliding-window", options: { turns: 1 } } } } });
    const history = longConversation(30);
    await x.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "off" } });
    expect((x.upstream.requests.at(-1)?.body?.messages as unknown[]).length).toBe(history.length);
    await x.client.chat.completions.create({ model: "fake-model", messages: longConversation(3) }, { headers: { "x-conversation-id": "window" } });
    expect(x.upstream.summaryCalls).toBe(0);
    expect((x.upstream.requests.at(-1)?.body?.messages as { content: string }[]).some((m) => /\d+ earlier messages omitted/.test(m.content))).toBe(true);
    const status = await admin(x, "status");
    expect((status.json.conversations as { conversation: string; strategy: string }[]).find((c) => c.conversation === "off")?.strategy).toBe("disabled");
  });

  it("shows and compacts on one proxy a conversation another proxy on the same SQLite file started, whose next request goes out compacted", async () => {
    const db = join(tempDir(), "proxy.db");
    const config = { compaction: { strategy: { name: "usage-ratio", options: {} }, contextLimits: { "fake-model": 1_000_000 } } };
    const a = await start({ config, proxy: { db } });
    // Opened before the conversation exists: it must find it in the file.
    const b = await start({ config, proxy: { db, upstream: a.upstream.url } });
    const history = longConversation(30);
    await a.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "ops" } });
    await a.proxy.context.store.flush();
    // Before: b's status listed nothing, and its compact answered 404.
    const status = await admin(b, "status");
    expect((status.json.conversations as { conversation: string }[]).map((c) => c.conversation)).toEqual(["ops"]);
    expect((await admin(b, "compact", { conversation: "ops" })).json).toMatchObject({ compacted: true });
    await b.proxy.context.store.flush();
    const calls = a.upstream.summaryCalls;
    await a.client.chat.completions.create({ model: "fake-model", messages: [...history, { role: "assistant", content: "ok" }, { role: "user", content: "go on" }] }, { headers: { "x-conversation-id": "ops" } });
    expect((a.upstream.requests.at(-1)?.body?.messages as unknown[]).length).toBeLessThan(history.length);
    expect(a.upstream.summaryCalls).toBe(calls);
  });

  it("keeps conversation state across a restart, and expires idle conversations", async () => {
    const dir = tempDir();
    const db = join(dir, "state.db");
    const history = longConversation(30);
    const first = await start({ config: SMALL, dir, proxy: { db } });
    await first.client.chat.completions.create({ model: "fake-model", messages: history }, { headers: { "x-conversation-id": "persist" } });
    expect(first.upstream.summaryCalls).toBe(1);
    await first.close();
    rigs = [];
    expect(existsSync(db)).toBe(true);

    const second = await start({ config: SMALL, dir, proxy: { db } });
    expect((await stored(second.proxy.context.store, "persist"))?.compactions).toBe(1);
    await second.client.chat.completions.create({ model: "fake-model", messages: [...history, { role: "assistant", content: "ok" }, { role: "user", content: "after restart" }] }, { headers: { "x-conversation-id": "persist" } });
    // The stored summary was reused: the restarted proxy made no summary call.
    expect(second.upstream.summaryCalls).toBe(0);
    expect((second.upstream.requests.at(-1)?.body?.messages as { content: string }[])[2].content).toContain("[Summary of");

    const store = second.proxy.context.store;
    const persisted = (await stored(store, "persist"))?.id ?? "";
    expect(await store.expire(Date.now() + 1000)).toBe(1);
    expect(await stored(store, "persist")).toBeUndefined();
    expect(await store.body(persisted)).toBeUndefined();

    // Writes that fail (here: the table is gone) make the proxy not ready until they succeed again.
    const other = new Database(db);
    other.exec("DROP TABLE conversations");
    await second.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "x" }] }, { headers: { "x-conversation-id": "w" } });
    await expect.poll(async () => (await fetch(`${second.proxy.url}/readyz`)).status).toBe(503);
    // Open to anyone, /readyz says why without the store's own words (a database's names its host,
    // port and user); they go to the log, once.
    expect(await (await fetch(`${second.proxy.url}/readyz`)).json()).toEqual({ status: "not ready", store: "write failing", config: "valid" });
    expect(second.logs.filter((l) => l.event === "store_not_ready")).toEqual([expect.objectContaining({ error: expect.stringMatching(/no such table/) })]);
    other.exec("CREATE TABLE conversations (id TEXT PRIMARY KEY, updated_at INTEGER NOT NULL, record TEXT NOT NULL)");
    other.close();
    await second.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "y" }] }, { headers: { "x-conversation-id": "w" } });
    await expect.poll(async () => (await fetch(`${second.proxy.url}/readyz`)).status).toBe(200);
    // The same failure coming back after a recovery is logged again.
    const again = new Database(db);
    again.exec("DROP TABLE conversations");
    again.close();
    await second.client.chat.completions.create({ model: "fake-model", messages: [{ role: "user", content: "z" }] }, { headers: { "x-conversation-id": "w" } });
    await expect.poll(async () => (await fetch(`${second.proxy.url}/readyz`)).status).toBe(503);
    expect(second.logs.filter((l) => l.event === "store_not_ready")).toHaveLength(2);
  });
  it("shows and compacts a conversation stored by the first version, before tenancy (no tenant, conversation or prefix list in its record)", async () => {
    const db = join(tempDir(), "old.db");
    const old = new Database(db);
    // The tables and the record as that version wrote them.
    old.exec("CREATE TABLE conversations (id TEXT PRIMARY KEY, updated_at INTEGER NOT NULL, record TEXT NOT NULL); CREATE TABLE messages (id TEXT PRIMARY KEY, messages TEXT NOT NULL); CREATE TABLE prefixes (hash TEXT PRIMARY KEY, id TEXT NOT NULL);");
    const now = Date.now();
    const record = { id: "legacy", source: "header:x-conversation-id", model: "fake-model", createdAt: now, updatedAt: now, messageCount: 64, strategy: "rolling", state: null, compactions: 0, failures: 0, flagged: false, usageRatio: 0.5, estimatedTokens: 100, calibration: 1, truncated: false, lastHash: "", lastLength: 0 };
    old.prepare("INSERT INTO conversations VALUES (?, ?, ?)").run("legacy", now, JSON.stringify(record));
    old.prepare("INSERT INTO messages VALUES (?, ?)").run("legacy", JSON.stringify({ model: "fake-model", messages: longConversation(30) }));
    old.close();
    const x = await start({ config: { ...SMALL, keepMessages: true }, proxy: { db } });
    const status = await admin(x, "status");
    expect(status.json.conversations).toEqual([expect.objectContaining({ id: "legacy", conversation: "legacy", tenant: "anon" })]);
    const compacted = await admin(x, "compact", { conversation: "legacy" });
    expect(compacted.status).toBe(200);
    expect(compacted.json).toMatchObject({ conversation: "legacy", compacted: true });
    expect(x.logs.some((l) => l.event === "internal_error")).toBe(false);
  });
});
