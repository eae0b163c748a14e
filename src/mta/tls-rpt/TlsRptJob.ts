/**
 * The daily TLS-RPT reports (RFC 8460): for each domain whose `_smtp._tls` record names `rua`
 * destinations (learnt with its MTA-STS policy, src/mta/mta-sts/MtaSts.ts), one report per UTC day
 * of the sessions the MTA had with it (delivery_attempts' tls_* columns), sent once by whichever
 * replica claims the day (tls_rpt_reports), to at most MAX_DESTINATIONS of its destinations:
 * `mailto:` as report mail from HERALD_TLSRPT_FROM, queued as system mail (no account's) that the
 * MTA signs with the appliance's TLS-RPT DKIM key,
 * `https:` as a POST through the outbound address check. A day is reported once the next has begun.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { Dns } from "../../lib/dns.ts"
import { newId } from "../../lib/ids.ts"
import { MtaConfig } from "../MtaConfig.ts"
import { writeQueue } from "../queue/enqueue.ts"
import type { StoredMessage } from "../queue/StoredMessage.ts"
import { tlsRptFrom, tlsRptKeyPem } from "./appliance-key.ts"
import { postReport } from "./deliver.ts"
import { buildReport, compressReport, reportId, reportMail, type SessionGroup } from "./report.ts"
import { makeTlsRptStore, type ReportingDomain, type SessionCount } from "./store.ts"

/** RFC 8460 lets a domain list several destinations; at most this many get each report (a bound on what one domain costs). */
export const MAX_DESTINATIONS = 2
const DAY_MS = 86_400_000

const isHttps = (destination: string) => destination.toLowerCase().startsWith("https:")

/**
 * One report mail in the queue as the stored message's `system` form (no account, no key): the
 * MIME as written here, which the MTA gives its Message-ID and signs with the appliance's key.
 */
const queueReportMail = (raw: Buffer, from: string, to: string, now: Date) =>
  Effect.gen(function*() {
    const messageId = newId("msg")
    const stored: StoredMessage = {
      _tag: "system",
      origin: "system",
      channel: "transactional",
      to: [{ email: to }],
      message: { mime_base64: raw.toString("base64") }
    }
    const context = { accountId: null, keyId: null, requestId: messageId, fromEmail: from, now }
    yield* writeQueue(context, [{ messageId, personalizationIndex: 0, subject: "TLS report", stored, recipients: [{ email: to, kind: "to" }] }])
    return messageId
  })

/** The sessions to one domain as the report counts them: without a policy, only a missing STARTTLS is a failure. */
const groupsOf = (domain: ReportingDomain, counts: ReadonlyArray<SessionCount>): ReadonlyArray<SessionGroup> =>
  counts.filter((c) => c.domain === domain.domain).map((c) => ({
    host: c.host,
    failure: c.mta_sts_mode === null && c.tls_failure !== "starttls-not-supported" ? null : c.tls_failure,
    sessions: c.sessions
  }))

export const makeTlsRptSender = Effect.gen(function*() {
  const config = yield* AppConfig
  const mta = yield* MtaConfig
  const sql = yield* SqlClient.SqlClient
  const store = yield* makeTlsRptStore
  const from = tlsRptFrom(mta.tlsRptFrom, config.bounceDomain)
  const production = config.env === "production"

  /** One domain's report to its destinations; what happened to each, in words. */
  const sendOne = (domain: ReportingDomain, start: Date, groups: ReadonlyArray<SessionGroup>, now: Date) =>
    Effect.gen(function*() {
      const input = {
        policyDomain: domain.domain,
        day: start,
        policy: domain.policy_mode === "enforce" || domain.policy_mode === "testing"
          ? { text: domain.policy_text ?? "", mx: domain.policy_mx }
          : null,
        groups,
        submitter: config.hostname,
        contact: from
      }
      const destinations = domain.tlsrpt_rua.slice(0, MAX_DESTINATIONS)
      const gz = compressReport(buildReport(input))
      const mailto = gz === null ? [] : destinations.filter((d) => !isHttps(d)).map((d) => decodeURIComponent(d.slice("mailto:".length).split("?")[0]!))
      // The MTA signs report mail with the appliance's key (src/mta/delivery/lookups.ts): made before the first is queued.
      if (mailto.length > 0) yield* Effect.provideService(tlsRptKeyPem, SqlClient.SqlClient, sql)
      // The claim and the report mail commit together: a crash between them neither loses the
      // report nor sends it twice; the MTA then delivers it like all other mail (retries, MTA-STS, VERP).
      const queued = yield* sql.withTransaction(Effect.gen(function*() {
        if (!(yield* store.claim(domain.domain, start, reportId(input), destinations, now))) return undefined
        return yield* Effect.forEach(mailto, (to) => queueReportMail(reportMail(input, from, to, gz!, now), from, to, now))
      }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
      if (queued === undefined) return undefined
      if (gz === null) return "the report is larger than the size cap; not sent"
      const outcomes: Array<string> = queued.map((id, i) => `mailto:${mailto[i]}: queued as ${id}`)
      for (const destination of destinations.filter(isHttps)) {
        outcomes.push(yield* postReport(destination, gz, production && mta.mtaStsPort === 443, mta.tlsCa))
      }
      return outcomes.join("; ")
    })

  /** The reports of the UTC day starting at `start` not yet sent by any replica; how many were sent. */
  const sendDay = (start: Date): Effect.Effect<number, never, Dns> =>
    Effect.gen(function*() {
      const now = new Date(yield* Clock.currentTimeMillis)
      const domains = yield* store.reportingDomains(start)
      const counts = yield* store.sessions(domains.map((d) => d.domain), start, new Date(start.getTime() + DAY_MS))
      let sent = 0
      for (const domain of domains) {
        const groups = groupsOf(domain, counts)
        // A day without sessions to the domain is no report (RFC 8460 §4: a report covers sessions attempted).
        if (groups.length === 0) continue
        const outcome = yield* sendOne(domain, start, groups, now)
        if (outcome === undefined) continue
        yield* store.recordOutcome(domain.domain, start, outcome)
        yield* Effect.logInfo("TLS-RPT report sent").pipe(Effect.annotateLogs({ domain: domain.domain, outcome }))
        sent += 1
      }
      return sent
    }).pipe(Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("TLS-RPT reports failed", cause), 0)))

  return { sendDay } as const
})

/** Yesterday's reports (UTC), looked at every quarter hour by every replica; the claim makes each go once. */
export const TlsRptJobLive = actorLayer(
  "tls-rpt",
  Effect.gen(function*() {
    const mta = yield* MtaConfig
    if (!mta.mtaSts) return
    const sender = yield* makeTlsRptSender
    return yield* actorLoop("tls-rpt", Effect.gen(function*() {
      const today = Math.floor((yield* Clock.currentTimeMillis) / DAY_MS) * DAY_MS
      yield* sender.sendDay(new Date(today - DAY_MS))
      return Duration.minutes(15)
    }))
  })
)
