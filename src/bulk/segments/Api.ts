/**
 * /v1/bulk/segments: a preview that evaluates rules and saves nothing, and the saved segments of
 * the calling key (REST conventions of shared/DESIGN.md "Rules shared by the bulk issues").
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { BadRequest, Conflict, NotFound, Unprocessable } from "../../http/errors.ts"
import { SegmentRules } from "./rules.ts"
import { boundedText, IdText, MAX_NAME_LENGTH, queryInt } from "../../http/bounds.ts"

const Name = boundedText(MAX_NAME_LENGTH, { trim: true, minLength: 1 })

export const Segment = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  rules: SegmentRules,
  created_at: Schema.String,
  updated_at: Schema.String
}).annotations({ identifier: "Segment" })

const SegmentCreate = Schema.Struct({ name: Name, rules: SegmentRules })
const SegmentPatch = Schema.Struct({ name: Schema.optional(Name), rules: Schema.optional(SegmentRules) })

const PreviewRequest = Schema.Struct({
  rules: SegmentRules,
  list_id: Schema.optional(IdText.annotations({ description: "Narrows to the members of this list of the key" })),
  limit: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 100)), { default: () => 10 })
    .annotations({ description: "Size of the sample (default 10, at most 100)" })
})

const PreviewResponse = Schema.Struct({
  total: Schema.Int.annotations({ description: "Every matching contact" }),
  sample: Schema.Array(Schema.Struct({ email: Schema.String, name: Schema.NullOr(Schema.String), status: Schema.String })),
  sendable: Schema.Int.annotations({
    description: "How many of total may be mailed: status active, on no suppression list (account or platform), "
      + "and confirmed on list_id when that list requires confirmation"
  })
}).annotations({ identifier: "SegmentPreview" })

const SegmentList = Schema.Struct({ total: Schema.Int, limit: Schema.Int, offset: Schema.Int, items: Schema.Array(Segment) })
const ListParams = Schema.Struct({
  limit: Schema.optionalWith(queryInt(1, 200), { default: () => 50 }),
  offset: Schema.optionalWith(queryInt(0), { default: () => 0 })
})
const Id = Schema.Struct({ id: IdText })

export class SegmentsGroup extends HttpApiGroup.make("segments")
  .add(
    HttpApiEndpoint.post("preview", "/v1/bulk/segments/preview").setPayload(PreviewRequest).addSuccess(PreviewResponse)
      .addError(Unprocessable)
      .annotate(OpenApi.Summary, "Evaluate segment rules without saving them")
      .annotate(OpenApi.Description, "Rules compile to one SQL query with bound parameters. Negated rules (not_has, is_not, not_in, "
        + "not_opened, not_clicked) include contacts without the value: a contact never mailed in the window counts as not opened "
        + "and not clicked. custom: contains ignores case, is does not. An invalid rule → 400 validation_failed naming it "
        + "(rules.rules[2].op); a list rule or list_id naming no list of the key → 400 naming it. A preview that runs longer than "
        + "HERALD_QUERY_TIMEOUT_MS → 422 query_too_expensive, param rules.")
  )
  .add(
    HttpApiEndpoint.post("create", "/v1/bulk/segments").setPayload(SegmentCreate).addSuccess(Segment, { status: 201 })
      .annotate(OpenApi.Summary, "Save segment rules under a name")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/bulk/segments").setUrlParams(ListParams).addSuccess(SegmentList).addError(Unprocessable)
      .annotate(OpenApi.Summary, "List the key's segments")
  )
  .add(
    HttpApiEndpoint.get("read", "/v1/bulk/segments/:id").setPath(Id).addSuccess(Segment)
      .annotate(OpenApi.Summary, "A segment with its rules")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/bulk/segments/:id").setPath(Id).setPayload(SegmentPatch).addSuccess(Segment)
      .annotate(OpenApi.Summary, "Rename a segment or replace its rules")
  )
  .add(
    HttpApiEndpoint.del("remove", "/v1/bulk/segments/:id").setPath(Id)
      .addSuccess(Schema.Struct({ id: Schema.String, deleted: Schema.Literal(true) }).annotations({ examples: [{ id: "sg_2Bc6Df0Gh4Jk8Lm1Np5Q", deleted: true }] }))
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Delete a segment no campaign still needs")
      .annotate(OpenApi.Description, "A segment named by a campaign not yet completed or cancelled → 409 conflict naming the "
        + "campaigns, nothing deleted (cancel the campaign, or change its segment_id while it is a draft). Another key's or an unknown "
        + "segment → 404 not_found. The answer is `{id, deleted: true}`.")
  )
  .addError(NotFound)
  .addError(BadRequest)
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Segments")
{}
