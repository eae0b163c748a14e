/**
 * An HTTPS server on loopback serving MTA-STS policies (`/.well-known/mta-sts.txt`) by Host
 * header, with a certificate the test chose (one from ./test-ca.ts naming every `mta-sts.<domain>`
 * it serves). Records every request, so a test can show a refused host was never asked.
 */
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import type { KeyAndCert } from "./test-ca.ts"

export interface PolicyAnswer {
  readonly status?: number
  readonly body: string
  readonly contentType?: string
  readonly headers?: Record<string, string>
}

export interface PolicyServer {
  readonly port: number
  /** What `mta-sts.<domain>` answers (undefined: 404). */
  readonly set: (domain: string, answer: PolicyAnswer | undefined) => void
  /** The Host names asked, in order. */
  readonly requests: Array<string>
  readonly close: () => Promise<void>
}

export const policyText = (mode: string, mx: ReadonlyArray<string>, maxAge = 86_400) =>
  ["version: STSv1", `mode: ${mode}`, ...mx.map((m) => `mx: ${m}`), `max_age: ${maxAge}`, ""].join("\r\n")

export const startPolicyServer = async (tls: KeyAndCert, host = "127.0.0.1"): Promise<PolicyServer> => {
  const answers = new Map<string, PolicyAnswer>()
  const requests: Array<string> = []
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (req, res) => {
    const name = String(req.headers.host ?? "").replace(/:\d+$/, "").toLowerCase()
    requests.push(name)
    const answer = req.url === "/.well-known/mta-sts.txt" ? answers.get(name) : undefined
    if (answer === undefined) {
      res.writeHead(404).end("not found")
      return
    }
    res.writeHead(answer.status ?? 200, { "content-type": answer.contentType ?? "text/plain", ...answer.headers }).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  return {
    port: (server.address() as AddressInfo).port,
    set: (domain, answer) => (answer === undefined ? answers.delete(`mta-sts.${domain}`) : answers.set(`mta-sts.${domain}`, answer)),
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
