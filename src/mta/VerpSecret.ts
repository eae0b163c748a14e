/**
 * The appliance-wide secret that tags VERP return paths (verp.ts). Created once by whichever
 * replica starts first and shared through the database, so a bounce can be checked by any replica:
 * the MTA encodes with it, the inbound processor decodes with it.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBase62 } from "../lib/ids.ts"

export class VerpSecret extends Effect.Service<VerpSecret>()("herald/VerpSecret", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO appliance_settings (name, value) VALUES ('verp_secret', ${randomBase62(40)}) ON CONFLICT DO NOTHING`
    const [row] = yield* sql<{ value: string }>`SELECT value FROM appliance_settings WHERE name = 'verp_secret'`
    return { value: row!.value } as const
  })
}) {}
