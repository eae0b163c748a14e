/**
 * Which code to report when a DSN's `Status:` field and the remote server's words in its
 * `Diagnostic-Code:` disagree. Reporting MTAs often write a generic Status (5.0.0, 4.0.0, Postfix's
 * 4.4.7 "delivery time expired", Sendmail's 5.1.1 for any RCPT rejection, 5.3.0 "other mail system
 * problem") while the remote server's reply beside it carries its own precise code ("550 5.7.1 IP
 * address blacklisted", "452 4.4.5 Insufficient disk space"). The remote's code is the one that says
 * what happened; the same preference sisimai applies (Sisimai::SMTP::Status "prefer").
 */
import { enhancedAll, replyCodeIn } from "./status.ts"

/* Codes that say little on their own: "other or undefined" and "delivery time expired". */
const vague = (code: string) => /^\d\.0\.0$/.test(code) || code === "4.4.7"

/** The remote server's own code in a diagnostic: the first that is not a vague one, else a vague one. */
export const remoteCodeIn = (diagnostic: string): string | null => {
  const codes = enhancedAll(diagnostic)
  return codes.find((c) => !vague(c)) ?? codes[0] ?? null
}

const hasZeroPart = (code: string) => code.includes(".0")

/**
 * The status to report for a DSN recipient whose Status field says `stated` and whose diagnostic
 * says `diagnostic`. The class follows the reply code where the two codes differ in class.
 */
export const preferredStatus = (stated: string, diagnostic: string): string => {
  const remote = remoteCodeIn(diagnostic)
  if (remote === null || remote === stated) return stated
  const reply = replyCodeIn(diagnostic)
  if (reply !== null && stated[0] !== remote[0]) {
    if (reply[0] === stated[0]) return stated
    if (reply[0] === remote[0]) return remote
  }
  if (/^\d\.0\.0$/.test(stated)) return vague(remote) ? stated : remote
  if (hasZeroPart(stated) && !hasZeroPart(remote)) return remote
  if (/^\d\.0\.0$/.test(remote)) return stated
  if (stated === "4.4.7" || stated.startsWith("5.3.")) return remote
  if (stated === "5.1.1") return hasZeroPart(remote) ? stated : remote
  if (stated === "5.1.3" && remote.startsWith("5.7.")) return remote
  return stated
}
