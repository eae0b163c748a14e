/**
 * Where a recipient domain's mail goes (RFC 5321 §5.1): its MX hosts in preference order; no MX
 * record → the domain itself (implicit MX, its A/AAAA); a null MX (RFC 7505: one MX ".") or a
 * domain that does not exist → undeliverable at once.
 */
import { Effect } from "effect"
import { Dns } from "../lib/dns.ts"
import { forbiddenAddress } from "../lib/forbidden-address.ts"

export type Route =
  | { readonly _tag: "hosts"; readonly hosts: ReadonlyArray<string> }
  | { readonly _tag: "undeliverable"; readonly reason: string }
  | { readonly _tag: "dns_failure"; readonly reason: string }

export const resolveRoute = (domain: string) =>
  Effect.gen(function*() {
    const dns = yield* Dns
    return yield* dns.mx(domain).pipe(
      Effect.map((records): Route => {
        if (records.length === 1 && (records[0]!.exchange === "" || records[0]!.exchange === ".")) {
          return { _tag: "undeliverable", reason: `${domain} accepts no mail (null MX, RFC 7505)` }
        }
        const hosts = [...records].sort((a, b) => a.priority - b.priority).map((r) => r.exchange.replace(/\.$/, ""))
        return { _tag: "hosts", hosts }
      }),
      Effect.catchTags({
        DnsNoRecord: (e) =>
          e.code === "ENOTFOUND" || e.code === "NXDOMAIN"
            // NXDOMAIN for MX: the domain does not exist.
            ? Effect.succeed<Route>({ _tag: "undeliverable", reason: `${domain} does not exist (NXDOMAIN)` })
            // No MX but the name exists: the implicit MX is the domain itself, if it has an address.
            : dns.a(domain).pipe(
              Effect.orElse(() => dns.aaaa(domain)),
              Effect.map((): Route => ({ _tag: "hosts", hosts: [domain] })),
              Effect.catchAll(() => Effect.succeed<Route>({ _tag: "undeliverable", reason: `${domain} has no MX and no address` }))
            ),
        DnsFailure: (e) => Effect.succeed<Route>({ _tag: "dns_failure", reason: `DNS lookup of ${domain} failed (${e.code})` })
      })
    )
  })

export interface Target {
  /** The MX host name (for TLS SNI and logs). */
  readonly name: string
  /** The address to connect to, looked up through the configured resolver. */
  readonly address: string
}

/**
 * The addresses of MX hosts, in MX order, through the configured resolver (HERALD_DNS_SERVERS):
 * connecting by name would use the system's resolver instead.
 */
export const resolveTargets = (hosts: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const dns = yield* Dns
    const targets: Array<Target> = []
    for (const name of hosts) {
      if (/^[\d.]+$/.test(name) || name.includes(":")) {
        targets.push({ name, address: name })
        continue
      }
      const v4 = yield* dns.a(name).pipe(Effect.orElseSucceed(() => [] as Array<string>))
      const v6 = v4.length > 0 ? [] : yield* dns.aaaa(name).pipe(Effect.orElseSucceed(() => [] as Array<string>))
      for (const address of [...v4, ...v6]) targets.push({ name, address })
    }
    return targets
  })

/**
 * In production the MTA connects only to public addresses: a recipient domain is chosen by whoever
 * sends, and an MX host on loopback or a private network would make the appliance an SMTP client
 * inside its own network (the same ranges webhooks refuse). Targets on such addresses are left
 * out; `refused` says why, for the error when none is left.
 */
export const publicTargets = (targets: ReadonlyArray<Target>) => {
  const allowed: Array<Target> = []
  const refused: Array<string> = []
  for (const target of targets) {
    const reason = forbiddenAddress(target.address)
    if (reason === null) allowed.push(target)
    else refused.push(`${target.name} → ${reason}`)
  }
  return { allowed, refused }
}
