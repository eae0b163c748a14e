/**
 * Shared by the outbound MTA tests (not a test file itself): an appliance with delivery on, wired
 * to a loopback DNS server and SMTP sink(s), and deadline-bound reads of what a delivery became —
 * its row in `deliveries` and the events it wrote to the outbox.
 */
import { expect } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { query } from "../support/database.ts"
import { type DnsRecords, type DnsServer, startDnsServer } from "../support/dns-server.ts"
import { newSender, type Sender, sendBody } from "../support/sending.ts"
import { sleep } from "../support/net.ts"

export interface DeliveryRow {
  readonly id: string
  readonly state: string
  readonly attempts: number
  readonly last_code: number | null
  readonly last_status: string | null
  readonly last_reply: string | null
  readonly next_attempt_at: Date
  readonly created_at: Date
}

export interface OutboundRig {
  readonly app: Appliance
  readonly dns: DnsServer
  readonly sender: Sender
  /** Sends one message to `to` through the API; returns its message_id and request_id. */
  readonly send: (to: string | ReadonlyArray<string>) => Promise<{ messageId: string; requestId: string }>
  readonly stop: () => Promise<void>
}

/** An appliance delivering through the loopback DNS server `records` describes, to port `mxPort`. */
export const startOutbound = async (
  mxPort: number,
  records: Record<string, DnsRecords> = {},
  env: Record<string, string> = {}
): Promise<OutboundRig> => {
  const dns = await startDnsServer(records)
  const app = await startAppliance({
    env: {
      HERALD_DNS_SERVERS: dns.address,
      HERALD_MX_PORT: String(mxPort),
      HERALD_HOSTNAME: "mta.herald.test",
      HERALD_MTA_ENABLED: "true",
      ...env
    }
  })
  const sender = await newSender(app, dns, { packageId: "growth" })
  return {
    app,
    dns,
    sender,
    send: async (to) => {
      const res = await app.request("POST", "/v1/mail/send", { token: sender.token, body: sendBody(sender, to) })
      expect(res.status).toBe(202)
      return { messageId: res.json.items[0].message_id, requestId: res.json.request_id }
    },
    stop: async () => {
      await app.stop()
      await dns.close()
    }
  }
}


/** Polls `probe` until it returns a value, or fails after `timeoutMs` saying what it waited for. */
export const until = async <T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
  const end = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await sleep(100)
  }
}

export const deliveryOf = async (app: Appliance, messageId: string, recipient: string): Promise<DeliveryRow | undefined> => {
  const rows = await query<DeliveryRow & Record<string, unknown>>(app.databaseUrl,
    `SELECT id, state, attempts, last_code, last_status, last_reply, next_attempt_at, created_at
     FROM deliveries WHERE message_id = $1 AND recipient = $2`, [messageId, recipient])
  return rows[0]
}

/** Waits until the delivery is in one of `states` (and, if given, has made `attempts` attempts). */
export const waitForState = (
  app: Appliance,
  messageId: string,
  recipient: string,
  states: ReadonlyArray<string>,
  options: { readonly attempts?: number; readonly timeoutMs?: number } = {}
): Promise<DeliveryRow> =>
  until(`the delivery to ${recipient} in ${states.join("/")}`, async () => {
    const row = await deliveryOf(app, messageId, recipient)
    return row !== undefined && states.includes(row.state) && (options.attempts === undefined || row.attempts >= options.attempts)
      ? row
      : undefined
  }, options.timeoutMs)

// Event payloads are JSON whose shape each assertion states.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export const eventsOf = (app: Appliance, name: string, messageId: string): Promise<Array<{ payload: any }>> =>
  query(app.databaseUrl, "SELECT payload FROM events WHERE event = $1 AND payload->>'message_id' = $2 ORDER BY created_at",
    [name, messageId])

/** Makes a deferred delivery due now (the MTA polls every second), optionally aging it first. */
export const makeDue = (app: Appliance, deliveryId: string, createdAt?: Date) =>
  query(app.databaseUrl,
    "UPDATE deliveries SET next_attempt_at = now(), created_at = COALESCE($2, created_at) WHERE id = $1 AND state = 'deferred'",
    [deliveryId, createdAt ?? null])
