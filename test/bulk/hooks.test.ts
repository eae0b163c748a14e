/**
 * Bulk's hooks (src/bulk/hooks.ts) are layers built once, over the database, for the ports the
 * areas below declare; their methods must still run inside the caller's transaction, as the direct
 * calls they replaced did (Effect's SqlClient transactions follow the fiber). A caller whose
 * transaction rolls back leaves nothing of the hook's work: no cancelled sequence subscription, no
 * engagement fact. Run against a real appliance's database.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReportHooks } from "../../src/inbound/processor/ports.ts"
import { insertSuppression } from "../../src/platform/suppressions/suppress.ts"
import { withServices } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type Sender, type SendingApp, startSendingApp } from "../support/sending.ts"

let rig: SendingApp
let sender: Sender

beforeAll(async () => {
  rig = await startSendingApp()
  sender = rig.sender
})
afterAll(() => rig.stop())

const api = (method: string, route: string, body?: unknown) => rig.app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
const db = <T extends Record<string, unknown>>(text: string, params: ReadonlyArray<unknown> = []) => query<T>(rig.app.databaseUrl, text, params)

class RolledBack extends Data.TaggedError("RolledBack") {}

/** Runs `effect` in a transaction that then fails, so everything it wrote is rolled back. */
const inRolledBackTransaction = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.withTransaction(Effect.zipRight(effect, new RolledBack()))).pipe(
    Effect.flip,
    Effect.map((error) => error._tag)
  )

/** A sequence with one step and `email` subscribed to it (active). */
const subscribed = async (email: string) => {
  const sequence = await api("POST", "/v1/bulk/sequences", { name: "Hooks", from_email: sender.from })
  expect((await api("POST", `/v1/bulk/sequences/${sequence.json.id}/steps`, { subject: "A", html: "<p>a</p>", offset_seconds: 86_400 })).status).toBe(201)
  const list = await api("POST", "/v1/bulk/lists", { name: `L${Math.random()}` })
  expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: [email] })).status).toBe(200)
  expect((await api("POST", `/v1/bulk/sequences/${sequence.json.id}/enroll`, { list_id: list.json.id })).json.enrolled).toBe(1)
  return sequence.json.id as string
}
const subscriptionState = async (sequenceId: string) =>
  (await db<{ state: string }>("SELECT state FROM sequence_subscriptions WHERE sequence_id = $1", [sequenceId])).map((r) => r.state)

describe("bulk's hooks run in the caller's transaction", () => {
  it("a suppression rolled back leaves the address's sequence running; committed, it cancels it", async () => {
    const email = "hooked@example.org"
    const sequenceId = await subscribed(email)
    const suppress = insertSuppression({ accountId: sender.accountId, email, reason: "manual", source: "test", at: new Date(), onExisting: "keep" })

    expect(await withServices(rig.app, inRolledBackTransaction(suppress))).toBe("RolledBack")
    expect(await subscriptionState(sequenceId)).toEqual(["active"])
    expect(await db("SELECT 1 FROM suppressions WHERE email = $1", [email])).toHaveLength(0)

    await withServices(rig.app, suppress)
    expect(await subscriptionState(sequenceId)).toEqual(["cancelled"])
  })

  it("a DSN's bounce fact rolled back with the inbound transaction leaves no engagement; committed, it is recorded", async () => {
    const email = "bounced-hook@example.org"
    const bounced = Effect.flatMap(ReportHooks, (hooks) =>
      hooks.addressBounced({ accountId: sender.accountId, email, at: new Date(), messageId: "msg_hooks", detail: "5.1.1", suppressing: false }))
    const facts = () => db("SELECT 1 FROM contact_engagement WHERE email = $1 AND type = 'bounced'", [email])

    expect(await withServices(rig.app, inRolledBackTransaction(bounced))).toBe("RolledBack")
    expect(await facts()).toHaveLength(0)

    await withServices(rig.app, bounced)
    expect(await facts()).toHaveLength(1)
  })
})
