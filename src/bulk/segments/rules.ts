/**
 * Segment rules (spec "Segment rules", issue 19 "Segments"): their schema, one struct per field so
 * that a decode failure names the exact place (`rules.rules[2].op`), and their compilation into
 * one SQL condition over `contacts c` whose every value is a bound parameter (the custom field's
 * name too: `metadata ->> $n`, never spliced into the text).
 */
import type { SqlClient } from "@effect/sql"
import type { Fragment } from "@effect/sql/Statement"
import { Schema } from "effect"
import { StorableString } from "../../lib/text.ts"
import { MAX_DATE_LENGTH } from "../../http/bounds.ts"

/** A literal set whose failure says which values the field takes (the default names only the first). */
const ops = <const L extends ReadonlyArray<string>>(field: string, ...values: L) =>
  Schema.Literal(...values).annotations({ message: () => `${field} takes op ${values.join(", ")}` })

const field = <const F extends string>(name: F) => Schema.Literal(name)

const Text = StorableString.pipe(Schema.minLength(1), Schema.maxLength(500))

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/

/** `2024-05-01` is midnight UTC; a date-time without an offset is read as UTC too. */
export const instantOf = (value: string): Date => {
  if (value.length === 10) return new Date(`${value}T00:00:00Z`)
  return new Date(/(Z|[+-]\d{2}:?\d{2})$/.test(value) ? value : `${value}Z`)
}

/** A real calendar day (Date would roll 2024-02-31 over to March 2). */
const isCalendarDay = (s: string) => {
  const [y, m, d] = s.slice(0, 10).split("-").map(Number) as [number, number, number]
  const day = new Date(Date.UTC(y, m - 1, d))
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d
}

const IsoDate = Schema.String.pipe(
  Schema.maxLength(MAX_DATE_LENGTH),
  Schema.filter((s) => ISO_DATE.test(s) && isCalendarDay(s) && !Number.isNaN(instantOf(s).getTime()), {
    message: () => "must be an ISO 8601 date (2024-05-01) or date-time (2024-05-01T12:00:00Z)"
  })
)

export const TagRule = Schema.Struct({ field: field("tag"), op: ops("tag", "has", "not_has"), value: Text })
export const StatusRule = Schema.Struct({
  field: field("status"),
  op: ops("status", "is", "is_not"),
  value: Schema.Literal("active", "unsubscribed", "bounced", "complained")
    .annotations({ message: () => "a contact status: active, unsubscribed, bounced or complained" })
})
export const EngagementRule = Schema.Struct({
  field: field("engagement"),
  op: ops("engagement", "opened", "not_opened", "clicked", "not_clicked"),
  days: Schema.Int.pipe(Schema.between(1, 90)).annotations({ message: () => "days is required: an integer from 1 to 90" })
})
export const CreatedRule = Schema.Struct({ field: field("created"), op: ops("created", "before", "after"), value: IsoDate })
export const ListRule = Schema.Struct({ field: field("list"), op: ops("list", "in", "not_in"), value: Text.annotations({ description: "A list id of the key" }) })
const FieldName = Text.annotations({ description: "Name of the custom field inside metadata" })
const CUSTOM_COMPARISONS: ReadonlyArray<string> = ["is", "is_not", "contains"]
/** One struct for the five ops, so that a missing field_name is named whatever the op. */
export const CustomRule = Schema.Struct({
  field: field("custom"),
  op: ops("custom", "is", "is_not", "contains", "exists", "not_exists"),
  field_name: FieldName,
  value: Schema.optional(Schema.String.pipe(Schema.maxLength(500))).annotations({ description: "Required with is, is_not, contains" })
}).pipe(Schema.filter((rule) =>
  !CUSTOM_COMPARISONS.includes(rule.op) || rule.value !== undefined || { path: ["value"], message: `value is required with op ${rule.op}` }
))

export const Rule = Schema.Union(TagRule, StatusRule, EngagementRule, CreatedRule, ListRule, CustomRule)
export type Rule = typeof Rule.Type

export const SegmentRules = Schema.Struct({
  match: Schema.Literal("all", "any").annotations({ message: () => "match is all or any" }),
  rules: Schema.Array(Rule).pipe(Schema.maxItems(50))
}).annotations({ identifier: "SegmentRules" })
export type SegmentRules = typeof SegmentRules.Type

/** Where the list rules of a rule set point, with their param paths (checked against the key's lists). */
export const listReferences = (rules: SegmentRules): Array<{ readonly listId: string; readonly param: string }> =>
  rules.rules.flatMap((rule, i) => rule.field === "list" ? [{ listId: rule.value, param: `rules.rules[${i}].value` }] : [])

export interface Scope {
  readonly keyId: string
  /** The moment `engagement` windows end at (the caller's Clock). */
  readonly now: Date
}

const DAY_MS = 86_400_000

/**
 * One rule as a condition over `contacts c`. Negations (`not_has`, `is_not`, `not_in`,
 * `not_opened`…) include contacts without the value: a contact never mailed in the window is not
 * opened, one without the custom field is not `is` anything.
 */
const condition = (sql: SqlClient.SqlClient, scope: Scope, rule: Rule): Fragment => {
  switch (rule.field) {
    case "tag": {
      const has = sql`c.tags @> ARRAY[${rule.value}]::text[]`
      return rule.op === "has" ? has : sql`NOT (${has})`
    }
    case "status":
      return rule.op === "is" ? sql`c.status = ${rule.value}` : sql`c.status <> ${rule.value}`
    case "engagement": {
      const type = rule.op === "opened" || rule.op === "not_opened" ? "opened" : "clicked"
      const since = new Date(scope.now.getTime() - rule.days * DAY_MS)
      // The address's events of this key's campaigns (opens and clicks always carry their key).
      const happened = sql`EXISTS (SELECT 1 FROM contact_engagement e
        WHERE e.account_id = c.account_id AND e.email = lower(c.email) AND e.type = ${type}
          AND e.at >= ${since} AND (e.key_id IS NULL OR e.key_id = ${scope.keyId}))`
      return rule.op === "opened" || rule.op === "clicked" ? happened : sql`NOT ${happened}`
    }
    case "created":
      return rule.op === "before" ? sql`c.created_at < ${instantOf(rule.value)}` : sql`c.created_at > ${instantOf(rule.value)}`
    case "list": {
      const member = sql`EXISTS (SELECT 1 FROM list_memberships m WHERE m.contact_id = c.id AND m.list_id = ${rule.value})`
      return rule.op === "in" ? member : sql`NOT ${member}`
    }
    case "custom":
      switch (rule.op) {
        // The schema requires value with these three ops.
        case "is":
          return sql`(c.metadata ->> ${rule.field_name}) = ${rule.value ?? ""}`
        case "is_not":
          return sql`(c.metadata ->> ${rule.field_name}) IS DISTINCT FROM ${rule.value ?? ""}`
        case "contains":
          // strpos, not LIKE: the value's % and _ are plain characters.
          return sql`strpos(lower(c.metadata ->> ${rule.field_name}), lower(${rule.value ?? ""})) > 0`
        case "exists":
          return sql`(c.metadata -> ${rule.field_name}) IS NOT NULL`
        case "not_exists":
          return sql`(c.metadata -> ${rule.field_name}) IS NULL`
      }
  }
}

/** The rule set as one condition: all → AND, any → OR; no rules match everyone (all) or no one (any). */
export const compileRules = (sql: SqlClient.SqlClient, scope: Scope, rules: SegmentRules): Fragment => {
  if (rules.rules.length === 0) return rules.match === "all" ? sql`TRUE` : sql`FALSE`
  const parts = rules.rules.map((rule) => sql`(${condition(sql, scope, rule)})`)
  return rules.match === "all" ? sql.and(parts) : sql.or(parts)
}
