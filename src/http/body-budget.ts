/**
 * The budget of request bodies being read and handled at once (HERALD_HTTP_BODY_BUDGET_MB): what a
 * body costs once parsed and handled is a few times its size (docs/operating.md "Memory"), so many of them
 * together could take more memory than the process has. A body over SMALL_BODY takes its size in KB
 * from the budget when it starts to be read (body-reader.ts) until its request is answered, and
 * waits while there is no room.
 *
 * Room is shared at two levels, so that nobody can keep the others waiting:
 * - an account, across all its keys, holds at most HERALD_HTTP_BODY_ACCOUNT_SHARE_PERCENT of the
 *   budget: accounts make their own keys, so a share per key alone let one account take the whole
 *   budget with two keys (issue #26, finding 6);
 * - one key holds at most HERALD_HTTP_BODY_KEY_SHARE_PERCENT of its account's part, so one busy key
 *   leaves room to the account's other keys.
 * Bodies of unauthenticated requests (the public pages) count as one more account, "the public",
 * whose members are client addresses (an IPv6 client by its /64): together they never hold more
 * than an account may, and one address no more than a key may of that.
 *
 * Every part is at least the largest body its requests may bring (MAX_JSON_MB for an account's
 * keys, HERALD_HTTP_MAX_BODY_KB for the public), within the budget: one such body always fits.
 *
 * One budget per process, shared by the HTTP API and SMTP submission (BodyBudgetService): a
 * submitted message is an account's body too. An HTTP body waits for room (its upload has not
 * started: the client is held back, nothing is in memory); a submitted message, whose bytes are
 * already arriving, takes room as they come and is refused when there is none (`holdNow`).
 */
import { Effect, type Scope } from "effect"
import { AppConfig } from "../config/app-config.ts"
import { clientOf } from "./auth-failures.ts"

const KB = 1024
/** Bodies up to this size pass without the budget: what they parse into is at most a few MB. */
export const SMALL_BODY = 64 * KB

/** Whose room a body takes: an API key of an account, or a client address of the public pages. */
export type BodyOwner =
  | { readonly _tag: "Key"; readonly accountId: string; readonly keyId: string }
  | { readonly _tag: "Public"; readonly address: string }

export interface BodyBudgetPolicy {
  readonly budgetBytes: number
  readonly accountSharePercent: number
  readonly keySharePercent: number
  /** MAX_JSON_MB in bytes: the largest body an account's key may bring. */
  readonly maxJsonBytes: number
  /** HERALD_HTTP_MAX_BODY_KB in bytes: the largest body of any route but the large ones (the public pages' too). */
  readonly maxBodyBytes: number
}

/** The KB a body of `bytes` takes from the budget: none up to SMALL_BODY. */
export const budgetKb = (bytes: number): number => (bytes <= SMALL_BODY ? 0 : Math.ceil(bytes / KB))

/**
 * A semaphore and the permits taken of it through this module (`held`): what `holdNow` reads to
 * decide without waiting (Effect's Semaphore does not say how many permits are free).
 */
interface Room {
  readonly semaphore: Effect.Semaphore
  readonly permits: number
  held: number
}

interface Part extends Room {
  users: number
}

const makeRoom = (permits: number): Room => ({ semaphore: Effect.unsafeMakeSemaphore(permits), permits, held: 0 })

/** A share of `whole` KB: `percent` of it, but never less than `largestKb` (nor more than the whole). */
const shareOf = (whole: number, percent: number, largestKb: number) =>
  Math.min(whole, Math.max(Math.floor((whole * percent) / 100), largestKb))

/** Gives `permits` of `room` back when the scope closes. */
const giveBackOnClose = (room: Room, permits: number) =>
  Effect.addFinalizer(() =>
    Effect.suspend(() => {
      room.held -= permits
      return room.semaphore.release(permits)
    })
  )

/** Waits for `permits`, gives them back when the scope closes; an interrupted wait takes none. */
const takeScoped = (room: Room, permits: number): Effect.Effect<void, never, Scope.Scope> =>
  Effect.uninterruptibleMask((restore) =>
    restore(room.semaphore.take(permits)).pipe(
      Effect.zipRight(Effect.sync(() => {
        room.held += permits
      })),
      Effect.zipRight(giveBackOnClose(room, permits))
    )
  )

/**
 * Takes `permits` of `room` that `holdNow` has already counted in `held`: free then, so the take
 * does not wait (unless a waiting `take` took them in between; then it waits its turn like it).
 */
const takeCounted = (room: Room, permits: number): Effect.Effect<void, never, Scope.Scope> =>
  Effect.uninterruptible(Effect.zipRight(room.semaphore.take(permits), giveBackOnClose(room, permits)))

export const makeBodyBudget = (policy: BodyBudgetPolicy) => {
  const totalKb = Math.max(1, Math.floor(policy.budgetBytes / KB))
  const total = makeRoom(totalKb)
  const sizes = (largestBytes: number) => {
    const group = shareOf(totalKb, policy.accountSharePercent, Math.ceil(largestBytes / KB))
    return { group, member: shareOf(group, policy.keySharePercent, Math.ceil(largestBytes / KB)) }
  }
  const keySizes = sizes(policy.maxJsonBytes)
  const publicSizes = sizes(policy.maxBodyBytes)
  // Parts exist while someone uses them: the table holds the owners with a body in hand, no more.
  const parts = new Map<string, Part>()

  /** The part named `id` for the scope's life, made with `permits` when nobody else holds it. */
  const enter = (id: string, permits: number) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const part = parts.get(id) ?? { ...makeRoom(permits), users: 0 }
        part.users++
        parts.set(id, part)
        return part
      }),
      (part) =>
        Effect.sync(() => {
          if (--part.users === 0) parts.delete(id)
        })
    )

  const partIds = (owner: BodyOwner) =>
    owner._tag === "Key"
      ? { group: `account ${owner.accountId}`, member: `key ${owner.keyId}`, size: keySizes }
      : { group: "public", member: `address ${clientOf(owner.address)}`, size: publicSizes }

  /**
   * Holds `kb` of the budget for `owner` until the scope closes: first of the key's (address's)
   * part, then of the account's (the public's), then of the whole — always in that order, so
   * waiters never hold each other up in a circle.
   */
  const hold = (owner: BodyOwner, kb: number): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function*() {
      const { group, member, size } = partIds(owner)
      const memberPart = yield* enter(`${group} ${member}`, size.member)
      const groupPart = yield* enter(group, size.group)
      yield* takeScoped(memberPart, Math.min(kb, memberPart.permits))
      yield* takeScoped(groupPart, Math.min(kb, groupPart.permits))
      yield* takeScoped(total, Math.min(kb, totalKb))
    })

  /**
   * Like `hold`, but never waits: takes `kb` at all three levels if each has the room now (true),
   * or nothing (false). The rooms are counted in one synchronous step, so two callers never both
   * see the same free room.
   */
  const holdNow = (owner: BodyOwner, kb: number): Effect.Effect<boolean, never, Scope.Scope> =>
    Effect.gen(function*() {
      if (kb === 0) return true
      const { group, member, size } = partIds(owner)
      const memberPart = yield* enter(`${group} ${member}`, size.member)
      const groupPart = yield* enter(group, size.group)
      const takes: ReadonlyArray<readonly [Room, number]> = [memberPart, groupPart, total].map((room) => [room, Math.min(kb, room.permits)] as const)
      if (takes.some(([room, permits]) => room.permits - room.held < permits)) return false
      for (const [room, permits] of takes) room.held += permits
      for (const [room, permits] of takes) yield* takeCounted(room, permits)
      return true
    })

  return { hold, holdNow, sizes: { totalKb, key: keySizes, public: publicSizes }, partsInUse: () => parts.size }
}

export type BodyBudget = ReturnType<typeof makeBodyBudget>

/** The process's one body budget, from HERALD_HTTP_BODY_BUDGET_MB and its shares: the HTTP API's and SMTP submission's. */
export class BodyBudgetService extends Effect.Service<BodyBudgetService>()("herald/BodyBudget", {
  effect: Effect.map(AppConfig, (config) =>
    makeBodyBudget({
      budgetBytes: config.httpBodyBudgetBytes,
      accountSharePercent: config.httpBodyAccountSharePercent,
      keySharePercent: config.httpBodyKeySharePercent,
      maxJsonBytes: config.maxJsonBytes,
      maxBodyBytes: config.httpMaxBodyBytes
    }))
}) {}
