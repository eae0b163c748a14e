/** RSA-2048 DKIM key pairs for sending domains (RFC 6376 §3.3.3 recommends at least 1024 bits). */
import { generateKeyPair } from "node:crypto"
import { Effect } from "effect"
import { randomBase62 } from "../../lib/ids.ts"

export interface DkimKeyPair {
  readonly selector: string
  /** PKCS#8 PEM */
  readonly privateKey: string
  /** base64 DER SubjectPublicKeyInfo: the `p=` tag of the DNS record */
  readonly publicKey: string
}

/** Generated off the event loop (node's libuv thread pool): RSA key generation takes ~100 ms. */
export const generateDkimKeyPair: Effect.Effect<DkimKeyPair> = Effect.async((resume) => {
  generateKeyPair("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "der" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" }
  }, (error, publicKey, privateKey) => {
    if (error) return resume(Effect.die(error))
    resume(Effect.succeed({
      selector: `hrld${randomBase62(6).toLowerCase()}`,
      privateKey,
      publicKey: publicKey.toString("base64")
    }))
  })
})
