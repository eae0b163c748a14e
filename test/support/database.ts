/** Fresh databases for tests: each test file (or test) gets its own, on the run's PostgreSQL. */
import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"

export const adminUrl = (): string => inject("databaseAdminUrl")

const withUrl = (url: string, database: string) => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

/** Creates an empty database and returns its URL (migrations run when an appliance starts on it). */
export const freshDatabase = async (): Promise<string> => {
  const name = `t_${randomBytes(6).toString("hex")}`
  const client = new pg.Client({ connectionString: adminUrl() })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  return withUrl(adminUrl(), name)
}

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
