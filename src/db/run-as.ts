/**
 * Who runs the embedded cluster. PostgreSQL refuses to run as root, so as root it runs as the
 * `postgres` user (created when missing), the cluster directory is handed to that user, and the
 * user is given what it needs to reach that directory.
 *
 * Reaching it: a clone in `/root` (mode 0700) with the default `HERALD_DATA_DIR=./data` puts the
 * cluster behind a directory the postgres user cannot traverse. Start-up then grants it traverse
 * rights (x, never read: it can pass through, not list) on exactly the parent directories that
 * stop it, and logs each change:
 * - with `setfacl` (package `acl`): an ACL entry `u:postgres:x` — only that user gains anything;
 * - otherwise: `chmod o+x` on those directories (every local user may then pass through them,
 *   still not list them).
 * Operators who want neither point `HERALD_DATA_DIR` at a reachable place (e.g. `/var/lib/herald`).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Data, Effect } from "effect"

export class RunAsError extends Data.TaggedError("RunAsError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface RunAs {
  readonly uid?: number
  readonly gid?: number
}

export interface TraverseGrant {
  readonly dir: string
  readonly how: "acl" | "chmod o+x"
}

const idOf = (flag: "-u" | "-g", user: string): number | undefined => {
  const out = spawnSync("id", [flag, user], { encoding: "utf8" })
  return out.status === 0 ? Number.parseInt(out.stdout.trim(), 10) : undefined
}

/** Whether `uid`/`gid` may search `dir` (which also needs every parent to be searchable). */
const canTraverse = (dir: string, uid: number, gid: number): boolean =>
  spawnSync("test", ["-x", dir], { uid, gid }).status === 0

/** `/a/b/c` → [`/`, `/a`, `/a/b`, `/a/b/c`]. */
const pathChain = (dir: string): ReadonlyArray<string> => {
  const chain: Array<string> = []
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    chain.unshift(current)
    if (path.dirname(current) === current) return chain
  }
}

const grantTraverse = (dir: string, uid: number): TraverseGrant => {
  const acl = spawnSync("setfacl", ["-m", `u:${uid}:x`, dir], { encoding: "utf8" })
  if (acl.status === 0) return { dir, how: "acl" }
  const mode = fs.statSync(dir).mode & 0o7777
  fs.chmodSync(dir, mode | 0o001)
  return { dir, how: "chmod o+x" }
}

/**
 * Makes every directory above `target` (and `target` itself) traversable by `uid`/`gid`, top down,
 * changing only those that stop it. Returns what it changed.
 */
export const ensureTraversable = (target: string, uid: number, gid: number): ReadonlyArray<TraverseGrant> => {
  const grants: Array<TraverseGrant> = []
  for (const dir of pathChain(target)) {
    if (canTraverse(dir, uid, gid)) continue
    grants.push(grantTraverse(dir, uid))
    if (!canTraverse(dir, uid, gid)) {
      throw new Error(`the postgres user still cannot reach ${dir} after granting it traverse rights`)
    }
  }
  return grants
}

/** As root, run the cluster as `postgres` (created when missing); otherwise as ourselves. */
export const resolveRunAs = (clusterDir: string): Effect.Effect<RunAs, RunAsError> =>
  Effect.gen(function*() {
    if (process.getuid?.() !== 0) return {}
    const prepared = yield* Effect.try({
      try: () => {
        if (idOf("-u", "postgres") === undefined) {
          spawnSync("groupadd", ["--system", "postgres"])
          spawnSync("useradd", ["--system", "-g", "postgres", "--no-create-home", "postgres"])
        }
        const uid = idOf("-u", "postgres")
        const gid = idOf("-g", "postgres")
        if (uid === undefined || gid === undefined) throw new Error("could not create the postgres user")
        fs.mkdirSync(clusterDir, { recursive: true, mode: 0o700 })
        fs.chownSync(clusterDir, uid, gid)
        return { uid, gid, grants: ensureTraversable(clusterDir, uid, gid) }
      },
      catch: (cause) =>
        new RunAsError({
          message: `HERALD_DATA_DIR: the postgres user cannot reach ${clusterDir}: ` +
            `${cause instanceof Error ? cause.message : String(cause)}; ` +
            "choose a data directory it can reach (e.g. /var/lib/herald) or run as an ordinary user",
          cause
        })
    })
    for (const grant of prepared.grants) {
      yield* Effect.logWarning(
        grant.how === "acl"
          ? "gave the postgres user traverse rights (ACL u:postgres:x) on a private directory above HERALD_DATA_DIR"
          : "made a private directory above HERALD_DATA_DIR traversable (chmod o+x; install `acl` to grant only the postgres user)"
      ).pipe(Effect.annotateLogs({ dir: grant.dir, change: grant.how }))
    }
    return { uid: prepared.uid, gid: prepared.gid }
  })
