/** The reference's errors and examples for the operator's accounts (src/http/reference.ts). */
import type { GroupReference } from "../../http/reference.ts"
import type { AdminGroup } from "./Api.ts"

/** Every operator's endpoint answers this for a client key (src/http/admin-auth.ts). */
export const ADMIN_ONLY = "403 `forbidden` for a key that is not an administrator's."
const NOT_FOUND = `${ADMIN_ONLY} 404 \`not_found\` when there is no account \`{id}\`.`
const ACCOUNT_ID = "acc_9Lk6Jh3Gf0Ds7Ap4Oi1U"

const account = {
  id: ACCOUNT_ID,
  name: "Example Shop",
  email: "owner@example.org",
  is_admin: false,
  status: "active",
  package_id: "growth",
  sending_paused_reason: null,
  rate_per_min_override: null,
  monthly_quota_override: null,
  created_at: "2026-10-01T08:00:00.000Z"
}

export const adminReference: GroupReference<typeof AdminGroup> = {
  createAccount: {
    errors: `${ADMIN_ONLY} 400 \`validation_failed\` (param \`package_id\`) for an unknown package; 409 \`email_taken\` when an `
      + "account has this email.",
    request: { name: "Example Shop", email: "owner@example.org", password: "correct horse battery", package_id: "growth" },
    response: account
  },
  listAccounts: { errors: ADMIN_ONLY, response: { total: 1, limit: 50, offset: 0, items: [account] } },
  createAccountKey: {
    errors: `${NOT_FOUND} 409 \`conflict\` when the account has as many active keys as it may have.`,
    request: { label: "Production" },
    response: { id: "key_5Gh2Jk8Lm1Np4Qr7St0V", label: "Production", token: "hrld_7fK2mQ9vX4sT1wZ8bC3nL6pR0yA5dG", created_at: "2026-11-02T10:15:00.000Z" }
  },
  getAccount: { errors: NOT_FOUND, response: account },
  suspend: { errors: NOT_FOUND, response: { ...account, status: "suspended" } },
  unsuspend: { errors: NOT_FOUND, response: account },
  unpause: { errors: NOT_FOUND, response: account },
  assignPlan: {
    errors: `${NOT_FOUND} 400 \`validation_failed\` (param \`package_id\`) for an unknown package.`,
    request: { package_id: "scale" },
    response: { ...account, package_id: "scale" }
  },
  setLimits: {
    errors: NOT_FOUND,
    request: { rate_per_min: 1200, monthly_quota: null },
    response: { ...account, rate_per_min_override: 1200 }
  },
  trustDomain: {
    errors: `${ADMIN_ONLY} 404 \`not_found\` when there is no account \`{id}\` or \`{domain}\` is not registered for it.`,
    response: {
      domain: "example.org",
      verified: true,
      verified_at: "2026-11-02T10:20:00.000Z",
      verified_by: "operator",
      return_path_verified: false,
      records: [{ purpose: "verification", type: "TXT", name: "_herald.example.org", value: "herald-verification=6Hs8Kd2Lf5Jg9Qw1", optional: false }],
      created_at: "2026-11-02T10:15:00.000Z"
    }
  }
}
