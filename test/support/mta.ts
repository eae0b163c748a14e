/**
 * An appliance wired to real delivery peers on loopback: a DNS server whose MX records point the
 * recipient domains at an SMTP sink, and HERALD_MX_PORT set to the sink's port.
 */
import type { Appliance } from "./appliance.ts"
import { startAppliance } from "./appliance.ts"
import { type DnsServer, startDnsServer } from "./dns-server.ts"
import { startSmtpSink, type SmtpSink } from "./smtp-sink.ts"

export interface DeliveryRig {
  readonly app: Appliance
  readonly dns: DnsServer
  readonly sink: SmtpSink
  /** Points `domain`'s MX at the sink. */
  readonly route: (domain: string) => void
  readonly stop: () => Promise<void>
}

export const startDeliveryRig = async (env: Record<string, string> = {}, sinkOptions: { delayMs?: number } = {}): Promise<DeliveryRig> => {
  const sink = await startSmtpSink(sinkOptions)
  const dns = await startDnsServer({ "mx.sink.test": { A: ["127.0.0.1"] } })
  const app = await startAppliance({
    env: { HERALD_DNS_SERVERS: dns.address, HERALD_MX_PORT: String(sink.port), HERALD_HOSTNAME: "mta.herald.test", HERALD_MTA_ENABLED: "true", ...env }
  })
  return {
    app,
    dns,
    sink,
    route: (domain) => dns.set(domain, { MX: [{ preference: 10, exchange: "mx.sink.test" }] }),
    stop: async () => {
      await app.stop()
      await sink.close()
      await dns.close()
    }
  }
}

