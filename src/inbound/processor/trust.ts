/**
 * Whether a report that names deliveries only through its returned original's Message-ID may act
 * on them. The VERP address a report comes to is proof enough (its HMAC tag names one delivery);
 * a Message-ID is not: anyone who received the message knows it, and could name every
 * co-recipient — Bcc recipients included — in a forged feedback report or DSN. Such a report is
 * acted on only when
 * 1. it names a recipient of that message (never "every recipient" for a redacted one),
 * 2. its sender is an authenticated feedback loop: a DKIM signature that passes, or an SPF pass
 *    for the connecting IP, of a domain under one listed in config/feedback-isps.json, and the
 *    report's single From: address under that same listed domain (aligned, as DMARC would have it),
 * 3. the sending IP has had fewer than `feedbackReportsPerIpHour` reports acted on this way in the
 *    past hour.
 * Otherwise it is refused: stored as it came (kind, parse result) with the reason in
 * `inbound_messages.refusal`, and it changes nothing.
 *
 * Authentication needs the raw bytes, which went to the parse workers: they are read again, for
 * the few messages that need it (most reports come to a VERP address, or name nothing of Herald's).
 * DNS goes through the appliance's resolvers (HERALD_DNS_SERVERS). A DNS failure that leaves the
 * answer open fails the message's attempt, so it is retried later rather than refused for good.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import type { AuthenticateResult } from "mailauth"
import { AppConfig } from "../../config/app-config.ts"
import { commonJsExports } from "../../lib/commonjs.ts"
import { Dns } from "../../lib/dns.ts"
import type { InboundSettings } from "../InboundConfig.ts"
import { defaultReporters, type Reporter } from "../parse/complaint/isp.ts"
import type { Parsed } from "./InboundQueue.ts"
import { deliveriesByOriginal, deliveriesOfOriginal, type DeliveryIndex, type DeliveryKeys, deliveryByVerp } from "./mapping.ts"

/** What may be done with a report that names deliveries only through its original's Message-ID. */
export type Trust =
  | { readonly _tag: "Authenticated"; readonly as: string }
  | { readonly _tag: "Refused"; readonly reason: string }

/** The sender's authentication could not be decided (a DNS failure): the attempt is retried. */
export class ReporterCheckUnavailable extends Data.TaggedError("ReporterCheckUnavailable")<{
  readonly inboundId: string
  readonly detail: string
}> {}

const refused = (reason: string): Trust => ({ _tag: "Refused", reason })

/** The recipients a bounce or feedback report says it is about. */
const reportedRecipients = (parsed: Parsed): ReadonlyArray<string> | null => {
  const understood = parsed.understood
  if (understood.kind === "bounce") return understood.bounce.recipients.map((r) => r.email)
  if (understood.kind === "complaint") return understood.complaint.recipients
  return null
}

/** The listed feedback-loop domain `domain` is (or is under); the longest wins. */
export const listedDomainOf = (domain: string, reporters: ReadonlyArray<Reporter> = defaultReporters): string | null => {
  const d = domain.toLowerCase().replace(/\.$/, "")
  let best: string | null = null
  for (const reporter of reporters) {
    for (const listed of reporter.domains) {
      if ((d === listed || d.endsWith(`.${listed}`)) && (best === null || listed.length > best.length)) best = listed
    }
  }
  return best
}

const under = (domain: string, listed: string) => {
  const d = domain.toLowerCase()
  return d === listed || d.endsWith(`.${listed}`)
}

/**
 * How an authentication result proves a listed feedback loop sent the report ("dkim yahoo.com"),
 * a refusal saying why not, or "unavailable" when a DNS failure leaves it open.
 */
export const feedbackLoopOf = (result: AuthenticateResult, reporters: ReadonlyArray<Reporter> = defaultReporters): Trust | "unavailable" => {
  const from = result.dkim.headerFrom
  if (from.length !== 1) return refused(`not from an authenticated feedback loop: ${from.length} From: addresses`)
  const fromDomain = from[0]!.split("@").pop()!.toLowerCase()
  const listed = listedDomainOf(fromDomain, reporters)
  if (listed === null) return refused(`not from an authenticated feedback loop: ${fromDomain} is not in config/feedback-isps.json`)
  const dkim = result.dkim.results.find((r) => r.status.result === "pass" && under(r.signingDomain, listed))
  if (dkim !== undefined) return { _tag: "Authenticated", as: `dkim ${dkim.signingDomain.toLowerCase()}` }
  const spf = result.spf
  if (spf !== false && spf.status.result === "pass" && under(spf.domain, listed)) {
    return { _tag: "Authenticated", as: `spf ${spf.domain.toLowerCase()}` }
  }
  const temporary = result.dkim.results.some((r) => r.status.result === "temperror") || (spf !== false && spf.status.result === "temperror")
  if (temporary) return "unavailable"
  const dkimSeen = result.dkim.results.map((r) => `${r.signingDomain || "?"}=${r.status.result}`).join(", ") || "none"
  const spfSeen = spf === false ? "none" : `${spf.domain}=${spf.status.result}`
  return refused(`not from an authenticated feedback loop: From: ${fromDomain}, dkim ${dkimSeen}, spf ${spfSeen}`)
}

interface StoredEnvelope {
  readonly id: string
  readonly raw: Buffer | null
  readonly remote_address: string
  readonly helo: string | null
}

const HOUR_MS = 3_600_000

export const makeReportTrust = Effect.gen(function*() {
  const dns = yield* Dns
  const config = yield* AppConfig
  const resolver = (name: string, type: string) => dns.resolver.resolve(name, type) as Promise<Array<string> | Array<Array<string>>>

  const authenticateStored = (stored: StoredEnvelope, mailFrom: string) =>
    Effect.tryPromise(async () => {
      // Loaded on the first report to judge, not at start-up (its module tree is ~0.1 s of a start).
      const { authenticate } = commonJsExports(await import("mailauth"))
      return authenticate(stored.raw!, {
        ip: stored.remote_address.replace(/^::ffff:/i, ""),
        ...(stored.helo === null ? {} : { helo: stored.helo }),
        sender: mailFrom,
        mta: config.hostname,
        resolver,
        disableArc: true,
        disableDmarc: true,
        disableBimi: true
      })
    }).pipe(
      Effect.map((result) => feedbackLoopOf(result)),
      Effect.catchAll((error) => Effect.succeed(refused(`the sender could not be authenticated: ${String(error.error).slice(0, 200)}`))),
      Effect.flatMap((trust) =>
        trust === "unavailable"
          ? Effect.fail(new ReporterCheckUnavailable({ inboundId: stored.id, detail: "DNS temporary failure" }))
          : Effect.succeed(trust)
      )
    )

  /**
   * For each message of a group, in order: null when it needs no judging (its VERP address names
   * its delivery, or it names nothing Herald sent), else what may be done with it.
   */
  const judge = (group: ReadonlyArray<Parsed>, keys: ReadonlyArray<DeliveryKeys>, index: DeliveryIndex, settings: InboundSettings) =>
    Effect.gen(function*() {
      const decisions: Array<Trust | null> = group.map(() => null)
      const pending: Array<number> = []
      group.forEach((parsed, i) => {
        const recipients = reportedRecipients(parsed)
        const k = keys[i]!
        if (recipients === null || deliveryByVerp(index, k) !== null) return
        const rows = deliveriesOfOriginal(index, k)
        if (rows.length === 0) return
        if (deliveriesByOriginal(index, k, recipients).length === 0) {
          decisions[i] = refused(recipients.length === 0
            ? "names no recipient: a report quoting a Message-ID must name the recipient it is about"
            : `names no recipient of message ${rows[0]!.message_id}: ${recipients.slice(0, 5).join(", ")}`)
          return
        }
        pending.push(i)
      })
      if (pending.length === 0) return decisions

      const sql = yield* SqlClient.SqlClient
      const stored = new Map((yield* sql<StoredEnvelope>`
        SELECT id, raw, remote_address, helo FROM inbound_messages
        WHERE id = ANY(${pending.map((i) => group[i]!.message.id)})`).map((row) => [row.id, row]))
      const checked = yield* Effect.forEach(pending, (i) => {
        const row = stored.get(group[i]!.message.id)
        if (row === undefined || row.raw === null) return Effect.succeed(refused("the raw message is gone: its sender cannot be authenticated"))
        return authenticateStored(row, group[i]!.message.mail_from)
      }, { concurrency: 4 })

      // The per-IP limit: reports acted on in the past hour, and those of this group before.
      const ips = [...new Set(pending.map((i) => stored.get(group[i]!.message.id)?.remote_address ?? ""))]
      const since = new Date(group[0]!.now.getTime() - HOUR_MS)
      const counted = new Map((yield* sql<{ remote_address: string; acted: number }>`
        SELECT remote_address, count(*)::int AS acted FROM inbound_messages
        WHERE authenticated_as IS NOT NULL AND refusal IS NULL AND remote_address = ANY(${ips}) AND processed_at >= ${since}
        GROUP BY remote_address`).map((row) => [row.remote_address, row.acted]))
      pending.forEach((i, n) => {
        const trust = checked[n]!
        const ip = stored.get(group[i]!.message.id)?.remote_address ?? ""
        if (trust._tag === "Authenticated") {
          const acted = counted.get(ip) ?? 0
          if (acted >= settings.feedbackReportsPerIpHour) {
            decisions[i] = refused(`rate limited: ${acted} reports from ${ip} acted on in the past hour (HERALD_FEEDBACK_REPORTS_PER_IP_HOUR)`)
            return
          }
          counted.set(ip, acted + 1)
        }
        decisions[i] = trust
      })
      return decisions
    })

  return { judge } as const
})
