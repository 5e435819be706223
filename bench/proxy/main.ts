// npm run bench:proxy: what the proxy adds to a request, against calling the same fake upstream
// directly in the same run (loopback only, bounded in time). Reports per scenario and per store
// (the embedded SQLite default, and PostgreSQL as replicas use it) the median and p99 latency
// direct and through the proxy, the added latency, requests per second at a fixed concurrency,
// and the ratios; then two replicas on one PostgreSQL database against the same direct rate; then
// the time a compaction (with its summary call) adds. PostgreSQL is Debian's server started in a
// temp dir (or BENCH_PG_URL); without one its rows are left out and the reason printed.
import http from "node:http";
import { fork } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { postgresBin, startPostgres } from "../../test/support/postgres-server.js";

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

function post(base: string, body: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(`${base}/chat/completions`);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), authorization: "Bearer sk-bench", ...headers } }, (res) => {
      res.on("data", () => {});
      res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`HTTP ${res.statusCode}`))));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/** Sequential latencies, direct and proxied interleaved so drift hits both alike. */
async function latencies(direct: string, proxied: string, body: (i: number) => string, headers: (i: number) => Record<string, string>, n: number) {
  const d: number[] = [];
  const p: number[] = [];
  for (let i = 0; i < 50; i++) {
    await post(direct, body(i), headers(i));
    await post(proxied, body(i), headers(i));
  }
  for (let i = 0; i < n; i++) {
    d.push(await post(direct, body(i), headers(i)));
    p.push(await post(proxied, body(i), headers(i)));
  }
  return { d, p };
}

/** Requests per second with `concurrency` clients for `ms`, spread over the `bases` in turn. */
async function throughput(bases: string[], body: (i: number) => string, headers: (i: number) => Record<string, string>, concurrency: number, ms: number): Promise<number> {
  const end = performance.now() + ms;
  let done = 0;
  let i = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const k = i++;
        await post(bases[k % bases.length], body(k), headers(k));
        done++;
      }
    }),
  );
  return done / (ms / 1000);
}

function conversation(messages: number, words: number, tag: string) {
  const out: { role: string; content: string }[] = [{ role: "system", content: "You are a helpful assistant." }];
  for (let i = 0; i < messages; i++) out.push({ role: i % 2 === 0 ? "user" : "assistant", content: `${tag} ${i}: ${Array.from({ length: words }, (_, j) => `w${(i + j) % 97}`).join(" ")}` });
  if (out.at(-1)?.role !== "user") out.push({ role: "user", content: `${tag} last` });
  return out;
}

const fmt = (x: number) => x.toFixed(2).padStart(8);

const PROFILE_DIR = join(tmpdir(), "ptc-proxy-profile");

/** Starts a process (the fake upstream or the proxy); resolves with its URL and a stop function. */
/** A PostgreSQL database for the bench: BENCH_PG_URL's server, or one started here; undefined with the reason when there is none. */
async function postgres(): Promise<{ url: string; stop: () => void } | { reason: string }> {
  let admin = process.env.BENCH_PG_URL;
  let stop = () => {};
  if (admin === undefined) {
    const bin = postgresBin();
    if (!bin.ok) return { reason: bin.reason };
    const server = await startPostgres(bin.bin);
    admin = server.url;
    stop = () => server.stop();
  }
  const name = `ptc_bench_${process.pid}`;
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.href, stop };
}

function worker(args: string[], profile = false): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = fork(new URL("./worker.ts", import.meta.url), args, { execArgv: ["--import", "tsx", ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [])] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("message", (url) =>
      resolve({
        url: String(url),
        stop: () =>
          new Promise((done) => {
            child.once("exit", () => done());
            child.send("stop");
          }),
      }),
    );
  });
}

const TOKEN = "bench-admin";

async function admin(base: string, path: string, body?: unknown): Promise<string> {
  const res = await fetch(`${base}${path}`, { method: body === undefined ? "GET" : "POST", headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return res.text();
}

const metric = (text: string, name: string) => Number(new RegExp(`^${name.replace(/[{}"]/g, "\\$&")} (\\S+)$`, "m").exec(text)?.[1] ?? 0);

async function main() {
  const budgetStart = performance.now();
  const upstream = await worker(["upstream"]);
  const direct = upstream.url;
  const database = await postgres();
  // BENCH_PROFILE=1 writes a CPU profile of the (SQLite) proxy process to $TMPDIR/ptc-proxy-profile.
  const proxy = await worker(["proxy", upstream.url, TOKEN], process.env.BENCH_PROFILE === "1");
  const stores: { name: string; url: string }[] = [{ name: "sqlite", url: proxy.url }];
  const replicas: { url: string; stop: () => Promise<void> }[] = [];
  if ("url" in database) {
    for (let i = 0; i < 2; i++) replicas.push(await worker(["proxy", upstream.url, TOKEN, database.url]));
    stores.push({ name: "postgres", url: replicas[0].url });
  } else console.log(`PostgreSQL rows left out: ${database.reason}\n`);
  // A 128k-token model: the pass-through scenarios are far from compaction, as most requests are.
  for (const p of [proxy, ...replicas]) await admin(p.url, "/ext/context_compaction/config", { compaction: { contextLimits: { "fake-model": 128_000 } } });
  const n = Number(process.env.BENCH_N ?? 400);
  const seconds = Number(process.env.BENCH_SECONDS ?? 2);

  const small = conversation(3, 12, "q");
  const big = conversation(100, 60, "q");
  const scenarios = [
    { name: "chat, 4 messages, explicit id", body: () => JSON.stringify({ model: "fake-model", messages: small }), headers: (i: number) => ({ "x-conversation-id": `c${i % 64}` }) },
    { name: "chat, 4 messages, streamed", body: () => JSON.stringify({ model: "fake-model", stream: true, messages: small }), headers: (i: number) => ({ "x-conversation-id": `s${i % 64}` }) },
    { name: "chat, 101 messages (35 KB), explicit id", body: () => JSON.stringify({ model: "fake-model", messages: big }), headers: (i: number) => ({ "x-conversation-id": `b${i % 64}` }) },
    { name: "chat, 101 messages, no id (prefix match)", body: () => JSON.stringify({ model: "fake-model", messages: big }), headers: () => ({}) },
    // A 100 KB line without a break, new on every request (a divider, padding, a blob): the token
    // count's worst case, once 6 s a request and a stall for every other client.
    { name: "chat, one 100 KB line without a break", body: (i: number) => JSON.stringify({ model: "fake-model", messages: [{ role: "user", content: `${i} ${"-".repeat(100_000)}` }] }), headers: (i: number) => ({ "x-conversation-id": `w${i % 64}` }) },
  ];

  console.log(`proxy bench: fake upstream and proxies in their own processes on loopback, ${n} sequential requests per side, ${seconds} s at 16 concurrent clients per side\n`);
  console.log(`${"scenario".padEnd(42)} ${"store".padEnd(8)} ${"direct p50".padStart(10)} ${"proxy p50".padStart(10)} ${"added p50".padStart(10)} ${"direct p99".padStart(10)} ${"proxy p99".padStart(10)} ${"added p99".padStart(10)} ${"rps direct".padStart(10)} ${"rps proxy".padStart(10)} ${"rps ratio".padStart(10)}`);
  for (const s of scenarios) {
    for (const store of stores) {
      const proxied = `${store.url}/v1`;
      const { d, p } = await latencies(direct, proxied, s.body, s.headers, n);
      const rd = await throughput([direct], s.body, s.headers, 16, seconds * 1000);
      const rp = await throughput([proxied], s.body, s.headers, 16, seconds * 1000);
      const [d50, p50, d99, p99] = [quantile(d, 0.5), quantile(p, 0.5), quantile(d, 0.99), quantile(p, 0.99)];
      console.log(`${s.name.padEnd(42)} ${store.name.padEnd(8)} ${fmt(d50)}ms ${fmt(p50)}ms ${fmt(p50 - d50)}ms ${fmt(d99)}ms ${fmt(p99)}ms ${fmt(p99 - d99)}ms ${rd.toFixed(0).padStart(10)} ${rp.toFixed(0).padStart(10)} ${(rp / rd).toFixed(2).padStart(9)}x`);
    }
  }
  if (replicas.length === 2) {
    // Two replicas on one database, the clients alternating between them: a conversation moves at every request.
    const s = scenarios[0];
    const rd = await throughput([direct], s.body, s.headers, 16, seconds * 1000);
    const one = await throughput([`${replicas[0].url}/v1`], s.body, s.headers, 16, seconds * 1000);
    const two = await throughput([`${replicas[0].url}/v1`, `${replicas[1].url}/v1`], s.body, s.headers, 16, seconds * 1000);
    console.log(`\nreplicas on PostgreSQL (${s.name}, 16 clients, requests alternating between replicas):`);
    console.log(`  rps direct ${rd.toFixed(0)}   one replica ${one.toFixed(0)} (${(one / rd).toFixed(2)}x)   two replicas ${two.toFixed(0)} (${(two / rd).toFixed(2)}x; 2 cores shared with the upstream, the database and the load generator)`);
  }
  for (const r of replicas) await r.stop();
  if ("url" in database) database.stop();

  // Compaction: a 61-message conversation over a 3000-token window. Each fresh conversation
  // compacts once (one summary call to the fake upstream); the same request with compaction off
  // is the baseline.
  // Each conversation has its own words, so no summary comes from the summarizer's cache.
  const runs = Number(process.env.BENCH_COMPACTIONS ?? 30);
  const bodies = Array.from({ length: runs }, (_, i) => JSON.stringify({ model: "fake-model", messages: conversation(60, 80, `long${i}`) }));
  await admin(proxy.url, "/ext/context_compaction/config", { compaction: { contextLimits: { "fake-model": 3000 }, reserveOutputTokens: 200 } });
  const compacting: number[] = [];
  const proxied = `${proxy.url}/v1`;
  for (let i = 0; i < runs; i++) compacting.push(await post(proxied, bodies[i], { "x-conversation-id": `compact-${i}` }));
  const reuse: number[] = [];
  for (let i = 0; i < runs; i++) reuse.push(await post(proxied, bodies[i], { "x-conversation-id": `compact-${i}` }));
  await admin(proxy.url, "/ext/context_compaction/config", { compaction: { enabled: false } });
  const plain: number[] = [];
  for (let i = 0; i < runs; i++) plain.push(await post(proxied, bodies[i], { "x-conversation-id": `plain-${i}` }));
  const text = await (await fetch(`${proxy.url}/metrics`)).text();
  const body = bodies[0];
  console.log(`\ncompaction, sqlite store (61 messages, ~${Math.round(body.length / 1024)} KB, window 3000 tokens, ${runs} conversations):`);
  console.log(`  request with compaction off        p50 ${fmt(quantile(plain, 0.5))}ms`);
  console.log(`  request that compacts (1 summary)  p50 ${fmt(quantile(compacting, 0.5))}ms   added ${fmt(quantile(compacting, 0.5) - quantile(plain, 0.5))}ms   ratio ${(quantile(compacting, 0.5) / quantile(plain, 0.5)).toFixed(2)}x`);
  console.log(`  next request, summary reused       p50 ${fmt(quantile(reuse, 0.5))}ms   added ${fmt(quantile(reuse, 0.5) - quantile(plain, 0.5))}ms   ratio ${(quantile(reuse, 0.5) / quantile(plain, 0.5)).toFixed(2)}x`);
  const seconds_ = metric(text, "ptc_proxy_compaction_seconds_sum");
  const count = metric(text, "ptc_proxy_compaction_seconds_count");
  console.log(`  compactions succeeded ${metric(text, 'ptc_proxy_compactions_total{outcome="succeeded"}')}, tokens ${metric(text, "ptc_proxy_compaction_tokens_before_total")} -> ${metric(text, "ptc_proxy_compaction_tokens_after_total")}, mean compaction time ${((seconds_ / Math.max(1, count)) * 1000).toFixed(2)} ms (summary call included)`);
  console.log(`\ntotal bench time ${((performance.now() - budgetStart) / 1000).toFixed(1)} s`);
  agent.destroy();
  await proxy.stop();
  await upstream.stop();
}

await main();
