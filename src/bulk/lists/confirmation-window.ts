/**
 * At most one confirmation mail per address and list in CONFIRMATION_WINDOW_MS (issue 26, finding
 * 5: deleting a member and adding the address again mailed it again, ten mails a second to one
 * inbox, with a subject and intro the account chose). The fact lives in `confirmation_sends`
 * (migration 0030), keyed by list and lower-case address, so it outlives the membership and the
 * contact. The window is decided with Effect's Clock by the caller (`at`), never by the database's
 * `now()`, so TestClock drives it.
 *
 * Claiming is one upsert that takes the slot only where there is none or the last one is older
 * than the window: of two calls at once, the second waits on the first's row lock and, once it
 * commits, finds the slot taken. It runs in the caller's transaction, so a call refused later
 * (quota, sender) leaves the slot free.
 */
import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"

/** How long a list's confirmation to an address holds back the next one (DESIGN "Errors", Wave 3). */
export const CONFIRMATION_WINDOW_MS = 24 * 60 * 60 * 1000

/**
 * How many rows past the window a call that mails deletes: enough that the table keeps about one
 * day of confirmations when calls mail at least as often as old rows accumulate, small enough
 * that no call pays for a backlog.
 */
const PRUNE_PER_CALL = 200

/** A confirmation to this address for this list went out less than the window ago. */
export class ConfirmationRecentlySent extends Data.TaggedError("ConfirmationRecentlySent")<{
  readonly listId: string
  readonly address: string
  /** When the next confirmation may go (ms since the epoch). */
  readonly nextAt: number
}> {}

export interface ConfirmationSlot {
  readonly listId: string
  /** Lower case. */
  readonly address: string
}

const slotKey = (slot: ConfirmationSlot) => `${slot.listId} ${slot.address}`

/**
 * Takes the slots that are free at `at` (none yet, or the last one at least the window ago);
 * answers which were taken, as `slotKey`s. Inside the caller's transaction.
 */
export const claimConfirmations = (slots: ReadonlyArray<ConfirmationSlot>, at: Date) =>
  Effect.gen(function*() {
    if (slots.length === 0) return new Set<string>()
    const sql = yield* SqlClient.SqlClient
    const cutoff = new Date(at.getTime() - CONFIRMATION_WINDOW_MS)
    // One row per slot (an upsert may not touch a row twice), in key order so that two calls
    // sharing slots lock them in the same order.
    const unique = [...new Map(slots.map((s) => [slotKey(s), s])).values()].sort((a, b) => (slotKey(a) < slotKey(b) ? -1 : 1))
    const taken = yield* sql<{ list_id: string; address: string }>`
      INSERT INTO confirmation_sends (list_id, address, sent_at)
      SELECT s.list_id, s.address, ${at}::timestamptz
      FROM unnest(${unique.map((s) => s.listId)}::text[], ${unique.map((s) => s.address)}::text[]) WITH ORDINALITY AS s(list_id, address, n)
      ORDER BY s.n
      ON CONFLICT (list_id, address) DO UPDATE SET sent_at = EXCLUDED.sent_at
      WHERE confirmation_sends.sent_at <= ${cutoff}
      RETURNING list_id, address`
    if (taken.length > 0) {
      // Rows past the window decide nothing; SKIP LOCKED: never wait for (or deadlock with) another call.
      yield* sql`DELETE FROM confirmation_sends WHERE (list_id, address) IN (
        SELECT list_id, address FROM confirmation_sends WHERE sent_at <= ${cutoff}
        ORDER BY sent_at LIMIT ${PRUNE_PER_CALL} FOR UPDATE SKIP LOCKED)`
    }
    return new Set(taken.map((row) => slotKey({ listId: row.list_id, address: row.address })))
  })

/** Whether `slot` is among the claimed ones. */
export const isClaimed = (claimed: ReadonlySet<string>, slot: ConfirmationSlot) => claimed.has(slotKey(slot))

/** When `slot` may get its next confirmation, if the window still holds it back at `at`. */
export const heldUntil = (slot: ConfirmationSlot, at: Date) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ sent_at: Date }>`
      SELECT sent_at FROM confirmation_sends WHERE list_id = ${slot.listId} AND address = ${slot.address}`
    if (row === undefined) return undefined
    const nextAt = row.sent_at.getTime() + CONFIRMATION_WINDOW_MS
    return nextAt > at.getTime() ? nextAt : undefined
  })
