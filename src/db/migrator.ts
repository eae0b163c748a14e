/**
 * Plain SQL migrations from `migrations/`, registered here in order (never found by scanning, so a
 * stray file cannot change the schema). They run at start-up and through `herald migrate`.
 *
 * Replicas starting at the same moment: the library's migrator serialises runs with
 * `LOCK TABLE herald_migrations`, but its own "create the table when missing" step races on a
 * fresh database. So the table is created first, once, behind a transaction-scoped advisory lock
 * (same columns as the library's), and the migrator then finds it and locks it.
 */
import * as fs from "node:fs"
import { Migrator } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The ordered list of migrations: `<id>_<name>` → file in migrations/. */
export const migrationFiles = [
  "0001_foundation.sql",
  "0002_sending.sql",
  "0003_inbound.sql",
  "0004_platform.sql",
  "0005_mta.sql",
  "0006_webhooks.sql",
  "0007_inbound_effects.sql",
  "0008_destination_limits.sql",
  "0009_admin_plan_assignments.sql",
  "0010_webhook_key_due.sql",
  "0011_message_size.sql",
  "0012_key_changes_notify.sql",
  "0013_delivery_claims.sql",
  "0014_inbound_trust.sql",
  "0015_inbound_chunks.sql",
  "0016_stored_message.sql",
  "0017_delivery_holds.sql",
  "0018_domain_verified_by.sql",
  "0019_delivery_attempts.sql",
  "0020_templates.sql",
  "0021_contacts.sql",
  "0022_segments.sql",
  "0023_campaigns.sql",
  "0024_tracking.sql",
  "0025_sequences.sql",
  "0026_campaign_analytics.sql",
  "0027_tracking_ingest.sql",
  "0028_sequence_claim_eligible.sql",
  "0029_queue_rows_without_fk_checks.sql",
  "0030_confirmation_sends.sql",
  "0031_tracking_token_windows.sql",
  "0032_campaign_render_failed.sql",
  "0033_console_sessions.sql",
  "0034_console_insight.sql",
  "0035_bulk_messages_by_recipient.sql",
  "0036_plan_change_withdrawn.sql",
  "0037_delivery_rendered_subject.sql",
  "0038_mta_sts.sql",
  "0039_campaign_second_week.sql",
  "0040_bulk_settings.sql",
  "0041_list_unsubscribe.sql",
  "0042_system_messages.sql",
  "0043_campaign_ab_tests.sql",
  "0044_sequence_trigger.sql",
  "0045_campaign_reputation_pause.sql",
  "0046_counter_windows.sql"
] as const

const migrationsDir = new URL("../../migrations/", import.meta.url)

const sqlFile = (file: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const text = yield* Effect.sync(() => fs.readFileSync(new URL(file, migrationsDir), "utf8"))
    // No parameters: node-postgres uses the simple query protocol, which runs several statements.
    yield* sql.unsafe(text)
  })

const loader = Migrator.fromRecord(
  Object.fromEntries(migrationFiles.map((file) => [file.replace(/\.sql$/, ""), sqlFile(file)]))
)

/** Advisory lock key shared by every start-up step that must not run twice at once. */
export const STARTUP_LOCK = 7_310_042

const MIGRATIONS_TABLE = "herald_migrations"

export const runMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql`SELECT pg_advisory_xact_lock(${STARTUP_LOCK})`
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(MIGRATIONS_TABLE)} (
      migration_id integer PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      name text NOT NULL
    )`
  }))
  const applied = yield* Migrator.make({})({ loader, table: MIGRATIONS_TABLE })
  for (const [id, name] of applied) {
    yield* Effect.logInfo("migration applied").pipe(Effect.annotateLogs({ migration_id: id, migration: name }))
  }
  return applied
}).pipe(Effect.withSpan("db.migrate"))
