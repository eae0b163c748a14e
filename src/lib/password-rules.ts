/**
 * What an account's password must be, in one place for every way one is set: the admin API's
 * account creation, `herald accounts set-password` and HERALD_BOOTSTRAP_PASSWORD. At least 8
 * characters (a guess at the console costs a scrypt check and is throttled, so length matters more
 * than classes of characters); at most 1,024, far above any passphrase and far below what hashing
 * one should cost.
 */
import { Schema } from "effect"

export const MIN_PASSWORD_LENGTH = 8
export const MAX_PASSWORD_LENGTH = 1024

export const isAcceptablePassword = (password: string): boolean =>
  password.length >= MIN_PASSWORD_LENGTH && password.length <= MAX_PASSWORD_LENGTH

/** A password being set (not one being checked: a sign-in takes any bounded string and answers 401). */
export const NewPassword = Schema.String.pipe(
  Schema.minLength(MIN_PASSWORD_LENGTH, { message: () => `password must be at least ${MIN_PASSWORD_LENGTH} characters` }),
  Schema.maxLength(MAX_PASSWORD_LENGTH, { message: () => `password must be at most ${MAX_PASSWORD_LENGTH} characters` })
)
