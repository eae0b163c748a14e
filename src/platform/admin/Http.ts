import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { requireAdmin } from "../../http/auth.ts"
import { HeraldApi } from "../../http/api.ts"
import { conflict, notFound, validationFailed } from "../../http/errors.ts"
import { Accounts } from "../accounts/Accounts.ts"
import { ApiKeys } from "../keys/ApiKeys.ts"

const accountErrors = {
  AccountNotFound: (e: { id: string }) => Effect.fail(notFound(`No account ${e.id}`)),
  SqlError: Effect.die
}

const planErrors = {
  ...accountErrors,
  UnknownPackage: (e: { packageId: string }) => Effect.fail(validationFailed(`Unknown package ${e.packageId}`, "package_id"))
}

const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const AdminHttpLive = HttpApiBuilder.group(HeraldApi, "admin", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const keys = yield* ApiKeys
    return handlers
      .handle("createAccount", ({ payload }) =>
        requireAdmin.pipe(
          Effect.zipRight(accounts.create({
            name: payload.name,
            email: payload.email,
            password: payload.password,
            packageId: payload.package_id
          })),
          Effect.catchTags({
            ...planErrors,
            EmailTaken: (e) => Effect.fail(conflict(`An account with email ${e.email} exists`, "email_taken"))
          })
        ))
      .handle("createAccountKey", ({ path, payload }) =>
        requireAdmin.pipe(
          Effect.zipRight(accounts.get(path.id)),
          Effect.zipRight(keys.create(path.id, payload.label)),
          Effect.catchTags({ AccountNotFound: accountErrors.AccountNotFound, SqlError: Effect.die })
        ))
      .handle("listAccounts", () =>
        requireAdmin.pipe(Effect.zipRight(accounts.list()), Effect.map((items) => ({ items })), Effect.catchTags(accountErrors)))
      .handle("getAccount", ({ path }) => requireAdmin.pipe(Effect.zipRight(accounts.get(path.id)), Effect.catchTags(accountErrors)))
      .handle("suspend", ({ path }) =>
        requireAdmin.pipe(Effect.zipRight(accounts.setStatus(path.id, "suspended")), Effect.catchTags(accountErrors)))
      .handle("unsuspend", ({ path }) =>
        requireAdmin.pipe(Effect.zipRight(accounts.setStatus(path.id, "active")), Effect.catchTags(accountErrors)))
      .handle("unpause", ({ path }) =>
        requireAdmin.pipe(
          Effect.zipRight(now),
          Effect.flatMap((at) => accounts.setPaused(path.id, null, at)),
          Effect.catchTags(accountErrors)
        ))
      .handle("assignPlan", ({ path, payload }) =>
        Effect.gen(function*() {
          const admin = yield* requireAdmin
          return yield* accounts.assignPlan(path.id, payload.package_id, `admin:${admin.keyId}`, yield* now)
        }).pipe(Effect.catchTags(planErrors)))
      .handle("setLimits", ({ path, payload }) =>
        requireAdmin.pipe(
          Effect.zipRight(accounts.setOverrides(path.id, {
            ...(payload.rate_per_min === undefined ? {} : { ratePerMin: payload.rate_per_min }),
            ...(payload.monthly_quota === undefined ? {} : { monthlyQuota: payload.monthly_quota })
          })),
          Effect.catchTags(accountErrors)
        ))
  }))
