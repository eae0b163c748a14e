import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CurrentKey } from "../../http/auth.ts"
import { groupApi } from "../../http/group-api.ts"
import { AdminTicketsGroup, TicketsGroup } from "./Api.ts"
import { notFound } from "../../http/errors.ts"
import { Tickets } from "./Tickets.ts"

const errors = {
  TicketNotFound: (e: { id: string }) => Effect.fail(notFound(`No ticket ${e.id}`)),
  SqlError: Effect.die
}

export const TicketsHttpLive = HttpApiBuilder.group(groupApi(TicketsGroup), "tickets", (handlers) =>
  Effect.gen(function*() {
    const tickets = yield* Tickets
    return handlers
      .handle("open", ({ payload }) =>
        Effect.flatMap(CurrentKey, (me) => tickets.open(me.accountId, me.keyId, payload)).pipe(Effect.catchTags(errors)))
      .handle("list", () => Effect.flatMap(CurrentKey, (me) => tickets.list(me.accountId)).pipe(Effect.orDie))
      .handle("read", ({ path }) =>
        Effect.flatMap(CurrentKey, (me) => tickets.read(me.accountId, path.id)).pipe(Effect.catchTags(errors)))
      .handle("reply", ({ path, payload }) =>
        Effect.flatMap(CurrentKey, (me) => tickets.reply(me.accountId, me.keyId, path.id, payload.body)).pipe(
          Effect.catchTags(errors)
        ))
  }))

export const AdminTicketsHttpLive = HttpApiBuilder.group(groupApi(AdminTicketsGroup), "adminTickets", (handlers) =>
  Effect.gen(function*() {
    const tickets = yield* Tickets
    return handlers
      .handle("adminList", ({ urlParams }) =>
        tickets.list(null, urlParams.status).pipe(Effect.catchTag("SqlError", Effect.die)))
      .handle("adminRead", ({ path }) =>
        tickets.read(null, path.id).pipe(Effect.catchTags(errors)))
      .handle("adminReply", ({ path, payload }) =>
        CurrentKey.pipe(
          Effect.flatMap((me) => tickets.reply(null, me.keyId, path.id, payload.body, payload.status)),
          Effect.catchTags(errors)
        ))
  }))
