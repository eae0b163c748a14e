/**
 * The HTTP server listens a few seconds before the API's handler is attached (the rest of the
 * appliance is built in between). A request in that window — a health-check loop, a load
 * balancer's probe — is answered 503 `starting` with `Retry-After`, never left waiting: Node drops
 * a request no listener takes, and its client used to wait for good (src/api/front-door.ts).
 *
 * How wide that window is depends on the machine: on a fast one a spawned appliance attaches its
 * handler within a few milliseconds of listening, and a loop of asks can miss it (CI did). So the
 * 503 itself is proven on the server class, over a real socket, with no handler attached; the
 * spawned appliance proves that no ask during a real start is left waiting, and that whatever
 * is not served is that same 503.
 */
import { once } from "node:events"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it } from "vitest"
import { FrontDoorServer } from "../../src/api/front-door.ts"
import { type ApplianceProcess, spawnAppliance } from "../support/appliance.ts"

/** What an ask of /health got: the status, with Retry-After and the error code for a 503. */
const describeAnswer = async (response: Response) => {
  const body = await response.text()
  return response.status === 503 ? `503 ${response.headers.get("retry-after")} ${JSON.parse(body).error?.code}` : String(response.status)
}

/**
 * Asks /health in a tight loop, each ask bounded by `limitMs`, recording what it got; returns the
 * stop, and the loop's end (its last ask settled: answered, refused or timed out).
 */
const askRepeatedly = (baseUrl: string, seen: Array<string>, limitMs: number) => {
  let asking = true
  const ask = async () => {
    try {
      seen.push(await describeAnswer(await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(limitMs) })))
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

/** A FrontDoorServer listening on a free loopback port, with no API handler attached yet. */
const listening = async (holdWhileStarting: boolean) => {
  const server = new FrontDoorServer(holdWhileStarting)
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const attachApi = () => server.on("request", (_request, response) => response.writeHead(200).end("ok"))
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()))
  return { server, baseUrl, attachApi, close }
}

describe("the front door before the API's handler is attached", () => {
  it("answers 503 starting with Retry-After: 1 in the error envelope, then serves once the handler is there", async () => {
    const door = await listening(false)
    try {
      const before = await fetch(`${door.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) })
      expect(before.headers.get("content-type")).toBe("application/json")
      const body = (await before.clone().json()) as { error: unknown }
      expect(body.error).toMatchObject({ type: "api_error", code: "starting" })
      expect(await describeAnswer(before)).toBe("503 1 starting")
      door.attachApi()
      expect(await describeAnswer(await fetch(`${door.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) }))).toBe("200")
    } finally {
      door.server.closeAllConnections()
      await door.close()
    }
  })

  it("in a supervised worker, holds the request and hands it to the API once attached (its siblings serve meanwhile)", async () => {
    const door = await listening(true)
    try {
      const asked = fetch(`${door.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) }).then(describeAnswer)
      // The request is held, not answered: nothing settles until the handler comes.
      const early = await Promise.race([asked, new Promise((resolve) => setTimeout(() => resolve("still held"), 300))])
      expect(early).toBe("still held")
      door.attachApi()
      expect(await asked).toBe("200")
    } finally {
      await door.close()
    }
  })
})

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
    // answer, or "no answer" after its 15 s) every ask is recorded.
    await asking!.settled
    const answers = seen.filter((s) => s !== "refused")
    expect(answers, seen.join(", ")).not.toContain("no answer")
    expect(answers.at(-1), seen.join(", ")).toBe("200")
    // Whether the window was caught depends on the machine's speed; anything not served is the 503.
    expect(answers.filter((a) => a !== "200" && a !== "503 1 starting"), seen.join(", ")).toEqual([])
  }, 120_000)
})
