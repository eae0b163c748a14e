/**
 * The messages of the attempts in hand, by id: the recipients of one message, claimed together,
 * share one read of its stored parts, one decode, one compose and one signature, made before the
 * attempt waits for a connection (so the connection never waits for the signer) and let go when
 * the last of them is done. Memory follows the attempts running (at most twice a site's
 * connections per domain, see Mta.ts), not the claim or the queue.
 */
import { Data, Effect, type Either } from "effect"
import { signMessage, type SigningKey } from "../dkim.ts"
import { recordDkimSign } from "../../lib/metrics.ts"
import { decodeStoredMessage, type StoredMessage } from "../queue/StoredMessage.ts"

/** The message cannot be made into MIME: the same every time, so its delivery fails. */
export class Uncomposable extends Data.TaggedError("Uncomposable")<{ readonly reason: string }> {}

/** A message in the hands of `refs` attempts, read (its stored parts), decoded, composed and signed once for all of them. */
export interface Held {
  refs: number
  /** The stored message's parts as read (see MessageForDelivery); undefined until read. */
  parts: { readonly content: unknown; readonly shared: unknown } | undefined
  /** The decoded message, or why it cannot be delivered (decodeStoredMessage); undefined until decoded. */
  decoded: Either.Either<StoredMessage, string> | undefined
  signed: { readonly key: SigningKey; readonly raw: Promise<Buffer | Uncomposable> } | undefined
}

export const makeHeldMessages = () => {
  const held = new Map<string, Held>()

  /** Runs `use` with the message held, and lets it go after (the last attempt's release forgets it). */
  const holding = <A, E, R>(messageId: string, use: (h: Held) => Effect.Effect<A, E, R>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        let h = held.get(messageId)
        if (h === undefined) {
          h = { refs: 0, parts: undefined, decoded: undefined, signed: undefined }
          held.set(messageId, h)
        }
        h.refs += 1
        return h
      }),
      use,
      (h) =>
        Effect.sync(() => {
          h.refs -= 1
          if (h.refs === 0 && held.get(messageId) === h) held.delete(messageId)
        })
    )

  /** The held message decoded, or why it cannot be delivered: once per message (see decodeStoredMessage). */
  const decodedOf = (h: Held) => {
    if (h.decoded === undefined) h.decoded = decodeStoredMessage(h.parts?.content, h.parts?.shared)
    return h.decoded
  }

  /**
   * The message composed (`compose`, called only when no attempt has) and signed with `key`; a
   * composing error (thrown or rejected) is the message's own and fails with Uncomposable.
   */
  const signedOf = (h: Held, key: SigningKey, compose: () => Promise<Buffer>): Effect.Effect<Buffer, Uncomposable> =>
    Effect.suspend(() => {
      if (h.signed === undefined || h.signed.key !== key) {
        const composed = Promise.resolve()
          .then(compose)
          .then(
            (raw) => {
              const started = performance.now()
              return signMessage(raw, key).then((signed) => {
                recordDkimSign((performance.now() - started) / 1000)
                return signed
              })
            },
            (error: unknown) =>
              new Uncomposable({ reason: `the message could not be composed: ${error instanceof Error ? error.message : String(error)}` })
          )
        h.signed = { key, raw: composed }
      }
      const signed = h.signed.raw
      return Effect.flatMap(Effect.promise(() => signed), (raw) => (raw instanceof Uncomposable ? Effect.fail(raw) : Effect.succeed(raw)))
    })

  return { holding, decodedOf, signedOf } as const
}
