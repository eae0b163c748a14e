/**
 * Bodies whose length is not declared (`Transfer-Encoding: chunked`, RFC 9112 §7.1) are read here,
 * up to MAX_JSON_MB, before the API sees the request.
 *
 * Why not leave it to the platform's reader: when a body grows past its limit, that reader destroys
 * the request stream, which destroys the socket while the client is still sending; the client then
 * gets a connection reset instead of the 413. Here, past the limit, the data is dropped but the
 * socket keeps being drained, so the 413 reaches the client and the connection stays usable (Node's
 * `requestTimeout` still ends a client that never stops sending).
 */
import type { IncomingMessage } from "node:http"
import { HttpServerRequest } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option } from "effect"

/** True when the request carries a body of undeclared length. */
export const isChunked = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers["content-length"] === undefined && request.headers["transfer-encoding"] !== undefined

/** The body, or None once it passes `maxBytes` (the rest is drained and dropped). */
const readAtMost = (source: IncomingMessage, maxBytes: number) =>
  Effect.async<Option.Option<Buffer>, Error>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const detach = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    function onData(chunk: Buffer) {
      size += chunk.length
      if (size <= maxBytes) return void chunks.push(chunk)
      detach()
      // Flowing with no listener: Node reads and discards the rest of the body.
      source.resume()
      resume(Effect.succeed(Option.none()))
    }
    function onEnd() {
      detach()
      resume(Effect.succeed(Option.some(Buffer.concat(chunks))))
    }
    function onError(error: Error) {
      detach()
      resume(Effect.fail(error))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
  })

/**
 * Reads a chunked body within `maxBytes` and returns a request that replays it (same method,
 * URL, headers and remote address), or None when the body is too large.
 */
export const bufferChunkedBody = (request: HttpServerRequest.HttpServerRequest, maxBytes: number) =>
  Effect.gen(function*() {
    const body = yield* readAtMost(NodeHttpServerRequest.toIncomingMessage(request), maxBytes)
    return Option.map(body, (bytes) => {
      const replay = new Request(new URL(request.url, "http://localhost"), { method: request.method, body: bytes })
      return HttpServerRequest.fromWeb(replay).modify({
        headers: request.headers,
        ...Option.match(request.remoteAddress, { onNone: () => ({}), onSome: (remoteAddress) => ({ remoteAddress }) })
      })
    })
  })
