/**
 * The console's session from a test's side: sign in over HTTP as a browser would, and make
 * requests with the session cookie (and, when asked, the CSRF header and Origin a console page sends).
 */
import { expect } from "vitest"
import type { ApiResponse, Appliance } from "./appliance.ts"

export const SESSION_COOKIE = "herald_session"

/** The origin the appliance's default base URL has (`http://localhost:<port>`), as a console page sends it. */
export const consoleOrigin = (app: Appliance, baseUrl?: string) => baseUrl === undefined ? `http://localhost:${new URL(app.baseUrl).port}` : new URL(baseUrl).origin

export const signInRequest = (app: Appliance, email: string, password: string) =>
  app.request("POST", "/console/session", { token: null, body: { email, password } })

/** The session cookie's value from a sign-in's Set-Cookie. */
export const cookieOf = (res: ApiResponse): string => {
  const header = res.headers.get("set-cookie") ?? ""
  const match = new RegExp(`${SESSION_COOKIE}=([^;]*)`).exec(header)
  expect(match, `a ${SESSION_COOKIE} cookie in ${header}`).not.toBeNull()
  return match![1]!
}

export interface ConsoleSession {
  readonly cookie: string
  readonly csrf: string
  readonly activeKeyId: string
}

/** Signs in (204 expected) and reads the session: its cookie, CSRF token and active key. */
export const signIn = async (app: Appliance, email: string, password: string): Promise<ConsoleSession> => {
  const res = await signInRequest(app, email, password)
  expect(res.status, res.text).toBe(204)
  const cookie = cookieOf(res)
  const session = await withCookie(app, cookie, "GET", "/console/session")
  expect(session.status, session.text).toBe(200)
  return { cookie, csrf: session.json.csrf_token, activeKeyId: session.json.active_key_id }
}

export interface CookieOptions {
  readonly csrf?: string
  readonly origin?: string
  readonly body?: unknown
  readonly token?: string
}

/** A request with the session cookie (no Bearer unless `token`), and the CSRF header and Origin if given. */
export const withCookie = (app: Appliance, cookie: string, method: string, route: string, options: CookieOptions = {}) =>
  app.request(method, route, {
    token: options.token ?? null,
    headers: {
      cookie: `${SESSION_COOKIE}=${cookie}`,
      ...(options.csrf === undefined ? {} : { "x-herald-csrf": options.csrf }),
      ...(options.origin === undefined ? {} : { origin: options.origin })
    },
    ...(options.body === undefined ? {} : { body: options.body })
  })

let counter = 0

/** A new account through the admin API, with one key; its email, password and key. */
export const newAccount = async (app: Appliance, options: { readonly admin?: boolean } = {}) => {
  counter += 1
  const email = `person-${Date.now().toString(36)}${counter}@console.test`
  const password = "correct horse battery"
  const account = await app.request("POST", "/v1/admin/accounts", { body: { name: `Person ${counter}`, email, password } })
  expect(account.status, account.text).toBe(201)
  const key = await app.request("POST", `/v1/admin/accounts/${account.json.id}/keys`, { body: { label: "first" } })
  expect(key.status, key.text).toBe(201)
  return { id: account.json.id as string, email, password, keyId: key.json.id as string, token: key.json.token as string }
}
