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
 * - With `HERALD_BOOTSTRAP_PASSWORD`: the bootstrap admin (the key's account, else the first admin)
 *   signs in to the console with it; set at each start when it differs (an unchanged one keeps the
 *   admin's sessions).
 * - Without it, the first start prints once how to reach the console and the admin's password:
 *   the one generated with the admin, or (an admin made before the console) a new one. "Once" is
 *   remembered in the database (`appliance_settings`), and `herald accounts set-password` or the
 *   variable mark it done too, so a password an operator chose is never replaced.
 *
 * Everything runs in one transaction behind the start-up advisory lock.
 */
import { SqlClient } from "@effect/sql"
import { Console, Effect, Option, Redacted } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { STARTUP_LOCK } from "../db/migrator.ts"
import { randomBase62 } from "../lib/ids.ts"
import { Accounts } from "./accounts/Accounts.ts"
import { verifyPassword } from "./accounts/passwords.ts"
import { markOnce } from "./appliance-secrets.ts"
import { ApiKeys } from "./keys/ApiKeys.ts"
import { hashToken } from "./keys/tokens.ts"
import { largestPlan, loadPlanCatalog } from "./plans/plan-catalog.ts"
import { seedPlans } from "./plans/Plans.ts"

/** The appliance_settings mark of "an operator knows the bootstrap admin's console password". */
export const CONSOLE_PASSWORD_KNOWN = "console_password_known"

/** The bootstrap admin; its password when this start made it (the only time it exists in clear). */
interface Admin {
  readonly id: string
  readonly email: string
  readonly password: Option.Option<string>
}

const generatedPassword = () => randomBase62(24)

const findOrCreateAdmin = (hostname: string, packageId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    const admins = yield* sql<{ id: string; email: string }>`SELECT id, email FROM accounts WHERE is_admin ORDER BY created_at, id LIMIT 1`
    if (admins[0] !== undefined) return { ...admins[0], password: Option.none<string>() } satisfies Admin
    const password = generatedPassword()
    const admin = yield* accounts.create({ name: "Administrator", email: `admin@${hostname}`, password, isAdmin: true, packageId })
    return { id: admin.id, email: admin.email, password: Option.some(password) } satisfies Admin
  })

/** HERALD_BOOTSTRAP_KEY's key exists, active, on an admin account; that account. */
const installBootstrapKey = (token: string, hostname: string, packageId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const keys = yield* ApiKeys
    const existing = yield* sql<{ id: string; revoked: boolean; account_id: string; email: string }>`
      SELECT k.id, k.revoked_at IS NOT NULL AS revoked, k.account_id, a.email
      FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.token_hash = ${hashToken(token)}`
    const found = existing[0]
    if (found !== undefined) {
      // The variable means "this token works": a bootstrap key revoked through the API comes back.
      if (found.revoked) {
        yield* keys.reinstate(found.id)
        yield* Effect.logWarning("bootstrap key was revoked; reinstated (HERALD_BOOTSTRAP_KEY is set)").pipe(
          Effect.annotateLogs("key_id", found.id)
        )
      }
      return { id: found.account_id, email: found.email, password: Option.none<string>() } satisfies Admin
    }
    const admin = yield* findOrCreateAdmin(hostname, packageId)
    yield* keys.install(admin.id, "bootstrap", token)
    yield* Effect.logInfo("bootstrap key installed").pipe(Effect.annotateLogs("account_id", admin.id))
    return admin
  })

/**
 * The admin's console password: HERALD_BOOTSTRAP_PASSWORD when set; else, the first time, the
 * generated one (or a new one for an admin whose password nobody saw). Returns the password to
 * print, if any.
 */
const settleConsolePassword = (admin: Admin, wanted: Option.Option<Redacted.Redacted<string>>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const accounts = yield* Accounts
    if (Option.isSome(wanted)) {
      yield* markOnce(CONSOLE_PASSWORD_KNOWN)
      const [row] = yield* sql<{ password_hash: string }>`SELECT password_hash FROM accounts WHERE id = ${admin.id}`
      if (row !== undefined && !(yield* verifyPassword(Redacted.value(wanted.value), row.password_hash))) {
        yield* accounts.setPassword(admin.id, Redacted.value(wanted.value))
        yield* Effect.logInfo("console password set from HERALD_BOOTSTRAP_PASSWORD").pipe(Effect.annotateLogs("account_id", admin.id))
      }
      return Option.none<string>()
    }
    if (!(yield* markOnce(CONSOLE_PASSWORD_KNOWN))) return Option.none<string>()
    if (Option.isSome(admin.password)) return admin.password
    const password = generatedPassword()
    yield* accounts.setPassword(admin.id, password)
    return Option.some(password)
  })

export const bootstrap = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const config = yield* AppConfig
  const keys = yield* ApiKeys
  const catalog = yield* loadPlanCatalog
  const packageId = largestPlan(catalog).id
  const consoleUrl = `${config.baseUrl}/console/`

  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${STARTUP_LOCK})`
    yield* seedPlans(catalog)

    let newKey = Option.none<string>()
    let admin: Admin | undefined
    if (Option.isSome(config.bootstrapKey)) {
      admin = yield* installBootstrapKey(Redacted.value(config.bootstrapKey.value), config.hostname, packageId)
    } else if ((yield* sql`SELECT 1 FROM accounts LIMIT 1`).length === 0) {
      admin = yield* findOrCreateAdmin(config.hostname, packageId)
      newKey = Option.some((yield* keys.install(admin.id, "admin")).token)
    } else if (Option.isSome(config.bootstrapPassword)) {
      admin = yield* findOrCreateAdmin(config.hostname, packageId)
    }
    if (admin === undefined) return
    const password = yield* settleConsolePassword(admin, config.bootstrapPassword)
    if (Option.isNone(newKey) && Option.isNone(password)) return
    // Printed to stdout (not only the log) because this is the only time these exist in clear.
    yield* Console.log([
      "",
      ...Option.match(newKey, {
        onNone: () => [],
        onSome: (token) => ["  Herald is ready. This admin API key is shown only once — store it now:", "", `    ${token}`, ""]
      }),
      `  Admin account ${admin.id} (${admin.email})`,
      ...Option.match(password, {
        onNone: () => [],
        onSome: (p) => [
          `  The console: ${consoleUrl} — sign in as ${admin.email} with the password (shown only once):`,
          "",
          `    ${p}`,
          "",
          "  Change it with `herald accounts set-password --account <id|email>` or HERALD_BOOTSTRAP_PASSWORD."
        ]
      }),
      ""
    ].join("\n"))
  }))
}).pipe(Effect.withSpan("bootstrap"))
