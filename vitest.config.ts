import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Each file gets its own database. Three workers on the 2-core CI machine: with two, the cores
    // stood idle a fifth of the run (user + sys 1,632 s in 985 s of wall time) while files waited
    // on leases, statistics flushes and child processes; a third file fills those waits (985 s →
    // 809 s and 868 s in two runs). minForks = maxForks: tinypool then never ends an idle worker mid-run, which with
    // minForks 1 ended one run in "Unhandled Rejection: Terminating worker thread".
    // Files share their worker's module cache (isolate: false): importing Effect, the platform and
    // src/ once per worker instead of once per file halved the collect phase (test/unit: 246 s →
    // 102 s summed).
    // Nothing a test file leaves behind is global: appliances are child processes, databases are
    // per file, and Effect's layers and clocks are per test.
    pool: "forks",
    poolOptions: { forks: { maxForks: 3, minForks: 3, isolate: false } }
  }
})
