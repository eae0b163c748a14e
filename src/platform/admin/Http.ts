import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { requireAdmin } from "../../http/auth.ts"
import { HeraldApi } from "../../http/api.ts"
import { conflict, notFound, validationFailed } from "../../http/errors.ts"
import { Accounts } from "../accounts/Accounts.ts"
import { ApiKeys } from "../keys/ApiKeys.ts"

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
            EmailTaken: (e) => Effect.fail(conflict(`An account with email ${e.email} exists`, "email_taken")),
            UnknownPackage: (e) => Effect.fail(validationFailed(`Unknown package ${e.packageId}`, "package_id")),
            AccountNotFound: Effect.die,
            SqlError: Effect.die
          })
        ))
      .handle("createAccountKey", ({ path, payload }) =>
        requireAdmin.pipe(
          Effect.zipRight(accounts.get(path.id)),
          Effect.zipRight(keys.create(path.id, payload.label)),
          Effect.catchTags({
            AccountNotFound: (e) => Effect.fail(notFound(`No account ${e.id}`)),
            SqlError: Effect.die
          })
        ))
  }))
