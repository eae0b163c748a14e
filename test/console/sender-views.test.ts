/**
 * The sender's views in a real Chromium against a real appliance (#28 "Tests in a real browser"):
 * the quick start's send to the simulator found in Messages with its timeline and content; a
 * message whose HTML carries a script shown inert in the sandboxed frame; a domain added through
 * the form with its records, copied and verified against a loopback DNS server; suppressions
 * added, searched and removed (and the platform lists for an admin only); the overview's chart and
 * cards; every view accessible (axe) and without sideways scroll at 1280 and 390 px.
 *
 * The browser opens the console at http://localhost:<port>, the appliance's base URL: a console
 * write must come from that origin (the CSRF check), as it does for a person.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, newPage, openBrowser, scrollsSideways } from "../support/browser.ts"
import { type ConsoleAppliance, startConsoleAppliance } from "../support/console.ts"
import { signInThroughForm } from "../support/console-person.ts"
import { type DnsServer, startDnsServer } from "../support/dns-server.ts"

let served: ConsoleAppliance
let dns: DnsServer
let browser: Browser
let person: Person

const SIMULATOR = "delivered@simulator.herald.invalid"
const ADMIN_PASSWORD = "the operator's console password"
const HOSTNAME = "views.herald.test"

/** The script a tenant's HTML carries: it would post to the console and retitle the frame if it ran. */
const HOSTILE_HTML = `<!doctype html><html><head><title>inert</title></head><body><p id="hello">Hello <a href="https://example.org/">a link</a></p>`
  + `<script>parent.postMessage("the script ran", "*"); document.title = "the script ran"</script></body></html>`

interface Person {
  readonly email: string
  readonly password: string
  readonly keys: ReadonlyArray<{ readonly id: string; readonly label: string; readonly token: string }>
}

/** The console's origin: the appliance's base URL (http://localhost:<port> by default). */
const base = () => `http://localhost:${new URL(served.app.baseUrl).port}`

const admin = async (route: string, body: unknown) => {
  const res = await served.app.request("POST", route, { body })
  expect(res.status, res.text).toBe(201)
  return res.json as { id: string; token: string }
}

/** An account with a password and two labelled keys (their tokens for the quick start's curl). */
const newPerson = async (): Promise<Person> => {
  const tag = Date.now().toString(36)
  const email = `sender-${tag}@customers.test`
  const password = "correct horse battery staple"
  const account = await admin("/v1/admin/accounts", { name: `Sender ${tag}`, email, password })
  const keys = []
  for (const label of ["deploy", "marketing"]) {
    const key = await admin(`/v1/admin/accounts/${account.id}/keys`, { label })
    keys.push({ id: key.id, label, token: key.token })
  }
  return { email, password, keys }
}

/** The quick start's send (README "Quick start"), with the key's token as curl would. */
const send = async (token: string, body: Record<string, unknown>) => {
  const res = await served.app.request("POST", "/v1/mail/send", { token, body })
  expect(res.status, res.text).toBe(202)
  return res.json as { message_id: string }
}

beforeAll(async () => {
  dns = await startDnsServer()
  served = await startConsoleAppliance({
    env: { HERALD_DNS_SERVERS: dns.address, HERALD_MTA_ENABLED: "true", HERALD_HOSTNAME: HOSTNAME, HERALD_BOOTSTRAP_PASSWORD: ADMIN_PASSWORD }
  })
  person = await newPerson()
  // The quick start's domain (README "Quick start"): added, not verified, enough for the simulator.
  const domain = await served.app.request("POST", "/v1/client/domains", { token: person.keys[0]!.token, body: { domain: "acme.example" } })
  expect(domain.status, domain.text).toBe(201)
  browser = (await openBrowser()).browser
})
afterAll(async () => {
  await browser?.close()
  await served?.stop()
  await dns?.close()
})

const signedIn = async (width = 1280, who: { email: string; password: string } = person) => {
  const opened = await newPage(browser, { width })
  const errors: Array<string> = []
  opened.page.on("pageerror", (error) => errors.push(error.message))
  await signInThroughForm(opened.page, base(), who.email, who.password)
  return { ...opened, errors }
}

const open = async (page: Page, title: string) => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: title, exact: true }).click()
  await page.getByRole("heading", { level: 1, name: title }).waitFor()
}

/** Filters Messages by `search` until a row of it shows `status` (the simulator answers within seconds). */
const findInMessages = async (page: Page, search: string, status: string) => {
  await open(page, "Messages")
  await page.getByLabel("Recipient or subject").fill(search)
  const row = page.getByRole("row").filter({ hasText: search }).filter({ hasText: status })
  await expect.poll(async () => {
    await page.getByRole("button", { name: "Apply" }).click()
    await page.locator("table[aria-busy=false]").waitFor()
    return row.count()
  }, { timeout: 20_000 }).toBeGreaterThan(0)
  return row.first()
}

describe("the sender's views", () => {
  it("adds a domain through the form, shows its records with their status, copies a value and verifies it", async () => {
    const { context, errors, page } = await signedIn()
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base() })
    await open(page, "Domains")

    // A name that is not a domain: the API's own message next to the field, nothing added.
    await page.getByLabel("Domain to add").fill("not a domain")
    await page.getByRole("button", { name: "Add domain" }).click()
    await expect.poll(() => page.locator("#new-domain-error").textContent()).toContain("must be a domain name")

    await page.getByLabel("Domain to add").fill("form.example")
    await page.getByRole("button", { name: "Add domain" }).click()
    await page.getByRole("heading", { level: 2, name: "form.example" }).waitFor()
    const records = page.getByRole("list", { name: "DNS records of form.example" })
    const ownership = records.locator("[data-purpose=verification]")
    expect(await ownership.textContent()).toContain("Not checked yet")
    expect(await records.locator("[data-purpose=dkim]").textContent()).toContain("v=DKIM1")

    // The copy button puts the record's exact value on the clipboard.
    await ownership.getByRole("button", { name: "Copy Ownership value" }).click()
    await expect.poll(() => ownership.textContent()).toContain("Copied")
    const copied = await page.evaluate("navigator.clipboard.readText()") as string
    expect(copied).toMatch(/^herald-verification=/)
    expect(await ownership.locator(".record-value").nth(1).textContent()).toBe(copied)

    // Published (on the loopback DNS server), then "Verify now": each record's status.
    dns.set("form.example", { TXT: [copied] })
    await page.getByRole("button", { name: "Verify now" }).click()
    await expect.poll(() => ownership.textContent()).toContain("Verified")
    expect(await records.locator("[data-purpose=dkim]").textContent()).toContain("Missing")
    await page.getByText("Verified through DNS").waitFor()

    await open(page, "Domains")
    expect(await page.getByRole("row").filter({ hasText: "form.example" }).textContent()).toContain("Verified")
    expect(errors).toEqual([])
    await context.close()
  })

  it("finds the quick start's send to the simulator in Messages, with its timeline and its content", async () => {
    const deploy = person.keys[0]!
    const { message_id } = await send(deploy.token, { from: "hello@acme.example", to: SIMULATOR, subject: "Hi <b>there</b>", text: "Hello" })
    const { context, errors, page } = await signedIn()

    const row = await findInMessages(page, SIMULATOR, "sent")
    expect(await row.textContent()).toContain(deploy.label) // the key, by its label
    await row.getByRole("link", { name: SIMULATOR }).click()
    await page.waitForURL(`**/console/messages/${message_id}`)

    // The subject is the tenant's text, shown as text: no <b> element made of it.
    const summary = page.getByRole("heading", { level: 2, name: "Hi <b>there</b>" })
    await summary.waitFor()
    expect(await summary.locator("b").count()).toBe(0)
    const timeline = page.locator("ol.timeline")
    await expect.poll(() => timeline.locator("li").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining("queued"), expect.stringContaining("sent")])
    )
    await page.locator("section[aria-labelledby=message-headers] pre").waitFor()
    const headerText = await page.locator("section[aria-labelledby=message-headers] pre").textContent()
    expect(headerText).toContain("Subject: Hi <b>there</b>")
    expect(headerText).toContain(`X-Herald-Message-ID: ${message_id}`)
    expect((await page.locator("section[aria-labelledby=message-text] pre").textContent())?.trim()).toBe("Hello")
    expect(await page.getByText("This message has no HTML part.").count()).toBe(1)
    expect(await page.getByText("No attachments.").count()).toBe(1)

    // Back to the list: the same filter and rows, not the first page unfiltered.
    await page.getByRole("link", { name: "← All messages" }).click()
    expect(await page.getByLabel("Recipient or subject").inputValue()).toBe(SIMULATOR)
    await page.getByRole("link", { name: SIMULATOR }).first().waitFor()

    // Filtered by another key: not there; by its own key and today's date: there.
    await page.getByLabel("Key", { exact: true }).selectOption({ label: person.keys[1]!.label })
    await page.getByRole("button", { name: "Apply" }).click()
    await page.getByText("No message matches these filters.").waitFor()
    await page.getByLabel("Key", { exact: true }).selectOption({ label: deploy.label })
    // A day the API refuses (year 10000: the date input takes it, PostgreSQL could not): its
    // message under the field it names.
    await page.evaluate(`(() => {
      const input = document.getElementById("filter-from")
      input.value = "10000-01-01"
      input.dispatchEvent(new Event("input", { bubbles: true }))
    })()`)
    await page.getByRole("button", { name: "Apply" }).click()
    await expect.poll(() => page.locator("#filter-from-error").textContent()).toContain("ISO 8601")
    expect(await page.getByLabel("From (UTC day)").getAttribute("aria-invalid")).toBe("true")
    await page.getByLabel("From (UTC day)").fill(new Date().toISOString().slice(0, 10))
    await page.getByRole("button", { name: "Apply" }).click()
    await page.getByRole("link", { name: SIMULATOR }).first().waitFor()
    expect(errors).toEqual([])
    await context.close()
  })

  it("shows a message's HTML in a sandboxed frame where its script stays inert, with an images toggle", async () => {
    const { message_id } = await send(person.keys[0]!.token, {
      from: "hello@acme.example", to: "delivered+html@simulator.herald.invalid", subject: "Scripted", html: HOSTILE_HTML
    })
    const { context, errors, page } = await newPage(browser).then((opened) => ({ ...opened, errors: [] as Array<string> }))
    // Listening before any page script runs: a message from the frame's script would land here.
    await page.addInitScript("window.__fromFrame = []; addEventListener('message', (e) => window.__fromFrame.push(String(e.data)))")
    page.on("pageerror", (error) => errors.push(error.message))
    await signInThroughForm(page, base(), person.email, person.password)
    await page.goto(`${base()}/console/messages/${message_id}`)

    const frameElement = page.locator("iframe.message-html")
    await frameElement.waitFor()
    expect(await frameElement.getAttribute("sandbox")).toBe("allow-popups allow-popups-to-escape-sandbox")
    expect(await frameElement.getAttribute("src")).toBe(`/v1/mail/messages/${message_id}/content/html`)
    const frame = page.frameLocator("iframe.message-html")
    await expect.poll(() => frame.locator("#hello").textContent()).toContain("Hello")
    // The frame's HTML rendered, yet its script did not run: no message to the console, title kept.
    const inFrame = page.frames().find((f) => f.url().includes("/content/html"))!
    expect(await inFrame.title()).toBe("inert")
    expect(await page.evaluate("window.__fromFrame")).toEqual([])
    expect(await page.title()).toBe("Messages · Herald console")

    // Its links open in a new tab (allow-popups), leaving the console where it was. (This machine
    // has no Internet: the browser answers for example.org itself.)
    await context.route("https://example.org/**", (route) => route.fulfill({ contentType: "text/html", body: "<title>elsewhere</title>" }))
    const popup = page.waitForEvent("popup")
    await frame.getByRole("link", { name: "a link" }).click()
    expect((await popup).url()).toContain("https://example.org/")
    await (await popup).close()
    expect(page.url()).toBe(`${base()}/console/messages/${message_id}`)

    await page.getByLabel("Load remote images (tells the sender the message was read)").check()
    expect(await frameElement.getAttribute("src")).toBe(`/v1/mail/messages/${message_id}/content/html?images=1`)
    await expect.poll(() => frame.locator("#hello").textContent()).toContain("Hello")
    expect(await page.evaluate("window.__fromFrame")).toEqual([])
    expect(errors).toEqual([])
    await context.close()
  })

  it("adds, searches and removes suppressions, with the API's message for a bad address; only an admin sees the platform lists", async () => {
    const { context, errors, page } = await signedIn()
    await open(page, "Suppressions")
    expect(await page.getByRole("heading", { name: "Platform suppressions (every account)" }).count()).toBe(0)

    const add = page.getByLabel("Add address", { exact: true })
    await add.fill("not-an-address")
    await page.getByRole("button", { name: "Add", exact: true }).click()
    await expect.poll(() => page.locator("#suppressions-add-error").textContent()).toMatch(/email/i)

    for (const address of ["keep@customers.test", "gone@customers.test"]) {
      await add.fill(address)
      await page.getByRole("button", { name: "Add", exact: true }).click()
      await page.getByRole("row").filter({ hasText: address }).waitFor()
    }
    await page.getByLabel("Search suppressions").fill("gone@")
    await page.getByRole("button", { name: "Search" }).click()
    await expect.poll(() => page.getByRole("row").filter({ hasText: "@customers.test" }).allTextContents()).toEqual([
      expect.stringContaining("gone@customers.test")
    ])
    await page.getByRole("button", { name: "Remove gone@customers.test" }).click()
    await page.getByText("Removed gone@customers.test.").waitFor()
    await page.getByText("Nothing matches “gone@”.").waitFor()
    const left = await served.app.request("GET", "/v1/client/suppressions", { token: person.keys[0]!.token })
    expect(left.json.items.map((s: { email: string }) => s.email)).toEqual(["keep@customers.test"])
    expect(errors).toEqual([])
    await context.close()

    // The bootstrap admin: the platform suppression list and the blocked domains as well.
    const operator = await signedIn(1280, { email: `admin@${HOSTNAME}`, password: ADMIN_PASSWORD })
    await open(operator.page, "Suppressions")
    await operator.page.getByRole("heading", { name: "Platform suppressions (every account)" }).waitFor()
    const platform = operator.page.locator("section[aria-labelledby=platform-suppressions]")
    await platform.getByLabel("Add address", { exact: true }).fill("everyone-refuses@customers.test")
    await platform.getByRole("button", { name: "Add", exact: true }).click()
    await platform.getByRole("button", { name: "Remove everyone-refuses@customers.test" }).click()
    await platform.getByText("Removed everyone-refuses@customers.test.").waitFor()
    await operator.page.getByLabel("Add domain", { exact: true }).fill("blocked.example")
    await operator.page.locator("section[aria-labelledby=blocked-domains]").getByRole("button", { name: "Add", exact: true }).click()
    await operator.page.getByRole("row").filter({ hasText: "blocked.example" }).waitFor()
    expect(operator.errors).toEqual([])
    await operator.context.close()
  })

  it("draws the overview: the chart of the period, the quota, the rate limit, the reputation and the webhook backlog", async () => {
    await send(person.keys[0]!.token, { from: "hello@acme.example", to: "delivered+overview@simulator.herald.invalid", subject: "Counted", text: "Hello" })
    const { context, errors, page } = await signedIn()
    const chart = page.getByRole("img", { name: /^Mail per hour over the period/ })
    await chart.waitFor()
    expect(await chart.getAttribute("aria-label")).toMatch(/[1-9]\d* sent/) // the sends above
    expect(await chart.locator("polyline").count()).toBe(6)
    for (const card of ["Quota", "Rate limit", "Reputation", "Webhook backlog"]) {
      await page.getByRole("heading", { level: 2, name: card }).waitFor()
    }
    expect(await page.getByText("Sending", { exact: true }).count()).toBe(1)
    // The key's headroom, from the stats answer's RateLimit headers (no plan: 30 a minute)…
    const rateCard = page.locator(".card").filter({ has: page.getByRole("heading", { name: "Rate limit" }) })
    expect(await rateCard.textContent()).toMatch(/\d+ of 30 left/)
    // …which reading the stats does not spend.
    const remaining = async () =>
      (await served.app.request("GET", "/v1/client/stats", { token: person.keys[0]!.token })).headers.get("ratelimit-remaining")
    const first = await remaining()
    expect(first).not.toBeNull()
    expect(await remaining()).toBe(first)
    await page.getByLabel("7 days").check()
    await page.getByRole("img", { name: /^Mail per day over the period/ }).waitFor()
    expect(errors).toEqual([])
    await context.close()
  })

  it.each([1280, 390])("keeps every sender view accessible and without sideways scroll at %i px", async (width) => {
    const { context, errors, page } = await signedIn(width)
    const message = await send(person.keys[0]!.token, {
      from: "hello@acme.example", to: `delivered+${width}@simulator.herald.invalid`, subject: `At ${width} px`, text: "Hello", html: "<p>Hello</p>"
    })
    const visits: ReadonlyArray<readonly [string, string, string]> = [
      ["Overview", "", "svg.chart"],
      ["Messages", "messages", "table[aria-busy=false]"],
      ["a message", `messages/${message.message_id}`, "iframe.message-html"],
      ["Domains", "domains", "table"],
      ["a domain", "domains/acme.example/", "li[data-purpose=dkim]"],
      ["Suppressions", "suppressions", ".entry-list table[aria-busy=false], .entry-list > p:not([role])"]
    ]
    for (const [what, path, ready] of visits) {
      await page.goto(`${base()}/console/${path}`)
      await page.locator(ready).first().waitFor()
      await expectAccessible(page, `${what} at ${width} px`)
      expect(await scrollsSideways(page), `${what} at ${width} px`).toBe(false)
    }
    expect(errors).toEqual([])
    await context.close()
  })
})
