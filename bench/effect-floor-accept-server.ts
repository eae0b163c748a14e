/**
 * The accept benchmark's second baseline: the decided stack doing exactly the bare server's work.
 * An Effect HttpApi endpoint (@effect/platform-node) reads the body, decodes it with Herald's own
 * send schema, commits one row through @effect/sql-pg and answers 202 — no authentication, no
 * rate limit, no quota, one statement. Its rate is the ceiling any handler written on this stack
 * can reach on this machine; Herald's send does that work plus three statements of its own.
 * Run by bench/accept.ts.
 */
import { createServer } from "node:http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Either, Layer, Redacted, Schema } from "effect"
import { decodeSendRequest } from "../src/transactional/request.ts"

const FloorApi = HttpApi.make("floor").add(
  HttpApiGroup.make("send").add(
    HttpApiEndpoint.post("send", "/v1/mail/send").addSuccess(Schema.Struct({ id: Schema.String }), { status: 202 })
  )
)

const SendLive = HttpApiBuilder.group(FloorApi, "send", (handlers) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE TABLE IF NOT EXISTS floor_accept (
      id bigserial PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`
    const invalid = HttpServerResponse.unsafeJson({ error: "invalid" }, { status: 400 })
    /** Herald's own decoding of the body: true when it is a valid send request. */
    const valid = (raw: string) => {
      try {
        return Either.isRight(decodeSendRequest(JSON.parse(raw), { maxRequestRecipients: 10_000 }))
      } catch {
        return false
      }
    }
    return handlers.handleRaw("send", ({ request }) =>
      Effect.gen(function*() {
        const raw = yield* Effect.orDie(request.text)
        if (!valid(raw)) return invalid
        const rows = yield* Effect.orDie(sql<{ id: string }>`INSERT INTO floor_accept (body) VALUES (${raw}) RETURNING id`)
        return HttpServerResponse.unsafeJson({ id: String(rows[0]!.id) }, { status: 202 })
      }))
  }))

HttpApiBuilder.serve().pipe(
  Layer.provide(HttpApiBuilder.api(FloorApi).pipe(Layer.provide(SendLive))),
  Layer.provide(PgClient.layer({ url: Redacted.make(process.env["DATABASE_URL"]!), maxConnections: 10 })),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(process.env["PORT"]), host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
