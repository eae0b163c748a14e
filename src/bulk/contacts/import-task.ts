/**
 * What the import pool's task input says (import-worker.ts): a JSON body has `{ kind: "json" }`, a
 * CSV body `{ kind: "csv", tags }` (the query's `tags`, added to every row as it is gathered). Its
 * own module: the worker reads it without loading the JSON reader.
 */
export const JSON_IMPORT = { kind: "json" } as const

export interface CsvImportTask {
  readonly kind: "csv"
  readonly tags: ReadonlyArray<string>
}

export const csvImportTask = (tags: ReadonlyArray<string>): CsvImportTask => ({ kind: "csv", tags })

export const isJsonImport = (input: unknown) => typeof input === "object" && input !== null && (input as { kind?: unknown }).kind === "json"

/** A CSV task's tags (the pool's input is untyped where it crosses threads). */
export const csvTaskTags = (input: unknown): ReadonlyArray<string> => (input as CsvImportTask).tags
