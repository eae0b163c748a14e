/**
 * SMTP submission's AUTH bounds: three failed AUTHs end a session (421), and failures count in the
 * one per-address table the HTTP API uses (HERALD_AUTH_FAILURES_PER_MIN): a guesser alternating
 * protocols gains nothing — past the limit, the address's AUTH gets 421 (even with a valid key)
 * and its wrong Bearer tokens 429, until the minute passes.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type SendingApp, startSendingApp } from "../support/sending.ts"
import { submitRaw } from "../support/submission.ts"

let rig: SendingApp

beforeAll(async () => {
  rig = await startSendingApp({ HERALD_AUTH_FAILURES_PER_MIN: "5" })
})
afterAll(() => rig.stop())

/** A raw SMTP dialog: each command's reply line (the last line of a multi-line reply). */
const dialog = (port: number, commands: ReadonlyArray<string>): Promise<ReadonlyArray<string>> =>
  new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    const replies: Array<string> = []
    let buffer = ""
    let next = 0
    socket.on("data", (chunk) => {
      buffer += chunk.toString("latin1")
      let end: number
      while ((end = buffer.indexOf("\r\n")) !== -1) {
        const line = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        if (line[3] === "-") continue
        replies.push(line)
        if (next < commands.length) socket.write(`${commands[next++]}\r\n`)
      }
    })
    socket.on("close", () => resolve(replies))
    socket.on("error", reject)
    setTimeout(() => socket.destroy(), 10_000)
  })

const plain = (user: string, pass: string) => `AUTH PLAIN ${Buffer.from(`\0${user}\0${pass}`).toString("base64")}`

describe("SMTP submission AUTH", () => {
  it("ends a session at its third failed AUTH with 421", async () => {
    const replies = await dialog(rig.app.submissionPort, ["EHLO app.test", plain("a", "wrong1"), plain("a", "wrong2"), plain("a", "wrong3"), "NOOP"])
    expect(replies[0]).toMatch(/^220 /)
    expect(replies[2]).toMatch(/^535 5\.7\.8/)
    expect(replies[3]).toMatch(/^535 5\.7\.8/)
    expect(replies[4]).toMatch(/^421 4\.7\.0/)
    // Closed: NOOP was never answered.
    expect(replies).toHaveLength(5)
  })

  it("counts failures in the HTTP API's table: past the limit, AUTH gets 421 and wrong Bearer tokens 429", async () => {
    // Three SMTP failures above, two HTTP ones here: five, the limit, from 127.0.0.1.
    for (let i = 0; i < 2; i++) {
      expect((await rig.app.request("GET", "/v1/client/keys", { token: `hrld_wrong_${i}` })).status).toBe(401)
    }
    const refused = await submitRaw({ port: rig.app.submissionPort, token: rig.sender.token, envelope: { from: rig.sender.from, to: ["x@example.org"] }, raw: `From: <${rig.sender.from}>\r\n\r\nhi\r\n` })
    expect(refused.code).toBe(421)
    expect(refused.text).toContain("Too many failed authentications from this address (HERALD_AUTH_FAILURES_PER_MIN is 5 a minute)")
    expect((await rig.app.request("GET", "/v1/client/keys", { token: "hrld_wrong_again" })).status).toBe(429)
  })
})
