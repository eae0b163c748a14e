/**
 * Which pixel loads are machines' rather than a person's (issue 20 "Tracking"): those are recorded
 * with `machine: true`, count in `opens_total` and not in `opens_unique`, and emit no
 * `email.opened`. Decided by the User-Agent alone, as data (`MACHINE_OPENERS`):
 *
 * - Apple Mail Privacy Protection: Apple's proxy fetches every remote image of a message when it
 *   reaches the device, whether or not anyone reads it, and identifies itself only as
 *   `Mozilla/5.0` (no platform, no engine; a real client always says more).
 * - No User-Agent at all: no mail client or browser omits it; scripts and scanners do.
 * - Headless browsers and crawlers (`HeadlessChrome`, `bot`, `crawler`, `spider`): the sandboxes
 *   of mail security gateways open messages in a headless browser at delivery.
 *
 * Deliberately NOT machines: Gmail's `GoogleImageProxy` and Yahoo's `YahooMailProxy`. Both proxy
 * and cache images but fetch them when the recipient opens the message (the cache only hides later
 * re-opens), so counting them as machines would erase most Gmail and Yahoo readers from
 * `opens_unique`. They are listed in `HUMAN_PROXIES` so the choice is visible and tested.
 *
 * No address ranges: Apple's relay egress ranges are large and shared with Private Relay browsing,
 * and behind a reverse proxy the appliance sees the proxy's address, not the opener's.
 */
export interface OpenerRule {
  readonly name: string
  readonly matches: (userAgent: string) => boolean
}

export const MACHINE_OPENERS: ReadonlyArray<OpenerRule> = [
  { name: "Apple Mail Privacy Protection", matches: (ua) => ua === "Mozilla/5.0" },
  { name: "no User-Agent", matches: (ua) => ua === "" },
  { name: "headless browser or crawler", matches: (ua) => /HeadlessChrome|bot\b|crawler|spider/i.test(ua) }
]

/** Image proxies that fetch on the recipient's open: counted as people (see the module comment). */
export const HUMAN_PROXIES: ReadonlyArray<string> = ["GoogleImageProxy", "YahooMailProxy"]

/** The machine rule an open with this User-Agent matches, if any. */
export const machineOpener = (userAgent: string | undefined): string | undefined =>
  MACHINE_OPENERS.find((rule) => rule.matches((userAgent ?? "").trim()))?.name

export const isMachineOpen = (userAgent: string | undefined): boolean => machineOpener(userAgent) !== undefined
