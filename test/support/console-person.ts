/**
 * A person at the console, for browser tests and `npm run console:shots`: an account with a known
 * password, and signing in through the console's own form. No vitest import, so scripts can use it.
 */
import type { Page } from "playwright-core"

export interface ConsoleAccount {
  readonly accountId: string
  readonly email: string
  readonly password: string
  /** The account's keys, by label: the console's key switcher shows these labels. */
  readonly keys: ReadonlyArray<{ readonly id: string; readonly label: string }>
}

let accounts = 0

const adminCall = async (baseUrl: string, adminToken: string, route: string, body: unknown) => {
  const response = await fetch(`${baseUrl}${route}`, {
    method: "POST",
    headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  const json = await response.json() as { id: string; error?: { message: string } }
  if (response.status !== 201) throw new Error(`POST ${route} answered ${response.status}: ${json.error?.message ?? ""}`)
  return json
}

/** An account with a known password and keys labelled `labels` (through the admin API). */
export const createConsoleAccount = async (
  baseUrl: string,
  adminToken: string,
  labels: ReadonlyArray<string> = ["deploy", "marketing"]
): Promise<ConsoleAccount> => {
  accounts += 1
  const tag = `${Date.now().toString(36)}${accounts}`
  const email = `person-${tag}@customers.test`
  const password = "correct horse battery staple"
  const account = await adminCall(baseUrl, adminToken, "/v1/admin/accounts", { name: `Person ${tag}`, email, password })
  const keys: Array<{ id: string; label: string }> = []
  for (const label of labels) {
    const key = await adminCall(baseUrl, adminToken, `/v1/admin/accounts/${account.id}/keys`, { label })
    keys.push({ id: key.id, label })
  }
  return { accountId: account.id, email, password, keys }
}

/** Signs in through the console's own form, as a person would, and waits for the shell. */
export const signInThroughForm = async (page: Page, baseUrl: string, email: string, password: string): Promise<void> => {
  await page.goto(`${baseUrl}/console/`)
  await page.getByLabel("Email").fill(email)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  // The shell, or the form's error: then fail at once with the API's message, not after a timeout.
  const shell = page.getByRole("navigation", { name: "Console" })
  const refused = page.locator("#sign-in-error")
  await shell.or(refused).first().waitFor()
  if (await refused.isVisible()) throw new Error(`sign-in refused: ${await refused.textContent()}`)
}
