/**
 * What the MTA provides to the ports of the areas below and beside it (DESIGN "Layout"), wired by
 * src/appliance.ts:
 * - platform's AccountHooks: a lifted pause makes the deliveries held for it due at once;
 * - platform's DeliveredCounts: the reputation policy's count of completed deliveries;
 * - inbound's ReportedDeliveries (`reportedDeliveries`): which delivery a report names, how a
 *   delivery handed over turns `bounced` when a DSN comes later, and the reply rules that decide
 *   whether a DSN's status suppresses the address. Inbound is a peer, so the MTA does not import
 *   its port: the object below has the port's shape and the composition root gives it the tag.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { AccountHooks } from "../platform/accounts/hooks.ts"
import { DeliveredCounts } from "../platform/reputation/DeliveredCounts.ts"
import { suppressesAddress } from "./classify.ts"
import { wakeHeldDeliveries } from "./queue/delivery-checks.ts"
import { markBouncedLate } from "./queue/late-bounce.ts"
import { readCompletedSince, readReportedDeliveries } from "./queue/report-reads.ts"
import { decodeVerp } from "./verp.ts"
import { VerpSecret } from "./VerpSecret.ts"

export const AccountHooksLive = Layer.effect(AccountHooks, Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return {
    sendingResumed: (accountId, at) => wakeHeldDeliveries(accountId, at).pipe(Effect.provideService(SqlClient.SqlClient, sql))
  }
}))

export const DeliveredCountsLive = Layer.effect(DeliveredCounts, Effect.map(readCompletedSince, (completedSince) => ({ completedSince })))

/** The MTA's side of inbound's ReportedDeliveries port (src/inbound/processor/ports.ts). */
export const reportedDeliveries = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const secret = (yield* VerpSecret).value
  return {
    deliveryOfReturnPath: (address: string) => decodeVerp(address, secret),
    find: yield* readReportedDeliveries,
    bouncedAfterHandover: (bounce: Parameters<typeof markBouncedLate>[0]) =>
      markBouncedLate(bounce).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
    suppressesAddress: (status: string, text: string) => suppressesAddress(status, text)
  } as const
})
