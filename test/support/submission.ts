/**
 * SMTP submission as an application does it: nodemailer's SMTP client with AUTH (an API key as the
 * password), to the appliance's submission port on loopback, reporting the final reply — or the
 * refusal — as data. `raw` sends bytes built beforehand (MailComposer), so a test can compare
 * what the sink received with exactly what was submitted.
 */
import nodemailer from "nodemailer"
import MailComposer from "nodemailer/lib/mail-composer"
import type Mail from "nodemailer/lib/mailer"
import type { SmtpReply } from "./smtp-client.ts"

export interface SubmitOptions {
  readonly port: number
  /** The API key (the password); null: no AUTH. */
  readonly token: string | null
  readonly envelope: { readonly from: string; readonly to: ReadonlyArray<string> }
  readonly raw: Buffer | string
  /** The client's own address (any 127.x.y.z works on loopback). */
  readonly localAddress?: string
  /** Use STARTTLS (the appliance's certificate is trusted as given) or not at all. */
  readonly tls?: { readonly ca: string } | undefined
}

export const submitRaw = async (options: SubmitOptions): Promise<SmtpReply> => {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1",
    port: options.port,
    secure: false,
    name: "app.test",
    ...(options.tls === undefined ? { ignoreTLS: true } : { requireTLS: true, tls: { ca: options.tls.ca, servername: "localhost", rejectUnauthorized: false } }),
    ...(options.token === null ? {} : { auth: { user: "any-user", pass: options.token } }),
    ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress })
  })
  try {
    const info = await transport.sendMail({ envelope: { from: options.envelope.from, to: [...options.envelope.to] }, raw: options.raw })
    return { code: Number(String(info.response).slice(0, 3)), text: String(info.response) }
  } catch (error) {
    const e = error as { responseCode?: number; response?: string; message: string }
    return { code: e.responseCode ?? 0, text: e.response ?? e.message }
  } finally {
    transport.close()
  }
}

/** The bytes nodemailer would submit for `mail` (its own composer, as an application's send builds them). */
export const compose = (mail: Mail.Options): Promise<Buffer> =>
  new Promise((resolve, reject) => new MailComposer(mail).compile().build((error, message) => (error ? reject(error) : resolve(message))))

/** The message id of a 250 `queued as <id>` reply. */
export const queuedId = (reply: SmtpReply): string | undefined => /queued as (\S+)/.exec(reply.text)?.[1]
