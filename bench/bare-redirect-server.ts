/**
 * The tracking benchmark's baseline (bench/campaign.ts): a bare `node:http` server that answers
 * `GET /o/<token>` with a 1×1 GIF and `GET /c/<token>` with a 302, after INSERTing one row per hit
 * (the token, the kind, the time) into `bare_hits` of the same PostgreSQL — no token check, no
 * counters, no events. Run with PORT and DATABASE_URL; the bench creates the table.
 */
import * as http from "node:http"
import pg from "pg"

const PIXEL = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64")
const pool = new pg.Pool({ connectionString: process.env["DATABASE_URL"], max: 10 })

const server = http.createServer((req, res) => {
  const url = req.url ?? ""
  const kind = url.startsWith("/o/") ? "open" : url.startsWith("/c/") ? "click" : null
  if (req.method !== "GET" || kind === null) {
    res.writeHead(404).end()
    return
  }
  pool.query("INSERT INTO bare_hits (token, kind, at) VALUES ($1, $2, now())", [url.slice(3), kind]).then(
    () => {
      if (kind === "open") res.writeHead(200, { "content-type": "image/gif", "cache-control": "no-store" }).end(PIXEL)
      else res.writeHead(302, { location: "https://shop.example/pricing", "cache-control": "no-store" }).end()
    },
    () => res.writeHead(500).end()
  )
})
server.keepAliveTimeout = 60_000
server.listen(Number(process.env["PORT"]), "127.0.0.1")
process.once("SIGTERM", () => server.close(() => void pool.end().then(() => process.exit(0))))
