/** Names shared by the run's set-up (global-setup.ts) and the test files (database.ts). */

/** The migrated database every test database is copied from. */
export const TEMPLATE_DATABASE = "herald_test_template"

/** The same server's URL for another database. */
export const withDatabase = (url: string, database: string): string => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}
