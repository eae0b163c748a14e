/**
 * The README's quick start, run as written: the commands of its marked block
 * (`<!-- quick-start -->` … `<!-- /quick-start -->`), in order, by a real shell, against a fresh
 * appliance started as `npm start` starts it (src/main.ts in its own process, no bootstrap key: it
 * prints the first one) with no DNS server at all (its resolver points at a closed port). The test
 * only provides what the README asks the reader to export: HERALD_URL, KEY (read from the start's
 * output) and WEBHOOK_URL (a receiver of its own).
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { verifySignature } from "../../src/webhooks/signature.ts"
import { type ApplianceProcess, repoRoot, spawnAppliance } from "../support/appliance.ts"
import { eventually } from "../support/eventually.ts"
import { freePort } from "../support/net.ts"
import { type Receiver, startReceiver } from "../webhooks/receiver.ts"

/** The shell commands of the README's quick-start block, continuation lines joined. */
const quickStartCommands = (readme: string): ReadonlyArray<string> => {
  const block = /<!-- quick-start -->\s*```sh\n([\s\S]*?)```\s*<!-- \/quick-start -->/.exec(readme)
  if (block === null) throw new Error("README.md has no quick-start block")
  const commands: Array<string> = []
  let pending = ""
  for (const line of block[1]!.split("\n")) {
    if (pending === "" && (line.trim() === "" || line.trim().startsWith("#"))) continue
    pending += pending === "" ? line : `\n${line}`
    if (!line.endsWith("\\")) {
      commands.push(pending)
      pending = ""
    }
  }
  if (pending !== "") commands.push(pending)
  return commands
}

const MARK = "::quick-start step::"

/** Runs `script` with `sh`, with only what a reader's shell would have (PATH with node, HOME) and `env`. */
const shell = (script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", script], {
      cwd: repoRoot,
      env: { PATH: `${path.dirname(process.execPath)}:${process.env["PATH"] ?? ""}`, HOME: process.env["HOME"] ?? "/tmp", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()))
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()))
    child.once("error", reject)
    child.once("close", (code) => resolve({ code, stdout, stderr }))
  })

let app: ApplianceProcess
let receiver: Receiver
let env: Record<string, string>

beforeAll(async () => {
  receiver = await startReceiver(200)
  app = await spawnAppliance({
    bootstrapKey: null,
    env: {
      HERALD_DNS_SERVERS: `127.0.0.1:${await freePort()}`,
      // As `npm start` runs it: the MTA on (the test helpers' default is off).
      HERALD_MTA_ENABLED: "true",
      // The test's receiver is on loopback (a reader's request-bin URL is public).
      HERALD_WEBHOOK_ALLOW_PRIVATE: "true"
    }
  })
  const key = /hrld_[A-Za-z0-9_]+/.exec(app.output())?.[0]
  expect(key, `the first start prints its key:\n${app.output()}`).toBeDefined()
  env = { HERALD_URL: app.baseUrl, KEY: key!, WEBHOOK_URL: receiver.url("/quick-start") }
}, 90_000)
afterAll(async () => {
  await app?.stop()
  await receiver?.close()
})

describe("README quick start", () => {
  it("runs as written: domain, webhook, a send to the simulator, the webhook's email.sent and the audit", async () => {
    const commands = quickStartCommands(readFileSync(path.join(repoRoot, "README.md"), "utf8"))
    expect(commands.length).toBeGreaterThanOrEqual(4)
    const script = commands.map((c) => `printf '\\n%s\\n' '${MARK}'\n${c}`).join("\n")
    const run = await shell(`set -e\n${script}`, env)
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const outputs = run.stdout.split(MARK).slice(1).map((o) => o.trim())
    expect(outputs).toHaveLength(commands.length)
    const answerOf = (route: RegExp) => {
      const i = commands.findIndex((c) => route.test(c))
      expect(i, `a command for ${route}`).toBeGreaterThanOrEqual(0)
      return { command: commands[i]!, json: JSON.parse(outputs[i]!) }
    }

    const domain = answerOf(/-X POST "\$HERALD_URL\/v1\/client\/domains"/).json
    expect(domain).toMatchObject({ domain: "acme.example", verified: false })
    expect(domain.records.length).toBeGreaterThan(0)

    const hook = answerOf(/-X PATCH "\$HERALD_URL\/v1\/client\/keys\//).json
    expect(hook.webhook_secret).toMatch(/^whsec_/)

    const sent = answerOf(/\/v1\/mail\/send/).json
    expect(sent.items[0]).toMatchObject({ status: "queued", sandbox: false })
    expect(sent.message_id).toBe(sent.items[0].message_id)

    const [hit] = await receiver.waitFor(1, (h) => h.json?.event === "email.sent")
    expect(hit!.json).toMatchObject({ event: "email.sent", to: ["delivered@simulator.herald.invalid"], message_id: sent.message_id })
    expect(verifySignature(hook.webhook_secret, String(hit!.headers["x-herald-timestamp"]), hit!.body, String(hit!.headers["x-herald-signature"]), new Date())).toBe(true)

    const audit = answerOf(/\/v1\/mail\/audit/)
    expect(audit.json.items[0]).toMatchObject({ recipient: "delivered@simulator.herald.invalid", message_id: sent.message_id })
    // "Run it again if it still says queued": the same command, until the delivery shows sent.
    const final = await eventually(async () => {
      const again = await shell(audit.command, env)
      const item = JSON.parse(again.stdout).items[0]
      return item?.event === "sent" ? item : undefined
    }, "the audit showing the delivery sent")
    expect(final).toMatchObject({ event: "sent", smtp_code: 250, message_id: sent.message_id })
  }, 60_000)
})
