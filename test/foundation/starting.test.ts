/**
 * The HTTP server listens a few seconds before the API's handler is attached (the rest of the
 * appliance is built in between). A request in that window — a health-check loop, a load
 * balancer's probe — is answered 503 `starting` with `Retry-After`, never left waiting: Node drops
 * a request no listener takes, and its client used to wait for good (src/api/front-door.ts).
 */
import { afterAll, describe, expect, it } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"

/**
 * Asks /health in a tight loop, each ask bounded by `limitMs`, recording what it got; returns the
 * stop, and the loop's end (its last ask settled: answered, refused or timed out).
 */
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
  const settled = (async () => {
    while (asking) {
      await ask()
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
  })()
  const stop = () => {
    asking = false
  }
  return { stop, settled }
}

describe("a request while the appliance starts", () => {
  let app: ApplianceProcess | undefined
  afterAll(async () => {
    await app?.stop()
  })

  it("is answered 503 starting with Retry-After, or served: never left waiting", async () => {
    const seen: Array<string> = []
    let asking: ReturnType<typeof askRepeatedly> | undefined
    app = await spawnAppliance({
      whileStarting: (baseUrl) => {
        asking = askRepeatedly(baseUrl, seen, 15_000)
        return asking.stop
      }
    })
    // The asks run one after the other: only the last can still be open. Once it has settled (an
    // answer, or "no answer" after its 15 s) every ask is recorded; a fixed 15.5 s wait did the same.
    await asking!.settled
    const answers = seen.filter((s) => s !== "refused")
    expect(answers, seen.join(", ")).not.toContain("no answer")
    expect(new Set(answers.filter((a) => a !== "200")), seen.join(", ")).toEqual(new Set(["503 1 starting"]))
  }, 120_000)
})
