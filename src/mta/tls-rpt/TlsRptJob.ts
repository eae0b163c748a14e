/**
 * The daily TLS-RPT reports (RFC 8460): for each domain whose `_smtp._tls` record names `rua`
 * destinations (learnt with its MTA-STS policy, src/mta/mta-sts/MtaSts.ts), one report per UTC day
 * of the sessions the MTA had with it (delivery_attempts' tls_* columns), sent once by whichever
 * replica claims the day (tls_rpt_reports), to at most MAX_DESTINATIONS of its destinations:
 * `mailto:` as report mail from HERALD_TLSRPT_FROM signed with the appliance's TLS-RPT DKIM key,
 * `https:` as a POST through the outbound address check. A day is reported once the next has begun.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Duration, Effect } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { actorLayer, actorLoop } from "../../lib/actor.ts"
import { Dns } from "../../lib/dns.ts"
import { signMessage } from "../dkim.ts"
import { MtaConfig } from "../MtaConfig.ts"
import { SmtpClient } from "../smtp-client.ts"
import { tlsRptFrom, tlsRptSigningKey } from "./appliance-key.ts"
import { mailReport, postReport } from "./deliver.ts"
import { buildReport, compressReport, reportId, reportMail, type SessionGroup } from "./report.ts"
import { makeTlsRptStore, type ReportingDomain, type SessionCount } from "./store.ts"

/** RFC 8460 lets a domain list several destinations; at most this many get each report (a bound on what one domain costs). */
export const MAX_DESTINATIONS = 2
const DAY_MS = 86_400_000

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
  const smtp = new SmtpClient()
  yield* Effect.addFinalizer(() => Effect.sync(() => smtp.close()))
  const from = tlsRptFrom(mta.tlsRptFrom, config.bounceDomain)
  const fromDomain = from.slice(from.lastIndexOf("@") + 1)
  const production = config.env === "production"
  const route = { smtp, heloName: config.hostname, mxPort: mta.mxPort, publicOnly: production && mta.mxPort === 25, ca: mta.tlsCa }

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
      if (!(yield* store.claim(domain.domain, start, reportId(input), destinations, now))) return undefined
      const gz = compressReport(buildReport(input))
      if (gz === null) return "the report is larger than the size cap; not sent"
      const key = yield* tlsRptSigningKey(fromDomain).pipe(Effect.provideService(SqlClient.SqlClient, sql))
      const outcomes: Array<string> = []
      for (const destination of destinations) {
        if (destination.toLowerCase().startsWith("https:")) {
          outcomes.push(yield* postReport(destination, gz, production && mta.mtaStsPort === 443, mta.tlsCa))
          continue
        }
        const to = decodeURIComponent(destination.slice("mailto:".length).split("?")[0]!)
        const signed = yield* Effect.promise(() => signMessage(reportMail(input, from, to, gz, now), key, Math.floor(now.getTime() / 1000)))
        outcomes.push(yield* mailReport(route, from, to, signed))
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
