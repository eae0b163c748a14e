/** The reference's errors and examples for a key's webhook and its deliveries (src/http/reference.ts). */
import type { GroupReference } from "../http/reference.ts"
import type { WebhooksGroup } from "./Api.ts"

const OWNERSHIP = "404 `not_found` when there is no key `{id}`; 403 `forbidden` when it belongs to another account."
const DELIVERY = `${OWNERSHIP.replace("`{id}`;", "`{id}` or it has no delivery `{dId}`;")}`
const RETRY = `${DELIVERY} 409 \`conflict\` when the key has no webhook URL or an attempt of this delivery is running.`
const config = { webhook_url: "https://hooks.example.org/herald", secret_set: true, secret_masked: "whsec_…9Vb" }

const delivery = {
  id: "whd_2Wx5Ec8Rv1Tb4Yn7Um0I",
  event: "email.delivered",
  event_id: "evt_6Ok9Pl2Mn5Bv8Cx1Za4S",
  status: "delivered",
  http_code: 200,
  attempts: 1,
  error: null,
  next_attempt_at: null,
  created_at: "2026-11-02T10:15:02.000Z",
  updated_at: "2026-11-02T10:15:03.000Z"
}
const detail = {
  ...delivery,
  payload: { id: "evt_6Ok9Pl2Mn5Bv8Cx1Za4S", event: "email.delivered", ts: "2026-11-02T10:15:02.000Z", app: "key_5Gh2Jk8Lm1Np4Qr7St0V" },
  response_body: "ok",
  attempt_history: [{ attempted_at: "2026-11-02T10:15:03.000Z", duration_ms: 84, http_code: 200, error: null, response_body: "ok" }]
}
const fired = { delivery_id: delivery.id, status: "delivered", http_code: 200, error: null, duration_ms: 91 }

export const webhooksReference: GroupReference<typeof WebhooksGroup> = {
  get: { errors: OWNERSHIP, response: config },
  remove: { errors: OWNERSHIP, response: { webhook_url: null, secret_set: false, secret_masked: null } },
  rotate: { errors: OWNERSHIP, response: { webhook_secret: "whsec_8Nb5Vc2Xz9Lk6Jh3Gf0Ds7", secret_masked: "whsec_…Ds7" } },
  test: {
    errors: `${OWNERSHIP} 409 \`conflict\` when the key has no webhook URL.`,
    response: { event_id: "evt_4Rt7Yu0Io3Pa6Sd9Fg2Hj", delivery_id: "whd_8Jk1Lz4Xc7Vb0Nm3Qw6Er", status: "pending", webhook_url: config.webhook_url }
  },
  keyList: { errors: OWNERSHIP, response: { total: 1, items: [delivery] } },
  keyGet: { errors: DELIVERY, response: detail },
  keyRetry: { errors: RETRY, response: fired },
  endpointList: { errors: OWNERSHIP, response: { total: 1, items: [delivery] } },
  endpointGet: { errors: DELIVERY, response: detail },
  endpointRetry: { errors: RETRY, response: fired }
}
