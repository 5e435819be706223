// A light install: better-sqlite3 (a native module) and pg (for proxy replicas) are optional peer
// dependencies that only the proxy's stores load, when they open. The interpreter, the agent and
// every CLI command but `ptc proxy` never load them, and a proxy user without one is told what to install.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { loadPg } from "../src/proxy/pg-store.js";
import { loadSqlite } from "../src/proxy/sqlite-store.js";
import { MissingDriverError } from "../src/proxy/driver.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, Record<string, unknown> | undefined>;

/** The loaded CommonJS modules (native ones included) whose path names better-sqlite3 or pg, after running `code` as an ES module. */
function sqliteLoadedBy(code: string): string[] {
  const probe = `${code}\nconst { createRequire } = await import("node:module");\nconst cache = createRequire(import.meta.url).cache;\nprocess.stdout.write(JSON.stringify(Object.keys(cache).filter((k) => /node_modules\\/(better-sqlite3|pg)\\//.test(k))));`;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", probe], { cwd: root, encoding: "utf8" })) as string[];
}

describe("a light install", () => {
  it("declares better-sqlite3 an optional peer (never installed for a user) and a dev dependency (built for the repo's proxy tests)", () => {
    expect(pkg.dependencies?.["better-sqlite3"]).toBeUndefined();
    expect(pkg.optionalDependencies?.["better-sqlite3"]).toBeUndefined();
    expect(pkg.peerDependencies?.["better-sqlite3"]).toBeDefined();
    expect(pkg.peerDependenciesMeta?.["better-sqlite3"]).toEqual({ optional: true });
    expect(pkg.devDependencies?.["better-sqlite3"]).toBe(pkg.peerDependencies?.["better-sqlite3"]);
    // npm 11 asks about every install script: better-sqlite3's builds the module; esbuild's only
    // checks its platform package (installed as its optional dependency) and swaps its CLI shim,
    // which nothing here runs (tsx and the build use esbuild's JS API).
    expect(pkg.allowScripts).toEqual({ "better-sqlite3": true, esbuild: false });
    // pg is pure JavaScript, and only replicas need it: optional too.
    expect(pkg.dependencies?.pg).toBeUndefined();
    expect(pkg.peerDependencies?.pg).toBeDefined();
    expect(pkg.peerDependenciesMeta?.pg).toEqual({ optional: true });
    expect(pkg.devDependencies?.pg).toBe(pkg.peerDependencies?.pg);
  });

  it("import { evaluate, SubAgent } from the built package never loads it, nor does a ptc command other than proxy", () => {
    const loaded = sqliteLoadedBy(`const { evaluate, SubAgent } = await import("./dist/src/index.js");\nif ((await evaluate("(+ 1 2)")).value !== 3 || typeof SubAgent.create !== "function") throw new Error("the API did not work");`);
    expect(loaded).toEqual([]);
    expect(sqliteLoadedBy(`await import("./dist/src/advanced.js");\nawait import("./dist/src/cli/commands.js");`)).toEqual([]);
    // The probe can see it: the store, once opened, has loaded it.
    expect(sqliteLoadedBy(`const { openStore } = await import("./dist/src/proxy/store.js");\nawait (await openStore(":memory:")).close();`).length).toBeGreaterThan(0);
    expect(sqliteLoadedBy(`const { loadPg } = await import("./dist/src/proxy/pg-store.js");\nloadPg();`).some((k) => k.includes("/pg/"))).toBe(true);
  });

  it("tells a proxy user without it what to install, and one with an unbuilt copy what to rebuild", () => {
    const missing = (id: string): never => {
      throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
    };
    expect(() => loadSqlite(missing)).toThrow(MissingDriverError);
    expect(() => loadPg(missing)).toThrow(/npm install pg/);
    expect(() => loadSqlite(missing)).toThrow(/npm install better-sqlite3/);
    const unbuilt = (): never => {
      throw new Error("Could not locate the bindings file. Tried: ...");
    };
    expect(() => loadSqlite(unbuilt)).toThrow(/npm rebuild better-sqlite3/);
    const other = (): never => {
      throw new Error("something else");
    };
    expect(() => loadSqlite(other)).toThrow(/^something else$/);
    expect(typeof loadSqlite()).toBe("function");
  });
});
