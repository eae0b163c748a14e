/**
 * One message's DATA, from the socket to PostgreSQL, holding no more than a chunk of it in memory:
 * each piece the socket yields is reserved in the listener's byte budget before it is kept; once a
 * chunk's worth is held (or the budget has no room for the next piece) it is staged in the database
 * and its bytes released. A message that ends within its first chunk — nearly every bounce, report
 * and complaint — is stored whole through the group commit instead, its bytes reserved until that
 * commit. Nothing is answered 250 before the row holding every byte is committed.
 *
 * The stream is always read to its end, whatever happens (smtp-server answers only then): after a
 * refusal the rest is read and dropped.
 */
import type { Readable } from "node:stream"
import type { ByteBudget } from "./ByteBudget.ts"

/** What became of a message's DATA. */
export type Received =
  | { readonly kind: "stored"; readonly id: string }
  /** Past the size limit (smtp-server counted it): 552. */
  | { readonly kind: "too_big" }
  /** No room in the byte budget within the wait: 451. */
  | { readonly kind: "no_room" }

export interface ReceiveOptions {
  readonly budget: ByteBudget
  /** Bytes held before they are staged (and the most one message is held whole). */
  readonly chunkBytes: number
  /** How long a piece waits for room in the budget before the message is refused. */
  readonly waitMs: number
  /** A fresh message id (staged chunks are keyed by it). */
  readonly newId: () => string
  /** Stores a message held whole; resolves with its id once committed. */
  readonly storeWhole: (raw: Buffer) => Promise<string>
  readonly stage: (id: string, seq: number, data: Buffer) => Promise<void>
  /** Moves the staged chunks into the message's row; resolves once committed. */
  readonly storeStaged: (id: string, size: number) => Promise<string>
  readonly discardStaged: (id: string) => Promise<void>
}

/** The smtp-server data stream: `sizeExceeded` is set once the message passes the size limit. */
type DataStream = Readable & { readonly sizeExceeded?: boolean }

/**
 * Reads `stream` to its end and stores it; rejects (451 for the caller) when the database fails.
 * Every byte reserved is released, whatever the outcome.
 */
export const receiveMessage = async (stream: DataStream, options: ReceiveOptions): Promise<Received> => {
  const { budget } = options
  const id = options.newId()
  let held: Array<Buffer> = []
  let heldBytes = 0
  /** Budget charged for what is held now. */
  let reserved = 0
  let size = 0
  let chunks = 0
  let refused: "too_big" | "no_room" | undefined
  let failure: unknown

  /** Writes what is held as the next chunk and releases its bytes. */
  const stageHeld = async () => {
    const data = held.length === 1 ? held[0]! : Buffer.concat(held, heldBytes)
    held = []
    heldBytes = 0
    try {
      await options.stage(id, chunks++, data)
    } finally {
      budget.release(reserved)
      reserved = 0
    }
  }

  const drop = () => {
    held = []
    heldBytes = 0
    budget.release(reserved)
    reserved = 0
  }

  try {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      if (refused !== undefined || failure !== undefined) continue // read to the end, keep nothing
      if (stream.sizeExceeded === true) {
        refused = "too_big"
        drop()
        continue
      }
      try {
        if (!budget.tryAcquire(piece.length)) {
          // Never wait while holding bytes: others may be waiting for exactly those.
          if (heldBytes > 0) await stageHeld()
          if (!(await budget.acquire(piece.length, options.waitMs))) {
            refused = "no_room"
            continue
          }
        }
        reserved += budget.charge(piece.length)
        held.push(piece)
        heldBytes += piece.length
        size += piece.length
        if (heldBytes >= options.chunkBytes) await stageHeld()
      } catch (error) {
        failure = error
        drop()
      }
    }
    if (stream.sizeExceeded === true) refused = "too_big"
    if (failure === undefined && refused === undefined) {
      if (chunks === 0) return { kind: "stored", id: await options.storeWhole(held.length === 1 ? held[0]! : Buffer.concat(held, heldBytes)) }
      if (heldBytes > 0) await stageHeld()
      return { kind: "stored", id: await options.storeStaged(id, size) }
    }
  } catch (error) {
    failure = error
  } finally {
    drop()
  }
  if (chunks > 0) await options.discardStaged(id).catch(() => undefined)
  if (failure !== undefined) throw failure
  return { kind: refused! }
}
