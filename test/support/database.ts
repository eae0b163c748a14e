/** Fresh databases for tests: each test file (or test) gets its own, on the run's PostgreSQL. */
import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"
import { TEMPLATE_DATABASE, withDatabase } from "./database-url.ts"

export const adminUrl = (): string => inject("databaseAdminUrl")

const createDatabase = async (template: string | undefined): Promise<string> => {
  const name = `t_${randomBytes(6).toString("hex")}`
  const client = new pg.Client({ connectionString: adminUrl() })
  await client.connect()
  try {
    await client.query(template === undefined ? `CREATE DATABASE ${name}` : `CREATE DATABASE ${name} TEMPLATE ${template}`)
  } finally {
    await client.end()
  }
  return withDatabase(adminUrl(), name)
}

/**
 * A database of its own, already migrated (a copy of the run's template): an appliance starting on
 * it finds every migration applied, as it would after an upgrade with nothing new.
 */
export const freshDatabase = (): Promise<string> => createDatabase(TEMPLATE_DATABASE)

/** An empty database, for tests of the migrations themselves (nothing applied yet). */
export const emptyDatabase = (): Promise<string> => createDatabase(undefined)

/** Runs one query on a database (for checking rows the API promised). */
export const query = async <T extends Record<string, unknown>>(
  url: string,
  text: string,
  values: ReadonlyArray<unknown> = []
): Promise<Array<T>> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const result = await client.query<T>(text, [...values])
    return result.rows
  } finally {
    await client.end()
  }
}
