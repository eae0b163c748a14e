/**
 * A real Chromium for the console's browser tests (#28 "Tests in a real browser"), through
 * playwright-core.
 *
 * The browser: `HERALD_CHROMIUM` if set, else Debian's `/usr/bin/chromium`, else the build of
 * `@sparticuz/chromium` (unpacked into /tmp once). None found → `openBrowser` throws: the tests
 * fail, never skip. It is launched with the arguments below and never with @sparticuz's own
 * `args`: those turn off web security and site isolation, and the CSP, sandbox and cookie tests
 * would then prove nothing.
 *
 * One browser per test file (`openBrowser` in beforeAll), a fresh context per test (`newPage`):
 * contexts share no cookies or storage, and cost milliseconds where a browser costs a second.
 */
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"

// Functions given to page.evaluate run in the page; this project's tsconfig has no DOM types.
declare const document: { readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number } }

const DEBIAN_CHROMIUM = "/usr/bin/chromium"

/** Ours, not @sparticuz's (see above): headless, no GPU, nothing phoning home during a test. */
export const CHROMIUM_ARGS: ReadonlyArray<string> = [
  "--headless=new",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage"
]

/** The Chromium binary to drive, found as the module comment says. */
export const findChromium = async (): Promise<string> => {
  const configured = process.env["HERALD_CHROMIUM"]
  if (configured !== undefined && configured !== "") {
    if (!existsSync(configured)) throw new Error(`HERALD_CHROMIUM=${configured} does not exist`)
    return configured
  }
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM
  try {
    const { default: sparticuz } = await import("@sparticuz/chromium")
    return await sparticuz.executablePath()
  } catch (error) {
    throw new Error(
      `no Chromium for the browser tests: set HERALD_CHROMIUM, install Debian's chromium, or keep @sparticuz/chromium installed (${String(error)})`
    )
  }
}

export interface OpenedBrowser {
  readonly browser: Browser
  /** Milliseconds from looking for the binary to a connected browser (the per-file cost). */
  readonly startMs: number
}

export const openBrowser = async (): Promise<OpenedBrowser> => {
  const started = performance.now()
  const executablePath = await findChromium()
  const browser = await chromium.launch({ executablePath, args: [...CHROMIUM_ARGS], headless: true, timeout: 60_000 })
  return { browser, startMs: Math.round(performance.now() - started) }
}

export interface PageOptions {
  /** Viewport width in CSS pixels: the console must work at 1280 and at 390. */
  readonly width?: number
  readonly height?: number
}

/** A page in a context of its own (no cookies or storage shared with any other test). */
export const newPage = async (browser: Browser, options: PageOptions = {}): Promise<{ context: BrowserContext; page: Page }> => {
  const width = options.width ?? 1280
  const context = await browser.newContext({
    viewport: { width, height: options.height ?? (width <= 480 ? 844 : 800) },
    ...(width <= 480 ? { deviceScaleFactor: 2, isMobile: true, hasTouch: true } : {})
  })
  const page = await context.newPage()
  return { context, page }
}

// ---------------------------------------------------------------------------------------------
// Accessibility (axe-core)

/** #28: no serious or critical violation of WCAG 2.1 A/AA rules on any view. */
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]

let axeSource: string | undefined

interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown>; readonly failureSummary?: string }>
}

/**
 * Runs axe-core on the page and throws, naming each rule and its elements, when a serious or
 * critical violation is found. axe is evaluated through the DevTools protocol, which the page's
 * CSP does not govern (a `<script>` tag with its source would be refused, rightly).
 */
export const expectAccessible = async (page: Page, what: string): Promise<void> => {
  axeSource ??= await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async (tags) => {
    // axe is a global once its source ran above.
    const axe = (globalThis as unknown as { axe: { run: (context: unknown, options: unknown) => Promise<{ violations: Array<AxeViolation> }> } }).axe
    const result = await axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] })
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, ...(n.failureSummary === undefined ? {} : { failureSummary: n.failureSummary }) }))
    }))
  }, AXE_TAGS)
  const serious = violations.filter((v) => v.impact === "serious" || v.impact === "critical")
  if (serious.length > 0) {
    const lines = serious.map((v) =>
      `- ${v.id} (${v.impact}): ${v.help}\n` + v.nodes.map((n) => `    ${JSON.stringify(n.target)} ${n.failureSummary ?? ""}`).join("\n"))
    throw new Error(`axe found ${serious.length} serious or critical violation(s) on ${what}:\n${lines.join("\n")}`)
  }
}

// ---------------------------------------------------------------------------------------------
// Layout and screenshots

/** True when the page scrolls sideways (the 390 px layout must not). */
export const scrollsSideways = (page: Page): Promise<boolean> =>
  page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth)

/** A full-page PNG at `file` (npm run console:shots). */
export const screenshot = async (page: Page, file: string): Promise<void> => {
  await page.screenshot({ path: file, fullPage: true, animations: "disabled" })
}
