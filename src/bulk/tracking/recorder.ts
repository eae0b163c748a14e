/**
 * The tracking endpoints' writer: opens and clicks that arrive together are recorded in one
 * transaction (group commit, src/lib/group-commit.ts), one group at a time, each hit exactly as
 * `recordOpen` / `recordClick` would record it alone (store.ts). Every hit of a campaign moves
 * the same counter rows (`campaign_tracking`, the hour's row, the link's row): one transaction per
 * hit made the hits queue on those rows' locks, each held to its commit. Measured on
 * bench/campaign.ts (see README "Benchmarks"). A group that fails is written again hit by hit, so
 * one bad hit fails only its own recording.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import { makeGroupCommit } from "../../lib/group-commit.ts"
import { clickHit, openHit } from "./store.ts"
import type { ClickTarget, OpenTarget } from "./tokens.ts"

/** Hits per transaction, at most. */
const GROUP_HITS = 100

type Hit =
  | { readonly _tag: "open"; readonly target: OpenTarget; readonly at: Date; readonly machine: boolean }
  | { readonly _tag: "click"; readonly target: ClickTarget; readonly at: Date }

export class TrackingRecorder extends Effect.Service<TrackingRecorder>()("herald/TrackingRecorder", {
  scoped: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const group = yield* makeGroupCommit({
      write: (hits: ReadonlyArray<Hit>) =>
        sql.withTransaction(Effect.forEach(hits, (hit) =>
          hit._tag === "open"
            ? Effect.as(openHit(hit.target, hit.at, hit.machine), Option.none<string>())
            : clickHit(hit.target, hit.at))).pipe(Effect.provideService(SqlClient.SqlClient, sql)),
      maxItems: GROUP_HITS
    })
    return {
      /** Records an open; resumes once it is committed. */
      open: (target: OpenTarget, at: Date, machine: boolean) => Effect.asVoid(group.submit({ _tag: "open", target, at, machine })),
      /** Records a click; answers the link's URL (none: the campaign has no such link) once committed. */
      click: (target: ClickTarget, at: Date) => group.submit({ _tag: "click", target, at })
    } as const
  })
}) {}
