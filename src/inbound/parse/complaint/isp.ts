/**
 * Naming the reporter of a complaint from config/feedback-isps.json (the rule is spelled out in
 * that file's comment). Two clues exist: the report's From: domain says who mailed the report, the
 * User-Agent says which software or provider generated it. They differ when one service relays
 * another's reports (Amazon SES forwards Yahoo's ARF reports under its own From:) and when one
 * operator runs the loop for many providers (Return Path's ReturnPathFBL for Rackspace).
 */
import * as fs from "node:fs"

export interface Reporter {
  readonly provider: string
  readonly name: string
  readonly domains: ReadonlyArray<string>
  readonly userAgents: ReadonlyArray<string>
  /** It relays other providers' reports under its own From:. */
  readonly forwards: boolean
}

const strings = (value: unknown, where: string): ReadonlyArray<string> => {
  if (value === undefined) return []
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === "string")) {
    throw new Error(`config/feedback-isps.json: ${where} must be a list of strings`)
  }
  return value.map((v) => v.toLowerCase())
}

const text = (value: unknown, where: string): string => {
  if (typeof value !== "string" || value === "") throw new Error(`config/feedback-isps.json: ${where} must be a string`)
  return value
}

/** Validates the file's shape; a broken table should fail at start-up, not per report. */
export const parseReporters = (json: unknown): ReadonlyArray<Reporter> => {
  const list = typeof json === "object" && json !== null ? (json as { reporters?: unknown }).reporters : undefined
  if (!Array.isArray(list)) throw new Error("config/feedback-isps.json: reporters must be a list")
  return list.map((entry: unknown, i): Reporter => {
    if (typeof entry !== "object" || entry === null) throw new Error(`config/feedback-isps.json: reporters[${i}] must be an object`)
    const e = entry as Record<string, unknown>
    return {
      provider: text(e["provider"], `reporters[${i}].provider`),
      name: text(e["name"], `reporters[${i}].name`),
      domains: strings(e["domains"], `reporters[${i}].domains`),
      userAgents: strings(e["user_agents"], `reporters[${i}].user_agents`),
      forwards: e["forwards"] === true
    }
  })
}

export const defaultReporters: ReadonlyArray<Reporter> = parseReporters(
  JSON.parse(fs.readFileSync(new URL("../../../../config/feedback-isps.json", import.meta.url), "utf8"))
)

const byDomain = (domain: string, reporters: ReadonlyArray<Reporter>): Reporter | null => {
  let best: { reporter: Reporter; length: number } | null = null
  for (const reporter of reporters) {
    for (const d of reporter.domains) {
      if ((domain === d || domain.endsWith(`.${d}`)) && (best === null || d.length > best.length)) best = { reporter, length: d.length }
    }
  }
  return best?.reporter ?? null
}

const byUserAgent = (userAgent: string, reporters: ReadonlyArray<Reporter>): Reporter | null => {
  const ua = userAgent.trim().toLowerCase()
  return reporters.find((r) => r.userAgents.some((prefix) => ua.startsWith(prefix))) ?? null
}

/** The reporter's name, from its From: address and User-Agent (both lower-cased or null). */
export const resolveIsp = (
  reporterAddress: string | null,
  userAgent: string | null,
  reporters: ReadonlyArray<Reporter> = defaultReporters
): string => {
  const domain = reporterAddress === null ? null : (reporterAddress.split("@").pop() ?? "").toLowerCase() || null
  const from = domain === null ? null : byDomain(domain, reporters)
  const agent = userAgent === null || userAgent.trim() === "" ? null : byUserAgent(userAgent, reporters)
  if (from !== null && agent !== null) {
    if (from.forwards && agent.provider !== from.provider) return `${agent.name} (forwarded by ${from.name} ${reporterAddress})`
    if (agent.provider === from.provider) return agent.name
  }
  return from?.name ?? agent?.name ?? domain ?? "unknown"
}
