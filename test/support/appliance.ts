/**
 * A real, listening appliance for HTTP tests: in this process (fast, for most tests) or as a child
 * process of Herald under Node (compiled, bin/herald.mjs) or Deno (src/main.ts) (start-up, signals, crashes, replicas).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as path from "node:path"
import { Cause, ConfigProvider, Effect, Exit, Fiber, Layer } from "effect"
import { ApplianceLive, BaseLive, ServicesLive } from "../../src/appliance.ts"
import { freshDatabase } from "./database.ts"
import { freePort, knockRepeatedly, waitForStatus } from "./net.ts"

export const repoRoot = path.resolve(import.meta.dirname, "../..")

export interface Appliance {
  readonly baseUrl: string
  readonly databaseUrl: string
  /** The MX listener's port on 127.0.0.1. */
  readonly smtpPort: number
  /** The SMTP submission listener's port (STARTTLS) on 127.0.0.1. */
  readonly submissionPort: number
  /** The bootstrap admin key's token. */
  readonly adminToken: string
  readonly request: (method: string, route: string, options?: RequestOptions) => Promise<ApiResponse>
  readonly stop: () => Promise<void>
}

export interface RequestOptions {
  readonly token?: string | null
  readonly body?: unknown
  readonly rawBody?: string
  readonly headers?: Record<string, string>
}

export interface ApiResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  // Tests read arbitrary JSON shapes; each assertion states what it expects.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly json: any
}

export const newToken = () => `hrld_test_${randomBytes(20).toString("hex")}`

const makeRequest = (baseUrl: string, adminToken: string) =>
async (method: string, route: string, options: RequestOptions = {}): Promise<ApiResponse> => {
  const headers: Record<string, string> = { ...options.headers }
  const token = options.token === undefined ? adminToken : options.token
  if (token !== null && token !== "") headers["authorization"] = `Bearer ${token}`
  let body: string | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json"
  const response = await fetch(`${baseUrl}${route}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await response.text()
  let json: unknown = undefined
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

export interface StartOptions {
  /** A database URL; omitted → a fresh database; null → no DATABASE_URL (embedded PostgreSQL). */
  readonly databaseUrl?: string | null
  readonly env?: Record<string, string>
  /** HERALD_BOOTSTRAP_KEY: omitted → a fresh token; null → unset (the first start prints a key). */
  readonly bootstrapKey?: string | null
}

const baseEnv = async (options: StartOptions) => {
  const databaseUrl = options.databaseUrl === null ? "" : options.databaseUrl ?? (await freshDatabase())
  const port = await freePort()
  const smtpPort = await freePort()
  const submissionPort = await freePort()
  const submissionTlsPort = await freePort()
  const adminToken = options.bootstrapKey === undefined ? newToken() : options.bootstrapKey ?? ""
  const env: Record<string, string> = {
    ...(databaseUrl === "" ? {} : { DATABASE_URL: databaseUrl }),
    HERALD_HTTP_PORT: String(port),
    HERALD_HTTP_HOST: "127.0.0.1",
    HERALD_SMTP_PORT: String(smtpPort),
    HERALD_SMTP_HOST: "127.0.0.1",
    HERALD_SUBMISSION_PORT: String(submissionPort),
    HERALD_SUBMISSION_TLS_PORT: String(submissionTlsPort),
    ...(adminToken === "" ? {} : { HERALD_BOOTSTRAP_KEY: adminToken }),
    HERALD_LOG_LEVEL: "warn",
    HERALD_HOSTNAME: "herald.test",
    // Tests that are not about delivery keep the queue as they left it (test/support/mta.ts turns it on).
    HERALD_MTA_ENABLED: "false",
    ...options.env
  }
  return { databaseUrl, port, smtpPort, submissionPort, adminToken, env }
}

/** Runs the appliance layer in this process, configured only by `env` (not the real environment). */
export const startAppliance = async (options: StartOptions = {}): Promise<Appliance> => {
  const { adminToken, databaseUrl, env, port, smtpPort, submissionPort } = await baseEnv(options)
  const provider = ConfigProvider.fromMap(new Map(Object.entries(env)))
  const fiber = Effect.runFork(
    Layer.launch(ApplianceLive).pipe(Effect.provide(BaseLive), Effect.withConfigProvider(provider))
  )
  const baseUrl = `http://127.0.0.1:${port}`
  const failed = Effect.runPromise(Fiber.await(fiber)).then((exit) =>
    Promise.reject(new Error(`the appliance stopped before it was healthy: ${Cause.pretty(Exit.isFailure(exit) ? exit.cause : Cause.empty)}`)))
  failed.catch(() => undefined)
  await Promise.race([waitForStatus(`${baseUrl}/health`), failed])
  return {
    baseUrl,
    databaseUrl,
    smtpPort,
    submissionPort,
    adminToken,
    request: makeRequest(baseUrl, adminToken),
    stop: () => Effect.runPromise(Fiber.interrupt(fiber)).then(() => undefined)
  }
}

export interface ApplianceProcess extends Appliance {
  readonly child: ChildProcess
  readonly output: () => string
  readonly exited: Promise<number | null>
}

/**
 * Herald under Node as `npm start` runs it: the compiled appliance through its launcher (built by
 * the global setup before any test runs, so no test pays for compiling).
 */
export const heraldUnderNode: ReadonlyArray<string> = [process.execPath, path.join(repoRoot, "bin/herald.mjs")]

/** Spawns Herald as its own process (the compiled one under Node, or src/main.ts under Deno) with `env` over a minimal environment. */
export interface SpawnOptions extends StartOptions {
  readonly runtime?: "node" | "deno"
  readonly args?: ReadonlyArray<string>
  readonly waitMs?: number
  /** Run the child as this user (tests of the embedded cluster as an ordinary user). */
  readonly uid?: number
  readonly gid?: number
  /** Connect to the HTTP port over and over while the appliance starts (a health-check loop's probes). */
  readonly knockWhileStarting?: boolean
  /** Runs from the spawn until the appliance is healthy (started with its base URL; the returned function stops it). */
  readonly whileStarting?: (baseUrl: string) => () => void
}

export const spawnAppliance = async (options: SpawnOptions = {}): Promise<ApplianceProcess> => {
  const { adminToken, databaseUrl, env, port, smtpPort, submissionPort } = await baseEnv(options)
  const command = options.runtime === "deno"
    ? [path.join(repoRoot, "node_modules/.bin/deno"), "run", "-A", "src/main.ts"]
    : heraldUnderNode
  let output = ""
  const child = spawn(command[0]!, [...command.slice(1), ...(options.args ?? [])], {
    cwd: repoRoot,
    env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid })
  })
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const baseUrl = `http://127.0.0.1:${port}`
  const stopKnocking = options.knockWhileStarting === true ? knockRepeatedly(port) : () => undefined
  const stopWatching = options.whileStarting?.(baseUrl) ?? (() => undefined)
  await Promise.race([
    waitForStatus(`${baseUrl}/health`, options.waitMs ?? 60_000),
    exited.then((code) => Promise.reject(new Error(`appliance exited (${code}) before it was healthy:\n${output}`)))
  ]).finally(() => {
    stopKnocking()
    stopWatching()
  })
  return {
    baseUrl,
    databaseUrl,
    smtpPort,
    submissionPort,
    adminToken,
    child,
    exited,
    output: () => output,
    request: makeRequest(baseUrl, adminToken),
    stop: async () => {
      if (child.exitCode === null) child.kill("SIGTERM")
      await exited
    }
  }
}

/**
 * Runs `effect` against the services of an appliance's database, in this process (for driving a
 * chore such as the scheduler at a chosen moment instead of waiting for it).
 */
/** The configuration of in-process services in tests: `env` over the test defaults. */
const testConfig = (databaseUrl: string, env: Record<string, string>) =>
  ConfigProvider.fromMap(new Map(Object.entries({
    DATABASE_URL: databaseUrl,
    HERALD_LOG_LEVEL: "warn",
    HERALD_HOSTNAME: "herald.test",
    ...env
  })))

/** The appliance's services (no HTTP, no actors) on `databaseUrl`: for tests that run an actor layer on TestClock. */
export const servicesOn = (databaseUrl: string, env: Record<string, string> = {}) =>
  ServicesLive.pipe(Layer.provideMerge(BaseLive), Layer.provide(Layer.setConfigProvider(testConfig(databaseUrl, env))))

/** Runs `effect` with the appliance's services on `app`'s database. */
export const withServices = <A, E>(
  app: Appliance,
  effect: Effect.Effect<A, E, Layer.Layer.Success<typeof ServicesLive>>,
  env: Record<string, string> = {}
): Promise<A> =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(ServicesLive),
      Effect.provide(BaseLive),
      Effect.withConfigProvider(testConfig(app.databaseUrl, env))
    )
  )

export interface CommandResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs Herald `<args>` under Node to completion with `env` over a minimal environment:
 * operator commands, and start-ups that must fail. Killed (code null) after `timeoutMs`.
 */
export const runMain = (
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  timeoutMs = 60_000
): Promise<CommandResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(heraldUnderNode[0]!, [...heraldUnderNode.slice(1), ...args], {
      cwd: repoRoot,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? "/tmp", HERALD_LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.once("error", reject)
    // "close" (not "exit") so that all of stdout has been read.
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
