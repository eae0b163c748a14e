/**
 * The import preview, read off the page's main thread: a Web Worker reads the CSV (a chosen file
 * or pasted rows), takes its email column (csv-emails.ts), asks `POST
 * /v1/bulk/contacts/import-preview` and hands back only what the preview shows (counts, the first
 * rows of each kind). A MAX_JSON_MB file (223,000 rows) is read, sent and answered without the
 * page's main thread touching it: the page stays responsive (bench/console-import.ts measures it).
 *
 * The worker is the console's own script started again as a module worker (`import.meta.url`):
 * the CSP allows scripts from the appliance only (`script-src 'self'`, so no blob: worker), and
 * the build makes one script. Loaded in a worker, this module answers the page's message; main.tsx
 * renders nothing there (there is no document).
 */
import { apiErrorOf, type ImportPreview } from "../../../api/bulk-contacts.ts"
import { type ApiError } from "../../../api/client.ts"
import { CsvEmailScanner, type Duplicate, duplicatesOf, type SampleRow } from "./csv-emails.ts"

/** Rows of each kind (invalid, duplicate, existing) the preview lists; the rest are counted. */
export const PREVIEW_LIST_MAX = 100

/** The preview route's bound on one entry (MAX_LINE_LENGTH); a longer cell is invalid anyway. */
const MAX_PREVIEW_ENTRY = 998

export interface PreviewSummary {
  /** Data rows read. */
  readonly rows: number
  readonly sample: ReadonlyArray<SampleRow>
  readonly uniqueAddresses: number
  readonly invalidCount: number
  /** The API's first invalid entries with their reason (`row` counts data rows from 1). */
  readonly invalid: ReadonlyArray<{ readonly row: number; readonly email: string; readonly reason: string }>
  readonly duplicateCount: number
  readonly duplicates: ReadonlyArray<Duplicate>
  readonly existingCount: number
  readonly existing: ReadonlyArray<string>
  readonly validationMin: number
  readonly maxInvalidPct: number
}

type Request = { readonly csv: Blob; readonly csrf: string }

type Answer =
  | { readonly kind: "preview"; readonly summary: PreviewSummary }
  | { readonly kind: "refused"; readonly status: number; readonly text: string }
  | { readonly kind: "unreadable"; readonly message: string }

const readEmails = async (csv: Blob): Promise<CsvEmailScanner> => {
  const scanner = new CsvEmailScanner()
  const reader = csv.stream().pipeThrough(new TextDecoderStream()).getReader()
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    scanner.push(value)
  }
  scanner.end()
  return scanner
}

const summaryOf = (scanner: CsvEmailScanner, preview: ImportPreview): PreviewSummary => {
  const duplicates = duplicatesOf(scanner.emails, PREVIEW_LIST_MAX)
  return {
    rows: scanner.emails.length,
    sample: scanner.sample,
    uniqueAddresses: preview.total_unique,
    invalidCount: preview.invalid_syntax,
    invalid: (preview.invalid ?? []).map((entry) => ({ row: entry.index + 1, email: scanner.emails[entry.index] ?? entry.email, reason: entry.reason })),
    duplicateCount: duplicates.count,
    duplicates: duplicates.first,
    existingCount: preview.existing.length,
    existing: preview.existing.slice(0, PREVIEW_LIST_MAX),
    validationMin: preview.validation_min,
    maxInvalidPct: preview.max_invalid_pct
  }
}

/** In the worker: read, ask the API, answer. */
const previewInWorker = async ({ csrf, csv }: Request): Promise<Answer> => {
  let scanner: CsvEmailScanner
  try {
    scanner = await readEmails(csv)
  } catch (error) {
    return { kind: "unreadable", message: error instanceof Error ? error.message : "The file could not be read." }
  }
  const response = await fetch("/v1/bulk/contacts/import-preview", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "application/json", "x-herald-csrf": csrf },
    body: JSON.stringify({ emails: scanner.emails.map((email) => email.slice(0, MAX_PREVIEW_ENTRY)) })
  })
  const text = await response.text()
  if (!response.ok) return { kind: "refused", status: response.status, text }
  return { kind: "preview", summary: summaryOf(scanner, JSON.parse(text) as ImportPreview) }
}

interface WorkerScope {
  onmessage: ((event: MessageEvent<Request>) => void) | null
  postMessage: (answer: Answer) => void
}

// Loaded as the worker: answer each request. (In the page `document` exists and this does nothing.)
if (typeof document === "undefined" && typeof self !== "undefined") {
  const scope = self as unknown as WorkerScope
  scope.onmessage = (event) => {
    previewInWorker(event.data).then(
      (answer) => scope.postMessage(answer),
      (error: unknown) => scope.postMessage({ kind: "unreadable", message: error instanceof Error ? error.message : "The preview failed." })
    )
  }
}

/** In the page: the preview of `csv`, read by a worker; the API's refusal as an ApiError. */
export const previewCsv = (csv: Blob, csrf: string): Promise<PreviewSummary> =>
  new Promise((resolve, reject) => {
    const worker = new Worker(import.meta.url, { type: "module" })
    const finish = () => worker.terminate()
    worker.onmessage = (event: MessageEvent<Answer>) => {
      finish()
      const answer = event.data
      if (answer.kind === "preview") resolve(answer.summary)
      else if (answer.kind === "refused") reject(apiErrorOf(answer.status, answer.text) satisfies ApiError)
      else reject(new Error(answer.message))
    }
    worker.onerror = () => {
      finish()
      reject(new Error("The file could not be read: the preview's worker stopped."))
    }
    worker.postMessage({ csv, csrf } satisfies Request)
  })
