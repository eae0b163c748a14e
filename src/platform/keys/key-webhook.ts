/**
 * What the keys API (PATCH /v1/client/keys/{id}) needs of the webhooks area: setting a key's
 * webhook URL and secret. A port: what a URL must pass (the SSRF policy every attempt applies) and
 * the secret's form belong to the webhook sender, and the webhooks area stands above platform.
 * src/appliance.ts fills it with WebhookEndpoints.configure (the one writer of those columns);
 * nothing in src/webhooks/ imports the keys.
 */
import type { SqlError } from "@effect/sql"
import { Context, type Effect } from "effect"

/** A change given on the key: an absent field keeps what is stored; a null URL removes the webhook. */
export interface KeyWebhookChange {
  readonly webhook_url?: string | null | undefined
  readonly webhook_secret?: string | null | undefined
}

/**
 * Why a change is refused, by tag: no active key of that id (404), another account's key (403),
 * a URL the webhook check refuses (400 on `webhook_url`). Nothing is stored then.
 */
export type KeyWebhookRefusal =
  | { readonly _tag: "EndpointNotFound"; readonly id: string }
  | { readonly _tag: "EndpointNotYours"; readonly id: string }
  | { readonly _tag: "WebhookUrlRefused"; readonly reason: string }

export class KeyWebhook extends Context.Tag("herald/KeyWebhook")<KeyWebhook, {
  /** Applies `change` to the key's webhook; the secret it generated (shown once), or null. */
  readonly configure: (
    accountId: string,
    keyId: string,
    change: KeyWebhookChange
  ) => Effect.Effect<string | null, KeyWebhookRefusal | SqlError.SqlError>
}>() {}
