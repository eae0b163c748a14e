/** `herald blocked-domains add|remove|list`: the platform block list of recipient domains. */
import { Command, Options } from "@effect/cli"
import { Effect, Layer } from "effect"
import { DatabaseReadyLive } from "../appliance.ts"
import { isDomainName } from "../lib/email.ts"
import { BlockedDomains, DEFAULT_BLOCK_REASON, normalizeDomain } from "../platform/suppressions/BlockedDomains.ts"
import { operatorCommand, usage } from "./output.ts"

const BlockedDomainsLive = BlockedDomains.Default.pipe(Layer.provide(DatabaseReadyLive))

const domain = Options.text("domain").pipe(Options.withDescription("A recipient domain such as example.com"))

const add = Command.make("add", {
  domain,
  reason: Options.text("reason").pipe(Options.withDefault(DEFAULT_BLOCK_REASON))
}, (args) =>
  operatorCommand(Effect.gen(function*() {
    if (!isDomainName(normalizeDomain(args.domain))) return yield* Effect.fail(usage(`--domain: ${args.domain} is not a domain name`))
    return yield* (yield* BlockedDomains).add(args.domain, args.reason)
  }).pipe(Effect.provide(BlockedDomainsLive)))).pipe(
    Command.withDescription("Block a recipient domain: sends to it get item status `rejected`")
  )

const remove = Command.make("remove", { domain }, (args) =>
  operatorCommand(Effect.flatMap(BlockedDomains, (blocked) => blocked.remove(args.domain)).pipe(
    Effect.provide(BlockedDomainsLive)
  ))).pipe(Command.withDescription("Unblock a recipient domain"))

const list = Command.make("list", {}, () =>
  operatorCommand(Effect.flatMap(BlockedDomains, (blocked) => blocked.list()).pipe(Effect.provide(BlockedDomainsLive)))).pipe(
    Command.withDescription("List the blocked recipient domains")
  )

export const blockedDomainsCommand = Command.make("blocked-domains").pipe(Command.withSubcommands([add, remove, list]))
