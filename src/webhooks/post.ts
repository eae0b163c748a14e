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

/** A lookup that answers the checked address, whatever it is asked (no second DNS lookup to rebind). */
const answeringWith = (address: string): LookupFunction => {
  const family = address.includes(":") ? 6 : 4
  return (_host, opts, callback) => opts.all === true ? callback(null, [{ address, family }]) : callback(null, address, family)
}

/** The result of an answer: its code and at most RESPONSE_BODY_LIMIT bytes of its body. */
const answered = (res: http.IncomingMessage, chunks: ReadonlyArray<Buffer>): Omit<AttemptResult, "durationMs"> => {
  const code = res.statusCode ?? 0
  return {
    ok: code >= 200 && code < 300,
    httpCode: code,
    error: null,
    responseBody: chunks.length === 0 ? "" : Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8")
  }
}

/**
 * Starts the attempt; `resolve` gets its result exactly once. Answers a function that aborts it.
 * The callbacks are written inline on purpose: under tsx (keepNames) every function bound to a
 * name is renamed with a defineProperty call, about 1 µs each, on every attempt.
 */
export const startWebhook = (options: PostOptions, resolve: (result: AttemptResult) => void): () => void => {
  const started = performance.now()
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS
  const client = options.url.protocol === "https:" ? https : http
  let settled = false
  const finish = (result: Omit<AttemptResult, "durationMs">) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    resolve({ ...result, durationMs: Math.round(performance.now() - started) })
  }
  const url = options.url
  // The URL's parts rather than the URL: Node would convert it again on every request.
  const req = client.request({
    protocol: url.protocol,
    hostname: url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port,
    path: `${url.pathname}${url.search}`,
    method: "POST",
    lookup: answeringWith(options.address),
    headers: { ...options.headers, "content-length": Buffer.byteLength(options.body) }
  }, (res) => {
    const chunks: Array<Buffer> = []
    let size = 0
    res.on("data", (chunk: Buffer) => {
      if (size < RESPONSE_BODY_LIMIT) chunks.push(chunk)
      size += chunk.length
      if (size >= RESPONSE_BODY_LIMIT) res.destroy()
    })
    // Both fire for a complete answer: the body is assembled once.
    res.on("end", () => {
      if (!settled) finish(answered(res, chunks))
    })
    res.on("close", () => {
      if (!settled) finish(answered(res, chunks))
    })
  })
  const timer = setTimeout(() => {
    req.destroy()
    finish({ ok: false, httpCode: null, error: `timed out after ${timeoutMs} ms`, responseBody: "" })
  }, timeoutMs)
  req.on("error", (error) => finish({ ok: false, httpCode: null, error: error.message, responseBody: "" }))
  req.end(options.body)
  return () => {
    req.destroy()
    finish({ ok: false, httpCode: null, error: "aborted", responseBody: "" })
  }
}
