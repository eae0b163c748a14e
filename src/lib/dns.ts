/**
 * Every DNS lookup the appliance makes (TXT verification, MX routing, webhook host checks) goes
 * through this resolver: `HERALD_DNS_SERVERS` (comma-separated `ip[:port]`) when set, else the
 * system's. Tests and staging point it at a DNS server on loopback. The composition root gives it
 * the servers (`Dns.layer`), so the floor reads no configuration of its own.
 */
import { Resolver } from "node:dns/promises"
import { Context, Data, Effect, Layer } from "effect"

/** The name has no such record (NXDOMAIN or NODATA): an answer, not a failure. */
export class DnsNoRecord extends Data.TaggedError("DnsNoRecord")<{ readonly name: string; readonly code: string }> {}
/** The lookup itself failed (timeout, SERVFAIL, refused): try again later. */
export class DnsFailure extends Data.TaggedError("DnsFailure")<{ readonly name: string; readonly code: string }> {}

const NO_RECORD = new Set(["ENOTFOUND", "ENODATA", "NXDOMAIN", "ENONAME"])

export const makeResolver = (servers: ReadonlyArray<string>): Resolver => {
  const resolver = new Resolver({ timeout: 3_000, tries: 2 })
  if (servers.length > 0) resolver.setServers([...servers])
  return resolver
}

const lookup = <A>(name: string, run: () => Promise<A>) =>
  Effect.tryPromise({
    try: run,
    catch: (error) => {
      const code = typeof error === "object" && error !== null && "code" in error ? String(error.code) : "EUNKNOWN"
      return NO_RECORD.has(code) ? new DnsNoRecord({ name, code }) : new DnsFailure({ name, code })
    }
  })

const makeDns = (servers: ReadonlyArray<string>) => {
  const resolver = makeResolver(servers)
  return {
    resolver,
    txt: (name: string) =>
      lookup(name, () => resolver.resolveTxt(name)).pipe(Effect.map((records) => records.map((chunks) => chunks.join("")))),
    mx: (name: string) => lookup(name, () => resolver.resolveMx(name)),
    a: (name: string) => lookup(name, () => resolver.resolve4(name)),
    aaaa: (name: string) => lookup(name, () => resolver.resolve6(name))
  }
}

/** The lookups, as a value (what `yield* Dns` gives). */
export type DnsResolver = ReturnType<typeof makeDns>

export class Dns extends Context.Tag("herald/Dns")<Dns, DnsResolver>() {
  /** The resolver over `servers` (`ip[:port]`; empty: the system's). */
  static readonly layer = (servers: ReadonlyArray<string>) => Layer.sync(Dns, () => makeDns(servers))
}
