/**
 * The Templates view (#29 view 4) in a real Chromium against a real appliance: a template with a
 * variable written in the editor and rendered by the engine in the preview with the sample value;
 * an engine error shown at its line; two saves, the versions, a diff and a restore of the first;
 * a test-send to the simulator; a remote image not fetched by the preview until asked (a loopback
 * HTTP server counts requests); unsaved edits asking before the view or the page is left; axe and
 * no sideways scroll at 1280 and 390 px.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, newPage, openBrowser, scrollsSideways } from "../support/browser.ts"
import { type ConsoleAppliance, startConsoleAppliance } from "../support/console.ts"
import { signInThroughForm } from "../support/console-person.ts"

let served: ConsoleAppliance
let browser: Browser
let images: Server
let imageRequests = 0
let person: { email: string; password: string; token: string }

const SIMULATOR = "delivered+template@simulator.herald.invalid"
const base = () => `http://localhost:${new URL(served.app.baseUrl).port}`
const pixelUrl = () => `http://127.0.0.1:${(images.address() as AddressInfo).port}/pixel.gif`

const FIRST_HTML = () => `<!doctype html><html><body>\n<p id="greeting">Hi {{ first_name }}</p>\n<img alt="" src="${pixelUrl()}">\n</body></html>`
const SECOND_HTML = () => FIRST_HTML().replace("Hi {{ first_name }}", "Welcome back, {{ first_name }}")

beforeAll(async () => {
  // A remote image's server: every request the preview would make for it is counted here.
  images = createServer((request, response) => {
    if (request.url === "/frame") return void response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>frame</title>")
    imageRequests += 1
    response.writeHead(200, { "content-type": "image/gif" }).end(Buffer.from("R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs=", "base64"))
  })
  await new Promise<void>((resolve) => images.listen(0, "127.0.0.1", resolve))
  served = await startConsoleAppliance({ env: { HERALD_MTA_ENABLED: "true" } })
  const email = `marketer-${Date.now().toString(36)}@customers.test`
  const password = "correct horse battery staple"
  const account = await served.app.request("POST", "/v1/admin/accounts", { body: { name: "Marketer", email, password } })
  expect(account.status, account.text).toBe(201)
  const key = await served.app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "marketing" } })
  expect(key.status, key.text).toBe(201)
  person = { email, password, token: key.json.token }
  // The quick start's domain: added, enough for a test-send to the simulator.
  const domain = await served.app.request("POST", "/v1/client/domains", { token: person.token, body: { domain: "acme.example" } })
  expect(domain.status, domain.text).toBe(201)
  browser = (await openBrowser()).browser
})
afterAll(async () => {
  await browser?.close()
  await served?.stop()
  await new Promise((resolve) => images?.close(resolve))
})

const signedIn = async (width: number) => {
  const opened = await newPage(browser, { width })
  const errors: Array<string> = []
  opened.page.on("pageerror", (error) => errors.push(error.message))
  await signInThroughForm(opened.page, base(), person.email, person.password)
  return { ...opened, errors }
}

const preview = (page: Page) => page.frameLocator("iframe.template-preview")

/**
 * How many image requests the preview's document makes in a sandboxed frame like the console's
 * (sandbox="", srcdoc) on a page WITHOUT the console's CSP. A srcdoc document also inherits the
 * console's own CSP, which today keeps every remote image out whatever the frame's policy says; on
 * a page of its own, what is tested is the frame's own policy, which decides once the console lets
 * a preview's images through.
 */
const requestsOfPreview = async (srcdoc: string): Promise<number> => {
  const before = imageRequests
  const { context, page } = await newPage(browser)
  await page.goto(`http://127.0.0.1:${(images.address() as AddressInfo).port}/frame`)
  await page.evaluate(`(() => { const frame = document.createElement("iframe"); frame.sandbox = ""; frame.srcdoc = ${JSON.stringify(srcdoc)}; document.body.append(frame) })()`)
  await page.frameLocator("iframe").locator("#greeting").waitFor()
  // Settled: the frame's images have loaded or failed.
  await page.frames()[1]!.waitForFunction("[...document.images].every((image) => image.complete)")
  await context.close()
  return imageRequests - before
}

/** Waits for the next dialog `act` opens, answers it, and returns its kind and text. */
const answerDialog = async (page: Page, act: () => Promise<unknown>, accept: boolean) => {
  const dialog = page.waitForEvent("dialog", { timeout: 5_000 })
  const acting = act()
  const opened = await dialog
  const seen = { type: opened.type(), message: opened.message() }
  await (accept ? opened.accept() : opened.dismiss())
  await acting
  return seen
}

describe("the Templates view", () => {
  it("writes a template, previews it with its variables, shows an engine error at its line, keeps versions, test-sends and warns before leaving", async () => {
    const { context, errors, page } = await signedIn(1280)
    // The console's own CSP would keep every remote image out of a srcdoc frame (a srcdoc document
    // inherits it); it is taken off this page so that what is tested is the frame's own policy,
    // which decides once the console lets a preview's images through.
    await page.goto(`${base()}/console/templates`)
    await page.getByText("This key has no templates yet.").waitFor()
    await expectAccessible(page, "Templates at 1280 px")
    await page.getByRole("link", { name: "New template" }).click()
    await page.getByLabel("Name").fill("Welcome")
    await page.getByLabel("Subject").fill("Hello {{ first_name }}")
    await page.locator("#source-html").fill(FIRST_HTML())
    await page.locator("#source-body_text").fill("Hi {{ first_name }}")
    await page.getByLabel(/^Variables/).fill(`{"first_name": "Ada"}`)

    // The engine's render, with the sample value; the frame is sandboxed with no permission at all.
    await expect.poll(() => preview(page).locator("#greeting").textContent()).toBe("Hi Ada")
    await expect.poll(() => page.locator("#preview-subject").textContent()).toBe("Hello Ada")
    expect(await page.locator("iframe.template-preview").getAttribute("sandbox")).toBe("")
    expect(imageRequests).toBe(0)
    await page.getByLabel("Phone (375 px)").check()
    expect(await page.locator("iframe.template-preview").evaluate((frame) => (frame as unknown as { offsetWidth: number }).offsetWidth)).toBe(375)

    // The remote image: not fetched by the preview until asked, then fetched.
    const frame = page.locator("iframe.template-preview")
    const unasked = (await frame.getAttribute("srcdoc"))!
    expect(await requestsOfPreview(unasked)).toBe(0)
    expect(unasked).toMatch(/^<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src 'none'; [^"]*img-src data:">/)
    await page.getByLabel(/^Load remote images/).check()
    await expect.poll(() => frame.getAttribute("srcdoc")).toContain("img-src data: https: http:")
    const asked = (await frame.getAttribute("srcdoc"))!
    await page.getByLabel(/^Load remote images/).uncheck()
    expect(await requestsOfPreview(asked)).toBe(1)

    // An unknown filter on line 2: the engine's message in the HTML panel, at its line.
    await page.locator("#source-html").fill(FIRST_HTML().replace("{{ first_name }}", "{{ first_name | no_such_filter }}"))
    const lineError = page.locator("#source-html-error")
    await expect.poll(() => lineError.textContent()).toContain("html cannot be rendered at line 2, column 21: undefined filter: no_such_filter")
    expect(await lineError.locator(".error-line").textContent()).toContain("Line 2, column 21:")
    expect(await lineError.locator("code").textContent()).toContain("no_such_filter")
    expect(await page.locator(".gutter-error").textContent()).toBe("2")
    expect(await page.locator("#source-html").getAttribute("aria-invalid")).toBe("true")
    await page.getByRole("button", { name: "Show line 2" }).click()
    expect(await page.evaluate("document.activeElement.id")).toBe("source-html")
    // Side by side at this width: no tabs, every source in view.
    expect(await page.getByRole("tab", { name: "MJML" }).isVisible()).toBe(false)
    expect(await page.locator("#source-mjml").isVisible()).toBe(true)
    await expectAccessible(page, "a template with an engine error at 1280 px")
    expect(await scrollsSideways(page)).toBe(false)

    // Saved twice: two versions; the first compared with the editor, then restored.
    await page.locator("#source-html").fill(FIRST_HTML())
    await page.locator("#source-html-error").waitFor({ state: "detached" })
    await page.getByRole("button", { name: "Create template" }).click()
    await page.getByText("All edits saved").waitFor()
    await page.waitForURL(/\/console\/templates\/[^/]+$/)
    await page.locator("#source-html").fill(SECOND_HTML())
    await page.getByRole("button", { name: "Save", exact: true }).click()
    await page.getByText("All edits saved").waitFor()
    const versions = page.getByRole("region", { name: "Version history" })
    await expect.poll(() => versions.getByRole("row").count()).toBe(3) // a header and two versions
    const first = (await versions.getByRole("row").last().locator("td").first().textContent())!
    await page.getByRole("button", { name: `Compare version ${first}` }).click()
    const diff = page.getByRole("region", { name: `Version ${first} compared with the editor` })
    await expect.poll(() => diff.locator(".diff-removed").allTextContents()).toEqual([expect.stringContaining("- <p id=\"greeting\">Hi {{ first_name }}</p>")])
    expect(await diff.locator(".diff-added").allTextContents()).toEqual([expect.stringContaining("+ <p id=\"greeting\">Welcome back, {{ first_name }}</p>")])
    await page.getByRole("button", { name: `Restore version ${first}` }).click()
    await page.getByRole("button", { name: `Yes, Restore version ${first}` }).click()
    await expect.poll(() => page.locator("#source-html").inputValue()).toBe(FIRST_HTML())
    await expect.poll(() => versions.getByRole("row").count()).toBe(4)
    await expect.poll(() => preview(page).locator("#greeting").textContent()).toBe("Hi Ada")
    expect(imageRequests).toBe(1) // only the frame that asked, never the console's

    // Test-send to the simulator, from the account's domain: the message is sent.
    await page.getByLabel("Send a test to").fill(SIMULATOR)
    await page.getByLabel(/^From address/).fill("hello@acme.example")
    await page.getByRole("button", { name: "Send test" }).click()
    const queued = page.getByText(`Test queued for ${SIMULATOR}`)
    await queued.waitFor()
    const messageId = (await queued.getByRole("link").textContent())!.replace("see message ", "")

    // Unsaved edits: leaving through the navigation asks; staying keeps them; the tab's close asks too.
    await page.locator("#source-body_text").fill("Hi {{ first_name }}, unsaved")
    const messagesLink = page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Messages" })
    expect((await answerDialog(page, () => messagesLink.click(), false)).message).toContain("unsaved edits")
    expect(page.url()).toMatch(/\/console\/templates\/[^/]+$/)
    expect(await page.locator("#source-body_text").inputValue()).toBe("Hi {{ first_name }}, unsaved")
    expect((await answerDialog(page, () => page.close({ runBeforeUnload: true }), false)).type).toBe("beforeunload")
    expect(page.isClosed()).toBe(false)
    await answerDialog(page, () => messagesLink.click(), true)
    await page.getByRole("heading", { level: 1, name: "Messages" }).waitFor()

    // Meanwhile the simulator took the test-send: it was sent.
    await expect.poll(async () => {
      const message = await served.app.request("GET", `/v1/mail/messages/${messageId}`, { token: person.token })
      return message.json?.recipients?.[0]?.state
    }, { timeout: 20_000 }).toMatch(/sent|delivered/)
    expect(errors).toEqual([])
    await context.close()
  })

  it("keeps the list and the editor accessible, without sideways scroll and with tabs at 390 px", async () => {
    const { context, errors, page } = await signedIn(390)
    await page.goto(`${base()}/console/templates`)
    await page.locator("table[aria-busy=false]").waitFor()
    await expectAccessible(page, "Templates at 390 px")
    expect(await scrollsSideways(page), "Templates at 390 px").toBe(false)

    await page.getByRole("link", { name: "Welcome" }).click()
    await preview(page).locator("#greeting").waitFor()
    await page.getByRole("region", { name: "Version history" }).waitFor()
    // An engine error on view, as a person fixing one would see it; one source at a time.
    await page.locator("#source-html").fill("<p>\n{% if first_name %}")
    await page.locator("#source-html-error").waitFor()
    expect(await page.locator("#source-mjml").isVisible()).toBe(false)
    await page.getByRole("tab", { name: "MJML" }).click()
    expect(await page.locator("#source-mjml").isVisible()).toBe(true)
    expect(await page.locator("#source-html").isVisible()).toBe(false)
    await page.getByRole("tab", { name: "MJML" }).press("ArrowRight")
    expect(await page.locator("#source-body_text").isVisible()).toBe(true)
    await expectAccessible(page, "a template at 390 px")
    expect(await scrollsSideways(page), "a template at 390 px").toBe(false)
    expect(errors).toEqual([])
    await context.close()
  })
})
