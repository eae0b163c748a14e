/**
 * The simulator's recipient domain (the first-hour path): addresses under `simulator.herald.invalid`
 * reach no real mailbox (`.invalid` is reserved, RFC 2606), so a sender may try Herald with them
 * before its own domain is verified. Shared by acceptance and the MTA so both agree on what a
 * simulator address is.
 */
import { domainOf } from "./email.ts"

export const SIMULATOR_DOMAIN = "simulator.herald.invalid"

/** Whether `address` is a simulator recipient (any case). */
export const isSimulatorAddress = (address: string): boolean => domainOf(address) === SIMULATOR_DOMAIN
