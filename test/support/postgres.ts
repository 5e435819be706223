// Per-test databases on the globalSetup's PostgreSQL server: each test file gets its own, so files
// running in parallel never see each other's conversations.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";

/** The server's admin URL, or undefined with the reason printed once (local runs without PostgreSQL). */
export function postgresUrl(): string | undefined {
  const url = inject("pgUrl");
  if (url !== "") return url;
  if (process.env.CI === "true") throw new Error(`the PostgreSQL tests must run in CI: ${inject("pgSkip")}`);
  console.warn(`PostgreSQL tests skipped: ${inject("pgSkip")}`);
  return undefined;
}

/** A new empty database on the server; `drop` removes it (after every connection to it is closed). */
export async function freshDatabase(admin: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ptc_test_${randomBytes(6).toString("hex")}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
