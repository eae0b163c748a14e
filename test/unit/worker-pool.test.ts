/**
 * src/lib/worker-pool.ts with a real worker (test/support/echo-worker.ts, a `.ts` file that vitest
 * does not transform: the pool loads it itself): tasks reach workers and come back, the bytes are
 * transferred, a task that throws fails as a value, a crash, an exhausted heap or a timeout fails
 * the task (and the one handed in behind it) and replaces its worker, a full queue refuses at once,
 * shutdown terminates the workers and fails what is left, and a worker that cannot be started at
 * all falls back to this thread with one warning. Last, the inbound parse worker
 * (src/inbound/parse-worker.ts) answers as `understandMessage` does in this thread.
 */
import { Duration, Effect, Exit, Logger, Scope } from "effect"
import { describe, expect, it } from "vitest"
import type { Understood } from "../../src/inbound/parse/types.ts"
import { understandMessage } from "../../src/inbound/understand.ts"
import { makeWorkerPool, type WorkerPool, type WorkerPoolOptions, WorkerTaskError } from "../../src/lib/worker-pool.ts"
import { dsn } from "../support/reports.ts"

const ECHO = new URL("../support/echo-worker.ts", import.meta.url)
const text = (s: string) => new Uint8Array(Buffer.from(s, "utf8"))

interface Echo {
  readonly text?: string
  readonly threadId: number
  readonly bytes?: number
  readonly transferred?: boolean
}

const options = (overrides: Partial<WorkerPoolOptions<Echo>> = {}): WorkerPoolOptions<Echo> => ({
  name: "test pool",
  file: ECHO,
  size: 2,
  timeout: Duration.seconds(30),
  startTimeout: Duration.seconds(60),
  inProcess: async (bytes) => ({ text: `in-process ${Buffer.from(bytes).toString("utf8")}`, threadId: -1 }),
  ...overrides
})

/** A pool in a scope of its own, closed by the caller (or at the end of `use`). */
const withPool = async <T>(opts: WorkerPoolOptions<Echo>, use: (pool: WorkerPool<Echo>, scope: Scope.CloseableScope) => Promise<T>) => {
  const scope = Effect.runSync(Scope.make())
  const pool = await Effect.runPromise(Scope.extend(makeWorkerPool(opts), scope))
  try {
    return await use(pool, scope)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

const run = (pool: WorkerPool<Echo>, command: string) => Effect.runPromise(pool.run(text(command)))
const runEither = (pool: WorkerPool<Echo>, command: string) => Effect.runPromise(Effect.either(pool.run(text(command))))

const failure = async (pool: WorkerPool<Echo>, command: string) => {
  const result = await runEither(pool, command)
  if (result._tag === "Right") throw new Error(`expected ${command} to fail, got ${JSON.stringify(result.right)}`)
  expect(result.left).toBeInstanceOf(WorkerTaskError)
  return result.left
}

describe("worker pool", () => {
  it("runs tasks on its workers (a .ts entry, loaded by the pool) and spreads them", async () => {
    await withPool(options(), async (pool) => {
      const echoed = await run(pool, "echo:héllo")
      expect(echoed.text).toBe("héllo")
      expect(echoed.threadId).toBeGreaterThan(0) // not this thread (0)
      const replies = await Effect.runPromise(Effect.forEach([1, 2, 3, 4], () => pool.run(text("sleep:300")), { concurrency: "unbounded" }))
      expect(new Set(replies.map((r) => r.threadId)).size).toBe(2)
      expect(await Effect.runPromise(pool.stats)).toMatchObject({ started: 2, alive: 2, replaced: 0, inProcess: 0 })
    })
  })

  it("hands progress values to the caller and stops the task's clock until the caller resumes it", async () => {
    await withPool(options({ size: 1, timeout: Duration.millis(600) }), async (pool) => {
      const seen: Array<unknown> = []
      // The worker answers 1.2 s after its progress value: past its 600 ms unless its clock stopped.
      const held = await Effect.runPromise(Effect.either(pool.run(text("progress:1200"), undefined, undefined, (value, resume) => {
        seen.push(value)
        setTimeout(resume, 1_000)
      })))
      expect(seen).toEqual([{ sent: true }])
      expect(held._tag).toBe("Right")
      // Resumed at once, the clock runs on and the same task is past its time.
      const prompt = await Effect.runPromise(Effect.either(pool.run(text("progress:1200"), undefined, undefined, (_, resume) => resume())))
      expect(prompt._tag === "Left" && prompt.left.reason).toBe("timeout")
    })
  })

  it("transfers a buffer it owns, copies a view over part of one", async () => {
    await withPool(options({ size: 1 }), async (pool) => {
      const owned = text("echo:owned")
      expect((await Effect.runPromise(pool.run(owned))).transferred).toBe(true)
      expect(owned.byteLength).toBe(0) // detached: handed over, not copied

      const whole = Buffer.from("xxxxecho:part-of-a-bigger-buffer")
      const view = whole.subarray(4)
      const echoed = await Effect.runPromise(pool.run(view))
      expect(echoed).toMatchObject({ text: "part-of-a-bigger-buffer", transferred: true })
      expect(whole.toString()).toBe("xxxxecho:part-of-a-bigger-buffer") // the shared buffer is intact
    })
  })

  it("fails a task that throws as a value, and keeps the worker", async () => {
    await withPool(options({ size: 1 }), async (pool) => {
      const before = (await run(pool, "echo:a")).threadId
      expect(await failure(pool, "throw")).toMatchObject({ reason: "failed", message: "told to throw" })
      expect((await run(pool, "echo:b")).threadId).toBe(before)
      expect((await Effect.runPromise(pool.stats)).replaced).toBe(0)
    })
  })

  it("replaces a worker that crashes or exits; its task fails as a value", async () => {
    await withPool(options({ size: 1 }), async (pool) => {
      const first = (await run(pool, "echo:a")).threadId
      expect(await failure(pool, "crash")).toMatchObject({ reason: "crashed" })
      expect((await failure(pool, "crash")).message).toContain("told to crash")
      const second = (await run(pool, "echo:b")).threadId
      expect(second).not.toBe(first)
      expect(await failure(pool, "exit")).toMatchObject({ reason: "crashed", message: expect.stringContaining("code 7") })
      expect((await run(pool, "echo:c")).threadId).not.toBe(second)
      expect(await Effect.runPromise(pool.stats)).toMatchObject({ replaced: 3, alive: 1, inProcess: 0 })
    })
  })

  it("replaces a worker that runs out of its heap limit, not the process", async () => {
    await withPool(options({ size: 1, maxMemoryMb: 32 }), async (pool) => {
      await run(pool, "echo:ready")
      expect(await failure(pool, "oom")).toMatchObject({ reason: "memory", message: expect.stringContaining("memory") })
      expect((await run(pool, "echo:after")).text).toBe("after")
    })
  })

  it("fails the task handed to a worker after the one that crashed it", async () => {
    await withPool(options({ size: 1 }), async (pool) => {
      await run(pool, "echo:ready")
      const [crashed, next] = await Promise.all([runEither(pool, "crash"), runEither(pool, "echo:innocent")])
      expect(crashed._tag === "Left" && crashed.left.reason).toBe("crashed")
      expect(next._tag === "Left" && next.left.message).toContain("before it ran")
      expect((await run(pool, "echo:after")).text).toBe("after")
    })
  })

  it("fails at once (busy) past its queue, leaving the caller its bytes", async () => {
    await withPool(options({ size: 1, pipeline: 1, queue: 1 }), async (pool) => {
      await run(pool, "echo:ready")
      const running = run(pool, "sleep:1000")
      const waiting = run(pool, "echo:waiting")
      const rejected = text("echo:rejected")
      const result = await Effect.runPromise(Effect.either(pool.run(rejected)))
      expect(result._tag === "Left" && result.left.reason).toBe("busy")
      expect(Buffer.from(rejected).toString()).toBe("echo:rejected")
      expect((await waiting).text).toBe("waiting")
      await running
    })
  })

  it("keeps one owner's flood to its share of the workers: another owner's task passes its line", async () => {
    // Four workers, at most two per owner: the flood of nine 1.5 s tasks takes two workers, the
    // other two stay free for everyone else (without the share, the other owner's task waited
    // behind the flood: 3 s and more). Its own line is bounded too (`ownerQueue`).
    await withPool(options({ size: 4, pipeline: 1, perOwner: 2, ownerQueue: 6 }), async (pool) => {
      while ((await Effect.runPromise(pool.stats)).alive < 4) await new Promise((resolve) => setTimeout(resolve, 50))
      const floodStarted = performance.now()
      const flood = Array.from({ length: 9 }, () => Effect.runPromise(Effect.either(pool.run(text("sleep:1500"), "acct_flood"))))
      await new Promise((resolve) => setTimeout(resolve, 100))
      const started = performance.now()
      const other = await Effect.runPromise(Effect.all([pool.run(text("echo:other"), "acct_other"), pool.run(text("echo:anyone"))], { concurrency: "unbounded" }))
      expect(other.map((o) => o.text)).toEqual(["other", "anyone"])
      expect(performance.now() - started).toBeLessThan(1_000)
      const outcomes = await Promise.all(flood)
      // Two run, six wait in its line: the ninth finds the line full.
      expect(outcomes.filter((o) => o._tag === "Left").map((o) => o._tag === "Left" && o.left.reason)).toEqual(["busy"])
      // Eight tasks, two at a time: four rounds of 1.5 s, never all four workers at once.
      expect(performance.now() - floodStarted).toBeGreaterThan(5_500)
    })
  }, 30_000)

  it("fails a task past the time limit and replaces its (busy) worker", async () => {
    await withPool(options({ size: 1, timeout: Duration.millis(500) }), async (pool) => {
      const first = (await run(pool, "echo:a")).threadId
      const started = performance.now()
      expect(await failure(pool, "hang")).toMatchObject({ reason: "timeout" })
      expect(performance.now() - started).toBeLessThan(10_000)
      expect((await run(pool, "echo:b")).threadId).not.toBe(first)
      expect(await Effect.runPromise(pool.stats)).toMatchObject({ replaced: 1, alive: 1 })
    })
  })

  it("terminates its workers at shutdown and fails the tasks still running or waiting", async () => {
    const scope = Effect.runSync(Scope.make())
    const pool = await Effect.runPromise(Scope.extend(makeWorkerPool(options({ size: 1, pipeline: 1 })), scope))
    await run(pool, "echo:a")
    expect((await Effect.runPromise(pool.stats)).alive).toBe(1)
    const running = runEither(pool, "hang")
    const waiting = runEither(pool, "echo:never")
    await new Promise((r) => setTimeout(r, 200))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    for (const result of [await running, await waiting]) {
      expect(result._tag).toBe("Left")
      if (result._tag === "Left") expect(result.left.reason).toBe("shutdown")
    }
    expect((await Effect.runPromise(pool.stats)).alive).toBe(0)
    expect(await failure(pool, "echo:late")).toMatchObject({ reason: "shutdown" })
  })

  it("runs tasks in this thread, with one warning, when no worker can be started", async () => {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(JSON.stringify(message))
    })
    const scope = Effect.runSync(Scope.make())
    const pool = await Effect.runPromise(
      Scope.extend(makeWorkerPool(options({ file: new URL("../support/no-such-worker.ts", import.meta.url), size: 2 })), scope).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, logger))
      )
    )
    try {
      const results = await Effect.runPromise(
        Effect.forEach(["a", "b", "c", "d"], (s) => pool.run(text(s)), { concurrency: "unbounded" }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger))
        )
      )
      expect(results.map((r) => r.text)).toEqual(["in-process a", "in-process b", "in-process c", "in-process d"])
      expect(await Effect.runPromise(pool.stats)).toMatchObject({ started: 0, alive: 0, inProcess: 4 })
      expect(warnings.filter((w) => w.includes("could not be started"))).toHaveLength(1)
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })

  it("runs the inbound parsers in src/inbound/parse-worker.ts: the same Understood as in this thread", async () => {
    const raw = Buffer.from(dsn("bounce@bounces.herald.test", "gone@rcpt.test", "5.1.1", "Message-ID: <m1@herald.test>\r\nSubject: hello"))
    const expected = await understandMessage(raw)
    expect(expected.kind).toBe("bounce")
    const scope = Effect.runSync(Scope.make())
    try {
      const pool = await Effect.runPromise(Scope.extend(makeWorkerPool<Understood>({
        name: "parse test",
        file: new URL("../../src/inbound/parse-worker.ts", import.meta.url),
        size: 1,
        timeout: Duration.seconds(60),
        inProcess: () => Promise.reject(new Error("expected to run in a worker"))
      }), scope))
      expect(await Effect.runPromise(pool.run(Buffer.from(raw)))).toEqual(expected)
      expect(await Effect.runPromise(pool.stats)).toMatchObject({ started: 1, alive: 1, inProcess: 0 })
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  })
})
