/**
 * What the import pool's task input says (import-worker.ts): a JSON body has `{ kind: "json" }`, a
 * CSV body none. Its own module: the worker reads it without loading the JSON reader.
 */
export const JSON_IMPORT = { kind: "json" } as const

export const isJsonImport = (input: unknown) => typeof input === "object" && input !== null && (input as { kind?: unknown }).kind === "json"
