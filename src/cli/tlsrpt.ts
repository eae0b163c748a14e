/**
 * `herald tlsrpt dkim-record`: the DNS record of the appliance's TLS-RPT DKIM key (made now if no
 * replica has made it yet), to publish under the reports' From domain (HERALD_TLSRPT_FROM, else
 * tlsrpt@<HERALD_BOUNCE_DOMAIN>): receivers check the reports' signature against it (RFC 8460 §5.3).
 */
import { Command } from "@effect/cli"
import { Config, Effect, Option } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { tlsRptDkimRecord, tlsRptFrom, tlsRptKeyPem } from "../mta/tls-rpt/appliance-key.ts"
import { withDatabase } from "./command-layers.ts"
import { operatorCommand } from "./output.ts"

const dkimRecord = Command.make("dkim-record", {}, () =>
  operatorCommand(Effect.gen(function*() {
    const config = yield* AppConfig
    const configured = Option.getOrUndefined(yield* Config.option(Config.string("HERALD_TLSRPT_FROM")))
    const from = tlsRptFrom(configured, config.bounceDomain)
    const pem = yield* tlsRptKeyPem
    return { from, ...tlsRptDkimRecord(from.slice(from.lastIndexOf("@") + 1), pem) }
  }).pipe(withDatabase))).pipe(
    Command.withDescription("Print the DNS TXT record of the DKIM key that signs the appliance's TLS-RPT reports")
  )

export const tlsRptCommand = Command.make("tlsrpt").pipe(Command.withSubcommands([dkimRecord]))
