/**
 * HERALD_LOG_FORMAT=json: every log line is one flat JSON object, request lines carry the
 * request's id (the same as its `X-Request-Id`), actor lines carry the actor's name.
 */
import { describe, expect, it } from "vitest"
import { spawnAppliance } from "../support/appliance.ts"
import { sleep } from "../support/net.ts"

type Line = Record<string, unknown>

/** The JSON objects among the process's output lines (Node's own warnings are plain text). */
const jsonLines = (output: string): Array<Line> =>
  output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Line)

/** Polls the output until `predicate` finds a line or the deadline passes. */
const waitForLine = async (output: () => string, predicate: (line: Line) => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = jsonLines(output()).find(predicate)
    if (found !== undefined || Date.now() > deadline) return found
    await sleep(100)
  }
}

describe("structured logs", () => {
  it("writes JSON lines carrying the request id of a request and the name of an actor", async () => {
    const app = await spawnAppliance({
      env: { HERALD_LOG_FORMAT: "json", HERALD_LOG_LEVEL: "debug" },
      waitMs: 150_000
    })
    try {
      const res = await app.request("GET", "/v1/client/keys")
      expect(res.status).toBe(200)
      const requestId = res.headers.get("x-request-id")
      expect(requestId).toMatch(/^req_/)

      const requestLine = await waitForLine(app.output, (l) => l["request_id"] === requestId)
      expect(requestLine).toMatchObject({ request_id: requestId, level: "DEBUG", path: "/v1/client/keys", status: 200 })
      const actorLine = await waitForLine(app.output, (l) => typeof l["actor"] === "string")
      expect(actorLine?.["actor"]).toEqual(expect.any(String))

      const lines = jsonLines(app.output())
      expect(lines.length).toBeGreaterThan(2)
      for (const line of lines) {
        expect(line).toEqual(expect.objectContaining({ timestamp: expect.any(String), level: expect.any(String) }))
        expect(line).toHaveProperty("message")
      }
    } finally {
      await app.stop()
    }
    expect(await app.exited).toBe(0)
  }, 240_000)
})
