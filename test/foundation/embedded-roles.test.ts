/**
 * The embedded cluster's logins: the superuser's password is random and kept owner-only, the old
 * fixed password `herald` no longer opens it (clusters made with it are switched at their next
 * start), and the appliance connects as an ordinary role that cannot run programs on the host.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Effect, Exit, Redacted, Scope } from "effect"
import pg from "pg"
import { describe, expect, it } from "vitest"
import { startEmbeddedPostgres } from "../../src/db/embedded-postgres.ts"
import { APP_PASSWORD_FILE, SUPERUSER_PASSWORD_FILE } from "../../src/db/embedded-roles.ts"
import { runMigrations } from "../../src/db/migrator.ts"
import { resolveRunAs } from "../../src/db/run-as.ts"

const dataDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-roles-"))
  fs.chmodSync(dir, 0o755)
  return dir
}

const startCluster = async (dir: string) => {
  const scope = Effect.runSync(Scope.make())
  const cluster = await Effect.runPromise(startEmbeddedPostgres(dir).pipe(Scope.extend(scope)))
  return { ...cluster, stop: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

const withClient = async <T>(url: string, f: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end()
  }
}

/** The SQLSTATE a login or statement fails with ("" when it succeeds). */
const failureCode = (p: Promise<unknown>) => p.then(() => "", (e: { code?: string }) => e.code ?? String(e))

const url = (user: string, password: string, port: number, database: string) =>
  `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`

const migrate = (databaseUrl: string) =>
  Effect.runPromise(runMigrations.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl) }))))

const expectLockedDown = async (dir: string, cluster: { url: string; port: number }) => {
  for (const file of [SUPERUSER_PASSWORD_FILE, APP_PASSWORD_FILE]) {
    const stat = fs.statSync(path.join(dir, file))
    expect((stat.mode & 0o777).toString(8)).toBe("600")
    expect(fs.readFileSync(path.join(dir, file), "utf8").trim()).not.toBe("herald")
  }
  // The old fixed password opens nothing, whichever role tries it.
  for (const user of ["herald", "herald_app", "postgres"]) {
    expect(await failureCode(withClient(url(user, "herald", cluster.port, "postgres"), async () => undefined))).toBe("28P01")
  }
  const superPassword = fs.readFileSync(path.join(dir, SUPERUSER_PASSWORD_FILE), "utf8").trim()
  expect(await withClient(url("herald", superPassword, cluster.port, "postgres"), async (c) =>
    (await c.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).rows[0].rolsuper)).toBe(true)
  await withClient(cluster.url, async (c) => {
    const me = await c.query("SELECT current_user AS name, rolsuper FROM pg_roles WHERE rolname = current_user")
    expect(me.rows[0]).toEqual({ name: "herald_app", rolsuper: false })
    expect(await failureCode(c.query("COPY (SELECT 1) TO PROGRAM 'id'"))).toBe("42501")
    expect(await failureCode(c.query("SELECT pg_read_file('PG_VERSION')"))).toBe("42501")
  })
  // Password authentication (scram-sha-256) on every line of pg_hba.conf: no `trust`.
  const hba = fs.readFileSync(path.join(dir, "pg", "pg_hba.conf"), "utf8").split("\n")
    .filter((line) => line.trim() !== "" && !line.trim().startsWith("#"))
  expect(hba.length).toBeGreaterThan(0)
  for (const line of hba) expect(line.trim().split(/\s+/).at(-1)).toBe("scram-sha-256")
}

describe("embedded PostgreSQL roles", () => {
  it("gives a new cluster a random owner-only superuser password and runs the appliance as an ordinary role", async () => {
    const dir = dataDir()
    const cluster = await startCluster(dir)
    try {
      await expectLockedDown(dir, cluster)
      // The migrations need no superuser: they run as the app role, which owns what they make.
      await migrate(cluster.url)
      await withClient(cluster.url, async (c) => {
        const owners = await c.query("SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = 'public'")
        expect(owners.rows).toEqual([{ tableowner: "herald_app" }])
      })
    } finally {
      await cluster.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 120_000)

  it("switches a cluster made with the old password `herald` and hands its database to the app role", async () => {
    const dir = dataDir()
    await makeLegacyCluster(dir)
    const cluster = await startCluster(dir)
    try {
      await expectLockedDown(dir, cluster)
      await withClient(cluster.url, async (c) => {
        // The legacy appliance's data is there, and its tables are the app role's to change.
        expect((await c.query("SELECT name FROM accounts")).rows).toEqual([{ name: "legacy" }])
        const foreign = await c.query(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tableowner <> 'herald_app'
          UNION ALL SELECT proname FROM pg_proc WHERE pronamespace = 'public'::regnamespace AND proowner <> 'herald_app'::regrole`)
        expect(foreign.rows).toEqual([])
        await c.query("ALTER TABLE accounts ADD COLUMN probe integer")
      })
      await migrate(cluster.url)
    } finally {
      await cluster.stop()
    }
    // A second start finds everything in place and changes nothing.
    const again = await startCluster(dir)
    try {
      await expectLockedDown(dir, again)
    } finally {
      await again.stop()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }, 180_000)
})

/**
 * A cluster as Herald made it before: initdb with superuser `herald`, password `herald`, and the
 * `herald` database created and migrated by that superuser, holding one account.
 */
const makeLegacyCluster = async (dir: string) => {
  // A port from the ephemeral range, as the embedded cluster takes its own.
  const port = await new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address() as net.AddressInfo
      probe.close(() => resolve(address.port))
    })
  })
  const clusterDir = path.join(dir, "pg")
  const runAs = await Effect.runPromise(resolveRunAs(clusterDir))
  const bin: { postgres: string; initdb: string } = await import(`@embedded-postgres/${os.platform()}-${os.arch()}`)
  const pwFile = path.join(os.tmpdir(), `herald-legacy-pw-${process.pid}-${Date.now()}`)
  fs.writeFileSync(pwFile, "herald\n", { mode: 0o644 })
  const options = { ...runAs, env: { ...process.env, LC_ALL: "C" } }
  await new Promise<void>((resolve, reject) => {
    const child = spawn(bin.initdb, [`--pgdata=${clusterDir}`, "--auth=scram-sha-256", "--username=herald",
      `--pwfile=${pwFile}`, "--encoding=UTF8", "--locale=C"], { ...options, stdio: "ignore" })
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`initdb exited with ${code}`))))
  })
  fs.rmSync(pwFile)
  const socketDir = path.join(clusterDir, "run")
  fs.mkdirSync(socketDir, { mode: 0o700 })
  if (runAs.uid !== undefined && runAs.gid !== undefined) fs.chownSync(socketDir, runAs.uid, runAs.gid)
  const server = spawn(bin.postgres, ["-D", clusterDir, "-p", String(port), "-c", "listen_addresses=127.0.0.1",
    "-c", `unix_socket_directories=${socketDir}`], { ...options, stdio: ["ignore", "ignore", "pipe"] })
  const exited = new Promise<void>((resolve) => server.once("exit", () => resolve()))
  await new Promise<void>((resolve, reject) => {
    let log = ""
    server.stderr!.on("data", (chunk: Buffer) => {
      log += chunk.toString()
      if (log.includes("ready to accept connections")) resolve()
    })
    server.once("exit", (code) => reject(new Error(`postgres exited with ${code}: ${log}`)))
  })
  try {
    await withClient(url("herald", "herald", port, "postgres"), (c) => c.query("CREATE DATABASE herald"))
    const legacyUrl = url("herald", "herald", port, "herald")
    await migrate(legacyUrl)
    await withClient(legacyUrl, (c) => c.query(`INSERT INTO accounts (id, name, email, password_hash, created_at)
      VALUES ('acct_legacy', 'legacy', 'legacy@customers.test', 'x', now())`))
  } finally {
    server.kill("SIGINT")
    await exited
  }
}
