/**
 * Appliance-wide secrets (and once-only marks), created once by whichever replica starts first and shared through the
 * database (`appliance_settings`), so any replica can check what another one signed: the VERP
 * return paths (src/mta/VerpSecret.ts) and the public pages' tokens (src/bulk/public/tokens.ts).
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { randomBase62 } from "../lib/ids.ts"

/** The secret named `name`, created (40 random base62 characters) if no replica has made it yet. */
export const applianceSecret = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`INSERT INTO appliance_settings (name, value) VALUES (${name}, ${randomBase62(40)}) ON CONFLICT DO NOTHING`
    const [row] = yield* sql<{ value: string }>`SELECT value FROM appliance_settings WHERE name = ${name}`
    return row!.value
  })

/**
 * Marks `name` as done for the whole appliance: true for the one caller (of any replica, ever)
 * that marked it first, false for every later one. For what must happen once, such as the first
 * start's console password (src/platform/bootstrap.ts).
 */
export const markOnce = (name: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const at = new Date(yield* Clock.currentTimeMillis).toISOString()
    const rows = yield* sql`INSERT INTO appliance_settings (name, value) VALUES (${name}, ${at})
      ON CONFLICT DO NOTHING RETURNING name`
    return rows.length > 0
  })

/**
 * The appliance-wide value named `name`, made by `make` if no replica has stored one yet (the
 * first writer wins; every replica then reads the same). For values that are not random tokens,
 * such as the TLS-RPT reports' DKIM key (src/mta/tls-rpt/appliance-key.ts).
 */
export const applianceValue = <E, R>(name: string, make: Effect.Effect<string, E, R>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [known] = yield* sql<{ value: string }>`SELECT value FROM appliance_settings WHERE name = ${name}`
    if (known !== undefined) return known.value
    yield* sql`INSERT INTO appliance_settings (name, value) VALUES (${name}, ${yield* make}) ON CONFLICT DO NOTHING`
    const [row] = yield* sql<{ value: string }>`SELECT value FROM appliance_settings WHERE name = ${name}`
    return row!.value
  })
