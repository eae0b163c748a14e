/**
 * Starts PostgreSQL once per test run (the embedded cluster, or the server named by DATABASE_URL)
 * and hands its admin URL to every test file, which then makes databases of its own. Compiles
 * Herald first when a source is newer than the build, so that appliances spawned by tests in
 * parallel do not each compile it (bin/herald.mjs).
 *
 * Migrates one template database once: a test's database is a copy of it (CREATE DATABASE …
 * TEMPLATE, a file copy of a fraction of a second) instead of an empty one that every appliance
 * start then migrates (3.5 s each under the suite's load, in most of its 170 files).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import pg from "pg"
import type { TestProject } from "vitest/node"
import { buildServer, bundleIsStale } from "../../scripts/build-server.mjs"
import { startEmbeddedPostgres } from "../../src/db/embedded-postgres.ts"
import { runMigrations } from "../../src/db/migrator.ts"
import { TEMPLATE_DATABASE, withDatabase } from "./database-url.ts"

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
    await migrateTemplate(external)
    return
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-test-pg-"))
  fs.chmodSync(dir, 0o755)
  const scope = Effect.runSync(Scope.make())
  const cluster = await Effect.runPromise(
    startEmbeddedPostgres(dir).pipe(Scope.extend(scope), Effect.withLogSpan("test-postgres"))
  )
  project.provide("databaseAdminUrl", cluster.adminUrl)
  await migrateTemplate(cluster.adminUrl)
  return async () => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** (Re)creates the template database and migrates it; its connections are closed when it returns. */
const migrateTemplate = async (adminUrl: string) => {
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE}`)
    await admin.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`)
  } finally {
    await admin.end()
  }
  const client = PgClient.layer({ url: Redacted.make(withDatabase(adminUrl, TEMPLATE_DATABASE)) })
  await Effect.runPromise(runMigrations.pipe(Effect.provide(client), Effect.scoped))
}
