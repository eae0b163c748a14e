/**
 * What the inbound parsers understand of one message. Pure data: the parsers read bytes and yield
 * these; the inbound actor (src/inbound/processor/) turns them into deliveries, suppressions and
 * events. Field names follow the operator's `parse` command (issue: "An operator's tool").
 */

/** `hard` for 5.x.x, `soft` for 4.x.x (DESIGN "Bounces"; the MTA's own vocabulary). */
export type BounceClass = "hard" | "soft"

export interface BouncedRecipient {
  /** The failed recipient's address, lower-cased. */
  readonly email: string
  /**
   * Enhanced status code (RFC 3463): the DSN `Status:` field, or the remote server's own code in the
   * diagnostic where the Status field is a generic one (bounce/prefer.ts); else the code in the text.
   */
  readonly status: string
  /** DSN `Action:` (`failed`, `delayed`, …); `failed` for a non-DSN bounce that gives none. */
  readonly action: string
  readonly class: BounceClass
  /** The remote server's words (`Diagnostic-Code` or the bounce's text), or null. */
  readonly diagnostic: string | null
}

export interface BounceReport {
  readonly recipients: ReadonlyArray<BouncedRecipient>
  /** Identity of the returned original, for mapping when the VERP address is not usable. */
  readonly original: OriginalMessage
}

/** Headers read from the returned or enclosed original message (null where absent). */
export interface OriginalMessage {
  /** `Message-ID` of the original, without angle brackets. */
  readonly messageId: string | null
  /** `X-Herald-Message-Id` of the original. */
  readonly heraldMessageId: string | null
  /** `Subject` of the original. */
  readonly subject: string | null
}

export interface ComplaintReport {
  /** ARF `Feedback-Type` (abuse, fraud, virus, opt-out, not-spam, auth-failure, other …), lower-cased. */
  readonly feedback_type: string
  /** Who reported: a provider name or the reporting domain. */
  readonly isp: string
  /** The complaining recipient(s), lower-cased. */
  readonly recipients: ReadonlyArray<string>
  /** `Message-ID` of the original, without angle brackets, or null. */
  readonly original_message_id: string | null
  readonly original: OriginalMessage
}

export interface DmarcRecord {
  readonly source_ip: string
  readonly count: number
  readonly disposition: string | null
  /** policy_evaluated dkim / spf: `pass` or `fail` (lower-cased), null when absent. */
  readonly dkim: string | null
  readonly spf: string | null
  readonly header_from: string | null
}

export interface DmarcReport {
  readonly org_name: string
  readonly report_id: string
  /** policy_published domain. */
  readonly domain: string
  readonly policy_p: string
  /** Epoch seconds. */
  readonly date_begin: number
  readonly date_end: number
  /** Number of `<record>` elements (the full list is in `rows`). */
  readonly records: number
  /** Sum of the records' `<count>`. */
  readonly messages: number
  readonly rows: ReadonlyArray<DmarcRecord>
}

export type Understood =
  | { readonly kind: "bounce"; readonly bounce: BounceReport }
  | { readonly kind: "complaint"; readonly complaint: ComplaintReport }
  | { readonly kind: "dmarc"; readonly dmarc: ReadonlyArray<DmarcReport>; readonly error?: string }
  | { readonly kind: "other"; readonly error?: string }
  /** A mail to the unsubscribe address: the token-shaped words of its Subject (parse/unsubscribe-request.ts). */
  | { readonly kind: "unsubscribe"; readonly tokens: ReadonlyArray<string> }
