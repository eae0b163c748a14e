/**
 * The operator's views in a real Chromium against a real appliance (#28 "Views" 5–7 and "Tests in
 * a real browser"): a key created (its token shown once, working, then gone) and revoked (its
 * token refused); a key's webhook pointed at a real receiver on loopback, a delivery seen with the
 * receiver's answer as text, and retried; wrong passwords throttled (the 429's message on the
 * form); sign-out ending the session (the old cookie refused on /v1); a cross-site POST with the
 * cookie and no CSRF header refused (403); the admin view refused to a non-admin (the API's 403,
 * and its message in the page); usage and plan (a plan change's refusal beside the form, DMARC
 * reports as a table and a per-source chart, a ticket opened, read and replied to); the admin
 * steering an account (suspend, lift, plan, limits, a refused limit's message) and seeing the queue
 * by destination site; and each of these views axe-clean and without sideways scroll at 1280 and
 * 390 px.
 *
 * The console is opened at http://localhost:<port>, the appliance's default base URL: its CSRF
 * check wants that Origin on every write.
 */
import * as http from "node:http"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, newPage, openBrowser, scrollsSideways } from "../support/browser.ts"
import { type ConsoleAppliance, startConsoleAppliance } from "../support/console.ts"
import { type ConsoleAccount, createConsoleAccount, signInThroughForm } from "../support/console-person.ts"
import { query } from "../support/database.ts"

const ADMIN_PASSWORD = "the operator's own passphrase"
const ADMIN_EMAIL = "admin@herald.test"
/** A receiver's answer that would be markup if the console rendered it as HTML. */
const HOSTILE_BODY = `<b id="injected">broken</b><img src=x alt="">`

let served: ConsoleAppliance
let browser: Browser
let person: ConsoleAccount
let receiver: Receiver
/** The console's origin: the appliance's base URL (see the module comment). */
let origin: string

beforeAll(async () => {
  receiver = await startReceiver()
  served = await startConsoleAppliance({ env: { HERALD_WEBHOOK_ALLOW_PRIVATE: "true", HERALD_BOOTSTRAP_PASSWORD: ADMIN_PASSWORD } })
  origin = `http://localhost:${new URL(served.app.baseUrl).port}`
  person = await createConsoleAccount(served.app.baseUrl, served.app.adminToken)
  browser = (await openBrowser()).browser
})
afterAll(async () => {
  await browser?.close()
  await served?.stop()
  await receiver?.close()
})

const signedIn = async (width = 1280, who: { email: string; password: string } = person) => {
  const opened = await newPage(browser, { width })
  await signInThroughForm(opened.page, origin, who.email, who.password)
  return opened
}

const openView = async (page: Page, title: string) => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: title, exact: true }).click()
  await page.getByRole("heading", { level: 1, name: title }).waitFor()
}

// Functions given to page.waitForFunction run in the page; this project's tsconfig has no DOM types.
declare const document: { readonly body: { readonly innerText: string } }
declare const navigator: { readonly clipboard: { readonly readText: () => Promise<string> } }

/** Until every section of the view has answered: none still says "Loading …". */
const settled = (page: Page) => page.waitForFunction(() => !document.body.innerText.includes("Loading"))

/** axe-clean and no sideways scroll: what every view must be at both widths. */
const expectUsable = async (page: Page, what: string) => {
  await expectAccessible(page, what)
  expect(await scrollsSideways(page), `${what} scrolls sideways`).toBe(false)
}

/** The page's answer to an action comes within seconds; the appliance's work (a webhook attempt) within 15. */
const eventually = <T,>(read: () => Promise<T> | T) => expect.poll(read, { timeout: 15_000 })

const cookieOf = async (page: Page) => (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ")

describe("keys and webhooks", () => {
  it("creates a key whose token is shown once (copied by its button) and works, then revokes it and the token is refused", async () => {
    const { context, page } = await signedIn()
    await openView(page, "Keys and webhooks")
    await page.getByLabel("Label", { exact: true }).fill("ci-runner")
    await page.getByRole("button", { name: "Create key" }).click()
    const token = (await page.locator("#new-token").textContent())!
    expect(token).toMatch(/^hrld_/)
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin })
    await page.getByRole("button", { name: "Copy token" }).click()
    await page.getByText("Copied", { exact: true }).waitFor()
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token)
    await eventually(() => page.locator("#active-key option").allTextContents()).toContain("ci-runner")
    await expectUsable(page, "the keys view with a new token")
    const byToken = () => fetch(`${served.app.baseUrl}/v1/client/usage`, { headers: { authorization: `Bearer ${token}` } })
    expect((await byToken()).status).toBe(200)

    await page.getByRole("button", { name: "I have copied it" }).click()
    await page.reload()
    await page.getByRole("cell", { name: "ci-runner", exact: true }).waitFor()
    expect(await page.content()).not.toContain(token) // shown once: never again

    await page.getByRole("button", { name: "Revoke ci-runner", exact: true }).click()
    await page.getByRole("button", { name: "Yes, Revoke ci-runner" }).click()
    await page.getByRole("cell", { name: "ci-runner", exact: true }).waitFor({ state: "detached" })
    expect((await byToken()).status).toBe(401)
    await context.close()
  })

  it("sets a key's webhook (its secret shown once, then rotated), shows a delivery to a real receiver with its answers as text, and retries it", async () => {
    // The first attempt is refused with markup in the body; the ladder's retry a second later is taken.
    // (A manual retry is refused while the in-process burst holds a delivery, so the burst ends first.)
    receiver.answers.push({ status: 500, body: HOSTILE_BODY })
    const { context, page } = await signedIn()
    await openView(page, "Keys and webhooks")
    const label = person.keys[0]!.label
    await page.getByRole("link", { name: label, exact: true }).click()
    await page.getByLabel("Webhook URL").fill(receiver.url("/hook"))
    await page.getByRole("button", { name: "Save" }).click()
    const generated = (await page.locator("#generated-secret").textContent())! // a new URL gets one, shown once
    await page.getByRole("button", { name: "Rotate secret" }).click()
    await page.getByRole("button", { name: "Yes, Rotate secret" }).click()
    const rotated = (await page.locator("#rotated-secret").textContent())!
    expect(rotated).not.toBe(generated)
    await eventually(() => page.locator("#secret-masked").textContent()).toMatch(new RegExp(`${rotated.slice(-4)}$`))
    await page.getByRole("button", { name: "Send a test event" }).click()
    await receiver.waitFor(2)

    const row = page.getByRole("row").filter({ hasText: "webhook.test" })
    await eventually(async () => {
      await page.getByRole("button", { name: "Refresh" }).click()
      return (await row.count()) > 0 ? await row.first().textContent() : ""
    }).toContain("delivered")
    await expectUsable(page, "a key's webhook and deliveries")
    await row.first().getByRole("link", { name: "webhook.test" }).click()
    await eventually(() => page.locator("#delivery-code").textContent()).toBe("200")
    // Each attempt's answer is text on the page: the refused one's markup did not become elements.
    const refused = page.getByRole("row").filter({ hasText: "HTTP 500" })
    expect(await refused.getByRole("cell").last().textContent()).toBe(HOSTILE_BODY)
    expect(await page.locator("#injected").count()).toBe(0)
    expect(await page.locator("pre", { hasText: '"event": "webhook.test"' }).count()).toBe(1) // the payload sent
    await expectUsable(page, "a webhook delivery")

    const before = receiver.hits.length
    await page.getByRole("button", { name: "Retry now" }).click()
    await page.locator("#retry-result").or(page.getByRole("alert")).first().waitFor()
    expect(await page.getByRole("alert").allTextContents()).toEqual([])
    expect(await page.locator("#retry-result").textContent()).toMatch(/^Retried: delivered, HTTP 200/)
    expect(receiver.hits.length).toBe(before + 1)
    await eventually(() => page.getByRole("row").count()).toBe(4) // the heading row and three attempts
    await context.close()
  })
})

describe("the session, seen from the browser", () => {
  it("throttles wrong passwords: the form shows the 429's message", async () => {
    const { context, page } = await newPage(browser)
    await page.goto(`${origin}/console/`)
    const email = `guessed-${Date.now()}@customers.test` // the throttle counts per email, known or not
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Password").fill("not the password")
    const statuses: Array<number> = []
    for (let attempt = 0; attempt < 11; attempt += 1) {
      const answered = page.waitForResponse((r) => r.url().endsWith("/console/session") && r.request().method() === "POST")
      await page.getByRole("button", { name: "Sign in" }).click()
      statuses.push((await answered).status())
      await page.locator("#sign-in-error").waitFor()
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401))
    expect(statuses[10]).toBe(429)
    expect(await page.locator("#sign-in-error").textContent()).toMatch(/Too many failed sign-ins/)
    await context.close()
  })

  it("signs out: the sign-in screen, and the old cookie refused on /v1", async () => {
    const { context, page } = await signedIn()
    const cookie = await cookieOf(page)
    expect((await fetch(`${served.app.baseUrl}/v1/client/keys`, { headers: { cookie } })).status).toBe(200)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to Herald" }).waitFor()
    const after = await fetch(`${served.app.baseUrl}/v1/client/keys`, { headers: { cookie } })
    expect(after.status).toBe(401)
    await context.close()
  })

  it("refuses a cross-site POST that carries the cookie but no CSRF header (403); the console's own write passes", async () => {
    const { context, page } = await signedIn()
    const cookie = await cookieOf(page)
    const post = (headers: Record<string, string>) =>
      fetch(`${served.app.baseUrl}/v1/client/keys`, {
        method: "POST",
        headers: { cookie, "content-type": "application/json", ...headers },
        body: JSON.stringify({ label: "planted" })
      })
    for (const headers of [{ origin: "http://attacker.example" }, { origin }, {}]) {
      const refused = await post(headers)
      expect(refused.status, JSON.stringify(headers)).toBe(403)
      expect(((await refused.json()) as { error: unknown }).error).toMatchObject({ type: "permission_error", code: "forbidden" })
    }
    // A page of another site posting a form to the appliance: the SameSite=Strict cookie stays home.
    const attacker = await context.newPage()
    await attacker.goto(receiver.url(`/attack?target=${encodeURIComponent(`${origin}/v1/client/keys`)}`))
    await attacker.waitForURL(`${origin}/v1/client/keys`)
    expect(await attacker.content()).toContain("unauthorized")
    const keys = await (await fetch(`${served.app.baseUrl}/v1/client/keys`, { headers: { cookie } })).json() as { items: Array<{ label: string }> }
    expect(keys.items.map((key) => key.label)).not.toContain("planted")
    // The console itself (token and Origin) may write: the refusal above was the CSRF rule.
    const csrf = (await (await fetch(`${served.app.baseUrl}/console/session`, { headers: { cookie } })).json() as { csrf_token: string }).csrf_token
    expect((await post({ origin, "x-herald-csrf": csrf })).status).toBe(201)
    await context.close()
  })

  it("refuses the admin view to a non-admin: no Admin entry, the API's 403 and its message in the page", async () => {
    const { context, page } = await signedIn()
    const nav = page.getByRole("navigation", { name: "Console" })
    expect(await nav.getByRole("link").allTextContents()).not.toContain("Admin")
    const api = await fetch(`${served.app.baseUrl}/v1/admin/queue`, { headers: { cookie: await cookieOf(page) } })
    expect(api.status).toBe(403)
    const { error } = await api.json() as { error: { type: string; code: string; message: string } }
    expect(error).toMatchObject({ type: "permission_error", code: "forbidden" })
    await page.goto(`${origin}/console/admin`)
    await page.getByRole("heading", { level: 1, name: "Admin" }).waitFor()
    await eventually(() => page.getByRole("alert").allTextContents()).toEqual([error.message])
    await expectUsable(page, "the admin view refused")
    await context.close()
  })
})

describe("usage and plan", () => {
  it("shows the usage, a plan change's refusal beside the form, DMARC reports with a chart, and a ticket conversation", async () => {
    // The Business plan has DMARC reports; one report, whose text is a stranger's markup.
    expect((await served.app.request("PUT", `/v1/admin/accounts/${person.accountId}/plan`, { body: { package_id: "business" } })).status).toBe(200)
    await seedDmarcReport(person.accountId)
    const { context, page } = await signedIn()
    await openView(page, "Usage and plan")
    await eventually(() => page.locator("#current-plan").textContent()).toBe("Business")
    await page.getByLabel("Plan", { exact: true }).selectOption("growth")
    await page.getByLabel("Your password").fill("not my password")
    await page.getByRole("button", { name: "Change plan" }).click()
    await eventually(() => page.locator("#plan-error").textContent()).toMatch(/password/i)
    // A downgrade waits for the reset: the page says so, and the same password withdraws it.
    await page.getByLabel("Plan", { exact: true }).selectOption("starter")
    await page.getByLabel("Your password").fill(person.password)
    await page.getByRole("button", { name: "Change plan" }).click()
    await eventually(() => page.locator("#pending-change").textContent()).toContain("starter")
    await page.getByLabel("Your password").fill(person.password)
    await page.getByRole("button", { name: "Cancel the pending change" }).click()
    await page.getByText("The pending change is cancelled").waitFor()
    // The notice goes once the usage record, asked again after the cancel, has answered.
    await page.locator("#pending-change").waitFor({ state: "detached" })

    const report = page.getByRole("row").filter({ hasText: "<i>Mail</i> Org" })
    await report.getByRole("link").click()
    const chart = page.getByRole("img", { name: /DMARC pass and fail by source/ })
    await eventually(() => chart.getAttribute("aria-label")).toContain("192.0.2.10: 90 passed, 10 failed")
    expect(await chart.locator("rect").count()).toBe(4)
    expect(await page.locator("i").count()).toBe(0) // the org name stayed text
    await expectUsable(page, "a DMARC report")

    await page.getByRole("link", { name: "Back to usage and plan" }).click()
    await page.getByText("Open a ticket").click()
    await page.getByLabel("Subject", { exact: true }).fill("Bounces from example.net")
    await page.getByLabel("What happened").fill("They say <script>550</script>.")
    await page.getByRole("button", { name: "Open ticket" }).click()
    await page.getByRole("heading", { name: "Bounces from example.net" }).waitFor()
    await page.getByLabel("Reply", { exact: true }).fill("Any news?")
    await page.getByRole("button", { name: "Send reply" }).click()
    await page.getByText("Any news?").waitFor()
    expect(await page.locator(".op-message-body").allTextContents()).toEqual(["They say <script>550</script>.", "Any news?"])
    await expectUsable(page, "a support ticket")
    await context.close()
  })
})

describe("admin", () => {
  it("steers an account (suspend and lift, plan, limits) and shows the queue by destination site", async () => {
    const customer = await createConsoleAccount(served.app.baseUrl, served.app.adminToken, ["only"])
    await queueOneSend()
    const { context, page } = await signedIn(1280, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })
    await openView(page, "Admin")
    await eventually(() => page.getByRole("region", { name: "Queue by destination site" }).textContent()).toContain("domain:queued.example")
    await page.goto(`${origin}/console/admin/accounts/${customer.accountId}`)
    await eventually(() => page.locator("#account-status").textContent()).toBe("active")
    await page.getByRole("button", { name: "Suspend", exact: true }).click()
    await page.getByRole("button", { name: "Yes, Suspend" }).click()
    await eventually(() => page.locator("#account-status").textContent()).toBe("suspended")
    await page.getByRole("button", { name: "Lift suspension" }).click()
    await eventually(() => page.locator("#account-status").textContent()).toBe("active")
    await page.getByLabel("Plan", { exact: true }).selectOption("starter")
    await page.getByRole("button", { name: "Put on this plan" }).click()
    await page.getByLabel("Sends per minute").fill("7")
    await page.getByRole("button", { name: "Save limits" }).click()
    await eventually(async () => (await served.app.request("GET", `/v1/admin/accounts/${customer.accountId}`)).json)
      .toMatchObject({ status: "active", package_id: "starter", rate_per_min_override: 7, monthly_quota_override: null })
    // A limit the API refuses: its message beside the form, nothing changed.
    await page.getByLabel("Sends per minute").fill("0")
    await page.getByRole("button", { name: "Save limits" }).click()
    await eventually(() => page.locator("#limits-error").textContent()).not.toBe("")
    expect((await served.app.request("GET", `/v1/admin/accounts/${customer.accountId}`)).json.rate_per_min_override).toBe(7)
    await context.close()
  })
})

describe.each([1280, 390])("each operator view at %i px", (width) => {
  it("is accessible and fits (the admin sees every view and an account)", async () => {
    const { context, page } = await signedIn(width, { email: ADMIN_EMAIL, password: ADMIN_PASSWORD })
    for (const title of ["Keys and webhooks", "Usage and plan", "Admin"]) {
      await openView(page, title)
      await settled(page)
      expect(await page.getByRole("alert").allTextContents(), title).toEqual([])
      await expectUsable(page, `${title} at ${width} px`)
    }
    await page.getByRole("link", { name: "Person", exact: false }).first().click()
    await page.locator("#account-status").waitFor()
    await settled(page)
    await expectUsable(page, `an account at ${width} px`)
    await context.close()
  })
})

// ---------------------------------------------------------------------------------------------

const seedDmarcReport = async (accountId: string) => {
  const [report] = await query<{ id: string }>(served.app.databaseUrl, `
    INSERT INTO dmarc_reports (account_id, domain, org_name, report_id, date_begin, date_end, policy_p, messages, created_at)
    VALUES ($1, 'shop.example', '<i>Mail</i> Org', 'r-1', 1767225600, 1767311999, 'none', 130, now()) RETURNING id`, [accountId])
  await query(served.app.databaseUrl, `
    INSERT INTO dmarc_records (report_id, source_ip, count, disposition, dkim, spf, header_from) VALUES
      ($1, '192.0.2.10', 90, 'none', 'pass', 'pass', 'shop.example'),
      ($1, '192.0.2.10', 10, 'none', 'fail', 'fail', 'shop.example'),
      ($1, '198.51.100.7', 30, 'none', 'fail', 'fail', 'shop.example')`, [report!.id])
}

/** One send of the admin's left in the queue (the MTA is off in tests): a site for the queue view. */
const queueOneSend = async () => {
  const accounts = await served.app.request("GET", "/v1/admin/accounts?limit=200")
  const admin = accounts.json.items.find((a: { is_admin: boolean }) => a.is_admin)
  expect((await served.app.request("POST", "/v1/client/domains", { body: { domain: "shop.example" } })).status).toBe(201)
  expect((await served.app.request("POST", `/v1/admin/accounts/${admin.id}/domains/shop.example/trust`)).status).toBe(200)
  const sent = await served.app.request("POST", "/v1/mail/send", {
    body: { from: "hello@shop.example", to: "someone@queued.example", subject: "Queued", text: "Waits for the MTA." }
  })
  expect(sent.status, sent.text).toBe(202)
}

interface Hit {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
}

interface Receiver {
  readonly hits: Array<Hit>
  /** Answers for the next calls, in order; then 200 "thanks". */
  readonly answers: Array<{ status: number; body: string }>
  readonly url: (path: string) => string
  readonly waitFor: (calls: number) => Promise<void>
  readonly close: () => Promise<void>
}

/**
 * A webhook receiver on loopback answering `answers` in turn; at /attack?target=URL it is a page of another
 * site that posts a form to URL at once (the cross-site request of the CSRF test).
 */
const startReceiver = async (): Promise<Receiver> => {
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://receiver")
    if (url.pathname === "/attack") {
      const target = url.searchParams.get("target") ?? ""
      res.writeHead(200, { "content-type": "text/html" }).end(
        `<form method="post" action="${target.replace(/"/g, "")}" enctype="text/plain"><input name='{"label":"planted","x":"' value='"}'></form>` +
          `<script>document.forms[0].submit()</script>`
      )
      return
    }
    req.resume()
    req.on("end", () => {
      receiver.hits.push({ path: url.pathname, headers: req.headers })
      const answer = receiver.answers.shift() ?? { status: 200, body: "thanks" }
      res.writeHead(answer.status, { "content-type": "text/html" }).end(answer.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.address() as { port: number }).port
  const receiver: Receiver = {
    hits: [],
    answers: [],
    url: (path) => `http://127.0.0.1:${port}${path}`,
    waitFor: async (calls) => {
      await eventually(() => receiver.hits.length).toBeGreaterThanOrEqual(calls)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return receiver
}
