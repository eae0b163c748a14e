/**
 * Lists and segments in a real Chromium against a real appliance (#29 views 2 and 3): a list made
 * to require double opt-in (an unverified sender refused beside its field), its confirmation mail
 * previewed (subject and text as text, the HTML in a frame without any sandbox permission),
 * members added to the simulator and shown pending, one removed, unsaved settings warning before
 * leaving; a segment built from two rules whose live count and sample follow them, a rule the API
 * refuses named under it, saved, reopened and edited; every view accessible (axe) and without
 * sideways scroll at 1280 and 390 px.
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
let person: { accountId: string; email: string; password: string; token: string }

const DOMAIN = "news.example"
const ONE = "delivered+one@simulator.herald.invalid"
const TWO = "delivered+two@simulator.herald.invalid"

/** The console's origin: the appliance's base URL (a console write must come from it). */
const base = () => `http://localhost:${new URL(served.app.baseUrl).port}`

const call = async (method: "GET" | "POST", route: string, body?: unknown, token?: string) => {
  const res = await served.app.request(method, route, { ...(body === undefined ? {} : { body }), ...(token === undefined ? {} : { token }) })
  expect(res.status, res.text).toBeLessThan(300)
  return res.json
}

/** An account with a password, one key, a domain verified through the loopback DNS, and three contacts to segment. */
const newPerson = async () => {
  const tag = Date.now().toString(36)
  const email = `marketer-${tag}@customers.test`
  const password = "correct horse battery staple"
  const account = await call("POST", "/v1/admin/accounts", { name: `Marketer ${tag}`, email, password })
  const key = await call("POST", `/v1/admin/accounts/${account.id}/keys`, { label: "marketing" })
  const domain = await call("POST", "/v1/client/domains", { domain: DOMAIN }, key.token)
  dns.set(DOMAIN, { TXT: [domain.records.find((r: { purpose: string }) => r.purpose === "verification").value] })
  await call("POST", `/v1/client/domains/${DOMAIN}/verify`, undefined, key.token)
  for (const contact of [
    { email: "ada@customers.test", name: "Ada", tags: ["vip"], metadata: { plan: "pro" } },
    { email: "bob@customers.test", name: "Bob", tags: ["vip"], metadata: { plan: "free" } },
    { email: "cy@customers.test", name: "Cy", tags: [], metadata: { plan: "pro" } }
  ]) await call("POST", "/v1/bulk/contacts", contact, key.token)
  return { accountId: account.id as string, email, password, token: key.token as string }
}

beforeAll(async () => {
  dns = await startDnsServer()
  served = await startConsoleAppliance({ env: { HERALD_DNS_SERVERS: dns.address, HERALD_MTA_ENABLED: "true" } })
  person = await newPerson()
  browser = (await openBrowser()).browser
})
afterAll(async () => {
  await browser?.close()
  await served?.stop()
  await dns?.close()
})

const signedIn = async (width = 1280) => {
  const opened = await newPage(browser, { width })
  const errors: Array<string> = []
  opened.page.on("pageerror", (error) => errors.push(error.message))
  await signInThroughForm(opened.page, base(), person.email, person.password)
  return { ...opened, errors }
}

const open = async (page: Page, title: string) => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: title, exact: true }).click()
  await page.getByRole("heading", { level: 1, name: title }).waitFor()
}

/** #29 "Quality": no serious axe violation and no sideways scroll, for the view as it stands. */
const checkLayout = async (page: Page, what: string, width = 1280) => {
  await expectAccessible(page, `${what} at ${width} px`)
  expect(await scrollsSideways(page), `${what} at ${width} px`).toBe(false)
}

const memberRows = (page: Page) => page.getByRole("region", { name: "Members" }).getByRole("row").filter({ hasText: "@" })

describe("lists and segments", () => {
  it("makes a list require double opt-in, previews its confirmation, adds members pending and removes one", async () => {
    const { context, errors, page } = await signedIn()
    await open(page, "Lists")
    await page.getByText("This key has no lists yet.").waitFor()
    await checkLayout(page, "Lists")
    await page.getByLabel("New list name").fill("Weekly <b>news</b>")
    await page.getByRole("button", { name: "Create list" }).click()
    const heading = page.getByRole("heading", { level: 2, name: "Weekly <b>news</b>" })
    await heading.waitFor() // the tenant's text as text
    expect(await heading.locator("b").count()).toBe(0)
    const listId = new URL(page.url()).pathname.split("/").pop()!

    // An unverified sender: the API's message under the sender field, nothing saved.
    await page.getByLabel(/^Require confirmation/).check()
    await page.getByLabel("Sender address (its domain verified)").fill("hello@elsewhere.example")
    await page.getByRole("button", { name: "Save double opt-in" }).click()
    await expect.poll(() => page.locator("#confirm-from-email-error").textContent()).toContain("not verified")
    await page.getByLabel("Sender address (its domain verified)").fill(`hello@${DOMAIN}`)
    await page.getByLabel(/^Subject/).fill("Confirm {{ list_name }}")
    await page.getByLabel(/^Intro/).fill("Hello from the <i>newsroom</i>.")

    // Unsaved settings: leaving through the navigation asks first; staying keeps them.
    page.once("dialog", (dialog) => void dialog.dismiss())
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Segments", exact: true }).click()
    expect(page.url()).toContain(`/console/lists/${listId}`)
    page.once("dialog", (dialog) => void dialog.dismiss())
    await page.goBack() // …and so does the browser's back button
    await expect.poll(() => page.url()).toContain(`/console/lists/${listId}`)
    expect(await page.getByLabel(/^Subject/).inputValue()).toBe("Confirm {{ list_name }}")

    await page.getByRole("button", { name: "Save double opt-in" }).click()
    await page.getByText("Unsaved changes").waitFor({ state: "detached" })
    const saved = await call("GET", `/v1/bulk/lists/${listId}`, undefined, person.token)
    expect(saved).toMatchObject({ require_confirmation: 1, confirm_from_email: `hello@${DOMAIN}`, confirm_subject: "Confirm {{ list_name }}" })

    // The confirmation mail as a member would get it: subject and text as text, HTML in a frame
    // whose sandbox grants nothing (no scripts, no same origin).
    await page.getByRole("button", { name: "Preview the confirmation mail" }).click()
    await expect.poll(() => page.locator(".preview-subject").textContent()).toBe("Confirm Weekly <b>news</b>")
    expect(await page.locator(".confirmation-preview pre").textContent()).toContain("Hello from the <i>newsroom</i>.")
    const frame = page.locator("iframe.preview-html")
    expect(await frame.getAttribute("sandbox")).toBe("")
    await expect.poll(() => page.frameLocator("iframe.preview-html").locator("body").textContent()).toContain("newsroom")

    // Two members from the simulator: pending, each sent its confirmation mail.
    await page.getByLabel("Addresses or contact ids to add, one a line").fill(`${ONE}\n${TWO}`)
    await page.getByRole("button", { name: "Add 2 members" }).click()
    await page.getByText("Added 2 addresses. 2 confirmation mails queued.").waitFor()
    await expect.poll(() => memberRows(page).allTextContents()).toEqual([
      expect.stringMatching(/pending/), expect.stringMatching(/pending/)
    ])
    expect((await memberRows(page).allTextContents()).join()).toContain(ONE)
    await checkLayout(page, "a list with its confirmation preview and members")

    await page.getByRole("button", { name: `Remove ${TWO}` }).click()
    await page.getByRole("button", { name: `Yes, Remove ${TWO}` }).click()
    await expect.poll(() => memberRows(page).count()).toBe(1)
    expect(await memberRows(page).textContent()).toContain(ONE)
    const members = await call("GET", `/v1/bulk/lists/${listId}/contacts`, undefined, person.token)
    expect(members.items.map((m: { email: string; membership_status: string }) => [m.email, m.membership_status])).toEqual([[ONE, "pending"]])

    // A saved segment uses the list: the delete is refused, the API's reason and what to do beside it.
    await call("POST", "/v1/bulk/segments", { name: "Readers", rules: { match: "all", rules: [{ field: "list", op: "in", value: listId }] } }, person.token)
    await page.getByRole("button", { name: "Delete list" }).click()
    await page.getByRole("button", { name: "Yes, Delete list" }).click()
    await expect.poll(() => page.locator("section[aria-labelledby=list-delete]").textContent()).toMatch(/in use: segment sg_.*Remove the list from/)
    expect(errors).toEqual([])
    await context.close()
  })

  it("builds a segment whose live count and sample follow its two rules, saves it, reopens and edits it", async () => {
    const { context, errors, page } = await signedIn()
    await open(page, "Segments")
    // (The list path above saved one segment, when it ran first.)
    await page.locator("table[aria-busy=false]").or(page.getByText("This key has no saved segments yet.")).first().waitFor()
    await checkLayout(page, "Segments")
    await page.getByRole("link", { name: "New segment" }).click()
    const count = page.locator(".segment-count")
    const sample = () => page.getByRole("region", { name: "Sample of matching contacts" }).getByRole("row").filter({ hasText: "@" }).allTextContents()
    const settled = async (text: string) => {
      await expect.poll(async () => (await count.getAttribute("aria-busy")) === "false" && (await count.textContent())?.startsWith(text)).toBe(true)
    }

    // No rules, match all: every contact of the key (the list path's members are contacts too).
    const everyone = (await call("GET", "/v1/bulk/contacts?limit=1", undefined, person.token)).total as number
    await settled(`${everyone} contacts match`)

    // Every preview the page asks, and the first one for "vip" held back until a newer one answered.
    const asked: Array<string> = []
    page.on("request", (request) => { if (request.url().endsWith("/v1/bulk/segments/preview")) asked.push(request.postData() ?? "") })
    let release: () => void = () => undefined
    const gate = new Promise<void>((resolve) => { release = resolve })
    let stale: Promise<void> | undefined
    await page.route("**/v1/bulk/segments/preview", (route) => {
      const first = stale === undefined && (route.request().postData() ?? "").includes('"vip"')
      const answer = route.fetch().then(async (response) => {
        if (first) await gate
        await route.fulfill({ response })
      })
      if (first) stale = answer
      return answer
    })

    // Typed key by key: one preview once typing pauses, none for "v" or "vi" (debounced); an
    // incomplete rule (no tag yet) is not asked about at all.
    await page.getByRole("button", { name: "Add rule" }).click()
    const rule1 = page.getByRole("group", { name: "Rule 1" })
    await rule1.getByLabel("Tag", { exact: true }).pressSequentially("vip")
    await expect.poll(() => stale !== undefined).toBe(true)
    expect(asked.filter((body) => body.includes('"field":"tag"')).map((body) => JSON.parse(body).rules.rules[0].value)).toEqual(["vip"])

    // A second rule while the first answer is held: the newer answer shows, the older one arriving
    // afterwards is dropped (useLoad).
    await page.getByRole("button", { name: "Add rule" }).click()
    const rule2 = page.getByRole("group", { name: "Rule 2" })
    await rule2.getByLabel("Field", { exact: true }).selectOption("custom")
    await rule2.getByLabel("Field name").fill("plan")
    await rule2.getByLabel("Value", { exact: true }).fill("pro")
    await settled("1 contact matches")
    const staleFinished = page.waitForEvent("requestfinished", (request) => request.url().endsWith("/preview") && !(request.postData() ?? "").includes("plan"))
    release()
    await stale
    await staleFinished
    await page.evaluate("new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)))")
    expect(await count.textContent()).toMatch(/^1 contact matches/)
    expect(await sample()).toEqual([expect.stringContaining("ada@customers.test")])
    await page.unroute("**/v1/bulk/segments/preview")
    await checkLayout(page, "a new segment")

    // A third rule the API refuses (0 days): its message under that rule; removed, the count is back.
    await page.getByRole("button", { name: "Add rule" }).click()
    const rule3 = page.getByRole("group", { name: "Rule 3" })
    await rule3.getByLabel("Field", { exact: true }).selectOption("engagement")
    await rule3.getByLabel("Within the last (days)").fill("0")
    await expect.poll(() => rule3.locator("p.error").textContent()).toContain("1 to 90")
    await rule3.getByRole("button", { name: "Remove rule 3" }).click()
    await settled("1 contact matches")
    expect(await sample()).toEqual([expect.stringContaining("ada@customers.test")])

    await page.getByLabel("Segment name").fill("VIPs on pro")
    await page.getByRole("button", { name: "Save segment" }).click()
    await page.getByRole("heading", { level: 2, name: "VIPs on pro" }).waitFor()
    const segmentId = new URL(page.url()).pathname.split("/").pop()!
    expect(segmentId).toMatch(/^sg_/)

    // Reopened from the list: the rules as saved; match any widens the count; saved again.
    await page.getByRole("link", { name: "← All segments" }).click()
    await page.locator("table[aria-busy=false]").waitFor()
    await checkLayout(page, "Segments with a segment")
    await page.getByRole("link", { name: "VIPs on pro" }).click()
    expect(await page.getByRole("group", { name: "Rule 2" }).getByLabel("Field name").inputValue()).toBe("plan")
    await settled("1 contact matches")
    await checkLayout(page, "a saved segment")
    await page.getByLabel("any rule").check()
    await settled("3 contacts match")
    await page.getByRole("button", { name: "Save changes" }).click()
    await page.getByText("Unsaved changes").waitFor({ state: "detached" })
    const saved = await call("GET", `/v1/bulk/segments/${segmentId}`, undefined, person.token)
    expect(saved.rules).toEqual({
      match: "any",
      rules: [{ field: "tag", op: "has", value: "vip" }, { field: "custom", op: "is", field_name: "plan", value: "pro" }]
    })
    expect(errors).toEqual([])
    await context.close()
  })

  it("keeps lists and segments accessible and without sideways scroll at 390 px (1280: along the paths above)", async () => {
    const width = 390
    await call("POST", `/v1/admin/accounts/${person.accountId}/keys`, { label: "second" })
    const { context, errors, page } = await signedIn(width)
    const list = await call("POST", "/v1/bulk/lists", { name: `At ${width} px` }, person.token)
    await call("POST", `/v1/bulk/lists/${list.id}/contacts`, { contacts: ["ada@customers.test"] }, person.token)
    const segment = await call("POST", "/v1/bulk/segments", {
      name: `At ${width} px`, rules: { match: "all", rules: [{ field: "list", op: "in", value: list.id }] }
    }, person.token)
    const visits: ReadonlyArray<readonly [string, string, string]> = [
      ["Lists", "lists", "table[aria-busy=false]"],
      ["a list", `lists/${list.id}`, "[aria-label=Members] table[aria-busy=false]"],
      ["Segments", "segments", "table[aria-busy=false]"],
      ["a segment", `segments/${segment.id}`, ".segment-count[aria-busy=false]"],
      ["a new segment", "segments/new", ".segment-count[aria-busy=false]"]
    ]
    for (const [what, path, ready] of visits) {
      await page.goto(`${base()}/console/${path}`)
      await page.locator(ready).first().waitFor()
      await checkLayout(page, what, width)
    }

    // Deleting several lists: the one a segment uses stays, and the report says why.
    await page.goto(`${base()}/console/lists`)
    await page.getByLabel(`Select At ${width} px`).check()
    await page.getByRole("button", { name: "Delete selected" }).click()
    await page.getByRole("button", { name: "Yes, Delete selected" }).click()
    await expect.poll(() => page.locator(".delete-report").textContent()).toContain(`In use, not deleted: At ${width} px.`)

    // Lists belong to the key: switched to another key of the account, the view reloads as that key.
    await page.getByLabel("Acting as key").selectOption({ label: "second" })
    await page.getByText("This key has no lists yet.").waitFor()
    expect(await page.locator(".acting").textContent()).toBe("Acting as key second")
    expect(errors).toEqual([])
    await context.close()
  })
})
