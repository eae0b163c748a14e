/**
 * The simulator's recipient domain (the first-hour path): addresses under `simulator.herald.invalid`
 * reach no real mailbox (`.invalid` is reserved, RFC 2606), so a sender may try Herald with them
 * before its own domain is verified. Shared by acceptance and the MTA so both agree on what a
 * simulator address is and how it ends.
 *
 * The local part names the scenario: `delivered`, `bounce`, `complaint`, `defer` or `suppressed`,
 * in any case, optionally with a `+tag` (`delivered+42@…`), so one scenario can be told apart per
 * test or per user. Any other local part at the domain names nothing and is refused at acceptance.
 */
import { domainOf } from "./email.ts"

export const SIMULATOR_DOMAIN = "simulator.herald.invalid"

/** The ISP name a simulated complaint reports (`email.complained`). */
export const SIMULATOR_ISP = "simulator"

export const SIMULATOR_SCENARIOS = ["delivered", "bounce", "complaint", "defer", "suppressed"] as const
export type SimulatorScenario = typeof SIMULATOR_SCENARIOS[number]

const SCENARIOS: ReadonlySet<string> = new Set(SIMULATOR_SCENARIOS)

/** Whether `address` is at the simulator domain (any case), whatever its local part: such mail never leaves. */
export const isSimulatorAddress = (address: string): boolean => domainOf(address) === SIMULATOR_DOMAIN

/** The scenario a simulator address names; undefined for an address elsewhere or a local part that names none. */
export const simulatorScenario = (address: string): SimulatorScenario | undefined => {
  if (!isSimulatorAddress(address)) return undefined
  const local = address.slice(0, address.lastIndexOf("@")).toLowerCase()
  const plus = local.indexOf("+")
  const name = plus === -1 ? local : local.slice(0, plus)
  return SCENARIOS.has(name) ? (name as SimulatorScenario) : undefined
}

/** Why an address at the simulator domain cannot be accepted, or undefined when it can (or is elsewhere). */
export const simulatorAddressProblem = (address: string): string | undefined =>
  isSimulatorAddress(address) && simulatorScenario(address) === undefined
    ? `${address} is at the simulator domain ${SIMULATOR_DOMAIN} but names no scenario; use one of ${
      SIMULATOR_SCENARIOS.map((s) => `${s}@${SIMULATOR_DOMAIN}`).join(", ")
    } (a +tag is allowed)`
    : undefined

/** Whether every address of a non-empty list is a simulator address: such a send needs no verified domain. */
export const allSimulatorAddresses = (addresses: ReadonlyArray<string>): boolean =>
  addresses.length > 0 && addresses.every(isSimulatorAddress)

/** How many of `addresses` count against the monthly quota: simulator addresses never do. */
export const quotaCountOf = (addresses: ReadonlyArray<string>): number => addresses.filter((a) => !isSimulatorAddress(a)).length
