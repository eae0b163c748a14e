/**
 * The HTTP server listens a few seconds before the API's handler is attached (the rest of the
 * appliance is built in between). A request in that window — a health-check loop, a load
 * balancer's probe — is answered 503 `starting` with `Retry-After`, never left waiting: Node drops
 * a request no listener takes, and its client used to wait for good (src/api/front-door.ts).
 */
import { afterAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"

/** Asks /health in a tight loop, each ask bounded by `limitMs`, recording what it got; returns the stop. */
const askRepeatedly = (baseUrl: string, seen: Array<string>, limitMs: number) => {
  let asking = true
  const ask = async () => {
    try {
      const response = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(limitMs) })
      const body = await response.text()
      seen.push(response.status === 503 ? `503 ${response.headers.get("retry-after")} ${JSON.parse(body).error?.code}` : String(response.status))
    } catch (error) {
      // Refused before the server listens: not an answer, ask again. A timeout is what must not happen.
      seen.push((error as Error).name === "TimeoutError" ? "no answer" : "refused")
    }
  }
  void (async () => {
    while (asking) {
      await ask()
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  return () => {
    asking = false
  }
}

describe("a request while the appliance starts", () => {
  let app: ApplianceProcess | undefined
  afterAll(async () => {
    await app?.stop()
  })

  it("is answered 503 starting with Retry-After, or served: never left waiting", async () => {
    const seen: Array<string> = []
    app = await spawnAppliance({ whileStarting: (baseUrl) => askRepeatedly(baseUrl, seen, 15_000) })
    // Let the last ask settle.
    await new Promise((resolve) => setTimeout(resolve, 15_500))
    const answers = seen.filter((s) => s !== "refused")
    expect(answers, seen.join(", ")).not.toContain("no answer")
    expect(new Set(answers.filter((a) => a !== "200")), seen.join(", ")).toEqual(new Set(["503 1 starting"]))
  }, 120_000)
})
