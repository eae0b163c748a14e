/**
 * DKIM signatures (RFC 6376, relaxed/relaxed, rsa-sha256), computed here rather than by nodemailer's
 * signer, which signs synchronously on the main thread. The cheap parts (canonicalisation, the body
 * hash) run inline; the RSA signature, the costly part (about 2 ms for RSA-2048), goes through the
 * callback form of `crypto.sign`, which runs on libuv's threadpool — so signatures proceed in
 * parallel on every core while the event loop keeps delivering (WebCrypto under Deno, below). Keys are parsed once per domain
 * into KeyObjects (parsing a PEM costs more than signing), and a message is signed once however
 * many recipients it has.
 *
 * The message is handled as latin1 text, so every byte maps to one code unit and round-trips
 * unchanged (UTF-8 headers included). Bare LF line ends are turned into CRLF before signing: the
 * bytes signed are the bytes sent.
 */
import { createHash, createPrivateKey, type KeyObject, sign, webcrypto } from "node:crypto"

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

/**
 * The header fields signed when present (nodemailer's default list, plus List-Unsubscribe-Post:
 * RFC 8058 §4 asks that both unsubscribe headers be covered), every instance of each.
 */
const SIGNED_FIELDS = [
  "from", "sender", "reply-to", "subject", "date", "message-id", "to", "cc", "mime-version", "content-type",
  "content-transfer-encoding", "content-id", "content-description", "resent-date", "resent-from", "resent-sender",
  "resent-to", "resent-cc", "resent-message-id", "in-reply-to", "references", "list-id", "list-help",
  "list-unsubscribe", "list-unsubscribe-post", "list-subscribe", "list-post", "list-owner", "list-archive"
]
const SIGNED = new Set(SIGNED_FIELDS)

/** Header canonicalisation "relaxed" (§3.4.2): lower-case name, unfolded, WSP runs → one SP, trimmed. */
export const relaxedHeader = (field: string): string => {
  const colon = field.indexOf(":")
  const name = field.slice(0, colon).replace(/[ \t]+$/, "").toLowerCase()
  const value = field
    .slice(colon + 1)
    .replace(/\r\n/g, "")
    .replace(/[ \t]+/g, " ")
    .trim()
  return `${name}:${value}`
}

/**
 * Body canonicalisation "relaxed" (§3.4.4), of a CRLF body. The composer's bodies (quoted-printable
 * or base64) rarely hold a run of whitespace or whitespace at a line's end, so each rewrite runs
 * only when its pattern occurs: an unconditional `replace` rebuilt the whole body piece by piece
 * and was 12 % of all the MTA allocated (bench/outbound.ts, allocation profile).
 */
export const relaxedBody = (body: string): string => {
  let b = /\t| {2}/.test(body) ? body.replace(/[ \t]+/g, " ") : body
  if (b.includes(" \r\n")) b = b.replace(/ \r\n/g, "\r\n")
  let end = b.length
  for (;;) {
    if (end > 0 && b.charCodeAt(end - 1) === 32) end -= 1
    else if (end > 1 && b.charCodeAt(end - 1) === 10 && b.charCodeAt(end - 2) === 13) end -= 2
    else break
  }
  b = b.slice(0, end)
  return b.length === 0 ? "" : `${b}\r\n`
}

/** Splits a CRLF message (with its header's closing empty line) into its header fields (folded lines kept with their field) and body. */
const split = (text: string): { fields: Array<string>; body: string } => {
  const headerEnd = text.startsWith("\r\n") ? 0 : text.indexOf("\r\n\r\n")
  const bodyStart = headerEnd === 0 ? 2 : headerEnd + 4
  const fields: Array<string> = []
  if (headerEnd > 0) {
    for (const line of text.slice(0, headerEnd).split("\r\n")) {
      const first = line.charCodeAt(0)
      if ((first === 32 || first === 9) && fields.length > 0) fields[fields.length - 1] += `\r\n${line}`
      else fields.push(line)
    }
  }
  return { fields, body: text.slice(bodyStart) }
}

/**
 * Under Deno the callback form of `crypto.sign` runs synchronously, so there the signature goes
 * through WebCrypto instead (the key imported once per KeyObject), whose RSA work Deno runs off
 * the main thread.
 */
const isDeno = "Deno" in globalThis
const webKeys = new WeakMap<KeyObject, Promise<webcrypto.CryptoKey>>()
const webKeyOf = (key: KeyObject) => {
  let imported = webKeys.get(key)
  if (imported === undefined) {
    imported = webcrypto.subtle.importKey("pkcs8", key.export({ type: "pkcs8", format: "der" }), {
      name: "RSASSA-PKCS1-v1_5",
      hash: "SHA-256"
    }, false, ["sign"])
    webKeys.set(key, imported)
  }
  return imported
}

const signAsync = async (data: Buffer, key: KeyObject): Promise<Buffer> => {
  if (isDeno) return Buffer.from(await webcrypto.subtle.sign("RSASSA-PKCS1-v1_5", await webKeyOf(key), data))
  return new Promise((resolve, reject) => sign("sha256", data, key, (error, signature) => (error ? reject(error) : resolve(signature))))
}

/**
 * Returns the message with a DKIM-Signature header on top. `timestamp` (seconds) is the t= tag;
 * it defaults to now.
 */
export const signMessage = async (raw: Buffer, key: SigningKey, timestamp = Math.floor(Date.now() / 1000)): Promise<Buffer> => {
  let text = raw.toString("latin1")
  let bytes = raw
  if (/(?:^|[^\r])\n/.test(text)) {
    text = text.replace(/\r?\n/g, "\r\n")
    bytes = Buffer.from(text, "latin1")
  }
  if (!text.startsWith("\r\n") && !text.includes("\r\n\r\n")) {
    // Headers only: sent with the empty line that ends the header, so verifiers find an (empty) body.
    text = `${text.endsWith("\r\n") ? text : `${text}\r\n`}\r\n`
    bytes = Buffer.from(text, "latin1")
  }
  const { fields, body } = split(text)
  const bh = createHash("sha256").update(relaxedBody(body), "latin1").digest("base64")

  // Signed fields, each name listed once per instance; instances are taken from the bottom up (§5.4.2).
  const byName = new Map<string, Array<string>>()
  for (const field of fields) {
    const colon = field.indexOf(":")
    if (colon <= 0) continue
    const name = field.slice(0, colon).trim().toLowerCase()
    if (!SIGNED.has(name)) continue
    const list = byName.get(name)
    if (list === undefined) byName.set(name, [field])
    else list.push(field)
  }
  const names: Array<string> = []
  const canonical: Array<string> = []
  for (const name of SIGNED_FIELDS) {
    const list = byName.get(name)
    if (list === undefined) continue
    for (let i = list.length - 1; i >= 0; i--) {
      names.push(name)
      canonical.push(`${relaxedHeader(list[i]!)}\r\n`)
    }
  }

  const unsigned = `DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=${key.domain};\r\n`
    + ` q=dns/txt; s=${key.selector}; t=${timestamp};\r\n`
    + ` h=${names.join(":")};\r\n`
    + ` bh=${bh}; b=`
  const data = Buffer.from(canonical.join("") + relaxedHeader(unsigned), "latin1")
  const signature = (await signAsync(data, key.privateKey)).toString("base64")
  return Buffer.concat([Buffer.from(`${unsigned}${signature}\r\n`, "latin1"), bytes])
}
