/** API keys of the calling account: /v1/client/keys. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../../http/auth.ts"
import { Conflict, Forbidden, NotFound } from "../../http/errors.ts"
import { storable } from "../../lib/text.ts"
import { boundedText, IdText, MAX_URL_LENGTH } from "../../http/bounds.ts"

/** Spaces around a label that trimming removes: a label of 100 characters may come padded. */
const MAX_LABEL_PADDING = 100

export const KeyId = Schema.Struct({ id: IdText })

const LABEL_TOO_LONG = { message: () => "label must be at most 100 characters" }
// The length is checked on what was sent (so the documents show it) and on what is kept after trimming.
export const Label = storable(Schema.compose(Schema.String.pipe(Schema.maxLength(100 + MAX_LABEL_PADDING, LABEL_TOO_LONG)), Schema.Trim).pipe(
  Schema.minLength(1, { message: () => "label is required and must not be empty" }),
  Schema.maxLength(100, LABEL_TOO_LONG)
))

export const CreateKeyRequest = Schema.Struct({ label: Label }).annotations({ identifier: "CreateKeyRequest" })

export const CreatedKey = Schema.Struct({
  id: Schema.String.annotations({ description: "Key id; the `app` of sends and events" }),
  label: Schema.String,
  token: Schema.String.annotations({ description: "The secret token, shown only in this response" }),
  created_at: Schema.String
}).annotations({ identifier: "CreatedKey" })
export type CreatedKey = typeof CreatedKey.Type

export const KeyView = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  token_hint: Schema.String.annotations({ description: "Last four characters of the token" }),
  webhook_url: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  last_used_at: Schema.NullOr(Schema.String)
}).annotations({ identifier: "Key" })
export type KeyView = typeof KeyView.Type

/** A webhook secret of your own: at least 16 characters (HMAC keys need entropy), at most 256. */
export const WebhookSecret = Schema.String.pipe(
  Schema.minLength(16, { message: () => "webhook_secret must be at least 16 characters" }),
  Schema.maxLength(256, { message: () => "webhook_secret must be at most 256 characters" })
)

export const UpdateKeyRequest = Schema.Struct({
  label: Label,
  webhook_url: Schema.optional(Schema.NullOr(boundedText(MAX_URL_LENGTH))),
  webhook_secret: Schema.optional(Schema.NullOr(WebhookSecret)).annotations({
    description: "16–256 characters; omitted or null with a new webhook_url: one is generated"
  })
}).annotations({ identifier: "UpdateKeyRequest" })

export const UpdatedKey = Schema.Struct({
  id: Schema.String,
  label: Schema.String,
  webhook_secret: Schema.optional(Schema.String).annotations({
    description: "Only when this call set a webhook_url and generated its secret: shown here once"
  })
}).annotations({ identifier: "UpdatedKey" })

export const RevokedKey = Schema.Struct({ id: Schema.String, revoked: Schema.Literal(true) })

export class KeysGroup extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.post("create", "/v1/client/keys")
      .setPayload(CreateKeyRequest)
      .addSuccess(CreatedKey, { status: 201 })
      .addError(Conflict)
      .annotate(OpenApi.Summary, "Create a key; its token is shown only in this response")
  )
  .add(
    HttpApiEndpoint.get("list", "/v1/client/keys")
      .addSuccess(Schema.Struct({ items: Schema.Array(KeyView) }).annotations({
        examples: [{
          items: [{
            id: "key_4kR2vX9mQ1sT7wZ0aB3c",
            label: "production",
            token_hint: "x7Qa",
            webhook_url: "https://hooks.example.org/herald",
            created_at: "2026-01-05T09:30:00.000Z",
            last_used_at: "2026-01-06T12:04:11.000Z"
          }]
        }]
      }))
      .annotate(OpenApi.Summary, "List the account's active keys (no tokens, no secrets)")
  )
  .add(
    HttpApiEndpoint.get("get", "/v1/client/keys/:id")
      .setPath(KeyId)
      .addSuccess(KeyView)
      .addError(NotFound)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "One key of the account (no token, no secret)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/v1/client/keys/:id")
      .setPath(KeyId)
      .setPayload(UpdateKeyRequest)
      .addSuccess(UpdatedKey)
      .addError(NotFound)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "Rename a key (label required); also sets webhook_url / webhook_secret")
  )
  .add(
    HttpApiEndpoint.del("revoke", "/v1/client/keys/:id")
      .setPath(KeyId)
      .addSuccess(RevokedKey)
      .addError(NotFound)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "Revoke a key: its token stops working at once")
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "API keys")
{}
