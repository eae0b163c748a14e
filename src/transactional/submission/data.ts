/**
 * One message's DATA, read into memory within its bounds: at most MAX_JSON_MB (smtp-server's
 * `sizeExceeded`, the SIZE advertised), within the DATA deadline, and counted in the account's
 * part of the body budget (HERALD_HTTP_BODY_BUDGET_MB, body-budget.ts) — the same room its HTTP
 * sends take, so an account cannot hold more message bytes in memory by switching protocol.
 *
 * The bytes count from DATA's first byte as they arrive, by the HTTP body's rule (nothing up to
 * SMALL_BODY, then every KB of it), and stay counted until the transaction ends: its reply sent
 * (`release`), or the connection gone before the message was whole (`abandon`: a client that went
 * away, the idle timeout, the DATA deadline). Past the room there is, the rest of the message is
 * read and dropped and the end of DATA is answered 452 4.3.1 (replies.ts `bodyBudgetFull`).
 */
import { Effect, Exit, Scope } from "effect"
import type { SMTPServerDataStream } from "smtp-server"
import { type BodyBudget, budgetKb, type BodyOwner } from "../../http/body-budget.ts"

export type Received =
  | { readonly _tag: "Message"; readonly raw: Buffer }
  | { readonly _tag: "TooLarge" }
  | { readonly _tag: "OverBudget" }

export interface DataBounds {
  readonly budget: BodyBudget
  readonly owner: BodyOwner
  readonly deadlineMs: number
  /** Ends the session at once: the DATA deadline passed. */
  readonly onDeadline: () => void
}

export interface MessageData {
  /** The message, once its DATA has ended (never, for a connection that goes first). */
  readonly received: Promise<Received>
  /** Gives the message's room back: its transaction has ended (its reply is sent). */
  readonly release: () => void
  /** Gives the room back if the DATA never ended: the connection closed mid-message. */
  readonly abandon: () => void
}

/** Reads `stream` (a DATA) within `bounds`; see the module comment. */
export const readMessageData = (stream: SMTPServerDataStream, bounds: DataBounds): MessageData => {
  const scope = Effect.runSync(Scope.make())
  let released = false
  let ended = false
  const release = () => {
    if (released) return
    released = true
    Effect.runSync(Scope.close(scope, Exit.void))
  }
  const chunks: Array<Buffer> = []
  let size = 0
  let heldKb = 0
  let overBudget = false
  const deadline = setTimeout(bounds.onDeadline, bounds.deadlineMs)
  // A connection closed mid-message destroys the stream with an error (smtp-server): expected here.
  stream.on("error", () => clearTimeout(deadline))
  stream.on("data", (chunk: Buffer) => {
    if (stream.sizeExceeded || overBudget) return
    chunks.push(chunk)
    size += chunk.length
    const needed = budgetKb(size)
    if (needed <= heldKb) return
    // Room before more bytes are read: the socket waits meanwhile (no chunk arrives while paused).
    stream.pause()
    Effect.runPromise(Scope.extend(bounds.budget.holdNow(bounds.owner, needed - heldKb), scope)).then((taken) => {
      if (taken) heldKb = needed
      else {
        // Refused: what was read goes, and so does its room (the rest is read and dropped).
        overBudget = true
        chunks.length = 0
        release()
      }
      stream.resume()
    })
  })
  const received = new Promise<Received>((resolve) => {
    stream.once("end", () => {
      ended = true
      clearTimeout(deadline)
      if (stream.sizeExceeded) resolve({ _tag: "TooLarge" })
      else if (overBudget) resolve({ _tag: "OverBudget" })
      else resolve({ _tag: "Message", raw: Buffer.concat(chunks, size) })
    })
  })
  return {
    received,
    release,
    abandon: () => {
      clearTimeout(deadline)
      if (!ended) release()
    }
  }
}
