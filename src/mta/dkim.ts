/**
 * DKIM signatures (RFC 6376, relaxed/relaxed, rsa-sha256) with nodemailer's signer. Keys are
 * parsed once per domain into KeyObjects (parsing a PEM costs more than signing), and a message is
 * signed once however many recipients it has.
 */
import { createPrivateKey, type KeyObject } from "node:crypto"
import DKIM from "nodemailer/lib/dkim"

export interface SigningKey {
  readonly domain: string
  readonly selector: string
  readonly privateKey: KeyObject
}

export const prepareKey = (domain: string, selector: string, pem: string): SigningKey => ({
  domain,
  selector,
  privateKey: createPrivateKey(pem)
})

export const signMessage = (raw: Buffer, key: SigningKey): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const signer = new DKIM({ domainName: key.domain, keySelector: key.selector, privateKey: key.privateKey })
    const chunks: Array<Buffer> = []
    const stream = signer.sign(raw)
    stream.on("data", (c: Buffer) => chunks.push(c))
    stream.once("error", reject)
    stream.once("end", () => resolve(Buffer.concat(chunks)))
  })
