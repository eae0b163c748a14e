/** The closed event vocabulary: what can be written to the outbox, and which outcome emits what. */
import { Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { type OutboxEntry, outboxRow } from "../../src/events/outbox.ts"
import { type DeliveryFacts, OUTCOME_EVENTS, type OutcomeFacts, outcomeEvent } from "../../src/events/outcomes.ts"
import { EmailSent, EVENT_NAMES, EXAMPLES, HeraldEvent } from "../../src/events/schema.ts"

describe("event vocabulary", () => {
  it("names exactly the spec's eighteen events", () => {
    expect(EVENT_NAMES).toEqual([
      "email.sent", "email.failed", "email.opened", "email.clicked", "email.bounced", "email.complained",
      "contact.unsubscribed", "contact.confirmed", "campaign.email.sent", "campaign.email.failed", "campaign.completed",
      "sequence.subscribed", "sequence.step.sent", "sequence.step.failed", "sequence.completed", "sequence.cancelled",
      "dmarc.alignment_failure", "webhook.test"
    ])
  })

  it("refuses an unknown name or a missing field, at compile time and when decoding", () => {
    const at = new Date()
    const entry = (event: OutboxEntry["event"]): OutboxEntry => ({ accountId: "acc", keyId: "key", at, event })
    // @ts-expect-error a misspelt event name does not compile
    entry({ event: "email.snet", request_id: "r", to: [], subject: "s", message_id: "m" })
    // @ts-expect-error a missing field (message_id) does not compile
    entry({ event: "email.sent", request_id: "r", to: [], subject: "s" })
    // @ts-expect-error the constructor wants every field too, and checks them when it runs
    expect(() => EmailSent.make({ request_id: "r", to: [], subject: "s" })).toThrow(/message_id/)
    const decode = Schema.decodeUnknownEither(HeraldEvent)
    expect(Either.isLeft(decode({ event: "email.snet", request_id: "r", to: [], subject: "s", message_id: "m" }))).toBe(true)
    expect(Either.isLeft(decode({ event: "email.sent", request_id: "r", to: [], subject: "s" }))).toBe(true)
    expect(Either.isRight(decode({ event: "email.sent", request_id: "r", to: [], subject: "s", message_id: "m" }))).toBe(true)
  })

  it("stores the event's own fields as the payload, in the outbox row beside its name", () => {
    for (const name of EVENT_NAMES) {
      const event = Schema.decodeUnknownSync(HeraldEvent)({ event: name, ...EXAMPLES[name] })
      expect(outboxRow(event)).toEqual({ event: name, payload: EXAMPLES[name] })
    }
  })
})

describe("outcome events by origin", () => {
  const base = { recipient: "ada@example.com", message_id: "msg_1", subject: "Hello" }
  const deliveries: ReadonlyArray<DeliveryFacts> = [
    { ...base, origin: "transactional", request_id: "req_1" },
    { ...base, origin: "campaign", campaign_id: "cp_1" },
    { ...base, origin: "sequence", sequence_id: "sq_1" },
    { ...base, origin: "confirmation" },
    { ...base, origin: "test_send" },
    { ...base, origin: "system" }
  ]
  const outcomes: ReadonlyArray<OutcomeFacts> = [
    { _tag: "sent" },
    { _tag: "failed", error: "retries exhausted" },
    { _tag: "bounced", status: "5.1.1", category: "hard", diagnostic: "550 5.1.1 unknown" },
    { _tag: "complained", isp: "Yahoo", subject: null }
  ]

  it("emits what the table says for every origin and outcome, and a valid event", () => {
    for (const d of deliveries) {
      for (const o of outcomes) {
        const event = outcomeEvent(d, o)
        expect(event?.event ?? null).toBe(OUTCOME_EVENTS[d.origin][o._tag])
        if (event !== null) expect(Either.isRight(Schema.decodeUnknownEither(HeraldEvent)(event))).toBe(true)
      }
    }
  })

  it("keeps bulk mail off email.sent and email.failed, and carries each origin's id", () => {
    expect(outcomeEvent(deliveries[1]!, { _tag: "failed", error: "x" })).toEqual({ event: "campaign.email.failed", email: base.recipient, campaign_id: "cp_1", error: "x" })
    expect(outcomeEvent(deliveries[2]!, { _tag: "sent" })).toEqual({ event: "sequence.step.sent", email: base.recipient, campaign_id: "sq_1" })
    expect(outcomeEvent(deliveries[0]!, { _tag: "sent" })).toEqual({ event: "email.sent", request_id: "req_1", to: [base.recipient], subject: "Hello", message_id: "msg_1" })
  })
})
