/**
 * The one way inbound bytes become a parsed MIME tree. `keepDeliveryStatus` keeps
 * `message/delivery-status` parts as attachments (otherwise mailparser folds them into `text` and
 * the DSN fields are lost); the HTML/text conversions are skipped because no parser reads them.
 */
import { type ParsedMail, simpleParser } from "mailparser"

export type { ParsedMail }

export const readMail = (raw: Buffer): Promise<ParsedMail> =>
  simpleParser(raw, { keepDeliveryStatus: true, skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true })
