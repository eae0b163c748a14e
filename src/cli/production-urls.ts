/**
 * Start-up's check of the public URLs in production: with HERALD_ENV=production (the image's
 * default) HERALD_BASE_URL and HERALD_TRACK_URL must be https (DESIGN "Public pages"). They go
 * into every unsubscribe, confirmation and tracking link a recipient clicks; over http a network
 * on the way can read or rewrite those tokens. Checked before anything listens or the database
 * opens, so a deployment that forgot them stops at once with one line naming the variable and
 * the two ways out, rather than sending mail with http links. Development (a local trial, the
 * tests) keeps http.
 */
import { Data, Effect } from "effect"
import { AppConfig } from "../config/app-config.ts"

export class InsecurePublicUrl extends Data.TaggedError("InsecurePublicUrl")<{
  readonly message: string
}> {}

export const ensureProductionUrls = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env !== "production") return
  const urls = [
    { name: "HERALD_BASE_URL", value: config.baseUrl },
    { name: "HERALD_TRACK_URL", value: config.trackUrl }
  ]
  const insecure = urls.find((url) => new URL(url.value).protocol !== "https:")
  if (insecure === undefined) return
  return yield* new InsecurePublicUrl({
    message: `herald: HERALD_ENV=production needs https public URLs, and ${insecure.name} is ${insecure.value}; ` +
      `set HERALD_BASE_URL (and HERALD_TRACK_URL if it differs) to https://… addresses, or HERALD_ENV=development for a local trial`
  })
})
