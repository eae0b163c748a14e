/**
 * The command timeout (HERALD_SUBMISSION_COMMAND_TIMEOUT_SECONDS): a line the client has started
 * must arrive whole within it. smtp-server's idle timeout starts again with every byte, so
 * without this a client trickling one byte of a command a minute (commands may be 16 KB) would
 * keep its connection, one of HERALD_SMTP_MAX_CONNECTIONS_PER_IP, for days.
 *
 * Watched on the socket that carries the commands in clear: the accepted TCP socket, then, from
 * the TLS handshake on (STARTTLS, or the implicit-TLS port), the TLS socket (`onSecure`). A
 * message's lines count too (a line of a message is at most 998 characters, RFC 5322); the DATA
 * timeout bounds the message as a whole.
 */
import type * as net from "node:net"

const LF = 0x0a
/** A TLS record of the handshake starts with this byte; no SMTP command does. */
const TLS_HANDSHAKE = 0x16

const late = (socket: net.Socket, ms: number) => () => {
  socket.end(`421 4.4.2 Command timeout: a line must arrive whole within ${ms / 1000} s (HERALD_SUBMISSION_COMMAND_TIMEOUT_SECONDS)\r\n`)
  // A client that does not read its 421 does not hold the socket either.
  setTimeout(() => socket.destroy(), 1_000).unref()
}

/** Ends `socket` (421) when a line started on it is not whole within `ms`. */
export const watchCommandLines = (socket: net.Socket, ms: number): void => {
  let timer: NodeJS.Timeout | undefined
  const stop = () => {
    clearTimeout(timer)
    socket.off("data", onData)
  }
  function onData(chunk: Buffer) {
    // A TLS handshake at the start of a line: the TLS socket's lines are watched from here (onSecure).
    if (timer === undefined && chunk[0] === TLS_HANDSHAKE) return stop()
    if (chunk.includes(LF)) {
      clearTimeout(timer)
      timer = undefined
    }
    if (chunk[chunk.length - 1] !== LF && timer === undefined) timer = setTimeout(late(socket, ms), ms)
  }
  socket.on("data", onData)
  socket.once("close", stop)
}
