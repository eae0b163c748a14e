/**
 * A submitted message, read for acceptance: what the send path needs of it (the header From, each
 * envelope recipient's kind, the subject, the attachments' decoded sizes, the Idempotency-Key and
 * X-Herald-Test) and the MIME to store — as written, but for the fields a submitter may not set
 * (src/mta/compose/raw-headers.ts). Pure: no database, no clock.
 *
 * Envelope recipients decide delivery: one in the header To or Cc is that kind, any other is a
 * blind copy (Bcc works, and its header never reaches anyone).
 */
import { Either, Option } from "effect"
import addressparser from "nodemailer/lib/addressparser"
import { decodeHeaderWords, decodeTransfer } from "../../inbound/parse/mime/decode.ts"
import { MimeLimitError, type MimeNode, splitMime } from "../../inbound/parse/mime/split.ts"
import { isEmailAddress } from "../../lib/email.ts"
import { headerFields, headerValues, isSubmitterOnlyField, withoutFields } from "../../mta/compose/raw-headers.ts"
import type { RawMessage } from "../../mta/queue/StoredMessage.ts"
import type { MailToAccept } from "../accept.ts"
import type { AttachmentSize } from "../limits.ts"
import { decodedSize } from "../limits.ts"
import type { Recipient } from "../plan-items.ts"
import { MAX_IDEMPOTENCY_KEY_LENGTH } from "../send/Api.ts"
import { isSandbox } from "../send/Http.ts"

/** A refusal at the end of DATA: the SMTP code and the text after it (enhanced status code first). */
export interface Refusal {
  readonly code: number
  readonly text: string
}

export interface Submission {
  readonly mail: MailToAccept
  readonly attachments: ReadonlyArray<AttachmentSize>
  readonly idempotencyKey: Option.Option<string>
  readonly sandbox: boolean
  /**
   * What the Idempotency-Key compares: the envelope and the message, apart from Date and
   * Message-ID; empty without the header (nothing compares it, and it is a copy of the message).
   */
  readonly hashSource: string
}

export interface Envelope {
  readonly mailFrom: string
  readonly rcptTo: ReadonlyArray<string>
}

/** The messages table's subject is for listing: a longer one is cut (the message keeps its own). */
const MAX_LISTED_SUBJECT = 998

interface ParsedAddress {
  readonly address?: string | undefined
  readonly group?: ReadonlyArray<ParsedAddress> | undefined
}

const addressesIn = (values: ReadonlyArray<string>): ReadonlyArray<string> => {
  const flat = (list: ReadonlyArray<ParsedAddress>): ReadonlyArray<string> =>
    list.flatMap((a) => (a.group !== undefined ? flat(a.group) : a.address === undefined || a.address === "" ? [] : [a.address]))
  return values.flatMap((v) => flat(addressparser(v) as ReadonlyArray<ParsedAddress>))
}

const invalidMessage = (text: string): Refusal => ({ code: 550, text: `5.6.0 ${text}` })

/** The one sender of the header From, as the API's `from` rules read it. */
const senderOf = (raw: Buffer, fields: ReturnType<typeof headerFields>["fields"]): Either.Either<string, Refusal> => {
  const from = headerValues(raw, fields, "from")
  if (from.length === 0) return Either.left(invalidMessage("from is required"))
  if (from.length > 1) return Either.left(invalidMessage(`from must be one header field; the message has ${from.length}`))
  const addresses = addressesIn(from)
  if (addresses.length !== 1) return Either.left(invalidMessage(`from must hold exactly one address; it holds ${addresses.length}`))
  const address = addresses[0]!
  if (!isEmailAddress(address)) return Either.left(invalidMessage(`from has "${address}", which is not a valid email address (local@domain)`))
  return Either.right(address)
}

/** A leaf part that is an attachment: a disposition of attachment, a file name, or an inline part that is not text. */
const isAttachment = (node: MimeNode) =>
  !node.multipart && (node.disposition === "attachment" || node.filename !== false ||
    (node.disposition === "inline" && node.contentType !== false && !node.contentType.startsWith("text/")))

/** Every attachment of the MIME tree with its decoded size (base64 counted without decoding it). */
const attachmentsOf = (raw: Buffer, root: MimeNode): ReadonlyArray<AttachmentSize> => {
  const found: Array<AttachmentSize> = []
  const walk = (node: MimeNode) => {
    if (node.children.length > 0) return node.children.forEach(walk)
    if (!isAttachment(node)) return
    const body = raw.subarray(node.bodyStart, node.bodyEnd)
    const size = node.encoding === "base64"
      ? decodedSize(body.toString("latin1").replace(/[^A-Za-z0-9+/=]/g, ""))
      : node.encoding === "quoted-printable"
      ? decodeTransfer(body, node.encoding).length
      : body.length
    found.push({ filename: node.filename === false ? "(no name)" : node.filename, size })
  }
  walk(root)
  return found
}

/**
 * The submission of `raw` for `envelope`, or the refusal its header or MIME structure earns
 * (550 5.6.0, with the API's wording for the same fault).
 */
export const readSubmission = (raw: Buffer, envelope: Envelope): Either.Either<Submission, Refusal> => {
  const { fields } = headerFields(raw)
  const sender = senderOf(raw, fields)
  if (Either.isLeft(sender)) return Either.left(sender.left)
  const keyValue = headerValues(raw, fields, "idempotency-key")[0]
  if (keyValue !== undefined && keyValue.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    return Either.left(invalidMessage(`Idempotency-Key must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (it has ${keyValue.length})`))
  }
  let root: MimeNode
  try {
    root = splitMime(raw)
  } catch (error) {
    if (error instanceof MimeLimitError) return Either.left(invalidMessage(`the message's MIME structure is over its limits: ${error.message}`))
    throw error
  }
  const visible = new Set(addressesIn([...headerValues(raw, fields, "to"), ...headerValues(raw, fields, "cc")]).map((a) => a.toLowerCase()))
  const cc = new Set(addressesIn(headerValues(raw, fields, "cc")).map((a) => a.toLowerCase()))
  const recipients: ReadonlyArray<Recipient> = envelope.rcptTo.map((email) => {
    const key = email.toLowerCase()
    return { email, kind: !visible.has(key) ? "bcc" : cc.has(key) ? "cc" : "to" }
  })
  const subject = decodeHeaderWords(headerValues(raw, fields, "subject")[0] ?? "").slice(0, MAX_LISTED_SUBJECT)
  const stored = withoutFields(raw, isSubmitterOnlyField)
  const rawForm: RawMessage = {
    _tag: "raw",
    origin: "transactional",
    channel: "transactional",
    message: { mime_base64: stored.toString("base64") }
  }
  return Either.right({
    mail: { fromEmail: sender.right, personalizations: [recipients], messageOf: () => ({ subject, stored: rawForm }) },
    attachments: attachmentsOf(raw, root),
    idempotencyKey: Option.fromNullable(keyValue),
    sandbox: isSandbox(headerValues(raw, fields, "x-herald-test")[0]),
    hashSource: keyValue === undefined ? "" : `${JSON.stringify(envelope)}\n${withoutFields(stored, (name) => name === "date").toString("latin1")}`
  })
}
