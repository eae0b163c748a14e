/**
 * Start-up chores that must happen exactly once however many replicas start together: seed the
 * plan catalogue and make sure an operator can reach the appliance.
 *
 * - With `HERALD_BOOTSTRAP_KEY`: an admin account exists and a key with exactly that token belongs
 *   to it (idempotent: the token's digest is looked up first). The token is an admin's, so the
 *   configuration refuses one under 32 characters (app-config.ts): start-up stops, naming it.
 *   The variable means "this token works": a bootstrap key revoked through the API is reinstated
 *   at the next start.
 * - Without it, on an empty database: create the admin account and print one generated key once.
 *
 * Everything runs in one transaction behind the start-up advisory lock.
 */
import { SqlClient } from "@effect/sql"
import { Console, Effect, Option, Redacted } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { STARTUP_LOCK } from "../db/migrator.ts"
import { randomBase62 } from "../lib/ids.ts"
import { Accounts } from "./accounts/Accounts.ts"
import { ApiKeys } from "./keys/ApiKeys.ts"
import { hashToken } from "./keys/tokens.ts"
import { largestPlan, loadPlanCatalog } from "./plans/plan-catalog.ts"
import { seedPlans } from "./plans/Plans.ts"

const findOrCreateAdmin = (hostname: string, packageId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const admins = yield* sql<{ id: string }>`SELECT id FROM accounts WHERE is_admin ORDER BY created_at, id LIMIT 1`
    if (admins[0] !== undefined) return { id: admins[0].id, password: Option.none<string>() }
    const password = randomBase62(24)
    const admin = yield* accounts.create({
      name: "Administrator",
      email: `admin@${hostname}`,
      password,
      isAdmin: true,
      packageId
    })
    return { id: admin.id, password: Option.some(password) }
  })

export const bootstrap = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const keys = yield* ApiKeys
  const catalog = yield* loadPlanCatalog
  const packageId = largestPlan(catalog).id

  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${STARTUP_LOCK})`
    yield* seedPlans(catalog)

    if (Option.isSome(config.bootstrapKey)) {
      const token = Redacted.value(config.bootstrapKey.value)
      const existing = yield* sql<{ id: string; revoked: boolean }>`
        SELECT id, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE token_hash = ${hashToken(token)}`
      const found = existing[0]
      if (found !== undefined) {
        // The variable means "this token works": a bootstrap key revoked through the API comes back.
        if (found.revoked) {
          yield* keys.reinstate(found.id)
          yield* Effect.logWarning("bootstrap key was revoked; reinstated (HERALD_BOOTSTRAP_KEY is set)").pipe(
            Effect.annotateLogs("key_id", found.id)
          )
        }
        return
      }
      const admin = yield* findOrCreateAdmin(config.hostname, packageId)
      yield* keys.install(admin.id, "bootstrap", token)
      yield* Effect.logInfo("bootstrap key installed").pipe(Effect.annotateLogs("account_id", admin.id))
      return
    }

    const anyAccount = yield* sql`SELECT 1 FROM accounts LIMIT 1`
    if (anyAccount.length > 0) return
    const admin = yield* findOrCreateAdmin(config.hostname, packageId)
    const key = yield* keys.install(admin.id, "admin")
    // Printed to stdout (not only the log) because this is the only time the token exists in clear.
    yield* Console.log([
      "",
      "  Herald is ready. This admin API key is shown only once — store it now:",
      "",
      `    ${key.token}`,
      "",
      `  Admin account ${admin.id} (admin@${config.hostname})` +
        Option.match(admin.password, { onNone: () => "", onSome: (p) => `, password ${p}` }),
      ""
    ].join("\n"))
  }))
}).pipe(Effect.withSpan("bootstrap"))
