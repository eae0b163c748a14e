/**
 * The tracking endpoints' writer. A hit costs the request path one INSERT into the log
 * (`tracking_ingest`, ingest.ts), group-committed with the hits that arrive together
 * (src/lib/group-commit.ts), and answered once committed: nothing accepted is lost. Everything else
 * a hit moves (counters, markers, events, engagement facts) is the aggregator's, after the answer
 * (aggregator.ts). Why: every hit of a campaign moves the same counter rows, and counting on the
 * request path made the hits queue on those rows' locks — ~6 statements per hit, 5.7 % of a bare
 * redirect server that inserts one row per hit (docs/benchmarks.md).
 *
 * A click needs its URL before the answer: the campaign's links never change once its content is
 * frozen, so they are read once per campaign and kept here. A campaign with no links yet is not kept
 * (asked again next time). After a campaign's delete a replica that kept its links still redirects
 * its clicks (to the campaign's own URLs, so no open redirect), but counts none: the aggregator
 * drops a click whose link is gone.
 *
 * A fetch of a token less than HERALD_TRACKING_REPEAT_SECONDS after the one this replica last
 * logged is answered and not logged (repeats.ts): replaying one token costs no write.
 */
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Option, Queue } from "effect"
import { AppConfig } from "../../config/app-config.ts"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import { appendHits, type LoggedHit } from "./ingest.ts"
import { RecentTokens, tokenKey } from "./repeats.ts"
import { campaignLinkUrls } from "./store.ts"
import type { ClickTarget, OpenTarget } from "./tokens.ts"

/** Hits per INSERT, at most. */
const GROUP_HITS = 200
/** Links kept, over all campaigns; past this the cache starts over (bounded by links, not campaigns: one campaign may have thousands). */
const CACHED_LINKS = 200_000

export class TrackingRecorder extends Effect.Service<TrackingRecorder>()("herald/TrackingRecorder", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const recent = new RecentTokens((yield* AppConfig).trackingRepeatMs)
    /** Wakes this replica's aggregator after each committed group (it also polls: a lost wake-up only delays). */
    const logged = yield* Queue.sliding<void>(1)
    const group = yield* makeGroupCommit({
      write: (hits: ReadonlyArray<LoggedHit>) =>
        appendHits(hits).pipe(
          Effect.provideService(SqlClient.SqlClient, sql),
          Effect.zipRight(Queue.offer(logged, undefined)),
          Effect.as(hits.map(() => undefined))
        ),
      maxItems: GROUP_HITS,
      // One group in flight: the hits that arrive during a commit share the next INSERT. Two writers
      // made more, smaller statements (bench:campaign tracking 39 % → 50–55 % of bare with one).
      writers: 1
    })
    const links = new Map<string, ReadonlyMap<number, string>>()
    let cachedLinks = 0

    /** The URL of the link a click token names, if its campaign has that link. */
    const linkUrl = (target: ClickTarget) =>
      Effect.gen(function*() {
        let known = links.get(target.campaignId)
        if (known === undefined) {
          const read = yield* campaignLinkUrls(target.campaignId).pipe(Effect.provideService(SqlClient.SqlClient, sql))
          if (read.size > 0) {
            if (cachedLinks + read.size > CACHED_LINKS) {
              links.clear()
              cachedLinks = 0
            }
            links.set(target.campaignId, read)
            cachedLinks += read.size
          }
          known = read
        }
        return Option.fromNullable(known.get(target.linkIndex))
      })

    /** The URL of the link a click token names when its campaign's links are already kept here (no read). */
    const knownLinkUrl = (target: ClickTarget): string | undefined => links.get(target.campaignId)?.get(target.linkIndex)

    /**
     * Logs `hit` and calls `done` once it is committed, unless it repeats a token this replica
     * logged within the window (then at once). Plain callbacks: the front door's fast path
     * (fast-path.ts) runs no fiber per hit.
     */
    const logThen = (hit: LoggedHit, done: (exit: Exit.Exit<void, SqlError>) => void): void => {
      const key = tokenKey(hit.deliveryId, hit.linkIndex, hit.linkIndex === null && hit.machine)
      const at = hit.at.getTime()
      if (recent.isRepeat(key, at)) return done(Exit.void)
      group.offer(hit, (exit) => {
        // Not logged after all: the next fetch of the token must be, or its window would count nothing.
        if (Exit.isFailure(exit)) recent.forget(key, at)
        done(exit)
      })
    }

    /** `logThen` as an effect: resumes once committed (at once for a repeat). */
    const log = (hit: LoggedHit): Effect.Effect<void, SqlError> => Effect.async((resume) => logThen(hit, resume))

    const openHit = (target: OpenTarget, at: Date, machine: boolean): LoggedHit =>
      ({ campaignId: target.campaignId, deliveryId: target.deliveryId, linkIndex: null, machine, at })
    const clickHit = (target: ClickTarget, at: Date): LoggedHit =>
      ({ campaignId: target.campaignId, deliveryId: target.deliveryId, linkIndex: target.linkIndex, machine: false, at })

    return {
      /** Logs an open; resumes once it is committed (at once for a repeat, which is not logged). */
      open: (target: OpenTarget, at: Date, machine: boolean) => log(openHit(target, at, machine)),
      /** Logs a click, as `open` does. Only for a link the campaign has: see `linkUrl`. */
      click: (target: ClickTarget, at: Date) => log(clickHit(target, at)),
      /** `open` with a callback (fast-path.ts). */
      openThen: (target: OpenTarget, at: Date, machine: boolean, done: (exit: Exit.Exit<void, SqlError>) => void) =>
        logThen(openHit(target, at, machine), done),
      /** `click` with a callback (fast-path.ts). */
      clickThen: (target: ClickTarget, at: Date, done: (exit: Exit.Exit<void, SqlError>) => void) => logThen(clickHit(target, at), done),
      linkUrl,
      knownLinkUrl,
      /** Resumes at the next committed group, or after `timeout` (the aggregator's wait). */
      awaitLogged: (timeout: number) =>
        Queue.take(logged).pipe(Effect.timeoutOption(timeout), Effect.asVoid)
    } as const
  })
}) {}
