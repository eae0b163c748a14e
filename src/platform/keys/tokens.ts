/**
 * API key tokens: `hrld_` + 43 base62 characters (~256 bits). Only the SHA-256 digest is stored;
 * the token is shown once when the key is created. A lookup compares digests inside PostgreSQL's
 * unique index, so response time depends on the digest, never on how much of a token was right.
 */
import { createHash } from "node:crypto"
import { randomBase62 } from "../../lib/ids.ts"

export const TOKEN_PREFIX = "hrld_"

export const generateToken = (): string => `${TOKEN_PREFIX}${randomBase62(43)}`

export const hashToken = (token: string): Buffer => createHash("sha256").update(token, "utf8").digest()

export const tokenHint = (token: string): string => token.slice(-4)
