/** `herald domains trust`: an operator vouches for an account's domain without a DNS check. */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { Accounts } from "../platform/accounts/Accounts.ts"
import { Domains } from "../platform/domains/Domains.ts"
import { withServices } from "./command-layers.ts"
import { operatorCommand } from "./output.ts"

const trust = Command.make("trust", {
  account: Options.text("account").pipe(Options.withDescription("The account's id (acc_…)")),
  domain: Options.text("domain").pipe(Options.withDescription("A domain the account has registered"))
}, (args) =>
  operatorCommand(Effect.gen(function*() {
    yield* (yield* Accounts).get(args.account)
    return yield* (yield* Domains).trust(args.account, args.domain)
  }).pipe(withServices))).pipe(
    Command.withDescription(
      "Mark a registered domain verified without DNS (verified_by: operator): it may send and is not re-checked"
    )
  )

export const domainsCommand = Command.make("domains").pipe(Command.withSubcommands([trust]))
