/**
 * What scripts/build-console.ts writes beside the console's files and the appliance reads to
 * know which files it may serve (src/api/console/static.ts serves nothing else).
 */
import * as path from "node:path"

export const MANIFEST_NAME = "manifest.json"

/** Where `npm run build:console` writes the console: dist/console/ at the repository's root. */
export const DEFAULT_CONSOLE_DIR = path.resolve(import.meta.dirname, "../../../dist/console")

export interface ConsoleManifest {
  /** The page every /console/ path that is not an asset answers with. */
  readonly index: string
  /** Each asset's name (also its URL below /console/), its content type and whether a .gz copy exists. */
  readonly assets: ReadonlyArray<{ readonly name: string; readonly contentType: string; readonly gzip: boolean }>
}
