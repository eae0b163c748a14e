/**
 * npm run console:shots [-- DIR] — screenshots of the console: the sign-in screen and each view,
 * at 1280 and 390 px wide, as PNGs in DIR (default dist/console-shots/, git-ignored).
 *
 * Starts its own appliance (embedded PostgreSQL, or DATABASE_URL's server) on a console built
 * into a temporary folder, signs in as the bootstrap admin (admin@HERALD_HOSTNAME with
 * HERALD_BOOTSTRAP_PASSWORD, so every view including Admin is shown) and walks the navigation.
 * Before that it gives the views something to show, through the API as the bootstrap key: a domain,
 * three sends to the simulator (delivered, bounced, complained) and a support ticket; after the
 * walk it opens the first message of the Messages view (message-WIDTH.png) when that view lists one.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdir, mkdtemp, rm } from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { benchPostgres, createDatabase } from "../bench/lib.ts"
import type { Page } from "playwright-core"
import { newPage, openBrowser, screenshot } from "../test/support/browser.ts"
import { signInThroughForm } from "../test/support/console-person.ts"
import { freePort, waitForStatus } from "../test/support/net.ts"
import { buildConsole } from "./build-console.ts"

const repoRoot = path.resolve(import.meta.dirname, "..")
const outDir = path.resolve(process.argv[2] ?? path.join(repoRoot, "dist", "console-shots"))
const WIDTHS = [1280, 390] as const
const HOSTNAME = "herald.shots"
const PASSWORD = `shots-${randomBytes(8).toString("hex")}`
const BOOTSTRAP_KEY = `hrld_shots_${randomBytes(20).toString("hex")}`
/** How long a view may take to replace its "Loading …" lines before it is photographed anyway. */
const SETTLE_MS = 10_000

// Functions given to page.waitForFunction run in the page; this project's tsconfig has no DOM types.
declare const document: { readonly body: { readonly innerText: string } }

/** A file name for a view's title: "Keys and webhooks" → "keys-and-webhooks". */
const slug = (title: string) => title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

const postgres = await benchPostgres()
const consoleDir = await mkdtemp(path.join(os.tmpdir(), "herald-console-shots-"))
await buildConsole(consoleDir)
await mkdir(outDir, { recursive: true })
const port = await freePort()
const baseUrl = `http://127.0.0.1:${port}`
// The browser opens the appliance's base URL (HERALD_BASE_URL below): a sign-in from another origin
// is refused, and http://localhost was refused against a base URL of http://127.0.0.1.
const consoleUrl = baseUrl
const appliance = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
  cwd: repoRoot,
  stdio: ["ignore", "inherit", "inherit"],
  env: {
    PATH: process.env["PATH"] ?? "",
    HOME: process.env["HOME"] ?? "/tmp",
    DATABASE_URL: await createDatabase(postgres.adminUrl, "herald_console_shots"),
    HERALD_HTTP_HOST: "127.0.0.1",
    HERALD_HTTP_PORT: String(port),
    HERALD_SMTP_HOST: "127.0.0.1",
    HERALD_SMTP_PORT: String(await freePort()),
    HERALD_HOSTNAME: HOSTNAME,
    // The sign-in and every console write must come from the base URL's origin (the CSRF rule).
    HERALD_BASE_URL: baseUrl,
    HERALD_BOOTSTRAP_KEY: BOOTSTRAP_KEY,
    HERALD_BOOTSTRAP_PASSWORD: PASSWORD,
    HERALD_CONSOLE_DIR: consoleDir,
    // The simulator's mail goes through the MTA (it never leaves the appliance): on, so sends end.
    HERALD_MTA_ENABLED: "true",
    HERALD_LOG_LEVEL: "warn"
  }
})
/** One API call as the bootstrap key; a refusal stops the script with the API's answer. */
const api = async (method: string, route: string, body?: unknown) => {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${await response.text()}`)
}

/** Something for the views to show: a domain, sends to the simulator, a ticket. */
const seedSamples = async () => {
  await api("POST", "/v1/client/domains", { domain: "acme.example" })
  for (const to of ["delivered", "bounce", "complaint"]) {
    await api("POST", "/v1/mail/send", {
      from: "hello@acme.example",
      to: `${to}@simulator.herald.invalid`,
      subject: `Your receipt (${to})`,
      text: "Thanks for your order.",
      html: "<p>Thanks for your <strong>order</strong>.</p>"
    })
  }
  await api("POST", "/v1/tickets", { subject: "Where do bounces show?", body: "Trying the simulator's bounce@ address." })
  await api("POST", "/v1/bulk/contacts/import", { contacts: ["ada", "grace", "alan"].map((name) => ({ email: `${name}@example.com`, name, tags: ["newsletter"], metadata: { city: "Lyon" } })) })
  await api("POST", "/v1/bulk/lists", { name: "Monthly newsletter" })
  await api("POST", "/v1/bulk/segments", { name: "Active VIPs", rules: { match: "all", rules: [{ field: "tag", op: "has", value: "vip" }, { field: "status", op: "is", value: "active" }] } })
  await api("POST", "/v1/bulk/templates", { name: "Welcome", subject: "Welcome, {{ first_name }}", html: "<h1 style=\"color:#0b57d0\">Hi {{ first_name }}</h1>\n<p>Thanks for joining.</p>", body_text: "Hi {{ first_name }}", vars: { first_name: "Ada" } })
}

/** One API call as the bootstrap key, answering its JSON (the bulk seeds read ids back). */
const apiJson = async (method: string, route: string, body?: unknown): Promise<{ id: string; items: Array<{ id: string }> }> => {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  if (!response.ok) throw new Error(`${method} ${route} answered ${response.status}: ${await response.text()}`)
  return response.json() as Promise<{ id: string; items: Array<{ id: string }> }>
}

/** Campaigns and Sequences (#29): the sample domain trusted by the operator, a list of simulator addresses, a campaign sent to it, a sequence enrolled. */
const seedCampaigns = async () => {
  const admin = (await apiJson("GET", "/v1/admin/accounts?limit=1")).items[0]!
  await apiJson("POST", `/v1/admin/accounts/${admin.id}/domains/acme.example/trust`)
  const list = await apiJson("POST", "/v1/bulk/lists", { name: "Spring customers" })
  await apiJson("POST", `/v1/bulk/lists/${list.id}/contacts`, { contacts: [1, 2, 3, 4].map((n) => `delivered+${n}@simulator.herald.invalid`) })
  const campaign = await apiJson("POST", "/v1/bulk/campaigns", {
    name: "Spring news", from_email: "news@acme.example", subject: "Spring news", list_ids: [list.id],
    html: `<p>Hello {{ email }}, read <a href="https://example.org/spring">the news</a>.</p>`
  })
  await apiJson("POST", `/v1/bulk/campaigns/${campaign.id}/send`, {})
  const sequence = await apiJson("POST", "/v1/bulk/sequences", { name: "Welcome", from_email: "hello@acme.example" })
  await apiJson("POST", `/v1/bulk/sequences/${sequence.id}/steps`, { offset_seconds: 0, subject: "Welcome aboard", body_text: "Welcome, {{ email }}" })
  await apiJson("POST", `/v1/bulk/sequences/${sequence.id}/steps`, { offset_seconds: 86_400, subject: "Two tips", body_text: "Two tips, {{ email }}" })
  await apiJson("POST", `/v1/bulk/sequences/${sequence.id}/enroll`, { list_id: list.id })
}

/** After the walk: the first campaign's page and the first sequence's page (campaign-WIDTH.png, sequence-WIDTH.png). */
const shootFirstOf = async (page: Page, title: string, file: string): Promise<string | undefined> => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: title, exact: true }).click()
  await settle(page)
  const first = page.locator("main table a").first()
  if ((await first.count()) === 0) return undefined
  await first.click()
  await settle(page)
  await screenshot(page, file)
  return file
}

/** Waits (at most SETTLE_MS) until the view no longer says it is loading something. */
const settle = async (page: Page) => {
  await page.waitForLoadState("networkidle")
  await page.waitForFunction(() => !document.body.innerText.includes("Loading"), undefined, { timeout: SETTLE_MS }).catch(() => undefined)
}

/** Opens the first message the Messages view links to; false when it lists none. */
const openFirstMessage = async (page: Page): Promise<boolean> => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Messages", exact: true }).click()
  await settle(page)
  const first = page.locator("main table a").first()
  if ((await first.count()) === 0) return false
  await first.click()
  await settle(page)
  return true
}

/** The Contacts views beyond the list: a contact's page (contact-WIDTH.png) and an import's preview (contact-import-WIDTH.png). */
const shootContacts = async (page: Page, width: number): Promise<Array<string>> => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Contacts", exact: true }).click()
  await page.getByRole("link", { name: "ada@example.com" }).click()
  await settle(page)
  await screenshot(page, path.join(outDir, `contact-${width}.png`))
  await page.getByRole("link", { name: "← All contacts" }).click()
  await page.getByRole("link", { name: "Import contacts" }).click()
  await page.getByLabel("Or paste rows").fill("email,name,tags\nada@example.com,Ada,vip\nlin@example.com,Lin,\nnot-an-address,,\nlin@example.com,,\n")
  await page.getByRole("button", { name: "Preview the import" }).click()
  await page.getByRole("region", { name: "Import preview counts" }).waitFor()
  await screenshot(page, path.join(outDir, `contact-import-${width}.png`))
  return [path.join(outDir, `contact-${width}.png`), path.join(outDir, `contact-import-${width}.png`)]
}

const { browser } = await openBrowser()
const written: Array<string> = []
try {
  await waitForStatus(`${baseUrl}/health`)
  await seedSamples()
  await seedCampaigns()
  for (const width of WIDTHS) {
    const { context, page } = await newPage(browser, { width })
    await page.goto(`${consoleUrl}/console/`)
    await page.getByRole("heading", { name: "Sign in to Herald" }).waitFor()
    const signInFile = path.join(outDir, `sign-in-${width}.png`)
    await screenshot(page, signInFile)
    written.push(signInFile)

    await signInThroughForm(page, consoleUrl, `admin@${HOSTNAME}`, PASSWORD)
    const nav = page.getByRole("navigation", { name: "Console" })
    for (const title of await nav.getByRole("link").allTextContents()) {
      await nav.getByRole("link", { name: title, exact: true }).click()
      await page.getByRole("heading", { level: 1, name: title }).waitFor()
      await settle(page)
      const file = path.join(outDir, `${slug(title)}-${width}.png`)
      await screenshot(page, file)
      written.push(file)
    }
    // The Templates view's editor, on the template seedSamples made.
    await nav.getByRole("link", { name: "Templates", exact: true }).click()
    await page.getByRole("link", { name: "Welcome" }).click()
    await page.frameLocator("iframe.template-preview").locator("h1").waitFor({ timeout: SETTLE_MS }).catch(() => undefined)
    // An out-of-process frame below the fold is not painted until it has been in view.
    await page.locator("iframe.template-preview").scrollIntoViewIfNeeded()
    await screenshot(page, path.join(outDir, `template-${width}.png`))
    written.push(path.join(outDir, `template-${width}.png`))
    for (const [title, name] of [["Campaigns", "campaign"], ["Sequences", "sequence"]] as const) {
      const shot = await shootFirstOf(page, title, path.join(outDir, `${name}-${width}.png`))
      if (shot !== undefined) written.push(shot)
    }
    const message = await openFirstMessage(page)
    if (message) {
      const file = path.join(outDir, `message-${width}.png`)
      await screenshot(page, file)
      written.push(file)
    }
    written.push(...await shootContacts(page, width))
    await context.close()
  }
} catch (error) {
  console.error(`console:shots stopped: ${String(error)}`)
  console.error("(signing in needs the session routes of #28 and HERALD_BOOTSTRAP_PASSWORD)")
  process.exitCode = 1
} finally {
  await browser.close()
  appliance.kill("SIGTERM")
  await new Promise((resolve) => appliance.once("exit", resolve))
  await postgres.stop()
  await rm(consoleDir, { recursive: true, force: true })
}
console.log(`console:shots wrote ${written.length} screenshots into ${path.relative(process.cwd(), outDir) || "."}:`)
for (const file of written) console.log(`  ${path.basename(file)}`)
