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
 * One attempt in flight: undici's handler for it, its timer, and its result, settled exactly once.
 * A class rather than closures: under tsx (keepNames) every function literal bound to a name is
 * renamed with a defineProperty call on creation, about 1 µs each; methods cost nothing per attempt.
 */
class Attempt implements Dispatcher.DispatchHandler {
  private readonly started = performance.now()
  private readonly timer: ReturnType<typeof setTimeout>
  private settled = false
  private controller: Dispatcher.DispatchController | undefined
  private code = 0
  private chunks: Array<Buffer> | undefined
  private size = 0

  constructor(private readonly resolve: (result: AttemptResult) => void, timeoutMs: number) {
    this.timer = setTimeout(() => this.abort(`timed out after ${timeoutMs} ms`), timeoutMs)
  }

  private finish(ok: boolean, httpCode: number | null, error: string | null) {
    if (this.settled) return
    this.settled = true
    clearTimeout(this.timer)
    const responseBody = this.chunks === undefined ? "" : Buffer.concat(this.chunks).subarray(0, RESPONSE_BODY_LIMIT).toString("utf8")
    this.resolve({ ok, httpCode, error, durationMs: Math.round(performance.now() - this.started), responseBody })
  }

  /** The receiver answered: a non-2xx is a failure whose error says so (the history shows why it is retried). */
  private answered() {
    const ok = this.code >= 200 && this.code < 300
    this.finish(ok, this.code, ok ? null : `HTTP ${this.code}`)
  }

  /** Ends the attempt with `error` and stops the request, now or as soon as it has a controller. */
  abort(error: string) {
    this.finish(false, null, error)
    this.controller?.abort(new Error(error))
  }

  onRequestStart(controller: Dispatcher.DispatchController) {
    this.controller = controller
    if (this.settled) controller.abort(new Error("the attempt already ended"))
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number) {
    this.code = statusCode
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer) {
    if (this.size < RESPONSE_BODY_LIMIT) (this.chunks ??= []).push(chunk)
    this.size += chunk.length
    // Enough of the answer: its code and 2 KB are the result; the rest is not read.
    if (this.size >= RESPONSE_BODY_LIMIT && !this.settled) {
      this.answered()
      controller.abort(new Error("response body past the 2 KB kept"))
    }
  }

  onResponseEnd() {
    this.answered()
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error) {
    this.finish(false, null, error.message)
  }
}

/** Starts the attempt; `resolve` gets its result exactly once. Answers a function that aborts it. */
export const startWebhook = (options: PostOptions, resolve: (result: AttemptResult) => void): () => void => {
  const attempt = new Attempt(resolve, options.timeoutMs ?? ATTEMPT_TIMEOUT_MS)
  const url = options.url
  poolFor(url, options.address).dispatch({
    path: `${url.pathname}${url.search}`,
    method: "POST",
    headers: options.headers,
    body: options.body
  }, attempt)
  return () => attempt.abort("aborted")
}
