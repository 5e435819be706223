// The stores' drivers, better-sqlite3 and pg, are optional peer dependencies: only proxy users
// need them, so they are loaded when a store opens, and a missing one is named with what to run.
import { createRequire } from "node:module";

/** An optional driver (better-sqlite3, pg) is missing or unbuilt; the message says what to run. */
export class MissingDriverError extends Error {
  override readonly name = "MissingDriverError";
}

const nodeRequire = createRequire(import.meta.url);

/** An optional CommonJS driver, loaded on first use (`require` loads it synchronously, once). */
export function loadDriver(name: string, why: string, require: (id: string) => unknown = nodeRequire): unknown {
  try {
    return require(name);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (/could not locate the bindings file/i.test((e as Error).message)) {
      throw new MissingDriverError(`${name} is installed but its native module was not built (were install scripts skipped?): run \`npm rebuild ${name}\``);
    }
    if (code !== "MODULE_NOT_FOUND" && code !== "ERR_MODULE_NOT_FOUND") throw e;
    throw new MissingDriverError(`${why}, an optional dependency that is not installed: run \`npm install ${name}\`, then start the proxy again`);
  }
}
