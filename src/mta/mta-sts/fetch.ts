/**
 * The policy fetch (RFC 8461 §3.3): `https://mta-sts.<domain>/.well-known/mta-sts.txt`. The
 * recipient domain is chosen by whoever sends, so the fetch must never become a way into the
 * appliance's own network: the host goes through the same address check as webhook URLs
 * (src/lib/url-check.ts; public addresses only in production) and the request connects to the
 * checked address — no second lookup to rebind — while TLS verifies the certificate for
 * `mta-sts.<domain>` (SNI). Redirects are not followed (§3.3), only a 200 with `text/plain` is a
 * policy, at most 64 KB are read and the whole fetch ends after 10 s.
 */
import * as https from "node:https"
import type { LookupFunction } from "node:net"
import { Data, Effect } from "effect"
import { Dns } from "../../lib/dns.ts"
import { checkAddresses, checkWebhookUrlSync, type UrlPolicy } from "../../lib/url-check.ts"

/** RFC 8461 §3.3 leaves the limits to the sender; 64 KB is far above any real policy (a few hundred bytes). */
export const POLICY_MAX_BYTES = 65_536
/** The whole fetch (connect, TLS, answer): a slow policy host must not hold a delivery long. */
export const POLICY_FETCH_TIMEOUT_MS = 10_000

/** The fetch did not produce a policy body: refused by the address check, failed, or answered otherwise. */
export class PolicyFetchFailed extends Data.TaggedError("PolicyFetchFailed")<{ readonly reason: string }> {}

export interface FetchOptions {
  /** 443, or HERALD_MTA_STS_PORT for tests and staging. */
  readonly port: number
  /** Public addresses only (production on the real port), as for MX hosts. */
  readonly publicOnly: boolean
  /** Trusted CA certificates (the system's plus HERALD_TLS_CA_FILE's), or undefined for Node's defaults. */
  readonly ca: ReadonlyArray<string> | undefined
}

export const answeringWith = (address: string): LookupFunction => {
  const family = address.includes(":") ? 6 : 4
  return (_host, opts, callback) => opts.all === true ? callback(null, [{ address, family }]) : callback(null, address, family)
}

const get = (url: URL, address: string, ca: ReadonlyArray<string> | undefined) =>
  new Promise<string>((resolveBody, rejectBody) => {
    // One deadline for the whole fetch, however slowly the bytes trickle (a socket timeout is per idle gap).
    const timer = setTimeout(() => request.destroy(new Error(`timed out after ${POLICY_FETCH_TIMEOUT_MS} ms`)), POLICY_FETCH_TIMEOUT_MS)
    const resolve = (body: string) => {
      clearTimeout(timer)
      resolveBody(body)
    }
    const reject = (error: unknown) => {
      clearTimeout(timer)
      rejectBody(error)
    }
    const request = https.get(url, {
      agent: false,
      lookup: answeringWith(address),
      ...(ca === undefined ? {} : { ca: [...ca] }),
      rejectUnauthorized: true,
      headers: { accept: "text/plain" }
    }, (response) => {
      if (response.statusCode !== 200) {
        response.destroy()
        return reject(new Error(`answered HTTP ${response.statusCode ?? "?"} (redirects are not followed)`))
      }
      const type = String(response.headers["content-type"] ?? "")
      if (!/^text\/plain\b/i.test(type)) {
        response.destroy()
        return reject(new Error(`answered Content-Type ${type || "(none)"}, not text/plain`))
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > POLICY_MAX_BYTES) {
          response.destroy()
          return reject(new Error(`the policy is larger than ${POLICY_MAX_BYTES} bytes`))
        }
        chunks.push(chunk)
      })
      response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
      response.on("error", reject)
    })
    request.on("error", reject)
  })

/**
 * `raw` through the outbound address check (src/lib/url-check.ts), its host resolved through the
 * appliance's resolver: the URL and the one address to connect to, or why not. Used by the policy
 * fetch and by TLS-RPT's https reports.
 */
export const checkedTarget = (raw: string, publicOnly: boolean) =>
  Effect.gen(function*() {
    const dns = yield* Dns
    const policy: UrlPolicy = { production: publicOnly, allowPrivate: !publicOnly }
    const checked = checkWebhookUrlSync(raw, policy)
    if ("ok" in checked) return checked
    return checkAddresses(checked, [
      ...yield* dns.a(checked.host).pipe(Effect.orElseSucceed(() => [] as Array<string>)),
      ...yield* dns.aaaa(checked.host).pipe(Effect.orElseSucceed(() => [] as Array<string>))
    ], policy)
  })

/** The policy body of `domain`, fetched from the checked address, or why not. */
export const fetchPolicyText = (domain: string, options: FetchOptions) =>
  Effect.gen(function*() {
    const host = `mta-sts.${domain}`
    const port = options.port === 443 ? "" : `:${options.port}`
    const target = yield* checkedTarget(`https://${host}${port}/.well-known/mta-sts.txt`, options.publicOnly)
    if (!target.ok) return yield* new PolicyFetchFailed({ reason: `the policy host is refused: ${target.reason}` })
    return yield* Effect.tryPromise({
      try: () => get(target.url, target.address, options.ca),
      catch: (error) => new PolicyFetchFailed({ reason: `the policy fetch from ${host} failed: ${error instanceof Error ? error.message : String(error)}` })
    })
  })
