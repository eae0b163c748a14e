/**
 * Contacts and Import in a real Chromium against a real appliance (#29 "Views" 1 and "Tests in a
 * real browser"): a CSV with one invalid row and one repeated address chosen as a file → the
 * preview (read by the console's worker, checked by the API's import-preview) shows the invalid
 * row with the API's reason and the duplicate folded into its first row → confirmed → the upload's
 * counts; the contacts in the table, found by search and by a tag and a status filter; one opened
 * (fields, custom fields, lists, engagement, the messages this key sent it), a field edited and
 * seen saved, one deleted; the views axe-clean and without sideways scroll at 1280 and 390 px.
 *
 * The console is opened at http://localhost:<port>, the appliance's default base URL (its CSRF
 * check wants that Origin on every write, the worker's preview call and the upload included).
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, newPage, openBrowser, scrollsSideways } from "../support/browser.ts"
import { type ConsoleAppliance, startConsoleAppliance } from "../support/console.ts"
import { type ConsoleAccount, createConsoleAccount, signInThroughForm } from "../support/console-person.ts"

let served: ConsoleAppliance
let browser: Browser
let person: ConsoleAccount
let origin: string

/** Four addresses, one of them twice (row 5 folds into row 1), and one row that is no address (row 3). */
const CSV = [
  "email,name,tags,city",
  "ada@example.com,Ada Lovelace,newsletter;vip,London",
  "grace@example.com,Grace Hopper,newsletter,Arlington",
  "not-an-address,Nobody,newsletter,Nowhere",
  "alan@example.com,\"Turing, Alan\",vip,Manchester",
  "ADA@example.com,,,"
].join("\r\n")

beforeAll(async () => {
  served = await startConsoleAppliance()
  origin = `http://localhost:${new URL(served.app.baseUrl).port}`
  person = await createConsoleAccount(served.app.baseUrl, served.app.adminToken, ["marketing"])
  browser = (await openBrowser()).browser
})
afterAll(async () => {
  await browser?.close()
  await served?.stop()
})

const signedIn = async (width: number) => {
  const opened = await newPage(browser, { width })
  await signInThroughForm(opened.page, origin, person.email, person.password)
  return opened
}

const openContacts = async (page: Page) => {
  await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Contacts", exact: true }).click()
  await page.getByRole("heading", { level: 1, name: "Contacts" }).waitFor()
}

const checkLayout = async (page: Page, what: string) => {
  await expectAccessible(page, what)
  expect(await scrollsSideways(page), `${what} scrolls sideways`).toBe(false)
}

const contactRows = (page: Page) => page.getByRole("region", { name: "Contacts" }).locator("tbody tr")

const filter = async (page: Page, fields: { search?: string; tag?: string; status?: string }) => {
  await page.getByLabel("Email or name").fill(fields.search ?? "")
  await page.getByLabel("Tag", { exact: true }).fill(fields.tag ?? "")
  await page.getByLabel("Status", { exact: true }).selectOption(fields.status ?? "")
  await page.getByRole("button", { name: "Apply" }).click()
}

describe("Contacts and Import", () => {
  it("imports a CSV through the preview, then finds, opens, edits and deletes its contacts", async () => {
    const { context, page } = await signedIn(1280)
    await openContacts(page)
    await expect.poll(() => page.getByText("This key has no contacts yet").isVisible()).toBe(true)
    await expect.poll(() => page.locator(".acting").textContent()).toContain("marketing")

    await page.getByRole("link", { name: "Import contacts" }).click()
    await page.getByLabel("CSV file").setInputFiles({ name: "contacts.csv", mimeType: "text/csv", buffer: Buffer.from(CSV) })
    await page.getByRole("button", { name: "Preview the import" }).click()
    const counts = page.getByRole("region", { name: "Import preview counts" })
    await counts.waitFor()
    expect(await counts.getByRole("row", { name: /Rows read/ }).textContent()).toContain("5")
    expect(await counts.getByRole("row", { name: /Valid addresses/ }).textContent()).toContain("3")
    expect(await counts.getByRole("row", { name: /Duplicates/ }).textContent()).toContain("1")
    // The invalid row, refused with the API's reason; the duplicate, folded into row 1.
    const invalid = page.getByRole("region", { name: "Invalid rows" }).locator("tbody tr")
    expect(await invalid.count()).toBe(1)
    const invalidCells = await invalid.first().locator("td").allTextContents()
    expect(invalidCells.slice(0, 2)).toEqual(["3", "not-an-address"])
    expect(invalidCells[2]!.length).toBeGreaterThan(0)
    expect(await page.getByRole("region", { name: "Duplicate rows" }).locator("tbody td").allTextContents()).toEqual(["5", "ADA@example.com", "1"])
    // The CSV's quoted comma read as one name.
    expect(await page.getByRole("region", { name: "First rows as read" }).textContent()).toContain("Turing, Alan")
    await checkLayout(page, "the import preview at 1280 px")

    await page.getByLabel("Tags added to every imported contact (comma-separated)").fill("spring-import")
    await page.getByRole("button", { name: "Import 3 valid addresses" }).click()
    const result = page.getByRole("region", { name: "Import counts" })
    await result.waitFor()
    expect(await result.getByRole("row", { name: /Created/ }).textContent()).toContain("3")
    expect(await result.getByRole("row", { name: /Invalid/ }).textContent()).toContain("1")
    expect(await page.getByRole("region", { name: "Rows left out" }).textContent()).toContain("not-an-address")

    await page.getByRole("link", { name: "See the contacts" }).click()
    await expect.poll(() => contactRows(page).count()).toBe(3)
    await checkLayout(page, "the contact list at 1280 px")
    await filter(page, { search: "hopper" })
    await expect.poll(() => contactRows(page).locator("td:first-child").allTextContents()).toEqual(["grace@example.com"])
    await filter(page, { tag: "vip", status: "active" })
    await expect.poll(async () => (await contactRows(page).locator("td:first-child").allTextContents()).sort())
      .toEqual(["ada@example.com", "alan@example.com"])
    await filter(page, { status: "unsubscribed" })
    await expect.poll(() => page.getByText("No contact matches these filters.").isVisible()).toBe(true)

    await filter(page, { search: "ada@" })
    await page.getByRole("link", { name: "ada@example.com" }).click()
    await page.getByRole("heading", { name: "ada@example.com" }).waitFor()
    const fields = page.locator("section", { has: page.getByRole("heading", { name: "Fields" }) })
    expect(await fields.textContent()).toContain("Ada Lovelace")
    expect(await fields.textContent()).toContain("London")
    expect(await fields.textContent()).toContain("spring-import")
    await page.getByText("No opens, clicks, bounces, complaints or unsubscribes yet.").waitFor()
    await page.getByText("This key has sent this contact no message.").waitFor()
    await checkLayout(page, "a contact's page at 1280 px")

    await page.getByLabel("Name", { exact: true }).fill("Augusta Ada King")
    // An unsaved edit asks before an in-console link leaves it; declined, the edit stays.
    const asked = page.waitForEvent("dialog").then(async (dialog) => { const text = dialog.message(); await dialog.dismiss(); return text })
    await page.getByRole("link", { name: "← All contacts" }).click()
    expect(await asked).toContain("unsaved changes")
    expect(await page.getByLabel("Name", { exact: true }).inputValue()).toBe("Augusta Ada King")
    await page.getByRole("button", { name: "Save changes" }).click()
    await page.getByRole("status").filter({ hasText: "Saved." }).waitFor()
    await expect.poll(() => fields.textContent()).toContain("Augusta Ada King")
    const stored = await served.app.request("GET", `/v1/bulk/contacts?search=ada%40`, { token: null, headers: { cookie: (await context.cookies()).map((c) => `${c.name}=${c.value}`).join("; ") } })
    expect(stored.json.items[0].name, stored.text).toBe("Augusta Ada King")

    await page.getByRole("button", { name: "Delete contact" }).click()
    await page.getByRole("button", { name: "Yes, Delete contact" }).click()
    await page.getByRole("heading", { level: 1, name: "Contacts" }).waitFor()
    await filter(page, {})
    await expect.poll(async () => (await contactRows(page).locator("td:first-child").allTextContents()).sort())
      .toEqual(["alan@example.com", "grace@example.com"])
    await context.close()
  })

  it("is accessible at 390 px: the list, a contact's page and the import (its preview explaining the 422 gate)", async () => {
    const { context, page } = await signedIn(390)
    await openContacts(page)
    await expect.poll(() => contactRows(page).count()).toBeGreaterThan(0)
    await checkLayout(page, "the contact list at 390 px")
    await page.getByRole("link", { name: "grace@example.com" }).click()
    await page.getByRole("heading", { name: "grace@example.com" }).waitFor()
    await page.getByText("This key has sent this contact no message.").waitFor()
    await checkLayout(page, "a contact's page at 390 px")
    await page.getByRole("link", { name: "← All contacts" }).click()
    await page.getByRole("link", { name: "Import contacts" }).click()
    // 100 addresses (HERALD_IMPORT_VALIDATION_MIN), 20 of them invalid (over the 10 %): the 422 gate, explained before it trips.
    const rows = Array.from({ length: 100 }, (_, i) => (i < 20 ? `broken-${i}` : `reader-${i}@example.com`))
    await page.getByLabel("Or paste rows").fill(["email", ...rows].join("\n"))
    await page.getByRole("button", { name: "Preview the import" }).click()
    await page.getByRole("region", { name: "Import preview counts" }).waitFor()
    expect(await page.locator("#import-gate").textContent()).toContain("20 of 100 unique addresses are invalid, more than the 10 %")
    expect(await page.getByRole("button", { name: "Import 80 valid addresses" }).isDisabled()).toBe(true)
    await checkLayout(page, "the import preview at 390 px")
    await context.close()
  })
})
