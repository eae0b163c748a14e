/**
 * One webhook attempt: POST the signed body to the checked address (the URL's host is kept for
 * the Host header and TLS SNI, so there is no second DNS lookup to rebind), any 2xx within 10 s is
 * success, at most 2 KB of the answer is kept.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { LookupFunction } from "node:net"

export const ATTEMPT_TIMEOUT_MS = 10_000
export const RESPONSE_BODY_LIMIT = 2_048

export interface AttemptResult {
  readonly ok: boolean
  readonly httpCode: number | null
  readonly error: string | null
  readonly durationMs: number
  readonly responseBody: string
}

export interface PostOptions {
  readonly url: URL
  readonly address: string
  readonly body: string
  readonly headers: Record<string, string>
  readonly timeoutMs?: number
}

export const postWebhook = (options: PostOptions): Promise<AttemptResult> => new Promise((resolve) => startWebhook(options, resolve))

/** Starts the attempt; `resolve` gets its result exactly once. Answers a function that aborts it. */
export const startWebhook = (options: PostOptions, resolve: (result: AttemptResult) => void): () => void => {
  const started = performance.now()
  const family = options.address.includes(":") ? 6 : 4
  // Every lookup answers the address that was checked.
  const lookup: LookupFunction = (_host, opts, callback) =>
    opts.all === true ? callback(null, [{ address: options.address, family }]) : callback(null, options.address, family)
  const client = options.url.protocol === "https:" ? https : http
  let settled = false
  const finish = (result: Omit<AttemptResult, "durationMs">) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    resolve({ ...result, durationMs: Math.round(performance.now() - started) })
  }
  const req = client.request(options.url, {
    method: "POST",
    lookup,
    headers: { ...options.headers, "content-length": Buffer.byteLength(options.body) }
  }, (res) => {
    const chunks: Array<Buffer> = []
    let size = 0
    res.on("data", (chunk: Buffer) => {
      if (size < RESPONSE_BODY_LIMIT) chunks.push(chunk)
      size += chunk.length
      if (size >= RESPONSE_BODY_LIMIT) res.destroy()
    })
    const done = () => {
      const code = res.statusCode ?? 0
      finish({
        ok: code >= 200 && code < 300,
        httpCode: code,
        error: null,
        responseBody: Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8")
      })
    }
    res.on("end", done)
    res.on("close", done)
  })
  const timer = setTimeout(() => {
    req.destroy()
    finish({ ok: false, httpCode: null, error: `timed out after ${options.timeoutMs ?? ATTEMPT_TIMEOUT_MS} ms`, responseBody: "" })
  }, options.timeoutMs ?? ATTEMPT_TIMEOUT_MS)
  req.on("error", (error) => finish({ ok: false, httpCode: null, error: error.message, responseBody: "" }))
  req.end(options.body)
  return () => {
    req.destroy()
    finish({ ok: false, httpCode: null, error: "aborted", responseBody: "" })
  }
}
