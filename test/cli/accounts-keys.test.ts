/**
 * Driving a fresh appliance's accounts and keys from a shell: `accounts create|list`,
 * `keys create|list|revoke`, each printing JSON, against the database of a running appliance.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Appliance, startAppliance } from "../support/appliance.ts"
import { cli, cliRefused } from "./cli.ts"

let app: Appliance
beforeAll(async () => {
  app = await startAppliance()
})
afterAll(() => app.stop())

describe("accounts and keys from the shell", () => {
  it("creates an account, lists it, gives it a key, lists and revokes the key; the token then stops working", async () => {
    const db = app.databaseUrl
    const created = await cli(db, ["accounts", "create", "--name", "Shell Co", "--email", "ops@shell.example", "--password", "long enough pw"])
    const accountId: string = created.json.id
    expect(created.json).toMatchObject({ name: "Shell Co", email: "ops@shell.example", is_admin: false })

    const accounts = await cli(db, ["accounts", "list"])
    expect(accounts.json.total).toBe(accounts.json.items.length)
    expect(accounts.json.items.map((a: { email: string }) => a.email)).toEqual(
      expect.arrayContaining(["ops@shell.example", "admin@herald.test"])
    )

    const key = await cli(db, ["keys", "create", "--account", accountId, "--label", "deploy"])
    expect(key.json.token).toMatch(/^hrld_/)
    expect((await app.request("GET", "/v1/client/keys", { token: key.json.token })).status).toBe(200)

    const keys = await cli(db, ["keys", "list", "--account", accountId])
    expect(keys.json.items).toEqual([expect.objectContaining({ id: key.json.id, label: "deploy", token_hint: key.json.token.slice(-4) })])
    expect(keys.stdout).not.toContain(key.json.token)

    const revoked = await cli(db, ["keys", "revoke", "--id", key.json.id])
    expect(revoked.json).toMatchObject({ id: key.json.id, account_id: accountId, revoked_at: expect.any(String) })
    expect((await app.request("GET", "/v1/client/keys", { token: key.json.token })).status).toBe(401)
    expect((await cli(db, ["keys", "list", "--account", accountId])).json.items).toEqual([])
  }, 900_000)

  it("refuses unknown ids with a JSON error on stderr and exit code 1", async () => {
    const db = app.databaseUrl
    const noKey = await cliRefused(db, ["keys", "revoke", "--id", "key_doesnotexist"])
    expect(noKey.json.error).toMatchObject({ code: "not_found", message: expect.stringContaining("key_doesnotexist") })
    const noAccount = await cliRefused(db, ["keys", "list", "--account", "acc_doesnotexist"])
    expect(noAccount.json.error).toMatchObject({ code: "not_found", message: expect.stringContaining("acc_doesnotexist") })
  }, 600_000)
})
