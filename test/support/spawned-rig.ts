/**
 * Spawned appliances (real processes, to be SIGKILLed) on one DNS server, every one stopped when
 * the file ends: the crash tests' rig. Call it at a test file's top level: it registers the hooks.
 */
import { afterAll, beforeAll } from "vitest"
import { type ApplianceProcess, spawnAppliance } from "./appliance.ts"
import { type DnsServer, startDnsServer } from "./dns-server.ts"

export const spawnedRig = (env: Record<string, string>) => {
  let dns: DnsServer | undefined
  const started: Array<ApplianceProcess> = []
  beforeAll(async () => {
    dns = await startDnsServer()
  })
  afterAll(async () => {
    await Promise.all(started.map((p) => p.stop()))
    await dns?.close()
  })
  const dnsServer = () => {
    if (dns === undefined) throw new Error("spawnedRig: the DNS server starts in beforeAll")
    return dns
  }
  /** An appliance on `databaseUrl`; a second one on the same database takes the first's bootstrap key. */
  const spawn = async (databaseUrl: string, bootstrapKey?: string) => {
    const p = await spawnAppliance({ databaseUrl, env: { HERALD_DNS_SERVERS: dnsServer().address, ...env }, ...(bootstrapKey === undefined ? {} : { bootstrapKey }) })
    started.push(p)
    return p
  }
  return { dns: dnsServer, spawn } as const
}
