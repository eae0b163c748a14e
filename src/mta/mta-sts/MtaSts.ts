/**
 * A recipient domain's MTA-STS policy (RFC 8461), as a delivery needs it: `enforce` or `testing`
 * with the MX patterns it names, or null (no policy, mode `none`, HERALD_MTA_STS=off, a smarthost).
 *
 * Each process keeps the answer for a domain a few minutes (PROCESS_TTL_MS), so deliveries read no
 * row and make no lookup; on a miss it reads the shared row (mta_sts_policies: survives restarts,
 * shared by replicas), asks DNS for the `_mta-sts` and `_smtp._tls` TXT records and fetches the
 * policy only when the record's id changed or the cached policy expired (§3.3, §5.1). A failed
 * fetch never replaces a policy that has not expired — that would let whoever breaks the fetch
 * downgrade the domain to plaintext — and a domain without a usable policy whose fetch failed is
 * not fetched again for an hour. No `_mta-sts` record with a cached, unexpired policy keeps the
 * policy (§5.1: removing the record does not withdraw a policy before its max_age).
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Either } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { Dns } from "../../lib/dns.ts"
import { makeLookupCache } from "../lookup-cache.ts"
import { MtaConfig } from "../MtaConfig.ts"
import { fetchPolicyText } from "./fetch.ts"
import { parsePolicy, parseStsRecord, parseTlsRptRecord } from "./policy.ts"
import { makePolicyStore, type PolicyRow } from "./store.ts"

export interface ActivePolicy {
  readonly domain: string
  readonly mode: "enforce" | "testing"
  readonly mx: ReadonlyArray<string>
}

/** How long a process uses a domain's answer before it looks again (DNS and the shared row). */
const PROCESS_TTL_MS = 5 * 60_000
/** Domains whose answer a process keeps. */
const DOMAINS_KEPT = 10_000
/** A domain without a usable policy whose fetch failed is fetched again after this (RFC 8461 leaves it to the sender). */
export const FAILED_FETCH_RETRY_MS = 60 * 60_000

const activeOf = (row: PolicyRow | undefined, now: number): ActivePolicy | null =>
  row === undefined || row.policy_mode === null || row.policy_mode === "none" || row.policy_expires_at === null ||
    row.policy_expires_at.getTime() <= now
    ? null
    : { domain: row.domain, mode: row.policy_mode, mx: row.policy_mx }

const txtOf = (name: string) => Effect.flatMap(Dns, (dns) => Effect.either(dns.txt(name)))

export class MtaSts extends Effect.Service<MtaSts>()("herald/MtaSts", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const mta = yield* MtaConfig
    const store = yield* makePolicyStore.pipe(Effect.provideService(SqlClient.SqlClient, yield* SqlClient.SqlClient))
    /** Production fetches policies from public addresses only; HERALD_MTA_STS_PORT moved off 443 means a test or staging set-up. */
    const fetchOptions = { port: mta.mtaStsPort, publicOnly: config.env === "production" && mta.mtaStsPort === 443, ca: mta.tlsCa }
    const answers = makeLookupCache<ActivePolicy | null, SqlError>({ ttlMs: PROCESS_TTL_MS, maxEntries: DOMAINS_KEPT, keep: () => true })

    /** Fetches and parses the policy under TXT id `id` into the row, or records why not (keeping an unexpired policy). */
    const fetchInto = (row: PolicyRow, id: string, now: number): Effect.Effect<PolicyRow, never, Dns> =>
      Effect.gen(function*() {
        const body = yield* Effect.either(fetchPolicyText(row.domain, fetchOptions))
        const parsed = Either.isRight(body) ? parsePolicy(body.right) : `the policy fetch failed: ${body.left.reason}`
        if (typeof parsed === "string") {
          return { ...row, last_failure: Either.isRight(body) ? `the policy is invalid: ${parsed}` : body.left.reason, retry_at: new Date(now + FAILED_FETCH_RETRY_MS) }
        }
        return {
          ...row,
          policy_mode: parsed.mode,
          policy_mx: parsed.mx,
          policy_max_age: parsed.maxAge,
          policy_text: parsed.text,
          policy_txt_id: id,
          fetched_at: new Date(now),
          policy_expires_at: new Date(now + parsed.maxAge * 1000),
          last_failure: null,
          retry_at: null
        }
      })

    /** The domain's row brought up to date (DNS, and the fetch when due), written back. */
    const refresh = (domain: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const stored = yield* store.read(domain)
        const [sts, rpt] = yield* Effect.all([txtOf(`_mta-sts.${domain}`), txtOf(`_smtp._tls.${domain}`)], { concurrency: 2 })
        let row: PolicyRow = stored ?? {
          domain, txt_id: null, policy_mode: null, policy_mx: [], policy_max_age: null, policy_text: null, policy_txt_id: null,
          fetched_at: null, policy_expires_at: null, last_failure: null, retry_at: null, tlsrpt_rua: [], checked_at: new Date(now)
        }
        // A DNS failure keeps what the row knew; an answer (records or none) replaces it.
        const id = Either.isRight(sts) ? parseStsRecord(sts.right) : row.txt_id
        const rua = Either.isRight(rpt) ? parseTlsRptRecord(rpt.right) : Either.isLeft(rpt) && rpt.left._tag === "DnsNoRecord" ? [] : row.tlsrpt_rua
        row = { ...row, txt_id: id, tlsrpt_rua: rua, checked_at: new Date(now) }
        const current = activeOf(row, now) !== null || (row.policy_mode === "none" && (row.policy_expires_at?.getTime() ?? 0) > now)
        const due = id !== null && !(current && row.policy_txt_id === id) && (row.retry_at === null || row.retry_at.getTime() <= now)
        if (due) row = yield* fetchInto(row, id, now)
        yield* store.save(row)
        return activeOf(row, now)
      })

    /** The policy a delivery to `domain` follows, or null. */
    const policyFor = (domain: string): Effect.Effect<ActivePolicy | null, SqlError, Dns> =>
      mta.mtaSts ? answers.get(domain.toLowerCase(), refresh(domain.toLowerCase())) : Effect.succeed(null)

    return { policyFor } as const
  })
}) {}
