// vitest globalSetup: a PostgreSQL server for the replica tests. PTC_TEST_PG_URL names one already
// running (.ci/run starts its own); otherwise one is started from Debian's binaries and stopped at
// the end. Without binaries the PostgreSQL tests are skipped locally and say why, but in CI
// (CI=true) the run fails instead: a green CI must have run them.
import type { TestProject } from "vitest/node";
import { postgresBin, startPostgres } from "./postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The admin URL of a PostgreSQL server, or "" when there is none. */
    pgUrl: string;
    /** Why there is no server. */
    pgSkip: string;
  }
}

/** Files or folders given on the command line: a run of only other files needs no server. */
const wantsPostgres = (): boolean => {
  const filters = process.argv.slice(2).filter((a) => !a.startsWith("-") && a !== "run" && a !== "watch");
  return filters.length === 0 || filters.some((f) => /(store|replicas)(\.test)?(\.ts)?$|(^|\/)(test\/?|proxy\/?)$/.test(f));
};

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const given = process.env.PTC_TEST_PG_URL;
  if (given !== undefined && given !== "") {
    project.provide("pgUrl", given);
    project.provide("pgSkip", "");
    return undefined;
  }
  if (!wantsPostgres()) {
    project.provide("pgUrl", "");
    project.provide("pgSkip", "no PostgreSQL test was selected");
    return undefined;
  }
  const bin = postgresBin();
  if (!bin.ok) {
    if (process.env.CI === "true") throw new Error(`the PostgreSQL tests must run in CI: ${bin.reason}`);
    project.provide("pgUrl", "");
    project.provide("pgSkip", bin.reason);
    return undefined;
  }
  const server = await startPostgres(bin.bin);
  project.provide("pgUrl", server.url);
  project.provide("pgSkip", "");
  // Also when vitest exits without its teardown (an interrupted run): no server is left behind.
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    server.stop();
  };
  process.once("exit", stop);
  return stop;
}
