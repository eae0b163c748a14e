/**
 * The import preview, read off the page's main thread: a Web Worker reads the CSV (a chosen file
 * or pasted rows), takes its email column (csv-emails.ts), folds repeated addresses, asks `POST
 * /v1/bulk/contacts/import-preview` batch by batch and hands back only what the preview shows
 * (counts, the first rows of each kind). A MAX_JSON_MB file (223,000 rows) is read, sent and answered without the
 * page's main thread touching it: the page stays responsive (bench/console-import.ts measures it).
 *
 * The worker is the console's own script started again as a module worker (`import.meta.url`):
 * the CSP allows scripts from the appliance only (`script-src 'self'`, so no blob: worker), and
 * the build makes one script. Loaded in a worker, this module answers the page's message; main.tsx
 * renders nothing there (there is no document). So no console module may touch `window` or
 * `document` when it loads (only inside functions): the worker would stop and the preview with it
 * (test/console/bulk-contacts.test.ts fails then).
 */
import { apiErrorOf, type ImportPreview } from "../../../api/bulk-contacts.ts"
import { type ApiError } from "../../../api/client.ts"
import { CsvEmailScanner, type Duplicate, foldAddresses, type SampleRow } from "./csv-emails.ts"

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

/**
 * Unique addresses per preview request. The API parses at most 200,000 JSON values in one body
 * (src/http/bounded-json.ts MAX_JSON_NODES), fewer than a MAX_JSON_MB CSV's 223,000 rows: the
 * worker folds repeated addresses itself and asks in batches well under that bound.
 */
const PREVIEW_BATCH = 50_000

/** …and at most one value per 16 bytes of body beyond 4,096: a batch of very short entries is padded with spaces (still the same JSON). */
const previewBody = (emails: ReadonlyArray<string>): string => {
  const text = JSON.stringify({ emails })
  const needed = 16 * Math.max(0, emails.length + 2 - 4_096)
  return text.length >= needed ? text : text + " ".repeat(needed - text.length)
}

type Asked = { readonly ok: true; readonly preview: ImportPreview } | { readonly ok: false; readonly status: number; readonly text: string }

const ask = async (emails: ReadonlyArray<string>, csrf: string): Promise<Asked> => {
  const response = await fetch("/v1/bulk/contacts/import-preview", {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "application/json", "x-herald-csrf": csrf },
    body: previewBody(emails.map((email) => email.slice(0, MAX_PREVIEW_ENTRY)))
  })
  const text = await response.text()
  return response.ok ? { ok: true, preview: JSON.parse(text) as ImportPreview } : { ok: false, status: response.status, text }
}

/** In the worker: read, ask the API (batch by batch), answer with the sums. */
const previewInWorker = async ({ csrf, csv }: Request): Promise<Answer> => {
  let scanner: CsvEmailScanner
  try {
    scanner = await readEmails(csv)
  } catch (error) {
    return { kind: "unreadable", message: error instanceof Error ? error.message : "The file could not be read." }
  }
  const folded = foldAddresses(scanner.emails, PREVIEW_LIST_MAX)
  const summary = {
    rows: scanner.emails.length, sample: scanner.sample, uniqueAddresses: 0, invalidCount: 0,
    invalid: [] as Array<PreviewSummary["invalid"][number]>, duplicateCount: folded.duplicateCount, duplicates: folded.duplicates,
    existingCount: 0, existing: [] as Array<string>, validationMin: 0, maxInvalidPct: 0
  }
  for (let start = 0; start < folded.unique.length || start === 0; start += PREVIEW_BATCH) {
    const asked = await ask(folded.unique.slice(start, start + PREVIEW_BATCH), csrf)
    if (!asked.ok) return { kind: "refused", status: asked.status, text: asked.text }
    const { preview } = asked
    summary.uniqueAddresses += preview.total_unique
    summary.invalidCount += preview.invalid_syntax
    for (const entry of preview.invalid) {
      if (summary.invalid.length < PREVIEW_LIST_MAX) {
        summary.invalid.push({ row: folded.uniqueRows[start + entry.index] ?? 0, email: folded.unique[start + entry.index] ?? entry.email, reason: entry.reason })
      }
    }
    summary.existingCount += preview.existing.length
    summary.existing.push(...preview.existing.slice(0, PREVIEW_LIST_MAX - summary.existing.length))
    summary.validationMin = preview.validation_min
    summary.maxInvalidPct = preview.max_invalid_pct
  }
  return { kind: "preview", summary }
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
