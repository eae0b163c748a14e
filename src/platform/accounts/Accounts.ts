/**
 * Accounts (the spec's users/clients): name, email, password (scrypt), admin flag and at most one
 * active subscription to a plan.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect } from "effect"
import { newId } from "../../lib/ids.ts"
import { hashPassword } from "./passwords.ts"

export interface NewAccount {
  readonly name: string
  readonly email: string
  readonly password: string
  readonly isAdmin?: boolean
  readonly packageId?: string | undefined
}

export interface AccountView {
  readonly id: string
  readonly name: string
  readonly email: string
  readonly is_admin: boolean
  readonly status: string
  readonly package_id: string | null
  readonly created_at: string
}

export class EmailTaken extends Data.TaggedError("EmailTaken")<{ readonly email: string }> {}
export class UnknownPackage extends Data.TaggedError("UnknownPackage")<{ readonly packageId: string }> {}
export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{ readonly id: string }> {}

export class Accounts extends Effect.Service<Accounts>()("herald/Accounts", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const subscribe = (accountId: string, packageId: string, now: Date) =>
      sql`
        INSERT INTO subscriptions (id, account_id, package_id, started_at, period_start)
        VALUES (${newId("sub")}, ${accountId}, ${packageId}, ${now}, ${now})`

    const create = (input: NewAccount) =>
      Effect.gen(function*() {
        const passwordHash = yield* hashPassword(input.password)
        const now = new Date(yield* Clock.currentTimeMillis)
        if (input.packageId !== undefined) {
          const plans = yield* sql<{ id: string }>`SELECT id FROM plans WHERE id = ${input.packageId}`
          if (plans.length === 0) return yield* new UnknownPackage({ packageId: input.packageId })
        }
        const taken = yield* sql`SELECT 1 FROM accounts WHERE lower(email) = lower(${input.email})`
        if (taken.length > 0) return yield* new EmailTaken({ email: input.email })
        const id = newId("acc")
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`
            INSERT INTO accounts (id, name, email, password_hash, is_admin, created_at)
            VALUES (${id}, ${input.name}, ${input.email}, ${passwordHash}, ${input.isAdmin ?? false}, ${now})`
          if (input.packageId !== undefined) yield* subscribe(id, input.packageId, now)
        }))
        return yield* get(id)
      })

    const get = (id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{
          id: string; name: string; email: string; is_admin: boolean; status: string
          package_id: string | null; created_at: Date
        }>`
          SELECT a.id, a.name, a.email, a.is_admin, a.status, s.package_id, a.created_at
          FROM accounts a LEFT JOIN subscriptions s ON s.account_id = a.id AND s.status = 'active'
          WHERE a.id = ${id}`
        const row = rows[0]
        if (row === undefined) return yield* new AccountNotFound({ id })
        const view: AccountView = { ...row, created_at: row.created_at.toISOString() }
        return view
      })

    return { create, get, subscribe } as const
  })
}) {}
