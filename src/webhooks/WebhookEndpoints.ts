/**
 * A key's webhook endpoint: its URL, its signing secret, and the check a URL passes before it is
 * stored. The one writer of `api_keys.webhook_url` / `webhook_secret` (a key is created without
 * them, src/platform/keys/ApiKeys.ts).
 *
 * The dependency goes one way, keys → webhooks: the keys API (PATCH /v1/client/keys/{id}) sets a
 * URL and secret through here, by the port it declares (src/platform/keys/key-webhook.ts, which
 * src/appliance.ts fills with `configure`), and nothing in src/webhooks/ imports src/platform/keys/.
 * It is this way round because what a URL must pass (the SSRF policy, the same check every attempt
 * makes, WebhookSender.ts) and the secret's form (secret.ts) are the webhook sender's, and the keys
 * API only carries the fields. The ownership of an endpoint (its key, of this account, not revoked) is
 * read here in the same statement as its URL and secret.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import { generateWebhookSecret, maskSecret } from "./secret.ts"
import { WebhookSender } from "./WebhookSender.ts"

/** No active key of that id (the API answers 404). */
export class EndpointNotFound extends Data.TaggedError("EndpointNotFound")<{ readonly id: string }> {}
/** The key belongs to another account (the API answers 403, as for keys). */
export class EndpointNotYours extends Data.TaggedError("EndpointNotYours")<{ readonly id: string }> {}
/** The URL fails the webhook URL check (the API answers 400 validation_failed on webhook_url). */
export class WebhookUrlRefused extends Data.TaggedError("WebhookUrlRefused")<{ readonly reason: string }> {}

/** A key's endpoint: `id` is the key's id. */
export interface Endpoint {
  readonly id: string
  readonly webhook_url: string | null
  readonly webhook_secret: string | null
}

/** What the API shows of an endpoint: the secret only masked. */
export const configView = (endpoint: Pick<Endpoint, "webhook_url" | "webhook_secret">) => ({
  webhook_url: endpoint.webhook_url,
  secret_set: endpoint.webhook_secret !== null,
  secret_masked: endpoint.webhook_secret === null ? null : maskSecret(endpoint.webhook_secret)
})

/** A change given on the key (PATCH): an absent field keeps what is stored; a null URL removes the webhook. */
export interface EndpointChange {
  readonly webhook_url?: string | null | undefined
  readonly webhook_secret?: string | null | undefined
}

export class WebhookEndpoints extends Effect.Service<WebhookEndpoints>()("herald/WebhookEndpoints", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const sender = yield* WebhookSender

    /** The endpoint of the caller's own key: unknown or revoked → not found, another account's → not yours. */
    const find = (accountId: string, id: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<Endpoint & { readonly account_id: string }>`
          SELECT id, account_id, webhook_url, webhook_secret FROM api_keys WHERE id = ${id} AND revoked_at IS NULL`
        const row = rows[0]
        if (row === undefined) return yield* new EndpointNotFound({ id })
        if (row.account_id !== accountId) return yield* new EndpointNotYours({ id })
        const endpoint: Endpoint = { id: row.id, webhook_url: row.webhook_url, webhook_secret: row.webhook_secret }
        return endpoint
      })

    const store = (id: string, url: string | null, secret: string | null) =>
      sql`UPDATE api_keys SET webhook_url = ${url}, webhook_secret = ${secret} WHERE id = ${id}`.pipe(Effect.asVoid)

    const get = (accountId: string, id: string) => Effect.map(find(accountId, id), configView)

    /**
     * Applies a key's change: a new URL is checked first (nothing is stored if it is refused); a
     * URL set with no secret (given or stored) gets a generated one, returned to be shown once.
     * Removing the URL removes the secret. Returns the generated secret, or null.
     */
    const configure = (accountId: string, id: string, change: EndpointChange) =>
      Effect.gen(function*() {
        const current = yield* find(accountId, id)
        if (change.webhook_url !== undefined && change.webhook_url !== null) {
          const checked = yield* sender.check(change.webhook_url)
          if (!checked.ok) return yield* new WebhookUrlRefused({ reason: checked.reason })
        }
        if (change.webhook_url === undefined && change.webhook_secret === undefined) return null
        const url = change.webhook_url === undefined ? current.webhook_url : change.webhook_url
        const generated = url !== null && change.webhook_secret == null && current.webhook_secret === null
          ? generateWebhookSecret()
          : null
        const secret = url === null ? null : change.webhook_secret ?? generated ?? current.webhook_secret
        yield* store(id, url, secret)
        return generated
      })

    /** A new secret for the same URL, shown in full only in this answer. */
    const rotate = (accountId: string, id: string) =>
      Effect.gen(function*() {
        const current = yield* find(accountId, id)
        const secret = generateWebhookSecret()
        yield* store(id, current.webhook_url, secret)
        return { webhook_secret: secret, secret_masked: maskSecret(secret) }
      })

    /** The key keeps working; its events are no longer delivered anywhere. */
    const remove = (accountId: string, id: string) =>
      Effect.gen(function*() {
        yield* find(accountId, id)
        yield* store(id, null, null)
        return configView({ webhook_url: null, webhook_secret: null })
      })

    return { find, get, configure, rotate, remove } as const
  })
}) {}
