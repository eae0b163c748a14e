/**
 * A raw SMTP dialog over a real socket, for what an SMTP library will not do: stop in the middle of
 * a message, trickle a command, or just wait. Each reply is its text, a multi-line reply's lines
 * joined with "\n" (so `^250 ` matches a one-line reply); `closed` settles when the server ends
 * the connection.
 */
import * as net from "node:net"
import * as tls from "node:tls"

export interface SmtpDialog {
  /** The next reply (the greeting first). */
  readonly reply: () => Promise<string>
  /** Writes `line` and CRLF, then waits for its reply. */
  readonly command: (line: string) => Promise<string>
  /** Writes bytes as they are, waiting for nothing. */
  readonly write: (bytes: string | Buffer) => void
  readonly closed: Promise<void>
  readonly destroy: () => void
  /** Upgrades the connection with STARTTLS (after its 220), trusting `ca`. */
  readonly startTls: (ca: string) => Promise<SmtpDialog>
}

export interface DialogOptions {
  readonly host?: string
  readonly localAddress?: string
  /** Implicit TLS from the first byte, trusting `ca`. */
  readonly tls?: { readonly ca: string }
}

const speak = (socket: net.Socket): SmtpDialog => {
  const lines: Array<string> = []
  const waiting: Array<(line: string) => void> = []
  let buffer = ""
  let partial: Array<string> = []
  const onData = (chunk: Buffer) => {
    buffer += chunk.toString("latin1")
    let end: number
    while ((end = buffer.indexOf("\r\n")) !== -1) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      partial.push(line)
      if (line[3] === "-") continue
      const whole = partial.join("\n")
      partial = []
      const next = waiting.shift()
      if (next !== undefined) next(whole)
      else lines.push(whole)
    }
  }
  socket.on("data", onData)
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()))
  socket.on("error", () => undefined)
  // A reply that never comes (the server closed) reads as "" rather than hanging the test.
  void closed.then(() => {
    for (const next of waiting.splice(0)) next("")
  })
  const reply = () =>
    new Promise<string>((resolve) => {
      const line = lines.shift()
      if (line !== undefined) resolve(line)
      else if (socket.destroyed) resolve("")
      else waiting.push(resolve)
    })
  return {
    reply,
    command: (line) => {
      socket.write(`${line}\r\n`)
      return reply()
    },
    write: (bytes) => void socket.write(bytes),
    closed,
    destroy: () => socket.destroy(),
    startTls: async (ca) => {
      socket.off("data", onData)
      const secure = tls.connect({ socket, ca, servername: "localhost" })
      await new Promise<void>((resolve, reject) => secure.once("secureConnect", resolve).once("error", reject))
      return speak(secure)
    }
  }
}

/** Connects to `port` and returns the dialog once the greeting is read (its text: `greeting`). */
export const openDialog = async (port: number, options: DialogOptions = {}): Promise<SmtpDialog & { readonly greeting: string }> => {
  const host = options.host ?? "127.0.0.1"
  const local = options.localAddress === undefined ? {} : { localAddress: options.localAddress }
  const socket = options.tls === undefined
    ? net.connect({ port, host, ...local })
    : tls.connect({ port, host, ...local, ca: options.tls.ca, servername: "localhost" })
  const dialog = speak(socket)
  const greeting = await dialog.reply()
  return { ...dialog, greeting }
}

/** AUTH PLAIN's one line for `password` (any user name). */
export const authPlain = (password: string) => `AUTH PLAIN ${Buffer.from(`\0app\0${password}`).toString("base64")}`
