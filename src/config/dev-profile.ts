/**
 * The local trial profile (`npm run dev`, or `HERALD_PROFILE=dev`): what a person trying Herald on
 * a laptop would otherwise have to read the configuration for, so the quick start and double
 * opt-in work as written. It only fills in variables the environment (and `.env`) left unset, so
 * anything set by hand still wins, and it says what it did:
 * - webhooks may reach receivers on this machine (HERALD_WEBHOOK_ALLOW_PRIVATE=true);
 * - a dotted host name (HERALD_HOSTNAME=herald.localhost; `.localhost` is reserved, RFC 6761), so
 *   the records Herald shows are well formed;
 * - a domain the first account adds under a reserved name (`.example`, `.test`, `.invalid`, RFC
 *   2606) is trusted without DNS (src/platform/domains/Domains.ts), since nobody can publish
 *   records for it.
 * It is refused with HERALD_ENV=production: a production appliance never trusts an unproven domain
 * nor posts to private addresses, and the image's default environment is production.
 */

export const DEV_PROFILE = "dev"

/** Names nobody can own (RFC 2606, RFC 6761): safe to trust without DNS in a local trial. */
export const RESERVED_SUFFIXES: ReadonlyArray<string> = [".example", ".test", ".invalid"]

const DEFAULTS: ReadonlyArray<readonly [string, string]> = [
  ["HERALD_WEBHOOK_ALLOW_PRIVATE", "true"],
  ["HERALD_HOSTNAME", "herald.localhost"]
]

export type ProfileOutcome =
  | { readonly _tag: "None" }
  | { readonly _tag: "Refused"; readonly line: string }
  | { readonly _tag: "Applied"; readonly line: string }

/** Applies HERALD_PROFILE to `env` (process.env at start-up, after `.env`): what it set, or why not. */
export const applyProfile = (env: Record<string, string | undefined>): ProfileOutcome => {
  const profile = env.HERALD_PROFILE
  if (profile === undefined || profile === "") return { _tag: "None" }
  if (profile !== DEV_PROFILE) {
    return { _tag: "Refused", line: `herald: HERALD_PROFILE is "${profile}"; the only profile is "${DEV_PROFILE}" (a local trial), or leave it unset` }
  }
  if (env.HERALD_ENV === "production") {
    return {
      _tag: "Refused",
      line: "herald: HERALD_PROFILE=dev is a local trial profile and cannot run with HERALD_ENV=production; " +
        "unset HERALD_PROFILE, or set HERALD_ENV=development for a trial"
    }
  }
  const set = DEFAULTS.filter(([name]) => env[name] === undefined || env[name] === "")
  for (const [name, value] of set) env[name] = value
  const settings = set.length === 0 ? "no variable (all were set)" : set.map(([name, value]) => `${name}=${value}`).join(", ")
  return {
    _tag: "Applied",
    line: `herald: local trial profile (HERALD_PROFILE=dev): set ${settings}; domains the first account adds under ` +
      `${RESERVED_SUFFIXES.join(", ")} are trusted without DNS. Not for production.`
  }
}

/** A domain name under one of the reserved suffixes. */
export const isReservedName = (domain: string): boolean =>
  RESERVED_SUFFIXES.some((suffix) => domain.toLowerCase().endsWith(suffix))
