/**
 * Who may log in to the embedded cluster, and with what.
 *
 * - The superuser `herald` (the cluster's bootstrap role, so the name stays for clusters made
 *   before) has a random password kept in `HERALD_DATA_DIR/pg-superuser-password`, mode 0600.
 *   Clusters initialised with the old fixed password `herald` — which any local user could use
 *   over 127.0.0.1 to read every secret and, as superuser, run programs (`COPY … TO PROGRAM`) —
 *   are switched to the stored password at their next start.
 * - The appliance connects as `herald_app`, an ordinary role (no superuser, no CREATEDB/CREATEROLE)
 *   owning the `herald` database, with its own random password in
 *   `HERALD_DATA_DIR/pg-app-password` (0600). Migrations run as that owner (they need no
 *   superuser: no extensions, no server settings). A `herald` database made by the superuser, as
 *   before, is handed over with everything the migrations created in it.
 *
 * The superuser serves only this set-up and the tests' admin URL (creating test databases).
 * Authentication is `scram-sha-256` for both the unix socket and 127.0.0.1 (initdb --auth).
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type pg from "pg"

export const SUPERUSER = "herald"
export const APP_ROLE = "herald_app"
export const APP_DATABASE = "herald"
/** The fixed superuser password of clusters initialised before the switch. */
const LEGACY_PASSWORD = "herald"
export const SUPERUSER_PASSWORD_FILE = "pg-superuser-password"
export const APP_PASSWORD_FILE = "pg-app-password"
/** Serialises the role and database set-up of processes starting at once (CLI and appliance). */
const PROVISION_LOCK = 7_310_043

export const clusterUrl = (user: string, password: string, port: number, database: string) =>
  `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`

/**
 * The secret stored in `file`, made (random, mode 0600) when missing. Written to a temporary file
 * first and linked into place, so a second process starting at the same moment reads either
 * nothing yet (and makes the link fail, then reads the winner's) or the whole secret.
 */
export const readOrCreateSecret = (file: string): string => {
  if (!fs.existsSync(file)) {
    const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`
    fs.writeFileSync(temp, `${randomBytes(24).toString("base64url")}\n`, { mode: 0o600, flag: "wx" })
    try {
      fs.linkSync(temp, file)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e
    } finally {
      fs.rmSync(temp, { force: true })
    }
  }
  // A copy restored with looser bits is tightened again: only the owner may read it.
  if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600)
  const secret = fs.readFileSync(file, "utf8").trim()
  if (secret === "") throw new Error(`${file} is empty: remove it only together with the cluster`)
  return secret
}

export const secretFiles = (dataDir: string) => ({
  superuser: path.resolve(dataDir, SUPERUSER_PASSWORD_FILE),
  app: path.resolve(dataDir, APP_PASSWORD_FILE)
})

const connect = async (url: string): Promise<pg.Client> => {
  const { default: pgModule } = await import("pg")
  const client = new pgModule.Client({ connectionString: url })
  try {
    await client.connect()
  } catch (e) {
    await client.end().catch(() => undefined)
    throw e
  }
  return client
}

const isAuthFailure = (e: unknown) => (e as { code?: string } | null)?.code === "28P01"

/**
 * A superuser session on database `postgres` with the stored password. When the cluster refuses
 * it but still takes the old fixed one, the password is switched first (`switched`).
 */
const superuserSession = async (port: number, password: string) => {
  try {
    return { client: await connect(clusterUrl(SUPERUSER, password, port, "postgres")), switched: false }
  } catch (e) {
    if (!isAuthFailure(e)) throw e
  }
  const legacy = await connect(clusterUrl(SUPERUSER, LEGACY_PASSWORD, port, "postgres")).catch((e: unknown) => {
    throw new Error(
      `the embedded PostgreSQL refuses the superuser password in ${SUPERUSER_PASSWORD_FILE} ` +
        "(was it replaced or removed without the cluster?)",
      { cause: e }
    )
  })
  try {
    await legacy.query(`ALTER ROLE ${SUPERUSER} PASSWORD ${legacy.escapeLiteral(password)}`)
  } finally {
    await legacy.end()
  }
  return { client: await connect(clusterUrl(SUPERUSER, password, port, "postgres")), switched: true }
}

/**
 * Gives the app role everything in database `herald` that the superuser owns (a cluster made
 * before the app role existed: the migrations ran as the superuser). Tables carry their indexes,
 * triggers and serial sequences along.
 */
const HAND_OVER = `DO $$
DECLARE r record;
BEGIN
  FOR r IN SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relowner = current_user::regrole AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
      AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
  LOOP EXECUTE format('ALTER TABLE %s OWNER TO ${APP_ROLE}', r.name); END LOOP;
  FOR r IN SELECT c.oid::regclass AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relowner = current_user::regrole AND c.relkind = 'S'
      AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
  LOOP EXECUTE format('ALTER SEQUENCE %s OWNER TO ${APP_ROLE}', r.name); END LOOP;
  FOR r IN SELECT p.oid::regprocedure AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE p.proowner = current_user::regrole AND n.nspname <> 'information_schema' AND n.nspname NOT LIKE 'pg\\_%'
  LOOP EXECUTE format('ALTER ROUTINE %s OWNER TO ${APP_ROLE}', r.name); END LOOP;
  FOR r IN SELECT nspname FROM pg_namespace
    WHERE nspowner = current_user::regrole AND nspname <> 'information_schema' AND nspname NOT LIKE 'pg\\_%'
  LOOP EXECUTE format('ALTER SCHEMA %I OWNER TO ${APP_ROLE}', r.nspname); END LOOP;
END $$`

export interface Provisioned {
  /** The superuser still had the old fixed password and now has the stored one. */
  readonly switched: boolean
  /** The `herald` database and its objects passed from the superuser to the app role. */
  readonly handedOver: boolean
}

/**
 * Makes (or brings in line) the app role with `appPassword` and its database `herald`, logged in as
 * the superuser with `superPassword` (switched from the old fixed password when needed).
 */
export const provisionRoles = async (port: number, superPassword: string, appPassword: string): Promise<Provisioned> => {
  const { client: admin, switched } = await superuserSession(port, superPassword)
  let handedOver = false
  try {
    await admin.query("SELECT pg_advisory_lock($1)", [PROVISION_LOCK])
    const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD ${admin.escapeLiteral(appPassword)}`
    const role = await admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [APP_ROLE])
    await admin.query(`${role.rowCount === 0 ? "CREATE" : "ALTER"} ROLE ${APP_ROLE} ${attributes}`)
    const database = await admin.query<{ owner: string }>(
      "SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1",
      [APP_DATABASE]
    )
    if (database.rowCount === 0) {
      await admin.query(`CREATE DATABASE ${APP_DATABASE} OWNER ${APP_ROLE}`)
    } else if (database.rows[0]?.owner !== APP_ROLE) {
      // Objects first, the database last: a start cut short in between repeats the hand-over.
      const inDatabase = await connect(clusterUrl(SUPERUSER, superPassword, port, APP_DATABASE))
      try {
        await inDatabase.query(HAND_OVER)
      } finally {
        await inDatabase.end()
      }
      await admin.query(`ALTER DATABASE ${APP_DATABASE} OWNER TO ${APP_ROLE}`)
      handedOver = true
    }
  } finally {
    await admin.end()
  }
  return { switched, handedOver }
}
