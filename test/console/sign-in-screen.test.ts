/**
 * The console in a real Chromium before anyone signs in: the sign-in screen renders from the
 * appliance's own files, is accessible (axe-core, WCAG 2.1 A/AA: no serious or critical
 * violation), is usable by keyboard, fits 390 px without sideways scrolling, and runs under a CSP
 * that really refuses inline script (an injected `<script>` does not run).
 */
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectAccessible, newPage, openBrowser, scrollsSideways } from "../support/browser.ts"
import { type ConsoleAppliance, startConsoleAppliance } from "../support/console.ts"

let served: ConsoleAppliance
let browser: Browser

beforeAll(async () => {
  served = await startConsoleAppliance()
  const opened = await openBrowser()
  browser = opened.browser
  console.log(`browser started in ${opened.startMs} ms`)
})
afterAll(async () => {
  await browser?.close()
  await served?.stop()
})

/** Opens the console and waits for the sign-in form (the session read has answered). */
const openSignIn = async (page: Page, route = "/console/") => {
  const response = await page.goto(`${served.app.baseUrl}${route}`)
  await page.getByRole("heading", { name: "Sign in to Herald" }).waitFor()
  return response
}

describe("the sign-in screen", () => {
  it.each([1280, 390])("renders at %i px with labelled controls, no serious accessibility violation and no sideways scroll", async (width) => {
    const { context, page } = await newPage(browser, { width })
    const errors: Array<string> = []
    page.on("pageerror", (error) => errors.push(error.message))
    await openSignIn(page)
    await expect(page.getByLabel("Email").isVisible()).resolves.toBe(true)
    await expect(page.getByLabel("Password").isVisible()).resolves.toBe(true)
    await expectAccessible(page, `the sign-in screen at ${width} px`)
    expect(await scrollsSideways(page)).toBe(false)
    expect(errors).toEqual([])
    await context.close()
  })

  it("(the accessibility check itself) fails on an unlabelled control, naming the rule and the element", async () => {
    const { context, page } = await newPage(browser)
    await page.setContent(`<!doctype html><html lang="en"><head><title>t</title></head><body><main><input id="nameless"></main></body></html>`)
    await expect(expectAccessible(page, "a page with an unlabelled input")).rejects.toThrow(/label \(critical\)[\s\S]*#nameless/)
    await context.close()
  })

  it("is the answer to any deep link of a signed-out browser", async () => {
    const { context, page } = await newPage(browser)
    await openSignIn(page, "/console/messages/msg_123")
    expect(await page.locator("nav").count()).toBe(0) // no shell, no half-working page
    await context.close()
  })

  it("is usable with the keyboard alone: email, password, then the button", async () => {
    const { context, page } = await newPage(browser)
    await openSignIn(page)
    const focused = async () => page.evaluate("document.activeElement && (document.activeElement.id || document.activeElement.textContent)")
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("email")
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("password")
    await page.keyboard.press("Tab")
    expect(await focused()).toBe("Sign in")
    await context.close()
  })

  it("runs under a CSP that refuses inline script, with only the console's own script on the page", async () => {
    const { context, page } = await newPage(browser)
    const violations: Array<string> = []
    page.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) violations.push(message.text())
    })
    const response = await openSignIn(page)
    expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'")
    const scripts = await page.evaluate(`[...document.scripts].map((s) => ({ src: s.src, inline: s.text.trim() !== "" }))`) as Array<{ src: string; inline: boolean }>
    expect(scripts).toHaveLength(1)
    expect(scripts[0]).toMatchObject({ inline: false, src: expect.stringMatching(/\/console\/main-[A-Z0-9]+\.js$/) })
    expect(violations).toEqual([]) // the console itself needs nothing the policy refuses

    // An injected inline script (what an HTML injection would bring) must not run.
    await page.evaluate(`(() => {
      const script = document.createElement("script")
      script.text = "window.__injected = true"
      document.body.append(script)
    })()`)
    expect(await page.evaluate("window.__injected === true")).toBe(false)
    await expect.poll(() => violations.length).toBeGreaterThan(0)
    await context.close()
  })
})
