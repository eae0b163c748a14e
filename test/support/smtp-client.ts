/**
 * Sends raw messages to a listener on loopback the way a remote MTA would (nodemailer's SMTP
 * client, no TLS), and reports the listener's final reply — or its refusal — as data.
 */
import nodemailer from "nodemailer"

export interface SmtpReply {
  readonly code: number
  readonly text: string
}

/** `localAddress`: the client's own address (any 127.x.y.z works on loopback), for per-address limits. */
export const sendRaw = async (
  port: number,
  envelope: { from: string; to: ReadonlyArray<string> },
  raw: string | Buffer,
  localAddress?: string
): Promise<SmtpReply> => {
  const transport = nodemailer.createTransport({
    host: "127.0.0.1", port, secure: false, ignoreTLS: true, name: "remote.test", ...(localAddress === undefined ? {} : { localAddress })
  })
  try {
    const info = await transport.sendMail({ envelope: { from: envelope.from, to: [...envelope.to] }, raw })
    return { code: Number(String(info.response).slice(0, 3)), text: String(info.response) }
  } catch (error) {
    const e = error as { responseCode?: number; response?: string; message: string }
    return { code: e.responseCode ?? 0, text: e.response ?? e.message }
  } finally {
    transport.close()
  }
}
