/**
 * One webhook attempt: POST the signed body to the checked address (the URL's host is kept for
 * the Host header and TLS SNI, so there is no second DNS lookup to rebind), any 2xx within 10 s is
 * success, at most 2 KB of the answer is kept.
 *
 * The client is undici's dispatcher API (the Node.js project's own HTTP/1.1 client, already under
 * @effect/platform-node): measured against a local receiver with 4 attempts in flight, a POST cost
 * ~0.06–0.09 ms of CPU where `node:http` cost ~0.11–0.15, and the dispatcher's hot path is mostly
 * this (bench:webhooks). One keep-alive pool per (origin, checked address): a host whose address
 * changes gets a new pool, never a connection made to an address nobody checked.
 */
import type { LookupFunction } from "node:net"
import { type Dispatcher, Pool } from "undici"

export const ATTEMPT_TIMEOUT_MS = 10_000
export const RESPONSE_BODY_LIMIT = 2_048
/** Pools kept (one per receiver in practice); past this the oldest is closed once its attempts end. */
const POOLS_MAX = 256

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

const pools = new Map<string, Pool>()
const poolFor = (url: URL, address: string): Pool => {
  const name = `${url.origin} ${address}`
  let pool = pools.get(name)
  if (pool === undefined) {
    if (pools.size >= POOLS_MAX) {
      const [oldest, old] = pools.entries().next().value!
      pools.delete(oldest)
      void old.close()
    }
    // No cap on connections: the dispatcher's slots and per-key workers already bound them.
    pool = new Pool(url.origin, { connect: { lookup: answeringWith(address) } })
    pools.set(name, pool)
  }
  return pool
}

/**
 * Starts the attempt; `resolve` gets its result exactly once. Answers a function that aborts it.
 * The handler's methods are written inline on purpose: under tsx (keepNames) every function bound
 * to a name is renamed with a defineProperty call, about 1 µs each, on every attempt.
 */
export const startWebhook = (options: PostOptions, resolve: (result: AttemptResult) => void): () => void => {
  const started = performance.now()
  const timeoutMs = options.timeoutMs ?? ATTEMPT_TIMEOUT_MS
  let settled = false
  let controller: Dispatcher.DispatchController | undefined
  let code = 0
  let chunks: Array<Buffer> | undefined
  let size = 0
  const finish = (ok: boolean, httpCode: number | null, error: string | null) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    const responseBody = chunks === undefined ? "" : Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8")
    resolve({ ok, httpCode, error, durationMs: Math.round(performance.now() - started), responseBody })
  }
  const answered = () => finish(code >= 200 && code < 300, code, null)
  // Ends the attempt with `error` and stops the request, now or as soon as it has a controller.
  const abort = (error: string) => {
    finish(false, null, error)
    controller?.abort(new Error(error))
  }
  const timer = setTimeout(() => abort(`timed out after ${timeoutMs} ms`), timeoutMs)
  const url = options.url
  poolFor(url, options.address).dispatch({
    path: `${url.pathname}${url.search}`,
    method: "POST",
    headers: options.headers,
    body: options.body,
    // A webhook is not retried on another connection by the client: the ladder decides retries.
    idempotent: false
  }, {
    onRequestStart: (c) => {
      controller = c
      if (settled) c.abort(new Error("the attempt already ended"))
    },
    onResponseStart: (_c, statusCode) => {
      code = statusCode
    },
    onResponseData: (c, chunk) => {
      if (size < RESPONSE_BODY_LIMIT) (chunks ??= []).push(chunk)
      size += chunk.length
      // Enough of the answer: its code and 2 KB are the result; the rest is not read.
      if (size >= RESPONSE_BODY_LIMIT && !settled) {
        answered()
        c.abort(new Error("response body past the 2 KB kept"))
      }
    },
    onResponseEnd: () => answered(),
    onResponseError: (_c, error) => finish(false, null, error.message)
  })
  return () => abort("aborted")
}
