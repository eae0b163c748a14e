/**
 * Verifies a delivered message's DKIM signature with an independent verifier (mailauth) against
 * the DKIM record the appliance tells the customer to publish, served from that answer alone.
 */
import { dkimVerify } from "mailauth/lib/dkim/verify.js"
import type { Appliance } from "./appliance.ts"

export const verifyDkimAgainstPublished = async (app: Appliance, token: string, domain: string, raw: Buffer) => {
  const view = await app.request("GET", `/v1/client/domains/${domain}`, { token })
  const dkim = view.json.records.find((r: { purpose: string }) => r.purpose === "dkim")
  const verified = await dkimVerify(raw, {
    resolver: async (name, type) => {
      if (type === "TXT" && name === dkim.name) return [[dkim.value]]
      throw Object.assign(new Error("not found"), { code: "ENOTFOUND" })
    }
  })
  return verified.results[0]
}
