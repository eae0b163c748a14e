/** Support tickets: /v1/tickets for accounts, /v1/admin/tickets for the operator. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { AdminAuthentication } from "../../http/admin-auth.ts"
import { Authentication } from "../../http/auth.ts"
import { Forbidden, NotFound } from "../../http/errors.ts"
import { boundedText, IdText } from "../../http/bounds.ts"

const Status = Schema.Literal("open", "answered", "closed")
const Priority = Schema.Literal("low", "normal", "high", "urgent")
const Text = (max: number) => boundedText(max, { trim: true, minLength: 1 })

export const TicketSummary = Schema.Struct({
  id: Schema.String,
  account_id: Schema.String,
  subject: Schema.String,
  status: Status,
  priority: Priority,
  category: Schema.String,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "TicketSummary" })

export const Ticket = Schema.Struct({
  ...TicketSummary.fields,
  messages: Schema.Array(Schema.Struct({
    id: Schema.String,
    author: Schema.Literal("customer", "support"),
    body: Schema.String,
    created_at: Schema.String
  }))
}).annotations({ identifier: "Ticket" })

const Id = Schema.Struct({ id: IdText })
const TicketList = Schema.Struct({ items: Schema.Array(TicketSummary) })

export class TicketsGroup extends HttpApiGroup.make("tickets")
  .add(
    HttpApiEndpoint.post("open", "/v1/tickets")
      .setPayload(Schema.Struct({
        subject: Text(200),
        body: Text(20_000),
        priority: Schema.optionalWith(Priority, { default: () => "normal" as const }),
        category: Schema.optionalWith(Text(50), { default: () => "general" })
      }))
      .addSuccess(Ticket, { status: 201 })
      .annotate(OpenApi.Summary, "Open a support ticket (priority low|normal|high|urgent, category free text)")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/tickets").addSuccess(TicketList)
      .annotate(OpenApi.Summary, "List the account's support tickets")
  )
  .add(
    HttpApiEndpoint.get("read", "/v1/tickets/:id").setPath(Id).addSuccess(Ticket).addError(NotFound)
      .annotate(OpenApi.Summary, "A ticket with its messages")
  )
  .add(
    HttpApiEndpoint.post("reply", "/v1/tickets/:id/messages")
      .setPath(Id)
      .setPayload(Schema.Struct({ body: Text(20_000) }))
      .addSuccess(Ticket, { status: 201 })
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Add a message to a ticket (reopens it)")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Support tickets")
{}

/** The operator's side of support: every ticket, and answers. */
export class AdminTicketsGroup extends HttpApiGroup.make("adminTickets")
  .add(
    HttpApiEndpoint.get("adminList", "/v1/admin/tickets")
      .setUrlParams(Schema.Struct({ status: Schema.optional(Status) }))
      .addSuccess(TicketList)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "Every account's support tickets (status filter)")
  )
  .add(
    HttpApiEndpoint.get("adminRead", "/v1/admin/tickets/:id").setPath(Id).addSuccess(Ticket).addError(Forbidden).addError(NotFound)
      .annotate(OpenApi.Summary, "Any ticket with its messages")
  )
  .add(
    HttpApiEndpoint.post("adminReply", "/v1/admin/tickets/:id/messages")
      .setPath(Id)
      .setPayload(Schema.Struct({ body: Text(20_000), status: Schema.optional(Status) }))
      .addSuccess(Ticket, { status: 201 })
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "Answer a ticket (status becomes answered unless given)")
  )
  .middleware(AdminAuthentication)
  .annotate(OpenApi.Title, "Admin: support tickets")
{}
