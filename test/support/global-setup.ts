/**
 * Starts PostgreSQL once per test run (the embedded cluster, or the server named by DATABASE_URL)
 * and hands its admin URL to every test file, which then makes databases of its own. Compiles
 * Herald first when a source is newer than the build, so that appliances spawned by tests in
 * parallel do not each compile it (bin/herald.mjs).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, Exit, Scope } from "effect"
import type { TestProject } from "vitest/node"
import { buildServer, bundleIsStale } from "../../scripts/build-server.mjs"
import { startEmbeddedPostgres } from "../../src/db/embedded-postgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    databaseAdminUrl: string
  }
}

export default async function setup(project: TestProject) {
  if (bundleIsStale()) await buildServer()
  const external = process.env["DATABASE_URL"]
  if (external !== undefined && external !== "") {
    project.provide("databaseAdminUrl", external)
    return
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-test-pg-"))
  fs.chmodSync(dir, 0o755)
  const scope = Effect.runSync(Scope.make())
  const cluster = await Effect.runPromise(
    startEmbeddedPostgres(dir).pipe(Scope.extend(scope), Effect.withLogSpan("test-postgres"))
  )
  project.provide("databaseAdminUrl", cluster.adminUrl)
  return async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
