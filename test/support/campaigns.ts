/**
 * A bulk backlog made the way an operator makes one: a list of `emails` and a campaign to it,
 * sent — the campaigns actor's fan-out then queues one bulk delivery per contact.
 */
import { expect } from "vitest"
import type { Appliance } from "./appliance.ts"
import type { Sender } from "./sending.ts"

export const sendCampaignTo = async (app: Appliance, sender: Sender, emails: ReadonlyArray<string>): Promise<string> => {
  const api = (method: string, route: string, body?: unknown) =>
    app.request(method, route, { token: sender.token, ...(body === undefined ? {} : { body }) })
  const list = await api("POST", "/v1/bulk/lists", { name: "newsletter" })
  for (let i = 0; i < emails.length; i += 1000) {
    expect((await api("POST", `/v1/bulk/lists/${list.json.id}/contacts`, { contacts: emails.slice(i, i + 1000) })).status).toBe(200)
  }
  const campaign = await api("POST", "/v1/bulk/campaigns", {
    name: "Newsletter",
    from_email: sender.from,
    subject: "Newsletter",
    body_text: "Bulk body",
    list_ids: [list.json.id]
  })
  expect(campaign.status).toBe(201)
  expect((await api("POST", `/v1/bulk/campaigns/${campaign.json.id}/send`)).status).toBe(200)
  return String(campaign.json.id)
}
