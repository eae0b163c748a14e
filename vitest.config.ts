import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file gets its own database; two workers match the 2-core CI machine. Files share their
    // worker's module cache (isolate: false): importing Effect, the platform and src/ once per
    // worker instead of once per file halved the collect phase (test/unit: 246 s → 102 s summed).
    // Nothing a test file leaves behind is global: appliances are child processes, databases are
    // per file, and Effect's layers and clocks are per test.
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } }
  }
})
