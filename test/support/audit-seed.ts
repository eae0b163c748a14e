/**
 * Deliveries written straight into PostgreSQL for the audit export (the test's few thousand, the
 * bench's hundreds of thousands): one message and one delivery per index i, made by one
 * INSERT … SELECT over generate_series, so the shape of row i is known without reading it back.
 *
 * Row i: recipient `r<i, 7 digits>@example.org`; subject `Invoice <i>` (even i) or `Welcome <i>`;
 * state cycles queued, deferred, sent, bounced, failed (i % 5); created_at = base + i seconds;
 * a bounced row's reply begins with `=` (a diagnostic planted by the recipient's server).
 * Queued rows are due a year later, so the appliance's MTA leaves them alone.
 */
import pg from "pg"

export const SEED_STATES = ["queued", "deferred", "sent", "bounced", "failed"] as const

export interface SeedOptions {
  readonly accountId: string
  readonly keyId: string
  readonly count: number
  /** Distinguishes the ids of two seeds in one database. */
  readonly tag: string
  readonly base: Date
}

export const seededRecipient = (i: number) => `r${String(i).padStart(7, "0")}@example.org`
export const seededSubject = (i: number) => (i % 2 === 0 ? `Invoice ${i}` : `Welcome ${i}`)
export const seededState = (i: number) => SEED_STATES[i % 5]!
export const seededReply = (i: number) => (i % 5 === 3 ? `=HYPERLINK("http://evil.test/${i}")` : null)

export const seedDeliveries = async (databaseUrl: string, o: SeedOptions): Promise<void> => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const params = [o.accountId, o.keyId, o.count, o.tag, o.base]
    await client.query(`
      INSERT INTO messages (id, account_id, key_id, request_id, personalization_index, from_email, from_domain,
        subject, content, created_at)
      SELECT 'msg_' || $4 || i, $1, $2, 'req_' || $4 || i, 0, 'hello@seed.example', 'seed.example',
        CASE WHEN i % 2 = 0 THEN 'Invoice ' ELSE 'Welcome ' END || i, '{}'::jsonb,
        $5::timestamptz + i * interval '1 second'
      FROM generate_series(0, $3::integer - 1) AS i`, params)
    await client.query(`
      INSERT INTO deliveries (id, message_id, account_id, key_id, recipient, recipient_domain, recipient_kind,
        state, attempts, next_attempt_at, last_code, last_status, last_reply, created_at, updated_at)
      SELECT 'dlv_' || $4 || i, 'msg_' || $4 || i, $1, $2, 'r' || lpad(i::text, 7, '0') || '@example.org',
        'example.org', 'to', (ARRAY['queued', 'deferred', 'sent', 'bounced', 'failed'])[i % 5 + 1],
        CASE WHEN i % 5 = 0 THEN 0 ELSE 1 END, now() + interval '1 year',
        CASE WHEN i % 5 = 3 THEN 550 END, CASE WHEN i % 5 = 3 THEN '5.1.1' END,
        CASE WHEN i % 5 = 3 THEN '=HYPERLINK("http://evil.test/' || i || '")' END,
        $5::timestamptz + i * interval '1 second', $5::timestamptz + i * interval '1 second'
      FROM generate_series(0, $3::integer - 1) AS i`, params)
  } finally {
    await client.end()
  }
}
