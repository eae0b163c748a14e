/**
 * DMARC aggregate reports received for the account's domains: /v1/client/dmarc/reports. Needs the
 * `dmarc` feature of the plan (403 feature_not_enabled without it). Pages are numbered from 1;
 * `per_page` (an addition; the spec leaves the size open) defaults to 50, at most 100. `from` and
 * `to` (epoch seconds) keep the reports whose period overlaps them.
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Forbidden, NotFound } from "../../http/errors.ts"
import { QueryText, queryInt } from "../../http/bounds.ts"

const EpochSeconds = queryInt(0)

export const DmarcReportItem = Schema.Struct({
  id: Schema.Int,
  domain: Schema.String,
  org_name: Schema.String,
  report_id: Schema.String,
  date_begin: Schema.Int.annotations({ description: "Epoch seconds" }),
  date_end: Schema.Int.annotations({ description: "Epoch seconds" }),
  policy_p: Schema.String.annotations({ description: "none, quarantine or reject" })
}).annotations({ identifier: "DmarcReportItem" })

export const DmarcRecord = Schema.Struct({
  source_ip: Schema.String,
  count: Schema.Int,
  disposition: Schema.NullOr(Schema.String),
  dkim: Schema.NullOr(Schema.String).annotations({ description: "Policy-evaluated DKIM: pass or fail" }),
  spf: Schema.NullOr(Schema.String).annotations({ description: "Policy-evaluated SPF: pass or fail" }),
  header_from: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DmarcRecord" })

export const DmarcReportDetail = Schema.Struct({
  ...DmarcReportItem.fields,
  messages: Schema.Int.annotations({ description: "Sum of the records' counts" }),
  received_at: Schema.String,
  records: Schema.Array(DmarcRecord)
}).annotations({ identifier: "DmarcReport" })

export class DmarcGroup extends HttpApiGroup.make("dmarc")
  .add(
    HttpApiEndpoint.get("list", "/v1/client/dmarc/reports")
      .setUrlParams(Schema.Struct({
        page: Schema.optionalWith(queryInt(1), { default: () => 1 }),
        per_page: Schema.optionalWith(queryInt(1, 100), { default: () => 50 }),
        from: Schema.optional(EpochSeconds),
        to: Schema.optional(EpochSeconds),
        domain: Schema.optional(QueryText)
      }))
      .addSuccess(Schema.Struct({
        page: Schema.Int,
        per_page: Schema.Int,
        total: Schema.Int,
        items: Schema.Array(DmarcReportItem)
      }))
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "DMARC aggregate reports for the account's domains, newest first")
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/client/dmarc/reports/:id")
      .setPath(Schema.Struct({ id: queryInt(0) }))
      .addSuccess(DmarcReportDetail)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(OpenApi.Summary, "One DMARC aggregate report with its records")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "DMARC reports")
{}
