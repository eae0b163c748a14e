/**
 * A recipient at the simulator domain whose local part names no scenario (src/lib/simulator.ts) can
 * never be delivered — simulator mail never leaves the appliance — so the send is refused at once
 * (400 validation_failed) rather than accepted and failed later. The field is named as the client
 * wrote it: `personalizations[0].to[1].email` for an object, `to[1]` for an address string, `to`
 * for the flat form's single string.
 */
import { simulatorAddressProblem } from "../lib/simulator.ts"
import type { DecodedRequest } from "./request.ts"

type Listed = ReadonlyArray<{ readonly email: string }> | undefined

const field = (raw: unknown, key: string | number): unknown =>
  typeof raw === "object" && raw !== null ? (raw as Record<string | number, unknown>)[key] : undefined

/** The first recipient of `lists` naming no simulator scenario, with its path under `prefix`. */
const firstProblem = (holder: unknown, lists: Partial<Record<"to" | "cc" | "bcc", Listed>>, prefix: string) => {
  for (const kind of ["to", "cc", "bcc"] as const) {
    const rawList = field(holder, kind)
    for (const [i, address] of (lists[kind] ?? []).entries()) {
      const message = simulatorAddressProblem(address.email)
      if (message === undefined) continue
      const param = typeof rawList === "string"
        ? `${prefix}${kind}`
        : typeof field(rawList, i) === "string"
        ? `${prefix}${kind}[${i}]`
        : `${prefix}${kind}[${i}].email`
      return { param, message: `${param}: ${message}` }
    }
  }
  return null
}

/** `json` is the body as parsed, `decoded` the same body decoded (before canonicalization, so indexes are the client's). */
export const checkSimulatorRecipients = (decoded: DecodedRequest, json: unknown): { param: string; message: string } | null => {
  if (decoded.form === "flat") return firstProblem(json, decoded.body, "")
  for (const [i, p] of decoded.body.personalizations.entries()) {
    const problem = firstProblem(field(field(json, "personalizations"), i), p, `personalizations[${i}].`)
    if (problem !== null) return problem
  }
  return null
}
