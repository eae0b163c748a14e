/**
 * One page of the accounts for GET /v1/admin/accounts: the console's admin view pages on the server
 * (#28: "lists of 100,000 rows stay fast"); before, the route answered every account, one read each.
 * Oldest first, as before. The page's rows come from Accounts.get, so each has the shape it answers.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Accounts } from "../accounts/Accounts.ts"

export const accountPage = (sql: SqlClient.SqlClient, accounts: Accounts, limit: number, offset: number) =>
  Effect.gen(function*() {
    const [counted] = yield* sql<{ total: number }>`SELECT count(*)::int AS total FROM accounts`
    const ids = yield* sql<{ id: string }>`SELECT id FROM accounts ORDER BY created_at, id LIMIT ${limit} OFFSET ${offset}`
    const items = yield* Effect.forEach(ids, (row) => accounts.get(row.id))
    return { total: counted?.total ?? 0, limit, offset, items }
  })
