/**
 * Starting one worker thread for src/lib/worker-pool.ts, the same way under `tsx`, vitest and Deno
 * (see there), and handing it bytes.
 */
import { createRequire } from "node:module"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { Worker, type WorkerOptions } from "node:worker_threads"

export const isDeno = "Deno" in globalThis

/** tsx's ESM API module (`tsx/esm/api`), resolved from this file. */
const tsxApiUrl = (): string => {
  const loader = createRequire(import.meta.url).resolve("tsx") // …/tsx/dist/loader.mjs
  return pathToFileURL(path.join(path.dirname(loader), "esm", "api", "index.mjs")).href
}

export const newWorker = (file: URL, maxMemoryMb: number | undefined, workerData: unknown): Worker => {
  const limits: WorkerOptions = isDeno || maxMemoryMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: maxMemoryMb } }
  const options: WorkerOptions = workerData === undefined ? limits : { ...limits, workerData }
  if (isDeno || !/\.[cm]?ts$/.test(file.pathname)) return new Worker(file, options)
  // A CommonJS bootstrap: load tsx's API in the worker and import the entry through it.
  const entry = JSON.stringify(file.href)
  const bootstrap = `import(${JSON.stringify(tsxApiUrl())}).then(({ tsImport }) => tsImport(${entry}, ${entry}))`
  return new Worker(bootstrap, { ...options, eval: true })
}

/** The bytes as a view over an ArrayBuffer of their own, ready to transfer (copied only when they share one). */
export const ownBuffer = (bytes: Uint8Array): Uint8Array =>
  bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes)
