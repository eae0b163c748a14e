/**
 * Sending domains of an account: registration (with a fresh DKIM key), the records to publish,
 * TXT verification through the configured resolver (with the state of every other record), an
 * operator's trust without DNS, and the sending decision with its grace.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Data, Effect, Option } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { isReservedName } from "../../config/dev-profile.ts"
import { Dns } from "../../lib/dns.ts"
import { newId, randomBase62 } from "../../lib/ids.ts"
import { generateDkimKeyPair } from "./dkim-keys.ts"
import type { DnsRecord } from "./Api.ts"
import { type CheckedRecord, checkRecords, isReady } from "./record-checks.ts"
import { domainRecords, returnPathDomain, sendingAllowed, verificationValue } from "./records.ts"

/** Who vouched for the domain: its verification TXT record, or an operator (no DNS check). */
export type VerifiedBy = "dns" | "operator"

export interface DomainRow {
  readonly id: string
  readonly account_id: string
  readonly domain: string
  readonly verification_token: string
  readonly verified_at: Date | null
  readonly verified_by: VerifiedBy | null
  readonly verification_lost_at: Date | null
  readonly dkim_selector: string
  readonly dkim_private_key: string
  readonly dkim_public_key: string
  readonly return_path_verified_at: Date | null
  readonly created_at: Date
}

export interface DomainView {
  readonly domain: string
  readonly verified: boolean
  readonly verified_at: string | null
  readonly verified_by: VerifiedBy | null
  readonly return_path_verified: boolean
  readonly records: ReadonlyArray<DnsRecord>
  readonly created_at: string
}

export class DomainExists extends Data.TaggedError("DomainExists")<{ readonly domain: string }> {}
export class DomainNotFound extends Data.TaggedError("DomainNotFound")<{ readonly domain: string }> {}
/** The verification TXT record is not published (yet). */
export class VerificationRecordMissing extends Data.TaggedError("VerificationRecordMissing")<{
  readonly domain: string
  readonly expected: string
}> {}
export class VerificationDnsError extends Data.TaggedError("VerificationDnsError")<{
  readonly domain: string
  readonly code: string
}> {}

export class Domains extends Effect.Service<Domains>()("herald/Domains", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const dns = yield* Dns
    const names = {
      hostname: config.hostname,
      publicIps: config.publicIps,
      smarthost: config.smarthostConfigured,
      smarthostSpfInclude: Option.getOrUndefined(config.smarthostSpfInclude)
    }
    const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

    const recordsOf = (row: DomainRow) =>
      domainRecords({
        domain: row.domain,
        verificationToken: row.verification_token,
        dkimSelector: row.dkim_selector,
        dkimPublicKey: row.dkim_public_key
      }, names)

    const view = (row: DomainRow): DomainView => ({
      domain: row.domain,
      verified: row.verified_at !== null,
      verified_at: row.verified_at?.toISOString() ?? null,
      // Rows verified before verified_by existed were verified by DNS (the migration says so too).
      verified_by: row.verified_at === null ? null : (row.verified_by ?? "dns"),
      return_path_verified: row.return_path_verified_at !== null,
      records: recordsOf(row),
      created_at: row.created_at.toISOString()
    })

    const find = (accountId: string, domain: string) =>
      sql<DomainRow>`SELECT * FROM domains WHERE account_id = ${accountId} AND domain = ${domain.toLowerCase()}`.pipe(
        Effect.map((rows) => Option.fromNullable(rows[0]))
      )

    const findOrFail = (accountId: string, domain: string) =>
      Effect.flatMap(find(accountId, domain), Option.match({
        onNone: () => Effect.fail(new DomainNotFound({ domain })),
        onSome: Effect.succeed
      }))

    const create = (accountId: string, domain: string) =>
      Effect.gen(function*() {
        const name = domain.toLowerCase()
        if (Option.isSome(yield* find(accountId, name))) return yield* new DomainExists({ domain: name })
        const keys = yield* generateDkimKeyPair
        const rows = yield* sql<DomainRow>`
          INSERT INTO domains (id, account_id, domain, verification_token, dkim_selector, dkim_private_key,
            dkim_public_key, created_at)
          VALUES (${newId("dom")}, ${accountId}, ${name}, ${randomBase62(32)}, ${keys.selector}, ${keys.privateKey},
            ${keys.publicKey}, ${yield* now})
          ON CONFLICT (account_id, domain) DO NOTHING
          RETURNING *`
        if (rows[0] === undefined) return yield* new DomainExists({ domain: name })
        if (yield* trustedByTrialProfile(accountId, name)) {
          yield* Effect.logWarning("local trial profile: a reserved domain of the first account trusted without DNS").pipe(
            Effect.annotateLogs({ account_id: accountId, domain: name })
          )
          return view(yield* markTrusted(rows[0]))
        }
        return view(rows[0])
      })

    /**
     * The local trial profile trusts what the quick start adds: a reserved name (nobody can publish
     * its records) added by the first account, the one the first start made. Nothing else, and
     * never outside the profile, which production refuses.
     */
    const trustedByTrialProfile = (accountId: string, domain: string) =>
      !config.devProfile || !isReservedName(domain)
        ? Effect.succeed(false)
        : sql<{ id: string }>`SELECT id FROM accounts ORDER BY created_at, id LIMIT 1`.pipe(
          Effect.map((rows) => rows[0]?.id === accountId)
        )

    /** Verified without DNS (verified_by: operator), so the periodic re-check leaves it alone. */
    const markTrusted = (row: DomainRow) =>
      Effect.gen(function*() {
        const updated = yield* sql<DomainRow>`
          UPDATE domains SET verified_at = coalesce(verified_at, ${yield* now}), verified_by = 'operator',
            verification_lost_at = NULL
          WHERE id = ${row.id} RETURNING *`
        return updated[0] ?? row
      })

    const list = (accountId: string) =>
      sql<DomainRow>`SELECT * FROM domains WHERE account_id = ${accountId} ORDER BY domain`.pipe(
        Effect.map((rows) => rows.map(view))
      )

    const get = (accountId: string, domain: string) => Effect.map(findOrFail(accountId, domain), view)

    const remove = (accountId: string, domain: string) =>
      Effect.gen(function*() {
        const row = yield* findOrFail(accountId, domain)
        yield* sql`DELETE FROM domains WHERE id = ${row.id}`
        return { domain: row.domain, deleted: true as const }
      })

    /**
     * Does the return-path subdomain's MX point at this appliance? None when the lookup itself
     * failed (timeout, SERVFAIL): that says nothing about the record.
     */
    const returnPathState = (domain: string) =>
      dns.mx(returnPathDomain(domain)).pipe(
        Effect.map((mx) =>
          Option.some(mx.some((r) => r.exchange.toLowerCase().replace(/\.$/, "") === config.hostname.toLowerCase()))
        ),
        Effect.catchTags({
          DnsNoRecord: () => Effect.succeed(Option.some(false)),
          DnsFailure: () => Effect.succeed(Option.none<boolean>())
        })
      )

    /**
     * Looks up every record: the verification TXT decides `verified` (missing → refused, as ever);
     * the others are reported with their state, and the return-path MX moves envelope senders. A
     * failed lookup of any of them (503) changes nothing: it says nothing of what DNS holds.
     */
    const verify = (accountId: string, domain: string) =>
      Effect.gen(function*() {
        const row = yield* findOrFail(accountId, domain)
        const checked = yield* checkRecords(dns, recordsOf(row)).pipe(
          Effect.mapError((e) => new VerificationDnsError({ domain: e.name, code: e.code }))
        )
        const at = yield* now
        yield* sql`UPDATE domains SET last_checked_at = ${at} WHERE id = ${row.id}`
        const status = (purpose: CheckedRecord["purpose"]) => checked.find((r) => r.purpose === purpose)?.status
        if (status("verification") !== "verified") {
          return yield* new VerificationRecordMissing({ domain: row.domain, expected: verificationValue(row.verification_token) })
        }
        const returnPath = status("return_path") === "verified"
        const updated = yield* sql<DomainRow>`
          UPDATE domains SET verified_at = coalesce(verified_at, ${at}), verified_by = 'dns', verification_lost_at = NULL,
            return_path_verified_at = ${returnPath ? at : null}
          WHERE id = ${row.id} RETURNING *`
        const verifiedAt = updated[0]?.verified_at ?? at
        return {
          domain: row.domain,
          verified: true,
          verified_at: verifiedAt.toISOString(),
          records: checked,
          ready: isReady(checked)
        }
      })

    /**
     * An operator vouches for the domain without DNS (a lab, a domain whose DNS they run by other
     * means): it may send, and the periodic re-check leaves it alone. Logged as a warning, since
     * nothing proves the account owns the domain.
     */
    const trust = (accountId: string, domain: string) =>
      Effect.gen(function*() {
        const row = yield* findOrFail(accountId, domain)
        const trusted = yield* markTrusted(row)
        yield* Effect.logWarning("domain trusted by an operator without a DNS check: it may send and is not re-checked").pipe(
          Effect.annotateLogs({ account_id: accountId, domain: row.domain })
        )
        return view(trusted)
      })

    /**
     * The domain's state for sending from it at `at`: the moment of the request for the send path,
     * the moment of release for the scheduler (so the grace is judged when the send fires).
     */
    const sendingState = (accountId: string, domain: string, at: Date) =>
      Effect.gen(function*() {
        const row = yield* find(accountId, domain)
        if (Option.isNone(row)) return { state: "not_registered" as const, row: Option.none<DomainRow>() }
        const state = sendingAllowed(
          { verifiedAt: row.value.verified_at, verificationLostAt: row.value.verification_lost_at },
          at,
          config.domainGraceHours
        )
        return { state, row }
      })

    /**
     * Re-checks verified domains not checked since `staleBefore`: a vanished TXT record starts the
     * grace window (verification_lost_at), a record that is back ends it. The return-path MX is
     * looked up again too: published since the last check → envelope senders move to the
     * subdomain (return_path_verified_at set); gone → back to HERALD_BOUNCE_DOMAIN (cleared), so
     * bounces never go to a subdomain that no longer reaches the appliance. A DNS failure changes
     * nothing (it says nothing about the record). Domains an operator trusted are left alone.
     * Returns how many domains were looked at.
     */
    const recheck = (now: Date, staleBefore: Date, batch = 100) =>
      Effect.gen(function*() {
        const due = yield* sql<DomainRow>`
          SELECT * FROM domains WHERE verified_at IS NOT NULL AND verified_by IS DISTINCT FROM 'operator'
            AND (last_checked_at IS NULL OR last_checked_at < ${staleBefore})
          ORDER BY last_checked_at NULLS FIRST LIMIT ${batch}`
        for (const row of due) {
          const expected = verificationValue(row.verification_token)
          const found = yield* dns.txt(row.domain).pipe(
            Effect.map((txt) => Option.some(txt.some((r) => r.trim() === expected))),
            Effect.catchTags({
              DnsNoRecord: () => Effect.succeed(Option.some(false)),
              DnsFailure: () => Effect.succeed(Option.none<boolean>())
            })
          )
          if (Option.isNone(found)) continue
          const returnPath = yield* returnPathState(row.domain)
          const lostAt = found.value ? sql`NULL` : sql`coalesce(verification_lost_at, ${now})`
          const returnPathAt = Option.match(returnPath, {
            onNone: () => sql`return_path_verified_at`,
            onSome: (published) => (published ? sql`coalesce(return_path_verified_at, ${now})` : sql`NULL`)
          })
          yield* sql`UPDATE domains SET last_checked_at = ${now}, verification_lost_at = ${lostAt},
              return_path_verified_at = ${returnPathAt}
            WHERE id = ${row.id}`
        }
        return due.length
      })

    return { create, list, get, remove, verify, trust, sendingState, recheck } as const
  })
}) {}
