/**
 * Named statements for the hot queries (src/db/prepared.ts): a statement marked PREPARED is parsed
 * once per connection and run as a named statement from then on — the send's grouped read
 * (send-context.ts) paid PostgreSQL's parse and plan on every call — while unmarked statements
 * stay unnamed, and the texts named are bounded, so a connection never collects prepared
 * statements without end. Against a real PostgreSQL, through a pool of PreparingClients as the
 * appliance opens it (src/db/database.ts).
 */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PREPARED, PreparingClient, preparedName } from "../../src/db/prepared.ts"
import { freshDatabase } from "../support/database.ts"

let pool: pg.Pool

beforeAll(async () => {
  pool = new pg.Pool({ connectionString: await freshDatabase(), max: 1, Client: PreparingClient })
})
afterAll(() => pool.end())

/** The statements this session (the pool's one connection) has prepared. */
const preparedHere = async (client: pg.PoolClient) =>
  (await client.query<{ name: string; statement: string }>("SELECT name, statement FROM pg_prepared_statements")).rows

describe("prepared statements", () => {
  it("runs a marked statement named, parsed once per connection, with the same results; an unmarked one unnamed", async () => {
    const marked = `${PREPARED} SELECT $1::int + 1 AS n`
    const client = await pool.connect()
    try {
      const answers = []
      for (const n of [1, 2, 3]) answers.push((await client.query(marked, [n])).rows[0].n)
      expect(answers).toEqual([2, 3, 4])
      expect((await client.query("SELECT $1::int * 2 AS n", [21])).rows[0].n).toBe(42)
      const prepared = await preparedHere(client)
      expect(prepared).toEqual([{ name: preparedName(marked), statement: marked }])
    } finally {
      client.release()
    }
  })

  it("names at most 64 distinct texts: a marked statement whose text keeps changing is sent unnamed past that", async () => {
    const client = await pool.connect()
    try {
      for (let i = 0; i < 100; i++) expect((await client.query(`${PREPARED} SELECT ${i}::int AS n`)).rows[0].n).toBe(i)
      expect((await preparedHere(client)).length).toBeLessThanOrEqual(64)
      expect(preparedName(`${PREPARED} SELECT 99::int AS n`)).toBeUndefined()
    } finally {
      client.release()
    }
  })

  it("leaves the send's grouped read marked: it is the statement that paid a plan per call", async () => {
    const { readFile } = await import("node:fs/promises")
    const source = await readFile(new URL("../../src/transactional/send-context.ts", import.meta.url), "utf8")
    expect(source).toContain(`sql<Row & { readonly i: number }>\`${PREPARED}`)
  })
})
