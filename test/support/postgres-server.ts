// A throwaway PostgreSQL server for the proxy's replica tests, from Debian's `postgresql` package:
// initdb into a temp dir, started on a free 127.0.0.1 port with trust auth, stopped at the end.
// PostgreSQL refuses to run as root, so as root the server runs as the `postgres` user (runuser).
// Used by vitest's globalSetup (test/support/postgres-global.ts) and by bench:proxy.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres */
  readonly url: string;
  stop(): void;
}

/** The newest installed server's bin directory, or why there is none. */
export function postgresBin(): { ok: true; bin: string } | { ok: false; reason: string } {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, "bin", "pg_ctl"))) : [];
  if (versions.length === 0) return { ok: false, reason: `no PostgreSQL server binaries under ${root}/*/bin (install Debian's postgresql package: apt-get install -y postgresql)` };
  versions.sort((a, b) => Number(b) - Number(a));
  return { ok: true, bin: join(root, versions[0], "bin") };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Starts a server; throws with initdb's or pg_ctl's own output when it cannot. */
export async function startPostgres(bin: string): Promise<PostgresServer> {
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), "ptc-pg-"));
  const data = join(dir, "data");
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const run = (tool: string, args: string[]) => {
    const [cmd, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, tool), ...args]] : [join(bin, tool), args];
    const r = spawnSync(cmd, argv, { encoding: "utf8", cwd: dir });
    if (r.status !== 0) throw new Error(`${tool} failed (${r.status ?? r.signal}): ${r.stderr || r.stdout || r.error?.message}`);
  };
  const port = await freePort();
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"]);
  // Loopback only, its socket in the temp dir, and no durability: a test server holds nothing to keep.
  const options = `-h 127.0.0.1 -p ${port} -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  run("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "60", "start"]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
