/** Destination limits for a test or bench appliance (HERALD_SHAPING_FILE), written where nothing else is. */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** A destination's limits as config/shaping.json writes them. */
export interface ShapingLimits {
  readonly max_connections: number
  readonly messages_per_connection: number
  readonly max_messages_per_minute: number | null
  readonly backoff_seconds?: number
}

/** A shaping file (HERALD_SHAPING_FILE) in a new temporary folder: `defaults` for every destination, and `providers`. */
export const writeShapingFile = (defaults: ShapingLimits, providers: ReadonlyArray<unknown> = []): string => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "herald-shaping-")), "shaping.json")
  fs.writeFileSync(file, JSON.stringify({ default: defaults, providers }))
  return file
}
