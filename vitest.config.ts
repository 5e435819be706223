import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // A hang detector, not a speed target: on a loaded 2-core machine a deterministic test that
    // takes 8 s alone has taken 4x that (speed targets live in the benches).
    testTimeout: 120_000,
    // Hooks too (start servers, build dist/ when a file runs alone): vitest's 10 s default is a speed target.
    hookTimeout: 120_000,
    pool: "forks",
    // A PostgreSQL server for the proxy replica tests (started only when absent; see the file).
    globalSetup: ["test/support/postgres-global.ts"],
  },
});
