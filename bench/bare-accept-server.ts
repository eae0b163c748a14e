/**
 * The accept benchmark's baseline: a bare node:http server that parses the same JSON, commits one
 * row per request to the same PostgreSQL and answers 202 — the floor any API with durable
 * acceptance pays. Run by bench/accept.ts.
 */
import * as http from "node:http"
import pg from "pg"

const pool = new pg.Pool({ connectionString: process.env["DATABASE_URL"], max: 10 })
await pool.query("CREATE TABLE IF NOT EXISTS bare_accept (id bigserial PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())")

http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    let body: unknown
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
    } catch {
      res.writeHead(400).end()
      return
    }
    pool.query("INSERT INTO bare_accept (body) VALUES ($1) RETURNING id", [JSON.stringify(body)]).then(
      (r) => {
        res.writeHead(202, { "content-type": "application/json" })
        res.end(JSON.stringify({ message: "accepted", id: String(r.rows[0].id) }))
      },
      () => res.writeHead(500).end()
    )
  })
}).listen(Number(process.env["PORT"]), "127.0.0.1")
