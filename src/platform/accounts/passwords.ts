/**
 * Account passwords: scrypt (RFC 7914) with a random 16-byte salt, stored as
 * `scrypt$N$r$p$salt$hash` so the cost can rise later without breaking old hashes.
 * N=2^15, r=8 costs about 50 ms and 32 MiB on this class of machine: slow for guessing,
 * fast enough for the rare password checks (account creation, plan change).
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"

const N = 32768
const R = 8
const P = 1
const KEYLEN = 32
const MAXMEM = 64 * 1024 * 1024

const derive = (password: string, salt: Buffer, n: number, r: number, p: number) =>
  Effect.async<Buffer>((resume) => {
    scrypt(password, salt, KEYLEN, { N: n, r, p, maxmem: MAXMEM }, (error, key) => {
      resume(error ? Effect.die(error) : Effect.succeed(key))
    })
  })

export const hashPassword = (password: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const salt = randomBytes(16)
    const key = yield* derive(password, salt, N, R, P)
    return `scrypt$${N}$${R}$${P}$${salt.toString("base64")}$${key.toString("base64")}`
  })

export const verifyPassword = (password: string, stored: string): Effect.Effect<boolean> =>
  Effect.gen(function*() {
    const [scheme, n, r, p, salt, hash] = stored.split("$")
    if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash) return false
    const expected = Buffer.from(hash, "base64")
    const actual = yield* derive(password, Buffer.from(salt, "base64"), Number(n), Number(r), Number(p))
    return actual.length === expected.length && timingSafeEqual(actual, expected)
  })

/**
 * A hash of a random password nobody knows: a sign-in with an unknown email is checked against it,
 * so it costs the same scrypt work, and answers in the same time, as a wrong password.
 */
export const makeDummyPasswordHash: Effect.Effect<string> = Effect.suspend(() => hashPassword(randomBytes(32).toString("base64")))
