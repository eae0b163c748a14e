/**
 * The console signed in, end to end, over the session routes of #28
 * (`POST/GET/PATCH/DELETE /console/session`).
 *
 * Signs in through the form, walks every view at 1280 and 390 px (the active key named on each,
 * axe clean, no sideways scroll), switches the key by label, shows the API's message for a wrong
 * password, and checks that sign-out — here or in another tab — ends the session everywhere.
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, newPage, openBrowser, scrollsSideways } from "../support/browser.ts"
import { type ConsoleAppliance, startConsoleAppliance } from "../support/console.ts"
import { type ConsoleAccount, createConsoleAccount, signInThroughForm } from "../support/console-person.ts"

let served: ConsoleAppliance
let browser: Browser
let person: ConsoleAccount

/** The views a non-admin account sees, as the navigation names them. */
const VIEWS = ["Overview", "Messages", "Domains", "Suppressions", "Contacts", "Lists", "Segments", "Templates", "Campaigns", "Sequences", "Keys and webhooks", "Usage and plan"]

beforeAll(async () => {
  served = await startConsoleAppliance()
  person = await createConsoleAccount(served.app.baseUrl, served.app.adminToken)
  browser = (await openBrowser()).browser
})
afterAll(async () => {
  await browser?.close()
  await served?.stop()
})

/**
 * Where the browser opens the console: the appliance's base URL (http://localhost:<port> by
 * default), since a sign-in or a console write must come from its origin. Requests from the test
 * itself go to 127.0.0.1, where the appliance listens (`served.app.baseUrl`).
 */
const base = () => `http://localhost:${new URL(served.app.baseUrl).port}`

describe("the signed-in console", () => {
  it.each([1280, 390])("shows every view at %i px with the active key named, accessible and without sideways scroll", async (width) => {
    const { context, page } = await newPage(browser, { width })
    await signInThroughForm(page, base(), person.email, person.password)
    const active = await page.locator("#active-key option:checked").textContent()
    const nav = page.getByRole("navigation", { name: "Console" })
    expect(await nav.getByRole("link").allTextContents()).toEqual(VIEWS) // no Admin for a non-admin
    for (const title of VIEWS) {
      await nav.getByRole("link", { name: title, exact: true }).click()
      await page.getByRole("heading", { level: 1, name: title }).waitFor()
      expect(await page.locator(".acting").textContent()).toBe(`Acting as key ${active}`)
      await expectAccessible(page, `${title} at ${width} px`)
      expect(await scrollsSideways(page), title).toBe(false)
    }
    await context.close()
  })

  it("switches the key it acts as by label, and keeps it across a reload", async () => {
    const { context, page } = await newPage(browser)
    await signInThroughForm(page, base(), person.email, person.password)
    const other = await otherKeyLabel(page)
    await page.getByLabel("Acting as key").selectOption({ label: other })
    await expect.poll(() => page.locator(".acting").textContent()).toBe(`Acting as key ${other}`)
    await page.reload()
    await page.getByRole("navigation", { name: "Console" }).waitFor()
    expect(await page.locator(".acting").textContent()).toBe(`Acting as key ${other}`)
    await context.close()
  })

  it("shows the API's message next to the form for a wrong password, and stays on the sign-in screen", async () => {
    const { context, page } = await newPage(browser)
    await page.goto(`${base()}/console/`)
    await page.getByLabel("Email").fill(person.email)
    await page.getByLabel("Password").fill("not the password")
    await page.getByRole("button", { name: "Sign in" }).click()
    const alert = page.locator("#sign-in-error")
    await alert.waitFor()
    expect((await alert.textContent())?.length).toBeGreaterThan(0)
    expect(await page.getByRole("navigation", { name: "Console" }).count()).toBe(0)
    await context.close()
  })

  it("signs out: the sign-in screen, and the old cookie refused", async () => {
    const { context, page } = await newPage(browser)
    await signInThroughForm(page, base(), person.email, person.password)
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ")
    expect((await fetch(`${served.app.baseUrl}/console/session`, { headers: { cookie } })).status).toBe(200)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to Herald" }).waitFor()
    expect((await fetch(`${served.app.baseUrl}/console/session`, { headers: { cookie } })).status).toBe(401)
    await context.close()
  })

  it("drops to the sign-in screen, not a half-working page, when the session ends in another tab", async () => {
    const { context, page } = await newPage(browser)
    await signInThroughForm(page, base(), person.email, person.password)
    const other = await context.newPage()
    await signOutFrom(other)
    // The next call of this tab (a key switch) gets 401: the whole page becomes the sign-in screen.
    await page.getByLabel("Acting as key").selectOption({ label: await otherKeyLabel(page) })
    await page.getByRole("heading", { name: "Sign in to Herald" }).waitFor()
    expect(await page.getByRole("navigation", { name: "Console" }).count()).toBe(0)
    await context.close()
  })
})

/** A label of the account's keys other than the active one (selecting the same fires no change). */
const otherKeyLabel = async (page: Page): Promise<string> => {
  const active = await page.locator("#active-key option:checked").textContent()
  return person.keys.map((key) => key.label).find((label) => label !== active)!
}

const signOutFrom = async (page: Page) => {
  await page.goto(`${base()}/console/`)
  await page.getByRole("button", { name: "Sign out" }).click()
  await page.getByRole("heading", { name: "Sign in to Herald" }).waitFor()
}
