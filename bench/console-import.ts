/**
 * npm run bench:console-import — the largest contact import the API accepts (a MAX_JSON_MB CSV,
 * BENCH_IMPORT_MB, default 15) made from the console (#29 view 1) in Chromium: the file chosen,
 * the preview (read by the console's worker, checked by `POST /v1/bulk/contacts/import-preview`),
 * confirmed, uploaded and imported. Prints how long the preview and the import took and the page's
 * longest main-thread task meanwhile (PerformanceObserver "longtask": tasks over 50 ms; none means
 * the page never froze for more than 50 ms), beside the baseline: the same file imported by a
 * curl-like fetch with a key's token, once before and once after the console's (their mean), each
 * into a key of its own so every run creates every contact.
 *
 * The appliance runs as `npm start` runs it (bench/lib.ts `spawnNode`), on DATABASE_URL's
 * PostgreSQL when set, else an embedded cluster; the console is built into a temporary folder.
 * Prints figures; asserts nothing.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { buildConsole } from "../scripts/build-console.ts"
import { newPage, openBrowser } from "../test/support/browser.ts"
import { signInThroughForm } from "../test/support/console-person.ts"
import { waitForStatus } from "../test/support/net.ts"
import { benchPostgres, createDatabase, freePort, spawnNode, table } from "./lib.ts"

const IMPORT_MB = Number(process.env["BENCH_IMPORT_MB"] ?? 15)
const BOOTSTRAP_KEY = `hk_bench_console_${randomBytes(16).toString("hex")}`
const PASSWORD = "a marketer's long passphrase"
/** The import's own answer can take minutes on a loaded machine: wait long, but not forever. */
const IMPORT_TIMEOUT_MS = 15 * 60_000

// Functions given to page.evaluate run in the page; this project's tsconfig has no DOM types.
declare const window: { __longTasks?: Array<number> }
declare const PerformanceObserver: new (callback: (list: { getEntries: () => Array<{ duration: number }> }) => void) => {
  observe: (options: { type: string; buffered: boolean }) => void
}

/** The rows bench:audience imports (an address, a quoted name with a comma, tags, two custom fields). */
const csvLine = (i: number) => `person${i}@example${i % 97}.org,"Doe, Jane ${i}",news;tier${i % 5},plan${i % 3},City ${i % 200}\n`
const CSV_HEADER = "email,name,tags,plan,city\n"

/** As many rows as fit in IMPORT_MB (MB of 2^20 bytes, as MAX_JSON_MB counts), written to a file. */
const writeCsv = (file: string): { rows: number; bytes: number } => {
  const limit = IMPORT_MB * 1024 * 1024
  const lines = [CSV_HEADER]
  let size = CSV_HEADER.length
  for (let i = 0; size + csvLine(i).length <= limit; i++) {
    lines.push(csvLine(i))
    size += csvLine(i).length
  }
  fs.writeFileSync(file, lines.join(""))
  return { rows: lines.length - 1, bytes: size }
}

const admin = async (base: string, route: string, body: unknown) => {
  const response = await fetch(`${base}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${BOOTSTRAP_KEY}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  if (response.status !== 201) throw new Error(`POST ${route} answered ${response.status}: ${await response.text()}`)
  return await response.json() as { id: string; token: string }
}

/** The baseline: the same file as a `text/csv` body with a key's token, timed to the answer. */
const importByFetch = async (base: string, token: string, csv: Buffer) => {
  const started = performance.now()
  const response = await fetch(`${base}/v1/bulk/contacts/import`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "text/csv" },
    body: csv
  })
  const answer = await response.json() as { created?: number }
  if (response.status !== 200) throw new Error(`the baseline import answered ${response.status}: ${JSON.stringify(answer)}`)
  return { seconds: (performance.now() - started) / 1000, created: answer.created ?? 0 }
}

const postgres = await benchPostgres()
const databaseUrl = await createDatabase(postgres.adminUrl, "herald_bench_console_import")
const consoleDir = fs.mkdtempSync(path.join(os.tmpdir(), "herald-bench-console-"))
const csvFile = path.join(consoleDir, "contacts.csv")
await buildConsole(consoleDir)
const { bytes, rows } = writeCsv(csvFile)
const csv = fs.readFileSync(csvFile)
const port = await freePort()
const base = `http://localhost:${port}`
const appliance = spawnNode("src/main.ts", {
  DATABASE_URL: databaseUrl,
  HERALD_HTTP_PORT: String(port),
  HERALD_HTTP_HOST: "127.0.0.1",
  HERALD_SMTP_PORT: String(await freePort()),
  HERALD_BASE_URL: base,
  HERALD_BOOTSTRAP_KEY: BOOTSTRAP_KEY,
  HERALD_CONSOLE_DIR: consoleDir,
  HERALD_MTA_ENABLED: "false",
  MAX_JSON_MB: String(IMPORT_MB)
})
const { browser } = await openBrowser()
try {
  // Each poll bounded (a connection during the start-up port check is hung up on, not answered).
  await waitForStatus(`http://127.0.0.1:${port}/health`, 120_000)
  const email = `marketer-${Date.now().toString(36)}@bench.test`
  const account = await admin(base, "/v1/admin/accounts", { name: "Bench marketer", email, password: PASSWORD })
  await admin(base, `/v1/admin/accounts/${account.id}/keys`, { label: "console" })
  const before = await admin(base, `/v1/admin/accounts/${account.id}/keys`, { label: "curl before" })
  const after = await admin(base, `/v1/admin/accounts/${account.id}/keys`, { label: "curl after" })
  console.log(`\nconsole import: ${rows.toLocaleString()} contacts, CSV ${(bytes / 1024 / 1024).toFixed(1)} MB (MAX_JSON_MB=${IMPORT_MB})\n`)

  const baselineBefore = await importByFetch(base, before.token, csv)
  console.log(`baseline before: ${baselineBefore.seconds.toFixed(1)} s; now the console`)

  const { context, page } = await newPage(browser, { width: 1280 })
  page.setDefaultTimeout(IMPORT_TIMEOUT_MS)
  page.on("pageerror", (error) => console.log(`page error: ${error.message}`))
  await signInThroughForm(page, base, email, PASSWORD)
  await page.goto(`${base}/console/contacts/import`)
  await page.getByLabel("CSV file").waitFor()
  await page.evaluate(() => {
    window.__longTasks = []
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) window.__longTasks!.push(entry.duration)
    }).observe({ type: "longtask", buffered: false })
  })
  // The instrument itself: a 120 ms task of the page's own must be seen, else "none" would mean nothing.
  await page.evaluate(() => new Promise<void>((resolve) => setTimeout(() => {
    const end = Date.now() + 120
    while (Date.now() < end) { /* busy on purpose */ }
    setTimeout(resolve, 100)
  }, 0)))
  const calibration = await page.evaluate(() => window.__longTasks!.splice(0))
  if (calibration.length === 0) throw new Error("the long-task observer saw no 120 ms task: its figures would mean nothing")
  const started = performance.now()
  await page.getByLabel("CSV file").setInputFiles(csvFile)
  await page.getByRole("button", { name: "Preview the import" }).click()
  await page.getByRole("region", { name: "Import preview counts" }).waitFor({ timeout: Number(process.env["BENCH_PREVIEW_TIMEOUT_MS"] ?? IMPORT_TIMEOUT_MS) })
    .catch(async (error: unknown) => {
      throw new Error(`no preview: ${String(error)}\n${await page.locator("main").innerText()}`)
    })
  const previewed = performance.now()
  console.log(`previewed in ${((previewed - started) / 1000).toFixed(1)} s; now the upload`)
  await page.getByRole("button", { name: /^Import .* valid addresses$/ }).click()
  const counts = page.getByRole("region", { name: "Import counts" })
  await counts.waitFor()
  const imported = performance.now()
  const created = (await counts.getByRole("row", { name: /Created/ }).textContent()) ?? ""
  const longTasks = await page.evaluate(() => window.__longTasks ?? [])
  await context.close()

  const baselineAfter = await importByFetch(base, after.token, csv)
  const baseline = (baselineBefore.seconds + baselineAfter.seconds) / 2
  const importSeconds = (imported - previewed) / 1000
  table([
    { run: "curl-like fetch (before)", seconds: baselineBefore.seconds.toFixed(2), created: baselineBefore.created },
    { run: "console: preview (worker + import-preview)", seconds: ((previewed - started) / 1000).toFixed(2), created: "" },
    { run: "console: upload and import", seconds: importSeconds.toFixed(2), created: created.replace(/\D/g, "") },
    { run: "console: whole (choose → counts)", seconds: ((imported - started) / 1000).toFixed(2), created: "" },
    { run: "curl-like fetch (after)", seconds: baselineAfter.seconds.toFixed(2), created: baselineAfter.created }
  ])
  console.log(`\nconsole upload and import: ${(importSeconds / baseline).toFixed(2)}× the baseline's mean (${baseline.toFixed(2)} s)`)
  console.log(`page's longest main-thread task: ${longTasks.length === 0 ? "none over 50 ms" : `${Math.round(Math.max(...longTasks))} ms`} `
    + `(${longTasks.length} tasks over 50 ms, ${Math.round(longTasks.reduce((sum, d) => sum + d, 0))} ms in all)`)
  console.log(`appliance peak RSS ${Math.round(appliance.peakRssMb())} MB; load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`)
} finally {
  await browser.close()
  await appliance.stop()
  await postgres.stop()
  fs.rmSync(consoleDir, { recursive: true, force: true })
}
