import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { AdminBlockedDomainsGroup, AdminSuppressionsGroup } from "./AdminApi.ts"
import { conflict, notFound, validationFailed } from "../../http/errors.ts"
import { Accounts } from "../accounts/Accounts.ts"
import { BlockedDomains, DEFAULT_BLOCK_REASON } from "./BlockedDomains.ts"
import { Suppressions, type SuppressionView } from "./Suppressions.ts"

type Scope = "platform" | "account"

/** An entry of one list, saying which list it is on. */
const scoped = (accountId: string | null) => (entry: SuppressionView) => ({
  email: entry.email,
  scope: accountId === null ? "platform" as const : "account" as const,
  account_id: accountId,
  reason: entry.reason,
  source: entry.source,
  created_at: entry.created_at
})

const suppressionErrors = {
  AccountNotFound: (e: { id: string }) => Effect.fail(notFound(`No account ${e.id}`)),
  SqlError: Effect.die
}

export const AdminSuppressionsHttpLive = HttpApiBuilder.group(groupApi(AdminSuppressionsGroup), "adminSuppressions", (handlers) =>
  Effect.gen(function*() {
    const suppressions = yield* Suppressions
    const accounts = yield* Accounts

    /**
     * The list a request names: null for the platform's, or an existing account's id. An
     * `account_id` beside `scope=platform` is refused rather than ignored, so that a request meant
     * for an account's list never touches the platform's.
     */
    const listOf = (scope: Scope, accountId: string | null | undefined) => {
      const given = accountId === undefined || accountId === null || accountId === "" ? null : accountId
      if (scope === "platform") {
        return given === null
          ? Effect.succeed(null)
          : Effect.fail(validationFailed("account_id is only for scope=account", "account_id"))
      }
      if (given === null) return Effect.fail(validationFailed("scope=account requires account_id", "account_id"))
      return accounts.get(given).pipe(Effect.as(given))
    }

    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.gen(function*() {
          const accountId = yield* listOf(urlParams.scope, urlParams.account_id)
          const page = yield* suppressions.list(accountId, { email: urlParams.email, limit: urlParams.limit, offset: urlParams.offset })
          return { ...page, items: page.items.map(scoped(accountId)) }
        }).pipe(Effect.catchTags(suppressionErrors)))
      .handle("add", ({ payload }) =>
        Effect.gen(function*() {
          const accountId = yield* listOf(payload.scope, payload.account_id)
          const admin = yield* CurrentKey
          const added = yield* suppressions.add(accountId, payload.email, payload.reason, `admin:${admin.keyId}`, { ifExists: "refuse" })
          return scoped(accountId)(added)
        }).pipe(Effect.catchTags({
          ...suppressionErrors,
          SuppressionExists: (e) => Effect.fail(conflict(`${e.email} is already on that suppression list`))
        })))
      .handle("remove", ({ path, urlParams }) =>
        Effect.gen(function*() {
          const accountId = yield* listOf(urlParams.scope, urlParams.account_id)
          return yield* suppressions.remove(accountId, path.email)
        }).pipe(Effect.catchTags({
          ...suppressionErrors,
          SuppressionNotFound: (e) => Effect.fail(notFound(`${e.email} is not on that suppression list`))
        })))
  }))

export const AdminBlockedDomainsHttpLive = HttpApiBuilder.group(groupApi(AdminBlockedDomainsGroup), "adminBlockedDomains", (handlers) =>
  Effect.gen(function*() {
    const blocked = yield* BlockedDomains
    return handlers
      .handle("list", ({ urlParams }) =>
        blocked.list(urlParams).pipe(
          Effect.map((page) => ({ total: page.total, limit: urlParams.limit, offset: urlParams.offset, items: page.items })),
          Effect.orDie
        ))
      .handle("add", ({ payload }) =>
        blocked.add(payload.domain, payload.reason ?? DEFAULT_BLOCK_REASON, { ifExists: "refuse" }).pipe(
          Effect.catchTags({
            BlockedDomainExists: (e) => Effect.fail(conflict(`${e.domain} is already blocked`)),
            SqlError: Effect.die
          })
        ))
      .handle("remove", ({ path }) =>
        blocked.remove(path.domain).pipe(
          Effect.catchTags({
            BlockedDomainNotFound: (e) => Effect.fail(notFound(`${e.domain} is not blocked`)),
            SqlError: Effect.die
          })
        ))
  }))
