/**
 * A streamed CSV download with a write timeout (issue 26 finding 3): when the client takes nothing
 * for `writeTimeoutMs` (its socket accepts no byte: a client that stopped reading), the connection
 * is closed. Closing it interrupts the response's fiber, whose request scope then closes the
 * export's cursor and gives its database connection back (src/db/export-database.ts).
 *
 * The timeout is the socket's inactivity timeout: it counts while nothing is written, so a slow
 * reader that keeps taking bytes is served to the end, and a slow database fetch between batches
 * is bounded by the statement timeout (HERALD_QUERY_TIMEOUT_MS, below the write timeout) instead.
 *
 * A stream that fails once the answer has started is cut the same way rather than ended cleanly, so
 * a client never mistakes a partial file for a whole one.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Chunk, Effect, Stream } from "effect"
import { csvHeader, csvRow } from "../lib/csv.ts"

export interface CsvDownload<Row extends object> {
  readonly columns: ReadonlyArray<keyof Row & string>
  readonly rows: Stream.Stream<Row, unknown>
  readonly writeTimeoutMs: number
  readonly headers?: Record<string, string>
}

export const csvDownload = <Row extends object>(download: CsvDownload<Row>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const response = NodeHttpServerRequest.toServerResponse(request)
    const cut = () => {
      response.destroy()
    }
    response.setTimeout(download.writeTimeoutMs, cut)
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        response.off("timeout", cut)
        if (!response.destroyed) response.setTimeout(0)
      })
    )
    // One encoded piece per batch of rows: a large export never sits in memory at once.
    const encoder = new TextEncoder()
    const body = download.rows.pipe(
      Stream.mapChunks((batch) => Chunk.of(Chunk.join(Chunk.map(batch, (row) => csvRow(download.columns, row)), ""))),
      Stream.prepend(Chunk.of(csvHeader(download.columns))),
      Stream.map((text) => encoder.encode(text)),
      Stream.tapErrorCause(() => Effect.sync(cut))
    )
    return HttpServerResponse.stream(body, {
      contentType: "text/csv; charset=utf-8",
      ...(download.headers === undefined ? {} : { headers: download.headers })
    })
  })
