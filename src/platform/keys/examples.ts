/** The reference's errors and examples for /v1/client/keys (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { KeysGroup } from "./Api.ts"

const KEY_ID = "key_5Gh2Jk8Lm1Np4Qr7St0V"
const OWNERSHIP = "404 `not_found` when there is no key `{id}`; 403 `forbidden` when it belongs to another account."

const key = {
  id: KEY_ID,
  label: "Production",
  token_hint: "hrld_…3c9f",
  webhook_url: "https://hooks.example.org/herald",
  created_at: "2026-11-02T10:15:00.000Z",
  last_used_at: "2026-11-04T09:00:00.000Z"
}

export const keysReference: GroupReference<typeof KeysGroup> = {
  create: {
    errors: "409 `conflict` when the account has as many active keys as it may have.",
    request: { label: "Production" },
    response: { id: KEY_ID, label: "Production", token: "hrld_7fK2mQ9vX4sT1wZ8bC3nL6pR0yA5dG", created_at: "2026-11-02T10:15:00.000Z" }
  },
  list: { errors: "No errors of its own.", response: { items: [key] } },
  get: { errors: OWNERSHIP, response: key },
  update: {
    errors: `${OWNERSHIP} 400 \`validation_failed\` (param \`webhook_url\`) for a webhook URL that is refused (not a URL, `
      + "not https in production, credentials in it, a name that does not resolve, a loopback or private address); nothing changes.",
    request: { label: "Production", webhook_url: "https://hooks.example.org/herald", webhook_secret: null },
    response: { id: KEY_ID, label: "Production", webhook_secret: "whsec_4Tg7Yh1Uj5Ik8Ol2Pz6Xc9Vb" }
  },
  revoke: { errors: OWNERSHIP, response: { id: KEY_ID, revoked: true } }
}
