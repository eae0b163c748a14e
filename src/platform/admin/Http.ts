import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { AdminGroup } from "./Api.ts"
import { conflict, notFound, validationFailed } from "../../http/errors.ts"
import { Accounts } from "../accounts/Accounts.ts"
import { Domains } from "../domains/Domains.ts"
import { ApiKeys } from "../keys/ApiKeys.ts"
import { accountPage } from "./account-page.ts"

const accountErrors = {
  AccountNotFound: (e: { id: string }) => Effect.fail(notFound(`No account ${e.id}`)),
  SqlError: Effect.die
}

const planErrors = {
  ...accountErrors,
  UnknownPackage: (e: { packageId: string }) => Effect.fail(validationFailed(`Unknown package ${e.packageId}`, "package_id"))
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const AdminHttpLive = HttpApiBuilder.group(groupApi(AdminGroup), "admin", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const keys = yield* ApiKeys
    const domains = yield* Domains
    const sql = yield* SqlClient.SqlClient
    return handlers
      .handle("createAccount", ({ payload }) =>
        accounts.create({
          name: payload.name,
          email: payload.email,
          password: payload.password,
          packageId: payload.package_id
        }).pipe(
          Effect.catchTags({
            ...planErrors,
            EmailTaken: (e) => Effect.fail(conflict(`An account with email ${e.email} exists`, "email_taken"))
          })
        ))
      .handle("createAccountKey", ({ path, payload }) =>
        accounts.get(path.id).pipe(
          Effect.zipRight(keys.create(path.id, payload.label)),
          Effect.catchTags({
            AccountNotFound: accountErrors.AccountNotFound,
            TooManyKeys: (e) => Effect.fail(conflict(e.message)),
            SqlError: Effect.die
          })
        ))
      .handle("listAccounts", ({ urlParams }) =>
        accountPage(sql, accounts, urlParams.limit, urlParams.offset).pipe(Effect.catchTags(accountErrors)))
      .handle("getAccount", ({ path }) => accounts.get(path.id).pipe(Effect.catchTags(accountErrors)))
      .handle("suspend", ({ path }) =>
        accounts.setStatus(path.id, "suspended").pipe(Effect.catchTags(accountErrors)))
      .handle("unsuspend", ({ path }) =>
        accounts.setStatus(path.id, "active").pipe(Effect.catchTags(accountErrors)))
      .handle("unpause", ({ path }) =>
        now.pipe(
          Effect.flatMap((at) => accounts.setPaused(path.id, null, at)),
          Effect.catchTags(accountErrors)
        ))
      .handle("assignPlan", ({ path, payload }) =>
        Effect.gen(function*() {
          const admin = yield* CurrentKey
          return yield* accounts.assignPlan(path.id, payload.package_id, `admin:${admin.keyId}`, yield* now)
        }).pipe(Effect.catchTags(planErrors)))
      .handle("setLimits", ({ path, payload }) =>
        accounts.setOverrides(path.id, {
          ...(payload.rate_per_min === undefined ? {} : { ratePerMin: payload.rate_per_min }),
          ...(payload.monthly_quota === undefined ? {} : { monthlyQuota: payload.monthly_quota })
        }).pipe(
          Effect.catchTags(accountErrors)
        ))
      .handle("trustDomain", ({ path }) =>
        accounts.get(path.id).pipe(
          Effect.zipRight(domains.trust(path.id, path.domain)),
          Effect.catchTags({
            ...accountErrors,
            DomainNotFound: (e) => Effect.fail(notFound(`Domain ${e.domain} is not registered for account ${path.id}`))
          })
        ))
  }))
