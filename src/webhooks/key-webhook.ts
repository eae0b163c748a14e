/** The webhooks area's side of the keys API's port (src/platform/keys/key-webhook.ts): a key's endpoint is set here. */
import { Effect, Layer } from "effect"
import { KeyWebhook } from "../platform/keys/key-webhook.ts"
import { WebhookEndpoints } from "./WebhookEndpoints.ts"

export const KeyWebhookLive = Layer.effect(
  KeyWebhook,
  Effect.map(WebhookEndpoints, (endpoints) => ({ configure: endpoints.configure }))
)
