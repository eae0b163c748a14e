/**
 * Webhook secrets: `whsec_` + 32 random bytes (base64url). Shown in full only when generated or
 * rotated; afterwards as `whsec_••••••••<last four>` (a fixed prefix, eight mask characters, the
 * last four characters of the secret).
 */
import { randomBytes } from "node:crypto"

export const SECRET_PREFIX = "whsec_"

export const generateWebhookSecret = (): string => `${SECRET_PREFIX}${randomBytes(32).toString("base64url")}`

export const maskSecret = (secret: string): string => `${SECRET_PREFIX}${"•".repeat(8)}${secret.slice(-4)}`
