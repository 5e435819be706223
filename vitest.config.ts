import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    pool: "forks",
    // A PostgreSQL server for the proxy replica tests (started only when absent; see the file).
    globalSetup: ["test/support/postgres-global.ts"],
  },
});
