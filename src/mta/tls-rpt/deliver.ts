/**
 * Where a TLS-RPT report goes by HTTPS (RFC 8460 §3): a POST of the gzip, through the same
 * outbound address check as webhooks and MTA-STS policy fetches, to the checked address. (A
 * `mailto:` destination gets report mail through the queue: TlsRptJob.ts.)
 */
import * as https from "node:https"
import { Effect } from "effect"
import type { Dns } from "../../lib/dns.ts"
import { answeringWith, checkedTarget } from "../mta-sts/fetch.ts"

/** A report POST's deadline (RFC 8460 leaves it to the sender; as for webhooks). */
const POST_TIMEOUT_MS = 10_000

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
