/** `herald blocked-domains add|remove|list`: the platform block list of recipient domains. */
import { Command, Options } from "@effect/cli"
import { Effect, Layer } from "effect"
import { isDomainName } from "../lib/email.ts"
import { BlockedDomains, DEFAULT_BLOCK_REASON, normalizeDomain } from "../platform/suppressions/BlockedDomains.ts"
import { CommandLayers } from "./command-layers.ts"
import { operatorCommand, usage } from "./output.ts"

/** `effect` with the block list over the migrated database. */
const withBlockedDomains = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(CommandLayers, (layers) => Effect.provide(effect, BlockedDomains.Default.pipe(Layer.provide(layers.database))))

const domain = Options.text("domain").pipe(Options.withDescription("A recipient domain such as example.com"))

const add = Command.make("add", {
  domain,
  reason: Options.text("reason").pipe(Options.withDefault(DEFAULT_BLOCK_REASON))
}, (args) =>
  operatorCommand(Effect.gen(function*() {
    if (!isDomainName(normalizeDomain(args.domain))) return yield* Effect.fail(usage(`--domain: ${args.domain} is not a domain name`))
    return yield* (yield* BlockedDomains).add(args.domain, args.reason)
  }).pipe(withBlockedDomains))).pipe(
    Command.withDescription("Block a recipient domain: sends to it get item status `rejected`")
  )

const remove = Command.make("remove", { domain }, (args) =>
  operatorCommand(Effect.flatMap(BlockedDomains, (blocked) => blocked.remove(args.domain)).pipe(withBlockedDomains))).pipe(
    Command.withDescription("Unblock a recipient domain")
  )

const list = Command.make("list", {}, () =>
  operatorCommand(Effect.flatMap(BlockedDomains, (blocked) => blocked.list()).pipe(withBlockedDomains))).pipe(
    Command.withDescription("List the blocked recipient domains")
  )

export const blockedDomainsCommand = Command.make("blocked-domains").pipe(Command.withSubcommands([add, remove, list]))
