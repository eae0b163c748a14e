/** The pure decision behind items[].status of a send. */
import { describe, expect, it } from "vitest"
import { planItems, type Recipient } from "../../src/transactional/plan-items.ts"

const to = (...emails: Array<string>): Array<Recipient> => emails.map((email) => ({ email, kind: "to" }))

const plan = (personalizations: Array<Array<Recipient>>, suppressed: Record<string, string> = {}, blocked: Array<string> = []) =>
  planItems({
    personalizations,
    suppressed: new Map(Object.entries(suppressed)),
    blockedDomains: new Set(blocked),
    maxRecipients: 3
  })

describe("planItems", () => {
  it("queues every deliverable recipient", () => {
    expect(plan([to("a@x.org", "b@x.org")])[0]).toMatchObject({ status: "queued", recipients: to("a@x.org", "b@x.org") })
  })

  it("skips a personalization whose recipients an earlier one already addressed (any case)", () => {
    expect(plan([to("a@x.org"), to("A@X.org")]).map((i) => i.status)).toEqual(["queued", "skipped"])
  })

  it("keeps the new recipients of a partly duplicated personalization", () => {
    expect(plan([to("a@x.org"), to("a@x.org", "c@x.org")])[1]).toMatchObject({ status: "queued", recipients: to("c@x.org") })
  })

  it("fails a personalization over the recipient cap", () => {
    expect(plan([to("a@x.org", "b@x.org", "c@x.org", "d@x.org")])[0]!.status).toBe("failed")
  })

  it("marks suppressed when every recipient is suppressed, and says why", () => {
    const [item] = plan([to("a@x.org")], { "a@x.org": "bounce" })
    expect(item).toMatchObject({ status: "suppressed" })
    expect(item!.error).toContain("bounce")
  })

  it("rejects when every recipient is blocked, or blocked and suppressed", () => {
    expect(plan([to("a@bad.org")], {}, ["bad.org"])[0]!.status).toBe("rejected")
    expect(plan([to("a@bad.org", "b@x.org")], { "b@x.org": "manual" }, ["bad.org"])[0]!.status).toBe("rejected")
  })

  it("queues the others when only some recipients are suppressed or blocked", () => {
    const [item] = plan([to("a@x.org", "b@bad.org", "c@x.org")], { "a@x.org": "complaint" }, ["bad.org"])
    expect(item).toMatchObject({ status: "queued", recipients: to("c@x.org") })
  })
})
