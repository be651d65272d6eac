import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: ["default", "./test/support/count-reporter.ts"],
    // one throwaway PostgreSQL cluster per run for the PostgreSQL suites (skipped loudly when unavailable)
    globalSetup: ["./test/support/pg-global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    passWithNoTests: false,
  },
});
