// Runs the fake upstream or the proxy in its own process for the benchmark, so the client's load
// generator, the upstream and the proxy do not share one event loop. Talks to the parent over IPC:
// sends its URL once listening, closes on "stop". The proxy's store is a SQLite file in a temp dir,
// or the postgres:// URL given.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startProxy } from "../../src/proxy/index.js";
import { startFakeUpstream } from "../../test/support/fake-openai.js";

const [role, upstreamUrl, adminToken, db] = process.argv.slice(2);
const send = (m: string) => process.send?.(m);
const server =
  role === "upstream"
    ? await startFakeUpstream({ record: false })
    : await startProxy({ upstream: upstreamUrl, port: 0, db: db ?? join(mkdtempSync(join(tmpdir(), "ptc-proxy-bench-")), "bench.db"), adminToken, logger: () => {} });
send(server.url);
process.once("message", () => void server.close().then(() => process.disconnect()));
