/**
 * The processor hands a claimed batch to the parse workers whole (`WorkerPool.runAll`, one effect
 * for the batch): the outcomes come back in the batch's order, the same as parsing in this thread,
 * and a message the parsers refuse fails alone.
 */
import { Duration, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import type { Understood } from "../../src/inbound/parse/types.ts"
import { understandMessage } from "../../src/inbound/understand.ts"
import { makeWorkerPool } from "../../src/lib/worker-pool.ts"
import { arf, dsn } from "../support/reports.ts"

const ORIGINAL = "From: app@sender.test\r\nTo: user@rcpt.test\r\nSubject: Hello\r\nMessage-ID: <abcDEF123@sender.test>"
const tooManyParts = () => {
  const parts = Array.from({ length: 1001 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}`).join("\r\n")
  return `Content-Type: multipart/mixed; boundary="b"\r\n\r\n${parts}\r\n--b--\r\n`
}

describe("the parse worker pool", () => {
  it("parses a batch in its order, as this thread would, a refused message failing alone", async () => {
    const batch = [dsn("b@bounces.test", "gone@rcpt.test", "5.1.1", ORIGINAL), tooManyParts(), arf("fbl@bounces.test", "angry@rcpt.test", ORIGINAL)]
    const expected = [await understandMessage(Buffer.from(batch[0]!)), await understandMessage(Buffer.from(batch[2]!))]
    const exits = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const pool = yield* makeWorkerPool<Understood>({
        name: "test parser",
        file: new URL("../../src/inbound/parse-worker.ts", import.meta.url),
        size: 1,
        pipeline: 2,
        timeout: Duration.seconds(30),
        inProcess: (bytes) => understandMessage(Buffer.from(bytes))
      })
      return yield* pool.runAll(batch.map((text) => new Uint8Array(Buffer.from(text))))
    })))
    expect(exits.map(Exit.isSuccess)).toEqual([true, false, true])
    expect(exits[0]).toEqual(Exit.succeed(expected[0]))
    expect(exits[2]).toEqual(Exit.succeed(expected[1]))
    expect(String(Exit.isFailure(exits[1]!) ? exits[1].cause : "")).toContain("Max allowed child nodes exceeded")
  })
})
