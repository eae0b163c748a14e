/**
 * Where a TLS-RPT report goes (RFC 8460 §3, §5): a `mailto:` destination gets the report mail,
 * DKIM-signed, handed over SMTP by the MTA's client to the address's MX (public addresses only in
 * production, as for all mail); an `https:` destination gets a POST of the gzip, through the same
 * outbound address check as webhooks and MTA-STS policy fetches, to the checked address.
 */
import * as https from "node:https"
import { Effect } from "effect"
import type { Dns } from "../../lib/dns.ts"
import { answeringWith, checkedTarget } from "../mta-sts/fetch.ts"
import { publicTargets, resolveRoute, resolveTargets } from "../mx.ts"
import type { SmtpClient } from "../smtp-client.ts"

/** A report POST's deadline (RFC 8460 leaves it to the sender; as for webhooks). */
const POST_TIMEOUT_MS = 10_000

export interface MailRoute {
  readonly smtp: SmtpClient
  readonly heloName: string
  readonly mxPort: number
  readonly publicOnly: boolean
  readonly ca: ReadonlyArray<string> | undefined
}

/** The report mail to `to` through its domain's MX; what happened, in words. */
export const mailReport = (route: MailRoute, from: string, to: string, raw: Buffer): Effect.Effect<string, never, Dns> =>
  Effect.gen(function*() {
    const domain = to.slice(to.lastIndexOf("@") + 1).toLowerCase()
    const found = yield* resolveRoute(domain)
    if (found._tag !== "hosts") return `mailto:${to}: ${found.reason}`
    const targets = yield* resolveTargets(found.hosts)
    const { allowed, refused } = route.publicOnly ? publicTargets(targets) : { allowed: targets, refused: [] }
    if (allowed.length === 0) return `mailto:${to}: no deliverable MX address${refused.length > 0 ? ` (${refused.join(", ")})` : ""}`
    const hops = allowed.map((t) => ({ host: t.address, servername: t.name, port: route.mxPort, ca: route.ca }))
    const reply = yield* Effect.promise(() =>
      route.smtp.send(hops, { from, to }, raw, { heloName: route.heloName, maxConnections: 1, messagesPerConnection: 1 })
    )
    return `mailto:${to}: ${reply.code ?? "no reply"} ${reply.text}`.trim()
  })

const post = (url: URL, address: string, body: Buffer, ca: ReadonlyArray<string> | undefined) =>
  new Promise<number>((resolve, reject) => {
    const request = https.request(url, {
      method: "POST",
      agent: false,
      lookup: answeringWith(address),
      ...(ca === undefined ? {} : { ca: [...ca] }),
      headers: { "content-type": "application/tlsrpt+gzip", "content-length": String(body.length) }
    }, (response) => {
      response.resume()
      resolve(response.statusCode ?? 0)
    })
    const timer = setTimeout(() => request.destroy(new Error(`timed out after ${POST_TIMEOUT_MS} ms`)), POST_TIMEOUT_MS)
    request.on("close", () => clearTimeout(timer))
    request.on("error", reject)
    request.end(body)
  })

/** The gzip POSTed to `url` (checked first); what happened, in words. */
export const postReport = (url: string, gz: Buffer, publicOnly: boolean, ca: ReadonlyArray<string> | undefined): Effect.Effect<string, never, Dns> =>
  Effect.gen(function*() {
    const target = yield* checkedTarget(url, publicOnly)
    if (!target.ok) return `${url}: refused: ${target.reason}`
    return yield* Effect.tryPromise(() => post(target.url, target.address, gz, ca)).pipe(
      Effect.match({ onSuccess: (status) => `${url}: HTTP ${status}`, onFailure: (e) => `${url}: ${String(e.error)}` })
    )
  })
